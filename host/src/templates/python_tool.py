"""{{name}}: a tool that counts the lines, words and bytes of a text, like `wc`."""

from warden_sdk import InvalidInput, ToolOutput, tool


@tool(
    # Offered as mcp__plugin_{{name}}_warden__count: this name, under the plugin's prefix.
    name="count",
    description="Counts the lines, words and bytes of a text, like `wc`.",
    input_schema={
        "type": "object",
        "properties": {"text": {"type": "string", "description": "The text to count"}},
        "required": ["text"],
        "additionalProperties": False,
    },
)
def count(input):
    text = input.get("text")
    if not isinstance(text, str):
        raise InvalidInput("`text` must be a string")
    lines, words, size = len(text.splitlines()), len(text.split()), len(text.encode())
    return ToolOutput(
        f"{lines} lines, {words} words, {size} bytes",
        structured={"lines": lines, "words": words, "bytes": size},
    )
