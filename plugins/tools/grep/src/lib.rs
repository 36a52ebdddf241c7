//! Grep: regular-expression search over files, with ripgrep's output modes.

use globset::GlobBuilder;
use regex::RegexBuilder;
use serde_json::{Value, json};
use tool_common::{absolute, opt_bool, opt_string, opt_u64, string, walk};
use warden_sdk::{Tool, ToolError, ToolInfo, ToolOutput, fs};

struct Grep;

impl Tool for Grep {
    fn describe() -> ToolInfo {
        ToolInfo {
            name: "Grep".into(),
            description: "Searches file contents with a regular expression. `output_mode` is `files_with_matches` (default), `content` or `count`; `glob` filters files; `-i` ignores case; `-n`, `-A`, `-B`, `-C` shape content output; `head_limit` caps results.".into(),
            input_schema: json!({
                "type": "object",
                "properties": {
                    "pattern": {"type": "string", "description": "The regular expression to search for"},
                    "path": {"type": "string", "description": "File or directory to search in (default: the current working directory)"},
                    "glob": {"type": "string", "description": "Glob pattern to filter files (e.g. \"*.js\")"},
                    "output_mode": {"type": "string", "enum": ["content", "files_with_matches", "count"]},
                    "-i": {"type": "boolean", "description": "Case insensitive search"},
                    "-n": {"type": "boolean", "description": "Show line numbers (content mode)"},
                    "-A": {"type": "number", "description": "Lines to show after each match"},
                    "-B": {"type": "number", "description": "Lines to show before each match"},
                    "-C": {"type": "number", "description": "Lines to show before and after each match"},
                    "multiline": {"type": "boolean", "description": "Let . match newlines and patterns span lines"},
                    "head_limit": {"type": "number", "description": "Limit output to the first N lines/entries"}
                },
                "required": ["pattern"],
                "additionalProperties": false
            }),
        }
    }

    fn invoke(input: Value) -> Result<ToolOutput, ToolError> {
        let pattern = string(&input, "pattern")?;
        let root = absolute(opt_string(&input, "path")?.unwrap_or("."));
        let mode = opt_string(&input, "output_mode")?.unwrap_or("files_with_matches");
        if !matches!(mode, "content" | "files_with_matches" | "count") {
            return Err(ToolError::InvalidInput(format!(
                "unknown output_mode `{mode}`"
            )));
        }
        let multiline = opt_bool(&input, "multiline")?.unwrap_or(false);
        let re = RegexBuilder::new(pattern)
            .case_insensitive(opt_bool(&input, "-i")?.unwrap_or(false))
            .multi_line(true)
            .dot_matches_new_line(multiline)
            .build()
            .map_err(|e| ToolError::InvalidInput(format!("invalid regex: {e}")))?;
        let filter = match opt_string(&input, "glob")? {
            Some(g) => Some(
                GlobBuilder::new(g)
                    .build()
                    .map_err(|e| ToolError::InvalidInput(format!("invalid glob: {e}")))?
                    .compile_matcher(),
            ),
            None => None,
        };
        let numbers = opt_bool(&input, "-n")?.unwrap_or(true);
        let ctx = opt_u64(&input, "-C")?.unwrap_or(0) as usize;
        let after = opt_u64(&input, "-A")?.map_or(ctx, |n| n as usize);
        let before = opt_u64(&input, "-B")?.map_or(ctx, |n| n as usize);
        let head = opt_u64(&input, "head_limit")?
            .map(|n| n as usize)
            .unwrap_or(usize::MAX);

        // A single file is searched as itself; a directory is walked.
        let mut files: Vec<String> = Vec::new();
        match fs::stat(&root) {
            Ok(m) if m.kind == fs::Kind::File => files.push(root.clone()),
            _ => walk(&root, &mut |abs, rel| {
                let name = rel.rsplit('/').next().unwrap_or(rel);
                if filter
                    .as_ref()
                    .is_none_or(|g| g.is_match(rel) || g.is_match(name))
                {
                    files.push(abs.to_string());
                }
                true
            })?,
        }

        let mut lines_out: Vec<String> = Vec::new();
        let mut matched_files: Vec<String> = Vec::new();
        let mut total = 0usize;
        for file in files {
            // Files the host refuses (rules, size) are skipped, as ripgrep skips unreadable ones.
            let Ok(bytes) = fs::read(&file) else { continue };
            if bytes.contains(&0) {
                continue;
            }
            let text = String::from_utf8_lossy(&bytes);
            match mode {
                "files_with_matches" => {
                    if re.is_match(&text) {
                        matched_files.push(file);
                    }
                }
                "count" => {
                    let n = if multiline {
                        re.find_iter(&text).count()
                    } else {
                        text.lines().filter(|l| re.is_match(l)).count()
                    };
                    if n > 0 {
                        total += n;
                        lines_out.push(format!("{file}:{n}"));
                    }
                }
                _ => {
                    let lines: Vec<&str> = text.lines().collect();
                    let hits: Vec<usize> = (0..lines.len())
                        .filter(|&i| re.is_match(lines[i]))
                        .collect();
                    let mut shown_until = 0usize;
                    for &i in &hits {
                        let start = i.saturating_sub(before).max(shown_until);
                        let end = (i + after + 1).min(lines.len());
                        for (j, line) in lines.iter().enumerate().take(end).skip(start) {
                            let sep = if hits.binary_search(&j).is_ok() {
                                ':'
                            } else {
                                '-'
                            };
                            lines_out.push(if numbers {
                                format!("{file}{sep}{}{sep}{line}", j + 1)
                            } else {
                                format!("{file}{sep}{line}")
                            });
                        }
                        shown_until = end;
                    }
                }
            }
        }
        let content = match mode {
            "files_with_matches" => {
                let shown: Vec<String> = matched_files.iter().take(head).cloned().collect();
                if shown.is_empty() {
                    "No files found".to_string()
                } else {
                    format!(
                        "Found {} file{}\n{}",
                        shown.len(),
                        if shown.len() == 1 { "" } else { "s" },
                        shown.join("\n")
                    )
                }
            }
            "count" => {
                let shown: Vec<String> = lines_out.iter().take(head).cloned().collect();
                if shown.is_empty() {
                    "No matches found".to_string()
                } else {
                    format!(
                        "{}\n\nFound {total} total occurrences across {} files.",
                        shown.join("\n"),
                        shown.len()
                    )
                }
            }
            _ => {
                let shown: Vec<String> = lines_out.iter().take(head).cloned().collect();
                if shown.is_empty() {
                    "No matches found".to_string()
                } else {
                    shown.join("\n")
                }
            }
        };
        Ok(ToolOutput {
            content,
            structured: Some(json!({"mode": mode, "filenames": matched_files})),
        })
    }
}

warden_sdk::export_tool!(Grep);
