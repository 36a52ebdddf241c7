//! Glob: files matching a glob pattern, oldest first, answered in Claude Code's shape.
//!
//! The pattern is matched as ripgrep's `--glob` matches it: a pattern without `/` against each
//! file's name at any depth, one with `/` against the path relative to the search directory.
//! Hidden files are searched (Claude Code passes `--hidden`); `.git` is not.

use globset::GlobBuilder;
use serde_json::{Value, json};
use tool_common::{absolute, opt_string, shown, string, walk};
use warden_sdk::{Tool, ToolError, ToolInfo, ToolOutput, fs};

const MAX_RESULTS: usize = 100;

struct Glob;

impl Tool for Glob {
    fn describe() -> ToolInfo {
        ToolInfo {
            name: "Glob".into(),
            description: "Fast file pattern matching (`**/*.rs`, `src/**/*.ts`). Returns matching file paths sorted by modification time.".into(),
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
        let started = std::time::Instant::now();
        let pattern = string(&input, "pattern")?;
        let root = absolute(opt_string(&input, "path")?.unwrap_or("."));
        let cwd = fs::cwd();
        let by_name = !pattern.contains('/');
        let matcher = GlobBuilder::new(pattern.trim_start_matches("./"))
            .literal_separator(true)
            .build()
            .map_err(|e| ToolError::InvalidInput(format!("invalid glob pattern: {e}")))?
            .compile_matcher();
        let mut found: Vec<(u64, String)> = Vec::new();
        walk(&root, &mut |abs, rel| {
            let name = rel.rsplit('/').next().unwrap_or(rel);
            if matcher.is_match(if by_name { name } else { rel }) {
                let mtime = fs::stat(abs).ok().and_then(|m| m.modified_ms).unwrap_or(0);
                found.push((mtime, shown(abs, &cwd)));
            }
            true
        })?;
        found.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.cmp(&b.1)));
        let total = found.len();
        let truncated = total > MAX_RESULTS;
        let files: Vec<String> = found
            .into_iter()
            .take(MAX_RESULTS)
            .map(|(_, p)| p)
            .collect();
        let content = if files.is_empty() {
            "No files found".to_string()
        } else if truncated {
            format!(
                "{}\n(Results are truncated. Consider using a more specific path or pattern.)",
                files.join("\n")
            )
        } else {
            files.join("\n")
        };
        let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        Ok(ToolOutput {
            content,
            structured: Some(json!({
                "filenames": files,
                "durationMs": duration_ms,
                "numFiles": files.len(),
                "truncated": truncated,
                "totalMatches": total,
                "countIsComplete": true,
            })),
        })
    }
}

warden_sdk::export_tool!(Glob);
