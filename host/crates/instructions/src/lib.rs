//! The instruction layer: what enters the model's context, when, and under what name.
//!
//! Memory files (`CLAUDE.md` and friends), rules, skills, subagents and legacy commands are read
//! from disk, named and ordered the way Claude Code does it.

pub mod diag;
pub mod fields;
pub mod frontmatter;
pub mod glob;
pub mod memory;
