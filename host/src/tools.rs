//! The built-in tools (Read, Write, Edit, Glob, Grep, Bash) as WebAssembly components.
//!
//! Each tool is a guest component embedded in the host, pinned to the digest it had when the
//! host was built. A call gets a grant of the session directory (read-only for Read, Glob and
//! Grep) and, for Bash, a fixed list of programs. The session registers them
//! ([`ToolRegistry`](crate::session::ToolRegistry)) and runs them through its one pipeline
//! ([`Session::call_tool`](crate::session::Session::call_tool)), where the user's permission
//! rules are enforced where the guest touches files, programs and the network, not only on
//! the text of its input.

use std::path::Path;

use crate::runtime::{FsGrant, Grant};

/// One of the built-in tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BuiltinTool {
    /// `Read`: numbered lines of a file.
    Read,
    /// `Write`: create or replace a file.
    Write,
    /// `Edit`: exact string replacement.
    Edit,
    /// `Glob`: files matching a pattern.
    Glob,
    /// `Grep`: regex search.
    Grep,
    /// `Bash`: a command line, each simple command run through `exec`.
    Bash,
}

/// Programs the Bash tool may run unless the caller adds more.
pub const DEFAULT_PROGRAMS: &[&str] = &[
    "awk", "basename", "bash", "cargo", "cat", "chmod", "cmp", "cp", "cut", "date", "df", "diff",
    "dirname", "du", "echo", "egrep", "env", "false", "fgrep", "file", "find", "git", "grep",
    "head", "ln", "ls", "make", "mkdir", "mv", "node", "npm", "printf", "pwd", "python3",
    "readlink", "realpath", "rg", "rm", "rmdir", "rustc", "sed", "sh", "sleep", "sort", "stat",
    "tail", "tee", "test", "timeout", "touch", "tr", "true", "uniq", "wc", "which", "xargs",
];

impl BuiltinTool {
    /// Every built-in tool.
    pub const ALL: [BuiltinTool; 6] = [
        BuiltinTool::Read,
        BuiltinTool::Write,
        BuiltinTool::Edit,
        BuiltinTool::Glob,
        BuiltinTool::Grep,
        BuiltinTool::Bash,
    ];

    /// The tool's name as Claude Code spells it (`Read`, `Bash`, ...).
    pub fn name(self) -> &'static str {
        match self {
            BuiltinTool::Read => "Read",
            BuiltinTool::Write => "Write",
            BuiltinTool::Edit => "Edit",
            BuiltinTool::Glob => "Glob",
            BuiltinTool::Grep => "Grep",
            BuiltinTool::Bash => "Bash",
        }
    }

    /// Parses a tool name (case-insensitive).
    pub fn parse(name: &str) -> Option<BuiltinTool> {
        BuiltinTool::ALL
            .into_iter()
            .find(|t| t.name().eq_ignore_ascii_case(name))
    }

    /// The component's bytes.
    pub fn wasm(self) -> &'static [u8] {
        use crate::guests::*;
        match self {
            BuiltinTool::Read => TOOL_READ_WASM,
            BuiltinTool::Write => TOOL_WRITE_WASM,
            BuiltinTool::Edit => TOOL_EDIT_WASM,
            BuiltinTool::Glob => TOOL_GLOB_WASM,
            BuiltinTool::Grep => TOOL_GREP_WASM,
            BuiltinTool::Bash => TOOL_BASH_WASM,
        }
    }

    /// sha256 of [`wasm`](Self::wasm), computed when the host was built: the digest the
    /// tool's grant is pinned to.
    pub fn sha256(self) -> &'static str {
        use crate::guests::*;
        match self {
            BuiltinTool::Read => TOOL_READ_SHA256,
            BuiltinTool::Write => TOOL_WRITE_SHA256,
            BuiltinTool::Edit => TOOL_EDIT_SHA256,
            BuiltinTool::Glob => TOOL_GLOB_SHA256,
            BuiltinTool::Grep => TOOL_GREP_SHA256,
            BuiltinTool::Bash => TOOL_BASH_SHA256,
        }
    }

    /// Whether the tool changes files.
    pub fn writes(self) -> bool {
        matches!(
            self,
            BuiltinTool::Write | BuiltinTool::Edit | BuiltinTool::Bash
        )
    }

    /// The grant a call in `cwd` gets: the directory (writable for tools that write) and, for
    /// Bash, [`DEFAULT_PROGRAMS`] plus `programs`.
    pub fn grant(self, cwd: &Path, programs: &[String]) -> Grant {
        let exec = if self == BuiltinTool::Bash {
            let mut p: Vec<String> = DEFAULT_PROGRAMS.iter().map(|s| s.to_string()).collect();
            p.extend(programs.iter().cloned());
            p.sort();
            p.dedup();
            p
        } else {
            Vec::new()
        };
        Grant {
            fs: vec![FsGrant {
                path: cwd.to_path_buf(),
                write: self.writes(),
            }],
            exec,
            ..Grant::default()
        }
    }
}

/// What the Bash tool answers, in Claude Code's shape: PostToolUse hooks get it as
/// `tool_response`, `warden tool --json` as `structured`, `warden mcp serve` as
/// `structuredContent`, and the model gets [`BashResponse::model_text`].
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BashResponse {
    /// What the command printed on stdout.
    pub stdout: String,
    /// What it printed on stderr.
    pub stderr: String,
    /// Whether it was stopped before it finished.
    pub interrupted: bool,
    /// Whether stdout is an image (never, for this tool).
    pub is_image: bool,
    /// Whether the command is one that prints nothing when it succeeds (Claude Code's
    /// heuristic; this tool does not guess, so always `false`).
    pub no_output_expected: bool,
    /// What exit status 1 meant, when the command line ended with a program for which it is
    /// an answer rather than a failure (`grep`: `No matches found`; `test`: `Condition is
    /// false`; `diff`: `Files differ`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub return_code_interpretation: Option<String>,
}

/// The text the model gets for a Bash call that printed nothing, as Claude Code words it.
pub const BASH_NO_OUTPUT: &str = "(Bash completed with no output)";

impl BashResponse {
    /// The tool result text, as Claude Code builds it: stdout without its trailing newlines,
    /// then stderr, or [`BASH_NO_OUTPUT`].
    pub fn model_text(&self) -> String {
        let parts: Vec<&str> = [self.stdout.trim_end(), self.stderr.trim_end()]
            .into_iter()
            .filter(|p| !p.trim().is_empty())
            .collect();
        if parts.is_empty() {
            BASH_NO_OUTPUT.to_string()
        } else {
            parts.join("\n")
        }
    }
}

/// What the Read tool answers for a text file, in Claude Code's shape.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ReadResponse {
    /// `text`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The lines read.
    pub file: ReadFile,
}

/// The lines a Read call returned.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadFile {
    /// The absolute path.
    pub file_path: String,
    /// The lines read, as in the file (unnumbered).
    pub content: String,
    /// How many lines were read.
    pub num_lines: u64,
    /// The first line read (1-based).
    pub start_line: u64,
    /// The file's lines (a final newline ends in an empty last line, as Claude Code counts).
    pub total_lines: u64,
}

/// One hunk of a file change, as Claude Code's `structuredPatch` holds it (jsdiff's shape):
/// 1-based starts, line counts, and the lines prefixed ` `, `-` or `+` without their newline.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PatchHunk {
    /// The hunk's first line in the old text (the line before it when it has none).
    pub old_start: u64,
    /// Its lines in the old text.
    pub old_lines: u64,
    /// The hunk's first line in the new text (the line before it when it has none).
    pub new_start: u64,
    /// Its lines in the new text.
    pub new_lines: u64,
    /// The lines, prefixed.
    pub lines: Vec<String>,
}

/// Lines of context around each change, as Claude Code's patches have.
const PATCH_CONTEXT: usize = 3;

/// The hunks turning `old` into `new`, with [`PATCH_CONTEXT`] lines of context, as
/// Claude Code computes `structuredPatch`; a last line without its newline is followed by
/// `\ No newline at end of file`, as jsdiff marks it.
pub fn structured_patch(old: &str, new: &str) -> Vec<PatchHunk> {
    let diff = similar::TextDiff::from_lines(old, new);
    let mut hunks = Vec::new();
    for group in diff.grouped_ops(PATCH_CONTEXT) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        let old_lines = (last.old_range().end - first.old_range().start) as u64;
        let new_lines = (last.new_range().end - first.new_range().start) as u64;
        let start = |s: usize, n: u64| if n == 0 { s as u64 } else { s as u64 + 1 };
        let mut lines = Vec::new();
        for op in &group {
            for change in diff.iter_changes(op) {
                let sign = match change.tag() {
                    similar::ChangeTag::Equal => ' ',
                    similar::ChangeTag::Delete => '-',
                    similar::ChangeTag::Insert => '+',
                };
                let value = change.value();
                let text = value.strip_suffix('\n').unwrap_or(value);
                lines.push(format!("{sign}{text}"));
                if !value.ends_with('\n') {
                    lines.push("\\ No newline at end of file".to_string());
                }
            }
        }
        hunks.push(PatchHunk {
            old_start: start(first.old_range().start, old_lines),
            old_lines,
            new_start: start(first.new_range().start, new_lines),
            new_lines,
            lines,
        });
    }
    hunks
}

/// The sentence Claude Code adds to a Write or Edit result: the model already knows the
/// file's new state.
pub const FILE_STATE_CURRENT: &str =
    " (file state is current in your context \u{2014} no need to Read it back)";

/// What the Write tool answers, in Claude Code's shape.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WriteResponse {
    /// `create` or `update`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The absolute path.
    pub file_path: String,
    /// What was written.
    pub content: String,
    /// The change from the old content (empty for a created file).
    #[serde(default)]
    pub structured_patch: Vec<PatchHunk>,
    /// What the file held before (`null` when it was created).
    pub original_file: Option<String>,
    /// Whether the user changed the content before it was written (never, here).
    #[serde(default)]
    pub user_modified: bool,
}

/// What the Edit tool answers, in Claude Code's shape.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EditResponse {
    /// The absolute path.
    pub file_path: String,
    /// The text replaced.
    pub old_string: String,
    /// Its replacement.
    pub new_string: String,
    /// What the file held before.
    pub original_file: String,
    /// The change.
    #[serde(default)]
    pub structured_patch: Vec<PatchHunk>,
    /// Whether the user changed the edit before it was made (never, here).
    #[serde(default)]
    pub user_modified: bool,
    /// Whether every occurrence was replaced.
    pub replace_all: bool,
}

impl WriteResponse {
    /// Fills in the patch from the old and new content.
    fn with_patch(mut self) -> Self {
        self.structured_patch = match &self.original_file {
            Some(old) => structured_patch(old, &self.content),
            None => Vec::new(),
        };
        self
    }
}

impl EditResponse {
    /// Fills in the patch: the edit is applied again to `originalFile`, as the tool did.
    fn with_patch(mut self) -> Self {
        let updated = if self.old_string.is_empty() {
            self.new_string.clone()
        } else if self.replace_all {
            self.original_file
                .replace(&self.old_string, &self.new_string)
        } else {
            self.original_file
                .replacen(&self.old_string, &self.new_string, 1)
        };
        self.structured_patch = structured_patch(&self.original_file, &updated);
        self
    }
}

/// What the Glob tool answers, in Claude Code's shape: paths relative to the working
/// directory when under it, oldest first.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GlobResponse {
    /// The paths found (at most 100).
    pub filenames: Vec<String>,
    /// How long the search took.
    pub duration_ms: u64,
    /// How many paths `filenames` holds.
    pub num_files: u64,
    /// Whether more were found than returned.
    pub truncated: bool,
    /// How many were found.
    pub total_matches: u64,
    /// Whether `totalMatches` is exact (always, here: the search is not cut short).
    pub count_is_complete: bool,
}

/// What the Grep tool answers, in Claude Code's shape; which optional fields are present
/// depends on `mode`, as in Claude Code's answers.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GrepResponse {
    /// `files_with_matches`, `content` or `count`.
    pub mode: String,
    /// Files with matches (`files_with_matches` only, newest first; empty otherwise).
    pub filenames: Vec<String>,
    /// Files returned (`files_with_matches`), files with matches (`count`), or 0 (`content`).
    pub num_files: u64,
    /// The matching lines (`content`) or `path:count` lines (`count`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// Lines returned (`content`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub num_lines: Option<u64>,
    /// Matching lines in all (`count`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub num_matches: Option<u64>,
    /// Files with matches before the limit (`files_with_matches`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_files: Option<u64>,
    /// Lines before the limit (`content`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_lines: Option<u64>,
    /// The `head_limit` that cut the results, when it cut them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub applied_limit: Option<u64>,
    /// The `offset` the results start at, when not 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub applied_offset: Option<u64>,
}

/// A built-in tool's answer, typed where Claude Code's shape is known: the one definition
/// the agent loop, `warden tool`, `warden mcp serve` and the hook inputs all use.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolResponse {
    /// Bash.
    Bash(BashResponse),
    /// Read of a text file.
    Read(ReadResponse),
    /// Write.
    Write(WriteResponse),
    /// Edit.
    Edit(EditResponse),
    /// Glob.
    Glob(GlobResponse),
    /// Grep.
    Grep(GrepResponse),
    /// Any other tool: its structured result as it gave it, with the model's text as
    /// `content` when the tool did not set one.
    Other(serde_json::Value),
}

impl ToolResponse {
    /// Whether the result has Claude Code's typed shape (and the model's text is
    /// [`ToolResponse::model_text`] rather than the tool's own).
    pub fn is_typed(&self) -> bool {
        !matches!(self, ToolResponse::Other(_))
    }

    /// Types a successful call's result: `content` is the text the tool gave the model,
    /// `structured` its structured result. A Bash result that does not fit
    /// [`BashResponse`] (a guest built before it) keeps its text as stdout.
    pub fn from_result(tool: &str, content: &str, structured: Option<&serde_json::Value>) -> Self {
        if tool == BuiltinTool::Bash.name() {
            let typed = structured
                .and_then(|s| serde_json::from_value::<BashResponse>(s.clone()).ok())
                .unwrap_or_else(|| BashResponse {
                    stdout: content.to_string(),
                    ..BashResponse::default()
                });
            return ToolResponse::Bash(typed);
        }
        if tool == BuiltinTool::Read.name()
            && let Some(typed) =
                structured.and_then(|s| serde_json::from_value::<ReadResponse>(s.clone()).ok())
        {
            return ToolResponse::Read(typed);
        }
        if tool == BuiltinTool::Write.name()
            && let Some(typed) =
                structured.and_then(|s| serde_json::from_value::<WriteResponse>(s.clone()).ok())
        {
            return ToolResponse::Write(typed.with_patch());
        }
        if tool == BuiltinTool::Edit.name()
            && let Some(typed) =
                structured.and_then(|s| serde_json::from_value::<EditResponse>(s.clone()).ok())
        {
            return ToolResponse::Edit(typed.with_patch());
        }
        if tool == BuiltinTool::Glob.name()
            && let Some(typed) =
                structured.and_then(|s| serde_json::from_value::<GlobResponse>(s.clone()).ok())
        {
            return ToolResponse::Glob(typed);
        }
        if tool == BuiltinTool::Grep.name()
            && let Some(typed) =
                structured.and_then(|s| serde_json::from_value::<GrepResponse>(s.clone()).ok())
        {
            return ToolResponse::Grep(typed);
        }
        match structured {
            Some(serde_json::Value::Object(s)) => {
                let mut r = s.clone();
                r.entry("content")
                    .or_insert_with(|| serde_json::Value::String(content.to_string()));
                ToolResponse::Other(serde_json::Value::Object(r))
            }
            _ => ToolResponse::Other(serde_json::json!({ "content": content })),
        }
    }

    /// The text the model gets.
    pub fn model_text(&self, content: &str) -> String {
        match self {
            ToolResponse::Bash(b) => b.model_text(),
            ToolResponse::Write(_) | ToolResponse::Edit(_) => {
                format!("{}{FILE_STATE_CURRENT}", content.trim_end())
            }
            ToolResponse::Read(_)
            | ToolResponse::Glob(_)
            | ToolResponse::Grep(_)
            | ToolResponse::Other(_) => content.to_string(),
        }
    }

    /// The value hooks get as `tool_response` and clients as structured content.
    pub fn to_value(&self) -> serde_json::Value {
        match self {
            ToolResponse::Bash(b) => serde_json::to_value(b).unwrap_or_default(),
            ToolResponse::Read(r) => serde_json::to_value(r).unwrap_or_default(),
            ToolResponse::Write(r) => serde_json::to_value(r).unwrap_or_default(),
            ToolResponse::Edit(r) => serde_json::to_value(r).unwrap_or_default(),
            ToolResponse::Glob(r) => serde_json::to_value(r).unwrap_or_default(),
            ToolResponse::Grep(r) => serde_json::to_value(r).unwrap_or_default(),
            ToolResponse::Other(v) => v.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bash_text_is_stdout_then_stderr_or_the_no_output_line() {
        let r = BashResponse {
            stdout: "out\n\n".into(),
            stderr: "warn\n".into(),
            ..BashResponse::default()
        };
        assert_eq!(r.model_text(), "out\nwarn");
        assert_eq!(BashResponse::default().model_text(), BASH_NO_OUTPUT);
        let v = serde_json::to_value(&r).expect("json");
        let keys: Vec<&str> = v
            .as_object()
            .map(|o| o.keys().map(String::as_str).collect())
            .unwrap_or_default();
        assert_eq!(
            keys,
            [
                "stdout",
                "stderr",
                "interrupted",
                "isImage",
                "noOutputExpected"
            ]
        );
    }

    #[test]
    fn an_edit_answers_as_claude_code_with_its_patch() {
        // The guest's fields, as the Edit component gives them.
        let guest = serde_json::json!({
            "filePath": "/p/README.md", "oldString": "hello", "newString": "bye",
            "originalFile": "hello\n", "replaceAll": false,
        });
        let r = ToolResponse::from_result(
            "Edit",
            "The file /p/README.md has been updated successfully.",
            Some(&guest),
        );
        // Claude Code 2.1.332's PostToolUse tool_response for this edit.
        let want = serde_json::json!({
            "filePath": "/p/README.md", "oldString": "hello", "newString": "bye",
            "originalFile": "hello\n",
            "structuredPatch": [{"oldStart": 1, "oldLines": 1, "newStart": 1, "newLines": 1,
                                 "lines": ["-hello", "+bye"]}],
            "userModified": false, "replaceAll": false,
        });
        assert_eq!(r.to_value(), want);
        assert_eq!(
            r.model_text("The file /p/README.md has been updated successfully."),
            "The file /p/README.md has been updated successfully. (file state is current in your context \u{2014} no need to Read it back)"
        );
    }

    #[test]
    fn a_write_answers_create_or_update_with_the_old_content() {
        let created = ToolResponse::from_result(
            "Write",
            "File created successfully at: /p/new.txt",
            Some(
                &serde_json::json!({"type": "create", "filePath": "/p/new.txt", "content": "hi\n", "originalFile": null}),
            ),
        );
        assert_eq!(
            created.to_value(),
            serde_json::json!({"type": "create", "filePath": "/p/new.txt", "content": "hi\n",
                               "structuredPatch": [], "originalFile": null, "userModified": false})
        );
        let updated = ToolResponse::from_result(
            "Write",
            "",
            Some(
                &serde_json::json!({"type": "update", "filePath": "/p/a", "content": "a\nB\nc\n", "originalFile": "a\nb\nc\n"}),
            ),
        );
        assert_eq!(
            updated.to_value()["structuredPatch"],
            serde_json::json!([{"oldStart": 1, "oldLines": 3, "newStart": 1, "newLines": 3,
                                "lines": [" a", "-b", "+B", " c"]}])
        );
    }

    #[test]
    fn patches_keep_three_lines_of_context_and_mark_a_missing_newline() {
        let old: String = (1..=20).map(|i| format!("{i}\n")).collect();
        let new = old.replace("10\n", "ten\n");
        let hunks = structured_patch(&old, &new);
        assert_eq!(hunks.len(), 1);
        assert_eq!((hunks[0].old_start, hunks[0].old_lines), (7, 7));
        assert_eq!(hunks[0].lines.first().map(String::as_str), Some(" 7"));
        let hunks = structured_patch("a", "b");
        assert_eq!(
            hunks[0].lines,
            [
                "-a",
                "\\ No newline at end of file",
                "+b",
                "\\ No newline at end of file"
            ]
        );
        let hunks = structured_patch("", "x\n");
        assert_eq!(
            (hunks[0].old_start, hunks[0].old_lines, hunks[0].new_start),
            (0, 0, 1)
        );
    }

    #[test]
    fn glob_and_grep_answer_in_claude_codes_shapes() {
        // The guests' fields, typed; Claude Code 2.1.332's PostToolUse tool_response for the
        // same searches (tests/fixtures/claude-p/recordings/glob and grep_limit).
        let glob = ToolResponse::from_result(
            "Glob",
            "README.md",
            Some(
                &serde_json::json!({"countIsComplete": true, "durationMs": 3, "filenames": ["README.md"],
                "numFiles": 1, "totalMatches": 1, "truncated": false}),
            ),
        );
        assert_eq!(
            serde_json::to_string(&glob.to_value()).expect("json"),
            r#"{"filenames":["README.md"],"durationMs":3,"numFiles":1,"truncated":false,"totalMatches":1,"countIsComplete":true}"#
        );
        assert_eq!(glob.model_text("README.md"), "README.md");
        let grep = ToolResponse::from_result(
            "Grep",
            "README.md:1:hello\n\n[Showing results with pagination = limit: 1]",
            Some(
                &serde_json::json!({"mode": "content", "filenames": [], "numFiles": 0,
                "content": "README.md:1:hello", "numLines": 1, "totalLines": 3, "appliedLimit": 1}),
            ),
        );
        assert_eq!(
            grep.to_value(),
            serde_json::json!({"mode": "content", "numFiles": 0, "filenames": [],
                "content": "README.md:1:hello", "numLines": 1, "totalLines": 3, "appliedLimit": 1})
        );
        assert!(grep.is_typed());
        // Fields another mode has are absent, not null.
        let files = ToolResponse::from_result(
            "Grep",
            "No files found",
            Some(
                &serde_json::json!({"mode": "files_with_matches", "filenames": [], "numFiles": 0, "totalFiles": 0}),
            ),
        );
        assert_eq!(
            files.to_value(),
            serde_json::json!({"mode": "files_with_matches", "filenames": [], "numFiles": 0, "totalFiles": 0})
        );
    }

    #[test]
    fn an_old_bash_result_keeps_its_text() {
        let r = ToolResponse::from_result("Bash", "hi", Some(&serde_json::json!({"x": 1})));
        assert_eq!(
            r,
            ToolResponse::Bash(BashResponse {
                stdout: "hi".into(),
                ..BashResponse::default()
            })
        );
    }
}
