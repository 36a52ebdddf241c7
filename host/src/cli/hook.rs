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
use warden::session::Session;
use warden_hooks::{Event, dispatch, render_stdout, to_cc_output};

use super::SessionArgs;

/// Arguments.
#[derive(clap::Args)]
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
    let mut text = String::new();
    std::io::stdin()
        .read_to_string(&mut text)
        .context("reading the hook input from stdin")?;
    let input: serde_json::Value = match serde_json::from_str(&text) {
        Ok(v @ serde_json::Value::Object(_)) => v,
        Ok(_) => anyhow::bail!("stdin must be a JSON object (a Claude Code hook input)"),
        Err(e) => anyhow::bail!("stdin is not valid JSON: {e}"),
    };
    let input_cwd = input
        .get("cwd")
        .and_then(|c| c.as_str())
        .filter(|c| !c.is_empty())
        .map(PathBuf::from);
    let opts = match args.session.options(input_cwd)? {
        Ok(o) => o,
        Err(e) => anyhow::bail!("{}", e.0),
    };
    let guard = matches!(event, Event::PreToolUse | Event::PermissionRequest);
    let session = Arc::new(Session::load(&opts));
    if guard && let Some(problem) = guard_problem(&session, &opts, args.wasm_only) {
        // A guard that cannot be set up blocks the call: exit 2 is Claude Code's "blocking
        // error", and the reason reaches the model and the user.
        eprintln!("warden hook {}: {problem}", event.as_str());
        return Ok(ExitCode::from(2));
    }
    let config = session.hook_config();
    for w in &session.warnings {
        // A plugin directory named on the command line that cannot be loaded is always worth
        // saying (on stderr, which Claude Code keeps out of the model's context for exit 0);
        // the rest only with --verbose, as it repeats on every event.
        if args.verbose || w.starts_with("--plugin-dir ") {
            eprintln!("warning: {w}");
        }
    }
    if args.verbose {
        for w in &config.warnings {
            eprintln!("warning: {w}");
        }
    }
    let mut dopts = session.dispatch_options()?;
    if let Some(p) = std::env::var_os("CLAUDE_PROJECT_DIR") {
        dopts.project_dir = PathBuf::from(p);
    }
    dopts.wasm_only = args.wasm_only;
    // One event: a current-thread runtime starts no worker threads, and WASM hooks are
    // CPU-bound anyway; command hooks still run concurrently as child processes.
    let result = super::block_on(dispatch(event, &input, config, &dopts))?;
    if guard && let Some(problem) = failed_guard(&result) {
        eprintln!("warden hook {}: {problem}", event.as_str());
        return Ok(ExitCode::from(2));
    }
    let (stdout, code, stderr) = to_cc_output(&result.merged, event);
    let rendered = render_stdout(&stdout);
    if !rendered.is_empty() && rendered != "{}" {
        println!("{rendered}");
    }
    if let Some(e) = stderr {
        eprintln!("{e}");
    }
    Ok(ExitCode::from(code.clamp(0, 255) as u8))
}

/// Why the guards of this session cannot be trusted to run: settings or installed plugins that
/// could not be read, or, for the bridge (`--wasm-only`), a Warden home with no WASM plugin
/// enabled (so the bridge would guard
/// nothing, most likely because the hook process sees another `WARDEN_HOME` than the user's
/// shell).
fn guard_problem(
    session: &Session,
    opts: &warden::session::SessionOptions,
    bridge: bool,
) -> Option<String> {
    let broken: Vec<&String> = session
        .warnings
        .iter()
        .filter(|w| {
            w.starts_with("plugin ")
                || w.starts_with("installed plugins")
                || w.starts_with("--plugin-dir")
        })
        .collect();
    if !broken.is_empty() {
        return Some(format!(
            "cannot load Warden's configuration, so the call is blocked: {}",
            broken
                .iter()
                .map(|w| w.as_str())
                .collect::<Vec<_>>()
                .join("; ")
        ));
    }
    if let Some(e) = session.settings.errors.first() {
        return Some(format!(
            "cannot read a settings file, so the call is blocked: {}",
            e.message
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
                std::env::var("HOME").unwrap_or_default()
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

/// A WASM guard that failed (could not load, trapped, timed out), whatever its `onFailure`,
/// fails closed.
fn failed_guard(result: &warden_hooks::DispatchResult) -> Option<String> {
    use warden_hooks::{HandlerType, Outcome};
    result
        .handlers
        .iter()
        .filter(|h| h.handler_type == HandlerType::Wasm)
        .find_map(|h| match &h.result.outcome {
            Outcome::NonBlockingError { message } => Some(format!(
                "the guard {} ({}) failed, so the call is blocked: {message}",
                h.label, h.source
            )),
            // `onFailure = "block"` already turned the failure into a denial; exit 2 as for
            // the other failures, so every failed guard reaches Claude Code the same way.
            Outcome::Blocking {
                reason,
                fail_closed: true,
            } => Some(format!(
                "the guard {} ({}) failed, so the call is blocked: {reason}",
                h.label, h.source
            )),
            Outcome::Cancelled => Some(format!(
                "the guard {} ({}) timed out, so the call is blocked",
                h.label, h.source
            )),
            _ => None,
        })
}
