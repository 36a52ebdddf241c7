//! The Anthropic Messages API driver: `POST {base}/v1/messages`, streamed.
//!
//! Configuration, by [`AnthropicDriver::from_env`]:
//!
//! | variable | meaning | default |
//! |---|---|---|
//! | `ANTHROPIC_API_KEY` | the API key, sent as `x-api-key` | required |
//! | `ANTHROPIC_BASE_URL` | where the API is | `https://api.anthropic.com` |
//! | `ANTHROPIC_MODEL` | the model when a request names none (an alias or a full id) | `claude-sonnet-4-6` |
//!
//! Model aliases (see [`resolve_model`]): `sonnet` → `claude-sonnet-4-6`, `opus` →
//! `claude-opus-4-6`, `haiku` → `claude-haiku-4-5`. Any other name is sent as it is.

use std::collections::BTreeMap;
use std::fmt;

use futures::StreamExt;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::http::{self, DriverConfigError, RetryPolicy};
use crate::{
    Block, Message, ModelDriver, ModelError, ModelFuture, ModelRequest, ModelResponse, StopReason,
    StreamSink, ToolSpec, Usage,
};

/// The `anthropic-version` header sent with every request.
pub const API_VERSION: &str = "2023-06-01";

/// Where the API is unless `ANTHROPIC_BASE_URL` says otherwise.
pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";

/// The model used when neither the request nor `ANTHROPIC_MODEL` names one.
pub const DEFAULT_MODEL: &str = "claude-sonnet-4-6";

/// `max_tokens` sent when a request leaves it 0; every current model can write this many.
pub const DEFAULT_MAX_TOKENS: u32 = 8192;

/// The short names agents and settings use for a model, and the ids they stand for.
pub const MODEL_ALIASES: &[(&str, &str)] = &[
    ("sonnet", "claude-sonnet-4-6"),
    ("opus", "claude-opus-4-6"),
    ("haiku", "claude-haiku-4-5"),
];

/// The full model id `name` stands for: the id of an alias in [`MODEL_ALIASES`]
/// (case-insensitively), else `name` itself.
pub fn resolve_model(name: &str) -> &str {
    let name = name.trim();
    MODEL_ALIASES
        .iter()
        .find(|(alias, _)| alias.eq_ignore_ascii_case(name))
        .map_or(name, |(_, id)| id)
}

/// The list price of a model, in US dollars per million tokens: (input, output).
///
/// Approximate: priced by family from Anthropic's published list prices, without the
/// discounts of cached input or the batch API, nor the surcharge of long contexts. `None` for
/// a model it does not know.
pub fn price_per_million(model: &str) -> Option<(f64, f64)> {
    let m = resolve_model(model).to_ascii_lowercase();
    let has = |s: &str| m.contains(s);
    if !m.starts_with("claude") {
        return None;
    }
    if has("opus") {
        // Opus 4.5 cut the price to a third; 3, 4 and 4.1 kept the old one.
        let old = has("opus-4-1")
            || has("opus-4-2025")
            || m == "claude-opus-4"
            || m.starts_with("claude-3");
        return Some(if old { (15.0, 75.0) } else { (5.0, 25.0) });
    }
    if has("sonnet") {
        return Some((3.0, 15.0));
    }
    if has("haiku") {
        if has("3-5") {
            return Some((0.8, 4.0));
        }
        if has("3-haiku") {
            return Some((0.25, 1.25));
        }
        return Some((1.0, 5.0));
    }
    None
}

/// A model behind the Anthropic Messages API.
#[derive(Clone)]
pub struct AnthropicDriver {
    client: reqwest::Client,
    api_key: String,
    base_url: String,
    default_model: String,
    retry: RetryPolicy,
}

impl fmt::Debug for AnthropicDriver {
    // The key stays out of logs.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AnthropicDriver")
            .field("base_url", &self.base_url)
            .field("default_model", &self.default_model)
            .field("retry", &self.retry)
            .finish_non_exhaustive()
    }
}

impl AnthropicDriver {
    /// A driver that sends `api_key` to the API at `base_url` (such as [`DEFAULT_BASE_URL`]),
    /// with [`DEFAULT_MODEL`] and the default [`RetryPolicy`].
    pub fn new(
        api_key: impl Into<String>,
        base_url: impl AsRef<str>,
    ) -> Result<Self, DriverConfigError> {
        let api_key = api_key.into();
        if api_key.trim().is_empty() {
            return Err(DriverConfigError::Invalid {
                setting: "the API key".into(),
                reason: "it is empty".into(),
            });
        }
        Ok(AnthropicDriver {
            client: http::client()?,
            api_key,
            base_url: http::base_url("the base URL", base_url.as_ref())?,
            default_model: DEFAULT_MODEL.to_string(),
            retry: RetryPolicy::default(),
        })
    }

    /// A driver configured by `ANTHROPIC_API_KEY`, `ANTHROPIC_BASE_URL` and `ANTHROPIC_MODEL`
    /// (see the [module documentation](self)).
    pub fn from_env() -> Result<Self, DriverConfigError> {
        Self::from_env_with(|var| std::env::var(var).ok())
    }

    /// As [`from_env`](Self::from_env), reading each variable through `lookup`; an empty
    /// value counts as unset.
    pub fn from_env_with(
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, DriverConfigError> {
        let var = |name: &str| lookup(name).filter(|v| !v.trim().is_empty());
        let api_key = var("ANTHROPIC_API_KEY").ok_or(DriverConfigError::MissingVar {
            var: "ANTHROPIC_API_KEY",
            hint: "set it to an Anthropic API key to use the anthropic model driver",
        })?;
        let base = var("ANTHROPIC_BASE_URL");
        let base_url = match &base {
            Some(url) => http::base_url("ANTHROPIC_BASE_URL", url)?,
            None => DEFAULT_BASE_URL.to_string(),
        };
        let mut driver = Self::new(api_key, base_url)?;
        if let Some(model) = var("ANTHROPIC_MODEL") {
            driver = driver.with_default_model(model);
        }
        Ok(driver)
    }

    /// Uses `model` (an alias or a full id) when a request names none.
    pub fn with_default_model(mut self, model: impl AsRef<str>) -> Self {
        self.default_model = resolve_model(model.as_ref()).to_string();
        self
    }

    /// Retries as `policy` says.
    pub fn with_retry(mut self, policy: RetryPolicy) -> Self {
        self.retry = policy;
        self
    }

    /// Where the API is, without a trailing slash.
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// How failed requests are retried.
    pub fn retry_policy(&self) -> RetryPolicy {
        self.retry
    }

    /// The JSON body of `request`, as sent.
    pub fn request_body(&self, request: &ModelRequest) -> Value {
        let model = if request.model.trim().is_empty() {
            self.default_model.as_str()
        } else {
            resolve_model(&request.model)
        };
        let body = Body {
            model,
            max_tokens: if request.max_tokens == 0 {
                DEFAULT_MAX_TOKENS
            } else {
                request.max_tokens
            },
            system: &request.system,
            messages: &request.messages,
            tools: &request.tools,
            stream: true,
        };
        // Plain data: serialising it cannot fail.
        serde_json::to_value(body).unwrap_or(Value::Null)
    }

    async fn run(
        &self,
        request: &ModelRequest,
        sink: Option<&dyn StreamSink>,
    ) -> Result<ModelResponse, ModelError> {
        let body = self.request_body(request);
        let model = body
            .get("model")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let body = body.to_string();
        let url = format!("{}/v1/messages", self.base_url);
        let resp = http::send(
            &self.retry,
            &url,
            || {
                self.client
                    .post(&url)
                    .header("x-api-key", &self.api_key)
                    .header("anthropic-version", API_VERSION)
                    .header(reqwest::header::CONTENT_TYPE, "application/json")
                    .header(reqwest::header::ACCEPT, "text/event-stream")
                    .body(body.clone())
            },
            http::http_error,
        )
        .await?;
        if !http::is_event_stream(&resp) {
            return Err(http::malformed(
                "expected an event stream (text/event-stream)",
            ));
        }
        let mut events = http::events(resp);
        let mut message = StreamedMessage::new(model);
        while let Some(event) = events.next().await {
            let event = event?;
            let Some(data) = event.data.as_deref() else {
                continue;
            };
            if message.event(event.event.as_deref(), data, sink)? {
                return message.finish();
            }
        }
        Err(http::malformed(
            "the event stream ended before message_stop",
        ))
    }
}

impl ModelDriver for AnthropicDriver {
    fn complete<'a>(
        &'a self,
        request: &'a ModelRequest,
        sink: Option<&'a dyn StreamSink>,
    ) -> ModelFuture<'a> {
        Box::pin(self.run(request, sink))
    }

    fn name(&self) -> &str {
        "anthropic"
    }

    fn default_model(&self) -> &str {
        &self.default_model
    }

    /// Approximate; see [`price_per_million`].
    fn cost_usd(&self, model: &str, usage: Usage) -> Option<f64> {
        let model = if model.trim().is_empty() {
            &self.default_model
        } else {
            model
        };
        let (input, output) = price_per_million(model)?;
        Some(
            (usage.input_tokens as f64 * input + usage.output_tokens as f64 * output) / 1_000_000.0,
        )
    }
}

#[derive(Serialize)]
struct Body<'a> {
    model: &'a str,
    max_tokens: u32,
    #[serde(skip_serializing_if = "str::is_empty")]
    system: &'a str,
    messages: &'a [Message],
    #[serde(skip_serializing_if = "<[ToolSpec]>::is_empty")]
    tools: &'a [ToolSpec],
    stream: bool,
}

/// One event of the stream, by its `type`.
#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Event {
    MessageStart {
        message: StartedMessage,
    },
    ContentBlockStart {
        index: usize,
        content_block: Value,
    },
    ContentBlockDelta {
        index: usize,
        delta: Value,
    },
    ContentBlockStop {
        index: usize,
    },
    MessageDelta {
        #[serde(default)]
        delta: MessageDelta,
        #[serde(default)]
        usage: Option<ApiUsage>,
    },
    MessageStop,
    Error {
        error: Value,
    },
    // `ping`, and whatever later API versions add.
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
struct StartedMessage {
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    usage: Option<ApiUsage>,
}

#[derive(Deserialize, Default)]
struct MessageDelta {
    #[serde(default)]
    stop_reason: Option<String>,
}

#[derive(Deserialize, Default)]
struct ApiUsage {
    #[serde(default)]
    input_tokens: Option<u64>,
    #[serde(default)]
    output_tokens: Option<u64>,
    #[serde(default)]
    cache_creation_input_tokens: Option<u64>,
    #[serde(default)]
    cache_read_input_tokens: Option<u64>,
}

impl ApiUsage {
    /// All input tokens, cached or not: [`Usage`] has one count for what the model read.
    fn input(&self) -> Option<u64> {
        let parts = [
            self.input_tokens,
            self.cache_creation_input_tokens,
            self.cache_read_input_tokens,
        ];
        parts
            .iter()
            .any(Option::is_some)
            .then(|| parts.iter().flatten().sum())
    }
}

enum Partial {
    Text(String),
    ToolUse {
        id: String,
        name: String,
        /// The input of `content_block_start`, used when no delta follows.
        start: Value,
        json: String,
        /// The input once parsed, or why it would not.
        input: Option<Result<Value, String>>,
    },
}

impl Partial {
    fn close(&mut self) {
        if let Partial::ToolUse {
            start, json, input, ..
        } = self
            && input.is_none()
        {
            *input = Some(if json.trim().is_empty() {
                Ok(start.take())
            } else {
                serde_json::from_str(json).map_err(|e| e.to_string())
            });
        }
    }
}

/// A message as its events arrive.
struct StreamedMessage {
    model: String,
    blocks: BTreeMap<usize, Partial>,
    stop_reason: Option<String>,
    usage: Usage,
}

impl StreamedMessage {
    fn new(model: String) -> Self {
        StreamedMessage {
            model,
            blocks: BTreeMap::new(),
            stop_reason: None,
            usage: Usage::default(),
        }
    }

    /// Takes one event; true once the message is complete.
    fn event(
        &mut self,
        name: Option<&str>,
        data: &str,
        sink: Option<&dyn StreamSink>,
    ) -> Result<bool, ModelError> {
        let event: Event = serde_json::from_str(data).map_err(|e| {
            http::malformed(format_args!("event `{}`: {e}", name.unwrap_or("message")))
        })?;
        match event {
            Event::MessageStart { message } => {
                if let Some(model) = message.model {
                    self.model = model;
                }
                if let Some(usage) = message.usage {
                    self.add_usage(&usage);
                }
            }
            Event::ContentBlockStart {
                index,
                content_block,
            } => {
                let field = |k: &str| {
                    content_block
                        .get(k)
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string()
                };
                let partial = match content_block.get("type").and_then(Value::as_str) {
                    Some("text") => {
                        let text = field("text");
                        if let (Some(sink), false) = (sink, text.is_empty()) {
                            sink.text_delta(&text);
                        }
                        Partial::Text(text)
                    }
                    Some("tool_use") => Partial::ToolUse {
                        id: field("id"),
                        name: field("name"),
                        start: content_block
                            .get("input")
                            .cloned()
                            .unwrap_or_else(|| Value::Object(Default::default())),
                        json: String::new(),
                        input: None,
                    },
                    // Thinking and server-tool blocks are not part of the conversation here.
                    _ => return Ok(false),
                };
                self.blocks.insert(index, partial);
            }
            Event::ContentBlockDelta { index, delta } => {
                let piece = |k: &str| delta.get(k).and_then(Value::as_str).unwrap_or_default();
                match (
                    self.blocks.get_mut(&index),
                    delta.get("type").and_then(Value::as_str),
                ) {
                    (Some(Partial::Text(text)), Some("text_delta")) => {
                        let more = piece("text");
                        text.push_str(more);
                        if let (Some(sink), false) = (sink, more.is_empty()) {
                            sink.text_delta(more);
                        }
                    }
                    (Some(Partial::ToolUse { json, .. }), Some("input_json_delta")) => {
                        json.push_str(piece("partial_json"));
                    }
                    _ => {}
                }
            }
            Event::ContentBlockStop { index } => {
                if let Some(block) = self.blocks.get_mut(&index) {
                    block.close();
                }
            }
            Event::MessageDelta { delta, usage } => {
                if delta.stop_reason.is_some() {
                    self.stop_reason = delta.stop_reason;
                }
                if let Some(usage) = usage {
                    // Counts here are totals so far, not increments.
                    if let Some(input) = usage.input() {
                        self.usage.input_tokens = input;
                    }
                    if let Some(output) = usage.output_tokens {
                        self.usage.output_tokens = output;
                    }
                }
            }
            Event::MessageStop => return Ok(true),
            Event::Error { error } => {
                let (error_type, message) = http::error_fields(&error);
                return Err(ModelError::new(
                    error_type.map_or(crate::ModelErrorKind::Unknown, http::kind_for_type),
                    message.unwrap_or("the API reported an error mid-stream"),
                ));
            }
            Event::Other => {}
        }
        Ok(false)
    }

    fn add_usage(&mut self, usage: &ApiUsage) {
        self.usage.input_tokens = usage.input().unwrap_or(self.usage.input_tokens);
        self.usage.output_tokens = usage.output_tokens.unwrap_or(self.usage.output_tokens);
    }

    fn finish(self) -> Result<ModelResponse, ModelError> {
        let stop_reason = match self.stop_reason.as_deref() {
            Some("end_turn") | Some("pause_turn") => StopReason::EndTurn,
            Some("tool_use") => StopReason::ToolUse,
            Some("max_tokens") | Some("model_context_window_exceeded") => StopReason::MaxTokens,
            Some("stop_sequence") => StopReason::StopSequence,
            Some("refusal") => StopReason::Refusal,
            _ => {
                let tools = self
                    .blocks
                    .values()
                    .any(|b| matches!(b, Partial::ToolUse { .. }));
                if tools {
                    StopReason::ToolUse
                } else {
                    StopReason::EndTurn
                }
            }
        };
        let mut content = Vec::with_capacity(self.blocks.len());
        for mut block in self.blocks.into_values() {
            block.close();
            match block {
                // The API refuses empty text blocks when the message is sent back.
                Partial::Text(text) if text.is_empty() => {}
                Partial::Text(text) => content.push(Block::Text { text }),
                Partial::ToolUse {
                    id, name, input, ..
                } => match input {
                    Some(Ok(input)) => content.push(Block::ToolUse { id, name, input }),
                    // A call cut off by max_tokens cannot be run; the stop reason says why.
                    _ if stop_reason == StopReason::MaxTokens => {}
                    Some(Err(e)) => {
                        return Err(http::malformed(format_args!(
                            "the input of tool call `{name}` is not JSON: {e}"
                        )));
                    }
                    None => {}
                },
            }
        }
        Ok(ModelResponse {
            content,
            stop_reason,
            usage: self.usage,
            model: self.model,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aliases() {
        assert_eq!(resolve_model("sonnet"), "claude-sonnet-4-6");
        assert_eq!(resolve_model("Opus"), "claude-opus-4-6");
        assert_eq!(resolve_model("haiku"), "claude-haiku-4-5");
        assert_eq!(
            resolve_model("claude-3-7-sonnet-latest"),
            "claude-3-7-sonnet-latest"
        );
    }

    #[test]
    fn prices() {
        assert_eq!(price_per_million("sonnet"), Some((3.0, 15.0)));
        assert_eq!(price_per_million("opus"), Some((5.0, 25.0)));
        assert_eq!(
            price_per_million("claude-opus-4-5-20251101"),
            Some((5.0, 25.0))
        );
        assert_eq!(
            price_per_million("claude-opus-4-1-20250805"),
            Some((15.0, 75.0))
        );
        assert_eq!(
            price_per_million("claude-opus-4-20250514"),
            Some((15.0, 75.0))
        );
        assert_eq!(
            price_per_million("claude-3-opus-20240229"),
            Some((15.0, 75.0))
        );
        assert_eq!(price_per_million("haiku"), Some((1.0, 5.0)));
        assert_eq!(
            price_per_million("claude-3-5-haiku-latest"),
            Some((0.8, 4.0))
        );
        assert_eq!(
            price_per_million("claude-3-haiku-20240307"),
            Some((0.25, 1.25))
        );
        assert_eq!(price_per_million("gpt-4o"), None);
    }

    #[test]
    fn cut_tool_call_is_dropped_at_max_tokens() {
        let mut m = StreamedMessage::new("m".into());
        let events = [
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"Bash","input":{}}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"comm"}}"#,
            r#"{"type":"content_block_stop","index":0}"#,
            r#"{"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"output_tokens":9}}"#,
        ];
        for e in events {
            assert!(!m.event(None, e, None).unwrap());
        }
        assert!(m.event(None, r#"{"type":"message_stop"}"#, None).unwrap());
        let r = m.finish().unwrap();
        assert_eq!(r.stop_reason, StopReason::MaxTokens);
        assert!(r.content.is_empty());
        assert_eq!(r.usage.output_tokens, 9);
    }

    #[test]
    fn tool_call_without_deltas_keeps_its_start_input() {
        let mut m = StreamedMessage::new("m".into());
        m.event(None, r#"{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"Now","input":{}}}"#, None).unwrap();
        m.event(None, r#"{"type":"content_block_stop","index":0}"#, None)
            .unwrap();
        let r = m.finish().unwrap();
        assert_eq!(r.stop_reason, StopReason::ToolUse);
        assert_eq!(
            r.content,
            vec![Block::ToolUse {
                id: "t".into(),
                name: "Now".into(),
                input: serde_json::json!({})
            }]
        );
    }
}
