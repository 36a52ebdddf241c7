//! The hook event catalogue (spec 1.3): names, matcher fields and blocking power. Which handler
//! types each event accepts is with the handler types (`handler.rs`), so this file depends on
//! no other.

use std::fmt;
use std::str::FromStr;

/// A hook event, named exactly as Claude Code names it (names are case-sensitive).
///
/// The 31 events of the baseline documentation plus `PreModelSwitch` / `PostModelSwitch`, which
/// later documentation lists without a payload description; they are accepted so configurations
/// written for newer Claude Code versions load without warnings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[allow(missing_docs)] // Each variant is the Claude Code event of the same name.
pub enum Event {
    SessionStart,
    Setup,
    InstructionsLoaded,
    UserPromptSubmit,
    UserPromptExpansion,
    MessageDisplay,
    PreToolUse,
    PermissionRequest,
    PermissionDenied,
    PostToolUse,
    PostToolUseFailure,
    PostToolBatch,
    Notification,
    SubagentStart,
    SubagentStop,
    TaskCreated,
    TaskCompleted,
    Stop,
    StopFailure,
    TeammateIdle,
    ConfigChange,
    CwdChanged,
    DirectoryAdded,
    FileChanged,
    WorktreeCreate,
    WorktreeRemove,
    PreCompact,
    PostCompact,
    Elicitation,
    ElicitationResult,
    SessionEnd,
    PreModelSwitch,
    PostModelSwitch,
}

/// Error for an event name Claude Code does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown hook event `{0}` (event names are case-sensitive, e.g. `PreToolUse`)")]
pub struct UnknownEvent(pub String);

impl Event {
    /// Every event, in catalogue order.
    pub const ALL: [Event; 33] = [
        Event::SessionStart,
        Event::Setup,
        Event::InstructionsLoaded,
        Event::UserPromptSubmit,
        Event::UserPromptExpansion,
        Event::MessageDisplay,
        Event::PreToolUse,
        Event::PermissionRequest,
        Event::PermissionDenied,
        Event::PostToolUse,
        Event::PostToolUseFailure,
        Event::PostToolBatch,
        Event::Notification,
        Event::SubagentStart,
        Event::SubagentStop,
        Event::TaskCreated,
        Event::TaskCompleted,
        Event::Stop,
        Event::StopFailure,
        Event::TeammateIdle,
        Event::ConfigChange,
        Event::CwdChanged,
        Event::DirectoryAdded,
        Event::FileChanged,
        Event::WorktreeCreate,
        Event::WorktreeRemove,
        Event::PreCompact,
        Event::PostCompact,
        Event::Elicitation,
        Event::ElicitationResult,
        Event::SessionEnd,
        Event::PreModelSwitch,
        Event::PostModelSwitch,
    ];

    /// The exact Claude Code name.
    pub fn as_str(self) -> &'static str {
        match self {
            Event::SessionStart => "SessionStart",
            Event::Setup => "Setup",
            Event::InstructionsLoaded => "InstructionsLoaded",
            Event::UserPromptSubmit => "UserPromptSubmit",
            Event::UserPromptExpansion => "UserPromptExpansion",
            Event::MessageDisplay => "MessageDisplay",
            Event::PreToolUse => "PreToolUse",
            Event::PermissionRequest => "PermissionRequest",
            Event::PermissionDenied => "PermissionDenied",
            Event::PostToolUse => "PostToolUse",
            Event::PostToolUseFailure => "PostToolUseFailure",
            Event::PostToolBatch => "PostToolBatch",
            Event::Notification => "Notification",
            Event::SubagentStart => "SubagentStart",
            Event::SubagentStop => "SubagentStop",
            Event::TaskCreated => "TaskCreated",
            Event::TaskCompleted => "TaskCompleted",
            Event::Stop => "Stop",
            Event::StopFailure => "StopFailure",
            Event::TeammateIdle => "TeammateIdle",
            Event::ConfigChange => "ConfigChange",
            Event::CwdChanged => "CwdChanged",
            Event::DirectoryAdded => "DirectoryAdded",
            Event::FileChanged => "FileChanged",
            Event::WorktreeCreate => "WorktreeCreate",
            Event::WorktreeRemove => "WorktreeRemove",
            Event::PreCompact => "PreCompact",
            Event::PostCompact => "PostCompact",
            Event::Elicitation => "Elicitation",
            Event::ElicitationResult => "ElicitationResult",
            Event::SessionEnd => "SessionEnd",
            Event::PreModelSwitch => "PreModelSwitch",
            Event::PostModelSwitch => "PostModelSwitch",
        }
    }

    /// The input field the matcher is tested against, or `None` when the event has no matcher
    /// support (a matcher there is silently ignored). `FileChanged` matches the basename of
    /// `file_path`.
    pub fn matcher_field(self) -> Option<&'static str> {
        match self {
            Event::PreToolUse
            | Event::PermissionRequest
            | Event::PermissionDenied
            | Event::PostToolUse
            | Event::PostToolUseFailure => Some("tool_name"),
            Event::SessionStart | Event::ConfigChange | Event::DirectoryAdded => Some("source"),
            Event::Setup | Event::PreCompact | Event::PostCompact => Some("trigger"),
            Event::InstructionsLoaded => Some("load_reason"),
            Event::UserPromptExpansion => Some("command_name"),
            Event::Notification => Some("notification_type"),
            Event::SubagentStart | Event::SubagentStop => Some("agent_type"),
            Event::StopFailure => Some("error"),
            Event::FileChanged => Some("file_path"),
            Event::Elicitation | Event::ElicitationResult => Some("mcp_server_name"),
            Event::SessionEnd => Some("reason"),
            _ => None,
        }
    }

    /// Whether the matcher uses the narrower exact set `[A-Za-z0-9_|]` (spec 1.4).
    pub fn narrow_matcher(self) -> bool {
        matches!(self, Event::FileChanged | Event::StopFailure)
    }

    /// Whether exit code 2 (or a block decision) blocks the action on this event.
    ///
    /// `ConfigChange` blocks except for `policy_settings` sources; that exception depends on the
    /// input and is applied by the dispatcher.
    pub fn can_block(self) -> bool {
        matches!(
            self,
            Event::UserPromptSubmit
                | Event::UserPromptExpansion
                | Event::PreToolUse
                | Event::PostToolBatch
                | Event::SubagentStop
                | Event::TaskCreated
                | Event::TaskCompleted
                | Event::Stop
                | Event::TeammateIdle
                | Event::ConfigChange
                | Event::WorktreeCreate
                | Event::PreCompact
                | Event::Elicitation
                | Event::ElicitationResult
        )
    }

    /// Whether the `if` filter is evaluated on this event (spec 1.5). On other events a handler
    /// carrying `if` never runs.
    pub fn is_tool_event(self) -> bool {
        matches!(
            self,
            Event::PreToolUse
                | Event::PostToolUse
                | Event::PostToolUseFailure
                | Event::PermissionRequest
                | Event::PermissionDenied
        )
    }

    /// Whether this event may receive `CLAUDE_ENV_FILE` (spec 1.8).
    pub fn gets_env_file(self) -> bool {
        matches!(
            self,
            Event::SessionStart | Event::Setup | Event::CwdChanged | Event::FileChanged
        )
    }
}

impl fmt::Display for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Event {
    type Err = UnknownEvent;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Event::ALL
            .iter()
            .copied()
            .find(|e| e.as_str() == s)
            .ok_or_else(|| UnknownEvent(s.to_string()))
    }
}

impl serde::Serialize for Event {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for Event {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}
