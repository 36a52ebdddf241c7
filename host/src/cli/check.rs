//! `warden check`: what a session in DIR would decide for one tool call.
//!
//! Runs the session's tool-call pipeline up to the decision ([`Session::decide_tool`]): the
//! input is checked against the tool's schema, the PreToolUse hooks run (unless
//! `--no-hooks`), then the permission rules and mode. Prints
//! `{"decision", "reason", "rule", "source", "why", "trace", "warnings"}`. Nothing is asked and
//! nothing runs. Exit 0 whatever the decision (with `--exit-code`: 0 allow, 2 deny, 3 ask);
//! exit 2 for unusable input (1 with `--exit-code`): not JSON, an unknown tool, an input the
//! tool's schema rejects.

use std::process::ExitCode;
use std::sync::Arc;

use serde_json::{Value, json};
use warden::session::{Session, Step, ToolOutcome, ToolStatus};

use super::SessionArgs;
use super::style;

/// Arguments.
#[derive(clap::Args)]
#[command(after_help = "Tool names:
  Warden's tools (Read, Write, Edit, Glob, Grep, Bash, and enabled plugins' tools
  `mcp__plugin_<plugin>_warden__<tool>`) have their input checked against the schema their
  component describes. Claude Code's other tools (WebFetch, Task, …) and any
  `mcp__<server>__<tool>` are decided without a schema check (no MCP server is started).
  Any other name is an error that suggests the closest known one.

Exit status:
  0  decided, whatever the decision
  2  unusable input: not JSON, an unknown tool, an input the tool's schema rejects
  With --exit-code: 0 allow, 2 deny, 3 ask, 1 unusable input.

Examples:
  warden check --tool Bash --input '{\"command\":\"git push\"}'
  warden check --tool Read --input '{\"file_path\":\".env\"}' --explain
  warden check --tool WebFetch --input '{\"url\":\"https://x.io\"}' --json
  warden check --tool Bash --input '{\"command\":\"make\"}' --exit-code --mode acceptEdits")]
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
    /// Print JSON (the default output is one line of text); it always holds the trace and
    /// why the decision won.
    #[arg(long)]
    json: bool,
    /// Exit with the decision: 0 allow, 2 deny, 3 ask (and 1 for unusable input).
    #[arg(long)]
    exit_code: bool,
    /// Print every configuration warning (by default only their number; `warden context`
    /// lists them).
    #[arg(short, long)]
    verbose: bool,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let bad = if args.exit_code { 1 } else { 2 };
    let unusable = |msg: &dyn std::fmt::Display| -> anyhow::Result<ExitCode> {
        style::eprintln!("{}: {msg}", style::error("warden check"));
        Ok(ExitCode::from(bad))
    };
    let input: Value = match serde_json::from_str(&args.input) {
        Ok(v @ Value::Object(_)) => v,
        Ok(_) => return unusable(&"--input must be a JSON object"),
        Err(e) => return unusable(&format_args!("--input is not valid JSON: {e}")),
    };
    let mut opts = match args.session.options(None)? {
        Ok(o) => o,
        Err(e) => return unusable(&e.0),
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
        Err(e) => return unusable(&e),
    }
    if !args.no_hooks {
        warnings.extend(session.hook_config().warnings.iter().map(|w| w.to_string()));
    }
    let outcome = match super::block_on_multi(session.decide_tool(&args.tool, input))? {
        Ok(o) => o,
        Err(e) => return unusable(&e),
    };
    if let ToolStatus::InvalidInput { message } = &outcome.status {
        return unusable(message);
    }
    let why = why(&outcome);
    if args.json {
        let out = json!({
            "decision": outcome.decision,
            "reason": outcome.reason,
            "rule": outcome.rule,
            "source": outcome.source,
            "why": why,
            "trace": outcome.trace,
            "warnings": warnings,
        });
        println!("{out}");
    } else {
        super::print_config_warnings(&warnings, args.verbose);
        if args.explain {
            style::println!("{}", explain(&outcome, &why));
        }
        let verdict = style::decision(outcome.decision);
        let reason = &outcome.reason;
        match (&outcome.rule, &outcome.source) {
            (Some(r), Some(s)) if hook_decided(&outcome) => {
                style::println!("{verdict}: {reason} ({s}; rule {r} agrees)")
            }
            (Some(r), Some(s)) => style::println!("{verdict}: {reason} (rule {r} in {s})"),
            (None, Some(s)) => style::println!("{verdict}: {reason} ({s})"),
            _ => style::println!("{verdict}: {reason}"),
        }
    }
    if !args.exit_code {
        return Ok(ExitCode::SUCCESS);
    }
    Ok(ExitCode::from(match outcome.decision.as_str() {
        "deny" => 2,
        "ask" => 3,
        _ => 0,
    }))
}

/// Whether a PreToolUse hook made the decision (the pipeline names it as the source).
fn hook_decided(o: &ToolOutcome) -> bool {
    o.source
        .as_deref()
        .is_some_and(|s| s.starts_with("PreToolUse hook"))
}

/// Why the final decision won, in one sentence: deny beats ask beats allow; a hook's deny
/// beats every rule, a hook's allow or ask never beats a deny rule (nor an allow an ask
/// rule); without a matching rule the mode decides.
fn why(o: &ToolOutcome) -> String {
    let decision = o.decision.as_str();
    let hooks: Vec<&str> = o
        .trace
        .iter()
        .filter(|t| t.step == Step::PreToolUse)
        .map(|t| t.decision.as_str())
        .collect();
    let mode = o
        .trace
        .iter()
        .find(|t| t.step == Step::Rules)
        .map(|t| t.by.clone())
        .unwrap_or_default();
    if o.trace
        .iter()
        .any(|t| t.step == Step::Validate && t.decision == "invalid")
    {
        return "the input does not fit the tool's schema, so nothing else was consulted".into();
    }
    if hook_decided(o) {
        return match decision {
            "deny" => "a PreToolUse hook denied the call; a hook's deny wins over every rule and mode".into(),
            "ask" => "a PreToolUse hook asked and no deny rule matched (deny beats ask)".into(),
            _ => match &o.rule {
                Some(r) => format!("a PreToolUse hook allowed the call, and the allow rule {r} agrees; no deny or ask rule matched"),
                None => "a PreToolUse hook allowed the call and no deny or ask rule matched (a hook's allow never overrides one)".into(),
            },
        };
    }
    let overruled = |hook: &str| {
        if hooks.contains(&hook) {
            format!("; a hook's {hook} does not override it")
        } else {
            String::new()
        }
    };
    match (&o.rule, decision) {
        (Some(r), "deny") => format!(
            "the deny rule {r} matched; deny beats ask and allow{}",
            overruled("allow")
        ),
        (Some(r), "ask") => format!(
            "the ask rule {r} matched and no deny rule did; ask beats allow{}",
            overruled("allow")
        ),
        (Some(r), _) => format!("the allow rule {r} matched and no deny or ask rule did"),
        (None, _) if mode.is_empty() => o.reason.clone(),
        (None, _) => format!("no rule matched, so the {mode} decides: {}", o.reason),
    }
}

/// One line per step (who answered, where it came from, its answer), then why the final
/// decision won.
fn explain(o: &ToolOutcome, why: &str) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    for t in &o.trace {
        let _ = write!(
            s,
            "  {:<12} {} {}",
            format!("{:?}", t.step),
            style::decision_padded(&t.decision, 10),
            t.by
        );
        if let Some(src) = &t.source {
            let _ = write!(s, "  {}", style::dim(format_args!("[{src}]")));
        }
        if let Some(d) = &t.detail {
            let _ = write!(s, "  {}", d.lines().next().unwrap_or(""));
        }
        let _ = writeln!(s, "  {}", style::dim(format_args!("({} µs)", t.micros)));
    }
    let _ = write!(s, "  → {}: {why}", style::decision(o.decision));
    s
}
