//! Claude Code–compatible plugins and marketplaces for Warden.
//!
//! * [`load_plugin`] / [`load_plugin_with`]: a plugin directory → [`LoadedPlugin`] (manifest,
//!   components, hooks, MCP/LSP servers, Warden's part from `warden.toml`).
//! * [`validate()`]: `claude plugin validate` for a plugin or marketplace directory → [`Report`].
//! * [`namespace`]: external names (`plugin:skill`, `mcp__plugin_<p>_<s>__<t>`, …).
//! * [`PluginManager`]: the `plugin` and `plugin marketplace` verbs over `$WARDEN_HOME/plugins/`
//!   (Claude Code's file shapes), with atomic installs, tree digests, verification and
//!   capability grants.

pub mod build_spec;
pub mod capability;
pub mod diag;
pub mod digest;
pub mod error;
pub mod fault;
mod frontmatter;
pub mod git;
pub mod hooks;
pub mod limits;
pub mod loader;
pub mod manager;
pub mod manifest;
pub mod marketplace;
pub mod names;
pub mod namespace;
pub mod progress;
pub mod store;
pub mod unsupported;
mod util;
pub mod validate;
pub mod warden;

pub use build_spec::{BuildSpec, BuildTarget, GuestLang, build_targets};
pub use capability::{Capabilities, CapabilityRequest, FsAccess, FsCapability, Grant};
pub use diag::{Diagnostic, Report, ReportKind, Severity};
pub use loader::{
    ComponentFile, ComponentPaths, HookSet, LoadContext, LoadError, LoadedPlugin, SkillRef,
    load_plugin, load_plugin_with,
};
pub use manager::*;
pub use manifest::{ComponentSpec, PluginManifest};
pub use marketplace::{Marketplace, MarketplaceEntry, PluginSource, load_marketplace};
pub use progress::Progress;
pub use unsupported::{UnsupportedPart, unsupported};
pub use validate::validate;
pub use warden::{
    ANY_NETWORK, PROCESSES_GRANT_KEY, WARDEN_TOML, WardenComponent, WardenSection, World,
};
