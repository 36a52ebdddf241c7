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
//! matches both. Beyond that, only two Bash facts touch the filesystem: an unquoted glob in a
//! file argument is expanded as bash would (a bounded directory listing), and a git command
//! that prints history looks for the `.git` above it (one `lstat` per level).
//!
//! # Decision vocabulary
//!
//! One set of words describes what happens to a call, wherever it is decided:
//!
//! - [`Decision`] — `allow`, `ask` or `deny`, spelled as Claude Code spells them (`as_str`,
//!   `parse`, `Display`, serde) and ordered by restrictiveness, `deny > ask > allow`.
//! - [`HookVerdict`] — what the merged PreToolUse hooks said: a [`Decision`], or `defer`
//!   (hand the call to the caller of a `-p` run). Hooks merge as `deny > defer > ask > allow`.
//!   `warden-hooks` produces it; [`Permissions::decide`] takes it as it is, and reads `defer`
//!   as no opinion.
//! - [`Ruling`] — the rules' answer from `decide` and the `check_*` methods: a [`Decision`]
//!   with the reason, and the rule and settings file that gave it.
//!
//! A hook's `allow` never overrides a deny or ask rule; a hook's `deny` wins over everything.
//! Conversions between these types are `From` impls in one module, so callers never map one
//! onto another by hand.

mod bash;
mod decision;
mod engine;
mod filter;
mod fxhash;
mod paths;
mod pattern;
mod reads;
mod rules;
pub mod shell;

pub use decision::{Decision, HookVerdict, Ruling, UnknownDecision};
pub use engine::types::{Access, Mode, Options, PermissionsError, Warning};
pub use engine::{DeniedPaths, Permissions};
pub use filter::if_filter_matches;
pub use rules::{KNOWN_TOOLS, RuleKind};
