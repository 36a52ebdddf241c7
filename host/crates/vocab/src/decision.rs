//! The decision vocabulary: one word for what happens to a call, shared by the rules, the
//! hooks and the capability checks.
//!
//! [`Decision`] is the answer itself (`allow`, `ask`, `deny`). [`HookVerdict`] is what merged
//! PreToolUse hooks said, which is a [`Decision`] or Claude Code's `defer`. The rules' answer
//! with its reason (`warden_permissions::Ruling`) is made of these. Every conversion between
//! them is a `From` impl here, so no caller maps one onto another by hand.

use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;

/// What happens to a tool call or capability use, ordered by restrictiveness:
/// `Deny > Ask > Allow` (so `max` picks the decision that wins when several apply).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    /// Run it.
    Allow,
    /// Ask the user first.
    Ask,
    /// Refuse.
    Deny,
}

impl Decision {
    /// The spelling Claude Code uses (`permissionDecision`, `warden check --json`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Decision::Allow => "allow",
            Decision::Ask => "ask",
            Decision::Deny => "deny",
        }
    }

    /// Reads Claude Code's spelling; anything else (including `defer`, which is not a
    /// decision of the rules) is `None`.
    pub fn parse(s: &str) -> Option<Decision> {
        Some(match s {
            "allow" => Decision::Allow,
            "ask" => Decision::Ask,
            "deny" => Decision::Deny,
            _ => return None,
        })
    }
}

impl fmt::Display for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A word that is not a [`Decision`] (or not a [`HookVerdict`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown permission decision `{0}`; use allow, ask or deny (a hook may also defer)")]
pub struct UnknownDecision(pub String);

impl FromStr for Decision {
    type Err = UnknownDecision;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Decision::parse(s).ok_or_else(|| UnknownDecision(s.to_string()))
    }
}

/// What the PreToolUse hooks of one call said, merged (spec 1.7): a decision, or `defer`.
///
/// `defer` asks the caller of a non-interactive run to take the call over; it is not an
/// opinion about the call, so [`crate::Permissions::decide`] leaves it to the rules as if no
/// hook had spoken. Ordered as hooks are merged: `Deny > Defer > Ask > Allow`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HookVerdict {
    /// The hooks decided.
    Decided(Decision),
    /// A hook deferred the call (`-p` only).
    Defer,
}

impl HookVerdict {
    /// The decision inside, if the hooks decided.
    pub const fn decision(self) -> Option<Decision> {
        match self {
            HookVerdict::Decided(d) => Some(d),
            HookVerdict::Defer => None,
        }
    }

    /// The spelling Claude Code uses in `permissionDecision`.
    pub const fn as_str(self) -> &'static str {
        match self {
            HookVerdict::Decided(d) => d.as_str(),
            HookVerdict::Defer => "defer",
        }
    }

    /// Reads `allow`, `ask`, `defer` or `deny`.
    pub fn parse(s: &str) -> Option<HookVerdict> {
        match s {
            "defer" => Some(HookVerdict::Defer),
            _ => Decision::parse(s).map(HookVerdict::Decided),
        }
    }

    /// Place in the merge order; `defer` sits between ask and deny.
    const fn rank(self) -> u8 {
        match self {
            HookVerdict::Decided(Decision::Allow) => 0,
            HookVerdict::Decided(Decision::Ask) => 1,
            HookVerdict::Defer => 2,
            HookVerdict::Decided(Decision::Deny) => 3,
        }
    }
}

impl Ord for HookVerdict {
    fn cmp(&self, other: &Self) -> Ordering {
        self.rank().cmp(&other.rank())
    }
}

impl PartialOrd for HookVerdict {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for HookVerdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for HookVerdict {
    type Err = UnknownDecision;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        HookVerdict::parse(s).ok_or_else(|| UnknownDecision(s.to_string()))
    }
}

impl From<Decision> for HookVerdict {
    fn from(d: Decision) -> Self {
        HookVerdict::Decided(d)
    }
}

impl From<HookVerdict> for Option<Decision> {
    fn from(v: HookVerdict) -> Self {
        v.decision()
    }
}

impl serde::Serialize for HookVerdict {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for HookVerdict {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}
