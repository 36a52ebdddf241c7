//! Write: creates or replaces a file through the fs capability.

use serde_json::{Value, json};
use tool_common::{absolute, ensure_parent, fs_error, string};
use warden_sdk::{Tool, ToolError, ToolInfo, ToolOutput, fs};

struct Write;

impl Tool for Write {
    fn describe() -> ToolInfo {
        ToolInfo {
            name: "Write".into(),
            description: "Writes a file to the local filesystem, replacing it if it exists and creating missing parent directories.".into(),
            input_schema: json!({
                "type": "object",
                "properties": {
                    "file_path": {"type": "string", "description": "The absolute path to the file to write"},
                    "content": {"type": "string", "description": "The content to write to the file"}
                },
                "required": ["file_path", "content"],
                "additionalProperties": false
            }),
        }
    }

    fn invoke(input: Value) -> Result<ToolOutput, ToolError> {
        let path = absolute(string(&input, "file_path")?);
        let content = string(&input, "content")?;
        let existed = fs::stat(&path).is_ok();
        ensure_parent(&path)?;
        fs::write(&path, content.as_bytes()).map_err(fs_error)?;
        Ok(ToolOutput::text(if existed {
            format!("The file {path} has been updated successfully.")
        } else {
            format!("File created successfully at: {path}")
        }))
    }
}

warden_sdk::export_tool!(Write);
