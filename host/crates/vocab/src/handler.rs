//! Hook handler types (spec 1.6) and which events accept each.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use crate::event::Event;

/// The `type` of a handler.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HandlerType {
    /// `"command"`: a process.
    Command,
    /// `"http"`: a POST request.
    Http,
    /// `"mcp_tool"`: a tool call on a connected MCP server.
    McpTool,
    /// `"prompt"`: a single model call.
    Prompt,
    /// `"agent"`: a subagent.
    Agent,
    /// `"wasm"`: a Warden component (only from the `warden` section of `plugin.json`).
    Wasm,
}

impl HandlerType {
    /// The name used in the `type` field.
    pub fn as_str(self) -> &'static str {
        match self {
            HandlerType::Command => "command",
            HandlerType::Http => "http",
            HandlerType::McpTool => "mcp_tool",
            HandlerType::Prompt => "prompt",
            HandlerType::Agent => "agent",
            HandlerType::Wasm => "wasm",
        }
    }

    /// Default timeout for this type on `event` (spec 1.6). WASM handlers get the command
    /// defaults because they stand in for command hooks.
    pub fn default_timeout(self, event: Event) -> Duration {
        match self {
            HandlerType::Prompt => Duration::from_secs(30),
            HandlerType::Agent => Duration::from_secs(60),
            _ => match event {
                Event::UserPromptSubmit | Event::PreModelSwitch | Event::PostModelSwitch => {
                    Duration::from_secs(30)
                }
                Event::MessageDisplay => Duration::from_secs(10),
                _ => Duration::from_secs(600),
            },
        }
    }
}

impl Event {
    /// Whether handlers of `ty` may be attached to this event (spec 1.6). WASM handlers are
    /// accepted wherever command handlers are, since they stand in for them.
    pub fn supports(self, ty: HandlerType) -> bool {
        use HandlerType as T;
        let all_five = matches!(
            self,
            Event::PermissionDenied
                | Event::PermissionRequest
                | Event::PostToolBatch
                | Event::PostToolUse
                | Event::PostToolUseFailure
                | Event::PreToolUse
                | Event::Stop
                | Event::SubagentStop
                | Event::TaskCompleted
                | Event::TaskCreated
                | Event::TeammateIdle
                | Event::UserPromptExpansion
                | Event::UserPromptSubmit
        );
        match ty {
            T::Command | T::McpTool | T::Wasm => true,
            T::Http => !matches!(self, Event::SessionStart | Event::Setup),
            T::Prompt | T::Agent => all_five,
        }
    }
}

/// A handler `type` that is not one of [`HandlerType::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown hook handler type `{0}` (known: command, http, mcp_tool, prompt, agent, wasm)")]
pub struct UnknownHandlerType(pub String);

impl HandlerType {
    /// Every handler type.
    pub const ALL: [HandlerType; 6] = [
        HandlerType::Command,
        HandlerType::Http,
        HandlerType::McpTool,
        HandlerType::Prompt,
        HandlerType::Agent,
        HandlerType::Wasm,
    ];
}

impl fmt::Display for HandlerType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for HandlerType {
    type Err = UnknownHandlerType;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        HandlerType::ALL
            .into_iter()
            .find(|t| t.as_str() == s)
            .ok_or_else(|| UnknownHandlerType(s.to_string()))
    }
}
