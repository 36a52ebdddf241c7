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

/// A built-in tool's answer, typed where Claude Code's shape is known: the one definition
/// the agent loop, `warden tool`, `warden mcp serve` and the hook inputs all use.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolResponse {
    /// Bash.
    Bash(BashResponse),
    /// Read of a text file.
    Read(ReadResponse),
    /// Any other tool: its structured result as it gave it, with the model's text as
    /// `content` when the tool did not set one.
    Other(serde_json::Value),
}

impl ToolResponse {
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
            ToolResponse::Read(_) | ToolResponse::Other(_) => content.to_string(),
        }
    }

    /// The value hooks get as `tool_response` and clients as structured content.
    pub fn to_value(&self) -> serde_json::Value {
        match self {
            ToolResponse::Bash(b) => serde_json::to_value(b).unwrap_or_default(),
            ToolResponse::Read(r) => serde_json::to_value(r).unwrap_or_default(),
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
