//! How a tool call ended, as every caller of the tool pipeline (the agent loop, `warden tool`,
//! `warden check`, the MCP server, embedders) reads it.

use serde::Serialize;
use serde_json::Value;

/// How a call ended.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "status", rename_all = "camelCase")]
pub enum ToolStatus {
    /// Decided, not run (`warden check`).
    Decided,
    /// The input does not fit the tool's schema.
    InvalidInput {
        /// Claude Code's wording.
        message: String,
    },
    /// Refused before it ran (a hook, a rule or the asker), or by a capability check while it
    /// ran.
    Denied {
        /// Why, for the model.
        message: String,
    },
    /// It ran and succeeded.
    Ok {
        /// Text for the model.
        content: String,
        /// Structured result, if the tool gave one.
        #[serde(skip_serializing_if = "Option::is_none")]
        structured: Option<Value>,
    },
    /// It ran and failed.
    Failed {
        /// Why.
        message: String,
    },
}
