//! Glob: files whose path (relative to the search directory) matches a glob pattern, newest
//! first.

use globset::GlobBuilder;
use serde_json::{Value, json};
use tool_common::{absolute, opt_string, string, walk};
use warden_sdk::{Tool, ToolError, ToolInfo, ToolOutput, fs};

const MAX_RESULTS: usize = 100;

struct Glob;

impl Tool for Glob {
    fn describe() -> ToolInfo {
        ToolInfo {
            name: "Glob".into(),
            description: "Fast file pattern matching (`**/*.rs`, `src/**/*.ts`). Returns matching file paths sorted by modification time, newest first.".into(),
            input_schema: json!({
                "type": "object",
                "properties": {
                    "pattern": {"type": "string", "description": "The glob pattern to match files against"},
                    "path": {"type": "string", "description": "The directory to search in (default: the current working directory)"}
                },
                "required": ["pattern"],
                "additionalProperties": false
            }),
        }
    }

    fn invoke(input: Value) -> Result<ToolOutput, ToolError> {
        let pattern = string(&input, "pattern")?;
        let root = absolute(opt_string(&input, "path")?.unwrap_or("."));
        let matcher = GlobBuilder::new(pattern)
            .literal_separator(true)
            .build()
            .map_err(|e| ToolError::InvalidInput(format!("invalid glob pattern: {e}")))?
            .compile_matcher();
        let mut found: Vec<(u64, String)> = Vec::new();
        walk(&root, &mut |abs, rel| {
            if matcher.is_match(rel) {
                let mtime = fs::stat(abs).ok().and_then(|m| m.modified_ms).unwrap_or(0);
                found.push((mtime, abs.to_string()));
            }
            true
        })?;
        if found.is_empty() {
            return Ok(ToolOutput::text("No files found"));
        }
        found.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        let truncated = found.len() > MAX_RESULTS;
        let files: Vec<String> = found
            .into_iter()
            .take(MAX_RESULTS)
            .map(|(_, p)| p)
            .collect();
        let mut content = files.join("\n");
        if truncated {
            content.push_str(
                "\n(Results are truncated. Consider using a more specific path or pattern.)",
            );
        }
        Ok(ToolOutput {
            content,
            structured: Some(json!({"filenames": files, "truncated": truncated})),
        })
    }
}

warden_sdk::export_tool!(Glob);
