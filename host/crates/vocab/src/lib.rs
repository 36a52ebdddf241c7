//! The words Warden's crates share, at the bottom of the crate graph.
//!
//! Every type that crosses a crate seam is defined here once: hook events and handler types,
//! the WIT worlds, capabilities and grants, the permission decision, a hook's typed result and
//! the one diagnostic type every loader and validator reports problems with, and how a tool
//! call ended.
//! The crates above re-export what they used to define, so a caller names each type by one
//! path and no crate maps one crate's copy onto another's by hand.
//!
//! Invariants:
//! * no dependency on wasmtime, tokio or another warden crate: a crate that needs only these
//!   words (the plugin manager, the hook engine) does not link the engine through them;
//! * the helpers every layer needs ([`home_dir`], [`fs`], [`paths`], [`text`]) live here once,
//!   each meaning under its own name (the two path normalisations differ on purpose);
//! * configuration files are typed once in [`schema`] (hooks so far), and every reader reads
//!   those types, never the JSON value again.

pub mod capability;
pub mod decision;
pub mod diagnostic;
pub mod env;
pub mod event;
pub mod fs;
pub mod handler;
pub mod hook_result;
pub mod paths;
pub mod schema;
pub mod text;
pub mod tool_status;
pub mod world;

pub use capability::{
    ANY_NETWORK, Capabilities, Capability, FsAccess, FsCapability, FsGrant, Grant, GrantRoots,
};
pub use decision::{Decision, HookVerdict, UnknownDecision};
pub use diagnostic::{Diagnostic, Severity};
pub use env::home_dir;
pub use event::{Event, UnknownEvent};
pub use handler::{HandlerType, UnknownHandlerType};
pub use hook_result::{Decision as HookDecision, HookResult};
pub use tool_status::ToolStatus;
pub use world::World;
