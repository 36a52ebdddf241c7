//! Read: a file's lines, numbered as Claude Code numbers them (`N<tab>line`), through the fs
//! capability.

use serde_json::{Value, json};
use tool_common::{absolute, fs_error, opt_u64, string};
use warden_sdk::{Tool, ToolError, ToolInfo, ToolOutput, fs};

const DEFAULT_LIMIT: u64 = 2000;
const MAX_LINE_CHARS: usize = 2000;

struct Read;

impl Tool for Read {
    fn describe() -> ToolInfo {
        ToolInfo {
            name: "Read".into(),
            description: "Reads a file from the local filesystem. Returns up to 2000 lines from the start (or from `offset`), numbered `N<tab>line`; longer lines are cut at 2000 characters.".into(),
            input_schema: json!({
                "type": "object",
                "properties": {
                    "file_path": {"type": "string", "description": "The absolute path to the file to read"},
                    "offset": {"type": "number", "description": "The line number to start reading from (1-based)"},
                    "limit": {"type": "number", "description": "The number of lines to read"}
                },
                "required": ["file_path"],
                "additionalProperties": false
            }),
        }
    }

    fn invoke(input: Value) -> Result<ToolOutput, ToolError> {
        let path = absolute(string(&input, "file_path")?);
        let offset = opt_u64(&input, "offset")?.unwrap_or(1).max(1);
        let limit = opt_u64(&input, "limit")?.unwrap_or(DEFAULT_LIMIT);
        let bytes = fs::read(&path).map_err(|e| match e.code {
            // Claude Code's words, so the model knows where relative paths start.
            fs::ErrorCode::NotFound => ToolError::Failed(format!(
                "File does not exist. Note: your current working directory is {}.",
                fs::cwd()
            )),
            _ => fs_error(e),
        })?;
        let text = String::from_utf8_lossy(&bytes);
        if text.is_empty() {
            return Ok(ToolOutput::text(
                "<system-reminder>Warning: the file exists but the contents are empty.</system-reminder>",
            ));
        }
        // Lines as Claude Code counts them: split at each newline, so a final newline ends
        // in an empty last line.
        let lines: Vec<&str> = text.split('\n').collect();
        let total = lines.len() as u64;
        if offset > total {
            return Ok(ToolOutput::text(format!(
                "<system-reminder>Warning: the file exists but is shorter than the provided offset ({offset}). The file has {total} lines.</system-reminder>"
            )));
        }
        let chosen: Vec<&str> = lines
            .iter()
            .skip((offset - 1) as usize)
            .take(limit as usize)
            .copied()
            .collect();
        let numbered: Vec<String> = chosen
            .iter()
            .enumerate()
            .map(|(i, line)| {
                let line = line.strip_suffix('\r').unwrap_or(line);
                let line = match line.char_indices().nth(MAX_LINE_CHARS) {
                    Some((cut, _)) => &line[..cut],
                    None => line,
                };
                format!("{}\t{line}", offset as usize + i)
            })
            .collect();
        Ok(ToolOutput {
            content: numbered.join("\n"),
            structured: Some(json!({
                "type": "text",
                "file": {
                    "filePath": path,
                    "content": chosen.join("\n"),
                    "numLines": chosen.len(),
                    "startLine": offset,
                    "totalLines": total,
                },
            })),
        })
    }
}

warden_sdk::export_tool!(Read);
