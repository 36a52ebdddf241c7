//! Typed views of the events Claude Code sends, one struct per event with the fields of its
//! input JSON (as captured from Claude Code 2.1.332). Fields every event shares are on
//! [`HookEvent`](crate::HookEvent); unknown fields are ignored, so newer inputs still parse.

use alloc::string::String;
use alloc::vec::Vec;

use serde::Deserialize;
use serde_json::Value;

/// `PreToolUse`: before a tool runs.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct PreToolUse {
    /// Tool name (`Bash`, `Read`, `mcp__server__tool`, ...).
    pub tool_name: String,
    /// The tool's input object.
    pub tool_input: Value,
    /// Id of this tool use.
    #[serde(default)]
    pub tool_use_id: Option<String>,
}

/// `PostToolUse`: after a tool succeeded.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct PostToolUse {
    /// Tool name.
    pub tool_name: String,
    /// The tool's input object.
    pub tool_input: Value,
    /// What the tool returned (shape depends on the tool).
    #[serde(default)]
    pub tool_response: Value,
    /// Id of this tool use.
    #[serde(default)]
    pub tool_use_id: Option<String>,
    /// How long the tool ran.
    #[serde(default)]
    pub duration_ms: Option<u64>,
}

/// `PostToolUseFailure`: after a tool failed.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct PostToolUseFailure {
    /// Tool name.
    pub tool_name: String,
    /// The tool's input object.
    pub tool_input: Value,
    /// Id of this tool use.
    #[serde(default)]
    pub tool_use_id: Option<String>,
    /// The error text.
    #[serde(default)]
    pub error: String,
    /// Whether the user interrupted it.
    #[serde(default)]
    pub is_interrupt: bool,
    /// How long the tool ran.
    #[serde(default)]
    pub duration_ms: Option<u64>,
}

/// `PermissionRequest`: a permission prompt is about to be shown.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct PermissionRequest {
    /// Tool name.
    pub tool_name: String,
    /// The tool's input object.
    pub tool_input: Value,
    /// The "always allow" options the prompt would offer.
    #[serde(default)]
    pub permission_suggestions: Vec<Value>,
}

/// `PermissionDenied`: a tool call was denied without a prompt.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct PermissionDenied {
    /// Tool name.
    pub tool_name: String,
    /// The tool's input object.
    pub tool_input: Value,
    /// Id of this tool use.
    #[serde(default)]
    pub tool_use_id: Option<String>,
    /// Why it was denied.
    #[serde(default)]
    pub reason: String,
}

/// One call in a [`PostToolBatch`].
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct BatchCall {
    /// Tool name.
    pub tool_name: String,
    /// The tool's input object.
    pub tool_input: Value,
    /// Id of this tool use.
    #[serde(default)]
    pub tool_use_id: Option<String>,
    /// What the tool returned.
    #[serde(default)]
    pub tool_response: Value,
}

/// `PostToolBatch`: after a batch of parallel tool calls.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct PostToolBatch {
    /// The calls, in order.
    pub tool_calls: Vec<BatchCall>,
}

/// `UserPromptSubmit`: the user sent a prompt.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct UserPromptSubmit {
    /// The prompt text.
    pub prompt: String,
}

/// `SessionStart`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct SessionStart {
    /// `startup`, `resume`, `clear` or `compact`.
    pub source: String,
}

/// `SessionEnd`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct SessionEnd {
    /// Why the session ended (`clear`, `logout`, `other`, ...).
    pub reason: String,
}

/// `Stop` (and `SubagentStop`): the agent is about to stop.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Stop {
    /// True when a Stop hook already blocked once in this turn (avoid loops).
    #[serde(default)]
    pub stop_hook_active: bool,
    /// The final assistant message, if any.
    #[serde(default)]
    pub last_assistant_message: Option<String>,
}

/// An event's typed payload.
#[derive(Debug, Clone, PartialEq)]
pub enum Payload {
    /// `PreToolUse`.
    PreToolUse(PreToolUse),
    /// `PostToolUse`.
    PostToolUse(PostToolUse),
    /// `PostToolUseFailure`.
    PostToolUseFailure(PostToolUseFailure),
    /// `PermissionRequest`.
    PermissionRequest(PermissionRequest),
    /// `PermissionDenied`.
    PermissionDenied(PermissionDenied),
    /// `PostToolBatch`.
    PostToolBatch(PostToolBatch),
    /// `UserPromptSubmit`.
    UserPromptSubmit(UserPromptSubmit),
    /// `SessionStart`.
    SessionStart(SessionStart),
    /// `SessionEnd`.
    SessionEnd(SessionEnd),
    /// `Stop` or `SubagentStop`.
    Stop(Stop),
    /// Any other event: read [`HookEvent::input`](crate::HookEvent::input).
    Other,
}

impl Payload {
    /// Parses the payload of event `name` from its input.
    pub fn parse(name: &str, input: &Value) -> Result<Payload, serde_json::Error> {
        fn de<T: serde::de::DeserializeOwned>(v: &Value) -> Result<T, serde_json::Error> {
            T::deserialize(v)
        }
        Ok(match name {
            "PreToolUse" => Payload::PreToolUse(de(input)?),
            "PostToolUse" => Payload::PostToolUse(de(input)?),
            "PostToolUseFailure" => Payload::PostToolUseFailure(de(input)?),
            "PermissionRequest" => Payload::PermissionRequest(de(input)?),
            "PermissionDenied" => Payload::PermissionDenied(de(input)?),
            "PostToolBatch" => Payload::PostToolBatch(de(input)?),
            "UserPromptSubmit" => Payload::UserPromptSubmit(de(input)?),
            "SessionStart" => Payload::SessionStart(de(input)?),
            "SessionEnd" => Payload::SessionEnd(de(input)?),
            "Stop" | "SubagentStop" => Payload::Stop(de(input)?),
            _ => Payload::Other,
        })
    }
}
