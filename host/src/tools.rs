//! The built-in tools (Read, Write, Edit, Glob, Grep, Bash) as WebAssembly components.
//!
//! Each tool is a guest component embedded in the host. A call loads it with a grant of the
//! session directory (read-only for Read, Glob and Grep) and, for Bash, a fixed list of
//! programs, and runs it under a [`PermissionPolicy`] built from the user's settings: the
//! permission rules are enforced where the guest touches files, programs and the network, not
//! on the text of its input. Deciding whether the call itself may run (the text-level
//! [`Permissions::decide`]) is the caller's business, before it calls [`ToolRunner::run`].

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use warden_config::{Home, LoadOptions, Settings};
use warden_permissions::{Options as PermissionOptions, Permissions, PermissionsError, Warning};

use crate::capability::{AskAt, PermissionPolicy};
use crate::runtime::{
    CallContext, ComponentCache, DigestPin, FsGrant, Grant, Limits, LoadedComponent, Runtime,
    RuntimeConfig, RuntimeError, ToolCall, World,
};

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

/// How a tool call is set up.
#[derive(Debug, Clone)]
pub struct ToolOptions {
    /// `--settings` arguments: settings file paths or inline JSON.
    pub settings: Vec<String>,
    /// Warden's home (user settings); `None` means `$WARDEN_HOME` or `~/.warden`.
    pub home: Option<PathBuf>,
    /// The user's home directory, for `~/` rules; `None` means `$HOME`.
    pub user_home: Option<PathBuf>,
    /// Directory of managed settings; `None` means none are read.
    pub managed_dir: Option<PathBuf>,
    /// Whether the workspace is trusted (project allow rules wait for it).
    pub trusted: bool,
    /// What accesses the rules would ask about do.
    pub ask: AskAt,
    /// Programs the Bash tool may run beyond [`DEFAULT_PROGRAMS`].
    pub programs: Vec<String>,
    /// Backstop deadline for the whole call (the Bash tool enforces its own `timeout`).
    pub deadline: Duration,
}

impl Default for ToolOptions {
    fn default() -> Self {
        ToolOptions {
            settings: Vec::new(),
            home: None,
            user_home: None,
            managed_dir: None,
            trusted: false,
            ask: AskAt::Allow,
            programs: Vec::new(),
            deadline: Duration::from_secs(630),
        }
    }
}

/// Why a tool could not be run.
#[derive(Debug, thiserror::Error)]
pub enum ToolsError {
    /// No built-in tool has that name.
    #[error("unknown tool `{0}`; built-in tools: Read, Write, Edit, Glob, Grep, Bash")]
    UnknownTool(String),
    /// The working directory is unusable.
    #[error("working directory {path}: {source}")]
    Cwd {
        /// The directory.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// No Warden home could be found for the user settings.
    #[error("{0}")]
    Home(#[from] warden_config::ConfigError),
    /// The settings contradict each other.
    #[error(transparent)]
    Permissions(#[from] PermissionsError),
    /// Loading or running the component failed.
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
}

/// The session's permission rules, compiled from its settings files.
pub fn load_permissions(cwd: &Path, opts: &ToolOptions) -> Result<Permissions, ToolsError> {
    let home = match &opts.home {
        Some(h) => Home::new(h.clone()),
        None => Home::from_env()?,
    };
    let mut load = LoadOptions::new(cwd, home);
    load.managed_dir = opts.managed_dir.clone();
    load.cli_settings = opts.settings.clone();
    let settings = Settings::load(&load);
    let user_home = opts
        .user_home
        .clone()
        .or_else(|| std::env::var_os("HOME").map(PathBuf::from))
        .unwrap_or_else(|| PathBuf::from("/"));
    let perms = Permissions::from_settings(
        &settings,
        &PermissionOptions {
            cwd: cwd.to_path_buf(),
            home: user_home,
            trusted: opts.trusted,
            ..PermissionOptions::default()
        },
    )?;
    Ok(perms)
}

/// Runs built-in tools, loading each through a [`ComponentCache`] (once per grant).
pub struct ToolRunner {
    components: Arc<ComponentCache>,
}

/// A finished tool call, with the settings warnings the rules produced.
#[derive(Debug)]
pub struct ToolRun {
    /// The call.
    pub call: ToolCall,
    /// Problems with settings entries (ignored rules and the like).
    pub warnings: Vec<Warning>,
}

impl ToolRunner {
    /// A runner on the process's runtime for `config`, with its own component cache.
    pub fn new(config: RuntimeConfig) -> Result<Self, ToolsError> {
        let runtime = Runtime::shared(config)?;
        Ok(Self::with_components(Arc::new(ComponentCache::new(
            runtime,
        ))))
    }

    /// A runner sharing `components` (and their runtime) with the rest of the process.
    pub fn with_components(components: Arc<ComponentCache>) -> Self {
        ToolRunner { components }
    }

    fn component(
        &self,
        tool: BuiltinTool,
        grant: &Grant,
    ) -> Result<Arc<LoadedComponent>, ToolsError> {
        let pin = DigestPin::Sha256(tool.sha256());
        Ok(self
            .components
            .bytes(tool.name(), tool.wasm(), World::Tool, grant, pin)?)
    }

    /// Runs the tool `name` on `input_json` in `cwd`, under the rules of the settings `opts`
    /// names. A refused access is a [`ToolCallOutcome::Denied`](crate::runtime::ToolCallOutcome)
    /// naming the path, program or URL and the rule.
    pub async fn run(
        &self,
        name: &str,
        input_json: &str,
        cwd: &Path,
        opts: &ToolOptions,
    ) -> Result<ToolRun, ToolsError> {
        let tool = BuiltinTool::parse(name).ok_or_else(|| ToolsError::UnknownTool(name.into()))?;
        let cwd = std::fs::canonicalize(cwd).map_err(|source| ToolsError::Cwd {
            path: cwd.to_path_buf(),
            source,
        })?;
        let perms = load_permissions(&cwd, opts)?;
        let warnings = perms.warnings().to_vec();
        let grant = tool.grant(&cwd, &opts.programs);
        let component = self.component(tool, &grant)?;
        let ctx = CallContext {
            policy: Arc::new(PermissionPolicy::new(Arc::new(perms), opts.ask)),
            ..CallContext::new(cwd, &grant)
        };
        let limits = Limits::with_deadline(opts.deadline);
        let call = self
            .components
            .runtime()
            .call_tool(&component, input_json, &limits, ctx)
            .await?;
        Ok(ToolRun { call, warnings })
    }
}

/// Runs one built-in tool call with a fresh runner (see [`ToolRunner::run`]).
pub async fn run_tool(
    name: &str,
    input_json: &str,
    cwd: &Path,
    opts: &ToolOptions,
    config: RuntimeConfig,
) -> Result<ToolRun, ToolsError> {
    ToolRunner::new(config)?
        .run(name, input_json, cwd, opts)
        .await
}
