"""What a tool says about itself, returns, and raises."""

from __future__ import annotations

import json
from typing import Any, Mapping, Optional


class ToolInfo:
    """A tool's name, description for the model, and JSON Schema of its input object."""

    __slots__ = ("name", "description", "input_schema")

    def __init__(self, name: str, description: str, input_schema: Mapping[str, Any]):
        if not isinstance(input_schema, Mapping):
            raise TypeError("input_schema must be a dict (a JSON Schema object)")
        self.name = name
        self.description = description
        self.input_schema = dict(input_schema)

    def input_schema_json(self) -> str:
        return json.dumps(self.input_schema, ensure_ascii=False, separators=(",", ":"))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ToolInfo) and (self.name, self.description, self.input_schema) == (
            other.name,
            other.description,
            other.input_schema,
        )

    def __repr__(self) -> str:
        return f"ToolInfo({self.name!r}, {self.description!r}, {self.input_schema!r})"


class ToolOutput:
    """A successful result: text for the model, and optionally a structured result (a dict)."""

    __slots__ = ("content", "structured")

    def __init__(self, content: str, structured: Optional[Mapping[str, Any]] = None):
        if not isinstance(content, str):
            raise TypeError(f"content must be a str, not {type(content).__name__}")
        self.content = content
        self.structured = structured

    def structured_json(self) -> Optional[str]:
        if self.structured is None:
            return None
        return json.dumps(self.structured, ensure_ascii=False, separators=(",", ":"))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ToolOutput) and (self.content, self.structured) == (
            other.content,
            other.structured,
        )

    def __repr__(self) -> str:
        return f"ToolOutput({self.content!r}, structured={self.structured!r})"


class ToolError(Exception):
    """Why a tool failed. Raise one of the subclasses; each is a case of the WIT `tool-error`."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class InvalidInput(ToolError):
    """The input did not match the schema or made no sense (`tool-error.invalid-input`)."""


class Denied(ToolError):
    """A capability check refused an access (`tool-error.denied`)."""


class Failed(ToolError):
    """Anything else (`tool-error.failed`)."""
