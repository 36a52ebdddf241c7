//! `warden hook-wasm <component.wasm> <EventName>`: one WASM hook component on one event.
//!
//! Refused before anything runs: an unknown event (as `warden hook` refuses it), a missing
//! file, and a file that is not a WebAssembly component.

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
#[command(after_help = "Examples:
  echo '{\"tool_name\":\"Read\",\"tool_input\":{\"file_path\":\".env\"}}' \\
    | warden hook-wasm guard.wasm PreToolUse
  warden hook-wasm audit.wasm PostToolUse --grant '{\"env\":[\"HOME\"]}' < event.json
  warden hook-wasm slow.wasm Stop --timeout 5 --memory-mib 32 < event.json")]
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
    check_component_file(&args.component)?;
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
    // What the guest logged and wrote to stderr goes to stderr, before the answer's own
    // message, so a hook author sees it while trying the hook; stdout stays the answer.
    for record in &call.logs {
        eprintln!("[{}] {}", record.level, record.message);
    }
    for captured in [&call.stdout, &call.stderr] {
        let text = captured.text.trim_end();
        if !text.is_empty() {
            eprintln!("{text}");
        }
        if captured.truncated {
            eprintln!("(guest output truncated)");
        }
    }
    let out = call.result.to_cc_output(event.as_str());
    println!("{}", out.json);
    if let Some(msg) = &out.stderr {
        eprintln!("{msg}");
    }
    Ok(ExitCode::from(out.exit_code as u8))
}

/// Refuses, with one plain sentence, a path that is not a file or not a WebAssembly component
/// (rather than the loader's own error, which shows the file's first bytes).
fn check_component_file(path: &std::path::Path) -> anyhow::Result<()> {
    let shown = path.display();
    let mut head = [0u8; 8];
    let read = std::fs::File::open(path).and_then(|mut f| {
        use std::io::Read as _;
        let mut n = 0;
        while n < head.len() {
            match f.read(&mut head[n..])? {
                0 => break,
                k => n += k,
            }
        }
        Ok(n)
    });
    let n = match read {
        Ok(n) => n,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            anyhow::bail!("{shown}: no such file")
        }
        Err(_) if path.is_dir() => anyhow::bail!("{shown}: is a directory, not a component file"),
        Err(e) => anyhow::bail!("{shown}: cannot be read ({})", io_reason(&e)),
    };
    if n < 8 || &head[..4] != b"\0asm" {
        anyhow::bail!("not a WebAssembly component: {shown}");
    }
    // Bytes 4..8: a core module's version is 1; a component's layer is 1 (bytes 6..8).
    if head[6..8] != [1, 0] {
        anyhow::bail!(
            "not a WebAssembly component: {shown} (a core WebAssembly module; hooks are components of the warden:plugin hook world)"
        );
    }
    Ok(())
}

/// An I/O error's reason without the `(os error N)` tail.
fn io_reason(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}
