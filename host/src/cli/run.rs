//! `warden run`: one agent conversation in a project, with a scripted model (`--script`) or a
//! real one (`-p` with `ANTHROPIC_API_KEY`, or an OpenAI-compatible server).
//!
//! On a terminal the transcript is readable: tool calls with the decision and where it came
//! from, results, hooks, Stop feedback, tokens and cost. `--json` prints one JSON object per
//! event instead. An `ask` is put to the user on a terminal (allow once / always / deny);
//! anywhere else it is a denial that says nobody could be asked.

use std::io::{IsTerminal as _, Write as _};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use anyhow::Context as _;
use warden::agent::ask::TerminalAsker;
use warden::agent::model::{AnthropicDriver, ModelDriver, OpenAiDriver, ScriptedDriver};
use warden::agent::{Conversation, ConversationOptions, LoopEvent, Observer, TurnEnd};
use warden::session::{Asker, DenyAsker, Session, ToolStatus};

use super::SessionArgs;

/// Arguments.
#[derive(clap::Args)]
#[command(after_help = "Examples:
  warden run --script demo.yaml              a scripted model, no network
  warden run -p \"fix the failing test\"       the Anthropic API (ANTHROPIC_API_KEY)
  warden run -p \"hi\" --provider openai       a local OpenAI-compatible server (OPENAI_BASE_URL)
  warden run -p \"hi\" --dry-run               print the request the model would get")]
pub struct Args {
    #[command(flatten)]
    session: SessionArgs,
    /// The prompt (default: the script's `prompt`).
    #[arg(short = 'p', long = "prompt", value_name = "PROMPT")]
    prompt: Option<String>,
    /// Answer with a scripted model: a JSON or YAML file of assistant turns.
    #[arg(long, value_name = "FILE")]
    script: Option<PathBuf>,
    /// Which API: `anthropic` (default when ANTHROPIC_API_KEY is set) or `openai` (any
    /// OpenAI-compatible chat completions server, OPENAI_BASE_URL).
    #[arg(long, value_name = "API")]
    provider: Option<String>,
    /// The model (alias or full id).
    #[arg(long, value_name = "MODEL")]
    model: Option<String>,
    /// Most model requests for the prompt.
    #[arg(long, value_name = "N", default_value_t = 100)]
    max_turns: u32,
    /// Where to write the transcript (JSONL).
    #[arg(long, value_name = "FILE")]
    transcript: Option<PathBuf>,
    /// One JSON object per event on stdout.
    #[arg(long)]
    json: bool,
    /// Print the request the model would receive (system prompt, memory, skills, tools) and
    /// run nothing.
    #[arg(long)]
    dry_run: bool,
}

fn driver(args: &Args) -> anyhow::Result<(Arc<dyn ModelDriver>, Option<String>)> {
    if let Some(path) = &args.script {
        let d = ScriptedDriver::from_file(path)?;
        let prompt = d.prompt().map(str::to_string);
        return Ok((Arc::new(d), prompt));
    }
    let provider = match args.provider.as_deref() {
        Some(p) => p.to_string(),
        None if std::env::var_os("ANTHROPIC_API_KEY").is_some_and(|v| !v.is_empty()) => {
            "anthropic".into()
        }
        None if std::env::var_os("OPENAI_BASE_URL").is_some() => "openai".into(),
        None => "anthropic".into(),
    };
    Ok(match provider.as_str() {
        "anthropic" => (
            Arc::new(AnthropicDriver::from_env().context(
                "no model to talk to: set ANTHROPIC_API_KEY, or use --provider openai with \
                 OPENAI_BASE_URL, or --script FILE for a scripted model",
            )?),
            None,
        ),
        "openai" => (Arc::new(OpenAiDriver::from_env()?), None),
        other => anyhow::bail!("unknown provider `{other}`; use anthropic or openai"),
    })
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let opts = match args.session.options(None)? {
        Ok(o) => o,
        Err(u) => {
            eprintln!("warden: {}", u.0);
            return Ok(ExitCode::from(2));
        }
    };
    let (driver, script_prompt) = driver(&args)?;
    let Some(prompt) = args.prompt.clone().or(script_prompt) else {
        eprintln!("warden: no prompt: pass -p PROMPT (or give the script a `prompt`)");
        return Ok(ExitCode::from(2));
    };
    let session = Arc::new(Session::load(&opts));
    let interactive = !args.json && TerminalAsker::available();
    let asker: Arc<dyn Asker> = if interactive {
        Arc::new(TerminalAsker::new(&session.cwd))
    } else {
        Arc::new(DenyAsker)
    };
    let conv_opts = ConversationOptions {
        model: args.model.clone(),
        max_turns: args.max_turns,
        transcript_path: args.transcript.clone(),
        ..ConversationOptions::default()
    };
    let observer: Arc<dyn Observer> = if args.json {
        Arc::new(JsonLines)
    } else {
        Arc::new(Readable::new())
    };
    let mut conversation =
        Conversation::new(session, driver, asker, conv_opts).with_observer(observer);
    super::block_on_multi(async move {
        if args.dry_run {
            let request = conversation.preview(&prompt).await;
            let body = serde_json::json!({
                "model": request.model,
                "max_tokens": request.max_tokens,
                "system": request.system,
                "messages": request.messages,
                "tools": request.tools,
            });
            println!("{}", serde_json::to_string_pretty(&body)?);
            conversation.session().close().await;
            return Ok(ExitCode::SUCCESS);
        }
        let report = conversation.send(&prompt).await;
        conversation.end("other").await;
        Ok(match report.end {
            TurnEnd::Completed { .. } => ExitCode::SUCCESS,
            _ => ExitCode::from(1),
        })
    })?
}

/// `--json`: every event as one line.
struct JsonLines;

impl Observer for JsonLines {
    fn event(&self, event: &LoopEvent) {
        if let Ok(line) = serde_json::to_string(event) {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{line}");
        }
    }
}

/// The transcript for people.
struct Readable {
    streaming: Mutex<bool>,
    tty: bool,
}

impl Readable {
    fn new() -> Self {
        Readable {
            streaming: Mutex::new(false),
            tty: std::io::stdout().is_terminal(),
        }
    }

    fn end_stream(&self) -> bool {
        match self.streaming.lock() {
            Ok(mut s) => std::mem::replace(&mut *s, false),
            Err(_) => false,
        }
    }
}

/// The first line of `s` and how many more it has.
fn first_line(s: &str, max: usize) -> String {
    let mut out = super::first_line(s, max);
    let more = s.lines().filter(|l| !l.trim().is_empty()).count();
    if more > 1 {
        out.push_str(&format!(" (+{} lines)", more - 1));
    }
    out
}

fn subject(outcome: &warden::session::ToolOutcome) -> String {
    let i = &outcome.input;
    let s = [
        "command",
        "file_path",
        "pattern",
        "url",
        "skill",
        "subagent_type",
    ]
    .iter()
    .find_map(|k| i.get(*k).and_then(|v| v.as_str()))
    .map(str::to_string)
    .unwrap_or_else(|| i.to_string());
    first_line(&s, 70)
}

impl Observer for Readable {
    fn text_delta(&self, text: &str) {
        if !self.tty {
            return;
        }
        if let Ok(mut s) = self.streaming.lock() {
            *s = true;
        }
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(text.as_bytes());
        let _ = out.flush();
    }

    fn event(&self, event: &LoopEvent) {
        let streamed = self.end_stream();
        let mut out = std::io::stdout().lock();
        let indent = |agent: &Option<String>| match agent {
            Some(a) => format!("  [{a}] "),
            None => String::new(),
        };
        let _ = match event {
            LoopEvent::SessionStarted {
                session_id,
                model,
                driver,
                transcript_path,
                tools,
            } => writeln!(
                out,
                "warden · session {} · {driver} ({model}) · {} tools\n  transcript {transcript_path}",
                &session_id[..8.min(session_id.len())],
                tools.len()
            ),
            LoopEvent::Prompt { text } => writeln!(out, "\n› {}", first_line(text, 100)),
            LoopEvent::Text { text, agent } => {
                if streamed {
                    writeln!(out)
                } else {
                    writeln!(out, "\n{}{}", indent(agent), text.trim_end())
                }
            }
            LoopEvent::Hook {
                event,
                handler,
                source,
                decision,
                detail,
                micros,
                agent,
            } => writeln!(
                out,
                "{}  ⚑ {event} {handler} ({source}): {decision}{} · {micros} µs",
                indent(agent),
                detail
                    .as_deref()
                    .map(|d| format!(" — {}", first_line(d, 80)))
                    .unwrap_or_default()
            ),
            LoopEvent::ToolCall { outcome, agent } => {
                let decided = match (&outcome.rule, &outcome.source) {
                    (Some(r), Some(s)) => format!("rule `{r}` ({s})"),
                    (Some(r), None) => format!("rule `{r}`"),
                    (None, Some(s)) => s.clone(),
                    (None, None) => outcome.reason.clone(),
                };
                let asked = outcome
                    .trace
                    .iter()
                    .find(|t| t.step == warden::session::Step::Ask)
                    .map(|t| format!(", asked: {}", t.decision))
                    .unwrap_or_default();
                let micros: u64 = outcome.trace.iter().map(|t| t.micros).sum();
                let result = match &outcome.status {
                    ToolStatus::Ok { content, .. } => format!("⎿ {}", first_line(content, 90)),
                    ToolStatus::Denied { message } => {
                        format!("✗ denied: {}", first_line(message, 90))
                    }
                    ToolStatus::InvalidInput { message } => {
                        format!("✗ invalid input: {}", first_line(message, 90))
                    }
                    ToolStatus::Failed { message } => {
                        format!("✗ failed: {}", first_line(message, 90))
                    }
                    ToolStatus::Decided => "not run".into(),
                };
                writeln!(
                    out,
                    "{}● {}({})  {} by {decided}{asked} · {:.1} ms\n{}    {result}",
                    indent(agent),
                    outcome.tool,
                    subject(outcome),
                    outcome.decision.as_str(),
                    micros as f64 / 1000.0,
                    indent(agent),
                )
            }
            LoopEvent::SubagentStarted {
                agent_id,
                agent_type,
                description,
            } => writeln!(out, "  ↳ subagent {agent_type} ({agent_id}): {description}"),
            LoopEvent::SubagentStopped {
                agent_type, end, ..
            } => {
                writeln!(out, "  ↲ subagent {agent_type}: {}", end_line(end))
            }
            LoopEvent::StopBlocked { reason, agent } => writeln!(
                out,
                "{}■ Stop hook: not done yet — {} (continuing)",
                indent(agent),
                first_line(reason, 90)
            ),
            LoopEvent::TurnEnded { report } => {
                let cost = report
                    .cost_usd
                    .map(|c| format!(" · ${c:.4}"))
                    .unwrap_or_default();
                writeln!(
                    out,
                    "\n─ {} · {} tokens in, {} out{cost}",
                    end_line(&report.end),
                    report.usage.input_tokens,
                    report.usage.output_tokens
                )
            }
            LoopEvent::SessionEnded { .. } => Ok(()),
            LoopEvent::Warning { message } => {
                let _ = out.flush();
                eprintln!("warning: {message}");
                Ok(())
            }
        };
    }
}

fn end_line(end: &TurnEnd) -> String {
    match end {
        TurnEnd::Completed { .. } => "completed".into(),
        TurnEnd::PromptBlocked { reason } => format!("prompt blocked: {}", first_line(reason, 90)),
        TurnEnd::HookStopped { reason } => format!("stopped by a hook: {}", first_line(reason, 90)),
        TurnEnd::StopFailure { error, message } => {
            format!("model error ({error}): {}", first_line(message, 90))
        }
        TurnEnd::MaxTurns { turns } => format!("stopped after {turns} model turns"),
    }
}
