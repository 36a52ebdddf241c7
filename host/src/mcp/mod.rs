//! MCP, both ways, with the official Rust SDK (`rmcp`):
//!
//! * [`hub`]: the MCP servers a session is configured with (user, local, project, plugins),
//!   connected on first use; their tools join the session's pipeline as
//!   `mcp__<server>__<tool>` (plugins: `mcp__plugin_<plugin>_<server>__<tool>`), so rules and
//!   PreToolUse/PostToolUse hooks apply to them as to any tool.
//! * [`client`]: one connection (stdio, streamable HTTP, legacy SSE in [`sse`]).
//! * [`server`]: `warden mcp serve`, the session's WASM tools for any MCP client, each call
//!   through the same pipeline.

pub mod client;
pub mod hub;
pub mod server;
mod sse;

pub use client::{Connection, McpError};
pub use hub::{HubServer, McpHub, McpTool, ServerState};
pub use server::{ServeHttpError, WardenServer, serve_http};
