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
        // What the file held before, for the response's `originalFile` (and the host's
        // patch): `null` when the call creates it.
        let original = match fs::stat(&path) {
            Ok(_) => {
                Some(String::from_utf8_lossy(&fs::read(&path).map_err(fs_error)?).into_owned())
            }
            Err(_) => None,
        };
        ensure_parent(&path)?;
        fs::write(&path, content.as_bytes()).map_err(fs_error)?;
        let text = if original.is_some() {
            format!("The file {path} has been updated successfully.")
        } else {
            format!("File created successfully at: {path}")
        };
        Ok(ToolOutput {
            content: text,
            structured: Some(json!({
                "type": if original.is_some() { "update" } else { "create" },
                "filePath": path,
                "content": content,
                "originalFile": original,
            })),
        })
    }
}

warden_sdk::export_tool!(Write);
