//! `warden check`: what a session in DIR would decide for one tool call.
//!
//! Runs the session's tool-call pipeline up to the decision ([`Session::decide_tool`]): the
//! input is checked against the tool's schema, the PreToolUse hooks run (unless
//! `--no-hooks`), then the permission rules and mode. Prints
//! `{"decision", "reason", "rule", "source", "trace", "warnings"}`. Nothing is asked and
//! nothing runs. Exit 0 whatever the decision; exit 2 for unusable input (not JSON, an unknown
//! tool, an input the tool's schema rejects).

use std::process::ExitCode;
use std::sync::Arc;

use serde_json::{Value, json};
use warden::session::{Session, ToolOutcome, ToolStatus};

use super::SessionArgs;

/// Arguments.
#[derive(clap::Args)]
pub struct Args {
    /// Tool name, e.g. `Bash`, `Read`, `mcp__github__create_issue`.
    #[arg(long)]
    tool: String,
    /// Tool input as a JSON object, e.g. `{"command":"git push"}`.
    #[arg(long)]
    input: String,
    #[command(flatten)]
    session: SessionArgs,
    /// Skip PreToolUse hooks; rules only.
    #[arg(long)]
    no_hooks: bool,
    /// Also print every step: each hook and rule consulted, its source, its answer, and why
    /// the final decision won.
    #[arg(long)]
    explain: bool,
    /// Print JSON (the default output is one line of text).
    #[arg(long)]
    json: bool,
    /// Print every configuration warning (by default only their number; `warden context`
    /// lists them).
    #[arg(short, long)]
    verbose: bool,
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
    let mut opts = match args.session.options(None)? {
        Ok(o) => o,
        Err(e) => return unusable(e.0),
    };
    opts.no_hooks = args.no_hooks;
    let session = Arc::new(Session::load(&opts));
    let mut warnings: Vec<String> = session
        .load_problems()
        .iter()
        .map(|p| p.message.clone())
        .collect();
    match session.rules() {
        Ok(r) => warnings.extend(r.warnings().iter().map(|w| w.to_string())),
        Err(e) => return unusable(e),
    }
    if !args.no_hooks {
        warnings.extend(session.hook_config().warnings.iter().map(|w| w.to_string()));
    }
    let outcome = match super::block_on_multi(session.decide_tool(&args.tool, input))? {
        Ok(o) => o,
        Err(e) => return unusable(e),
    };
    if let ToolStatus::InvalidInput { message } = &outcome.status {
        return unusable(message);
    }
    if args.json {
        let mut out = json!({
            "decision": outcome.decision,
            "reason": outcome.reason,
            "rule": outcome.rule,
            "source": outcome.source,
            "warnings": warnings,
        });
        if let Some(o) = out.as_object_mut()
            && args.explain
        {
            o.insert("trace".into(), serde_json::to_value(&outcome.trace)?);
        }
        println!("{out}");
    } else {
        super::print_config_warnings(&warnings, args.verbose);
        if args.explain {
            print!("{}", explain(&outcome));
        }
        let verdict = outcome.decision;
        let reason = &outcome.reason;
        match (&outcome.rule, &outcome.source) {
            (Some(r), Some(s)) => println!("{verdict}: {reason} (rule {r} in {s})"),
            (None, Some(s)) => println!("{verdict}: {reason} ({s})"),
            _ => println!("{verdict}: {reason}"),
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// One line per step, then why the final decision won.
fn explain(o: &ToolOutcome) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    for t in &o.trace {
        let _ = write!(
            s,
            "  {:<12} {:<10} {}",
            format!("{:?}", t.step),
            t.decision,
            t.by
        );
        if let Some(src) = &t.source {
            let _ = write!(s, "  [{src}]");
        }
        if let Some(d) = &t.detail {
            let _ = write!(s, "  {}", d.lines().next().unwrap_or(""));
        }
        let _ = writeln!(s, "  ({} µs)", t.micros);
    }
    let _ = writeln!(
        s,
        "  → {}: deny beats ask beats allow; a hook's allow never overrides a deny or ask rule, a hook's deny wins over every rule",
        o.decision
    );
    s
}
