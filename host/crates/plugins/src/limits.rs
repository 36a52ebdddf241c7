//! Size limits for the files a plugin or marketplace brings, checked before a file is read.
//!
//! Each is far above anything published (the largest `marketplace.json` seen is 169 KB, the
//! largest `SKILL.md` 74 KB) and far below what would hurt: without them a 100 MB
//! `plugin.json` validated and took 313 MB of memory. Settings files have their own limit
//! ([`warden_config::MAX_SETTINGS_BYTES`]), skill, agent, command and rule files theirs
//! ([`warden_instructions::frontmatter::MAX_FILE_BYTES`]), and hook output is capped where it
//! is captured (the hooks crate's `MAX_CAPTURE_BYTES`); copied trees are budgeted by [`crate::manager::CopyLimits`].

/// `plugin.json`, `hooks/hooks.json`, `.mcp.json`, `.lsp.json`, `monitors.json` and a plugin's
/// `settings.json`.
pub const MAX_MANIFEST_BYTES: u64 = 1 << 20;

/// `.claude-plugin/marketplace.json`.
pub const MAX_MARKETPLACE_BYTES: u64 = 8 << 20;

/// Warden's own state files under `plugins/` (`installed_plugins.json`, `grants.json`,
/// `known_marketplaces.json`).
pub const MAX_STATE_BYTES: u64 = 32 << 20;
