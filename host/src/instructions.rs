//! The instruction layer of a [`Session`]: memory files, rules, skills, commands and agents as
//! the session in its directory sees them, with its plugins' components under their namespaced
//! names.
//!
//! * [`load_context`] builds [`ContextOptions`] from the session and loads the [`Context`],
//!   adding the session's own problems (plugins that did not load, plugin diagnostics) to its
//!   warnings.
//! * [`PermissionCheckedRunner`] runs a skill's `` !`cmd` `` injections: every command is a
//!   `Bash` tool call for the permission engine first, and only an `allow` runs it (spec 6.4:
//!   injected commands never prompt, so `ask` is a refusal too).
//! * [`render_skill`] renders a skill with that runner, pre-approving the skill's own
//!   `allowed-tools` for the render as the invoking turn would.
//! * [`fire_instructions_loaded`] sends one `InstructionsLoaded` hook event per loaded file.

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::Value;
use sha2::{Digest, Sha256};
use warden_hooks::{
    CommonFields, DispatchOptions, Event, EventPayload, HookConfig, HookInput, InstructionsLoaded,
    Outcome, dispatch,
};
use warden_instructions::{
    CommandRunner, Context, ContextOptions, Diagnostic, LoadReason, MemoryFile, PluginContent,
    ReadGate, RenderError, RenderOptions, RenderedSkill, SkillSource,
};
use warden_permissions::{Access, Decision, Mode, Permissions, PermissionsError};

use crate::runtime::ToolCallOutcome;
use crate::session::{LoadProblemKind, Session};

/// How long one injected command may run (the Bash tool's default two minutes, spec 6.4).
pub const INJECTION_TIMEOUT: Duration = Duration::from_secs(120);

/// Most bytes of one injected command's output put into the skill text; the rest is replaced by
/// a note giving the full size (the Bash tool's 30,000-character output limit).
pub const INJECTION_OUTPUT_CAP: usize = 30_000;

/// Programs whose exit status 1 means "no match" or "differs" rather than failure; such an exit
/// does not abort a skill (spec 6.4).
const SEARCH_AND_COMPARE: &[&str] = &[
    "grep", "egrep", "fgrep", "rg", "ag", "ack", "diff", "cmp", "test", "[",
];

/// The managed directory as Claude Code finds it: the one `WARDEN_MANAGED_SETTINGS_DIR` names
/// (empty: none), else `/etc/claude-code`. Managed settings, `CLAUDE.md` and
/// `.claude/{rules,skills,commands,agents}` all live there.
pub fn managed_dir() -> Option<PathBuf> {
    match std::env::var_os(warden_config::MANAGED_DIR_ENV) {
        Some(v) if v.is_empty() => None,
        Some(v) => Some(PathBuf::from(v)),
        None => Some(PathBuf::from("/etc/claude-code")),
    }
}

/// The session's enabled plugins as input to the instruction layer, each under its namespace
/// name (`plugin` in `plugin:skill`).
pub fn plugin_contents(session: &Session) -> Vec<PluginContent> {
    session
        .plugins
        .iter()
        .map(|p| PluginContent {
            name: p.plugin.name.clone(),
            root: p.plugin.root.clone(),
            skills_dirs: p.plugin.components.skills.clone(),
            commands_dirs: p.plugin.components.commands.clone(),
            agents_dirs: p.plugin.components.agents.clone(),
        })
        .collect()
}

/// What to load for `session` once `touched` files (absolute, or relative to the session's
/// directory) have been read or edited. `@path` imports of memory files go through
/// [`import_gate`].
pub fn context_options(session: &Session, touched: &[PathBuf]) -> ContextOptions {
    let mut opts = ContextOptions::new(&session.cwd, session.home.clone());
    opts.managed_dir = managed_dir();
    // One switch for settings and instructions: the settings decided whether it is read.
    opts.claude_dir = session.settings.claude_config.dir().map(Path::to_path_buf);
    opts.settings = session.settings.clone();
    opts.plugins = plugin_contents(session);
    opts.touched_files = touched.iter().map(|t| session.cwd.join(t)).collect();
    opts.read_gate = Some(import_gate(session));
    opts
}

/// The gate on memory `@path` imports: an import is refused when the session's rules deny
/// reading the file (`Read` deny rules, matched against the path and its symlink target).
///
/// Only a deny refuses. The rules are compiled in the default mode, so neither an ask rule nor
/// a read outside the working directories (which would prompt, and be denied in `dontAsk`
/// mode) blocks an import: Claude Code reads imports without asking, and the deny rules are
/// what keeps a file out of the model's context. Rules that cannot be compiled refuse every
/// import (fail closed), as they refuse every guest access.
pub fn import_gate(session: &Session) -> ReadGate {
    match session.permissions(Some(Mode::Default), &[]) {
        Ok(perms) => ReadGate::new(move |path| {
            let r = perms.check_path(Access::Read, path);
            if r.decision != Decision::Deny {
                return Ok(());
            }
            Err(match (&r.rule, &r.source) {
                (Some(rule), Some(src)) => format!("denied by rule `{rule}` from {src}"),
                (Some(rule), None) => format!("denied by rule `{rule}`"),
                _ => r.reason,
            })
        }),
        Err(e) => {
            let why = format!("the permission rules cannot be used: {e}");
            ReadGate::new(move |_| Err(why.clone()))
        }
    }
}

/// Loads the session's context (see [`context_options`]). The session's own problems are added
/// to the warnings: plugins that did not load and the diagnostics of those that did.
pub fn load_context(session: &Session, touched: &[PathBuf]) -> Context {
    let mut ctx = warden_instructions::load_context(&context_options(session, touched));
    ctx.warnings.extend(session_warnings(session));
    ctx
}

/// Problems of the session that the instruction layer does not see itself. Settings errors are
/// left out: [`warden_instructions::load_context`] reports those already.
pub fn session_warnings(session: &Session) -> Vec<Diagnostic> {
    let mut out: Vec<Diagnostic> = session
        .load_problems()
        .iter()
        .filter(|p| p.kind != LoadProblemKind::SettingsUnreadable)
        .map(|p| Diagnostic::warning(Path::new("plugins"), p.message.clone()))
        .collect();
    for p in &session.plugins {
        for d in &p.plugin.diagnostics {
            let message = format!("plugin {}: {} ({})", p.id, d.message, d.severity);
            out.push(match d.line {
                Some(l) => Diagnostic::warning_at(&d.file, l, message),
                None => Diagnostic::warning(&d.file, message),
            });
        }
    }
    out
}

/// Runs a skill's injected commands, each only after the permission engine allows it as a
/// `Bash` tool call. There is no way around the check: a denied command names the rule that
/// denied it, and one the rules would ask about is refused, since nobody can answer while a
/// skill renders.
///
/// An allowed command never reaches the host's shell: it runs as a call of the session's
/// built-in Bash tool, a WebAssembly component whose programs go through the `exec`
/// capability, so the rules are checked again on every program it starts and each program is
/// confined by the OS (see `warden_runtime`'s exec capability). Stderr follows stdout; a call
/// lasts at most [`INJECTION_TIMEOUT`] and keeps at most [`INJECTION_OUTPUT_CAP`] bytes.
#[derive(Debug)]
pub struct PermissionCheckedRunner {
    session: Arc<Session>,
    perms: Permissions,
    timeout: Duration,
    output_cap: usize,
}

impl PermissionCheckedRunner {
    /// A runner for `session`, checking commands against `perms`.
    pub fn new(session: Arc<Session>, perms: Permissions) -> Self {
        PermissionCheckedRunner {
            session,
            perms,
            timeout: INJECTION_TIMEOUT,
            output_cap: INJECTION_OUTPUT_CAP,
        }
    }

    /// A runner for `session`'s rules plus `allowed_tools` (a skill's `allowed-tools`).
    pub fn for_session(
        session: &Arc<Session>,
        allowed_tools: &[String],
    ) -> Result<Self, PermissionsError> {
        Ok(Self::new(
            session.clone(),
            session.permissions(None, allowed_tools)?,
        ))
    }

    /// Replaces the time limit of each command.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Replaces the output cap of each command (bytes).
    pub fn with_output_cap(mut self, cap: usize) -> Self {
        self.output_cap = cap;
        self
    }

    /// The rules commands are checked against.
    pub fn permissions(&self) -> &Permissions {
        &self.perms
    }

    /// The permission check alone: `Ok` only when the rules allow `command` as a Bash call.
    pub fn check(&self, command: &str) -> Result<(), String> {
        let d = self
            .perms
            .decide("Bash", &serde_json::json!({ "command": command }), None);
        let origin = match (&d.rule, &d.source) {
            (Some(rule), Some(src)) => format!("rule `{rule}` (from {src})"),
            (Some(rule), None) => format!("rule `{rule}`"),
            _ => d.reason.clone(),
        };
        match d.decision {
            Decision::Allow => Ok(()),
            Decision::Deny => Err(format!("permission check failed: denied by {origin}")),
            Decision::Ask => Err(format!(
                "permission check failed: `{command}` needs approval ({origin}), and injected \
                 commands cannot ask; allow it with a Bash rule in permissions.allow or in the \
                 skill's allowed-tools"
            )),
        }
    }

    /// Runs an allowed command through the session's Bash tool.
    fn run_sandboxed(&self, command: &str) -> Result<String, String> {
        let tools = self.session.tools();
        let Some(bash) = tools.get("Bash") else {
            return Err("this session has no Bash tool to run injected commands with".into());
        };
        let timeout_ms = u64::try_from(self.timeout.as_millis()).unwrap_or(u64::MAX);
        let input = serde_json::json!({ "command": command, "timeout": timeout_ms });
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| format!("cannot start the async runtime: {e}"))?;
        let outcome = rt
            .block_on(self.session.execute_approved(bash, &input))
            .map_err(|e| e.to_string())?;
        let cap = |text: String| {
            if text.len() <= self.output_cap {
                return text;
            }
            let mut cut = self.output_cap;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            format!(
                "{}\n… [output truncated: {cut} of {} bytes shown]",
                &text[..cut],
                text.len()
            )
        };
        match outcome {
            // The tool's line for a silent command is for the model, not the skill's text.
            Ok(ToolCallOutcome::Ok { content, .. }) if content == crate::tools::BASH_NO_OUTPUT => {
                Ok(String::new())
            }
            Ok(ToolCallOutcome::Ok { content, .. }) => Ok(cap(content)),
            Ok(ToolCallOutcome::Failed(m)) => {
                // `Exit code N`, then the command's stderr and stdout.
                let (first, output) = m.split_once('\n').unwrap_or((m.as_str(), ""));
                match first.strip_prefix("Exit code ") {
                    Some("1") if is_search_or_compare(command) => Ok(cap(output.to_string())),
                    Some(code) => Err(format!("exit code {code}{}", excerpt(output))),
                    None => Err(excerpt(&m).trim_start_matches(": ").to_string()),
                }
            }
            Ok(ToolCallOutcome::Denied(m)) => Err(format!("refused in the sandbox: {m}")),
            Ok(ToolCallOutcome::InvalidInput(m)) | Err(m) => Err(m),
        }
    }
}

impl CommandRunner for PermissionCheckedRunner {
    fn run(&self, command: &str, cwd: &Path) -> Result<String, String> {
        self.check(command)?;
        if cwd != self.session.cwd {
            return Err(format!(
                "injected commands run in the session directory {}, not {}",
                self.session.cwd.display(),
                cwd.display()
            ));
        }
        self.run_sandboxed(command)
    }
}

/// The first lines of a failed command's output, for the error message.
fn excerpt(output: &str) -> String {
    let t = output.trim();
    if t.is_empty() {
        return String::new();
    }
    let cut: String = t.chars().take(2000).collect();
    if cut.len() < t.len() {
        format!(": {cut}…")
    } else {
        format!(": {cut}")
    }
}

/// Whether the last command of `command`'s last pipeline is a search or compare program.
fn is_search_or_compare(command: &str) -> bool {
    let last = command
        .rsplit(['|', ';', '&', '\n'])
        .find(|s| !s.trim().is_empty())
        .unwrap_or("");
    let program = last
        .split_whitespace()
        .find(|w| !w.contains('='))
        .unwrap_or("");
    let program = program.rsplit('/').next().unwrap_or(program);
    SEARCH_AND_COMPARE.contains(&program)
}

/// Why a skill could not be rendered for a session.
#[derive(Debug, thiserror::Error)]
pub enum SkillError {
    /// Not found, ambiguous, or an injected command failed or was refused.
    #[error(transparent)]
    Render(#[from] RenderError),
    /// The permission rules could not be built.
    #[error(transparent)]
    Permissions(#[from] PermissionsError),
}

/// Values of a skill render that only the caller knows.
#[derive(Debug, Clone, Default)]
pub struct SkillRenderOptions {
    /// `${CLAUDE_SESSION_ID}`; left as written when `None`.
    pub session_id: Option<String>,
    /// `${CLAUDE_EFFORT}`; left as written when `None`.
    pub effort: Option<String>,
    /// Leave `!` commands unexecuted, as written (a preview).
    pub no_exec: bool,
}

/// Renders skill or command `name` with `args` for `session`: substitutions applied and `!`
/// commands run through a [`PermissionCheckedRunner`] over the session's rules plus the skill's
/// own `allowed-tools` (with `${CLAUDE_*}` placeholders substituted), as the invoking turn has
/// them. Commands run in the session's directory.
pub fn render_skill(
    session: &Arc<Session>,
    ctx: &Context,
    name: &str,
    args: &str,
    opts: &SkillRenderOptions,
) -> Result<RenderedSkill, SkillError> {
    let skill = ctx.find_skill(name)?;
    let plugin_data = match &skill.source {
        SkillSource::Plugin(p) => session
            .plugins
            .iter()
            .find(|s| &s.plugin.name == p)
            .map(|s| s.data_dir.clone()),
        _ => None,
    };
    let base = || RenderOptions {
        runner: None,
        session_id: opts.session_id.clone(),
        effort: opts.effort.clone(),
        project_dir: None,
        plugin_data: plugin_data.clone(),
        cwd: session.cwd.clone(),
        shell_disabled: false,
    };
    // Without a runner nothing executes; this render only yields the substituted
    // `allowed-tools` the real render is checked with.
    let preview = ctx.render_skill(name, args, &base())?;
    if opts.no_exec {
        return Ok(preview);
    }
    let runner = PermissionCheckedRunner::for_session(session, &preview.allowed_tools)?;
    let ro = RenderOptions {
        runner: Some(&runner),
        ..base()
    };
    Ok(ctx.render_skill(name, args, &ro)?)
}

/// A fresh random session id in UUID v4 form (from the system's random source; a hash of the
/// time and process id where there is none).
pub fn new_session_id() -> String {
    let mut b: [u8; 16] = [0; 16];
    let random = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut b));
    if random.is_err() {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let mut h = Sha256::new();
        h.update(nanos.to_le_bytes());
        h.update(std::process::id().to_le_bytes());
        b.copy_from_slice(&h.finalize()[..16]);
    }
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let x = hex::encode(b);
    format!(
        "{}-{}-{}-{}-{}",
        &x[..8],
        &x[8..12],
        &x[12..16],
        &x[16..20],
        &x[20..]
    )
}

/// The common hook input fields of `session` (no transcript is kept, so its path is empty).
pub fn common_fields(session: &Session, session_id: &str) -> CommonFields {
    CommonFields {
        session_id: session_id.to_string(),
        transcript_path: String::new(),
        cwd: session.cwd.display().to_string(),
        ..CommonFields::default()
    }
}

/// The `InstructionsLoaded` hook input for one loaded file (spec 1.9).
pub fn instructions_loaded_input(common: &CommonFields, file: &MemoryFile) -> Value {
    let path = |p: &Path| p.display().to_string();
    let memory_type = serde_json::to_value(file.memory_type)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    let payload = InstructionsLoaded {
        file_path: path(&file.path),
        memory_type,
        load_reason: file.load_reason.as_str().to_string(),
        globs: file.globs.clone(),
        trigger_file_path: file.trigger_file_path.as_deref().map(path),
        parent_file_path: file.parent_file_path.as_deref().map(path),
    };
    HookInput::new(common.clone(), EventPayload::InstructionsLoaded(payload)).to_value()
}

/// What the `InstructionsLoaded` hooks did for one file.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HookFiring {
    /// The loaded file.
    pub file_path: PathBuf,
    /// Why it was loaded.
    pub load_reason: LoadReason,
    /// How many handlers ran.
    pub handlers: usize,
    /// Handler errors and dispatch notices (empty when all went well).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<String>,
}

/// Fires `InstructionsLoaded` once per file of `files`, in order, waiting for each before the
/// next so hooks see the files in load order. The event is observational: hook output changes
/// nothing, but failures are reported.
pub async fn fire_instructions_loaded(
    files: &[MemoryFile],
    common: &CommonFields,
    config: &HookConfig,
    opts: &DispatchOptions,
) -> Vec<HookFiring> {
    let mut out = Vec::with_capacity(files.len());
    if config.hooks(Event::InstructionsLoaded).is_empty() {
        return out;
    }
    for f in files {
        let input = instructions_loaded_input(common, f);
        let result = dispatch(Event::InstructionsLoaded, &input, config, opts).await;
        let mut problems = result.warnings.clone();
        for h in &result.handlers {
            match &h.result.outcome {
                Outcome::Blocking { reason, .. } => {
                    problems.push(format!("{}: {reason}", h.label));
                }
                Outcome::NonBlockingError { message } => {
                    problems.push(format!("{}: {message}", h.label));
                }
                Outcome::Cancelled => problems.push(format!("{}: timed out", h.label)),
                Outcome::Success | Outcome::Async | Outcome::Skipped { .. } => {}
            }
        }
        out.push(HookFiring {
            file_path: f.path.clone(),
            load_reason: f.load_reason,
            handlers: result
                .handlers
                .iter()
                .filter(|h| !matches!(h.result.outcome, Outcome::Skipped { .. }))
                .count(),
            problems,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn search_and_compare_detection() {
        assert!(is_search_or_compare("grep -q foo file"));
        assert!(is_search_or_compare("cat x | LC_ALL=C /usr/bin/grep foo"));
        assert!(is_search_or_compare("cd a && diff x y"));
        assert!(!is_search_or_compare("grep foo x | wc -l"));
        assert!(!is_search_or_compare("false"));
    }

    #[test]
    fn session_ids_look_like_uuid_v4() {
        let id = new_session_id();
        assert_eq!(id.len(), 36);
        assert_eq!(id.as_bytes()[14], b'4');
        assert_ne!(id, new_session_id());
    }
}
