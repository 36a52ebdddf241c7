//! Merging handler results (spec 1.7) and rendering the merged result for Claude Code (the
//! `warden hook <Event>` bridge) and for the permission engine.

use std::path::Path;

use serde_json::{Map, Value};
use warden_permissions::{Decision, HookVerdict};

use crate::output::{Classified, Outcome, cap_text};
use warden_vocab::Event;

/// Reads a PreToolUse decision as hooks write it: Claude Code's words, plus the deprecated
/// top-level `approve` (allow) and `block` (deny).
fn parse_hook_verdict(s: &str) -> Option<HookVerdict> {
    match s {
        "approve" => Some(Decision::Allow.into()),
        "block" => Some(Decision::Deny.into()),
        _ => HookVerdict::parse(s),
    }
}

/// The typed verdict hooks give the permission engine for a tool event.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PermissionVerdict {
    /// Most restrictive decision, `deny > defer > ask > allow` (`None`: hooks expressed no
    /// opinion). [`warden_permissions::Permissions::decide`] takes it as it is.
    pub decision: Option<HookVerdict>,
    /// Reasons given with that decision, joined by newlines.
    pub reason: Option<String>,
    /// Replacement tool input (last handler to finish wins).
    pub updated_input: Option<Value>,
    /// `PermissionRequest` allow: permission updates to apply.
    pub updated_permissions: Vec<Value>,
    /// `PermissionRequest` deny: stop the agent.
    pub interrupt: bool,
}

/// Everything the handlers of one event said, merged.
#[derive(Debug, Clone, PartialEq)]
pub struct MergedResult {
    /// The event.
    pub event: Event,
    /// The action is blocked (exit 2, `decision: "block"`, deny, fail-closed failure). On
    /// `PostToolUse` / `PostToolUseFailure` it records a `decision: "block"` whose reason is
    /// given to Claude (the tool has already run).
    pub blocked: bool,
    /// Messages explaining the block.
    pub block_reasons: Vec<String>,
    /// Exit-2 messages on events that cannot block (shown to Claude or the user instead).
    pub feedback: Vec<String>,
    /// `PreToolUse` decision (most restrictive: `deny > defer > ask > allow`).
    pub permission: Option<HookVerdict>,
    /// Reasons given with the winning decision.
    pub permission_reasons: Vec<String>,
    /// `PermissionRequest` decision object (`deny` beats `allow`).
    pub permission_request: Option<Map<String, Value>>,
    /// Replacement input (last writer wins).
    pub updated_input: Option<Value>,
    /// `additionalContext` values and plain-stdout context, in finish order.
    pub additional_context: Vec<String>,
    /// `systemMessage` values.
    pub system_messages: Vec<String>,
    /// `false` when any handler said `continue: false`.
    pub continue_: bool,
    /// `stopReason` values.
    pub stop_reasons: Vec<String>,
    /// Non-blocking error notices.
    pub errors: Vec<String>,
    /// Other `hookSpecificOutput` fields (last writer wins per key).
    pub hook_specific: Map<String, Value>,
    /// Other top-level fields handlers set (`terminalSequence`, …; last writer wins).
    pub extra: Map<String, Value>,
    /// `WorktreeCreate`: the path from the last handler that gave one.
    pub worktree_path: Option<String>,
    /// The Stop-loop cap overrode a block.
    pub stop_cap_overridden: bool,
    /// Set by [`dispatch`](crate::dispatch) when a `prompt` or `agent` handler's `ok: false`
    /// blocked (spec 1.12): `true` when the host should give the reason back to Claude and let
    /// the turn go on, `false` when it should end the turn. It is `true` only when every model
    /// handler that blocked asked for it (`continueOnBlock`; agent handlers always do). Blocks
    /// from other handler types keep their usual effect and leave it `None`; Stop and
    /// SubagentStop blocks always keep the session going, whatever it says.
    pub continue_on_block: Option<bool>,
}

impl MergedResult {
    /// An empty result: nothing to say.
    pub fn empty(event: Event) -> Self {
        MergedResult {
            event,
            blocked: false,
            block_reasons: Vec::new(),
            feedback: Vec::new(),
            permission: None,
            permission_reasons: Vec::new(),
            permission_request: None,
            updated_input: None,
            additional_context: Vec::new(),
            system_messages: Vec::new(),
            continue_: true,
            stop_reasons: Vec::new(),
            errors: Vec::new(),
            hook_specific: Map::new(),
            extra: Map::new(),
            worktree_path: None,
            stop_cap_overridden: false,
            continue_on_block: None,
        }
    }

    /// The verdict for the permission engine (`PreToolUse` and `PermissionRequest`).
    pub fn permission_verdict(&self) -> PermissionVerdict {
        let mut v = PermissionVerdict {
            updated_input: self.updated_input.clone(),
            ..Default::default()
        };
        match self.event {
            Event::PreToolUse => {
                v.decision = if self.blocked {
                    Some(Decision::Deny.into())
                } else {
                    self.permission
                };
                let reasons = if self.blocked {
                    &self.block_reasons
                } else {
                    &self.permission_reasons
                };
                v.reason = (!reasons.is_empty()).then(|| reasons.join("\n"));
            }
            Event::PermissionRequest => {
                if let Some(d) = &self.permission_request {
                    let deny = d.get("behavior").and_then(Value::as_str) == Some("deny");
                    v.decision = Some(HookVerdict::Decided(if deny {
                        Decision::Deny
                    } else {
                        Decision::Allow
                    }));
                    v.reason = d.get("message").and_then(Value::as_str).map(str::to_string);
                    v.interrupt = d.get("interrupt").and_then(Value::as_bool).unwrap_or(false);
                    if let Some(u) = d.get("updatedInput") {
                        v.updated_input = Some(u.clone());
                    }
                    v.updated_permissions = d
                        .get("updatedPermissions")
                        .and_then(Value::as_array)
                        .cloned()
                        .unwrap_or_default();
                }
            }
            _ => {
                if self.blocked {
                    v.decision = Some(Decision::Deny.into());
                    v.reason = Some(self.block_reasons.join("\n"));
                }
            }
        }
        v
    }
}

/// Events whose plain stdout (exit 0) becomes context for Claude.
fn plain_is_context(event: Event) -> bool {
    matches!(
        event,
        Event::UserPromptSubmit | Event::UserPromptExpansion | Event::SessionStart
    )
}

/// Events blocked with top-level `decision: "block"`.
pub(crate) fn uses_decision(event: Event) -> bool {
    matches!(
        event,
        Event::UserPromptSubmit
            | Event::UserPromptExpansion
            | Event::PostToolUse
            | Event::PostToolUseFailure
            | Event::PostToolBatch
            | Event::Stop
            | Event::SubagentStop
            | Event::ConfigChange
            | Event::PreCompact
            | Event::TaskCreated
    )
}

/// Merges classified results given in finish order. `input` is the hook input (some blocking
/// rules depend on it: `ConfigChange` from `policy_settings` cannot block).
pub fn merge(
    event: Event,
    input: &Value,
    results: &[Classified],
    spill: Option<&Path>,
) -> MergedResult {
    merge_iter(event, input, results, spill)
}

/// [`merge`] over borrowed results, so the dispatcher merges its reports without copying each
/// classified result (and its JSON) first.
pub(crate) fn merge_iter<'a>(
    event: Event,
    input: &Value,
    results: impl IntoIterator<Item = &'a Classified>,
    spill: Option<&Path>,
) -> MergedResult {
    let mut m = MergedResult::empty(event);
    let can_block = event.can_block()
        && !(event == Event::ConfigChange
            && input.get("source").and_then(Value::as_str) == Some("policy_settings"));
    let block = |m: &mut MergedResult, reason: String, fail_closed: bool| {
        if event == Event::PermissionRequest {
            // Exit 2 is not honoured here; a fail-closed failure denies the request.
            if fail_closed {
                let mut d = Map::new();
                d.insert("behavior".into(), "deny".into());
                d.insert("message".into(), reason.into());
                m.permission_request = Some(d);
            }
        } else if can_block {
            m.blocked = true;
            if !reason.is_empty() {
                m.block_reasons.push(reason);
            }
        } else if !reason.is_empty() {
            m.feedback.push(reason);
        }
    };
    for r in results {
        match &r.outcome {
            Outcome::Blocking {
                reason,
                fail_closed,
            } => block(&mut m, reason.clone(), *fail_closed),
            Outcome::NonBlockingError { message } => m.errors.push(message.clone()),
            _ => {}
        }
        if let Some(p) = &r.plain {
            if event == Event::WorktreeCreate {
                m.worktree_path = Some(p.clone());
            } else if plain_is_context(event) && !p.trim().is_empty() {
                m.additional_context.push(p.clone());
            }
        }
        let Some(j) = &r.json else { continue };
        // One pass over the object instead of a hashed lookup per field.
        let mut stop = false;
        let mut stop_reason = None;
        let mut decision = None;
        let mut reason = "";
        let mut hso = None;
        for (k, v) in j {
            match k.as_str() {
                "continue" => stop = v.as_bool() == Some(false),
                "stopReason" => stop_reason = v.as_str(),
                "systemMessage" => {
                    if let Some(s) = v.as_str() {
                        m.system_messages.push(cap_text(s, spill));
                    }
                }
                "terminalSequence" => {
                    m.extra.insert("terminalSequence".into(), v.clone());
                }
                "decision" => decision = v.as_str(),
                "reason" => reason = v.as_str().unwrap_or_default(),
                "hookSpecificOutput" => hso = v.as_object(),
                _ => {}
            }
        }
        if stop {
            m.continue_ = false;
            if let Some(s) = stop_reason {
                m.stop_reasons.push(s.to_string());
            }
        }
        let reason = reason.to_string();
        match event {
            Event::PreToolUse => {
                let (d, why) = match hso
                    .and_then(|h| h.get("permissionDecision"))
                    .and_then(Value::as_str)
                {
                    Some(d) => (
                        parse_hook_verdict(d),
                        hso.and_then(|h| h.get("permissionDecisionReason"))
                            .and_then(Value::as_str)
                            .map(str::to_string),
                    ),
                    // Deprecated top-level form: "approve" → allow, "block" → deny.
                    None => (
                        decision.and_then(parse_hook_verdict),
                        (!reason.is_empty()).then(|| reason.clone()),
                    ),
                };
                if let Some(d) = d {
                    match m.permission {
                        Some(cur) if cur > d => {}
                        Some(cur) if cur == d => m.permission_reasons.extend(why),
                        _ => {
                            m.permission = Some(d);
                            m.permission_reasons = why.into_iter().collect();
                        }
                    }
                }
                if let Some(u) = hso.and_then(|h| h.get("updatedInput")) {
                    m.updated_input = Some(u.clone());
                }
            }
            Event::PermissionRequest => {
                if let Some(d) = hso
                    .and_then(|h| h.get("decision"))
                    .and_then(Value::as_object)
                {
                    let deny_now = m
                        .permission_request
                        .as_ref()
                        .and_then(|p| p.get("behavior"))
                        .and_then(Value::as_str)
                        == Some("deny");
                    if !deny_now {
                        m.permission_request = Some(d.clone());
                    }
                }
            }
            _ => {
                if decision == Some("block") && uses_decision(event) {
                    if !matches!(event, Event::PostToolUse | Event::PostToolUseFailure) {
                        block(&mut m, reason, false);
                    } else {
                        // PostToolUse / PostToolUseFailure: the tool already ran; the reason
                        // goes to Claude next to the result, as `decision: "block"`.
                        m.blocked = true;
                        m.block_reasons.push(reason);
                    }
                }
            }
        }
        if let Some(h) = hso {
            for (k, v) in h {
                match k.as_str() {
                    "hookEventName"
                    | "permissionDecision"
                    | "permissionDecisionReason"
                    | "updatedInput"
                    | "decision" => {}
                    "additionalContext" => {
                        if let Some(s) = v.as_str().filter(|s| !s.is_empty()) {
                            m.additional_context.push(cap_text(s, spill));
                        }
                    }
                    "worktreePath" => m.worktree_path = v.as_str().map(str::to_string),
                    _ => {
                        m.hook_specific.insert(k.clone(), v.clone());
                    }
                }
            }
        }
    }
    m
}

/// Events that only block through exit code 2 (no JSON decision field does it).
fn blocks_by_exit_code(event: Event) -> bool {
    matches!(
        event,
        Event::TeammateIdle
            | Event::TaskCompleted
            | Event::Elicitation
            | Event::ElicitationResult
            | Event::WorktreeCreate
    )
}

/// Renders a merged result as Claude Code hook output: `(stdout JSON, exit code, stderr)`.
///
/// Print the stdout value with [`render_stdout`] (a `WorktreeCreate` path is a JSON string
/// printed raw; `Null` prints nothing). The exit code is 2 when the result blocks on an event
/// that blocks only by exit code, or carries feedback for an event that cannot block; 1 when
/// the only thing to report is non-blocking errors (Claude Code shows them as a hook error);
/// otherwise 0.
pub fn to_cc_output(m: &MergedResult, event: Event) -> (Value, i32, Option<String>) {
    let mut out = Map::new();
    let mut hso = Map::new();
    let mut exit = 0;
    let mut stderr: Vec<String> = Vec::new();
    if !m.continue_ {
        out.insert("continue".into(), false.into());
        if !m.stop_reasons.is_empty() {
            out.insert("stopReason".into(), m.stop_reasons.join("\n").into());
        }
    }
    if !m.system_messages.is_empty() {
        out.insert("systemMessage".into(), m.system_messages.join("\n").into());
    }
    for (k, v) in &m.extra {
        out.insert(k.clone(), v.clone());
    }
    match event {
        Event::PreToolUse => {
            let v = m.permission_verdict();
            if let Some(d) = v.decision {
                hso.insert("permissionDecision".into(), d.as_str().into());
                if let Some(r) = v.reason {
                    hso.insert("permissionDecisionReason".into(), r.into());
                }
            }
            if let Some(u) = &m.updated_input {
                hso.insert("updatedInput".into(), u.clone());
            }
        }
        Event::PermissionRequest => {
            if let Some(d) = &m.permission_request {
                hso.insert("decision".into(), Value::Object(d.clone()));
            }
        }
        Event::WorktreeCreate if !m.blocked => {
            if let Some(p) = &m.worktree_path {
                return (Value::String(p.clone()), 0, None);
            }
        }
        _ => {
            if m.blocked && uses_decision(event) {
                out.insert("decision".into(), "block".into());
                out.insert("reason".into(), m.block_reasons.join("\n").into());
            }
        }
    }
    if m.blocked && blocks_by_exit_code(event) {
        exit = 2;
        stderr.extend(m.block_reasons.iter().cloned());
    }
    if !m.feedback.is_empty() {
        exit = 2;
        stderr.extend(m.feedback.iter().cloned());
    }
    if !m.additional_context.is_empty() {
        hso.insert(
            "additionalContext".into(),
            m.additional_context.join("\n").into(),
        );
    }
    for (k, v) in &m.hook_specific {
        hso.insert(k.clone(), v.clone());
    }
    if !hso.is_empty() {
        let mut h = Map::new();
        h.insert("hookEventName".into(), event.as_str().into());
        h.extend(hso);
        out.insert("hookSpecificOutput".into(), Value::Object(h));
    }
    if !m.errors.is_empty() {
        if out.is_empty() && exit == 0 {
            exit = 1;
        }
        stderr.extend(m.errors.iter().cloned());
    }
    let stdout = if out.is_empty() {
        Value::Null
    } else {
        Value::Object(out)
    };
    (
        stdout,
        exit,
        (!stderr.is_empty()).then(|| stderr.join("\n")),
    )
}

/// Text to print on stdout for a value from [`to_cc_output`].
pub fn render_stdout(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}
