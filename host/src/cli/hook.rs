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
use warden::runtime::{RuntimeConfig, UnrestrictedPolicy};
use warden::session::{Session, SessionOptions, WasmRunner};
use warden_hooks::{DispatchOptions, Event, dispatch, render_stdout, to_cc_output};

/// Arguments.
#[derive(clap::Args)]
pub struct Args {
    /// The event, e.g. `PreToolUse`.
    event: String,
    /// The session's directory (default: the input's `cwd`, else the current directory).
    #[arg(long)]
    cwd: Option<PathBuf>,
    /// Run only WASM handlers (for use from inside Claude Code).
    #[arg(long)]
    wasm_only: bool,
    /// Extra settings file or inline JSON (repeatable).
    #[arg(long = "settings")]
    settings: Vec<String>,
    /// Load a plugin directory for this call only (repeatable).
    #[arg(long = "plugin-dir")]
    plugin_dirs: Vec<PathBuf>,
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
    let cwd = match (&args.cwd, input.get("cwd").and_then(|c| c.as_str())) {
        (Some(c), _) => c.clone(),
        (None, Some(c)) if !c.is_empty() => PathBuf::from(c),
        _ => std::env::current_dir()?,
    };
    let home = warden_config::Home::from_env()?;
    let mut opts = SessionOptions::new(&cwd, home.clone());
    opts.cli_settings = args.settings.clone();
    opts.plugin_dirs = super::plugin_dirs(&args.plugin_dirs);
    let session = Session::load(&opts);
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
    // One event per process: the on-demand allocator starts faster than reserving a pool.
    let rt_config = RuntimeConfig {
        cache_dir: Some(home.cache_dir()),
        pooling: false,
        max_instances: 64,
        ..RuntimeConfig::default()
    };
    let runner = Arc::new(WasmRunner::new(
        &session,
        rt_config,
        Arc::new(UnrestrictedPolicy),
    ));
    let project_dir = std::env::var_os("CLAUDE_PROJECT_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| cwd.clone());
    let mut dopts = DispatchOptions::new(project_dir).with_wasm_runner(runner);
    dopts.cwd = cwd;
    dopts.wasm_only = args.wasm_only;
    // One event: a current-thread runtime starts no worker threads, and WASM hooks are
    // CPU-bound anyway; command hooks still run concurrently as child processes.
    let result = super::block_on(dispatch(event, &input, &config, &dopts))?;
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
