//! Grep: regular-expression search over files, with ripgrep's output modes, answered in
//! Claude Code's shape (paths relative to the working directory, its counts and pagination
//! lines).

use globset::GlobBuilder;
use regex::RegexBuilder;
use serde_json::{Value, json};
use tool_common::{absolute, opt_bool, opt_string, opt_u64, shown, string, walk};
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
                    "head_limit": {"type": "number", "description": "Limit output to the first N lines/entries"},
                    "offset": {"type": "number", "description": "Skip the first N lines/entries before applying head_limit"}
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
        let limit = opt_u64(&input, "head_limit")?.map(|n| n as usize);
        let offset = opt_u64(&input, "offset")?.unwrap_or(0) as usize;
        let cwd = fs::cwd();

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
        let mut matched_files: Vec<(u64, String)> = Vec::new();
        let mut counted_files = 0usize;
        let mut total = 0usize;
        for file in files {
            // Files the host refuses (rules, size) are skipped, as ripgrep skips unreadable ones.
            let Ok(bytes) = fs::read(&file) else { continue };
            if bytes.contains(&0) {
                continue;
            }
            let text = String::from_utf8_lossy(&bytes);
            let name = shown(&file, &cwd);
            match mode {
                "files_with_matches" => {
                    if re.is_match(&text) {
                        let mtime = fs::stat(&file).ok().and_then(|m| m.modified_ms);
                        matched_files.push((mtime.unwrap_or(0), name));
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
                        counted_files += 1;
                        lines_out.push(format!("{name}:{n}"));
                    }
                }
                _ => {
                    let lines: Vec<&str> = text.lines().collect();
                    let hits: Vec<usize> = (0..lines.len())
                        .filter(|&i| re.is_match(lines[i]))
                        .collect();
                    let mut shown_until: Option<usize> = None;
                    for &i in &hits {
                        let start = i.saturating_sub(before).max(shown_until.unwrap_or(0));
                        let end = (i + after + 1).min(lines.len());
                        // ripgrep separates groups of context that do not touch with `--`.
                        let apart = shown_until.is_none_or(|u| start > u);
                        if (before > 0 || after > 0) && apart && !lines_out.is_empty() {
                            lines_out.push("--".to_string());
                        }
                        for (j, line) in lines.iter().enumerate().take(end).skip(start) {
                            let sep = if hits.binary_search(&j).is_ok() {
                                ':'
                            } else {
                                '-'
                            };
                            lines_out.push(if numbers {
                                format!("{name}{sep}{}{sep}{line}", j + 1)
                            } else {
                                format!("{name}{sep}{line}")
                            });
                        }
                        shown_until = Some(end);
                    }
                }
            }
        }
        // What Claude Code appends when a limit or an offset cut the results.
        let page = |cut: bool| -> Option<String> {
            let mut parts = Vec::new();
            if let (Some(l), true) = (limit, cut) {
                parts.push(format!("limit: {l}"));
            }
            if offset > 0 {
                parts.push(format!("offset: {offset}"));
            }
            (!parts.is_empty()).then(|| parts.join(", "))
        };
        let window = |all: usize| -> (usize, usize, bool) {
            let from = offset.min(all);
            let to = limit.map_or(all, |l| (from + l).min(all));
            (from, to, to < all)
        };
        let mut structured = json!({"mode": mode, "filenames": []});
        let was_cut;
        let content = match mode {
            "files_with_matches" => {
                // Newest first, as Claude Code orders them.
                matched_files.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
                let (from, to, cut) = window(matched_files.len());
                was_cut = cut;
                let shown: Vec<String> = matched_files[from..to]
                    .iter()
                    .map(|(_, f)| f.clone())
                    .collect();
                structured["filenames"] = json!(shown);
                structured["numFiles"] = json!(shown.len());
                structured["totalFiles"] = json!(matched_files.len());
                if shown.is_empty() {
                    "No files found".to_string()
                } else {
                    let page = page(cut).map(|p| format!(" {p}")).unwrap_or_default();
                    format!(
                        "Found {} file{}{page}\n{}",
                        shown.len(),
                        if shown.len() == 1 { "" } else { "s" },
                        shown.join("\n")
                    )
                }
            }
            "count" => {
                let (from, to, cut) = window(lines_out.len());
                was_cut = cut;
                let body = lines_out[from..to].join("\n");
                structured["numFiles"] = json!(counted_files);
                structured["content"] = json!(body);
                structured["numMatches"] = json!(total);
                let page = page(cut)
                    .map(|p| format!(" with pagination = {p}"))
                    .unwrap_or_default();
                format!(
                    "{}\n\nFound {total} total occurrence{} across {counted_files} file{}.{page}",
                    if body.is_empty() {
                        "No matches found"
                    } else {
                        &body
                    },
                    if total == 1 { "" } else { "s" },
                    if counted_files == 1 { "" } else { "s" },
                )
            }
            _ => {
                let (from, to, cut) = window(lines_out.len());
                was_cut = cut;
                let body = lines_out[from..to].join("\n");
                structured["numFiles"] = json!(0);
                structured["content"] = json!(body);
                structured["numLines"] = json!(to - from);
                structured["totalLines"] = json!(lines_out.len());
                if body.is_empty() {
                    "No matches found".to_string()
                } else {
                    match page(cut) {
                        Some(p) => format!("{body}\n\n[Showing results with pagination = {p}]"),
                        None => body,
                    }
                }
            }
        };
        if was_cut {
            structured["appliedLimit"] = json!(limit);
        }
        if offset > 0 {
            structured["appliedOffset"] = json!(offset);
        }
        Ok(ToolOutput {
            content,
            structured: Some(structured),
        })
    }
}

warden_sdk::export_tool!(Grep);
