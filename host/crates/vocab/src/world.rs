//! The WIT worlds a component can implement.

use std::fmt;

use serde::{Deserialize, Serialize};

/// What a component implements: the world a plugin declares in its `warden` section and the
/// one the runtime instantiates it as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum World {
    /// `warden:plugin/hook`: exports `handle`.
    Hook,
    /// `warden:plugin/tool`: exports `describe` and `invoke`.
    Tool,
}

impl World {
    /// `hook` or `tool`.
    pub fn name(self) -> &'static str {
        match self {
            World::Hook => "hook",
            World::Tool => "tool",
        }
    }

    /// Parses `hook` or `tool`.
    pub fn parse(s: &str) -> Option<World> {
        match s {
            "hook" => Some(World::Hook),
            "tool" => Some(World::Tool),
            _ => None,
        }
    }
}

impl fmt::Display for World {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
