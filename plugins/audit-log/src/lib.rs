//! audit-log: one JSON line per tool call, appended to `audit.jsonl` in the plugin's data
//! directory.
//!
//! The hook never decides anything: whatever happens (no data directory, a refused or failed
//! write), it answers `none` and says why in the host's log. A logging hook must not be the
//! reason a session breaks.

use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value, json};
use warden_sdk::fs::{self, ErrorCode};
use warden_sdk::log::{self, Level};
use warden_sdk::{Hook, HookEvent, HookResult, env};

/// The log file's name inside `${CLAUDE_PLUGIN_DATA}`.
const LOG_FILE: &str = "audit.jsonl";
/// Longest string kept from a tool input or an error message, in characters.
const MAX_VALUE_CHARS: usize = 500;
/// Most top-level fields kept from the input of a tool the hook does not know.
const MAX_FIELDS: usize = 20;

struct AuditLog;

impl Hook for AuditLog {
    fn handle(event: HookEvent) -> HookResult {
        if let Some(line) = record(&event) {
            write_line(&line);
        }
        HookResult::none()
    }
}

warden_sdk::export_hook!(AuditLog);

/// The log line for a tool event, or `None` for any other event.
fn record(event: &HookEvent) -> Option<String> {
    let call = event.tool_call()?;
    let failed = event.name == "PostToolUseFailure";
    let mut entry = json!({
        "ts": rfc3339_now(),
        "event": event.name,
        "session_id": event.session_id,
        "tool_name": call.tool_name,
        "tool_use_id": call.tool_use_id,
        "cwd": event.cwd,
        "input": summarize_input(call.tool_name, call.tool_input),
        "error": failed || event.input().get("tool_response").is_some_and(shows_error),
    });
    if failed && let Some(message) = event.str("error") {
        entry["error_message"] = Value::String(cap(message));
    }
    if let Some(ms) = event.input().get("duration_ms").and_then(Value::as_u64) {
        entry["duration_ms"] = ms.into();
    }
    let mut line = entry.to_string();
    line.push('\n');
    Some(line)
}

/// Appends one line; on failure, logs why and carries on.
fn write_line(line: &str) {
    let Some(dir) = env::get("CLAUDE_PLUGIN_DATA").filter(|d| !d.is_empty()) else {
        log::log(
            Level::Warn,
            "audit-log: CLAUDE_PLUGIN_DATA is not set (grant env = [\"CLAUDE_PLUGIN_DATA\"]); nothing recorded",
        );
        return;
    };
    let path = format!("{}/{LOG_FILE}", dir.trim_end_matches('/'));
    let mut result = fs::append(&path, line.as_bytes());
    // The host creates the data directory when it grants it; create it if it was removed since.
    if matches!(&result, Err(e) if e.code == ErrorCode::NotFound) && fs::create_dir(&dir).is_ok() {
        result = fs::append(&path, line.as_bytes());
    }
    if let Err(e) = result {
        log::log(
            Level::Warn,
            &format!("audit-log: cannot append to {path}: {}", e.message),
        );
    }
}

/// The few input fields that say what a call did, each string capped.
///
/// Known tools keep the fields that identify the call (Bash its command, file tools their path,
/// searches their pattern); file contents and edit strings are left out, or reduced to their
/// size. Any other tool (MCP tools, plugin tools) keeps its top-level fields, each capped.
fn summarize_input(tool: &str, input: &Value) -> Value {
    let pick = |fields: &[&str]| {
        let mut out = Map::new();
        for f in fields {
            if let Some(v) = input.get(*f).filter(|v| !v.is_null()) {
                out.insert((*f).to_string(), capped(v));
            }
        }
        out
    };
    let size = |field: &str| input.get(field).and_then(Value::as_str).map(str::len);
    let mut out = match tool {
        "Bash" => pick(&["command", "run_in_background"]),
        "Read" => pick(&["file_path", "offset", "limit"]),
        "Write" => {
            let mut out = pick(&["file_path"]);
            if let Some(n) = size("content") {
                out.insert("content_bytes".into(), n.into());
            }
            out
        }
        "Edit" => pick(&["file_path", "replace_all"]),
        "MultiEdit" => {
            let mut out = pick(&["file_path"]);
            if let Some(edits) = input.get("edits").and_then(Value::as_array) {
                out.insert("edits".into(), edits.len().into());
            }
            out
        }
        "NotebookEdit" => pick(&["notebook_path", "cell_id", "edit_mode"]),
        "Glob" => pick(&["pattern", "path"]),
        "Grep" => pick(&["pattern", "path", "glob", "type", "output_mode"]),
        "WebFetch" => pick(&["url"]),
        "WebSearch" => pick(&["query"]),
        "Task" | "Agent" => pick(&["description", "subagent_type"]),
        "Skill" => pick(&["skill", "command"]),
        _ => match input {
            Value::Object(fields) => fields
                .iter()
                .take(MAX_FIELDS)
                .map(|(k, v)| (k.clone(), capped(v)))
                .collect(),
            Value::Null => Map::new(),
            other => Map::from_iter([("value".to_string(), capped(other))]),
        },
    };
    if let Value::Object(fields) = input
        && fields.len() > MAX_FIELDS
        && !out.contains_key("fields")
    {
        out.insert("fields".into(), fields.len().into());
    }
    Value::Object(out)
}

/// A scalar as is and a string capped; arrays and objects as their compact JSON text, capped.
fn capped(v: &Value) -> Value {
    match v {
        Value::String(s) => Value::String(cap(s)),
        Value::Array(_) | Value::Object(_) => Value::String(cap(&v.to_string())),
        scalar => scalar.clone(),
    }
}

/// `s` cut to [`MAX_VALUE_CHARS`] characters, marked with `…` when cut.
fn cap(s: &str) -> String {
    match s.char_indices().nth(MAX_VALUE_CHARS) {
        Some((end, _)) => format!("{}…", &s[..end]),
        None => s.to_string(),
    }
}

/// Whether a `PostToolUse` response reports a failure: an MCP result with `isError`, a Bash
/// call that was interrupted, or an `error`/`success: false` field as other tools write them.
fn shows_error(response: &Value) -> bool {
    match response {
        Value::Object(o) => {
            let flag = |k: &str| o.get(k).and_then(Value::as_bool) == Some(true);
            flag("is_error")
                || flag("isError")
                || flag("interrupted")
                || o.get("success").and_then(Value::as_bool) == Some(false)
                || o.get("error").is_some_and(|e| match e {
                    Value::Null | Value::Bool(false) => false,
                    Value::String(s) => !s.is_empty(),
                    _ => true,
                })
        }
        // MCP content blocks.
        Value::Array(items) => items.iter().any(|i| {
            i.get("isError").and_then(Value::as_bool) == Some(true)
                || i.get("is_error").and_then(Value::as_bool) == Some(true)
        }),
        _ => false,
    }
}

/// The WASI wall clock as RFC 3339 UTC with milliseconds, e.g. `2025-06-01T12:00:00.123Z`.
fn rfc3339_now() -> String {
    let since = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    rfc3339(since.as_secs(), since.subsec_millis())
}

fn rfc3339(secs: u64, millis: u32) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{millis:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Days since 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's `civil_from_days`).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_utc_timestamps() {
        assert_eq!(rfc3339(0, 0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339(951_782_400, 5), "2000-02-29T00:00:00.005Z");
        assert_eq!(rfc3339(1_735_689_599, 999), "2024-12-31T23:59:59.999Z");
        assert_eq!(rfc3339(4_107_542_400, 0), "2100-03-01T00:00:00.000Z");
    }

    #[test]
    fn summaries_keep_what_identifies_the_call() {
        let bash = summarize_input("Bash", &json!({"command": "ls", "description": "list"}));
        assert_eq!(bash, json!({"command": "ls"}));
        let write = summarize_input("Write", &json!({"file_path": "/p/a", "content": "héllo"}));
        assert_eq!(write, json!({"file_path": "/p/a", "content_bytes": 6}));
        let long = "x".repeat(2000);
        let mcp = summarize_input("mcp__s__t", &json!({"q": long, "n": 3, "o": {"a": 1}}));
        assert_eq!(mcp["q"].as_str().map(|s| s.chars().count()), Some(501));
        assert_eq!(mcp["n"], 3);
        assert_eq!(mcp["o"], "{\"a\":1}");
    }

    #[test]
    fn errors_are_recognised() {
        assert!(!shows_error(
            &json!({"stdout": "", "stderr": "", "interrupted": false})
        ));
        assert!(shows_error(&json!({"interrupted": true})));
        assert!(shows_error(&json!({"isError": true, "content": []})));
        assert!(shows_error(&json!({"error": "boom"})));
        assert!(!shows_error(&json!({"error": null})));
        assert!(!shows_error(&json!([{"type": "text", "text": "ok"}])));
    }

    #[test]
    fn lines_are_one_json_object() {
        let input = r#"{"session_id":"s","transcript_path":"/t","cwd":"/p","hook_event_name":"PostToolUseFailure","tool_name":"Bash","tool_input":{"command":"git push"},"tool_use_id":"t1","error":"Exit code 128","duration_ms":196}"#;
        let event = HookEvent::parse("PostToolUseFailure", input).expect("event");
        let line = record(&event).expect("a line");
        assert!(line.ends_with('\n') && !line[..line.len() - 1].contains('\n'));
        let v: Value = serde_json::from_str(&line).expect("json");
        assert_eq!(v["tool_name"], "Bash");
        assert_eq!(v["input"], json!({"command": "git push"}));
        assert_eq!(v["error"], true);
        assert_eq!(v["error_message"], "Exit code 128");
        assert_eq!(v["duration_ms"], 196);
        assert!(
            record(&HookEvent::parse("Stop", r#"{"session_id":"s"}"#).expect("stop")).is_none()
        );
    }
}
