//! `warden run`: one agent conversation in a project, with a scripted model (`--script`) or a
//! real one (`-p` with `ANTHROPIC_API_KEY`, or an OpenAI-compatible server).
//!
//! As `claude -p`, it prints only the model's final answer (`--output-format text`), one
//! result object (`json`), or one JSON object per line as the conversation goes (`stream-json`:
//! `system` init, `assistant` and `user` messages, the `result`). `--verbose` prints the
//! transcript for people instead of the bare answer: tool calls with the decision and where it
//! came from, results, hooks, Stop feedback, tokens and cost; with `json` it prints every line
//! `stream-json` would, as one array. `--json` prints Warden's own events, one per line.
//! Exit status as Claude Code's: 0 when the turn completed, 1 when it ended in error (the
//! result's `is_error`), 2 for unusable arguments or settings.
//!
//! An `ask` is first put to the PermissionRequest hooks; then, on a terminal and with the
//! verbose transcript, to the user (allow once / always / deny); anywhere else it is a denial.

use std::io::{IsTerminal as _, Write as _};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde_json::{Value, json};

use anyhow::Context as _;
use warden::agent::ask::TerminalAsker;
use warden::agent::model::{AnthropicDriver, ModelDriver, OpenAiDriver, ScriptedDriver};
use warden::agent::{Conversation, ConversationOptions, LoopEvent, Observer, TurnEnd, transcript};
use warden::session::{Asker, DenyAsker, Session, ToolStatus};

use super::SessionArgs;

/// Arguments.
#[derive(clap::Args)]
#[command(after_help = "Examples:
  warden run --script demo.yaml              a scripted model, no network
  warden run --script demo.yaml --verbose    the transcript: tool calls, decisions, hooks
  warden run -p \"fix the failing test\"       the Anthropic API (ANTHROPIC_API_KEY)
  warden run -p \"hi\" --output-format json    one result object, as claude -p prints it
  warden run -p \"hi\" --provider openai       a local OpenAI-compatible server (OPENAI_BASE_URL)
  warden run -p \"hi\" --dry-run               print the request the model would get
  warden run -c -p \"and then?\"              go on with the last conversation here
  warden run -r SESSION -p \"/compact\"       compact that conversation now

Exit status: 0 the turn completed, 1 it ended in error, 2 unusable arguments or settings.")]
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
    /// Run the main conversation as the agent NAME (as the `agent` setting, which it
    /// overrides): its prompt, tools and model. Plugin agents are named `plugin:agent`.
    #[arg(long, value_name = "NAME")]
    agent: Option<String>,
    /// Most model requests for the prompt.
    #[arg(long, value_name = "N", default_value_t = 100)]
    max_turns: u32,
    /// Where to write the transcript (JSONL).
    #[arg(long, value_name = "FILE")]
    transcript: Option<PathBuf>,
    /// What to print, as `claude -p`: `text` (the final answer), `json` (one result
    /// object) or `stream-json` (one JSON object per line as the conversation goes).
    #[arg(long, value_name = "FORMAT", value_enum, default_value_t = OutputFormat::Text)]
    output_format: OutputFormat,
    /// With `text`, the transcript for people instead of the bare answer; with `json`, every
    /// `stream-json` line as one array.
    #[arg(long)]
    verbose: bool,
    /// Warden's own events, one JSON object per line (overrides `--output-format`).
    #[arg(long)]
    json: bool,
    /// Print the request the model would receive (system prompt, memory, skills, tools) and
    /// run nothing.
    #[arg(long)]
    dry_run: bool,
    /// Go on with the conversation SESSION (its id), read back from its transcript.
    #[arg(
        short = 'r',
        long,
        value_name = "SESSION",
        conflicts_with = "continue_"
    )]
    resume: Option<String>,
    /// Go on with the most recent conversation in this directory.
    #[arg(short = 'c', long = "continue")]
    continue_: bool,
    /// The model's effort level hooks are told (`low`, `medium`, `high`, `xhigh`, `max`).
    #[arg(long, value_name = "LEVEL")]
    effort: Option<String>,
    /// Fire the `Setup` hooks (trigger `init`) before the session starts.
    #[arg(long, conflicts_with = "maintenance")]
    init: bool,
    /// Fire the `Setup` hooks (trigger `init`) and exit.
    #[arg(long, conflicts_with_all = ["maintenance", "prompt", "script"])]
    init_only: bool,
    /// Fire the `Setup` hooks (trigger `maintenance`) before the session starts.
    #[arg(long)]
    maintenance: bool,
    /// Permission rules allowed for this run, as Claude Code's flag: separated by commas
    /// or spaces outside parentheses (`"Bash(git log *),Read"`); repeatable.
    #[arg(long = "allowedTools", alias = "allowed-tools", value_name = "RULES")]
    allowed_tools: Vec<String>,
}

/// The rules of `--allowedTools` values: split at commas and whitespace outside parentheses.
fn split_rules(values: &[String]) -> Vec<String> {
    let mut rules = Vec::new();
    for v in values {
        let (mut depth, mut current) = (0usize, String::new());
        for c in v.chars() {
            match c {
                '(' => depth += 1,
                ')' => depth = depth.saturating_sub(1),
                _ => {}
            }
            if depth == 0 && (c == ',' || c.is_whitespace()) {
                if !current.is_empty() {
                    rules.push(std::mem::take(&mut current));
                }
            } else {
                current.push(c);
            }
        }
        if !current.is_empty() {
            rules.push(current);
        }
    }
    rules
}

/// `--output-format`.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum OutputFormat {
    Text,
    Json,
    StreamJson,
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
        // A dry run sends nothing, so it needs no key: a placeholder stands in for it.
        "anthropic" if args.dry_run => (
            Arc::new(AnthropicDriver::from_env_with(|var| match var {
                "ANTHROPIC_API_KEY" => Some("unused-by-a-dry-run".into()),
                _ => std::env::var(var).ok(),
            })?),
            None,
        ),
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

/// The conversation `--resume` or `--continue` names, read back, with its session id.
fn saved(
    args: &Args,
    opts: &warden::session::SessionOptions,
) -> anyhow::Result<Option<(String, transcript::Saved)>> {
    let dir = Conversation::transcript_dir(opts.home.root(), &opts.cwd);
    let path = match (&args.resume, args.continue_) {
        (Some(id), _) => {
            let valid = !id.is_empty()
                && id
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
            anyhow::ensure!(valid, "--resume {id:?}: not a session id");
            dir.join(format!("{id}.jsonl"))
        }
        (None, true) => transcript::latest(&dir)?,
        (None, false) => return Ok(None),
    };
    let saved = transcript::load(&path)?;
    let id = saved
        .session_id
        .clone()
        .or_else(|| {
            path.file_stem()
                .and_then(|s| s.to_str())
                .map(str::to_string)
        })
        .with_context(|| format!("{}: no session id", path.display()))?;
    Ok(Some((id, saved)))
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let mut opts = match args.session.options(None)? {
        Ok(o) => o,
        Err(u) => {
            eprintln!("warden: {}", u.0);
            return Ok(ExitCode::from(2));
        }
    };
    let saved = match saved(&args, &opts) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("warden: {e:#}");
            return Ok(ExitCode::from(1));
        }
    };
    if let Some((id, _)) = &saved {
        opts.session_id = Some(id.clone());
    }
    opts.allowed_tools.extend(split_rules(&args.allowed_tools));
    let (driver, script_prompt) = driver(&args)?;
    let prompt = args.prompt.clone().or(script_prompt);
    let prompt = match prompt {
        Some(p) => p,
        None if args.init_only => String::new(),
        None => {
            eprintln!("warden: no prompt: pass -p PROMPT (or give the script a `prompt`)");
            return Ok(ExitCode::from(2));
        }
    };
    let session = Arc::new(Session::load(&opts));
    let readable = !args.json && args.verbose && args.output_format == OutputFormat::Text;
    let interactive = readable && TerminalAsker::available();
    let asker: Arc<dyn Asker> = if interactive {
        Arc::new(TerminalAsker::new(&session.cwd))
    } else {
        Arc::new(DenyAsker)
    };
    let defaults = ConversationOptions::default();
    let conv_opts = ConversationOptions {
        model: args.model.clone(),
        max_turns: args.max_turns,
        transcript_path: args.transcript.clone(),
        effort: args.effort.clone().or(defaults.effort.clone()),
        setup: if args.init {
            Some("init".into())
        } else if args.maintenance {
            Some("maintenance".into())
        } else {
            None
        },
        ..defaults
    };
    let claude_out = (!args.json && !readable).then(|| {
        let mut out = ClaudeOutput::new(args.output_format, args.verbose, &session);
        // Claude Code's own commands answer as local commands, not model turns.
        out.local_command = warden::agent::slash_command(&prompt)
            .filter(|(name, _)| *name == "compact")
            .map(|(name, _)| name.to_string());
        Arc::new(out)
    });
    let observer: Arc<dyn Observer> = match &claude_out {
        Some(c) => c.clone(),
        None if args.json => Arc::new(JsonLines),
        None => Arc::new(Readable::new()),
    };
    let mut conversation =
        Conversation::new(session, driver, asker, conv_opts).with_observer(observer);
    match &args.agent {
        Some(name) => {
            if let Err(e) = conversation.set_main_agent(name) {
                eprintln!("warden: --agent {name}: {e}");
                return Ok(ExitCode::from(2));
            }
        }
        None => {
            for w in conversation.apply_agent_setting() {
                eprintln!("warden: {w}");
            }
        }
    }
    if let Some((_, saved)) = saved {
        conversation.resume(saved);
    }
    super::block_on_multi(async move {
        if args.init_only {
            conversation.setup_only("init").await;
            return Ok(ExitCode::SUCCESS);
        }
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
        if args.verbose {
            show_status_line(&conversation);
        }
        conversation.end("other").await;
        if let Some(c) = &claude_out {
            c.finish(&report);
        }
        Ok(match report.end {
            TurnEnd::Completed { .. } => ExitCode::SUCCESS,
            _ => ExitCode::from(1),
        })
    })?
}

/// With `--verbose`: the `statusLine` setting's command, run confined with the session's
/// state on its standard input (see `warden::status_line`), its output printed on stderr.
fn show_status_line(conversation: &Conversation) {
    let session = conversation.session();
    let (lines, problems) = warden::status_line::configured(session);
    for p in problems {
        eprintln!("warden: {p}");
    }
    let Some(line) = lines.iter().find(|l| l.key == "statusLine") else {
        return;
    };
    let mut input = warden::status_line::StatusInput::new(
        session,
        conversation.model(),
        &conversation.transcript_path().display().to_string(),
    );
    let (usage, cost) = conversation.usage();
    input.cost.total_cost_usd = cost.unwrap_or(0.0);
    input.context_window.total_input_tokens = usage.input_tokens;
    input.context_window.total_output_tokens = usage.output_tokens;
    match warden::status_line::render(session, line, &input) {
        Ok(text) => {
            for l in text.lines() {
                eprintln!("{l}");
            }
        }
        Err(e) => eprintln!("warden: status line: {e}"),
    }
}

/// `--output-format`: Claude Code's shapes for `claude -p`.
struct ClaudeOutput {
    format: OutputFormat,
    verbose: bool,
    started: Instant,
    session_id: String,
    cwd: String,
    permission_mode: String,
    /// The Claude Code command the prompt ran (`compact`), when it ran one.
    local_command: Option<String>,
    state: Mutex<ClaudeState>,
}

#[derive(Default)]
struct ClaudeState {
    model: String,
    /// With `--output-format json --verbose`: every line, printed as one array at the end.
    lines: Vec<Value>,
    /// Calls refused before they ran (`permission_denials`).
    denials: Vec<Value>,
}

impl ClaudeOutput {
    fn new(format: OutputFormat, verbose: bool, session: &Session) -> Self {
        ClaudeOutput {
            format,
            verbose,
            started: Instant::now(),
            session_id: session.session_id.clone(),
            cwd: session.cwd.display().to_string(),
            permission_mode: session
                .rules()
                .map(|r| r.mode().as_str().to_string())
                .unwrap_or_else(|_| "default".into()),
            local_command: None,
            state: Mutex::new(ClaudeState::default()),
        }
    }

    /// Prints a `stream-json` line now, or keeps it for `json --verbose`.
    fn line(&self, mut line: Value) {
        if let Some(o) = line.as_object_mut() {
            o.insert("session_id".into(), json!(self.session_id));
            o.insert("uuid".into(), json!(warden::instructions::new_session_id()));
        }
        match self.format {
            OutputFormat::StreamJson => {
                let mut out = std::io::stdout().lock();
                let _ = writeln!(out, "{line}");
                let _ = out.flush();
            }
            OutputFormat::Json if self.verbose => {
                if let Ok(mut s) = self.state.lock() {
                    s.lines.push(line);
                }
            }
            _ => {}
        }
    }

    /// The `result` object of a finished turn.
    fn result(&self, report: &warden::agent::TurnReport) -> Value {
        let (subtype, is_error, text) = match &report.end {
            TurnEnd::Completed { text } => ("success", false, Some(self.answer(text).to_string())),
            TurnEnd::MaxTurns { turns } => (
                "error_max_turns",
                true,
                Some(format!("Error: Reached max turns ({turns})")),
            ),
            TurnEnd::StopFailure { message, .. } => {
                ("success", true, Some(format!("API Error: {message}")))
            }
            TurnEnd::PromptBlocked { reason } | TurnEnd::HookStopped { reason } => {
                ("error_during_execution", true, Some(reason.clone()))
            }
        };
        let denials = self
            .state
            .lock()
            .map(|s| s.denials.clone())
            .unwrap_or_default();
        let mut r = json!({
            "type": "result",
            "subtype": subtype,
            "is_error": is_error,
            "duration_ms": u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX),
            "duration_api_ms": report.api_ms,
            "num_turns": report.num_turns,
            "result": text.unwrap_or_default(),
            "stop_reason": matches!(report.end, TurnEnd::Completed { .. }).then_some("end_turn"),
            "session_id": self.session_id,
            "total_cost_usd": report.cost_usd.unwrap_or(0.0),
            "usage": {
                "input_tokens": report.usage.input_tokens,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
                "output_tokens": report.usage.output_tokens,
            },
            "permission_denials": denials,
        });
        if let (Some(o), TurnEnd::StopFailure { error, .. }) = (r.as_object_mut(), &report.end) {
            o.insert("error".into(), json!(error));
        }
        if let (Some(o), Some(command)) = (r.as_object_mut(), &self.local_command) {
            o.insert("stop_reason".into(), Value::Null);
            o.insert("local_command".into(), json!(command));
        }
        r
    }

    /// The answer `-p` prints: the model's text, or a local command's stdout (its stderr,
    /// `/compact` in a conversation without messages, goes only to the stream).
    fn answer<'a>(&self, text: &'a str) -> &'a str {
        if self.local_command.is_some() && text == warden::agent::NO_MESSAGES_TO_COMPACT {
            ""
        } else {
            text
        }
    }

    /// The lines Claude Code streams for a local command's answer: `/compact`'s notice as a
    /// replayed user message, or its refusal as a synthetic assistant message.
    fn local_command_lines(&self, report: &warden::agent::TurnReport) {
        let (Some(command), TurnEnd::Completed { text }) = (&self.local_command, &report.end)
        else {
            return;
        };
        if text.is_empty() {
            self.line(json!({
                "type": "user",
                "message": {"role": "user",
                    "content": "<local-command-stdout>Compacted </local-command-stdout>"},
                "parent_tool_use_id": null,
                "isReplay": true,
            }));
        } else {
            self.line(json!({
                "type": "assistant",
                "message": {"type": "message", "role": "assistant", "model": "<synthetic>",
                    "content": [{"type": "text", "text": text}]},
                "parent_tool_use_id": null,
                "local_command_source": if self.answer(text).is_empty() {
                    format!("<local-command-stderr>{text}</local-command-stderr>")
                } else {
                    format!("<local-command-stdout>{text}</local-command-stdout>")
                },
                "local_command_run": {"command": command, "args": ""},
            }));
        }
    }

    /// Prints what the format prints at the end.
    fn finish(&self, report: &warden::agent::TurnReport) {
        self.local_command_lines(report);
        let result = self.result(report);
        let mut out = std::io::stdout().lock();
        match self.format {
            OutputFormat::Text => match &report.end {
                TurnEnd::Completed { text } => {
                    let _ = writeln!(out, "{}", self.answer(text).trim_end());
                }
                _ => {
                    let _ = out.flush();
                    eprintln!("{}", result["result"].as_str().unwrap_or("Error"));
                }
            },
            OutputFormat::Json if self.verbose => {
                let mut lines = self
                    .state
                    .lock()
                    .map(|mut s| std::mem::take(&mut s.lines))
                    .unwrap_or_default();
                let mut last = result;
                if let Some(o) = last.as_object_mut() {
                    o.insert("uuid".into(), json!(warden::instructions::new_session_id()));
                }
                lines.push(last);
                let _ = writeln!(out, "{}", Value::Array(lines));
            }
            OutputFormat::Json => {
                let mut r = result;
                if let Some(o) = r.as_object_mut() {
                    o.insert("uuid".into(), json!(warden::instructions::new_session_id()));
                }
                let _ = writeln!(out, "{r}");
            }
            OutputFormat::StreamJson => {
                drop(out);
                self.line(result);
            }
        }
    }
}

impl Observer for ClaudeOutput {
    fn event(&self, event: &LoopEvent) {
        match event {
            LoopEvent::SessionStarted {
                model,
                tools,
                output_style,
                ..
            } => {
                if let Ok(mut s) = self.state.lock() {
                    s.model.clone_from(model);
                }
                self.line(json!({
                    "type": "system",
                    "subtype": "init",
                    "cwd": self.cwd,
                    "tools": tools,
                    "mcp_servers": [],
                    "model": model,
                    "permissionMode": self.permission_mode,
                    "apiKeySource": "none",
                    "output_style": output_style,
                }));
            }
            LoopEvent::ToolCall {
                outcome,
                agent: None,
            } if matches!(outcome.status, ToolStatus::Denied { .. }) => {
                if let Ok(mut s) = self.state.lock() {
                    s.denials.push(json!({
                        "tool_name": outcome.tool,
                        "tool_use_id": outcome.tool_use_id,
                        "tool_input": outcome.input,
                    }));
                }
            }
            LoopEvent::Compacted { trigger, .. } => self.line(json!({
                "type": "system",
                "subtype": "compact_boundary",
                "compact_metadata": {"trigger": trigger},
            })),
            LoopEvent::Warning { message } => eprintln!("warning: {message}"),
            _ => {}
        }
    }

    fn message(&self, message: &warden::agent::model::Message) {
        use warden::agent::model::{Block, Role};
        let line = match message.role {
            Role::Assistant => {
                let model = self
                    .state
                    .lock()
                    .map(|s| s.model.clone())
                    .unwrap_or_default();
                json!({
                    "type": "assistant",
                    "message": {
                        "type": "message",
                        "role": "assistant",
                        "model": model,
                        "content": message.content,
                    },
                    "parent_tool_use_id": null,
                })
            }
            // The prompt is not echoed; tool results are, with their `is_error` spelled out.
            Role::User => {
                let results: Vec<Value> = message
                    .content
                    .iter()
                    .filter_map(|b| match b {
                        Block::ToolResult {
                            tool_use_id,
                            content,
                            is_error,
                        } => Some(json!({
                            "tool_use_id": tool_use_id,
                            "type": "tool_result",
                            "content": content,
                            "is_error": is_error,
                        })),
                        _ => None,
                    })
                    .collect();
                if results.is_empty() {
                    return;
                }
                json!({
                    "type": "user",
                    "message": {"role": "user", "content": results},
                    "parent_tool_use_id": null,
                })
            }
        };
        self.line(line);
    }
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
                ..
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
                    ToolStatus::Ok { content, .. } => {
                        format!("⎿ {}", first_line(content, 90))
                    }
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
            LoopEvent::Compacted {
                trigger,
                summary_chars,
            } => writeln!(
                out,
                "\n✻ conversation compacted ({trigger}): a summary of {summary_chars} characters"
            ),
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
        TurnEnd::PromptBlocked { reason } => {
            format!("prompt blocked: {}", first_line(reason, 90))
        }
        TurnEnd::HookStopped { reason } => {
            format!("stopped by a hook: {}", first_line(reason, 90))
        }
        TurnEnd::StopFailure { error, message } => {
            format!("model error ({error}): {}", first_line(message, 90))
        }
        TurnEnd::MaxTurns { turns } => format!("stopped after {turns} model turns"),
    }
}
