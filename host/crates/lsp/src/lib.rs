//! Language servers from plugins, as Claude Code runs them: a plugin's `.lsp.json` (or
//! `lspServers` in `plugin.json`) maps server names to [`ServerConfig`]s, each handling the
//! file extensions of its `extensionToLanguage`.
//!
//! - [`config`]: the typed configuration, strict, with each problem naming its field.
//! - [`client`]: one server over stdio (`Content-Length` framing, [`framing`]), started
//!   through a [`Launcher`] the host uses to confine it, with request timeouts, pushed
//!   diagnostics and `shutdown`/`exit`.
//! - [`manager`]: a session's servers, started on first use per extension, restarted after
//!   a crash up to `maxRestarts`; files pass a [`FileGate`] before any `didOpen`.
//! - [`ops`]: the `LSP` tool's nine operations and the text of their results.

pub mod client;
pub mod config;
pub mod framing;
pub mod manager;
pub mod ops;

pub use client::{Client, LaunchGuard, Launcher, LspError, Unconfined};
pub use config::{Problem, ServerConfig, Transport};
/// The protocol's types, as the client speaks them.
pub use lsp_types;
pub use manager::{FileGate, LspManager, OpenGate, Opened, ServerSpec, Status};
pub use ops::{Operation, ToolInput, ToolOutput};

/// The id of a plugin's server: `plugin:<plugin>:<server>`.
pub fn server_id(plugin: &str, server: &str) -> String {
    format!("plugin:{plugin}:{server}")
}
