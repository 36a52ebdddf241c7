"""What a hook decides."""

from __future__ import annotations

import json
from enum import Enum
from typing import Any, Mapping, Optional


class Decision(Enum):
    """A hook's decision; see the WIT `decision` enum for its meaning per event."""

    NONE = "none"
    """No opinion: the normal flow continues."""
    ALLOW = "allow"
    """Allow the tool call without a prompt (deny and ask rules still apply)."""
    DENY = "deny"
    """Deny the tool call; the reason goes to the model."""
    ASK = "ask"
    """Ask the user."""
    DEFER = "defer"
    """Leave it to the normal permission flow."""
    BLOCK = "block"
    """Block the action (exit code 2 of a command hook); the reason goes to the model."""


class HookResult:
    """A hook's answer.

    Build one with a constructor per decision, each taking the optional fields as keywords:

        HookResult.deny("force-push is not allowed here; push without --force")
        HookResult.allow("rewritten", updated_input={"command": "ls -la"})
        HookResult.none(additional_context="echo is harmless")
        HookResult.none(continue_=False, stop_reason="stopped by policy")
    """

    __slots__ = (
        "decision",
        "reason",
        "additional_context",
        "updated_input",
        "system_message",
        "continue_",
        "stop_reason",
        "suppress_output",
    )

    def __init__(
        self,
        decision: Decision = Decision.NONE,
        reason: Optional[str] = None,
        *,
        additional_context: Optional[str] = None,
        updated_input: Optional[Mapping[str, Any]] = None,
        system_message: Optional[str] = None,
        continue_: bool = True,
        stop_reason: Optional[str] = None,
        suppress_output: bool = False,
    ):
        if not isinstance(decision, Decision):
            raise TypeError(f"decision must be a Decision, not {type(decision).__name__}")
        for field, value in (
            ("reason", reason),
            ("additional_context", additional_context),
            ("system_message", system_message),
            ("stop_reason", stop_reason),
        ):
            if value is not None and not isinstance(value, str):
                raise TypeError(f"{field} must be a str or None, not {type(value).__name__}")
        if updated_input is not None and not isinstance(updated_input, Mapping):
            raise TypeError(
                f"updated_input must be a dict (the new tool input object), not {type(updated_input).__name__}"
            )
        self.decision = decision
        self.reason = reason
        self.additional_context = additional_context
        self.updated_input = dict(updated_input) if updated_input is not None else None
        self.system_message = system_message
        self.continue_ = bool(continue_)
        self.stop_reason = stop_reason
        self.suppress_output = bool(suppress_output)

    @classmethod
    def none(cls, **fields: Any) -> "HookResult":
        """No decision (other fields, like `additional_context`, may still be set)."""
        return cls(Decision.NONE, fields.pop("reason", None), **fields)

    @classmethod
    def allow(cls, reason: Optional[str] = None, **fields: Any) -> "HookResult":
        """Allow, with a reason for the user."""
        return cls(Decision.ALLOW, reason, **fields)

    @classmethod
    def deny(cls, reason: str, **fields: Any) -> "HookResult":
        """Deny, with a reason the model can act on."""
        return cls(Decision.DENY, reason, **fields)

    @classmethod
    def ask(cls, reason: str, **fields: Any) -> "HookResult":
        """Ask the user, with a reason shown in the prompt."""
        return cls(Decision.ASK, reason, **fields)

    @classmethod
    def defer(cls, **fields: Any) -> "HookResult":
        """Defer to the normal permission flow."""
        return cls(Decision.DEFER, fields.pop("reason", None), **fields)

    @classmethod
    def block(cls, reason: str, **fields: Any) -> "HookResult":
        """Block the action, with a reason fed back to the model."""
        return cls(Decision.BLOCK, reason, **fields)

    def updated_input_json(self) -> Optional[str]:
        """`updated_input` as the JSON text the WIT record carries."""
        if self.updated_input is None:
            return None
        return json.dumps(self.updated_input, ensure_ascii=False, separators=(",", ":"))

    def _fields(self) -> tuple:
        return tuple(getattr(self, f) for f in self.__slots__)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, HookResult) and self._fields() == other._fields()

    def __repr__(self) -> str:
        parts = [f"{self.decision.value}"]
        for f in self.__slots__[1:]:
            value = getattr(self, f)
            default = True if f == "continue_" else (False if f == "suppress_output" else None)
            if value != default:
                parts.append(f"{f}={value!r}")
        return "HookResult(" + ", ".join(parts) + ")"
