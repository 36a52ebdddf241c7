//! `warden hook-wasm <component.wasm> <EventName>`

use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use warden::hook_result::TypedHookResult;
use warden::runtime::{DigestPin, Grant, Limits, World};
use warden::session::{Session, SessionOptions};
use warden_hooks::Event;

/// Arguments.
#[derive(clap::Args)]
pub struct Args {
    /// The hook component (`.wasm`).
    component: PathBuf,
    /// The event name, e.g. `PreToolUse`.
    event: String,
    /// Deadline in seconds (default 60, Claude Code's command-hook default).
    #[arg(long, default_value_t = 60.0)]
    timeout: f64,
    /// Memory limit in MiB.
    #[arg(long, default_value_t = 64)]
    memory_mib: usize,
    /// Grant as JSON, e.g. `{"env":["HOME"]}` (default: nothing).
    #[arg(long)]
    grant: Option<String>,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let event: Event = args.event.parse().map_err(|e| anyhow::anyhow!("{e}"))?;
    if !args.component.is_file() {
        anyhow::bail!("{}: no such component file", args.component.display());
    }
    let mut input = String::new();
    std::io::stdin()
        .read_to_string(&mut input)
        .context("reading the event JSON from stdin")?;
    let value: serde_json::Value =
        serde_json::from_str(&input).context("stdin is not valid JSON")?;
    let cwd = value
        .get("cwd")
        .and_then(|c| c.as_str())
        .map(PathBuf::from)
        .unwrap_or(std::env::current_dir().context("current directory")?);
    let grant: Grant = match &args.grant {
        Some(g) => serde_json::from_str(g).context("--grant is not a valid grant JSON object")?,
        None => Grant::default(),
    };
    if !(args.timeout > 0.0 && args.timeout.is_finite()) {
        anyhow::bail!("--timeout must be a positive number of seconds");
    }
    let limits = Limits {
        memory_bytes: args.memory_mib << 20,
        deadline: Duration::from_secs_f64(args.timeout),
        ..Limits::default()
    };
    // The component runs as a hook of a session in the event's directory would: its grant
    // first, then that session's rules.
    let session = std::sync::Arc::new(Session::load(&SessionOptions::new(
        &cwd,
        warden_config::Home::from_env()?,
    )));
    let runtime = session.runtime()?;
    // The grant is given on this command line for this very file: nothing to pin it to.
    let component =
        runtime.load_file(&args.component, World::Hook, &grant, DigestPin::Unchecked)?;
    let ctx = session.call_context(&cwd, &grant, session.guest_policy(false));
    let call =
        super::block_on(runtime.call_hook(&component, event.as_str(), &input, &limits, ctx))??;
    let out = call.result.to_cc_output(event.as_str());
    println!("{}", out.json);
    if let Some(msg) = &out.stderr {
        eprintln!("{msg}");
    }
    Ok(ExitCode::from(out.exit_code as u8))
}
