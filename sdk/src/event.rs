use serde::Deserialize;
use serde_json::Value;

/// An event as Claude Code sends it to hooks, with the fields every event shares and the
/// whole input kept for anything event-specific.
#[derive(Debug, Clone, PartialEq)]
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
    /// The complete input object.
    pub input: Value,
}

#[derive(Deserialize)]
struct Common {
    #[serde(default)]
    session_id: String,
    #[serde(default)]
    transcript_path: String,
    #[serde(default)]
    cwd: String,
    #[serde(default)]
    permission_mode: Option<String>,
}

impl HookEvent {
    /// Parses an event's input JSON.
    pub fn parse(name: &str, input: &str) -> Result<Self, serde_json::Error> {
        let value: Value = serde_json::from_str(input)?;
        let common = Common::deserialize(&value)?;
        Ok(HookEvent {
            name: name.to_string(),
            session_id: common.session_id,
            transcript_path: common.transcript_path,
            cwd: common.cwd,
            permission_mode: common.permission_mode,
            input: value,
        })
    }

    /// The tool call, for tool events (`PreToolUse`, `PostToolUse`, `PostToolUseFailure`,
    /// `PermissionRequest`, `PermissionDenied`).
    pub fn tool_call(&self) -> Option<ToolCall<'_>> {
        let tool_name = self.input.get("tool_name")?.as_str()?;
        Some(ToolCall {
            tool_name,
            tool_input: self.input.get("tool_input").unwrap_or(&Value::Null),
            tool_use_id: self.input.get("tool_use_id").and_then(Value::as_str),
        })
    }

    /// The event's typed payload (see [`typed`](crate::typed)).
    pub fn payload(&self) -> Result<crate::Payload, serde_json::Error> {
        crate::Payload::parse(&self.name, &self.input)
    }

    /// A string field of the input (`prompt`, `source`, `reason`, ...).
    pub fn str(&self, field: &str) -> Option<&str> {
        self.input.get(field)?.as_str()
    }
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

    #[test]
    fn non_tool_events_have_no_tool_call() {
        let e = HookEvent::parse("Stop", r#"{"session_id":"s","stop_hook_active":false}"#)
            .expect("parse");
        assert!(e.tool_call().is_none());
        assert!(HookEvent::parse("Stop", "[1]").is_err());
    }
}
