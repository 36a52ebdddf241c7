//! Claude Code–compatible permission rules: parsing, evaluation and capability checks.
//!
//! [`Permissions`] is built once per session from [`warden_config::Settings`]; rules are parsed,
//! anchored and compiled (globs into one `GlobSet` per list, Bash rules indexed by program
//! name) at construction, so each check is a lookup rather than a parse of the settings.
//!
//! Tool calls go through [`Permissions::decide`]. When a WebAssembly guest touches the real
//! world, the host asks [`Permissions::check_path`], [`Permissions::check_exec`] and
//! [`Permissions::check_url`], which apply the same rules to the capability being used.
//!
//! Paths are normalised lexically, and file checks also resolve symlinks on the way (spec
//! 2.4): a deny or ask rule applies if it matches the path or its target, an allow only if it
//! matches both. Nothing else touches the filesystem.

mod bash;
mod engine;
mod filter;
mod fxhash;
mod paths;
mod pattern;
mod rules;
pub mod shell;

pub use engine::Permissions;
pub use engine::types::{
    Access, Decision, HookDecision, Mode, Options, PermissionsError, Verdict, Warning,
};
pub use filter::if_filter_matches;
pub use rules::{KNOWN_TOOLS, RuleKind};
