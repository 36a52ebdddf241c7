//! Edit: exact string replacement in a file through the fs capability.

use serde_json::{Value, json};
use tool_common::{absolute, ensure_parent, fs_error, opt_bool, string};
use warden_sdk::{Tool, ToolError, ToolInfo, ToolOutput, fs};

struct Edit;

impl Tool for Edit {
    fn describe() -> ToolInfo {
        ToolInfo {
            name: "Edit".into(),
            description: "Performs exact string replacements in files. `old_string` must occur exactly once unless `replace_all` is set; an empty `old_string` creates a new file.".into(),
            input_schema: json!({
                "type": "object",
                "properties": {
                    "file_path": {"type": "string", "description": "The absolute path to the file to modify"},
                    "old_string": {"type": "string", "description": "The text to replace"},
                    "new_string": {"type": "string", "description": "The text to replace it with (must be different from old_string)"},
                    "replace_all": {"type": "boolean", "default": false, "description": "Replace all occurrences of old_string"}
                },
                "required": ["file_path", "old_string", "new_string"],
                "additionalProperties": false
            }),
        }
    }

    fn invoke(input: Value) -> Result<ToolOutput, ToolError> {
        let path = absolute(string(&input, "file_path")?);
        let old = string(&input, "old_string")?;
        let new = string(&input, "new_string")?;
        let all = opt_bool(&input, "replace_all")?.unwrap_or(false);
        if old == new {
            return Err(ToolError::InvalidInput(
                "No changes to make: old_string and new_string are exactly the same.".into(),
            ));
        }
        if old.is_empty() {
            if fs::stat(&path).is_ok() {
                let current = fs::read(&path).map_err(fs_error)?;
                if !current.is_empty() {
                    return Err(ToolError::InvalidInput(
                        "Cannot create new file - file already exists.".into(),
                    ));
                }
            }
            ensure_parent(&path)?;
            fs::write(&path, new.as_bytes()).map_err(fs_error)?;
            return Ok(ToolOutput {
                content: format!("File created successfully at: {path}"),
                structured: Some(response(&path, old, new, "", all)),
            });
        }
        let bytes = fs::read(&path).map_err(fs_error)?;
        let text = String::from_utf8(bytes)
            .map_err(|_| ToolError::Failed(format!("{path} is not UTF-8 text")))?;
        let count = text.matches(old).count();
        if count == 0 {
            return Err(ToolError::InvalidInput(format!(
                "String to replace not found in file.\nString: {old}"
            )));
        }
        if count > 1 && !all {
            return Err(ToolError::InvalidInput(format!(
                "Found {count} matches of the string to replace, but replace_all is false. To replace all occurrences, set replace_all to true. To replace only one occurrence, please provide more context to uniquely identify the instance.\nString: {old}"
            )));
        }
        let updated = if all {
            text.replace(old, new)
        } else {
            text.replacen(old, new, 1)
        };
        fs::write(&path, updated.as_bytes()).map_err(fs_error)?;
        Ok(ToolOutput {
            content: format!("The file {path} has been updated successfully."),
            structured: Some(response(&path, old, new, &text, all)),
        })
    }
}

/// The fields of Claude Code's Edit response this side knows; the host adds the patch from
/// `originalFile` and the strings.
fn response(path: &str, old: &str, new: &str, original: &str, all: bool) -> Value {
    json!({
        "filePath": path,
        "oldString": old,
        "newString": new,
        "originalFile": original,
        "replaceAll": all,
    })
}

warden_sdk::export_tool!(Edit);
