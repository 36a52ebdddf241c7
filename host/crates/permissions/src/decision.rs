//! The rules' answer with its reason. The words it is made of ([`Decision`], [`HookVerdict`])
//! are the vocabulary crate's, shared with the hooks and the runtime.

pub use warden_vocab::{Decision, HookVerdict, UnknownDecision};

/// The rules' answer to one check: the decision and where it came from.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Ruling {
    /// Allow, ask or deny.
    pub decision: Decision,
    /// Why, in words fit for a user.
    pub reason: String,
    /// The rule that decided, as written in settings.
    pub rule: Option<String>,
    /// Where that rule came from: a settings file path or a scope/flag name.
    pub source: Option<String>,
}
