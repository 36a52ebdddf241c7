"""The glue between a user's hook or tool and the component's exports.

componentize-py imports the app module (the plugin's source file) while it builds the
component, then instantiates the module's `WitWorld` class and snapshots the result. The
`hook` and `tool` decorators define that class in the module of what they decorate, so the
plugin's source needs nothing else. Outside a component (plain CPython, e.g. in the plugin's
own tests) `wit_world` does not exist and the decorators leave the module alone.
"""

from __future__ import annotations

import json
import sys
from typing import Any, Callable

from .event import EventError, HookEvent
from .result import Decision, HookResult
from .tool import Denied, InvalidInput, ToolError, ToolInfo, ToolOutput


def _world():
    """The generated bindings, or None outside a component build."""
    try:
        import wit_world
        from wit_world.imports import types
    except ImportError:
        return None
    return wit_world, types


def _install(target: Any, world_class: type) -> None:
    module = sys.modules[target.__module__]
    if "WitWorld" in vars(module):
        raise RuntimeError(
            f"module {module.__name__!r} already defines WitWorld: use @hook or @tool once per component"
        )
    module.WitWorld = world_class


def _wrong_world(kind: str, need: str) -> RuntimeError:
    other = "tool" if kind == "hook" else "hook"
    return RuntimeError(
        f"@{kind} is used, but the component is being built for the `{other}` world (it has no "
        f"`{need}` export): set world = \"{kind}\" for this component in warden.toml"
    )


def run_hook(handler: Callable[[HookEvent], Any], name: str, text: str) -> HookResult:
    """Runs a hook on raw event JSON. A malformed event becomes a non-blocking `none` with a
    system message; an exception in the handler propagates (the component traps)."""
    try:
        event = HookEvent.parse(name, text)
    except EventError as e:
        return HookResult.none(system_message=f"hook could not parse the {name} event: {e}")
    result = handler(event)
    if result is None:
        return HookResult.none()
    if not isinstance(result, HookResult):
        raise TypeError(f"a hook must return a HookResult or None, not {type(result).__name__}")
    return result


def hook(target: Any) -> Any:
    """Makes `target` the component's hook.

    `target` is a function taking a `HookEvent` and returning a `HookResult` (or None for no
    opinion), or a class whose instances have such a `handle` method (one instance is made
    when the component is built). Returns `target` unchanged.
    """
    handler = target().handle if isinstance(target, type) else target
    if not callable(handler):
        raise TypeError("@hook needs a function or a class with a handle method")
    bindings = _world()
    if bindings is None:
        return target
    wit_world, types = bindings
    if not hasattr(wit_world.WitWorld, "handle"):
        raise _wrong_world("hook", "handle")
    decisions = {
        Decision.NONE: types.Decision.NONE,
        Decision.ALLOW: types.Decision.ALLOW,
        Decision.DENY: types.Decision.DENY,
        Decision.ASK: types.Decision.ASK,
        Decision.DEFER: types.Decision.DEFER,
        Decision.BLOCK: types.Decision.BLOCK,
    }

    class WitWorld(wit_world.WitWorld):
        def handle(self, event):
            r = run_hook(handler, event.name, event.input)
            return types.HookResult(
                decision=decisions[r.decision],
                reason=r.reason,
                additional_context=r.additional_context,
                updated_input=r.updated_input_json(),
                system_message=r.system_message,
                continue_=r.continue_,
                stop_reason=r.stop_reason,
                suppress_output=r.suppress_output,
            )

    _install(target, WitWorld)
    return target


def run_tool(invoke: Callable[[dict], Any], text: str) -> ToolOutput:
    """Runs a tool on raw input JSON; raises `InvalidInput` if it is not a JSON object."""
    try:
        value = json.loads(text)
    except ValueError as e:
        raise InvalidInput(f"input is not JSON: {e}") from None
    if not isinstance(value, dict):
        raise InvalidInput("the input must be a JSON object")
    out = invoke(value)
    if isinstance(out, str):
        return ToolOutput(out)
    if not isinstance(out, ToolOutput):
        raise TypeError(f"a tool must return a str or a ToolOutput, not {type(out).__name__}")
    return out


def _info(value: Any) -> ToolInfo:
    if isinstance(value, ToolInfo):
        return value
    if isinstance(value, dict):
        return ToolInfo(value["name"], value["description"], value["input_schema"])
    raise TypeError(f"describe() must return a ToolInfo or a dict, not {type(value).__name__}")


def tool(target: Any = None, *, name: str = None, description: str = None, input_schema: dict = None):
    """Makes a tool of the component.

    Either decorate a function taking the input dict with `@tool(name=..., description=...,
    input_schema={...})`, or decorate a class with `@tool` whose instances have `describe()`
    (returning a `ToolInfo` or a dict with `name`, `description`, `input_schema`) and
    `invoke(input)`. `invoke` returns a str or a `ToolOutput`, and raises `InvalidInput`,
    `Denied` or `Failed` for the cases of the WIT `tool-error` (a bare `ToolError` is
    `failed`); any other exception traps.
    """
    if target is None:
        if name is None or description is None or input_schema is None:
            raise TypeError("@tool(...) needs name, description and input_schema")
        info = ToolInfo(name, description, input_schema)
        return lambda fn: _tool(fn, lambda: info, fn)
    if not isinstance(target, type):
        raise TypeError("use @tool on a class, or @tool(name=..., description=..., input_schema=...) on a function")
    instance = target()
    return _tool(target, lambda: _info(instance.describe()), instance.invoke)


def _tool(target: Any, describe: Callable[[], ToolInfo], invoke: Callable[[dict], Any]) -> Any:
    describe()  # fail at build time, not on the first call, if the description is malformed
    bindings = _world()
    if bindings is None:
        return target
    wit_world, types = bindings
    if not hasattr(wit_world.WitWorld, "invoke"):
        raise _wrong_world("tool", "invoke")
    from componentize_py_types import Err

    def wit_error(e: ToolError):
        if isinstance(e, InvalidInput):
            return types.ToolError_InvalidInput(e.message)
        if isinstance(e, Denied):
            return types.ToolError_Denied(e.message)
        return types.ToolError_Failed(e.message)

    class WitWorld(wit_world.WitWorld):
        def describe(self):
            info = describe()
            return types.ToolInfo(info.name, info.description, info.input_schema_json())

        def invoke(self, input):
            try:
                out = run_tool(invoke, input)
            except ToolError as e:
                raise Err(wit_error(e)) from None
            return types.ToolOutput(out.content, out.structured_json())

    _install(target, WitWorld)
    return target
