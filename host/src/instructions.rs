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
use std::process::{Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::Value;
use sha2::{Digest, Sha256};
use warden_hooks::{
    CommonFields, DispatchOptions, Event, EventPayload, HookConfig, HookInput, InstructionsLoaded,
    Outcome, dispatch,
};
use warden_instructions::{
    CommandRunner, Context, ContextOptions, LoadReason, MemoryFile, PluginContent, ReadGate,
    RenderError, RenderOptions, RenderedSkill, SkillSource, Warning,
};
use warden_permissions::{Access, Decision, Mode, Permissions, PermissionsError};

use crate::session::Session;

/// How long one injected command may run (the Bash tool's default two minutes, spec 6.4).
pub const INJECTION_TIMEOUT: Duration = Duration::from_secs(120);

/// Most bytes of one injected command's output put into the skill text; the rest is replaced by
/// a note giving the full size (the Bash tool's 30,000-character output limit).
pub const INJECTION_OUTPUT_CAP: usize = 30_000;

/// How long the output of a finished command is still read before the processes it left behind
/// (holding the output pipe open) are killed.
const PIPE_GRACE: Duration = Duration::from_millis(500);

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
pub fn session_warnings(session: &Session) -> Vec<Warning> {
    let settings_errors: Vec<&str> = session
        .settings
        .errors
        .iter()
        .map(|e| e.message.as_str())
        .collect();
    let mut out: Vec<Warning> = session
        .warnings
        .iter()
        .filter(|w| !settings_errors.contains(&w.as_str()))
        .map(|w| Warning::new(Path::new("plugins"), w.clone()))
        .collect();
    for p in &session.plugins {
        for d in &p.plugin.diagnostics {
            let message = format!("plugin {}: {} ({})", p.id, d.message, d.severity);
            out.push(match d.line {
                Some(l) => Warning::at(&d.file, l, message),
                None => Warning::new(&d.file, message),
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
/// An allowed command runs as `sh -c COMMAND` in the given directory with stdin closed, stderr
/// merged into stdout, in its own process group (killed as a whole on timeout), for at most
/// [`INJECTION_TIMEOUT`], keeping at most [`INJECTION_OUTPUT_CAP`] bytes of output.
#[derive(Debug)]
pub struct PermissionCheckedRunner {
    perms: Permissions,
    timeout: Duration,
    output_cap: usize,
}

impl PermissionCheckedRunner {
    /// A runner checking commands against `perms`.
    pub fn new(perms: Permissions) -> Self {
        PermissionCheckedRunner {
            perms,
            timeout: INJECTION_TIMEOUT,
            output_cap: INJECTION_OUTPUT_CAP,
        }
    }

    /// A runner for `session`'s rules plus `allowed_tools` (a skill's `allowed-tools`).
    pub fn for_session(
        session: &Session,
        allowed_tools: &[String],
    ) -> Result<Self, PermissionsError> {
        Ok(Self::new(session.permissions(None, allowed_tools)?))
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
}

impl CommandRunner for PermissionCheckedRunner {
    fn run(&self, command: &str, cwd: &Path) -> Result<String, String> {
        self.check(command)?;
        run_shell(command, cwd, self.timeout, self.output_cap)
    }
}

/// Output collected by the reader thread: kept bytes and the total seen.
#[derive(Default)]
struct Captured {
    kept: Vec<u8>,
    total: usize,
    done: bool,
}

fn run_shell(command: &str, cwd: &Path, timeout: Duration, cap: usize) -> Result<String, String> {
    use std::os::unix::process::CommandExt as _;

    let (reader, writer) = std::io::pipe().map_err(|e| format!("cannot create a pipe: {e}"))?;
    let writer2 = writer
        .try_clone()
        .map_err(|e| format!("cannot create a pipe: {e}"))?;
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(command)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(writer)
        .stderr(writer2)
        .process_group(0);
    let mut child = cmd.spawn().map_err(|e| format!("cannot start sh: {e}"))?;
    // The builder holds the write ends; dropping it lets the reader see end-of-file once the
    // command's processes are gone.
    drop(cmd);
    let pgid = child.id() as libc::pid_t;
    let captured = Arc::new(Mutex::new(Captured::default()));
    let sink = captured.clone();
    std::thread::spawn(move || read_capped(reader, cap, &sink));

    let deadline = Instant::now() + timeout;
    let status: Option<ExitStatus> = loop {
        match child.try_wait() {
            Ok(Some(s)) => break Some(s),
            Ok(None) if Instant::now() >= deadline => {
                kill_group(pgid);
                let _ = child.wait();
                break None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => {
                kill_group(pgid);
                let _ = child.wait();
                return Err(format!("waiting for the command: {e}"));
            }
        }
    };
    // Background processes may still hold the pipe: give them a moment, then end them.
    if !wait_done(&captured, PIPE_GRACE) {
        kill_group(pgid);
        wait_done(&captured, PIPE_GRACE);
    }
    let output = {
        let c = captured.lock().unwrap_or_else(|p| p.into_inner());
        let mut text = String::from_utf8_lossy(&c.kept).into_owned();
        if c.total > c.kept.len() {
            text.push_str(&format!(
                "\n… [output truncated: {} of {} bytes shown]",
                c.kept.len(),
                c.total
            ));
        }
        text
    };
    let Some(status) = status else {
        return Err(format!(
            "timed out after {}s{}",
            timeout.as_secs(),
            excerpt(&output)
        ));
    };
    match status.code() {
        Some(0) => Ok(output),
        Some(1) if is_search_or_compare(command) => Ok(output),
        Some(code) => Err(format!("exit code {code}{}", excerpt(&output))),
        None => {
            use std::os::unix::process::ExitStatusExt as _;
            let sig = status.signal().unwrap_or(0);
            Err(format!("killed by signal {sig}{}", excerpt(&output)))
        }
    }
}

/// Reads everything from `reader`, keeping the first `cap` bytes; reading on past the cap keeps
/// the command from blocking on a full pipe.
fn read_capped(mut reader: std::io::PipeReader, cap: usize, sink: &Mutex<Captured>) {
    let mut buf = [0u8; 8192];
    loop {
        let n = match reader.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let mut c = sink.lock().unwrap_or_else(|p| p.into_inner());
        let room = cap.saturating_sub(c.kept.len());
        c.kept.extend_from_slice(&buf[..n.min(room)]);
        c.total += n;
    }
    sink.lock().unwrap_or_else(|p| p.into_inner()).done = true;
}

fn wait_done(captured: &Mutex<Captured>, grace: Duration) -> bool {
    let until = Instant::now() + grace;
    loop {
        if captured.lock().unwrap_or_else(|p| p.into_inner()).done {
            return true;
        }
        if Instant::now() >= until {
            return false;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn kill_group(pgid: libc::pid_t) {
    if pgid > 0 {
        // SAFETY: kill(2) with a negative pid signals the process group the child leads; it
        // touches no memory of this process.
        unsafe {
            libc::kill(-pgid, libc::SIGKILL);
        }
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
    session: &Session,
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

/// Dispatch options for `session`'s hooks ([`Session::dispatch_options`]): WASM hooks run with
/// their plugin's grant under the session's policy, accesses the rules would ask about being
/// refused (nobody can answer).
pub fn dispatch_options(
    session: &Arc<Session>,
) -> Result<DispatchOptions, crate::session::SessionError> {
    session.dispatch_options()
}

/// What the `InstructionsLoaded` hooks did for one file.
#[derive(Debug, Clone, serde::Serialize)]
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
    fn shell_output_status_cap_and_timeout() {
        let dir = std::env::temp_dir();
        let out = run_shell("echo out; echo err >&2", &dir, INJECTION_TIMEOUT, 1000);
        assert_eq!(out.as_deref().map(str::trim), Ok("out\nerr"));
        let e = run_shell("echo bad; exit 3", &dir, INJECTION_TIMEOUT, 1000);
        assert_eq!(e, Err("exit code 3: bad".to_string()));
        assert!(run_shell("printf 'a\\nb' | grep zzz", &dir, INJECTION_TIMEOUT, 10).is_ok());
        let big = run_shell("yes x | head -c 5000", &dir, INJECTION_TIMEOUT, 100);
        let big = big.unwrap_or_default();
        assert!(big.starts_with("x\nx\n"), "{big}");
        assert!(
            big.contains("[output truncated: 100 of 5000 bytes shown]"),
            "{big}"
        );
        let t0 = Instant::now();
        let slow = run_shell("sleep 30", &dir, Duration::from_millis(200), 100);
        assert!(slow.is_err_and(|e| e.starts_with("timed out")));
        assert!(t0.elapsed() < Duration::from_secs(10));
    }

    #[test]
    fn session_ids_look_like_uuid_v4() {
        let id = new_session_id();
        assert_eq!(id.len(), 36);
        assert_eq!(id.as_bytes()[14], b'4');
        assert_ne!(id, new_session_id());
    }
}
