//! {{name}}: a tool that counts the lines, words and bytes of a text, like `wc`.

use serde_json::{Value, json};
use warden_sdk::{Tool, ToolError, ToolInfo, ToolOutput};

struct {{camel}};

impl Tool for {{camel}} {
    fn describe() -> ToolInfo {
        ToolInfo {
            // Offered as mcp__plugin_{{name}}_warden__count: this name, under the plugin's prefix.
            name: "count".into(),
            description: "Counts the lines, words and bytes of a text, like `wc`.".into(),
            input_schema: json!({
                "type": "object",
                "properties": { "text": { "type": "string", "description": "The text to count" } },
                "required": ["text"],
                "additionalProperties": false
            }),
        }
    }

    fn invoke(input: Value) -> Result<ToolOutput, ToolError> {
        let text = input
            .get("text")
            .and_then(Value::as_str)
            .ok_or_else(|| ToolError::InvalidInput("`text` must be a string".into()))?;
        let (lines, words, bytes) = (text.lines().count(), text.split_whitespace().count(), text.len());
        Ok(ToolOutput {
            content: format!("{lines} lines, {words} words, {bytes} bytes"),
            structured: Some(json!({ "lines": lines, "words": words, "bytes": bytes })),
        })
    }
}

warden_sdk::export_tool!({{camel}});
