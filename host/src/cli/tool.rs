//! `warden tool <NAME> --input JSON`: one tool call through the session's whole pipeline:
//! schema check, PreToolUse hooks, rules and mode, asking, the tool in a fresh sandbox (rules
//! enforced again where it touches files, programs and the network), PostToolUse hooks.
//!
//! An `ask` is put to the terminal when there is one, answered yes by `--yes`, and otherwise
//! refused (nobody can be asked). Exit 0 when the tool ran and succeeded, 1 when it failed or
//! its input was invalid, 2 when it was denied.

use std::io::{BufRead, IsTerminal, Write};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use serde_json::{Value, json};
use warden::session::{
    AskAnswer, AskFuture, AskRequest, Asker, DenyAsker, Session, ToolOutcome, ToolStatus,
};

use super::SessionArgs;

/// Arguments.
#[derive(clap::Args)]
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
    #[arg(long)]
    yes: bool,
    /// Also print every step of the pipeline on stderr.
    #[arg(long)]
    explain: bool,
    /// Print the whole result as JSON.
    #[arg(long)]
    json: bool,
}

/// Asks on the terminal: `y` runs the call once, anything else refuses it.
struct TerminalAsker;

impl Asker for TerminalAsker {
    fn ask<'a>(&'a self, r: AskRequest<'a>) -> AskFuture<'a> {
        // Reading the terminal blocks; this process has nothing else to do meanwhile.
        Box::pin(std::future::ready(Self::prompt(&r)))
    }

    fn label(&self) -> &str {
        "terminal"
    }
}

impl TerminalAsker {
    fn prompt(r: &AskRequest<'_>) -> AskAnswer {
        let mut err = std::io::stderr();
        let _ = write!(
            err,
            "{} {} needs approval: {}\nRun it? [y/N] ",
            r.tool, r.input, r.reason
        );
        let _ = err.flush();
        let mut line = String::new();
        if std::io::stdin().lock().read_line(&mut line).is_err() {
            return AskAnswer::Deny;
        }
        match line.trim() {
            "y" | "Y" | "yes" => AskAnswer::AllowOnce,
            _ => AskAnswer::Deny,
        }
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
    let asker: &dyn Asker = if how.yes {
        &YesAsker
    } else if std::io::stdin().is_terminal() && std::io::stderr().is_terminal() {
        &TerminalAsker
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
    let outcome = match result {
        Ok(o) => o,
        Err(e) => {
            eprintln!("{}: {e}", how.command);
            return Ok(ExitCode::from(2));
        }
    };
    if how.explain {
        for t in &outcome.trace {
            eprintln!(
                "  {:<18} {:<10} {}{}",
                format!("{:?}", t.step),
                t.decision,
                t.by,
                t.source
                    .as_deref()
                    .map(|s| format!("  [{s}]"))
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
        eprintln!("{name} {kind}: {text}");
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
