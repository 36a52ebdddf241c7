//! The core loop: a conversation between a model and a [`Session`], with every hook event of
//! Claude Code's lifecycle, every tool call through the session's pipeline, subagents, skills
//! and slash commands.
//!
//! ```text
//! start():  load memory, rules, skills, agents ─▶ InstructionsLoaded ─▶ (Setup) ─▶ SessionStart
//!           (source `startup`, or `resume` for a conversation read back from its transcript)
//! send(p):  /command? ─▶ UserPromptExpansion ─▶ UserPromptSubmit
//!           loop {
//!             model turn ─(API error)─▶ StopFailure, end
//!             tool calls, concurrently, each through Session::call_tool_with
//!               (validate ─▶ PreToolUse ─▶ rules ─▶ ask ─▶ sandbox ─▶ PostToolUse)
//!               Agent ─▶ SubagentStart ─▶ nested loop ─▶ SubagentStop
//!               Skill ─▶ rendered skill as the tool result
//!             PostToolBatch
//!             context over the limit (or `/compact`) ─▶ PreCompact ─▶ summary replaces the
//!               messages ─▶ memory re-read (InstructionsLoaded `compact`) ─▶ PostCompact
//!               ─▶ SessionStart (source `compact`)
//!             no tool calls ─▶ Stop (a block feeds its reason back and goes on, up to the cap)
//!           }
//! end():    SessionEnd, MCP servers closed
//! ```
//!
//! The model is behind [`ModelDriver`] (scripted, Anthropic Messages API, OpenAI-compatible);
//! whoever answers a rule's `ask` is behind [`Asker`]; what happens is reported to an
//! [`Observer`] as [`LoopEvent`]s and written to a JSONL transcript at `transcript_path`.
//!
//! Embedding, in a few lines:
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use warden::agent::{Conversation, ConversationOptions};
//! use warden::session::{DenyAsker, Session, SessionOptions};
//! use warden_model::scripted::ScriptedDriver;
//!
//! let home = warden_config::Home::from_env()?;
//! let session = Arc::new(Session::load(&SessionOptions::new("/path/to/project", home)));
//! let driver = Arc::new(ScriptedDriver::from_file("script.yaml".as_ref())?);
//! let mut conversation =
//!     Conversation::new(session, driver, Arc::new(DenyAsker), ConversationOptions::default());
//! conversation.start().await;
//! let turn = conversation.send("Tidy the README").await;
//! println!("{:?}", turn.end);
//! conversation.end("other").await;
//! # Ok(()) }
//! ```
//!
//! Choices where Claude Code leaves room, written down:
//! - A slash command fires `UserPromptExpansion` before `UserPromptSubmit`; the latter sees
//!   the prompt as typed.
//! - A subagent's `permissionMode`, `mcpServers` and `hooks` frontmatter are not applied; it
//!   runs under the session's rules and hooks, with `agent_id`/`agent_type` in every hook
//!   input, and its tools filtered by `tools` / `disallowedTools`.
//! - A model answer cut at `max_tokens` ends the turn like any other answer (Stop fires).
//! - The main conversation run as an agent ([`Conversation::set_main_agent`]: `--agent`, the
//!   `agent` setting, a plugin's `agent` setting) takes the agent's body as its system prompt
//!   in place of the default one, as Claude Code does (its prompt replaces the default one the
//!   way `--system-prompt` does); the environment block follows it, and memory (CLAUDE.md,
//!   rules) and the skill listing still come with the first prompt. Its `tools` /
//!   `disallowedTools` filter the tools offered, and its `model` (unless `inherit`) is asked
//!   unless the model was chosen explicitly (`--model`). Hook inputs carry its `agent_type`.
//!   As for subagents, its `permissionMode`, `mcpServers`, `hooks`, `skills`, `memory` and
//!   `initialPrompt` are not applied: an agent a repository's settings select can narrow what
//!   the session does, never loosen the user's permissions.
//! - An output style ([`crate::output_style`]) adds its instructions to the main
//!   conversation's system prompt, after the agent's prompt when it runs as one; subagents
//!   never get it, as in Claude Code.

pub mod ask;
pub mod hook_model;
pub mod prompt;
pub mod transcript;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use serde::Serialize;
use serde_json::{Map, Value, json};
use warden_hooks::{DispatchResult, Event, Outcome, dispatch};
use warden_instructions::Context;
use warden_model::{
    Block, Caller, Message, ModelDriver, ModelError, ModelRequest, Role, StreamSink, ToolSpec,
    Usage,
};

use crate::runtime::ToolCallOutcome;
use crate::session::{
    Asker, CallMeta, LocalTool, LocalToolFuture, Session, ToolOutcome, ToolStatus,
};
use transcript::Transcript;

pub use warden_model as model;

/// How a conversation runs.
#[derive(Debug, Clone)]
pub struct ConversationOptions {
    /// The model (an alias such as `sonnet`, or a full id; default: the driver's).
    pub model: Option<String>,
    /// Most model requests for one prompt before the turn is ended.
    pub max_turns: u32,
    /// Most tokens per model answer.
    pub max_tokens: u32,
    /// Where the transcript is written (default:
    /// `$WARDEN_HOME/projects/<project path with - for />/<session id>.jsonl`).
    pub transcript_path: Option<PathBuf>,
    /// How deep subagents may nest (`CLAUDE_CODE_MAX_SUBAGENT_SPAWN_DEPTH`, default 3): at the
    /// limit the `Agent` tool is taken away.
    pub max_subagent_depth: u32,
    /// Consecutive Stop blocks before the stop is let through (default:
    /// `CLAUDE_CODE_STOP_HOOK_BLOCK_CAP`, else 8; 0 disables the cap).
    pub stop_block_cap: Option<u32>,
    /// Tokens of context (the last request's input and answer) past which the main
    /// conversation is compacted before its next request (default:
    /// `WARDEN_AUTO_COMPACT_TOKENS`, else 160,000; `None` or 0: never).
    pub auto_compact_tokens: Option<u64>,
    /// The model's effort level, sent to hooks of tool events and Stop as `effort: {level}`
    /// (default: `CLAUDE_CODE_EFFORT_LEVEL`, else `medium`, Claude Code's default; `None`:
    /// the field is left out, as for a model without effort levels).
    pub effort: Option<String>,
    /// `Setup`'s trigger (`init` for `--init`, `maintenance` for `--maintenance`): when set,
    /// `Setup` fires before `SessionStart`, and its context joins the first prompt.
    pub setup: Option<String>,
}

impl Default for ConversationOptions {
    fn default() -> Self {
        let depth = std::env::var("CLAUDE_CODE_MAX_SUBAGENT_SPAWN_DEPTH")
            .ok()
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(3);
        ConversationOptions {
            model: None,
            max_turns: 100,
            max_tokens: 8192,
            transcript_path: None,
            max_subagent_depth: depth,
            stop_block_cap: None,
            auto_compact_tokens: Some(
                std::env::var("WARDEN_AUTO_COMPACT_TOKENS")
                    .ok()
                    .and_then(|v| v.trim().parse().ok())
                    .unwrap_or(160_000),
            ),
            effort: match std::env::var("CLAUDE_CODE_EFFORT_LEVEL") {
                Ok(v) if v.trim().is_empty() || v.trim() == "none" => None,
                Ok(v) => Some(v.trim().to_string()),
                Err(_) => Some("medium".into()),
            },
            setup: None,
        }
    }
}

/// How a prompt's turn ended.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "end", rename_all = "camelCase")]
pub enum TurnEnd {
    /// The model finished and the Stop hooks let it stop.
    Completed {
        /// Its last message's text.
        text: String,
    },
    /// A `UserPromptSubmit` or `UserPromptExpansion` hook (or an unknown or failing command)
    /// refused the prompt; the model never saw it.
    PromptBlocked {
        /// Why.
        reason: String,
    },
    /// A hook stopped the conversation (`continue: false`, a `PostToolBatch` block).
    HookStopped {
        /// The hook's reason.
        reason: String,
    },
    /// The model could not answer (the `StopFailure` hooks ran).
    StopFailure {
        /// The error kind as hooks see it (`rate_limit`, `overloaded`, …).
        error: String,
        /// The API's message.
        message: String,
    },
    /// The turn used `max_turns` model requests.
    MaxTurns {
        /// How many.
        turns: u32,
    },
}

/// What one `send` produced.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnReport {
    /// How it ended.
    #[serde(flatten)]
    pub end: TurnEnd,
    /// Tokens used by this turn (subagents and model hooks included).
    pub usage: Usage,
    /// Its price, when the driver knows prices.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// Model requests of the main conversation in this turn (Claude Code's `num_turns`).
    pub num_turns: u32,
    /// Milliseconds spent waiting on the model, subagents included (`duration_api_ms`).
    pub api_ms: u64,
}

/// Something that happened, for a live view (the CLI's transcript, `--json` lines, the demo's
/// table).
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum LoopEvent {
    /// The conversation started.
    #[serde(rename_all = "camelCase")]
    SessionStarted {
        /// `session_id`.
        session_id: String,
        /// The model.
        model: String,
        /// The output style's name (`default` when none).
        output_style: String,
        /// The driver (`scripted`, `anthropic`, `openai`).
        driver: String,
        /// The transcript.
        transcript_path: String,
        /// The tools offered.
        tools: Vec<String>,
    },
    /// A hook handler of a lifecycle event ran (tool events' handlers are in `ToolCall`'s
    /// trace).
    #[serde(rename_all = "camelCase")]
    Hook {
        /// The event.
        event: String,
        /// The handler.
        handler: String,
        /// Its plugin or settings file.
        source: String,
        /// What it said (`none`, `block`, `error`, …).
        decision: String,
        /// Its reason or message.
        #[serde(skip_serializing_if = "Option::is_none")]
        detail: Option<String>,
        /// Wall time.
        micros: u64,
        /// The subagent it ran for.
        #[serde(skip_serializing_if = "Option::is_none")]
        agent: Option<String>,
    },
    /// A user prompt, as the model gets it.
    Prompt {
        /// The prompt.
        text: String,
    },
    /// The model said something.
    Text {
        /// What.
        text: String,
        /// The subagent saying it.
        #[serde(skip_serializing_if = "Option::is_none")]
        agent: Option<String>,
    },
    /// A tool call went through the pipeline.
    ToolCall {
        /// Everything the pipeline produced.
        outcome: Box<ToolOutcome>,
        /// The subagent that called it.
        #[serde(skip_serializing_if = "Option::is_none")]
        agent: Option<String>,
    },
    /// A subagent started.
    #[serde(rename_all = "camelCase")]
    SubagentStarted {
        /// `agent_id`.
        agent_id: String,
        /// `agent_type`.
        agent_type: String,
        /// The task's description.
        description: String,
    },
    /// A subagent ended.
    #[serde(rename_all = "camelCase")]
    SubagentStopped {
        /// `agent_id`.
        agent_id: String,
        /// `agent_type`.
        agent_type: String,
        /// How it ended.
        end: TurnEnd,
    },
    /// A Stop (or SubagentStop) hook blocked the stop: its reason goes back to the model.
    StopBlocked {
        /// The reason fed back.
        reason: String,
        /// The subagent, for SubagentStop.
        #[serde(skip_serializing_if = "Option::is_none")]
        agent: Option<String>,
    },
    /// A prompt's turn ended.
    TurnEnded {
        /// The report.
        report: TurnReport,
    },
    /// The session ended.
    #[serde(rename_all = "camelCase")]
    SessionEnded {
        /// `SessionEnd`'s reason.
        reason: String,
        /// Tokens used by the whole session.
        usage: Usage,
        /// Its price, when known.
        #[serde(skip_serializing_if = "Option::is_none")]
        cost_usd: Option<f64>,
    },
    /// The conversation was compacted: a summary replaced its messages.
    #[serde(rename_all = "camelCase")]
    Compacted {
        /// `auto` (the context passed the limit) or `manual` (`/compact`).
        trigger: String,
        /// The summary's length in characters.
        summary_chars: usize,
    },
    /// Something went wrong that did not stop the conversation.
    Warning {
        /// What.
        message: String,
    },
}

/// Receives [`LoopEvent`]s as they happen, and streamed text.
pub trait Observer: Send + Sync {
    /// One event.
    fn event(&self, event: &LoopEvent);
    /// More text of the model's current message (streaming drivers only).
    fn text_delta(&self, _text: &str) {}
    /// A whole message of the main conversation as it joins it: the user's prompt, each
    /// assistant answer, each batch of tool results (what `--output-format stream-json`
    /// prints).
    fn message(&self, _message: &Message) {}
}

/// An observer that keeps every event (tests, the demo's table, embedders that look later).
#[derive(Debug, Default)]
pub struct Recorder {
    events: Mutex<Vec<LoopEvent>>,
}

impl Recorder {
    /// Every event so far.
    pub fn events(&self) -> Vec<LoopEvent> {
        self.events.lock().map(|e| e.clone()).unwrap_or_default()
    }
}

impl Observer for Recorder {
    fn event(&self, event: &LoopEvent) {
        if let Ok(mut e) = self.events.lock() {
            e.push(event.clone());
        }
    }
}

struct Silent;

impl Observer for Silent {
    fn event(&self, _: &LoopEvent) {}
}

struct Sink<'a>(&'a dyn Observer);

impl StreamSink for Sink<'_> {
    fn text_delta(&self, text: &str) {
        self.0.text_delta(text);
    }
}

/// A conversation: a session, a model and someone to ask (see the module docs).
pub struct Conversation {
    core: Core,
    messages: Vec<Message>,
    pending: Vec<String>,
    started: bool,
    /// Resumed from a transcript: SessionStart says `resume` and the memory is already in
    /// the messages.
    resumed: bool,
}

struct Core {
    session: Arc<Session>,
    driver: Arc<dyn ModelDriver>,
    asker: Arc<dyn Asker>,
    observer: Arc<dyn Observer>,
    opts: ConversationOptions,
    context: Arc<Mutex<Context>>,
    transcript: Arc<Transcript>,
    tools: Vec<ToolSpec>,
    model: String,
    usage: Mutex<(Usage, Option<f64>)>,
    /// The current user prompt's id (`prompt_id`), from the first prompt on.
    prompt_id: Mutex<Option<String>>,
    /// Main-conversation model requests and time spent waiting on the model, for reports.
    requests: Mutex<(u32, std::time::Duration)>,
    /// The agent the main conversation runs as (see [`Conversation::set_main_agent`]).
    main_agent: Option<warden_instructions::Agent>,
    /// The output style of the main conversation (`None`: `default`).
    output_style: Option<crate::output_style::OutputStyle>,
    /// Problems choosing it, reported when the conversation starts.
    style_warnings: Vec<String>,
}

/// What a call needs of the frame (main conversation or subagent) it runs in.
struct FrameInfo {
    caller: Caller,
    agent: Option<(String, String)>,
    tools: Vec<ToolSpec>,
    model: String,
    depth: u32,
    transcript: Arc<Transcript>,
    max_turns: u32,
    system: String,
}

impl FrameInfo {
    fn agent_type(&self) -> Option<String> {
        self.agent.as_ref().map(|(_, t)| t.clone())
    }
}

struct CallResult {
    block: Block,
    ends_turn: Option<String>,
    context: Vec<String>,
    batch_entry: Value,
}

impl Conversation {
    /// A conversation in `session`, not started yet.
    pub fn new(
        session: Arc<Session>,
        driver: Arc<dyn ModelDriver>,
        asker: Arc<dyn Asker>,
        opts: ConversationOptions,
    ) -> Self {
        let transcript_path = opts.transcript_path.clone().unwrap_or_else(|| {
            Self::transcript_dir(session.home.root(), &session.cwd)
                .join(format!("{}.jsonl", session.session_id))
        });
        let transcript = Arc::new(Transcript::new(
            transcript_path,
            &session.session_id,
            &session.cwd,
            None,
        ));
        let model = opts
            .model
            .clone()
            .unwrap_or_else(|| driver.default_model().to_string());
        let context = Arc::new(Mutex::new(crate::instructions::load_context(&session, &[])));
        let (output_style, style_warnings) = crate::output_style::select(&session);
        session.set_model_hook_runner(Arc::new(hook_model::DriverHookRunner::new(
            driver.clone(),
            &session,
        )));
        Conversation {
            core: Core {
                session,
                driver,
                asker,
                observer: Arc::new(Silent),
                opts,
                context,
                transcript,
                tools: Vec::new(),
                model,
                usage: Mutex::new((Usage::default(), None)),
                prompt_id: Mutex::new(None),
                requests: Mutex::new((0, std::time::Duration::ZERO)),
                main_agent: None,
                output_style,
                style_warnings,
            },
            messages: Vec::new(),
            pending: Vec::new(),
            started: false,
            resumed: false,
        }
    }

    /// Goes on from a conversation read back from its transcript (`--resume`, `--continue`):
    /// its messages are the model's context again, the transcript goes on after its last
    /// line, and `SessionStart` fires with source `resume`. Call before
    /// [`Conversation::start`]; the session should carry the saved session id.
    pub fn resume(&mut self, saved: transcript::Saved) {
        self.messages = saved.messages;
        self.core.transcript.continue_after(saved.last_uuid);
        self.resumed = true;
    }

    /// Where the transcripts of conversations in `cwd` are kept under a Warden home's root:
    /// `projects/<cwd with every other character than ASCII letters and digits as ->`, as
    /// Claude Code names them.
    pub fn transcript_dir(home_root: &std::path::Path, cwd: &std::path::Path) -> PathBuf {
        let project: String = cwd
            .display()
            .to_string()
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        home_root.join("projects").join(project)
    }

    /// Reports events to `observer`.
    pub fn with_observer(mut self, observer: Arc<dyn Observer>) -> Self {
        self.core.observer = observer;
        self
    }

    /// The session.
    pub fn session(&self) -> &Arc<Session> {
        &self.core.session
    }

    /// Where the transcript is written.
    pub fn transcript_path(&self) -> &std::path::Path {
        self.core.transcript.path()
    }

    /// The conversation so far.
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// The tools offered to the model (after [`Conversation::start`]).
    pub fn tools(&self) -> &[ToolSpec] {
        &self.core.tools
    }

    /// Tokens used so far, and their price when known.
    pub fn usage(&self) -> (Usage, Option<f64>) {
        self.core.usage.lock().map(|u| *u).unwrap_or_default()
    }

    /// The model the main conversation asks.
    pub fn model(&self) -> &str {
        &self.core.model
    }

    /// Runs the main conversation as the agent `name` (`--agent`; as loaded from the agents'
    /// files, plugin agents by their namespaced name `plugin:agent`): its body becomes the
    /// system prompt, its `tools` / `disallowedTools` filter the tools offered and its `model`
    /// is asked unless one was chosen explicitly (see the module docs). Call before
    /// [`Conversation::start`]. Fails, naming the agents there are, when there is no such
    /// agent.
    pub fn set_main_agent(&mut self, name: &str) -> Result<(), String> {
        let agent = {
            let ctx = self
                .core
                .context
                .lock()
                .map_err(|_| "the context is unusable".to_string())?;
            match ctx.agents.iter().find(|a| a.name == name) {
                Some(a) => a.clone(),
                None => {
                    let names: Vec<&str> = ctx.agents.iter().map(|a| a.name.as_str()).collect();
                    return Err(if names.is_empty() {
                        format!("no agent named `{name}`: no agents are defined")
                    } else {
                        format!(
                            "no agent named `{name}`; the agents are: {}",
                            names.join(", ")
                        )
                    });
                }
            }
        };
        if self.core.opts.model.is_none()
            && let Some(m) = agent.model.as_deref().filter(|m| *m != "inherit")
        {
            self.core.model = m.to_string();
        }
        self.core.main_agent = Some(agent);
        Ok(())
    }

    /// Applies the `agent` settings when `--agent` did not choose one: the settings files'
    /// `agent` key (the highest-precedence file that sets it), else an enabled plugin's
    /// `settings.json` (or manifest `settings`) `agent`, which names an agent of that plugin
    /// (`agent` or `plugin:agent`). Returns warnings, each naming the file, for a setting that
    /// names no agent it may; such a setting is left out and the conversation runs as usual.
    pub fn apply_agent_setting(&mut self) -> Vec<String> {
        let mut warnings = Vec::new();
        let session = self.core.session.clone();
        if let Some((value, file)) = session.settings.scalar("agent") {
            let file = file.display_name();
            match value.as_str() {
                Some(name) => {
                    if let Err(e) = self.set_main_agent(name) {
                        warnings.push(format!("{file}: `agent` setting ignored: {e}"));
                    }
                }
                None => warnings.push(format!(
                    "{file}: `agent` setting ignored: it must be an agent's name (a string)"
                )),
            }
            return warnings;
        }
        for p in &session.plugins {
            let Some(value) = p.plugin.settings.get("agent") else {
                continue;
            };
            let file = p.plugin.root.join("settings.json");
            let file = if file.is_file() {
                file
            } else {
                p.plugin.root.join(warden_plugins::loader::MANIFEST_FILE)
            };
            let file = file.display();
            if self.core.main_agent.is_some() {
                warnings.push(format!(
                    "{file}: `agent` setting ignored: another plugin's `agent` setting applies"
                ));
                continue;
            }
            match plugin_agent_name(&p.plugin.name, value) {
                Ok(name) => {
                    if let Err(e) = self.set_main_agent(&name) {
                        warnings.push(format!("{file}: `agent` setting ignored: {e}"));
                    }
                }
                Err(e) => warnings.push(format!("{file}: `agent` setting ignored: {e}")),
            }
        }
        warnings
    }

    /// The agent the main conversation runs as, if any.
    pub fn main_agent(&self) -> Option<&warden_instructions::Agent> {
        self.core.main_agent.as_ref()
    }

    /// The name of the output style the main conversation uses (`default` when none).
    pub fn output_style(&self) -> &str {
        self.core
            .output_style
            .as_ref()
            .map_or(crate::output_style::DEFAULT, |s| s.name.as_str())
    }

    /// Starts the session: the tools are gathered (MCP servers connect), `InstructionsLoaded`
    /// fires for every memory file and rule loaded, then `SessionStart`, whose context joins
    /// the first prompt. Called by the first [`Conversation::send`] if not before.
    pub async fn start(&mut self) {
        if self.started {
            return;
        }
        self.started = true;
        // Plugins' monitors start with the session (see `crate::monitors`).
        let mut warnings = self.core.session.monitors().start_always();
        warnings.extend(self.gather_tools().await);
        let core = &mut self.core;
        warnings.append(&mut core.style_warnings);
        let memory = match core.context.lock() {
            Ok(ctx) => {
                warnings.extend(ctx.warnings.iter().map(|w| w.located().to_string()));
                ctx.memory.clone()
            }
            Err(_) => Vec::new(),
        };
        for w in warnings {
            core.observer.event(&LoopEvent::Warning { message: w });
        }
        core.observer.event(&LoopEvent::SessionStarted {
            session_id: core.session.session_id.clone(),
            model: core.model.clone(),
            driver: core.driver.name().to_string(),
            transcript_path: core.transcript.path().display().to_string(),
            tools: core.tools.iter().map(|t| t.name.clone()).collect(),
            output_style: core
                .output_style
                .as_ref()
                .map_or(crate::output_style::DEFAULT, |s| s.name.as_str())
                .to_string(),
        });

        for f in &memory {
            let mut payload = f.hook_fields();
            payload.retain(|_, v| !v.is_null());
            core.fire(Event::InstructionsLoaded, payload, None).await;
        }
        let mut setup_context = Vec::new();
        if let Some(trigger) = core.opts.setup.clone() {
            let mut payload = Map::new();
            payload.insert("trigger".into(), json!(trigger));
            let r = core.fire(Event::Setup, payload, None).await;
            setup_context.extend(
                r.merged
                    .additional_context
                    .iter()
                    .map(|c| prompt::reminder(&format!("Setup hook additional context: {c}"))),
            );
        }
        // Claude Code sends no `model` (and no `permission_mode`) with SessionStart.
        let mut payload = Map::new();
        let source = if self.resumed { "resume" } else { "startup" };
        payload.insert("source".into(), json!(source));
        let r = core.fire(Event::SessionStart, payload, None).await;
        if !self.resumed
            && let Ok(ctx) = core.context.lock()
        {
            self.pending.extend(prompt::first_reminders(&ctx));
        }
        self.pending.extend(setup_context);
        self.pending.extend(
            r.merged
                .additional_context
                .iter()
                .map(|c| prompt::reminder(&format!("SessionStart hook additional context: {c}"))),
        );
    }

    /// Fires `Setup` alone, with `trigger`, and closes the session (`--init-only`: no
    /// tools are gathered and no `SessionStart` fires).
    pub async fn setup_only(&mut self, trigger: &str) {
        let mut payload = Map::new();
        payload.insert("trigger".into(), json!(trigger));
        self.core.fire(Event::Setup, payload, None).await;
        self.core.session.close().await;
    }

    /// The tools offered to the model: the session's, then `Agent` when there are subagents
    /// and `Skill` when there are skills or commands. Returns what was left out and why.
    async fn gather_tools(&mut self) -> Vec<String> {
        let mut warnings = Vec::new();
        let mut tools = prompt::session_tools(&self.core.session, &mut warnings).await;
        if let Ok(ctx) = self.core.context.lock() {
            if !ctx.agents.is_empty() {
                tools.push(prompt::agent_tool(&ctx.agents));
            }
            if !ctx.skills.is_empty() || !ctx.commands.is_empty() {
                tools.push(prompt::skill_tool());
            }
        }
        // The main conversation run as an agent has that agent's tools, as a subagent would.
        if let Some(agent) = &self.core.main_agent {
            tools.retain(|t| prompt::agent_allows(agent, &t.name));
            if tools.is_empty() && agent.tools.is_some() {
                warnings.push(format!(
                    "agent {}: its `tools` list names no tool this session has",
                    agent.name
                ));
            }
        }
        self.core.tools = tools;
        warnings
    }

    /// The request the model would receive for `prompt` now (nothing is run, no hook fires):
    /// the assembled context, for inspection.
    pub async fn preview(&mut self, prompt: &str) -> ModelRequest {
        if !self.started {
            self.gather_tools().await;
            if let Ok(ctx) = self.core.context.lock() {
                self.pending = prompt::first_reminders(&ctx);
            }
        }
        let mut messages = self.messages.clone();
        messages.push(user_message(&self.pending, prompt));
        ModelRequest {
            model: self.core.model.clone(),
            system: self.core.main_system_prompt(),
            messages,
            tools: self.core.tools.clone(),
            max_tokens: self.core.opts.max_tokens,
            caller: Caller::Main,
        }
    }

    /// Sends a user prompt and runs the turn to its end (see the module docs).
    pub async fn send(&mut self, prompt: &str) -> TurnReport {
        self.start().await;
        let before = self.usage();
        let requests_before = self.core.requests();
        let end = self.turn(prompt).await;
        let after = self.usage();
        let requests_after = self.core.requests();
        let usage = Usage {
            input_tokens: after.0.input_tokens - before.0.input_tokens,
            output_tokens: after.0.output_tokens - before.0.output_tokens,
        };
        let cost_usd = match (after.1, before.1) {
            (Some(a), b) => Some(a - b.unwrap_or(0.0)),
            _ => None,
        };
        let report = TurnReport {
            end,
            usage,
            cost_usd,
            num_turns: requests_after.0 - requests_before.0,
            api_ms: u64::try_from((requests_after.1 - requests_before.1).as_millis())
                .unwrap_or(u64::MAX),
        };
        self.core.observer.event(&LoopEvent::TurnEnded {
            report: report.clone(),
        });
        report
    }

    async fn turn(&mut self, typed: &str) -> TurnEnd {
        let core = &self.core;
        if let Ok(mut id) = core.prompt_id.lock() {
            *id = Some(crate::instructions::new_session_id());
        }
        let mut text = typed.to_string();
        let mut extra: Vec<String> = Vec::new();
        if let Some(("compact", instructions)) = slash_command(typed) {
            // Claude Code's own command, before any skill of that name: the conversation is
            // compacted now (`trigger: manual`), with the arguments as instructions.
            let info = core.main_frame();
            return match core
                .compact(&info, &mut self.messages, "manual", instructions)
                .await
            {
                // As `claude -p "/compact"`: no text when done, and nothing to compact is an
                // answer, not an error.
                Ok(()) => TurnEnd::Completed {
                    text: String::new(),
                },
                Err(reason) if reason == NOTHING_TO_COMPACT || reason == NO_MESSAGES_TO_COMPACT => {
                    TurnEnd::Completed { text: reason }
                }
                Err(reason) => TurnEnd::PromptBlocked { reason },
            };
        }
        if let Some((name, args)) = slash_command(typed) {
            let found = core.context.lock().ok().and_then(|c| {
                c.find_skill(name)
                    .ok()
                    .map(|s| (s.name.clone(), s.source.clone(), s.user_invocable))
            });
            match found {
                None => {
                    return TurnEnd::PromptBlocked {
                        reason: format!("unknown command /{name}"),
                    };
                }
                Some((_, _, false)) => {
                    return TurnEnd::PromptBlocked {
                        reason: format!("/{name} is not a command a user can run"),
                    };
                }
                Some((full, source, true)) => {
                    let mut payload = Map::new();
                    payload.insert("expansion_type".into(), json!("slash_command"));
                    payload.insert("command_name".into(), json!(full));
                    payload.insert("command_args".into(), json!(args));
                    payload.insert("command_source".into(), json!(skill_source(&source)));
                    payload.insert("prompt".into(), json!(typed));
                    let r = core.fire(Event::UserPromptExpansion, payload, None).await;
                    if let Some(end) = stopped(&r) {
                        return end;
                    }
                    if r.merged.blocked {
                        return TurnEnd::PromptBlocked {
                            reason: r.merged.block_reasons.join("\n"),
                        };
                    }
                    extra.extend(r.merged.additional_context.iter().map(|c| {
                        prompt::reminder(&format!(
                            "UserPromptExpansion hook additional context: {c}"
                        ))
                    }));
                    match core.render_skill(&full, args).await {
                        Ok(content) => {
                            text = format!(
                                "<command-name>/{full}</command-name>\n<command-args>{args}</command-args>\n\n{content}"
                            );
                        }
                        Err(e) => return TurnEnd::PromptBlocked { reason: e },
                    }
                }
            }
        }

        let mut payload = Map::new();
        payload.insert("prompt".into(), json!(typed));
        let r = core.fire(Event::UserPromptSubmit, payload, None).await;
        if let Some(end) = stopped(&r) {
            return end;
        }
        if r.merged.blocked {
            return TurnEnd::PromptBlocked {
                reason: r.merged.block_reasons.join("\n"),
            };
        }
        extra.extend(
            r.merged.additional_context.iter().map(|c| {
                prompt::reminder(&format!("UserPromptSubmit hook additional context: {c}"))
            }),
        );

        let mut reminders = std::mem::take(&mut self.pending);
        reminders.extend(extra);
        let message = user_message(&reminders, &text);
        core.transcript.message(&message, None, None);
        core.observer
            .event(&LoopEvent::Prompt { text: text.clone() });
        core.observer.message(&message);
        self.messages.push(message);
        let info = core.main_frame();
        core.run_frame(&info, &mut self.messages).await
    }

    /// Ends the session: `SessionEnd` with `reason` (`clear`, `resume`, `logout`,
    /// `prompt_input_exit`, `other`), then the MCP servers are closed.
    pub async fn end(&mut self, reason: &str) -> (Usage, Option<f64>) {
        let mut payload = Map::new();
        payload.insert("reason".into(), json!(reason));
        self.core.fire(Event::SessionEnd, payload, None).await;
        self.core.session.close().await;
        let (usage, cost_usd) = self.usage();
        if let Some(e) = self.core.transcript.error() {
            self.core.observer.event(&LoopEvent::Warning { message: e });
        }
        self.core.observer.event(&LoopEvent::SessionEnded {
            reason: reason.to_string(),
            usage,
            cost_usd,
        });
        (usage, cost_usd)
    }
}

fn user_message(reminders: &[String], text: &str) -> Message {
    let mut content: Vec<Block> = reminders.iter().map(|r| Block::text(r.clone())).collect();
    content.push(Block::text(text));
    Message {
        role: Role::User,
        content,
    }
}

/// Claude Code's answer to `/compact` in a conversation with nothing to compact.
pub const NOTHING_TO_COMPACT: &str = "Not enough messages to compact.";

/// Claude Code's answer to `/compact` in a conversation without any message: printed as the
/// command's stderr, with an empty `result`.
pub const NO_MESSAGES_TO_COMPACT: &str = "Error: No messages to compact";

/// The namespaced name of the agent a plugin's `agent` setting names: `agent` (or
/// `sub:agent` for one in a subfolder of `agents/`) becomes `plugin:agent`; `plugin:agent` is
/// taken as it is. A plugin's setting can name only its own agents: another plugin's
/// `other:agent` is looked for as this plugin's `plugin:other:agent`, and anything that is not
/// an agent's name (a path such as `../x`) is refused.
pub fn plugin_agent_name(plugin: &str, value: &Value) -> Result<String, String> {
    let Some(raw) = value.as_str() else {
        return Err("it must be an agent's name (a string)".into());
    };
    let local = raw
        .strip_prefix(plugin)
        .and_then(|r| r.strip_prefix(':'))
        .unwrap_or(raw);
    let valid = local
        .split(':')
        .all(warden_instructions::agents::valid_agent_name);
    if !valid {
        return Err(format!("`{raw}` is not an agent's name"));
    }
    Ok(format!("{plugin}:{local}"))
}

/// `/name args` when the prompt is a command invocation (a name without `/` in it, so a path
/// typed as a prompt is not mistaken for one).
pub fn slash_command(prompt: &str) -> Option<(&str, &str)> {
    let rest = prompt.trim_start().strip_prefix('/')?;
    let (name, args) = match rest.split_once(char::is_whitespace) {
        Some((n, a)) => (n, a.trim()),
        None => (rest.trim_end(), ""),
    };
    let ok = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | ':' | '.'));
    ok.then_some((name, args))
}

fn skill_source(source: &warden_instructions::SkillSource) -> String {
    serde_json::to_value(source)
        .ok()
        .and_then(|v| match v {
            Value::String(s) => Some(s),
            Value::Object(o) => o.get("scope").and_then(Value::as_str).map(str::to_string),
            _ => None,
        })
        .unwrap_or_else(|| "unknown".into())
}

/// A hook's `continue: false` ends the conversation whatever the event decided.
fn stopped(r: &DispatchResult) -> Option<TurnEnd> {
    (!r.merged.continue_).then(|| TurnEnd::HookStopped {
        reason: if r.merged.stop_reasons.is_empty() {
            format!("a {} hook stopped the conversation", r.merged.event)
        } else {
            r.merged.stop_reasons.join("\n")
        },
    })
}

impl Core {
    /// The frame of the main conversation.
    fn main_frame(&self) -> FrameInfo {
        FrameInfo {
            caller: Caller::Main,
            agent: None,
            tools: self.tools.clone(),
            model: self.model.clone(),
            depth: 0,
            transcript: self.transcript.clone(),
            max_turns: self.opts.max_turns,
            system: self.main_system_prompt(),
        }
    }

    /// The main conversation's system prompt: the agent's it runs as, else the default,
    /// with the output style (see [`prompt::main_prompt`]).
    fn main_system_prompt(&self) -> String {
        prompt::main_prompt(
            &self.session,
            self.main_agent.as_ref(),
            self.output_style.as_ref(),
        )
    }

    fn requests(&self) -> (u32, std::time::Duration) {
        self.requests.lock().map(|r| *r).unwrap_or_default()
    }

    fn prompt_id(&self) -> Option<String> {
        self.prompt_id.lock().ok().and_then(|p| p.clone())
    }

    fn add_usage(&self, model: &str, usage: Usage) {
        let cost = self.driver.cost_usd(model, usage);
        if let Ok(mut u) = self.usage.lock() {
            u.0 += usage;
            if let Some(c) = cost {
                u.1 = Some(u.1.unwrap_or(0.0) + c);
            }
        }
    }

    /// Fires a lifecycle event with the common fields, reporting each handler that ran.
    async fn fire(
        &self,
        event: Event,
        payload: Map<String, Value>,
        agent: Option<&(String, String)>,
    ) -> DispatchResult {
        let mode = self
            .session
            .rules()
            .map(|r| r.mode().as_str().to_string())
            .unwrap_or_else(|_| "default".into());
        let mut input = Map::new();
        input.insert("session_id".into(), json!(self.session.session_id));
        input.insert(
            "transcript_path".into(),
            json!(self.transcript.path().display().to_string()),
        );
        input.insert("cwd".into(), json!(self.session.cwd.display().to_string()));
        // As Claude Code: the session's bounds carry no mode.
        if !matches!(
            event,
            Event::SessionStart | Event::SessionEnd | Event::Setup
        ) {
            input.insert("permission_mode".into(), json!(mode));
        }
        input.insert("hook_event_name".into(), json!(event.as_str()));
        if let Some(id) = self.prompt_id() {
            input.insert("prompt_id".into(), json!(id));
        }
        if let Some((id, ty)) = agent {
            input.insert("agent_id".into(), json!(id));
            input.insert("agent_type".into(), json!(ty));
        } else if let Some(a) = &self.main_agent {
            // As Claude Code: with `--agent` (or the `agent` setting) hooks of the main
            // conversation are told its type, with no `agent_id`.
            input.insert("agent_type".into(), json!(a.name));
        }
        // As Claude Code: the effort level rides on the events of a turn's tool context.
        if let (Some(level), Event::Stop | Event::SubagentStop | Event::PostToolBatch) =
            (&self.opts.effort, event)
        {
            input.insert("effort".into(), json!({ "level": level }));
        }
        input.extend(payload);
        let input = Value::Object(input);
        let result = match self.session.dispatch_options() {
            Ok(mut opts) => {
                if let Some(cap) = self.opts.stop_block_cap {
                    opts.stop_block_cap = cap;
                }
                dispatch(event, &input, self.session.hook_config(), &opts).await
            }
            Err(e) => {
                self.observer.event(&LoopEvent::Warning {
                    message: format!("{event} hooks not run: {e}"),
                });
                dispatch(
                    event,
                    &input,
                    &warden_hooks::HookConfig::default(),
                    &warden_hooks::DispatchOptions::new(&self.session.cwd),
                )
                .await
            }
        };
        for h in &result.handlers {
            if matches!(h.result.outcome, Outcome::Skipped { .. }) {
                continue;
            }
            let (mut decision, detail) = crate::session::pipeline::handler_decision(h);
            if decision == "deny" {
                // Outside PreToolUse a blocking answer blocks the event, it denies nothing.
                decision = "block".into();
            }
            self.observer.event(&LoopEvent::Hook {
                event: event.as_str().to_string(),
                handler: h.label.clone(),
                source: h.source.clone(),
                decision,
                detail,
                micros: u64::try_from(h.elapsed.as_micros()).unwrap_or(u64::MAX),
                agent: agent.map(|(_, t)| t.clone()),
            });
        }
        for w in &result.warnings {
            self.observer
                .event(&LoopEvent::Warning { message: w.clone() });
        }
        result
    }

    /// Adds the lines plugins' monitors printed since the last request to the last user
    /// message, as one reminder (see [`crate::monitors`]).
    fn deliver_monitor_events(&self, info: &FrameInfo, messages: &mut Vec<Message>) {
        let (events, dropped) = self.session.monitors().take_events();
        if events.is_empty() && dropped == 0 {
            return;
        }
        let text = crate::monitors::reminder(&events, dropped);
        info.transcript.system("monitor_events", &text);
        match messages.last_mut() {
            Some(m) if m.role == Role::User => m.content.push(Block::text(text)),
            _ => messages.push(Message {
                role: Role::User,
                content: vec![Block::text(text)],
            }),
        }
    }

    /// The model ↔ tools loop of one frame, until the model stops and the Stop hooks agree.
    async fn run_frame(&self, info: &FrameInfo, messages: &mut Vec<Message>) -> TurnEnd {
        let mut stop_hook_active = false;
        let mut requests = 0u32;
        let mut context_tokens = 0u64;
        let agent_label = info.agent_type();
        loop {
            let limit = self.opts.auto_compact_tokens.filter(|l| *l > 0);
            if info.agent.is_none()
                && limit.is_some_and(|l| context_tokens >= l)
                && let Err(e) = self.compact(info, messages, "auto", "").await
            {
                self.observer.event(&LoopEvent::Warning { message: e });
            }
            if requests >= info.max_turns {
                info.transcript.system(
                    "max_turns",
                    &format!("stopped after {requests} model turns"),
                );
                return TurnEnd::MaxTurns { turns: requests };
            }
            requests += 1;
            if info.agent.is_none() {
                self.deliver_monitor_events(info, messages);
            }
            let request = ModelRequest {
                model: info.model.clone(),
                system: info.system.clone(),
                messages: messages.clone(),
                tools: info.tools.clone(),
                max_tokens: self.opts.max_tokens,
                caller: info.caller.clone(),
            };
            let sink = Sink(self.observer.as_ref());
            let asked = std::time::Instant::now();
            let answer = self.driver.complete(&request, Some(&sink)).await;
            if let Ok(mut r) = self.requests.lock() {
                r.0 += u32::from(info.agent.is_none());
                r.1 += asked.elapsed();
            }
            let response = match answer {
                Ok(r) => r,
                Err(e) => return self.stop_failure(info, &e).await,
            };
            context_tokens = response.usage.input_tokens + response.usage.output_tokens;
            self.add_usage(&response.model, response.usage);
            let message = Message {
                role: Role::Assistant,
                content: response.content,
            };
            info.transcript
                .message(&message, Some(&response.model), Some(response.usage));
            if info.agent.is_none() {
                self.observer.message(&message);
            }
            let text = message.text();
            if !text.is_empty() {
                self.observer.event(&LoopEvent::Text {
                    text: text.clone(),
                    agent: agent_label.clone(),
                });
            }
            let calls: Vec<(String, String, Value)> = message
                .tool_uses()
                .map(|(id, name, input)| (id.to_string(), name.to_string(), input.clone()))
                .collect();
            messages.push(message);

            if calls.is_empty() {
                let (event, payload) = match &info.agent {
                    None => (
                        Event::Stop,
                        payload_map(&warden_hooks::Stop {
                            stop_hook_active,
                            last_assistant_message: text.clone(),
                            background_tasks: Vec::new(),
                            session_crons: Vec::new(),
                        }),
                    ),
                    Some((id, ty)) => (
                        Event::SubagentStop,
                        payload_map(&warden_hooks::SubagentStop {
                            stop_hook_active,
                            agent_id: id.clone(),
                            agent_type: ty.clone(),
                            agent_transcript_path: info.transcript.path().display().to_string(),
                            last_assistant_message: text.clone(),
                            background_tasks: Vec::new(),
                            session_crons: Vec::new(),
                        }),
                    ),
                };
                let r = self.fire(event, payload, info.agent.as_ref()).await;
                if let Some(end) = stopped(&r) {
                    return end;
                }
                if r.merged.blocked {
                    let reason = r.merged.block_reasons.join("\n");
                    self.observer.event(&LoopEvent::StopBlocked {
                        reason: reason.clone(),
                        agent: agent_label.clone(),
                    });
                    info.transcript.system("stop_hook_feedback", &reason);
                    let feedback = Message::user(format!("{event} hook feedback:\n{reason}"));
                    info.transcript.message(&feedback, None, None);
                    messages.push(feedback);
                    stop_hook_active = true;
                    continue;
                }
                return TurnEnd::Completed { text };
            }

            let results = futures::future::join_all(
                calls
                    .iter()
                    .map(|(id, name, input)| self.run_call(info, id, name, input.clone())),
            )
            .await;
            let mut content = Vec::with_capacity(results.len() + 1);
            let mut context = Vec::new();
            let mut batch = Vec::with_capacity(results.len());
            let mut ends_turn = Vec::new();
            for r in results {
                ends_turn.extend(r.ends_turn);
                content.push(r.block);
                context.extend(r.context);
                batch.push(r.batch_entry);
            }
            if !ends_turn.is_empty() {
                let results = Message {
                    role: Role::User,
                    content,
                };
                info.transcript.message(&results, None, None);
                if info.agent.is_none() {
                    self.observer.message(&results);
                }
                messages.push(results);
                return TurnEnd::HookStopped {
                    reason: ends_turn.join("\n"),
                };
            }
            if !self
                .session
                .hook_config()
                .hooks(Event::PostToolBatch)
                .is_empty()
            {
                let mut payload = Map::new();
                payload.insert("tool_calls".into(), Value::Array(batch));
                let r = self
                    .fire(Event::PostToolBatch, payload, info.agent.as_ref())
                    .await;
                if let Some(end) = stopped(&r) {
                    return end;
                }
                if r.merged.blocked {
                    return TurnEnd::HookStopped {
                        reason: r.merged.block_reasons.join("\n"),
                    };
                }
                context.extend(r.merged.additional_context.iter().cloned());
            }
            if !context.is_empty() {
                content.push(Block::text(prompt::reminder(&context.join("\n\n"))));
            }
            let results = Message {
                role: Role::User,
                content,
            };
            info.transcript.message(&results, None, None);
            if info.agent.is_none() {
                self.observer.message(&results);
            }
            messages.push(results);
        }
    }

    /// Compacts the main conversation, as Claude Code does when its context fills or on
    /// `/compact`: `PreCompact` (a block keeps the messages as they are; a handler's plain
    /// stdout adds to `custom` as instructions for the summary), a summary from the model, the
    /// messages replaced by it, the memory files re-read from disk (`InstructionsLoaded` with
    /// `load_reason: compact`) and put back in front of it, then `PostCompact` and
    /// `SessionStart` with source `compact`, whose context joins the new first message. Err
    /// (the messages as they were) when there is nothing to compact, a hook blocked, or the
    /// summary failed.
    async fn compact(
        &self,
        info: &FrameInfo,
        messages: &mut Vec<Message>,
        trigger: &str,
        custom: &str,
    ) -> Result<(), String> {
        if messages.is_empty() {
            return Err(NO_MESSAGES_TO_COMPACT.into());
        }
        // A conversation that is only a summary (a compacted one, resumed) has nothing left
        // to summarise, as Claude Code judges it.
        if trigger == "manual" && messages.len() < 2 {
            return Err(NOTHING_TO_COMPACT.into());
        }
        let mut payload = Map::new();
        payload.insert("trigger".into(), json!(trigger));
        payload.insert("custom_instructions".into(), json!(custom));
        let r = self.fire(Event::PreCompact, payload, None).await;
        if r.merged.blocked || !r.merged.continue_ {
            let why = r.merged.block_reasons.join("\n");
            return Err(format!("Compaction blocked by a PreCompact hook: {why}"));
        }
        let mut instructions: Vec<String> = Vec::new();
        if !custom.trim().is_empty() {
            instructions.push(custom.trim().to_string());
        }
        instructions.extend(
            r.handlers
                .iter()
                .filter(|h| matches!(h.result.outcome, Outcome::Success))
                .filter_map(|h| h.result.plain.as_deref())
                .map(str::trim)
                .filter(|p| !p.is_empty())
                .map(str::to_string),
        );
        let mut ask = messages.clone();
        let mut asked_for = prompt::COMPACT_INSTRUCTIONS.to_string();
        if !instructions.is_empty() {
            asked_for.push_str("\n\nAdditional Instructions:\n");
            asked_for.push_str(&instructions.join("\n\n"));
        }
        ask.push(Message::user(asked_for));
        let request = ModelRequest {
            model: info.model.clone(),
            system: info.system.clone(),
            messages: ask,
            tools: Vec::new(),
            max_tokens: self.opts.max_tokens,
            caller: Caller::Compact,
        };
        let asked = std::time::Instant::now();
        let answer = self.driver.complete(&request, None).await;
        if let Ok(mut r) = self.requests.lock() {
            r.1 += asked.elapsed();
        }
        let summary = match answer {
            Ok(r) => {
                self.add_usage(&r.model, r.usage);
                Message {
                    role: Role::Assistant,
                    content: r.content,
                }
                .text()
            }
            Err(e) => {
                return Err(format!("the conversation was not compacted: {}", e.message));
            }
        };
        let first = self.after_compaction(trigger, &summary).await;
        info.transcript.system("compact_boundary", trigger);
        info.transcript.message(&first, None, None);
        messages.clear();
        messages.push(first);
        self.observer.event(&LoopEvent::Compacted {
            trigger: trigger.to_string(),
            summary_chars: summary.chars().count(),
        });
        Ok(())
    }

    /// What follows a summary: the memory re-read from disk and announced, `PostCompact`,
    /// `SessionStart` (source `compact`); returns the compacted conversation's first message:
    /// memory, hook context, then the summary.
    async fn after_compaction(&self, trigger: &str, summary: &str) -> Message {
        let fresh = crate::instructions::load_context(&self.session, &[]);
        let memory = fresh.memory.clone();
        let mut reminders = prompt::first_reminders(&fresh);
        if let Ok(mut ctx) = self.context.lock() {
            *ctx = fresh;
        }
        for f in &memory {
            let mut f = f.clone();
            f.load_reason = warden_instructions::LoadReason::Compact;
            let mut payload = f.hook_fields();
            payload.retain(|_, v| !v.is_null());
            self.fire(Event::InstructionsLoaded, payload, None).await;
        }
        let mut payload = Map::new();
        payload.insert("trigger".into(), json!(trigger));
        payload.insert("compact_summary".into(), json!(summary));
        self.fire(Event::PostCompact, payload, None).await;
        let mut payload = Map::new();
        payload.insert("source".into(), json!("compact"));
        let started = self.fire(Event::SessionStart, payload, None).await;
        reminders.extend(
            started
                .merged
                .additional_context
                .iter()
                .map(|c| prompt::reminder(&format!("SessionStart hook additional context: {c}"))),
        );
        user_message(&reminders, &prompt::compacted(summary))
    }

    async fn stop_failure(&self, info: &FrameInfo, e: &ModelError) -> TurnEnd {
        info.transcript
            .system("api_error", &format!("{}: {}", e.kind.as_str(), e.message));
        let mut payload = Map::new();
        payload.insert("error".into(), json!(e.kind.as_str()));
        payload.insert("error_details".into(), json!(e.message));
        payload.insert("last_assistant_message".into(), json!(e.message));
        self.fire(Event::StopFailure, payload, info.agent.as_ref())
            .await;
        TurnEnd::StopFailure {
            error: e.kind.as_str().to_string(),
            message: e.message.clone(),
        }
    }

    /// One tool call of a model turn, through the session's pipeline.
    async fn run_call(&self, info: &FrameInfo, id: &str, name: &str, input: Value) -> CallResult {
        let input = crate::session::pipeline::with_defaults(name, input);
        let offered = info.tools.iter().any(|t| t.name == name)
            || (name == "Task" && info.tools.iter().any(|t| t.name == "Agent"));
        let entry = |response: &str| json!({"tool_name": name, "tool_input": input, "tool_use_id": id, "tool_response": response});
        if !offered {
            let m =
                format!("<tool_use_error>Error: No such tool available: {name}</tool_use_error>");
            return CallResult {
                ends_turn: None,
                batch_entry: entry(&m),
                block: Block::ToolResult {
                    tool_use_id: id.to_string(),
                    content: m,
                    is_error: true,
                },
                context: Vec::new(),
            };
        }
        let meta = CallMeta {
            tool_use_id: Some(id.to_string()),
            transcript_path: Some(self.transcript.path().display().to_string()),
            agent: info.agent.clone(),
            prompt_id: self.prompt_id(),
            effort: self.opts.effort.clone(),
        };
        let agent_tool = AgentTool {
            core: self,
            parent: info,
        };
        let skill_tool = SkillTool { core: self };
        let local: Option<&dyn LocalTool> = match name {
            "Agent" | "Task" => Some(&agent_tool),
            "Skill" => Some(&skill_tool),
            _ => None,
        };
        let outcome = self
            .session
            .call_tool_with(name, input.clone(), self.asker.as_ref(), &meta, local)
            .await;
        let mut ends_turn = None;
        let (content, is_error, mut context) = match outcome {
            Err(e) => (
                format!("<tool_use_error>{e}</tool_use_error>"),
                true,
                Vec::new(),
            ),
            Ok(o) => {
                let r = match &o.status {
                    ToolStatus::Ok { content, .. } => (content.clone(), false),
                    ToolStatus::InvalidInput { message } => {
                        (format!("<tool_use_error>{message}</tool_use_error>"), true)
                    }
                    // A deny rule's refusal and an unanswerable ask, as `claude -p` words them.
                    ToolStatus::Denied { message } => (
                        crate::session::pipeline::claude_denial(&o)
                            .unwrap_or_else(|| message.clone()),
                        true,
                    ),
                    ToolStatus::Failed { message } => (message.clone(), true),
                    ToolStatus::Decided => (String::new(), true),
                };
                let context = o.additional_context.clone();
                ends_turn.clone_from(&o.ends_turn);
                let touched = matches!(o.status, ToolStatus::Ok { .. })
                    .then(|| {
                        o.input
                            .get("file_path")
                            .and_then(Value::as_str)
                            .map(PathBuf::from)
                    })
                    .flatten();
                self.observer.event(&LoopEvent::ToolCall {
                    outcome: Box::new(o),
                    agent: info.agent_type(),
                });
                let mut context = context;
                if let Some(file) = touched {
                    context.extend(self.touch(&file, info).await);
                }
                (r.0, r.1, context)
            }
        };
        context.retain(|c| !c.trim().is_empty());
        CallResult {
            ends_turn,
            batch_entry: entry(&content),
            block: Block::ToolResult {
                tool_use_id: id.to_string(),
                content,
                is_error,
            },
            context,
        }
    }

    /// A file the model read or changed may bring nested CLAUDE.md files and path-scoped rules
    /// into context, as in Claude Code; `InstructionsLoaded` fires for each.
    async fn touch(&self, file: &std::path::Path, info: &FrameInfo) -> Vec<String> {
        let path = self.session.cwd.join(file);
        let loaded = match self.context.lock() {
            Ok(mut ctx) => ctx.touch(&path),
            Err(_) => return Vec::new(),
        };
        let mut out = Vec::new();
        for f in loaded {
            let mut payload = f.hook_fields();
            payload.retain(|_, v| !v.is_null());
            self.fire(Event::InstructionsLoaded, payload, info.agent.as_ref())
                .await;
            out.push(format!(
                "Contents of {}:\n\n{}",
                f.path.display(),
                f.content.trim_end()
            ));
        }
        out
    }

    async fn render_skill(&self, name: &str, args: &str) -> Result<String, String> {
        let session = self.session.clone();
        let context = self.context.clone();
        let (name, args) = (name.to_string(), args.to_string());
        let opts = crate::instructions::SkillRenderOptions {
            session_id: Some(session.session_id.clone()),
            ..Default::default()
        };
        // Rendering runs a skill's `!` commands on a runtime of its own; it must not block
        // this one.
        tokio::task::spawn_blocking(move || {
            let ctx = context
                .lock()
                .map_err(|_| "the context is unusable".to_string())?;
            crate::instructions::render_skill(&session, &ctx, &name, &args, &opts)
                .map(|r| r.content)
                .map_err(|e| e.to_string())
        })
        .await
        .map_err(|e| format!("rendering the skill failed: {e}"))?
    }

    async fn run_skill(&self, input: &Value) -> Result<ToolCallOutcome, String> {
        let name = input
            .get("skill")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let args = input
            .get("args")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let (full, disabled) = match self.context.lock() {
            Ok(c) => match c.find_skill(name) {
                Ok(s) => (s.name.clone(), s.disable_model_invocation),
                Err(e) => return Ok(ToolCallOutcome::Failed(e.to_string())),
            },
            Err(_) => return Err("the context is unusable".into()),
        };
        if disabled {
            return Ok(ToolCallOutcome::Failed(format!(
                "skill {full} has disable-model-invocation set: only the user can run it"
            )));
        }
        let rendered = self.render_skill(&full, args).await;
        if rendered.is_ok() {
            for w in self.session.monitors().skill_invoked(&full) {
                self.observer.event(&LoopEvent::Warning { message: w });
            }
        }
        Ok(match rendered {
            Ok(content) => ToolCallOutcome::Ok {
                content: format!("Launching skill: {full}\n\n{content}"),
                structured: Some(json!({"success": true, "commandName": full}).to_string()),
            },
            Err(e) => ToolCallOutcome::Failed(e),
        })
    }

    async fn run_subagent(
        &self,
        parent: &FrameInfo,
        input: &Value,
    ) -> Result<ToolCallOutcome, String> {
        let s = |k: &str| input.get(k).and_then(Value::as_str).unwrap_or_default();
        let (ty, task, description) = (s("subagent_type"), s("prompt"), s("description"));
        // The main conversation run as an agent starts only the subagents its `tools` lists
        // in `Agent(a, b)`, as Claude Code's `--agent` does.
        if parent.agent.is_none()
            && let Some(allowed) = self.main_agent.as_ref().and_then(prompt::spawnable)
            && !allowed.iter().any(|a| a == ty)
        {
            return Ok(ToolCallOutcome::Failed(format!(
                "Agent type '{ty}' is not one this agent may start. Allowed: {}",
                allowed.join(", ")
            )));
        }
        let agent = match self.context.lock() {
            Ok(ctx) => match ctx.agents.iter().find(|a| a.name == ty) {
                Some(a) => a.clone(),
                None => {
                    let names: Vec<&str> = ctx.agents.iter().map(|a| a.name.as_str()).collect();
                    return Ok(ToolCallOutcome::Failed(format!(
                        "Agent type '{ty}' not found. Available agents: {}",
                        names.join(", ")
                    )));
                }
            },
            Err(_) => return Err("the context is unusable".into()),
        };
        let depth = parent.depth + 1;
        let mut tools: Vec<ToolSpec> = self
            .tools
            .iter()
            .filter(|t| prompt::agent_allows(&agent, &t.name))
            .filter(|t| t.name != "Agent" || depth < self.opts.max_subagent_depth)
            .cloned()
            .collect();
        tools.retain(|t| t.name != "Skill" || prompt::agent_allows(&agent, "Skill"));
        if tools.is_empty() && agent.tools.is_some() {
            return Ok(ToolCallOutcome::Failed(format!(
                "agent {ty}: its `tools` list names no tool this session has"
            )));
        }
        let agent_id = format!(
            "a{}",
            &crate::instructions::new_session_id().replace('-', "")[..16]
        );
        let ids = (agent_id.clone(), ty.to_string());
        let mut payload = Map::new();
        payload.insert("agent_id".into(), json!(agent_id));
        payload.insert("agent_type".into(), json!(ty));
        let r = self.fire(Event::SubagentStart, payload, None).await;
        let path = self
            .transcript
            .path()
            .with_extension("")
            .join("subagents")
            .join(format!("agent-{agent_id}.jsonl"));
        let transcript = Arc::new(Transcript::new(
            path,
            &self.session.session_id,
            &self.session.cwd,
            Some(agent_id.clone()),
        ));
        let model = match (s("model"), agent.model.as_deref()) {
            (m, _) if !m.is_empty() => m.to_string(),
            (_, Some(m)) if m != "inherit" => m.to_string(),
            _ => parent.model.clone(),
        };
        let info = FrameInfo {
            caller: Caller::Subagent(ty.to_string()),
            agent: Some(ids),
            tools,
            model,
            depth,
            transcript,
            max_turns: agent
                .max_turns
                .and_then(|n| u32::try_from(n).ok())
                .unwrap_or(self.opts.max_turns),
            system: prompt::subagent_prompt(&self.session, &agent),
        };
        let reminders: Vec<String> = r
            .merged
            .additional_context
            .iter()
            .map(|c| prompt::reminder(&format!("SubagentStart hook additional context: {c}")))
            .collect();
        let first = user_message(&reminders, task);
        info.transcript.message(&first, None, None);
        let mut messages = vec![first];
        self.observer.event(&LoopEvent::SubagentStarted {
            agent_id: agent_id.clone(),
            agent_type: ty.to_string(),
            description: description.to_string(),
        });
        let end = Box::pin(self.run_frame(&info, &mut messages)).await;
        self.observer.event(&LoopEvent::SubagentStopped {
            agent_id: agent_id.clone(),
            agent_type: ty.to_string(),
            end: end.clone(),
        });
        let structured = json!({
            "agent_id": agent_id,
            "agent_type": ty,
            "transcript_path": info.transcript.path().display().to_string(),
        })
        .to_string();
        Ok(match end {
            TurnEnd::Completed { text } => ToolCallOutcome::Ok {
                content: text,
                structured: Some(structured),
            },
            TurnEnd::MaxTurns { turns } => ToolCallOutcome::Failed(format!(
                "agent {ty} stopped after {turns} turns without finishing"
            )),
            TurnEnd::StopFailure { message, .. } => {
                ToolCallOutcome::Failed(format!("agent {ty} failed: {message}"))
            }
            TurnEnd::HookStopped { reason } | TurnEnd::PromptBlocked { reason } => {
                ToolCallOutcome::Failed(format!("agent {ty} was stopped: {reason}"))
            }
        })
    }
}

struct AgentTool<'a> {
    core: &'a Core,
    parent: &'a FrameInfo,
}

impl LocalTool for AgentTool<'_> {
    fn input_schema(&self) -> Value {
        prompt::agent_schema()
    }

    fn run<'a>(&'a self, input: &'a Value) -> LocalToolFuture<'a> {
        Box::pin(self.core.run_subagent(self.parent, input))
    }
}

struct SkillTool<'a> {
    core: &'a Core,
}

impl LocalTool for SkillTool<'_> {
    fn input_schema(&self) -> Value {
        prompt::skill_schema()
    }

    fn run<'a>(&'a self, input: &'a Value) -> LocalToolFuture<'a> {
        Box::pin(self.core.run_skill(input))
    }
}

/// The fields of a typed hook payload, to which `fire` adds the common ones.
fn payload_map(payload: &impl Serialize) -> Map<String, Value> {
    match serde_json::to_value(payload) {
        Ok(Value::Object(m)) => m,
        // A payload struct always serializes to an object.
        _ => Map::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slash_commands() {
        assert_eq!(slash_command("/review src"), Some(("review", "src")));
        assert_eq!(slash_command("  /fmt:check"), Some(("fmt:check", "")));
        assert_eq!(slash_command("/usr/bin/env is odd"), None);
        assert_eq!(slash_command("fix it"), None);
    }
}
