//! `warden check`: what a session in DIR would decide for one tool call.
//!
//! Loads settings as a session in DIR would (plus `--settings` files), runs the PreToolUse
//! hooks (unless `--no-hooks`), then the permission rules with the hooks' verdict, and prints
//! `{"decision", "reason", "rule", "source"}`. Exit 0 whatever the decision; exit 2 only for
//! unusable input.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use serde_json::{Value, json};
use warden::runtime::{RuntimeConfig, UnrestrictedPolicy};
use warden::session::{Session, SessionOptions, WasmRunner};
use warden_hooks::{DispatchOptions, Event, dispatch};
use warden_permissions::{Decision, HookVerdict, Mode};

/// Arguments.
#[derive(clap::Args)]
pub struct Args {
    /// Tool name, e.g. `Bash`, `Read`, `mcp__github__create_issue`.
    #[arg(long)]
    tool: String,
    /// Tool input as a JSON object, e.g. `{"command":"git push"}`.
    #[arg(long)]
    input: String,
    /// The session's directory (default: current directory).
    #[arg(long)]
    cwd: Option<PathBuf>,
    /// Permission mode: default, acceptEdits, plan, dontAsk, bypassPermissions.
    #[arg(long)]
    mode: Option<String>,
    /// Extra settings file or inline JSON, above project and user settings (repeatable).
    #[arg(long = "settings")]
    settings: Vec<String>,
    /// Load a plugin directory for this check only (repeatable).
    #[arg(long = "plugin-dir")]
    plugin_dirs: Vec<PathBuf>,
    /// Skip PreToolUse hooks; rules only.
    #[arg(long)]
    no_hooks: bool,
    /// Print JSON (the default output is one line of text).
    #[arg(long)]
    json: bool,
}

fn unusable(msg: impl std::fmt::Display) -> anyhow::Result<ExitCode> {
    eprintln!("warden check: {msg}");
    Ok(ExitCode::from(2))
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let input: Value = match serde_json::from_str(&args.input) {
        Ok(v @ Value::Object(_)) => v,
        Ok(_) => return unusable("--input must be a JSON object"),
        Err(e) => return unusable(format_args!("--input is not valid JSON: {e}")),
    };
    let cwd = match &args.cwd {
        Some(c) if c.is_dir() => c.canonicalize()?,
        Some(c) => return unusable(format_args!("--cwd {} is not a directory", c.display())),
        None => std::env::current_dir()?,
    };
    let mode = match args.mode.as_deref().map(|m| (m, Mode::parse(m))) {
        Some((m, None)) => {
            return unusable(format_args!(
                "unknown mode `{m}`; use default, acceptEdits, plan, dontAsk or bypassPermissions"
            ));
        }
        Some((_, mode)) => mode,
        None => None,
    };
    let home = warden_config::Home::from_env()?;
    let mut opts = SessionOptions::new(&cwd, home.clone());
    opts.cli_settings = args.settings.clone();
    opts.plugin_dirs = super::plugin_dirs(&args.plugin_dirs);
    let session = Session::load(&opts);
    let perms = match session.permissions(mode, &[]) {
        Ok(p) => p,
        Err(e) => return unusable(e),
    };
    let mut warnings: Vec<String> = session.warnings.clone();
    warnings.extend(perms.warnings().iter().map(|w| w.to_string()));

    let mut hook_decision = None;
    let mut hook_reason = None;
    let mut tool_input = input.clone();
    if !args.no_hooks {
        let config = session.hook_config();
        warnings.extend(config.warnings.iter().map(|w| w.to_string()));
        let rt_config = RuntimeConfig {
            cache_dir: Some(home.cache_dir()),
            pooling: false,
            ..RuntimeConfig::default()
        };
        let runner = Arc::new(WasmRunner::new(
            &session,
            rt_config,
            Arc::new(UnrestrictedPolicy),
        ));
        let event_input = json!({
            "session_id": "00000000-0000-4000-8000-000000000000",
            "transcript_path": "",
            "cwd": cwd.display().to_string(),
            "permission_mode": perms.mode().as_str(),
            "hook_event_name": "PreToolUse",
            "tool_name": args.tool,
            "tool_input": input,
            "tool_use_id": "toolu_warden_check",
        });
        let mut dopts = DispatchOptions::new(&cwd).with_wasm_runner(runner);
        dopts.cwd = cwd.clone();
        let result =
            super::block_on_multi(dispatch(Event::PreToolUse, &event_input, &config, &dopts))?;
        let verdict = result.merged.permission_verdict();
        hook_reason = verdict.reason.clone();
        hook_decision = verdict.decision;
        // Rules are evaluated against the rewritten input, as Claude Code does.
        if let Some(updated) = verdict.updated_input {
            tool_input = updated;
        }
    }

    let decision = perms.decide(&args.tool, &tool_input, hook_decision);
    let (reason, rule, source) = match (hook_decision, decision.decision) {
        (Some(HookVerdict::Decided(Decision::Deny)), Decision::Deny) if decision.rule.is_none() => {
            (
                hook_reason.unwrap_or_else(|| decision.reason.clone()),
                None,
                Some("PreToolUse hook".to_string()),
            )
        }
        _ => (
            decision.reason.clone(),
            decision.rule.clone(),
            decision.source.clone(),
        ),
    };
    let verdict = decision.decision.as_str();
    if args.json {
        let out = json!({ "decision": verdict, "reason": reason, "rule": rule, "source": source, "warnings": warnings });
        println!("{out}");
    } else {
        for w in &warnings {
            eprintln!("warning: {w}");
        }
        match (&rule, &source) {
            (Some(r), Some(s)) => println!("{verdict}: {reason} (rule {r} in {s})"),
            (None, Some(s)) => println!("{verdict}: {reason} ({s})"),
            _ => println!("{verdict}: {reason}"),
        }
    }
    Ok(ExitCode::SUCCESS)
}
