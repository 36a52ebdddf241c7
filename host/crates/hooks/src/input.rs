//! Hook input JSON (spec 1.9): the stdin of command hooks, the POST body of http hooks and the
//! input of WASM hooks.
//!
//! Field order matters to byte-level compatibility (the workspace enables `preserve_order`), so
//! the structs below declare fields in the order Claude Code 2.1.332 writes them: common fields
//! (`session_id`, `transcript_path`, `cwd`, `prompt_id`, `permission_mode`, `effort`),
//! `hook_event_name`, the event's fields, and `mcp_server` last for MCP tools. Where no capture
//! shows the position (`agent_id` / `agent_type` as common fields) they follow `effort`.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use warden_vocab::Event;

/// `effort` of tool-context events.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Effort {
    /// `low` | `medium` | `high` | `xhigh` | `max`.
    pub level: String,
}

/// Fields common to every event. Optional ones are omitted when `None`, as Claude Code omits
/// them (e.g. `SessionStart` has no `prompt_id` or `permission_mode`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CommonFields {
    /// Session id.
    pub session_id: String,
    /// Transcript JSONL path.
    pub transcript_path: String,
    /// Current working directory.
    pub cwd: String,
    /// Prompt id (absent before the first user input).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_id: Option<String>,
    /// Permission mode (not on every event).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permission_mode: Option<String>,
    /// Effort level (tool-context events).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effort: Option<Effort>,
    /// Subagent id, only inside a subagent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    /// Agent type, with `--agent` or inside a subagent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_type: Option<String>,
}

/// `mcp_server` of MCP tool events.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct McpServerInfo {
    /// Server name.
    pub name: String,
    /// Where it was configured (`dynamic`, …).
    pub source: String,
}

macro_rules! payload_structs {
    ($( $(#[$sm:meta])* $name:ident { $( $(#[$fm:meta])* $field:ident : $ty:ty ),* $(,)? } )*) => {
        $(
            $(#[$sm])*
            #[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
            #[allow(missing_docs)] // Field names and meanings are those of spec 1.9.
            pub struct $name { $( $(#[$fm])* pub $field: $ty ),* }
        )*
    };
}

payload_structs! {
    /// `SessionStart`.
    SessionStart {
        source: String,
        #[serde(default, skip_serializing_if = "Option::is_none")] model: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")] agent_type: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")] session_title: Option<String>,
    }
    /// `Setup`.
    Setup { trigger: String }
    /// `InstructionsLoaded`.
    InstructionsLoaded {
        file_path: String,
        memory_type: String,
        load_reason: String,
        #[serde(default, skip_serializing_if = "Option::is_none")] globs: Option<Vec<String>>,
        #[serde(default, skip_serializing_if = "Option::is_none")] trigger_file_path: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")] parent_file_path: Option<String>,
    }
    /// `UserPromptSubmit`.
    UserPromptSubmit { prompt: String }
    /// `UserPromptExpansion`.
    UserPromptExpansion {
        expansion_type: String,
        command_name: String,
        command_args: String,
        command_source: String,
        prompt: String,
    }
    /// `MessageDisplay`.
    MessageDisplay {
        turn_id: String,
        message_id: String,
        index: u64,
        #[serde(rename = "final")] is_final: bool,
        delta: String,
    }
    /// `PreToolUse`.
    PreToolUse {
        tool_name: String,
        tool_input: Value,
        tool_use_id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")] mcp_server: Option<McpServerInfo>,
    }
    /// `PermissionRequest` (no `tool_use_id`).
    PermissionRequest {
        tool_name: String,
        tool_input: Value,
        #[serde(default, skip_serializing_if = "Option::is_none")] permission_suggestions: Option<Vec<Value>>,
        #[serde(default, skip_serializing_if = "Option::is_none")] mcp_server: Option<McpServerInfo>,
    }
    /// `PermissionDenied`.
    PermissionDenied {
        tool_name: String,
        tool_input: Value,
        tool_use_id: String,
        reason: String,
        #[serde(default, skip_serializing_if = "Option::is_none")] mcp_server: Option<McpServerInfo>,
    }
    /// `PostToolUse`.
    PostToolUse {
        tool_name: String,
        tool_input: Value,
        tool_response: Value,
        tool_use_id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")] duration_ms: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")] mcp_server: Option<McpServerInfo>,
    }
    /// `PostToolUseFailure`.
    PostToolUseFailure {
        tool_name: String,
        tool_input: Value,
        tool_use_id: String,
        error: String,
        #[serde(default, skip_serializing_if = "Option::is_none")] is_interrupt: Option<bool>,
        #[serde(default, skip_serializing_if = "Option::is_none")] duration_ms: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")] mcp_server: Option<McpServerInfo>,
    }
    /// One entry of `PostToolBatch.tool_calls`.
    ToolCall {
        tool_name: String,
        tool_input: Value,
        tool_use_id: String,
        tool_response: Value,
    }
    /// `PostToolBatch`.
    PostToolBatch { tool_calls: Vec<ToolCall> }
    /// `Notification`.
    Notification {
        message: String,
        #[serde(default, skip_serializing_if = "Option::is_none")] title: Option<String>,
        notification_type: String,
    }
    /// `SubagentStart`.
    SubagentStart { agent_id: String, agent_type: String }
    /// `SubagentStop`.
    SubagentStop {
        stop_hook_active: bool,
        agent_id: String,
        agent_type: String,
        agent_transcript_path: String,
        last_assistant_message: String,
        background_tasks: Vec<Value>,
        session_crons: Vec<Value>,
    }
    /// `TaskCreated` and `TaskCompleted`.
    Task {
        task_id: String,
        task_subject: String,
        #[serde(default, skip_serializing_if = "Option::is_none")] task_description: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")] teammate_name: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")] team_name: Option<String>,
    }
    /// `Stop`.
    Stop {
        stop_hook_active: bool,
        last_assistant_message: String,
        background_tasks: Vec<Value>,
        session_crons: Vec<Value>,
    }
    /// `StopFailure`.
    StopFailure {
        error: String,
        #[serde(default, skip_serializing_if = "Option::is_none")] error_details: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")] last_assistant_message: Option<String>,
    }
    /// `TeammateIdle`.
    TeammateIdle { teammate_name: String, team_name: String }
    /// `ConfigChange`.
    ConfigChange {
        source: String,
        #[serde(default, skip_serializing_if = "Option::is_none")] file_path: Option<String>,
    }
    /// `CwdChanged`.
    CwdChanged { old_cwd: String, new_cwd: String }
    /// `DirectoryAdded`.
    DirectoryAdded { directory: String, source: String }
    /// `FileChanged`.
    FileChanged { file_path: String, event: String }
    /// `WorktreeCreate`.
    WorktreeCreate { name: String }
    /// `WorktreeRemove`.
    WorktreeRemove { worktree_path: String }
    /// `PreCompact`.
    PreCompact { trigger: String, custom_instructions: String }
    /// `PostCompact`.
    PostCompact { trigger: String, compact_summary: String }
    /// `Elicitation`.
    Elicitation {
        mcp_server_name: String,
        message: String,
        #[serde(default, skip_serializing_if = "Option::is_none")] mode: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")] url: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")] elicitation_id: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")] requested_schema: Option<Value>,
    }
    /// `ElicitationResult`.
    ElicitationResult {
        mcp_server_name: String,
        action: String,
        #[serde(default, skip_serializing_if = "Option::is_none")] mode: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")] elicitation_id: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")] content: Option<Value>,
    }
    /// `SessionEnd`.
    SessionEnd { reason: String }
}

/// Event-specific input fields.
#[derive(Debug, Clone, PartialEq)]
#[allow(missing_docs)] // Each variant carries the fields of the event of the same name.
pub enum EventPayload {
    SessionStart(SessionStart),
    Setup(Setup),
    InstructionsLoaded(InstructionsLoaded),
    UserPromptSubmit(UserPromptSubmit),
    UserPromptExpansion(UserPromptExpansion),
    MessageDisplay(MessageDisplay),
    PreToolUse(PreToolUse),
    PermissionRequest(PermissionRequest),
    PermissionDenied(PermissionDenied),
    PostToolUse(PostToolUse),
    PostToolUseFailure(PostToolUseFailure),
    PostToolBatch(PostToolBatch),
    Notification(Notification),
    SubagentStart(SubagentStart),
    SubagentStop(SubagentStop),
    TaskCreated(Task),
    TaskCompleted(Task),
    Stop(Stop),
    StopFailure(StopFailure),
    TeammateIdle(TeammateIdle),
    ConfigChange(ConfigChange),
    CwdChanged(CwdChanged),
    DirectoryAdded(DirectoryAdded),
    FileChanged(FileChanged),
    WorktreeCreate(WorktreeCreate),
    WorktreeRemove(WorktreeRemove),
    PreCompact(PreCompact),
    PostCompact(PostCompact),
    Elicitation(Elicitation),
    ElicitationResult(ElicitationResult),
    SessionEnd(SessionEnd),
    /// An event whose payload is not documented (`PreModelSwitch`, `PostModelSwitch`): its
    /// fields as given.
    Other(Event, Map<String, Value>),
}

macro_rules! payload_dispatch {
    ($self:expr, $v:ident => $body:expr, other($e:ident, $m:ident) => $other:expr) => {
        match $self {
            EventPayload::SessionStart($v) => $body,
            EventPayload::Setup($v) => $body,
            EventPayload::InstructionsLoaded($v) => $body,
            EventPayload::UserPromptSubmit($v) => $body,
            EventPayload::UserPromptExpansion($v) => $body,
            EventPayload::MessageDisplay($v) => $body,
            EventPayload::PreToolUse($v) => $body,
            EventPayload::PermissionRequest($v) => $body,
            EventPayload::PermissionDenied($v) => $body,
            EventPayload::PostToolUse($v) => $body,
            EventPayload::PostToolUseFailure($v) => $body,
            EventPayload::PostToolBatch($v) => $body,
            EventPayload::Notification($v) => $body,
            EventPayload::SubagentStart($v) => $body,
            EventPayload::SubagentStop($v) => $body,
            EventPayload::TaskCreated($v) => $body,
            EventPayload::TaskCompleted($v) => $body,
            EventPayload::Stop($v) => $body,
            EventPayload::StopFailure($v) => $body,
            EventPayload::TeammateIdle($v) => $body,
            EventPayload::ConfigChange($v) => $body,
            EventPayload::CwdChanged($v) => $body,
            EventPayload::DirectoryAdded($v) => $body,
            EventPayload::FileChanged($v) => $body,
            EventPayload::WorktreeCreate($v) => $body,
            EventPayload::WorktreeRemove($v) => $body,
            EventPayload::PreCompact($v) => $body,
            EventPayload::PostCompact($v) => $body,
            EventPayload::Elicitation($v) => $body,
            EventPayload::ElicitationResult($v) => $body,
            EventPayload::SessionEnd($v) => $body,
            EventPayload::Other($e, $m) => $other,
        }
    };
}

impl EventPayload {
    /// The event these fields belong to.
    pub fn event(&self) -> Event {
        match self {
            EventPayload::SessionStart(_) => Event::SessionStart,
            EventPayload::Setup(_) => Event::Setup,
            EventPayload::InstructionsLoaded(_) => Event::InstructionsLoaded,
            EventPayload::UserPromptSubmit(_) => Event::UserPromptSubmit,
            EventPayload::UserPromptExpansion(_) => Event::UserPromptExpansion,
            EventPayload::MessageDisplay(_) => Event::MessageDisplay,
            EventPayload::PreToolUse(_) => Event::PreToolUse,
            EventPayload::PermissionRequest(_) => Event::PermissionRequest,
            EventPayload::PermissionDenied(_) => Event::PermissionDenied,
            EventPayload::PostToolUse(_) => Event::PostToolUse,
            EventPayload::PostToolUseFailure(_) => Event::PostToolUseFailure,
            EventPayload::PostToolBatch(_) => Event::PostToolBatch,
            EventPayload::Notification(_) => Event::Notification,
            EventPayload::SubagentStart(_) => Event::SubagentStart,
            EventPayload::SubagentStop(_) => Event::SubagentStop,
            EventPayload::TaskCreated(_) => Event::TaskCreated,
            EventPayload::TaskCompleted(_) => Event::TaskCompleted,
            EventPayload::Stop(_) => Event::Stop,
            EventPayload::StopFailure(_) => Event::StopFailure,
            EventPayload::TeammateIdle(_) => Event::TeammateIdle,
            EventPayload::ConfigChange(_) => Event::ConfigChange,
            EventPayload::CwdChanged(_) => Event::CwdChanged,
            EventPayload::DirectoryAdded(_) => Event::DirectoryAdded,
            EventPayload::FileChanged(_) => Event::FileChanged,
            EventPayload::WorktreeCreate(_) => Event::WorktreeCreate,
            EventPayload::WorktreeRemove(_) => Event::WorktreeRemove,
            EventPayload::PreCompact(_) => Event::PreCompact,
            EventPayload::PostCompact(_) => Event::PostCompact,
            EventPayload::Elicitation(_) => Event::Elicitation,
            EventPayload::ElicitationResult(_) => Event::ElicitationResult,
            EventPayload::SessionEnd(_) => Event::SessionEnd,
            EventPayload::Other(e, _) => *e,
        }
    }

    fn to_map(&self) -> Map<String, Value> {
        payload_dispatch!(self, v => match serde_json::to_value(v) {
            Ok(Value::Object(m)) => m,
            // Derived serialisation of these structs always yields an object.
            _ => Map::new(),
        }, other(_e, m) => m.clone())
    }

    /// Reads the fields of `event` from a full input object (common fields are ignored).
    pub fn from_value(event: Event, value: &Value) -> Result<EventPayload, serde_json::Error> {
        fn de<T: serde::de::DeserializeOwned>(v: &Value) -> Result<T, serde_json::Error> {
            T::deserialize(v)
        }
        Ok(match event {
            Event::SessionStart => EventPayload::SessionStart(de(value)?),
            Event::Setup => EventPayload::Setup(de(value)?),
            Event::InstructionsLoaded => EventPayload::InstructionsLoaded(de(value)?),
            Event::UserPromptSubmit => EventPayload::UserPromptSubmit(de(value)?),
            Event::UserPromptExpansion => EventPayload::UserPromptExpansion(de(value)?),
            Event::MessageDisplay => EventPayload::MessageDisplay(de(value)?),
            Event::PreToolUse => EventPayload::PreToolUse(de(value)?),
            Event::PermissionRequest => EventPayload::PermissionRequest(de(value)?),
            Event::PermissionDenied => EventPayload::PermissionDenied(de(value)?),
            Event::PostToolUse => EventPayload::PostToolUse(de(value)?),
            Event::PostToolUseFailure => EventPayload::PostToolUseFailure(de(value)?),
            Event::PostToolBatch => EventPayload::PostToolBatch(de(value)?),
            Event::Notification => EventPayload::Notification(de(value)?),
            Event::SubagentStart => EventPayload::SubagentStart(de(value)?),
            Event::SubagentStop => EventPayload::SubagentStop(de(value)?),
            Event::TaskCreated => EventPayload::TaskCreated(de(value)?),
            Event::TaskCompleted => EventPayload::TaskCompleted(de(value)?),
            Event::Stop => EventPayload::Stop(de(value)?),
            Event::StopFailure => EventPayload::StopFailure(de(value)?),
            Event::TeammateIdle => EventPayload::TeammateIdle(de(value)?),
            Event::ConfigChange => EventPayload::ConfigChange(de(value)?),
            Event::CwdChanged => EventPayload::CwdChanged(de(value)?),
            Event::DirectoryAdded => EventPayload::DirectoryAdded(de(value)?),
            Event::FileChanged => EventPayload::FileChanged(de(value)?),
            Event::WorktreeCreate => EventPayload::WorktreeCreate(de(value)?),
            Event::WorktreeRemove => EventPayload::WorktreeRemove(de(value)?),
            Event::PreCompact => EventPayload::PreCompact(de(value)?),
            Event::PostCompact => EventPayload::PostCompact(de(value)?),
            Event::Elicitation => EventPayload::Elicitation(de(value)?),
            Event::ElicitationResult => EventPayload::ElicitationResult(de(value)?),
            Event::SessionEnd => EventPayload::SessionEnd(de(value)?),
            Event::PreModelSwitch | Event::PostModelSwitch => {
                let mut m = value.as_object().cloned().unwrap_or_default();
                for k in COMMON_KEYS {
                    m.remove(*k);
                }
                EventPayload::Other(event, m)
            }
        })
    }
}

const COMMON_KEYS: &[&str] = &[
    "session_id",
    "transcript_path",
    "cwd",
    "prompt_id",
    "permission_mode",
    "effort",
    "agent_id",
    "agent_type",
    "hook_event_name",
];

/// A complete hook input.
#[derive(Debug, Clone, PartialEq)]
pub struct HookInput {
    /// Common fields.
    pub common: CommonFields,
    /// Event fields.
    pub payload: EventPayload,
}

/// Why an input object could not be read.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// No string `hook_event_name`.
    #[error("hook input has no string `hook_event_name`")]
    NoEventName,
    /// Unknown event.
    #[error(transparent)]
    UnknownEvent(#[from] warden_vocab::UnknownEvent),
    /// Fields of the wrong type or missing.
    #[error("hook input for {event}: {source}")]
    Fields {
        /// The event.
        event: Event,
        /// The serde error.
        source: serde_json::Error,
    },
}

impl HookInput {
    /// Builds an input.
    pub fn new(common: CommonFields, payload: EventPayload) -> Self {
        HookInput { common, payload }
    }

    /// The event.
    pub fn event(&self) -> Event {
        self.payload.event()
    }

    /// The JSON object, keys in Claude Code's order.
    pub fn to_value(&self) -> Value {
        let mut m = match serde_json::to_value(&self.common) {
            Ok(Value::Object(m)) => m,
            _ => Map::new(),
        };
        m.insert(
            "hook_event_name".into(),
            Value::String(self.event().as_str().into()),
        );
        for (k, v) in self.payload.to_map() {
            m.insert(k, v);
        }
        Value::Object(m)
    }

    /// Reads an input object (for example one Claude Code sent to `warden hook <Event>`).
    pub fn from_value(value: &Value) -> Result<HookInput, InputError> {
        let name = value
            .get("hook_event_name")
            .and_then(Value::as_str)
            .ok_or(InputError::NoEventName)?;
        let event: Event = name.parse()?;
        let common = CommonFields::deserialize(value)
            .map_err(|source| InputError::Fields { event, source })?;
        let payload = EventPayload::from_value(event, value)
            .map_err(|source| InputError::Fields { event, source })?;
        Ok(HookInput { common, payload })
    }
}
