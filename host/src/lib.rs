//! Warden: a runtime that hosts agent plugins as sandboxed WebAssembly components.
//!
//! - [`runtime`]: the wasmtime engine, compile cache and per-call sandboxes (the
//!   `warden-runtime` crate).
//! - [`capability`]: the host side of the WIT capability interfaces (`fs`, `exec`, `http`,
//!   `env`, `log`), each checked against the plugin's grant and the user's rules.
//! - [`tools`]: the built-in tools (Read, Write, Edit, Glob, Grep, Bash) as components.
//! - [`hook_result`]: a hook's typed answer (the runtime's) and its Claude Code JSON form
//!   (`warden-hooks`).
//! - [`build`] and [`scaffold`]: `warden build` (each guest language's toolchain, with the
//!   WIT and SDKs embedded) and `warden new`.
//! - [`instructions`]: a session's memory, rules, skills and agents, permission-checked skill
//!   command injection and the `InstructionsLoaded` hook.
//! - [`peer`] and [`opened`]: who may use Warden's local services (`warden serve`, `warden
//!   mcp serve --http`), and for which projects they run hooks.
//!
//! See `ARCHITECTURE.md` for how a hook call travels through these modules.

pub mod agent;
pub mod build;
pub mod instructions;
pub mod lsp;
pub mod mcp;
pub mod monitors;
pub mod opened;
pub mod output_style;
pub mod peer;
pub mod plugin_config;
pub mod scaffold;
pub mod session;
pub mod status_line;
pub mod tools;

pub use warden_runtime as runtime;
pub use warden_runtime::capability;

/// A hook's typed answer and its Claude Code JSON form.
pub mod hook_result {
    pub use warden_hooks::{CcOutput, TypedHookResult};
    pub use warden_runtime::{Decision, HookResult};
}

/// Paths of the guest components built with this crate (examples and test guests).
#[doc(hidden)]
pub mod guests {
    include!(concat!(env!("OUT_DIR"), "/guests.rs"));
}
