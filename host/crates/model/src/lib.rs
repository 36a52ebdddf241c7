//! What a model receives and answers, in the shape of the Anthropic Messages API (the
//! reference agent's own wire format), and the one trait every model driver implements.
//!
//! A driver turns a [`ModelRequest`] into a [`ModelResponse`]: the scripted driver reads the
//! answer from a file, the API drivers send it over HTTP. The loop never knows which.

pub mod anthropic;
mod http;
pub mod openai;
pub mod scripted;

pub use anthropic::AnthropicDriver;
pub use http::{DriverConfigError, RetryPolicy};
pub use openai::OpenAiDriver;
pub use scripted::ScriptedDriver;

use std::future::Future;
use std::pin::Pin;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Who said it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The user, and tool results.
    User,
    /// The model.
    Assistant,
}

/// One content block of a message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Block {
    /// Text.
    Text {
        /// The text.
        text: String,
    },
    /// The model asks for a tool call.
    ToolUse {
        /// Its id (`toolu_…`), echoed by the result.
        id: String,
        /// The tool's name.
        name: String,
        /// Its input, a JSON object.
        input: Value,
    },
    /// What a tool call gave back.
    ToolResult {
        /// The `id` of the [`Block::ToolUse`] it answers.
        tool_use_id: String,
        /// The text the model sees.
        content: String,
        /// The call failed or was refused.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
    },
}

impl Block {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Block::Text { text: text.into() }
    }
}

/// One message of the conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// Who said it.
    pub role: Role,
    /// What was said.
    pub content: Vec<Block>,
}

impl Message {
    /// A user message of one text block.
    pub fn user(text: impl Into<String>) -> Self {
        Message {
            role: Role::User,
            content: vec![Block::text(text)],
        }
    }

    /// The text blocks joined by newlines.
    pub fn text(&self) -> String {
        let parts: Vec<&str> = self
            .content
            .iter()
            .filter_map(|b| match b {
                Block::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        parts.join("\n")
    }

    /// The tool calls asked for, in order: (id, name, input).
    pub fn tool_uses(&self) -> impl Iterator<Item = (&str, &str, &Value)> {
        self.content.iter().filter_map(|b| match b {
            Block::ToolUse { id, name, input } => Some((id.as_str(), name.as_str(), input)),
            _ => None,
        })
    }
}

/// A tool as the model is told of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// The name it calls the tool by.
    pub name: String,
    /// What it is for.
    pub description: String,
    /// JSON Schema of its input.
    pub input_schema: Value,
}

/// Who is asking the model: the main conversation, a subagent, a hook handler, or
/// compaction. The
/// scripted driver answers each from its own queue; API drivers ignore it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Caller {
    /// The main conversation.
    #[default]
    Main,
    /// A subagent, by `agent_type`.
    Subagent(String),
    /// A `prompt` or `agent` hook handler, by event name.
    Hook(String),
    /// Compaction: the summary that replaces a conversation grown too long.
    Compact,
}

/// One request to a model.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ModelRequest {
    /// The model to use (an alias such as `sonnet`, or a full id); the driver's default when
    /// empty.
    pub model: String,
    /// The system prompt.
    pub system: String,
    /// The conversation so far, alternating user and assistant, starting with the user.
    pub messages: Vec<Message>,
    /// The tools the model may call.
    pub tools: Vec<ToolSpec>,
    /// The most tokens to generate.
    pub max_tokens: u32,
    /// Who is asking.
    pub caller: Caller,
}

/// Why the model stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// It finished its answer.
    EndTurn,
    /// It wants tool results.
    ToolUse,
    /// It ran out of `max_tokens`.
    MaxTokens,
    /// It reached a stop sequence.
    StopSequence,
    /// It refused.
    Refusal,
}

/// Tokens used by one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Usage {
    /// Tokens read.
    pub input_tokens: u64,
    /// Tokens written.
    pub output_tokens: u64,
}

impl std::ops::AddAssign for Usage {
    fn add_assign(&mut self, o: Usage) {
        self.input_tokens += o.input_tokens;
        self.output_tokens += o.output_tokens;
    }
}

/// A model's answer.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelResponse {
    /// The assistant message's blocks.
    pub content: Vec<Block>,
    /// Why it stopped.
    pub stop_reason: StopReason,
    /// Tokens used.
    pub usage: Usage,
    /// The model that answered.
    pub model: String,
}

/// The kinds of API failure, named as the `StopFailure` hook's `error` matcher names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ModelErrorKind {
    /// 429.
    RateLimit,
    /// 529.
    Overloaded,
    /// 401, or no key.
    AuthenticationFailed,
    /// 402 / billing.
    BillingError,
    /// 400.
    InvalidRequest,
    /// 404 for the model.
    ModelNotFound,
    /// 5xx.
    ServerError,
    /// The answer was cut at `max_tokens`.
    MaxOutputTokens,
    /// Anything else: a connection failure, a malformed stream, a script that ran out.
    Unknown,
}

impl ModelErrorKind {
    /// The name hooks see.
    pub fn as_str(self) -> &'static str {
        match self {
            ModelErrorKind::RateLimit => "rate_limit",
            ModelErrorKind::Overloaded => "overloaded",
            ModelErrorKind::AuthenticationFailed => "authentication_failed",
            ModelErrorKind::BillingError => "billing_error",
            ModelErrorKind::InvalidRequest => "invalid_request",
            ModelErrorKind::ModelNotFound => "model_not_found",
            ModelErrorKind::ServerError => "server_error",
            ModelErrorKind::MaxOutputTokens => "max_output_tokens",
            ModelErrorKind::Unknown => "unknown",
        }
    }

    /// Whether waiting and sending the same request again may succeed.
    pub fn retryable(self) -> bool {
        matches!(
            self,
            ModelErrorKind::RateLimit | ModelErrorKind::Overloaded | ModelErrorKind::ServerError
        )
    }
}

/// A request the model could not answer.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct ModelError {
    /// What kind of failure.
    pub kind: ModelErrorKind,
    /// What went wrong, for the user (an API's own error message where it gave one).
    pub message: String,
    /// The HTTP status, for API drivers.
    pub status: Option<u16>,
}

impl ModelError {
    /// An error of `kind`.
    pub fn new(kind: ModelErrorKind, message: impl Into<String>) -> Self {
        ModelError {
            kind,
            message: message.into(),
            status: None,
        }
    }
}

/// Receives text as a streaming driver produces it (for a live transcript). Drivers that do
/// not stream never call it.
pub trait StreamSink: Send + Sync {
    /// More text of the current assistant message.
    fn text_delta(&self, text: &str);
}

/// The future a driver answers with.
pub type ModelFuture<'a> =
    Pin<Box<dyn Future<Output = Result<ModelResponse, ModelError>> + Send + 'a>>;

/// A model: scripted, the Anthropic Messages API, or an OpenAI-compatible server.
pub trait ModelDriver: Send + Sync {
    /// Answers one request. `sink`, when given, receives text as it streams.
    fn complete<'a>(
        &'a self,
        request: &'a ModelRequest,
        sink: Option<&'a dyn StreamSink>,
    ) -> ModelFuture<'a>;

    /// The driver's name for transcripts (`scripted`, `anthropic`, `openai`).
    fn name(&self) -> &str;

    /// The model used when a request names none.
    fn default_model(&self) -> &str;

    /// The price of `usage` in US dollars, when the driver knows it.
    fn cost_usd(&self, _model: &str, _usage: Usage) -> Option<f64> {
        None
    }
}
