"""Counts the words of a text: a tool written with Warden's Python SDK."""

from warden_sdk import InvalidInput, ToolOutput, log, tool


@tool(
    name="count",
    description="Counts the words of a text (runs of non-whitespace characters).",
    input_schema={
        "type": "object",
        "properties": {"text": {"type": "string", "description": "The text to count."}},
        "required": ["text"],
    },
)
def count(input):
    text = input.get("text")
    if not isinstance(text, str):
        raise InvalidInput("`text` must be a string")
    words = len(text.split())
    log.debug(f"counted {words} words in {len(text)} characters")
    return ToolOutput(f"{words} words", structured={"words": words, "characters": len(text)})
