//! Classification of one handler's result (spec 1.10, 1.11): exit code × stdout kind × JSON
//! schema validity × `onFailure`.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Map, Value};

use crate::exec::{HttpOutcome, RawOutcome};
use crate::handler::OnFailure;
use warden_vocab::Event;
use warden_vocab::text::first_line;

/// Cap on hook output strings (`additionalContext`, `systemMessage`, plain stdout), in characters.
pub const MAX_OUTPUT_CHARS: usize = 10_000;
/// Characters kept as a preview when a string over [`MAX_OUTPUT_CHARS`] is replaced.
pub const PREVIEW_CHARS: usize = 2_000;

/// Caps `text` at [`MAX_OUTPUT_CHARS`] characters. Longer text is written to a file in
/// `spill_dir` (when given) and replaced by a preview plus the file's path, as Claude Code does;
/// without a spill directory the preview says how much was cut.
pub fn cap_text(text: &str, spill_dir: Option<&Path>) -> String {
    let total = text.chars().count();
    if total <= MAX_OUTPUT_CHARS {
        return text.to_string();
    }
    let preview: String = text.chars().take(PREVIEW_CHARS).collect();
    static SEQ: AtomicU64 = AtomicU64::new(0);
    if let Some(dir) = spill_dir {
        let n = SEQ.fetch_add(1, Ordering::Relaxed);
        let path = dir.join(format!("hook-output-{}-{n}.txt", std::process::id()));
        if std::fs::create_dir_all(dir)
            .and_then(|_| std::fs::write(&path, text))
            .is_ok()
        {
            return format!(
                "{preview}\n… [hook output of {total} characters truncated; full text saved to {}]",
                path.display()
            );
        }
    }
    format!("{preview}\n… [hook output of {total} characters truncated]")
}

/// What a handler's output amounts to.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Success: its JSON (if any) is applied.
    Success,
    /// Blocking error: exit 2, a non-zero `WorktreeCreate` exit, or a fail-closed failure.
    Blocking {
        /// Message: the JSON reason if any, else stderr.
        reason: String,
        /// Produced by `onFailure: "block"` (denies a `PermissionRequest`, where exit 2 does not).
        fail_closed: bool,
    },
    /// Non-blocking error: the action proceeds; the notice is reported.
    NonBlockingError {
        /// The notice.
        message: String,
    },
    /// Timed out: cancelled, output discarded, no decision.
    Cancelled,
    /// Started in the background (`async`); no decision.
    Async,
    /// Not run.
    Skipped {
        /// Why.
        reason: String,
    },
}

/// A classified handler result.
#[derive(Debug, Clone, PartialEq)]
pub struct Classified {
    /// The outcome.
    pub outcome: Outcome,
    /// A schema-valid JSON object to apply (also read alongside exit 2).
    pub json: Option<Map<String, Value>>,
    /// Plain stdout of a successful run (context on `UserPromptSubmit`, `UserPromptExpansion`,
    /// `SessionStart`; the path on `WorktreeCreate`).
    pub plain: Option<String>,
}

impl Classified {
    fn of(outcome: Outcome) -> Self {
        Classified {
            outcome,
            json: None,
            plain: None,
        }
    }
}

enum Stdout<'a> {
    Empty,
    Json(Map<String, Value>),
    /// Starts with `{` but does not parse: plain text, yet a failure for `onFailure`.
    BrokenJson(&'a str),
    Plain(&'a str),
}

fn classify_stdout(s: &str) -> Stdout<'_> {
    let t = s.trim_start();
    if t.is_empty() {
        return Stdout::Empty;
    }
    if t.starts_with('{') {
        return match serde_json::from_str::<Value>(t) {
            Ok(Value::Object(m)) => Stdout::Json(m),
            _ => Stdout::BrokenJson(s),
        };
    }
    Stdout::Plain(s)
}

fn expect(
    obj: &Map<String, Value>,
    key: &str,
    ok: fn(&Value) -> bool,
    what: &str,
) -> Result<(), String> {
    match obj.get(key) {
        Some(v) if !ok(v) => Err(format!("`{key}` must be {what}")),
        _ => Ok(()),
    }
}

fn one_of(obj: &Map<String, Value>, key: &str, allowed: &[&str]) -> Result<(), String> {
    match obj.get(key) {
        Some(Value::String(s)) if allowed.contains(&s.as_str()) => Ok(()),
        Some(_) => Err(format!("`{key}` must be one of {}", allowed.join(", "))),
        None => Ok(()),
    }
}

/// Validates a hook's JSON output against the schema of `event` (spec 1.10). Unknown keys are
/// accepted; known keys of the wrong type or value fail.
pub fn validate_output(event: Event, obj: &Map<String, Value>) -> Result<(), String> {
    let string = |v: &Value| v.is_string();
    let boolean = |v: &Value| v.is_boolean();
    let object = |v: &Value| v.is_object();
    let strings = |v: &Value| v.as_array().is_some_and(|a| a.iter().all(Value::is_string));
    expect(obj, "continue", boolean, "a boolean")?;
    expect(obj, "stopReason", string, "a string")?;
    expect(obj, "suppressOutput", boolean, "a boolean")?;
    expect(obj, "systemMessage", string, "a string")?;
    expect(obj, "terminalSequence", string, "a string")?;
    expect(obj, "reason", string, "a string")?;
    one_of(obj, "decision", &["block", "approve"])?;
    let Some(hso) = obj.get("hookSpecificOutput") else {
        return Ok(());
    };
    let Some(h) = hso.as_object() else {
        return Err("`hookSpecificOutput` must be an object".into());
    };
    match h.get("hookEventName").and_then(Value::as_str) {
        Some(n) if n == event.as_str() => {}
        Some(n) => {
            return Err(format!(
                "`hookSpecificOutput.hookEventName` is \"{n}\", expected \"{event}\""
            ));
        }
        None => {
            return Err(format!(
                "`hookSpecificOutput.hookEventName` is required and must be \"{event}\""
            ));
        }
    }
    expect(h, "additionalContext", string, "a string")?;
    match event {
        Event::PreToolUse => {
            one_of(h, "permissionDecision", &["allow", "deny", "ask", "defer"])?;
            expect(h, "permissionDecisionReason", string, "a string")?;
            expect(h, "updatedInput", object, "an object")?;
        }
        Event::PermissionRequest => {
            if let Some(d) = h.get("decision") {
                let Some(d) = d.as_object() else {
                    return Err("`decision` must be an object".into());
                };
                match d.get("behavior").and_then(Value::as_str) {
                    Some("allow" | "deny") => {}
                    _ => return Err("`decision.behavior` must be \"allow\" or \"deny\"".into()),
                }
                expect(d, "updatedInput", object, "an object")?;
                expect(d, "updatedPermissions", |v| v.is_array(), "an array")?;
                expect(d, "message", string, "a string")?;
                expect(d, "interrupt", boolean, "a boolean")?;
            }
        }
        Event::PermissionDenied => expect(h, "retry", boolean, "a boolean")?,
        Event::PostToolUse => expect(h, "classifierContext", string, "a string")?,
        Event::UserPromptSubmit => {
            expect(h, "sessionTitle", string, "a string")?;
            expect(h, "suppressOriginalPrompt", boolean, "a boolean")?;
        }
        Event::SessionStart => {
            expect(h, "initialUserMessage", string, "a string")?;
            expect(h, "sessionTitle", string, "a string")?;
            expect(h, "watchPaths", strings, "an array of strings")?;
            expect(h, "reloadSkills", boolean, "a boolean")?;
        }
        Event::CwdChanged | Event::FileChanged => {
            expect(h, "watchPaths", strings, "an array of strings")?
        }
        Event::WorktreeCreate => expect(h, "worktreePath", string, "a string")?,
        Event::Elicitation | Event::ElicitationResult => {
            one_of(h, "action", &["accept", "decline", "cancel"])?;
            expect(h, "content", object, "an object")?;
        }
        Event::MessageDisplay => expect(h, "displayContent", string, "a string")?,
        _ => {}
    }
    Ok(())
}

/// The reason a JSON object gives for blocking, if any.
fn json_reason(event: Event, obj: &Map<String, Value>) -> Option<String> {
    let h = obj.get("hookSpecificOutput");
    let from_h = |k: &str| {
        h.and_then(|h| h.get(k))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    match event {
        Event::PreToolUse => from_h("permissionDecisionReason").or_else(|| {
            obj.get("reason")
                .and_then(Value::as_str)
                .map(str::to_string)
        }),
        _ => obj
            .get("reason")
            .and_then(Value::as_str)
            .map(str::to_string)
            .or_else(|| {
                obj.get("stopReason")
                    .and_then(Value::as_str)
                    .map(str::to_string)
            }),
    }
}

/// Events where `onFailure` has no effect (spec 1.11).
fn on_failure_applies(event: Event) -> bool {
    !matches!(
        event,
        Event::Stop | Event::SubagentStop | Event::TaskCompleted | Event::TeammateIdle
    )
}

fn fail_closed(label: &str, timed_out: bool) -> Outcome {
    let what = if timed_out { "timed out" } else { "failed" };
    Outcome::Blocking {
        reason: format!("[{label}]: {what}; blocking because onFailure is \"block\""),
        fail_closed: true,
    }
}

fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            if chars.peek() == Some(&'[') {
                chars.next();
                for d in chars.by_ref() {
                    if ('@'..='~').contains(&d) {
                        break;
                    }
                }
            }
            continue;
        }
        out.push(c);
    }
    out
}

/// Classifies a command or WASM result.
pub fn classify_raw(
    event: Event,
    raw: &RawOutcome,
    on_failure: OnFailure,
    label: &str,
    spill: Option<&Path>,
) -> Classified {
    classify(event, raw, raw.json.clone(), on_failure, label, spill)
}

/// [`classify_raw`] for a result the caller owns: its parsed JSON is moved, not copied.
pub(crate) fn classify_owned(
    event: Event,
    mut raw: RawOutcome,
    on_failure: OnFailure,
    label: &str,
    spill: Option<&Path>,
) -> Classified {
    let json = raw.json.take();
    classify(event, &raw, json, on_failure, label, spill)
}

fn classify(
    event: Event,
    raw: &RawOutcome,
    parsed: Option<Map<String, Value>>,
    on_failure: OnFailure,
    label: &str,
    spill: Option<&Path>,
) -> Classified {
    let block_on_failure = on_failure == OnFailure::Block && on_failure_applies(event);
    if let Some(err) = &raw.error {
        if block_on_failure {
            return Classified::of(fail_closed(label, false));
        }
        return Classified::of(Outcome::NonBlockingError {
            message: cap_text(&format!("{label}: {err}"), spill),
        });
    }
    if raw.timed_out {
        if block_on_failure {
            return Classified::of(fail_closed(label, true));
        }
        return Classified::of(Outcome::Cancelled);
    }
    let code = raw.exit_code.unwrap_or(1);
    let stdout = match parsed {
        Some(m) => Stdout::Json(m),
        None => classify_stdout(&raw.stdout),
    };
    let (json, schema_error, text, broken) = match stdout {
        Stdout::Json(m) => match validate_output(event, &m) {
            Ok(()) => (Some(m), None, None, false),
            Err(e) => (None, Some(e), None, true),
        },
        Stdout::BrokenJson(s) => (None, None, Some(s), true),
        Stdout::Plain(s) => (None, None, Some(s), false),
        Stdout::Empty => (None, None, None, false),
    };
    if block_on_failure && ((code != 0 && code != 2) || broken) {
        return Classified::of(fail_closed(label, false));
    }
    // WorktreeCreate: any non-zero exit fails creation.
    if event == Event::WorktreeCreate && code != 0 {
        let reason = if raw.stderr.trim().is_empty() {
            format!("{label} exited with {code}")
        } else {
            raw.stderr.clone()
        };
        return Classified {
            outcome: Outcome::Blocking {
                reason: cap_text(reason.trim_end(), spill),
                fail_closed: false,
            },
            json,
            plain: None,
        };
    }
    match code {
        0 => {
            if let Some(e) = schema_error {
                return Classified::of(Outcome::NonBlockingError {
                    message: cap_text(
                        &format!("{label}: JSON output failed validation: {e}"),
                        spill,
                    ),
                });
            }
            let plain = text.and_then(|s| {
                if event == Event::WorktreeCreate {
                    s.lines()
                        .map(strip_ansi)
                        .map(|l| l.trim().to_string())
                        .rfind(|l| !l.is_empty())
                } else {
                    Some(cap_text(s, spill))
                }
            });
            Classified {
                outcome: Outcome::Success,
                json,
                plain,
            }
        }
        2 => {
            let reason = json
                .as_ref()
                .and_then(|j| json_reason(event, j))
                .unwrap_or_else(|| raw.stderr.trim_end().to_string());
            let mut json = json;
            // On Elicitation events exit 2 ignores `hookSpecificOutput`.
            if matches!(event, Event::Elicitation | Event::ElicitationResult)
                && let Some(j) = json.as_mut()
            {
                j.remove("hookSpecificOutput");
            }
            Classified {
                outcome: Outcome::Blocking {
                    reason: cap_text(&reason, spill),
                    fail_closed: false,
                },
                json,
                plain: None,
            }
        }
        _ => {
            if json.is_some() {
                // A schema-valid JSON object decides on its own; the exit code is ignored.
                return Classified {
                    outcome: Outcome::Success,
                    json,
                    plain: None,
                };
            }
            let detail = first_line(&raw.stderr);
            let mut detail = if detail.is_empty() {
                format!("exit code {code}")
            } else {
                detail.to_string()
            };
            // What the host added about the handler's confinement (what the sandbox refused,
            // what it put back) is kept whole.
            for note in raw
                .stderr
                .lines()
                .skip(1)
                .filter(|l| l.starts_with(crate::exec::HOST_NOTE_PREFIX))
            {
                detail.push('\n');
                detail.push_str(note);
            }
            Classified::of(Outcome::NonBlockingError {
                message: cap_text(
                    &format!("{label} hook error: Failed with non-blocking status code: {detail}"),
                    spill,
                ),
            })
        }
    }
}

/// Classifies an HTTP result.
pub(crate) fn classify_http(
    event: Event,
    r: &HttpOutcome,
    on_failure: OnFailure,
    label: &str,
    spill: Option<&Path>,
) -> Classified {
    let block_on_failure = on_failure == OnFailure::Block && on_failure_applies(event);
    let failure = |msg: String, timed_out: bool| {
        if block_on_failure {
            Classified::of(fail_closed(label, timed_out))
        } else if timed_out {
            Classified::of(Outcome::Cancelled)
        } else {
            Classified::of(Outcome::NonBlockingError {
                message: cap_text(&msg, spill),
            })
        }
    };
    match r {
        HttpOutcome::TimedOut => failure(String::new(), true),
        HttpOutcome::Failed(e) => failure(format!("{label}: request failed: {e}"), false),
        HttpOutcome::Response { status, .. } if !(200..300).contains(status) => {
            failure(format!("{label}: HTTP status {status}"), false)
        }
        HttpOutcome::Response { body, .. } => match classify_stdout(body) {
            Stdout::Empty => Classified::of(Outcome::Success),
            Stdout::Json(m) => match validate_output(event, &m) {
                Ok(()) => Classified {
                    outcome: Outcome::Success,
                    json: Some(m),
                    plain: None,
                },
                Err(e) => failure(
                    format!("{label}: JSON response failed validation: {e}"),
                    false,
                ),
            },
            _ => failure(
                format!("{label}: response body is neither empty nor a JSON object"),
                false,
            ),
        },
    }
}
