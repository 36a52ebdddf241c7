"""The event a hook receives."""

from __future__ import annotations

import json
from typing import Any, Dict, Optional


class EventError(ValueError):
    """The event's input is not a JSON object."""


class HookEvent:
    """An event as Claude Code sends it to hooks.

    `name` is the event (`PreToolUse`, `Stop`, ...); `input` is the whole input object, parsed;
    the properties read the fields most hooks need. Tool events (`PreToolUse`, `PostToolUse`,
    `PostToolUseFailure`, `PermissionRequest`, `PermissionDenied`) carry a tool call:
    `tool_name`, `tool_input`, and for Bash `command`, for file tools `file_path`.
    """

    __slots__ = ("name", "input", "raw")

    def __init__(self, name: str, input: Dict[str, Any], raw: Optional[str] = None):
        self.name = name
        self.input = input
        self.raw = raw if raw is not None else json.dumps(input)

    @classmethod
    def parse(cls, name: str, text: str) -> "HookEvent":
        """Parses an event's input JSON, which must be an object (raises `EventError`)."""
        try:
            value = json.loads(text)
        except ValueError as e:
            raise EventError(f"the input is not JSON: {e}") from None
        if not isinstance(value, dict):
            raise EventError("a hook event must be a JSON object")
        return cls(name, value, text)

    def get(self, field: str, default: Any = None) -> Any:
        """A field of the input."""
        return self.input.get(field, default)

    def str(self, field: str) -> Optional[str]:
        """A string field of the input (`prompt`, `source`, `reason`, ...), or None."""
        value = self.input.get(field)
        return value if isinstance(value, str) else None

    @property
    def session_id(self) -> str:
        return self.str("session_id") or ""

    @property
    def transcript_path(self) -> str:
        return self.str("transcript_path") or ""

    @property
    def cwd(self) -> str:
        """The session's working directory."""
        return self.str("cwd") or ""

    @property
    def permission_mode(self) -> Optional[str]:
        return self.str("permission_mode")

    @property
    def tool_name(self) -> Optional[str]:
        """`tool_name` of a tool event (`Bash`, `Read`, `mcp__server__tool`, ...), else None."""
        return self.str("tool_name")

    @property
    def tool_input(self) -> Dict[str, Any]:
        """`tool_input` of a tool event; an empty dict if absent or not an object."""
        value = self.input.get("tool_input")
        return value if isinstance(value, dict) else {}

    @property
    def tool_use_id(self) -> Optional[str]:
        return self.str("tool_use_id")

    def input_str(self, field: str) -> Optional[str]:
        """A string field of `tool_input`, or None."""
        value = self.tool_input.get(field)
        return value if isinstance(value, str) else None

    @property
    def command(self) -> Optional[str]:
        """`tool_input.command` (Bash), or None."""
        return self.input_str("command")

    @property
    def file_path(self) -> Optional[str]:
        """`tool_input.file_path` (Read, Edit, Write) or `notebook_path` (NotebookEdit), or None."""
        return self.input_str("file_path") or self.input_str("notebook_path")

    def __repr__(self) -> str:
        return f"HookEvent({self.name!r}, {self.input!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, HookEvent) and (self.name, self.input) == (other.name, other.input)
