//! A hook's typed answer: what every `warden:plugin` version's `hook-result` means, in one
//! version-neutral form. The runtime makes it from a component's answer; how it reads as
//! Claude Code hook JSON is the hooks crate's business (`warden_hooks::TypedHookResult`).
//!
//! Its [`Decision`] is a hook's word, not the permission rules' ([`crate::Decision`]): it can
//! also say nothing, defer or block, so it is a type of its own.

/// What a hook decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    /// No opinion.
    #[default]
    None,
    /// Allow without a prompt.
    Allow,
    /// Deny; the reason goes to the model.
    Deny,
    /// Ask the user.
    Ask,
    /// Leave it to the normal flow (`-p` mode defers the tool call).
    Defer,
    /// Block the action (exit code 2).
    Block,
}

/// A hook's answer (see the WIT `hook-result`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookResult {
    /// The decision.
    pub decision: Decision,
    /// Why.
    pub reason: Option<String>,
    /// Text for the model's context.
    pub additional_context: Option<String>,
    /// Replacement tool input (JSON text).
    pub updated_input: Option<String>,
    /// Message for the user.
    pub system_message: Option<String>,
    /// `false` stops the agent.
    pub continue_: bool,
    /// Shown when `continue_` is false.
    pub stop_reason: Option<String>,
    /// Hide output from the transcript.
    pub suppress_output: bool,
}

impl Default for HookResult {
    fn default() -> Self {
        HookResult {
            decision: Decision::None,
            reason: None,
            additional_context: None,
            updated_input: None,
            system_message: None,
            continue_: true,
            stop_reason: None,
            suppress_output: false,
        }
    }
}

impl HookResult {
    /// Total bytes of the strings it carries.
    pub fn size(&self) -> usize {
        [
            &self.reason,
            &self.additional_context,
            &self.updated_input,
            &self.system_message,
            &self.stop_reason,
        ]
        .iter()
        .map(|s| s.as_ref().map_or(0, String::len))
        .sum()
    }
}
