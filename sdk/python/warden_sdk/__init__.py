"""Write Warden hooks and tools in Python.

A hook is a function (or a class with a `handle` method) decorated with `@hook`:

    from warden_sdk import hook, HookResult

    @hook
    def handle(event):
        if event.command and "push --force" in event.command:
            return HookResult.deny("force-push is not allowed here; push without --force")
        return HookResult.none()

`warden build` turns the module into a WebAssembly component with componentize-py; the
host calls it once per event in a fresh sandbox. A tool is a function decorated with
`@tool(name=..., description=..., input_schema=...)` (or a class with `describe` and
`invoke`, decorated with `@tool`) that takes the input dict and returns a str or a
`ToolOutput`, raising `InvalidInput`, `Denied` or `Failed` to fail.

Host capabilities: `log` is always there; `fs`, `exec`, `http` and `env` are the generated
bindings of `warden:plugin/{fs,exec,http,env}` (`from warden_sdk import fs`), present only
if the plugin's warden.toml declares the capability (`net` for `http`).

Everything the component uses must be imported at module level: the build imports the
module and snapshots the interpreter, and the component has no files to import from later.
"""

from . import log
from ._export import hook, tool
from .event import EventError, HookEvent
from .result import Decision, HookResult
from .tool import Denied, Failed, InvalidInput, ToolError, ToolInfo, ToolOutput

__all__ = [
    "Decision",
    "Denied",
    "EventError",
    "Failed",
    "HookEvent",
    "HookResult",
    "InvalidInput",
    "ToolError",
    "ToolInfo",
    "ToolOutput",
    "hook",
    "log",
    "tool",
]

_CAPABILITIES = {"fs": "fs", "exec": "exec", "http": "net", "env": "env"}


def __getattr__(name):
    """`fs`, `exec`, `http`, `env`: the bindings of the capability, if the world has it."""
    grant = _CAPABILITIES.get(name)
    if grant is None:
        raise AttributeError(f"module 'warden_sdk' has no attribute {name!r}")
    import importlib

    try:
        return importlib.import_module(f"wit_world.imports.{name}")
    except ImportError:
        raise ImportError(
            f"warden:plugin/{name} is not in this component's world: declare the `{grant}` "
            f"capability for the component in warden.toml (capabilities = {{ {grant} = [...] }})"
        ) from None
