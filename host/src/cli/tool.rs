//! `warden tool <NAME> --input JSON`: one tool call through the session's whole pipeline:
//! schema check, PreToolUse hooks, rules and mode, asking, the tool in a fresh sandbox (rules
//! enforced again where it touches files, programs and the network), PostToolUse hooks.
//!
//! An `ask` is put to the terminal when there is one (as `warden run` asks), answered yes by
//! `--yes`, refused by `--strict`, and otherwise refused with a message naming `--yes`
//! (nobody can be asked). Exit 0 when the tool ran and succeeded, 1 when it failed or its
//! input was invalid, 2 when it was denied.

use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use serde_json::{Value, json};
use warden::agent::ask::TerminalAsker;
use warden::session::{
    AskAnswer, AskFuture, AskRequest, Asker, DenyAsker, Session, Step, ToolOutcome, ToolStatus,
};

use super::SessionArgs;
use super::style;

/// Arguments.
#[derive(clap::Args)]
#[command(after_help = "Asking:
  A call the rules would ask about is asked on the terminal ([y] once, [a] always, which
  saves the allow rule to .claude/settings.local.json, [n] no). Without a terminal it is
  refused unless --yes approves it once; --strict refuses it even on a terminal.

Exit status: 0 the tool ran and succeeded, 1 it failed or its input was invalid, 2 it was
denied (by a hook, a rule, the answer to an ask, or inside the sandbox).

Examples:
  warden tool Read --input '{\"file_path\":\"README.md\"}'
  warden tool Bash --input '{\"command\":\"cargo test\"}' --allow-program cargo --yes
  warden tool Grep --input '{\"pattern\":\"TODO\"}' --explain --json
  warden tool Edit --input '{\"file_path\":\"a.rs\",\"old_string\":\"x\",\"new_string\":\"y\"}' --strict")]
pub struct Args {
    /// The tool: Read, Write, Edit, Glob, Grep, Bash, or a plugin's tool
    /// (`mcp__plugin_<plugin>_warden__<tool>`).
    name: String,
    /// The tool input, a JSON object (e.g. `{"file_path":"src/main.rs"}`).
    #[arg(long)]
    input: String,
    #[command(flatten)]
    session: SessionArgs,
    /// A program the Bash tool may run beyond the default list (repeatable).
    #[arg(long = "allow-program", value_name = "NAME")]
    programs: Vec<String>,
    /// Approve a call the rules would ask about, without asking (once).
    #[arg(long, conflicts_with = "strict")]
    yes: bool,
    /// Refuse every call the rules would ask about, even on a terminal.
    #[arg(long)]
    strict: bool,
    /// Also print every step of the pipeline on stderr.
    #[arg(long)]
    explain: bool,
    /// Print the whole result as JSON.
    #[arg(long)]
    json: bool,
}

/// `--strict`: every ask refused, without asking.
struct StrictAsker;

impl Asker for StrictAsker {
    fn ask<'a>(&'a self, _: AskRequest<'a>) -> AskFuture<'a> {
        Box::pin(std::future::ready(AskAnswer::Deny))
    }

    fn label(&self) -> &str {
        "--strict"
    }
}

/// `--yes`: every ask answered "allow once".
struct YesAsker;

impl Asker for YesAsker {
    fn ask<'a>(&'a self, _: AskRequest<'a>) -> AskFuture<'a> {
        Box::pin(std::future::ready(AskAnswer::AllowOnce))
    }

    fn label(&self) -> &str {
        "--yes"
    }
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let input: Value = serde_json::from_str(&args.input).context("--input is not valid JSON")?;
    let mut opts = match args.session.options(None)? {
        Ok(o) => o,
        Err(e) => {
            eprintln!("warden tool: {}", e.0);
            return Ok(ExitCode::from(2));
        }
    };
    opts.programs = args.programs.clone();
    let session = Arc::new(Session::load(&opts));
    call_and_report(
        &session,
        &args.name,
        input,
        &Report {
            command: "warden tool",
            yes: args.yes,
            strict: args.strict,
            explain: args.explain,
            json: args.json,
        },
    )
}

/// How `warden tool` and `warden mcp call` run and print one call.
pub(crate) struct Report {
    /// For error messages.
    pub command: &'static str,
    /// `--yes`.
    pub yes: bool,
    /// `--strict`.
    pub strict: bool,
    /// `--explain`.
    pub explain: bool,
    /// `--json`.
    pub json: bool,
}

/// Runs `name` through the session's pipeline and prints the result (exit codes as in the
/// module docs). MCP servers the call started are shut down before returning.
pub(crate) fn call_and_report(
    session: &Arc<Session>,
    name: &str,
    input: Value,
    how: &Report,
) -> anyhow::Result<ExitCode> {
    let terminal;
    let asker: &dyn Asker = if how.yes {
        &YesAsker
    } else if how.strict {
        &StrictAsker
    } else if !how.json && TerminalAsker::available() {
        terminal = TerminalAsker::new(&session.cwd);
        &terminal
    } else {
        &DenyAsker
    };
    // Programs and HTTP need the I/O driver.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let result = rt.block_on(async {
        let r = session.call_tool(name, input, asker).await;
        session.close().await;
        r
    });
    let mut outcome = match result {
        Ok(o) => o,
        Err(e) => {
            style::eprintln!("{}: {e}", style::error(how.command));
            return Ok(ExitCode::from(2));
        }
    };
    // An ask nobody could answer: say how to approve it.
    let unanswered = outcome
        .trace
        .iter()
        .any(|t| t.step == Step::Ask && t.by == DenyAsker.label());
    if let (true, ToolStatus::Denied { message }) = (unanswered, &mut outcome.status) {
        message.push_str(" (no terminal to ask on: pass --yes to approve it once)");
    }
    if how.explain {
        for t in &outcome.trace {
            style::eprintln!(
                "  {:<18} {} {}{}",
                format!("{:?}", t.step),
                style::decision_padded(&t.decision, 10),
                t.by,
                t.source
                    .as_deref()
                    .map(|s| format!("  {}", style::dim(format_args!("[{s}]"))))
                    .unwrap_or_default()
            );
        }
    }
    let (kind, text, code) = summary(&outcome);
    if how.json {
        let structured = match &outcome.status {
            ToolStatus::Ok {
                structured: Some(s),
                ..
            } => s.clone(),
            _ => Value::Null,
        };
        println!(
            "{}",
            json!({
                "outcome": kind,
                "content": text,
                "structured": structured,
                "decision": outcome.decision,
                "reason": outcome.reason,
                "rule": outcome.rule,
                "source": outcome.source,
                "additionalContext": outcome.additional_context,
                "trace": outcome.trace,
            })
        );
    } else if code == 0 {
        println!("{text}");
    } else {
        let kind = if code == 2 {
            style::decision(kind)
        } else {
            style::error(kind)
        };
        style::eprintln!("{name} {kind}: {text}");
    }
    Ok(ExitCode::from(code))
}

fn summary(o: &ToolOutcome) -> (&'static str, &str, u8) {
    match &o.status {
        ToolStatus::Ok { content, .. } => ("ok", content.as_str(), 0),
        ToolStatus::InvalidInput { message } => ("invalid-input", message.as_str(), 1),
        ToolStatus::Denied { message } => ("denied", message.as_str(), 2),
        ToolStatus::Failed { message } => ("failed", message.as_str(), 1),
        ToolStatus::Decided => ("decided", o.reason.as_str(), 0),
    }
}
