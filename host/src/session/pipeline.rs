//! The one tool-call pipeline, [`Session::call_tool`]:
//!
//! ```text
//! validate input against the tool's schema      (a missing field is an error, as Claude Code reports it)
//!   ▼
//! PreToolUse hooks                               (updatedInput applied; a hook deny wins)
//!   ▼
//! rules and mode                                 (deny > ask > allow; a hook allow never beats a deny/ask rule)
//!   ▼ ask
//! Asker                                          (allow once / always / deny; nobody to ask ⇒ deny)
//!   ▼ allow
//! execute in a fresh sandbox                     (grant, then rules, at every capability use)
//!   ▼
//! PostToolUse | PostToolUseFailure hooks
//! ```
//!
//! Every step leaves a [`TraceStep`] (who answered, from which plugin or file, what, how long).
//! `warden check` runs the pipeline up to the decision ([`Session::decide_tool`]), `warden
//! tool` runs all of it, and so will the MCP server and the agent loop.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;
use serde_json::{Value, json};
use warden_hooks::{DispatchResult, Event, HandlerReport, Outcome, dispatch};
use warden_permissions::{Decision, HookVerdict};

use super::{Session, SessionError};
use crate::runtime::{Limits, ToolCallOutcome};
use crate::tools::ToolResponse;

/// A step of the pipeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Step {
    /// Input checked against the tool's schema.
    Validate,
    /// A PreToolUse hook handler.
    PreToolUse,
    /// The permission rules and mode.
    Rules,
    /// A PermissionRequest hook handler, asked before the user.
    PermissionRequest,
    /// The user (or whoever answers asks).
    Ask,
    /// The tool ran.
    Execute,
    /// A PostToolUse hook handler.
    PostToolUse,
    /// A PostToolUseFailure hook handler.
    PostToolUseFailure,
}

/// One line of a call's trace.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TraceStep {
    /// Which step.
    pub step: Step,
    /// Who answered: a hook handler's label, a rule as written, the tool's name.
    pub by: String,
    /// Where that came from: a plugin id, a settings file, `built-in`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Its answer (`allow`, `deny`, `ask`, `ok`, `failed`, `none`…).
    pub decision: String,
    /// Its reason or message.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// Wall time in microseconds.
    pub micros: u64,
}

/// A question for whoever can approve a tool call.
#[derive(Debug, Clone, Copy)]
pub struct AskRequest<'a> {
    /// The tool.
    pub tool: &'a str,
    /// Its input (after hooks rewrote it).
    pub input: &'a Value,
    /// Why approval is needed.
    pub reason: &'a str,
    /// The rule that asks, if one does.
    pub rule: Option<&'a str>,
}

/// An answer to an [`AskRequest`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AskAnswer {
    /// Run it, this once.
    AllowOnce,
    /// Run it, and do not ask again for the same call in this session. (Writing the rule to
    /// `.claude/settings.local.json`, as Claude Code does, belongs to the interactive asker.)
    AllowAlways,
    /// Do not run it.
    Deny,
}

/// The future an [`Asker`] answers with.
pub type AskFuture<'a> = Pin<Box<dyn Future<Output = AskAnswer> + Send + 'a>>;

/// Whoever answers a rule's `ask`: a terminal prompt, an MCP elicitation, an embedder's
/// callback. Asking may wait on a person or a remote client, so it is asynchronous.
pub trait Asker: Send + Sync {
    /// Answers one question.
    fn ask<'a>(&'a self, request: AskRequest<'a>) -> AskFuture<'a>;
    /// Who answered, for traces.
    fn label(&self) -> &str {
        "asker"
    }
}

/// For runs where nobody can be asked: every `ask` is a denial that says so.
#[derive(Debug, Clone, Copy, Default)]
pub struct DenyAsker;

impl Asker for DenyAsker {
    fn ask<'a>(&'a self, _: AskRequest<'a>) -> AskFuture<'a> {
        Box::pin(std::future::ready(AskAnswer::Deny))
    }

    fn label(&self) -> &str {
        "nobody to ask"
    }
}

/// What the caller knows of a call that the pipeline does not: the model's `tool_use_id`, the
/// transcript, and the subagent it runs in. Hooks see all of it.
#[derive(Debug, Clone, Default)]
pub struct CallMeta {
    /// The model's id for the call (default: a fresh `toolu_warden_…`).
    pub tool_use_id: Option<String>,
    /// The conversation's transcript (`transcript_path`; empty when none is kept).
    pub transcript_path: Option<String>,
    /// Inside a subagent: its `agent_id` and `agent_type`.
    pub agent: Option<(String, String)>,
    /// The id of the user prompt whose turn made the call (`prompt_id`).
    pub prompt_id: Option<String>,
    /// The model's effort level (`effort: {level}` in tool events), when it has one.
    pub effort: Option<String>,
}

/// The future a [`LocalTool`] answers with.
pub type LocalToolFuture<'a> =
    Pin<Box<dyn Future<Output = Result<ToolCallOutcome, String>> + Send + 'a>>;

/// A tool the caller runs itself rather than a component (the agent loop's `Agent` and
/// `Skill`): it is validated, hooked, decided and asked about like every other tool; only the
/// execution step is the caller's.
pub trait LocalTool: Send + Sync {
    /// The JSON Schema of its input.
    fn input_schema(&self) -> Value;
    /// Runs an allowed call.
    fn run<'a>(&'a self, input: &'a Value) -> LocalToolFuture<'a>;
}

pub use warden_vocab::ToolStatus;

/// Everything one call through the pipeline produced.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolOutcome {
    /// The tool.
    pub tool: String,
    /// The `tool_use_id` hooks saw.
    pub tool_use_id: String,
    /// The input as it was decided on and run (after `updatedInput`).
    pub input: Value,
    /// The permission decision (before any asking).
    pub decision: Decision,
    /// Why.
    pub reason: String,
    /// The rule that decided, as written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// Where the deciding rule or hook came from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// How it ended.
    #[serde(flatten)]
    pub status: ToolStatus,
    /// Context hooks added for the model (`additionalContext`, PostToolUse block reasons).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub additional_context: Vec<String>,
    /// Every step.
    pub trace: Vec<TraceStep>,
    /// A `prompt` hook without `continueOnBlock` blocked this call (PreToolUse) or judged its
    /// result (PostToolUse): the conversation's turn ends after this batch, with this reason,
    /// as Claude Code ends it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ends_turn: Option<String>,
    /// For an MCP tool: the server's name and where it was configured, as hooks see them in
    /// `mcp_server`.
    #[serde(skip)]
    mcp_server: Option<(String, String)>,
    /// For an MCP tool that answered: its content blocks (or its `structuredContent` as compact
    /// JSON), which hooks see as `tool_response`.
    #[serde(skip)]
    mcp_content: Option<Value>,
}

impl ToolOutcome {
    fn new(tool: &str, tool_use_id: String, input: Value) -> Self {
        ToolOutcome {
            tool: tool.to_string(),
            tool_use_id,
            input,
            decision: Decision::Allow,
            reason: String::new(),
            rule: None,
            source: None,
            status: ToolStatus::Decided,
            additional_context: Vec::new(),
            trace: Vec::new(),
            ends_turn: None,
            mcp_server: None,
            mcp_content: None,
        }
    }
}

fn micros(since: Instant) -> u64 {
    u64::try_from(since.elapsed().as_micros()).unwrap_or(u64::MAX)
}

/// How far to run.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Until {
    Decision,
    End,
}

impl Session {
    /// Runs the pipeline up to the decision: validation, PreToolUse hooks, rules and mode.
    /// Nothing is asked and nothing runs; an `ask` is reported as such.
    pub async fn decide_tool(
        self: &Arc<Self>,
        tool: &str,
        input: Value,
    ) -> Result<ToolOutcome, SessionError> {
        self.pipeline(
            tool,
            input,
            &DenyAsker,
            Until::Decision,
            &CallMeta::default(),
            None,
        )
        .await
    }

    /// Runs one tool call through the whole pipeline (see the module docs). `asker` answers
    /// the rules' `ask`s; [`DenyAsker`] where nobody can.
    pub async fn call_tool(
        self: &Arc<Self>,
        tool: &str,
        input: Value,
        asker: &dyn Asker,
    ) -> Result<ToolOutcome, SessionError> {
        self.pipeline(tool, input, asker, Until::End, &CallMeta::default(), None)
            .await
    }

    /// [`Session::call_tool`] for a conversation: `meta` gives the hooks the model's call id,
    /// the transcript and the subagent, and `local`, when the session has no tool of that
    /// name, runs the call in its place (see [`LocalTool`]).
    pub async fn call_tool_with(
        self: &Arc<Self>,
        tool: &str,
        input: Value,
        asker: &dyn Asker,
        meta: &CallMeta,
        local: Option<&dyn LocalTool>,
    ) -> Result<ToolOutcome, SessionError> {
        self.pipeline(tool, input, asker, Until::End, meta, local)
            .await
    }

    /// Runs a registered tool whose call was already allowed (by the rules, a hook or the
    /// user), in a fresh sandbox: what it does within its grant is approved, and only deny
    /// rules stop its accesses. No hooks run and nothing is asked; the caller has decided.
    pub async fn execute_approved(
        self: &Arc<Self>,
        tool: &super::RegisteredTool,
        input: &Value,
    ) -> Result<Result<ToolCallOutcome, String>, SessionError> {
        if tool.source == super::ToolSource::Lsp {
            return Ok(crate::lsp::run_tool(self, input).await);
        }
        let rt = self.runtime()?;
        let run = match tool.component(self) {
            Ok(c) => {
                let ctx = self.call_context(&self.cwd, &tool.grant, self.guest_policy(true));
                let deadline = match self.options().tool_deadline {
                    Some(cap) => cap.min(tool.deadline()),
                    None => tool.deadline(),
                };
                let limits = Limits::with_deadline(deadline);
                rt.call_tool(&c, &input.to_string(), &limits, ctx)
                    .await
                    .map(|c| c.outcome)
                    .map_err(|e| e.to_string())
            }
            Err(e) => Err(e),
        };
        // A Write or Edit gets what the file's language server now reports, as Claude Code
        // attaches it; nothing is started or waited for when no plugin configures a server.
        Ok(match (&tool.source, run) {
            (
                super::ToolSource::Builtin(b),
                Ok(ToolCallOutcome::Ok {
                    content,
                    structured,
                }),
            ) => Ok(ToolCallOutcome::Ok {
                content: crate::lsp::with_new_diagnostics(self, *b, input, content).await,
                structured,
            }),
            (_, run) => run,
        })
    }

    async fn pipeline(
        self: &Arc<Self>,
        tool_name: &str,
        input: Value,
        asker: &dyn Asker,
        until: Until,
        meta: &CallMeta,
        local: Option<&dyn LocalTool>,
    ) -> Result<ToolOutcome, SessionError> {
        let input = with_defaults(tool_name, input);
        let tools = self.tools();
        let tool = tools.get(tool_name);
        let local = if tool.is_none() { local } else { None };
        // A configured MCP server's tool, when it is to be run: only its server is started.
        // Deciding alone (`warden check`) never starts a server.
        let mcp = match tool {
            None if until == Until::End && tool_name.starts_with("mcp__") => {
                match self.mcp().find(tool_name).await {
                    Ok(found) => found,
                    Err(message) => {
                        return Err(SessionError::Mcp {
                            tool: tool_name.to_string(),
                            message,
                        });
                    }
                }
            }
            _ => None,
        };
        // Claude Code's own tools and MCP tools can be decided on even when this session
        // cannot run them (`warden check --tool WebFetch`); anything else is a typo.
        let decidable = tool.is_some()
            || local.is_some()
            || warden_permissions::KNOWN_TOOLS.contains(&tool_name)
            || tool_name.starts_with("mcp__");
        if !decidable || (tool.is_none() && mcp.is_none() && local.is_none() && until == Until::End)
        {
            let known = tools.names();
            let suggestion = closest_name(
                tool_name,
                known
                    .iter()
                    .map(String::as_str)
                    .chain(warden_permissions::KNOWN_TOOLS.iter().copied()),
            );
            return Err(SessionError::UnknownTool {
                name: tool_name.to_string(),
                known,
                suggestion,
            });
        }
        if !input.is_object() {
            return Err(SessionError::InputNotObject {
                tool: tool_name.to_string(),
            });
        }
        let rules = self.rules()?;
        let tool_use_id = meta.tool_use_id.clone().unwrap_or_else(|| {
            format!(
                "toolu_warden_{}",
                &crate::instructions::new_session_id()[..8]
            )
        });
        let mut out = ToolOutcome::new(tool_name, tool_use_id, input);
        if let Some((m, _)) = &mcp
            && let Some(server) = self.mcp().by_prefix(&m.server)
        {
            out.mcp_server = Some((
                server.entry.name.clone(),
                server.entry.scope.as_str().to_string(),
            ));
        }

        // 1. The input must fit the tool's schema.
        let t = Instant::now();
        let source = tool
            .map(|t| t.source.label())
            .or_else(|| {
                mcp.as_ref()
                    .map(|(m, _)| format!("MCP server {}", m.server))
            })
            .or_else(|| local.map(|_| "built-in".to_string()));
        let schema: Option<Value> = mcp
            .as_ref()
            .map(|(m, _)| Value::Object((*m.tool.input_schema).clone()))
            .or_else(|| local.map(LocalTool::input_schema));
        let problem = match (tool, &schema) {
            (Some(tool), _) => self.validate(tool, &out.input).await?,
            (None, Some(schema)) => validate_against(tool_name, schema, &out.input),
            (None, None) => None,
        };
        out.trace.push(TraceStep {
            step: Step::Validate,
            by: tool_name.to_string(),
            source: source.clone(),
            decision: match (&problem, tool.is_some() || schema.is_some()) {
                (Some(_), _) => "invalid",
                (None, true) => "ok",
                (None, false) => "no schema",
            }
            .into(),
            detail: problem.clone(),
            micros: micros(t),
        });
        if let Some(message) = problem {
            out.decision = Decision::Deny;
            out.reason = message.clone();
            out.status = ToolStatus::InvalidInput { message };
            return Ok(out);
        }

        // 2. PreToolUse hooks.
        let dopts = self.dispatch_options()?;
        let pre_input = self.tool_event(Event::PreToolUse, &out, rules.mode().as_str(), None, meta);
        let pre = dispatch(Event::PreToolUse, &pre_input, self.hook_config(), &dopts).await;
        trace_handlers(&mut out.trace, Step::PreToolUse, &pre);
        if let Some(problem) = pre.failed_wasm_guard() {
            // Fail closed, as `warden hook` does: the rules must not decide alone a call a
            // guard was meant to judge.
            out.decision = Decision::Deny;
            out.reason = problem.clone();
            out.source = Some("PreToolUse hooks".into());
            out.status = ToolStatus::Denied { message: problem };
            return Ok(out);
        }
        if pre.merged.continue_on_block == Some(false) {
            out.ends_turn = Some(ends_turn_reason(&pre));
        }
        let verdict = pre.merged.permission_verdict();
        out.additional_context
            .extend(pre.merged.additional_context.iter().cloned());
        let hook: Option<HookVerdict> = verdict.decision;
        if let Some(updated) = verdict.updated_input
            && updated.is_object()
        {
            // Rules and the tool see the rewritten input, as in Claude Code; it must still fit.
            out.input = updated;
            let problem = match (tool, &schema) {
                (Some(tool), _) => self.validate(tool, &out.input).await?,
                (None, Some(schema)) => validate_against(tool_name, schema, &out.input),
                (None, None) => None,
            };
            if let Some(message) = problem {
                out.decision = Decision::Deny;
                out.reason = format!("a PreToolUse hook's updatedInput is invalid: {message}");
                out.status = ToolStatus::InvalidInput { message };
                return Ok(out);
            }
        }
        let deciding_hook = hook
            .and_then(HookVerdict::decision)
            .and_then(|d| deciding_handler(&pre, d));

        // 3. Rules and mode.
        let t = Instant::now();
        let decided = rules.decide(tool_name, &out.input, hook);
        out.trace.push(TraceStep {
            step: Step::Rules,
            by: decided
                .rule
                .clone()
                .unwrap_or_else(|| format!("mode {}", rules.mode().as_str())),
            source: decided.source.clone(),
            decision: decided.decision.as_str().into(),
            detail: Some(decided.reason.clone()),
            micros: micros(t),
        });
        out.decision = decided.decision;
        // A hook's denial is told in Claude Code's words, which name the hook and its reason.
        let mut denial: Option<String> = None;
        match (
            &deciding_hook,
            hook.and_then(HookVerdict::decision),
            decided.decision,
        ) {
            // A hook's deny, or a hook's allow/ask that the rules let stand, is the hook's
            // decision: name the hook and keep its reason. An allow rule agreeing with a
            // hook's allow is kept as `rule`, but the hook decided (it allows without it).
            (Some((label, source)), Some(h), v)
                if h == v && (decided.rule.is_none() || v == Decision::Allow) =>
            {
                out.reason = verdict
                    .reason
                    .clone()
                    .unwrap_or_else(|| decided.reason.clone());
                if v == Decision::Deny {
                    denial = Some(hook_denial(tool_name, label, &out.reason));
                }
                out.rule = decided.rule.clone();
                out.source = Some(format!("PreToolUse hook {label} ({source})"));
            }
            _ => {
                out.reason = decided.reason.clone();
                out.rule = decided.rule.clone();
                out.source = decided.source.clone();
            }
        }

        if until == Until::Decision {
            if decided.decision == Decision::Deny {
                out.status = ToolStatus::Denied {
                    message: out.reason.clone(),
                };
            }
            return Ok(out);
        }

        // 4. Ask.
        match decided.decision {
            Decision::Deny => {
                // `out.decision` is already the rules' deny.
                out.status = ToolStatus::Denied {
                    message: denial.unwrap_or_else(|| out.reason.clone()),
                };
                return Ok(out);
            }
            Decision::Ask => 'ask: {
                // PermissionRequest hooks answer before anyone is asked, as in Claude Code.
                match self
                    .permission_request(
                        &mut out,
                        rules.mode().as_str(),
                        meta,
                        &dopts,
                        tool,
                        &schema,
                    )
                    .await?
                {
                    Some(AskAnswer::Deny) => return Ok(out),
                    Some(_) => break 'ask,
                    None => {}
                }
                let t = Instant::now();
                let answer = asker
                    .ask(AskRequest {
                        tool: tool_name,
                        input: &out.input,
                        reason: &out.reason,
                        rule: out.rule.as_deref(),
                    })
                    .await;
                out.trace.push(TraceStep {
                    step: Step::Ask,
                    by: asker.label().to_string(),
                    source: None,
                    decision: match answer {
                        AskAnswer::AllowOnce => "allow once",
                        AskAnswer::AllowAlways => "allow always",
                        AskAnswer::Deny => "deny",
                    }
                    .into(),
                    detail: None,
                    micros: micros(t),
                });
                if answer == AskAnswer::Deny {
                    let m = format!(
                        "{tool_name} needs approval ({}) and {}; nothing was run",
                        out.reason,
                        if asker.label() == DenyAsker.label() {
                            "nobody can be asked in this run"
                        } else {
                            "it was refused"
                        }
                    );
                    out.status = ToolStatus::Denied { message: m };
                    return Ok(out);
                }
            }
            Decision::Allow => {}
        }

        // 5. Execute in a fresh sandbox (or, for an MCP tool, on its server).
        let t = Instant::now();
        let run = match (tool, &mcp) {
            (Some(tool), _) => self.execute_approved(tool, &out.input).await?,
            (None, Some((m, conn))) => {
                let args = out.input.as_object().cloned().unwrap_or_default();
                match conn.call(&m.tool.name, args, None).await {
                    Ok(result) => {
                        let mut text = crate::mcp::client::result_text(&result);
                        out.mcp_content = serde_json::to_value(&result.content).ok();
                        // With `structuredContent`, Claude Code gives the model and hooks that,
                        // as compact JSON, in place of the content blocks.
                        if let Some(structured) = &result.structured_content
                            && result.is_error != Some(true)
                        {
                            text = structured.to_string();
                            out.mcp_content = Some(Value::String(text.clone()));
                        }
                        if result.is_error == Some(true) {
                            Ok(ToolCallOutcome::Failed(text))
                        } else {
                            Ok(ToolCallOutcome::Ok {
                                content: text,
                                structured: result
                                    .structured_content
                                    .as_ref()
                                    .map(Value::to_string),
                            })
                        }
                    }
                    Err(e) => Err(e.to_string()),
                }
            }
            (None, None) if local.is_some() => match local {
                Some(l) => l.run(&out.input).await,
                None => Err("no tool".into()),
            },
            (None, None) => {
                // Not reachable: only runnable tools get past the first check with `Until::End`.
                return Err(SessionError::UnknownTool {
                    name: tool_name.to_string(),
                    known: tools.names(),
                    suggestion: None,
                });
            }
        };
        let duration_ms = u64::try_from(t.elapsed().as_millis()).unwrap_or(u64::MAX);
        let (status, failure) = match run {
            Ok(ToolCallOutcome::Ok {
                content,
                structured,
            }) => {
                let structured: Option<Value> =
                    structured.and_then(|s| serde_json::from_str(&s).ok());
                // A built-in tool's result in its one typed shape (see `tools::ToolResponse`).
                let (content, structured) = if tool
                    .is_some_and(|t| matches!(t.source, super::ToolSource::Builtin(_)))
                {
                    let typed = ToolResponse::from_result(tool_name, &content, structured.as_ref());
                    if typed.is_typed() {
                        (typed.model_text(&content), Some(typed.to_value()))
                    } else {
                        (content, structured)
                    }
                } else {
                    (content, structured)
                };
                (
                    ToolStatus::Ok {
                        content,
                        structured,
                    },
                    None,
                )
            }
            Ok(ToolCallOutcome::InvalidInput(m)) => {
                (ToolStatus::InvalidInput { message: m.clone() }, Some(m))
            }
            Ok(ToolCallOutcome::Denied(m)) => (ToolStatus::Denied { message: m.clone() }, Some(m)),
            Ok(ToolCallOutcome::Failed(m)) | Err(m) => {
                (ToolStatus::Failed { message: m.clone() }, Some(m))
            }
        };
        out.trace.push(TraceStep {
            step: Step::Execute,
            by: tool_name.to_string(),
            source: source.clone(),
            decision: match &status {
                ToolStatus::Ok { .. } => "ok",
                ToolStatus::Denied { .. } => "denied",
                ToolStatus::InvalidInput { .. } => "invalid",
                _ => "failed",
            }
            .into(),
            detail: failure.clone(),
            micros: micros(t),
        });
        out.status = status;

        // 6. PostToolUse / PostToolUseFailure.
        let (event, step) = match &failure {
            None => (Event::PostToolUse, Step::PostToolUse),
            Some(_) => (Event::PostToolUseFailure, Step::PostToolUseFailure),
        };
        if !self.hook_config().hooks(event).is_empty() {
            let mut post_input = self.tool_event(event, &out, rules.mode().as_str(), failure, meta);
            if let Some(o) = post_input.as_object_mut() {
                o.insert("duration_ms".into(), json!(duration_ms));
            }
            let post = dispatch(event, &post_input, self.hook_config(), &dopts).await;
            trace_handlers(&mut out.trace, step, &post);
            if post.merged.continue_on_block == Some(false) {
                out.ends_turn = Some(ends_turn_reason(&post));
            }
            out.additional_context
                .extend(post.merged.block_reasons.iter().cloned());
            out.additional_context
                .extend(post.merged.additional_context.iter().cloned());
        }
        Ok(out)
    }

    /// Fires `PermissionRequest` for a call the rules would ask about. `Some(AllowOnce)`: a
    /// hook allowed it (its `updatedInput` applied and checked); `Some(Deny)`: a hook denied
    /// it, or its `updatedInput` does not fit, and `out` says why; `None`: no hook answered,
    /// so the asker is asked.
    async fn permission_request(
        self: &Arc<Self>,
        out: &mut ToolOutcome,
        mode: &str,
        meta: &CallMeta,
        dopts: &warden_hooks::DispatchOptions,
        tool: Option<&super::RegisteredTool>,
        schema: &Option<Value>,
    ) -> Result<Option<AskAnswer>, SessionError> {
        if self
            .hook_config()
            .hooks(Event::PermissionRequest)
            .is_empty()
        {
            return Ok(None);
        }
        let mut input = self.tool_event(Event::PermissionRequest, out, mode, None, meta);
        if let Some(o) = input.as_object_mut() {
            // Claude Code sends no `tool_use_id` with a PermissionRequest.
            o.remove("tool_use_id");
            o.insert(
                "permission_suggestions".into(),
                permission_suggestions(&out.tool, &out.input, &self.cwd),
            );
        }
        let r = dispatch(Event::PermissionRequest, &input, self.hook_config(), dopts).await;
        trace_handlers(&mut out.trace, Step::PermissionRequest, &r);
        let verdict = r.merged.permission_verdict();
        let deciding = |d: &str| {
            r.handlers.iter().find_map(|h| {
                let said = h
                    .result
                    .json
                    .as_ref()
                    .and_then(|j| j.get("hookSpecificOutput"))
                    .and_then(|h| h.pointer("/decision/behavior"))
                    .and_then(Value::as_str);
                (said == Some(d))
                    .then(|| format!("PermissionRequest hook {} ({})", h.label, handler_source(h)))
            })
        };
        match verdict.decision.and_then(HookVerdict::decision) {
            Some(Decision::Allow) => {
                if let Some(updated) = verdict.updated_input.filter(Value::is_object) {
                    let problem = match (tool, schema) {
                        (Some(tool), _) => self.validate(tool, &updated).await?,
                        (None, Some(schema)) => validate_against(&out.tool, schema, &updated),
                        (None, None) => None,
                    };
                    if let Some(message) = problem {
                        out.decision = Decision::Deny;
                        out.reason = format!(
                            "a PermissionRequest hook's updatedInput is invalid: {message}"
                        );
                        out.status = ToolStatus::InvalidInput { message };
                        return Ok(Some(AskAnswer::Deny));
                    }
                    out.input = updated;
                }
                out.source = deciding("allow").or(out.source.take());
                Ok(Some(AskAnswer::AllowOnce))
            }
            Some(Decision::Deny) => {
                let message = verdict
                    .reason
                    .filter(|m| !m.trim().is_empty())
                    .unwrap_or_else(|| format!("Permission to use {} has been denied.", out.tool));
                out.reason.clone_from(&message);
                out.source = deciding("deny").or(out.source.take());
                if verdict.interrupt {
                    out.ends_turn = Some(message.clone());
                }
                out.status = ToolStatus::Denied { message };
                Ok(Some(AskAnswer::Deny))
            }
            _ => Ok(None),
        }
    }

    /// `None` when `input` fits the tool's schema, else Claude Code's message for the first
    /// problem.
    async fn validate(
        self: &Arc<Self>,
        tool: &super::RegisteredTool,
        input: &Value,
    ) -> Result<Option<String>, SessionError> {
        let validator = match tool.validator(self).await {
            Ok(v) => v,
            // A tool that cannot describe itself cannot be run either; say so as a failure
            // of its input check rather than run it unchecked.
            Err(e) => return Ok(Some(e)),
        };
        let issues: Vec<String> = validator
            .iter_errors(input)
            .map(|e| describe_issue(&e))
            .collect();
        if issues.is_empty() {
            return Ok(None);
        }
        let n = issues.len();
        Ok(Some(format!(
            "InputValidationError: {} failed due to the following {}:\n{}",
            tool.name,
            if n == 1 { "issue" } else { "issues" },
            issues.join("\n")
        )))
    }

    /// The hook input of a tool event for `out`.
    fn tool_event(
        &self,
        event: Event,
        out: &ToolOutcome,
        mode: &str,
        failure: Option<String>,
        meta: &CallMeta,
    ) -> Value {
        let mut v = json!({
            "session_id": self.session_id,
            "transcript_path": meta.transcript_path.clone().unwrap_or_default(),
            "cwd": self.cwd.display().to_string(),
            "permission_mode": mode,
            "hook_event_name": event.as_str(),
            "tool_name": out.tool,
            "tool_input": out.input,
            "tool_use_id": out.tool_use_id,
        });
        if let Some(o) = v.as_object_mut() {
            match (event, failure) {
                (Event::PostToolUseFailure, Some(error)) => {
                    o.insert("error".into(), Value::String(error));
                    o.insert("is_interrupt".into(), Value::Bool(false));
                }
                (Event::PostToolUse, _) if out.mcp_content.is_some() => {
                    // An MCP tool's response is its content blocks, as Claude Code sends it.
                    o.insert(
                        "tool_response".into(),
                        out.mcp_content.clone().unwrap_or(Value::Null),
                    );
                }
                (Event::PostToolUse, _) => {
                    // The tool's result in its typed shape (see `tools::ToolResponse`).
                    let response = match &out.status {
                        ToolStatus::Ok {
                            structured,
                            content,
                        } => ToolResponse::from_result(&out.tool, content, structured.as_ref())
                            .to_value(),
                        _ => Value::Null,
                    };
                    o.insert("tool_response".into(), response);
                }
                _ => {}
            }
            if let Some(id) = &meta.prompt_id {
                o.insert("prompt_id".into(), Value::String(id.clone()));
            }
            if let Some(level) = &meta.effort {
                o.insert("effort".into(), json!({ "level": level }));
            }
            if let Some((id, ty)) = &meta.agent {
                o.insert("agent_id".into(), Value::String(id.clone()));
                o.insert("agent_type".into(), Value::String(ty.clone()));
            }
            if let Some((name, source)) = &out.mcp_server {
                o.insert(
                    "mcp_server".into(),
                    json!({ "name": name, "source": source }),
                );
            }
        }
        v
    }
}

/// Checks an MCP or local tool's input against the schema it listed. A schema the validator
/// cannot compile is the server's problem, not the caller's: the call then goes unchecked,
/// and the server judges its own input, as it would under Claude Code.
fn validate_against(tool: &str, schema: &Value, input: &Value) -> Option<String> {
    let v = jsonschema::validator_for(schema).ok()?;
    let issues: Vec<String> = v.iter_errors(input).map(|e| describe_issue(&e)).collect();
    if issues.is_empty() {
        return None;
    }
    let n = issues.len();
    Some(format!(
        "InputValidationError: {tool} failed due to the following {}:\n{}",
        if n == 1 { "issue" } else { "issues" },
        issues.join("\n")
    ))
}

/// Claude Code's sentence for one schema problem.
fn describe_issue(e: &jsonschema::ValidationError<'_>) -> String {
    use jsonschema::error::ValidationErrorKind as K;
    let at = e.instance_path().to_string();
    let field = at.trim_start_matches('/').replace('/', ".");
    match e.kind() {
        K::Required { property } => {
            let p = property
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| property.to_string());
            let p = if field.is_empty() {
                p
            } else {
                format!("{field}.{p}")
            };
            format!("The required parameter `{p}` is missing")
        }
        K::AdditionalProperties { unexpected } => unexpected
            .iter()
            .map(|u| format!("An unexpected parameter `{u}` was provided"))
            .collect::<Vec<_>>()
            .join("\n"),
        K::Type { kind } => {
            let expected = match kind {
                jsonschema::error::TypeKind::Single(t) => t.to_string(),
                jsonschema::error::TypeKind::Multiple(ts) => format!("{ts:?}"),
            };
            let provided = warden_config::json_type_name(e.instance().as_ref());
            format!(
                "The parameter `{field}` type is expected as `{expected}` but provided as `{provided}`"
            )
        }
        _ if field.is_empty() => e.to_string(),
        _ => format!("The parameter `{field}` is invalid: {e}"),
    }
}

pub(crate) fn handler_decision(h: &HandlerReport) -> (String, Option<String>) {
    match &h.result.outcome {
        Outcome::Blocking { reason, .. } => ("deny".into(), Some(reason.clone())),
        Outcome::NonBlockingError { message } => ("error".into(), Some(message.clone())),
        Outcome::Cancelled => ("timed out".into(), None),
        Outcome::Async => ("async".into(), None),
        Outcome::Skipped { reason } => ("skipped".into(), Some(reason.clone())),
        Outcome::Success => {
            let json = h.result.json.as_ref();
            let specific = json
                .and_then(|j| j.get("hookSpecificOutput"))
                .and_then(Value::as_object);
            let decision = specific
                .and_then(|s| s.get("permissionDecision"))
                .or_else(|| json.and_then(|j| j.get("decision")))
                .and_then(Value::as_str);
            let reason = specific
                .and_then(|s| s.get("permissionDecisionReason"))
                .or_else(|| json.and_then(|j| j.get("reason")))
                .and_then(Value::as_str)
                .map(str::to_string);
            (decision.unwrap_or("none").to_string(), reason)
        }
    }
}

/// A handler's source with where it was declared: `Plugin Hooks (p@m) in /path/to/p`.
fn handler_source(h: &HandlerReport) -> String {
    match &h.origin {
        Some(o) => format!("{} in {o}", h.source),
        None => h.source.clone(),
    }
}

fn trace_handlers(trace: &mut Vec<TraceStep>, step: Step, result: &DispatchResult) {
    for h in &result.handlers {
        let (decision, detail) = handler_decision(h);
        trace.push(TraceStep {
            step,
            by: h.label.clone(),
            source: Some(handler_source(h)),
            decision,
            detail,
            micros: u64::try_from(h.elapsed.as_micros()).unwrap_or(u64::MAX),
        });
    }
}

/// The first handler whose own answer is the merged decision: (label, source).
fn deciding_handler(result: &DispatchResult, d: Decision) -> Option<(String, String)> {
    let want = d.as_str();
    result.handlers.iter().find_map(|h| {
        let (decision, _) = handler_decision(h);
        let same = decision == want || (want == "deny" && decision == "block");
        same.then(|| (h.label.clone(), handler_source(h)))
    })
}

/// The name in `names` closest to `name` (a typo's fix: same letters but case, or within
/// two edits), for "did you mean".
pub(crate) fn closest_name<'a>(name: &str, names: impl Iterator<Item = &'a str>) -> Option<String> {
    let lower = name.to_lowercase();
    let mut best: Option<(usize, &str)> = None;
    for n in names {
        let d = if n.to_lowercase() == lower {
            0
        } else {
            warden_vocab::text::edit_distance(&lower, &n.to_lowercase())
        };
        let limit = if name.chars().count() <= 3 { 1 } else { 2 };
        if d <= limit && best.is_none_or(|(b, _)| d < b) {
            best = Some((d, n));
        }
    }
    best.map(|(_, n)| n.to_string())
}

/// What the agent loop tells the model of a call refused before it ran, in the words of
/// `claude -p`, where they differ from the pipeline's (which name the rule, or say that
/// nobody could be asked, for `warden tool` and `warden mcp serve`): a deny rule's refusal,
/// and an ask nobody could answer. `None`: the pipeline's message stands.
pub(crate) fn claude_denial(out: &ToolOutcome) -> Option<String> {
    if !matches!(out.status, ToolStatus::Denied { .. }) {
        return None;
    }
    let last = out.trace.last()?;
    match last.step {
        Step::Ask if last.by == DenyAsker.label() => Some(unanswered_ask(&out.tool)),
        Step::Rules if last.decision == "deny" && out.rule.is_some() => {
            Some(match out.input.get("command").and_then(Value::as_str) {
                Some(command) if out.tool == "Bash" => {
                    format!("Permission to use Bash with command {command} has been denied.")
                }
                _ => format!("Permission to use {} has been denied.", out.tool),
            })
        }
        _ => None,
    }
}

/// What the model is told when a PreToolUse hook denies a call, in Claude Code's words.
fn hook_denial(tool: &str, handler: &str, reason: &str) -> String {
    format!("PreToolUse:{tool} hook error: [{handler}]: {reason}")
}

/// What `claude -p` tells the model of a call the rules ask about when nobody can be asked.
fn unanswered_ask(tool: &str) -> String {
    if tool == "Bash" {
        "This command requires approval".to_string()
    } else {
        format!("Claude requested permissions to use {tool}, but you haven't granted it yet.")
    }
}

/// The `permission_suggestions` of a PermissionRequest: the rule that would allow the call
/// again, where Claude Code would offer to keep it.
fn permission_suggestions(tool: &str, input: &Value, cwd: &std::path::Path) -> Value {
    let rule = |content: Option<String>, destination: &str| {
        let mut r = serde_json::Map::new();
        r.insert("toolName".into(), json!(tool));
        if let Some(c) = content {
            r.insert("ruleContent".into(), json!(c));
        }
        json!([{"type": "addRules", "rules": [r], "behavior": "allow", "destination": destination}])
    };
    match tool {
        "Bash" => rule(
            input
                .get("command")
                .and_then(Value::as_str)
                .map(str::to_string),
            "localSettings",
        ),
        "Write" | "Edit" | "NotebookEdit" => {
            json!([{"type": "setMode", "mode": "acceptEdits", "destination": "session"}])
        }
        "Read" | "Glob" | "Grep" => {
            let path = input
                .get("file_path")
                .or_else(|| input.get("path"))
                .and_then(Value::as_str)
                .map(std::path::Path::new);
            let dir = match path {
                Some(p) if tool == "Read" => p.parent(),
                Some(p) => Some(p),
                None => Some(cwd),
            };
            rule(dir.map(|d| format!("/{}/**", d.display())), "session")
        }
        "WebFetch" => rule(
            input
                .get("url")
                .and_then(Value::as_str)
                .and_then(|u| u.split_once("://"))
                .map(|(_, rest)| rest.split(['/', ':', '?', '#']).next().unwrap_or(""))
                .map(|host| format!("domain:{host}")),
            "localSettings",
        ),
        _ => rule(None, "localSettings"),
    }
}

/// Why a model hook's block ends the turn: its reasons, or the event's name.
fn ends_turn_reason(result: &DispatchResult) -> String {
    let reasons: Vec<&str> = result
        .merged
        .block_reasons
        .iter()
        .chain(result.merged.permission_reasons.iter())
        .map(String::as_str)
        .collect();
    if reasons.is_empty() {
        format!("a {} prompt hook blocked", result.merged.event)
    } else {
        reasons.join("\n")
    }
}

/// `input` with the defaults Claude Code fills in before hooks see a call: Edit's
/// `replace_all: false`.
pub fn with_defaults(tool: &str, mut input: Value) -> Value {
    if tool == "Edit"
        && let Value::Object(o) = &mut input
    {
        o.entry("replace_all").or_insert(Value::Bool(false));
    }
    input
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typos_suggest_the_tool() {
        let names = [
            "Bash",
            "Read",
            "Edit",
            "WebFetch",
            "mcp__plugin_p_warden__fmt",
        ];
        let near = |n: &str| closest_name(n, names.iter().copied());
        assert_eq!(near("Bashh").as_deref(), Some("Bash"));
        assert_eq!(near("bash").as_deref(), Some("Bash"));
        assert_eq!(near("Webfetch").as_deref(), Some("WebFetch"));
        assert_eq!(near("Raed").as_deref(), Some("Read"));
        assert_eq!(near("Deploy"), None);
    }
}
