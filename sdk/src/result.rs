use alloc::string::String;

use serde_json::Value;

/// What a hook decides. See the WIT `decision` enum for the meaning per event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Decision {
    /// No opinion.
    #[default]
    None,
    /// Allow the tool call without a prompt (deny and ask rules still apply).
    Allow,
    /// Deny the tool call; the reason goes to the model.
    Deny,
    /// Ask the user.
    Ask,
    /// Leave it to the normal permission flow.
    Defer,
    /// Block the action (exit code 2 of a command hook).
    Block,
}

/// A hook's answer.
#[derive(Debug, Clone, PartialEq)]
pub struct HookResult {
    /// The decision.
    pub decision: Decision,
    /// Why; shown to the model on deny/block.
    pub reason: Option<String>,
    /// Text added to the model's context.
    pub additional_context: Option<String>,
    /// A replacement tool input object.
    pub updated_input: Option<Value>,
    /// A message for the user.
    pub system_message: Option<String>,
    /// `false` stops the agent.
    pub continue_: bool,
    /// Shown to the user when `continue_` is false.
    pub stop_reason: Option<String>,
    /// Hide the hook's output from the transcript.
    pub suppress_output: bool,
}

impl Default for HookResult {
    fn default() -> Self {
        HookResult::none()
    }
}

impl HookResult {
    fn with(decision: Decision, reason: Option<String>) -> Self {
        HookResult {
            decision,
            reason,
            additional_context: None,
            updated_input: None,
            system_message: None,
            continue_: true,
            stop_reason: None,
            suppress_output: false,
        }
    }

    /// No decision.
    pub fn none() -> Self {
        HookResult::with(Decision::None, None)
    }

    /// Allow, with a reason for the user.
    pub fn allow(reason: impl Into<String>) -> Self {
        HookResult::with(Decision::Allow, Some(reason.into()))
    }

    /// Deny, with a reason the model can act on.
    pub fn deny(reason: impl Into<String>) -> Self {
        HookResult::with(Decision::Deny, Some(reason.into()))
    }

    /// Ask the user, with a reason shown in the prompt.
    pub fn ask(reason: impl Into<String>) -> Self {
        HookResult::with(Decision::Ask, Some(reason.into()))
    }

    /// Defer to the normal permission flow.
    pub fn defer() -> Self {
        HookResult::with(Decision::Defer, None)
    }

    /// Block the action, with a reason fed back to the model.
    pub fn block(reason: impl Into<String>) -> Self {
        HookResult::with(Decision::Block, Some(reason.into()))
    }

    /// Adds context for the model.
    pub fn with_context(mut self, context: impl Into<String>) -> Self {
        self.additional_context = Some(context.into());
        self
    }

    /// Replaces the tool input.
    pub fn with_updated_input(mut self, input: Value) -> Self {
        self.updated_input = Some(input);
        self
    }

    /// Adds a message for the user.
    pub fn with_system_message(mut self, message: impl Into<String>) -> Self {
        self.system_message = Some(message.into());
        self
    }

    /// Stops the agent after this hook.
    pub fn stop(mut self, reason: impl Into<String>) -> Self {
        self.continue_ = false;
        self.stop_reason = Some(reason.into());
        self
    }
}
