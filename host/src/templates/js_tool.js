// {{name}}: a tool that counts the lines, words and bytes of a text, like `wc`.
import { tool, ToolOutput, ToolError } from "warden";

export const { describe, invoke } = tool({
  // Offered as mcp__plugin_{{name}}_warden__count: this name, under the plugin's prefix.
  name: "count",
  description: "Counts the lines, words and bytes of a text, like `wc`.",
  inputSchema: {
    type: "object",
    properties: { text: { type: "string", description: "The text to count" } },
    required: ["text"],
    additionalProperties: false,
  },
  invoke(input) {
    if (typeof input.text !== "string") throw ToolError.invalidInput("`text` must be a string");
    const text = input.text;
    const lines = text.split("\n").length - (text.endsWith("\n") || text === "" ? 1 : 0);
    const words = text.split(/\s+/).filter((w) => w !== "").length;
    // UTF-8 length (QuickJS has no TextEncoder).
    const bytes = unescape(encodeURIComponent(text)).length;
    return ToolOutput.json(`${lines} lines, ${words} words, ${bytes} bytes`, { lines, words, bytes });
  },
});
