//! `warden tool <NAME> --input JSON [--cwd DIR] [--settings FILE]...`

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use warden::capability::AskAt;
use warden::runtime::{RuntimeConfig, ToolCallOutcome};
use warden::tools::{ToolOptions, run_tool};

/// Arguments.
#[derive(clap::Args)]
pub struct Args {
    /// The built-in tool: Read, Write, Edit, Glob, Grep or Bash.
    name: String,
    /// The tool input, a JSON object (e.g. `{"file_path":"src/main.rs"}`).
    #[arg(long)]
    input: String,
    /// Session directory: granted to the tool, and where relative paths and `./` rules start
    /// (default: the current directory).
    #[arg(long)]
    cwd: Option<PathBuf>,
    /// Extra settings: a file path or inline JSON (repeatable), like Claude Code's `--settings`.
    #[arg(long)]
    settings: Vec<String>,
    /// A program the Bash tool may run beyond the default list (repeatable).
    #[arg(long = "allow-program", value_name = "NAME")]
    programs: Vec<String>,
    /// Refuse accesses the rules would ask about, instead of letting them through.
    #[arg(long)]
    strict: bool,
    /// Treat the workspace as trusted (project `allow` rules take effect).
    #[arg(long)]
    trusted: bool,
    /// Print the whole result as JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    serde_json::from_str::<serde_json::Value>(&args.input).context("--input is not valid JSON")?;
    let cwd = match args.cwd {
        Some(c) => c,
        None => std::env::current_dir().context("current directory")?,
    };
    let opts = ToolOptions {
        settings: args.settings,
        programs: args.programs,
        ask: if args.strict {
            AskAt::Deny
        } else {
            AskAt::Allow
        },
        trusted: args.trusted,
        managed_dir: managed_dir(),
        ..ToolOptions::default()
    };
    let config = RuntimeConfig {
        cache_dir: super::cache_dir(),
        pooling: false,
        max_instances: 4,
        ..RuntimeConfig::default()
    };
    // Programs and HTTP need the I/O driver, so not the time-only runtime other commands use.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let run = rt.block_on(run_tool(&args.name, &args.input, &cwd, &opts, config))?;
    for w in &run.warnings {
        eprintln!("warden: warning: {w}");
    }
    let (kind, text, code) = match &run.call.outcome {
        ToolCallOutcome::Ok { content, .. } => ("ok", content.as_str(), 0),
        ToolCallOutcome::InvalidInput(m) => ("invalid-input", m.as_str(), 1),
        ToolCallOutcome::Denied(m) => ("denied", m.as_str(), 2),
        ToolCallOutcome::Failed(m) => ("failed", m.as_str(), 1),
    };
    if args.json {
        let structured = match &run.call.outcome {
            ToolCallOutcome::Ok {
                structured: Some(s),
                ..
            } => serde_json::from_str(s).unwrap_or(serde_json::Value::Null),
            _ => serde_json::Value::Null,
        };
        println!(
            "{}",
            serde_json::json!({"outcome": kind, "content": text, "structured": structured})
        );
    } else if code == 0 {
        println!("{text}");
    } else {
        eprintln!("{} {kind}: {text}", args.name);
    }
    Ok(ExitCode::from(code))
}

/// Managed settings as Claude Code finds them: the directory the environment names, else
/// `/etc/claude-code`.
fn managed_dir() -> Option<PathBuf> {
    match std::env::var_os(warden_config::MANAGED_DIR_ENV) {
        Some(v) if v.is_empty() => None,
        Some(v) => Some(PathBuf::from(v)),
        None => Some(PathBuf::from("/etc/claude-code")),
    }
}
