//! The instruction layer: what enters the model's context, when, and under what name.
//!
//! * [`frontmatter`]: the project's only YAML reader (strict, then lenient).
//! * [`memory`]: `CLAUDE.md`, `CLAUDE.local.md`, `AGENTS.md`, `@path` imports and rules.
//! * [`skills`]: skills and legacy commands, the listing, substitutions and `!` injection.
//! * [`agents`]: subagent definitions.
//! * [`reach`]: which files may be read at all (links out of the project, secrets).
//! * [`context`]: [`load_context`] puts it all together.
//!
//! Files live where Claude Code keeps them, with `$WARDEN_HOME` in place of `~/.claude`; Claude
//! Code's own user directory is read too, below Warden's home (see [`context`]).

pub mod agents;
pub mod context;
pub mod fields;
pub mod frontmatter;
pub mod glob;
pub mod memory;
pub mod reach;
pub mod skills;

pub use agents::{Agent, AgentSource};
pub use context::{ClaudeConfigReport, Context, ContextOptions, PluginContent, load_context};
pub use memory::{LoadReason, MemoryFile, MemoryKind, MemoryType, ReadGate, RuleInfo};
pub use skills::{
    CommandRunner, RenderError, RenderOptions, RenderedSkill, Skill, SkillKind, SkillSource,
};
/// Every problem loading skipped, refused or read leniently: a warning naming its file.
pub use warden_vocab::Diagnostic;
