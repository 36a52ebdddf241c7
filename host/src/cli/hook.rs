//! `warden hook <EventName>`: the bridge Claude Code calls as a command hook.
//!
//! Reads one hook input on stdin, runs every hook configured for the event (settings files
//! and enabled plugins), and prints the merged result as Claude Code hook JSON with the
//! matching exit code. With `--wasm-only` only WASM handlers run: registered in Claude Code as
//! `warden hook --wasm-only <Event>`, it gives Claude Code sandboxed hooks while Claude Code
//! keeps running its own command hooks itself.

use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use warden::session::{LoadProblemKind, Session};
use warden_hooks::{Event, Outcome, dispatch, render_stdout, to_cc_output};

use super::SessionArgs;

/// Arguments.
#[derive(clap::Args)]
#[command(after_help = "Examples:
  echo '{\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"ls\"},\"cwd\":\".\"}' \\
    | warden hook PreToolUse
  warden hook --wasm-only PreToolUse < event.json     only the WASM hooks (from inside Claude Code)
  warden hook SessionStart --verbose < event.json     with configuration warnings")]
pub struct Args {
    /// The event, e.g. `PreToolUse`.
    event: String,
    #[command(flatten)]
    session: SessionArgs,
    /// Run only WASM handlers (for use from inside Claude Code).
    #[arg(long)]
    wasm_only: bool,
    /// Print configuration warnings on stderr.
    #[arg(long)]
    verbose: bool,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let event: Event = args.event.parse().map_err(|e| anyhow::anyhow!("{e}"))?;
    match respond(event, &args) {
        Ok(code) => Ok(code),
        // Claude Code reads any exit but 0 and 2 as a failed hook and lets the call proceed
        // (unless the hook is declared `onFailure: "block"`), so a guard that cannot answer,
        // whatever the reason (empty, malformed or too deeply nested input, a session that
        // cannot be set up), blocks with exit 2 and says why.
        Err(e) if is_guard(event) => {
            eprintln!(
                "warden hook {}: cannot answer, so the call is blocked: {e:#}",
                event.as_str()
            );
            Ok(ExitCode::from(2))
        }
        Err(e) => Err(e),
    }
}

/// The events whose answer decides whether a tool call runs: they fail closed.
fn is_guard(event: Event) -> bool {
    matches!(event, Event::PreToolUse | Event::PermissionRequest)
}

/// Reads the input, answers it and prints the answer; the exit code to end with.
fn respond(event: Event, args: &Args) -> anyhow::Result<ExitCode> {
    let mut bytes = Vec::new();
    std::io::stdin()
        .read_to_end(&mut bytes)
        .context("reading the hook input from stdin")?;
    let text = std::str::from_utf8(&bytes).context("the hook input is not UTF-8")?;
    let input = parse_input(text)?;
    // One event: a current-thread runtime starts no worker threads, and WASM hooks are
    // CPU-bound anyway; command hooks still run concurrently as child processes.
    let project_dir = std::env::var_os("CLAUDE_PROJECT_DIR").map(PathBuf::from);
    let answer = super::block_on(answer(
        event,
        &input,
        &args.session,
        Bridge {
            wasm_only: args.wasm_only,
            verbose: args.verbose,
            project_dir,
            components: None,
        },
    ))??;
    if !answer.stdout.is_empty() {
        println!("{}", answer.stdout);
    }
    for line in &answer.stderr {
        eprintln!("{line}");
    }
    Ok(ExitCode::from(answer.code.clamp(0, 255) as u8))
}

/// A hook input: a JSON object (nested at most as deep as `serde_json` reads, 128 levels).
pub(crate) fn parse_input(text: &str) -> anyhow::Result<serde_json::Value> {
    if text.trim().is_empty() {
        anyhow::bail!(
            "the hook input is empty; a Claude Code hook input (a JSON object) is expected"
        );
    }
    match serde_json::from_str(text) {
        Ok(v @ serde_json::Value::Object(_)) => Ok(v),
        Ok(_) => anyhow::bail!("the hook input must be a JSON object (a Claude Code hook input)"),
        Err(e) => anyhow::bail!("the hook input is not valid JSON: {e}"),
    }
}

/// What a command hook would print and exit with for one event.
#[derive(Debug, Default)]
pub(crate) struct Answer {
    /// Claude Code hook JSON (empty: nothing to say).
    pub stdout: String,
    /// Lines for stderr: warnings, and for exit 2 the reason.
    pub stderr: Vec<String>,
    /// 0, 2 (blocking) or another code.
    pub code: i32,
}

impl Answer {
    fn blocked(event: Event, problem: String) -> Self {
        Answer {
            stdout: String::new(),
            stderr: vec![format!("warden hook {}: {problem}", event.as_str())],
            code: 2,
        }
    }
}

/// How an event is answered.
#[derive(Debug, Clone, Default)]
pub(crate) struct Bridge {
    /// Run only WASM handlers.
    pub wasm_only: bool,
    /// Report configuration warnings.
    pub verbose: bool,
    /// `CLAUDE_PROJECT_DIR` as Claude Code set it for a command hook (default: the session's
    /// directory).
    pub project_dir: Option<PathBuf>,
    /// Components kept across events by a long-lived process.
    pub components: Option<Arc<warden::runtime::ComponentCache>>,
}

/// Runs the hooks configured for `event` in the session the input's `cwd` names (read afresh
/// for every event: settings and installed plugins may have changed since the last one) and
/// answers as the bridge command hook does. Used by `warden hook` and by `warden serve`.
pub(crate) async fn answer(
    event: Event,
    input: &serde_json::Value,
    session_args: &SessionArgs,
    bridge: Bridge,
) -> anyhow::Result<Answer> {
    let Bridge {
        wasm_only,
        verbose,
        project_dir,
        components,
    } = bridge;
    let input_cwd = input
        .get("cwd")
        .and_then(|c| c.as_str())
        .filter(|c| !c.is_empty())
        .map(PathBuf::from);
    let mut opts = match session_args.options(input_cwd)? {
        Ok(o) => o,
        Err(e) => anyhow::bail!("{}", e.0),
    };
    opts.components = components;
    let guard = is_guard(event);
    let session = Arc::new(Session::load(&opts));
    if guard && let Some(problem) = guard_problem(&session, &opts, wasm_only) {
        // A guard that cannot be set up blocks the call: exit 2 is Claude Code's "blocking
        // error", and the reason reaches the model and the user.
        return Ok(Answer::blocked(event, problem));
    }
    let config = session.hook_config();
    let mut out = Answer::default();
    for p in session.load_problems() {
        // A plugin directory named on the command line that cannot be loaded is always worth
        // saying (on stderr, which Claude Code keeps out of the model's context for exit 0);
        // the rest only with --verbose, as it repeats on every event.
        if verbose || p.kind == LoadProblemKind::PluginDirNotLoaded {
            out.stderr.push(format!("warning: {p}"));
        }
    }
    if verbose {
        for w in &config.warnings {
            out.stderr.push(format!("warning: {w}"));
        }
        for h in &session.settings.skipped_hooks {
            out.stderr.push(format!("note: {h}"));
        }
    }
    let mut dopts = session.dispatch_options()?;
    if let Some(p) = project_dir {
        dopts.project_dir = p;
    }
    dopts.wasm_only = wasm_only;
    let result = dispatch(event, input, config, &dopts).await;
    if guard && let Some(problem) = result.failed_wasm_guard() {
        return Ok(Answer::blocked(event, problem));
    }
    if verbose {
        // What the sandbox refused a hook, and the grant that would allow it.
        for h in &result.handlers {
            let message = match &h.result.outcome {
                Outcome::NonBlockingError { message } => message,
                Outcome::Blocking { reason, .. } => reason,
                _ => continue,
            };
            out.stderr.extend(
                message
                    .lines()
                    .filter(|l| l.starts_with("warden: "))
                    .map(|l| format!("note: {}: {}", h.label, l.trim_start_matches("warden: "))),
            );
        }
    }
    let (stdout, code, stderr) = to_cc_output(&result.merged, event);
    let rendered = render_stdout(&stdout);
    if !rendered.is_empty() && rendered != "{}" {
        out.stdout = rendered;
    }
    out.stderr.extend(stderr);
    out.code = code;
    Ok(out)
}

/// Why the guards of this session cannot be trusted to run: any load problem (a guard may live
/// in the settings file or plugin that did not load), or, for the bridge (`--wasm-only`), a
/// Warden home with no WASM plugin enabled (so the bridge would guard nothing, most likely
/// because the hook process sees another `WARDEN_HOME` than the user's shell).
fn guard_problem(
    session: &Session,
    opts: &warden::session::SessionOptions,
    bridge: bool,
) -> Option<String> {
    let (settings, plugins): (Vec<_>, Vec<_>) =
        session.load_problems().iter().partition(|p| match p.kind {
            LoadProblemKind::SettingsUnreadable => true,
            LoadProblemKind::InstalledPluginsUnreadable
            | LoadProblemKind::PluginNotLoaded
            | LoadProblemKind::PluginDirNotLoaded => false,
        });
    if !plugins.is_empty() {
        return Some(format!(
            "cannot load Warden's configuration, so the call is blocked: {}",
            plugins
                .iter()
                .map(|p| p.message.as_str())
                .collect::<Vec<_>>()
                .join("; ")
        ));
    }
    if let Some(p) = settings.first() {
        return Some(format!(
            "cannot read a settings file, so the call is blocked: {}",
            p.message
        ));
    }
    let wasm_plugins = session.plugins.iter().any(|p| p.plugin.warden.is_some());
    if bridge && !wasm_plugins && opts.plugin_dirs.is_empty() {
        // The hook process's environment is Claude Code's, not the user's shell: say which
        // variable chose the home, so a mismatch is visible.
        let from = match std::env::var_os(warden_config::HOME_ENV).filter(|v| !v.is_empty()) {
            Some(_) => "from $WARDEN_HOME".to_string(),
            None => format!(
                "~/.warden, as this hook process sees HOME ({}); WARDEN_HOME is not set",
                warden_vocab::home_dir()
                    .map(|h| h.display().to_string())
                    .unwrap_or_default()
            ),
        };
        return Some(format!(
            "the Warden home {} ({from}) has no WASM plugin enabled, so no guard can run and the call is blocked. \
             Install a guard (`warden plugin install <plugin>`), set WARDEN_HOME to the home you installed into \
             in the environment Claude Code runs hooks with, or remove the warden-bridge plugin",
            session.home.root().display()
        ));
    }
    None
}
