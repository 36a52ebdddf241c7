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
