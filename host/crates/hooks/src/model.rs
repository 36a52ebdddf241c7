//! `prompt` and `agent` handlers (spec 1.6, 1.12): the request sent to the host's model through
//! [`ModelHookRunner`], and the model's answer turned into the hook output a command would give
//! for the same decision, so that it is classified and merged by the same rules.

use std::future::Future;
use std::path::Path;
use std::pin::Pin;
use std::time::Duration;

use serde_json::{Map, Value};

use crate::exec::RawOutcome;
use crate::output::cap_text;
use warden_vocab::Event;
use warden_vocab::HandlerType;

/// How a prompt handler's model must answer. The handler's own prompt says what to check; this
/// says how to answer, so that hook authors need not repeat the schema in every prompt.
const PROMPT_INSTRUCTIONS: &str = "You are checking one step of a coding session on behalf of \
a hook. The message gives the check to make and the event's input as JSON. Answer with a single \
JSON object and nothing else: {\"ok\": true} when the check passes, or {\"ok\": false, \
\"reason\": \"...\"} when it does not, where the reason says what is wrong and what to do \
instead. On a Stop or SubagentStop event, when the work cannot be completed at all, add \
\"impossible\": true so that the session may stop.";

/// How an agent handler's model must answer: as for prompts, without `impossible`, which agent
/// handlers do not have (spec 1.6).
const AGENT_INSTRUCTIONS: &str = "You are checking one step of a coding session on behalf of \
a hook. The message gives the check to make and the event's input as JSON; you may read the \
project to make it. When you are done, answer with a single JSON object and nothing else: \
{\"ok\": true} when the check passes, or {\"ok\": false, \"reason\": \"...\"} when it does \
not, where the reason says what is wrong and what to do instead.";

/// The answer instructions for `handler_type`.
pub(crate) fn instructions(handler_type: HandlerType) -> &'static str {
    match handler_type {
        HandlerType::Agent => AGENT_INSTRUCTIONS,
        _ => PROMPT_INSTRUCTIONS,
    }
}

/// One `prompt` or `agent` handler call. Borrows from the dispatch, which outlives the call.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelHookCall<'a> {
    /// The event.
    pub event: Event,
    /// [`HandlerType::Prompt`] (one model call) or [`HandlerType::Agent`] (a subagent that may
    /// read the project with read-only tools over several turns before it answers).
    pub handler_type: HandlerType,
    /// The handler's `prompt` with the hook input filled in: every `$ARGUMENTS` is replaced by
    /// the hook input JSON (`\$ARGUMENTS` stays literal, without its backslash); a prompt with
    /// no `$ARGUMENTS` gets `ARGUMENTS: <input JSON>` appended after a blank line, as Claude
    /// Code does for skills, which share the substitution.
    pub prompt: String,
    /// How to answer: the JSON object to give and what its fields mean. The runner gives it to
    /// the model as its system prompt, or however its driver frames instructions.
    pub instructions: &'static str,
    /// The handler's `model`; `None` asks for the host's fast default (Claude Code uses a Haiku
    /// model).
    pub model: Option<&'a str>,
    /// The hook input, as a command hook would read it on stdin.
    pub input: &'a Value,
    /// Budget for the call. The dispatcher also enforces it by dropping the future.
    pub timeout: Duration,
}

/// Asks a model on behalf of `prompt` and `agent` handlers. The host implements it with its
/// model driver; the hooks crate builds the request and reads the answer, so the runner only
/// talks to the model.
pub trait ModelHookRunner: Send + Sync {
    /// Sends `call.prompt`, with `call.instructions`, to `call.model` and returns the model's
    /// final text, or why there is none (no such model, transport failure, refusal). The text
    /// should hold a JSON object `{"ok": bool, "reason"?: string, "impossible"?: bool}`; prose
    /// or a code fence around it is tolerated.
    fn run<'a>(
        &'a self,
        call: ModelHookCall<'a>,
    ) -> Pin<Box<dyn Future<Output = Result<String, String>> + Send + 'a>>;
}

/// The placeholder replaced by the hook input.
const PLACEHOLDER: &str = "$ARGUMENTS";

/// Builds the text sent to the model (rules on [`ModelHookCall::prompt`]).
///
/// Only `$ARGUMENTS` itself is a placeholder: the indexed forms skills accept
/// (`$ARGUMENTS[0]`, `$0`) split an argument string shell-style, which has no meaning for a JSON
/// document. A single backslash escapes the placeholder; two do not (they stay, and the input
/// follows them), as in skills.
pub(crate) fn build_prompt(prompt: &str, input_json: &str) -> String {
    let mut out = String::with_capacity(prompt.len() + input_json.len() + 16);
    let mut substituted = false;
    let mut rest = prompt;
    while let Some(at) = rest.find(PLACEHOLDER) {
        let before = &rest[..at];
        let backslashes = before.len() - before.trim_end_matches('\\').len();
        if backslashes == 1 {
            out.push_str(&before[..before.len() - 1]);
            out.push_str(PLACEHOLDER);
        } else {
            out.push_str(before);
            out.push_str(input_json);
            substituted = true;
        }
        rest = &rest[at + PLACEHOLDER.len()..];
    }
    out.push_str(rest);
    if !substituted {
        if !out.is_empty() {
            out.push_str("\n\n");
        }
        out.push_str("ARGUMENTS: ");
        out.push_str(input_json);
    }
    out
}

/// Why a model's text is not a usable answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum AnswerError {
    #[error("the model's answer holds no JSON object")]
    NoObject,
    #[error("the model's answer has no boolean `ok`")]
    NoOk,
    #[error("`{0}` in the model's answer must be {1}")]
    BadField(&'static str, &'static str),
    #[error("the model answered `ok: false` without a `reason`")]
    MissingReason,
}

/// A model's verdict (spec 1.12).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Answer {
    /// `ok: true`.
    Ok,
    /// `ok: false`.
    NotOk {
        reason: String,
        /// The work cannot be done; on Stop / SubagentStop the stop is allowed.
        impossible: bool,
    },
}

/// The first JSON object in `text`, wherever it starts: models wrap their answer in prose or a
/// ```` ```json ```` fence even when told not to.
fn first_object(text: &str) -> Option<Map<String, Value>> {
    text.match_indices('{').find_map(|(at, _)| {
        let mut values = serde_json::Deserializer::from_str(&text[at..]).into_iter::<Value>();
        match values.next() {
            Some(Ok(Value::Object(m))) => Some(m),
            _ => None,
        }
    })
}

/// Reads the model's text as `{ "ok": bool, "reason"?: string, "impossible"?: bool }`.
///
/// A `null` field counts as absent, and a blank `reason` as missing: a block with nothing to say
/// would leave Claude with no instruction to follow.
pub(crate) fn parse_answer(text: &str) -> Result<Answer, AnswerError> {
    let obj = first_object(text).ok_or(AnswerError::NoObject)?;
    let ok = obj
        .get("ok")
        .and_then(Value::as_bool)
        .ok_or(AnswerError::NoOk)?;
    let reason = match obj.get("reason") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.as_str()),
        Some(_) => return Err(AnswerError::BadField("reason", "a string")),
    };
    let impossible = match obj.get("impossible") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err(AnswerError::BadField("impossible", "a boolean")),
    };
    if ok {
        return Ok(Answer::Ok);
    }
    match reason.map(str::trim).filter(|r| !r.is_empty()) {
        Some(r) => Ok(Answer::NotOk {
            reason: r.to_string(),
            impossible,
        }),
        None => Err(AnswerError::MissingReason),
    }
}

/// Characters of an unusable answer quoted in the error, enough to see what the model did.
const ANSWER_PREVIEW_CHARS: usize = 200;

fn preview(text: &str) -> String {
    let t = text.trim();
    let mut p: String = t.chars().take(ANSWER_PREVIEW_CHARS).collect();
    if p.len() < t.len() {
        p.push('…');
    }
    p
}

/// What the model's text amounts to, as the raw result a command hook would have produced for
/// the same decision, and whether it is a block that `continueOnBlock` governs.
///
/// `ok: false` on each event (spec 1.12):
/// * PreToolUse: a `deny` permission decision with the reason;
/// * events that block with `decision: "block"` (Stop, SubagentStop, UserPromptSubmit,
///   UserPromptExpansion, PostToolUse, PostToolUseFailure, PostToolBatch, TaskCreated): that
///   decision with the reason; on Stop / SubagentStop `impossible: true` lets the stop happen
///   instead, for prompt handlers only (agent handlers have no `impossible`, spec 1.6);
/// * TaskCompleted and TeammateIdle, which block only by exit code: exit 2 with the reason;
/// * PermissionRequest, PermissionDenied: no effect.
///
/// A failed call or an unusable answer is a handler that could not run: a non-blocking error
/// naming the handler, or a failure under `onFailure: "block"`.
pub(crate) fn answer_outcome(
    event: Event,
    handler_type: HandlerType,
    reply: Result<String, String>,
    spill: Option<&Path>,
) -> (RawOutcome, bool) {
    let text = match reply {
        Ok(t) => t,
        Err(e) => return (RawOutcome::error(format!("model call failed: {e}")), false),
    };
    let (reason, impossible) = match parse_answer(&text) {
        Ok(Answer::Ok) => return (RawOutcome::exited(0, "", ""), false),
        Ok(Answer::NotOk { reason, impossible }) => (cap_text(&reason, spill), impossible),
        Err(e) => {
            return (
                RawOutcome::error(format!("{e} (answer: \"{}\")", preview(&text))),
                false,
            );
        }
    };
    let allow = || (RawOutcome::exited(0, "", ""), false);
    match event {
        Event::PermissionRequest | Event::PermissionDenied => allow(),
        Event::Stop | Event::SubagentStop if impossible && handler_type == HandlerType::Prompt => {
            allow()
        }
        Event::PreToolUse => {
            let mut hso = Map::new();
            hso.insert("hookEventName".into(), event.as_str().into());
            hso.insert("permissionDecision".into(), "deny".into());
            hso.insert("permissionDecisionReason".into(), reason.into());
            let mut out = Map::new();
            out.insert("hookSpecificOutput".into(), Value::Object(hso));
            (RawOutcome::exited_json(0, out, ""), true)
        }
        e if crate::merge::uses_decision(e) => {
            let mut out = Map::new();
            out.insert("decision".into(), "block".into());
            out.insert("reason".into(), reason.into());
            (RawOutcome::exited_json(0, out, ""), true)
        }
        Event::TaskCompleted
        | Event::TeammateIdle
        | Event::Elicitation
        | Event::ElicitationResult
        | Event::WorktreeCreate => (RawOutcome::exited(2, "", reason), true),
        // Prompt and agent handlers are refused on other events when parsed; one built in code
        // has no way to block there.
        _ => allow(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_are_replaced_escaped_or_appended() {
        let input = r#"{"a":1}"#;
        assert_eq!(
            build_prompt("check $ARGUMENTS now", input),
            r#"check {"a":1} now"#
        );
        assert_eq!(
            build_prompt("$ARGUMENTS and $ARGUMENTS", input),
            r#"{"a":1} and {"a":1}"#
        );
        assert_eq!(
            build_prompt("check this", input),
            "check this\n\nARGUMENTS: {\"a\":1}"
        );
        assert_eq!(build_prompt("", input), "ARGUMENTS: {\"a\":1}");
        assert_eq!(
            build_prompt(r"say \$ARGUMENTS", input),
            "say $ARGUMENTS\n\nARGUMENTS: {\"a\":1}"
        );
        assert_eq!(build_prompt(r"say \\$ARGUMENTS", input), r#"say \\{"a":1}"#);
    }

    #[test]
    fn the_first_json_object_is_the_answer() {
        assert_eq!(parse_answer(r#"{"ok": true}"#), Ok(Answer::Ok));
        assert_eq!(
            parse_answer("Sure.\n```json\n{\"ok\": false, \"reason\": \"no tests\"}\n```\n"),
            Ok(Answer::NotOk {
                reason: "no tests".into(),
                impossible: false
            })
        );
        assert_eq!(
            parse_answer(
                r#"{not json} then {"ok": false, "reason": "r", "impossible": true} {"ok": true}"#
            ),
            Ok(Answer::NotOk {
                reason: "r".into(),
                impossible: true
            })
        );
        assert_eq!(parse_answer("looks fine"), Err(AnswerError::NoObject));
        assert_eq!(parse_answer(r#"{"ok": "yes"}"#), Err(AnswerError::NoOk));
        assert_eq!(
            parse_answer(r#"{"ok": false, "reason": "  "}"#),
            Err(AnswerError::MissingReason)
        );
        assert_eq!(
            parse_answer(r#"{"ok": false, "reason": 3}"#),
            Err(AnswerError::BadField("reason", "a string"))
        );
        assert_eq!(
            parse_answer(r#"{"ok": true, "reason": null, "impossible": null}"#),
            Ok(Answer::Ok)
        );
    }
}
