use alloc::borrow::Cow;
use alloc::string::{String, ToString};
use core::cell::OnceCell;

use serde::Deserialize;
use serde_json::Value;

/// An event as Claude Code sends it to hooks: the fields every event shares, the tool call
/// of tool events, and the whole input for anything event-specific.
///
/// Parsing reads only the shared fields and the tool call; the complete input is parsed the
/// first time [`input`](HookEvent::input) (or [`payload`](HookEvent::payload) or
/// [`str`](HookEvent::str)) asks for it, since most hooks never need it and every call runs
/// in a fresh sandbox that would pay for it each time.
#[derive(Debug, Clone)]
pub struct HookEvent {
    /// The event name (`PreToolUse`, `Stop`, ...).
    pub name: String,
    /// `session_id`.
    pub session_id: String,
    /// `transcript_path`.
    pub transcript_path: String,
    /// `cwd`: the session's working directory.
    pub cwd: String,
    /// `permission_mode`, when the event carries one.
    pub permission_mode: Option<String>,
    tool: Option<Tool>,
    raw: String,
    input: OnceCell<Value>,
}

#[derive(Debug, Clone)]
struct Tool {
    name: String,
    input: Value,
    use_id: Option<String>,
}

/// The fields read eagerly; everything else is skipped without being built.
#[derive(Deserialize)]
struct Head<'a> {
    #[serde(default, borrow)]
    session_id: Cow<'a, str>,
    #[serde(default, borrow)]
    transcript_path: Cow<'a, str>,
    #[serde(default, borrow)]
    cwd: Cow<'a, str>,
    #[serde(default, borrow)]
    permission_mode: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    tool_name: Option<Cow<'a, str>>,
    #[serde(default)]
    tool_input: Option<Value>,
    #[serde(default, borrow)]
    tool_use_id: Option<Cow<'a, str>>,
}

impl PartialEq for HookEvent {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name && self.input() == other.input()
    }
}

impl HookEvent {
    /// Parses an event's input JSON, which must be an object.
    pub fn parse(name: &str, input: &str) -> Result<Self, serde_json::Error> {
        Self::parse_owned(name, input.to_string())
    }

    /// Like [`parse`](HookEvent::parse), keeping `input` as the event's raw text.
    pub fn parse_owned(name: &str, input: String) -> Result<Self, serde_json::Error> {
        let head = parse_head(&input)?;
        let tool = head.tool_name.map(|n| Tool {
            name: n.into_owned(),
            input: head.tool_input.unwrap_or(Value::Null),
            use_id: head.tool_use_id.map(Cow::into_owned),
        });
        Ok(HookEvent {
            name: name.to_string(),
            session_id: head.session_id.into_owned(),
            transcript_path: head.transcript_path.into_owned(),
            cwd: head.cwd.into_owned(),
            permission_mode: head.permission_mode.map(Cow::into_owned),
            tool,
            input: OnceCell::new(),
            raw: input,
        })
    }

    /// The complete input object.
    pub fn input(&self) -> &Value {
        // `parse` already checked that the text is one JSON object.
        self.input
            .get_or_init(|| serde_json::from_str(&self.raw).unwrap_or(Value::Null))
    }

    /// The input exactly as the host sent it.
    pub fn raw_input(&self) -> &str {
        &self.raw
    }

    /// The tool call, for tool events (`PreToolUse`, `PostToolUse`, `PostToolUseFailure`,
    /// `PermissionRequest`, `PermissionDenied`).
    pub fn tool_call(&self) -> Option<ToolCall<'_>> {
        let tool = self.tool.as_ref()?;
        Some(ToolCall {
            tool_name: &tool.name,
            tool_input: &tool.input,
            tool_use_id: tool.use_id.as_deref(),
        })
    }

    /// The event's typed payload (see [`typed`](crate::typed)).
    pub fn payload(&self) -> Result<crate::Payload, serde_json::Error> {
        crate::Payload::parse(&self.name, self.input())
    }

    /// A string field of the input (`prompt`, `source`, `reason`, ...).
    pub fn str(&self, field: &str) -> Option<&str> {
        self.input().get(field)?.as_str()
    }
}

/// Reads the shared fields, refusing anything but an object (a derived struct would also
/// accept an array).
fn parse_head(input: &str) -> Result<Head<'_>, serde_json::Error> {
    if !input.trim_start().starts_with('{') {
        return Err(<serde_json::Error as serde::de::Error>::custom(
            "a hook event must be a JSON object",
        ));
    }
    serde_json::from_str(input)
}

/// A tool call inside a tool event.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ToolCall<'a> {
    /// `tool_name`, e.g. `Bash` or `mcp__server__tool`.
    pub tool_name: &'a str,
    /// `tool_input`.
    pub tool_input: &'a Value,
    /// `tool_use_id`, when present.
    pub tool_use_id: Option<&'a str>,
}

impl<'a> ToolCall<'a> {
    /// A string field of the tool input.
    pub fn input_str(&self, field: &str) -> Option<&'a str> {
        self.tool_input.get(field)?.as_str()
    }

    /// `tool_input.file_path` (Read, Edit, Write, NotebookEdit).
    pub fn file_path(&self) -> Option<&'a str> {
        self.input_str("file_path")
            .or_else(|| self.input_str("notebook_path"))
    }

    /// `tool_input.command` (Bash).
    pub fn command(&self) -> Option<&'a str> {
        self.input_str("command")
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;

    #[test]
    fn parses_a_pre_tool_use_payload() {
        let input = r#"{"session_id":"s","transcript_path":"/t","cwd":"/p","permission_mode":"default",
            "hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"/p/.env"},"tool_use_id":"x"}"#;
        let e = HookEvent::parse("PreToolUse", input).expect("parse");
        let call = e.tool_call().expect("tool call");
        assert_eq!(call.tool_name, "Read");
        assert_eq!(call.file_path(), Some("/p/.env"));
        assert_eq!(e.permission_mode.as_deref(), Some("default"));
    }

    /// Every captured Claude Code payload parses into its typed struct.
    #[test]
    fn reference_payloads_parse_into_their_types() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../host/crates/hooks/tests/fixtures/hook_stdin");
        let mut seen = 0;
        for entry in std::fs::read_dir(&dir).expect("fixtures") {
            let path = entry.expect("entry").path();
            let file = path
                .file_name()
                .and_then(|n| n.to_str())
                .expect("name")
                .to_string();
            let name = file
                .split("__")
                .next()
                .expect("event")
                .trim_end_matches(".json")
                .to_string();
            let text = std::fs::read_to_string(&path).expect("read");
            let event = HookEvent::parse(&name, &text).expect("parse");
            assert!(!event.session_id.is_empty(), "{file}");
            let payload = event.payload().unwrap_or_else(|e| panic!("{file}: {e}"));
            let ok = match (name.as_str(), &payload) {
                ("PreToolUse", crate::Payload::PreToolUse(p)) => !p.tool_name.is_empty(),
                ("PostToolUse", crate::Payload::PostToolUse(p)) => !p.tool_response.is_null(),
                ("PostToolUseFailure", crate::Payload::PostToolUseFailure(p)) => {
                    !p.error.is_empty()
                }
                ("PermissionRequest", crate::Payload::PermissionRequest(p)) => {
                    !p.permission_suggestions.is_empty()
                }
                ("PermissionDenied", crate::Payload::PermissionDenied(p)) => !p.reason.is_empty(),
                ("PostToolBatch", crate::Payload::PostToolBatch(p)) => !p.tool_calls.is_empty(),
                ("UserPromptSubmit", crate::Payload::UserPromptSubmit(p)) => !p.prompt.is_empty(),
                ("SessionStart", crate::Payload::SessionStart(p)) => p.source == "startup",
                ("SessionEnd", crate::Payload::SessionEnd(p)) => !p.reason.is_empty(),
                ("Stop", crate::Payload::Stop(_)) => true,
                _ => false,
            };
            assert!(ok, "{file} parsed as {payload:?}");
            seen += 1;
        }
        assert!(seen >= 12, "only {seen} fixtures");
    }

    /// The lazily parsed input is the whole object, escapes and unknown fields included.
    #[test]
    fn input_is_parsed_whole_on_demand() {
        let text = r#"{"session_id":"s\u00e9","cwd":"/p","tool_name":"Bash","tool_input":{"command":"ls \"a b\""},"extra":[1,{"x":null}]}"#;
        let e = HookEvent::parse("PreToolUse", text).expect("parse");
        assert_eq!(e.session_id, "s\u{e9}");
        assert_eq!(e.tool_call().and_then(|c| c.command()), Some("ls \"a b\""));
        let whole: Value = serde_json::from_str(text).expect("json");
        assert_eq!(e.input(), &whole);
        assert_eq!(e.str("cwd"), Some("/p"));
        assert_eq!(e.raw_input(), text);
        assert!(HookEvent::parse("PreToolUse", r#"{"session_id": 3}"#).is_err());
        assert!(HookEvent::parse("PreToolUse", "[]").is_err());
    }

    #[test]
    fn non_tool_events_have_no_tool_call() {
        let e = HookEvent::parse("Stop", r#"{"session_id":"s","stop_hook_active":false}"#)
            .expect("parse");
        assert!(e.tool_call().is_none());
        assert!(HookEvent::parse("Stop", "[1]").is_err());
    }
}
