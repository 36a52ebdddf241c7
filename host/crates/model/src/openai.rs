//! The driver for OpenAI-compatible chat completions (`POST {base}/chat/completions`), as
//! local model servers such as llama.cpp's `llama-server`, vLLM and Ollama serve them,
//! streamed.
//!
//! Configuration, by [`OpenAiDriver::from_env`]:
//!
//! | variable | meaning | default |
//! |---|---|---|
//! | `OPENAI_BASE_URL` | the API root, the part before `/chat/completions` | `http://127.0.0.1:8080/v1` (llama-server's own default) |
//! | `OPENAI_API_KEY` | sent as `Authorization: Bearer …` when set | none: local servers rarely want one |
//! | `OPENAI_MODEL` | the model when a request names none | none: the `model` field is left out, and servers that serve one model use it |
//!
//! The base URL defaults to a local server rather than to OpenAI's own, so that a
//! conversation never leaves the machine unless told to.
//!
//! Requests name models as Anthropic does (`sonnet`, `claude-…`, `inherit`); those names mean
//! nothing to another server, so such a request gets the driver's default model instead.

use std::collections::BTreeMap;
use std::fmt;

use futures::StreamExt;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::http::{self, DriverConfigError, RetryPolicy};
use crate::{
    Block, Message, ModelDriver, ModelError, ModelErrorKind, ModelFuture, ModelRequest,
    ModelResponse, Role, StopReason, StreamSink, Usage,
};

/// Where the API is unless `OPENAI_BASE_URL` says otherwise: llama-server's default address.
pub const DEFAULT_BASE_URL: &str = "http://127.0.0.1:8080/v1";

/// What a failed tool call's result starts with: chat completions have no `is_error`.
pub const TOOL_ERROR_PREFIX: &str = "Error: ";

/// A model behind an OpenAI-compatible chat completions API.
#[derive(Clone)]
pub struct OpenAiDriver {
    client: reqwest::Client,
    api_key: Option<String>,
    base_url: String,
    default_model: String,
    retry: RetryPolicy,
}

impl fmt::Debug for OpenAiDriver {
    // The key stays out of logs.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenAiDriver")
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "…"))
            .field("default_model", &self.default_model)
            .field("retry", &self.retry)
            .finish_non_exhaustive()
    }
}

impl OpenAiDriver {
    /// A driver for the API at `base_url` (the part before `/chat/completions`, such as
    /// [`DEFAULT_BASE_URL`]), sending `api_key` as a bearer token when given, with no default
    /// model and the default [`RetryPolicy`].
    pub fn new(
        base_url: impl AsRef<str>,
        api_key: Option<String>,
    ) -> Result<Self, DriverConfigError> {
        Ok(OpenAiDriver {
            client: http::client()?,
            api_key: api_key.filter(|k| !k.trim().is_empty()),
            base_url: http::base_url("the base URL", base_url.as_ref())?,
            default_model: String::new(),
            retry: RetryPolicy::default(),
        })
    }

    /// A driver configured by `OPENAI_BASE_URL`, `OPENAI_API_KEY` and `OPENAI_MODEL` (see the
    /// [module documentation](self)).
    pub fn from_env() -> Result<Self, DriverConfigError> {
        Self::from_env_with(|var| std::env::var(var).ok())
    }

    /// As [`from_env`](Self::from_env), reading each variable through `lookup`; an empty
    /// value counts as unset.
    pub fn from_env_with(
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, DriverConfigError> {
        let var = |name: &str| lookup(name).filter(|v| !v.trim().is_empty());
        let base_url = match var("OPENAI_BASE_URL") {
            Some(url) => http::base_url("OPENAI_BASE_URL", &url)?,
            None => DEFAULT_BASE_URL.to_string(),
        };
        let driver = Self::new(base_url, var("OPENAI_API_KEY"))?;
        Ok(match var("OPENAI_MODEL") {
            Some(model) => driver.with_default_model(model),
            None => driver,
        })
    }

    /// Uses `model` when a request names none (or names an Anthropic model).
    pub fn with_default_model(mut self, model: impl Into<String>) -> Self {
        self.default_model = model.into().trim().to_string();
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

    /// The model `requested` is sent as, `None` to leave the field out.
    fn model_for<'a>(&'a self, requested: &'a str) -> Option<&'a str> {
        let requested = requested.trim();
        let anthropic = requested.is_empty()
            || requested.eq_ignore_ascii_case("inherit")
            || requested.starts_with("claude")
            || crate::anthropic::MODEL_ALIASES
                .iter()
                .any(|(alias, _)| alias.eq_ignore_ascii_case(requested));
        let model = if anthropic {
            self.default_model.as_str()
        } else {
            requested
        };
        (!model.is_empty()).then_some(model)
    }

    /// The JSON body of `request`, as sent.
    pub fn request_body(&self, request: &ModelRequest) -> Value {
        let mut body = Map::new();
        if let Some(model) = self.model_for(&request.model) {
            body.insert("model".into(), model.into());
        }
        body.insert(
            "messages".into(),
            chat_messages(&request.system, &request.messages).into(),
        );
        if !request.tools.is_empty() {
            let tools: Vec<Value> = request
                .tools
                .iter()
                .map(|t| {
                    json!({
                        "type": "function",
                        "function": {
                            "name": t.name,
                            "description": t.description,
                            "parameters": t.input_schema,
                        }
                    })
                })
                .collect();
            body.insert("tools".into(), tools.into());
        }
        // 0 leaves the limit to the server.
        if request.max_tokens > 0 {
            body.insert("max_tokens".into(), request.max_tokens.into());
        }
        body.insert("stream".into(), true.into());
        // Without it the stream carries no token counts.
        body.insert("stream_options".into(), json!({ "include_usage": true }));
        Value::Object(body)
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
        let url = format!("{}/chat/completions", self.base_url);
        let resp = http::send(
            &self.retry,
            &url,
            || {
                let mut req = self
                    .client
                    .post(&url)
                    .header(reqwest::header::CONTENT_TYPE, "application/json")
                    .body(body.clone());
                if let Some(key) = &self.api_key {
                    req = req.bearer_auth(key);
                }
                req
            },
            http::http_error,
        )
        .await?;
        let mut chat = StreamedChat::new(model);
        if !http::is_event_stream(&resp) {
            // Some servers ignore `stream` and answer with the whole completion.
            let text = resp
                .text()
                .await
                .map_err(|e| http::malformed(format_args!("the answer broke off: {e}")))?;
            chat.chunk(&text, sink)?;
            return chat.finish();
        }
        let mut events = http::events(resp);
        while let Some(event) = events.next().await {
            let event = event?;
            let Some(data) = event.data.as_deref() else {
                continue;
            };
            if chat.chunk(data, sink)? {
                return chat.finish();
            }
        }
        // Servers that close the stream without `[DONE]` have still said why they stopped.
        if chat.finish_reason.is_some() {
            return chat.finish();
        }
        Err(http::malformed(
            "the event stream ended before the answer did",
        ))
    }
}

impl ModelDriver for OpenAiDriver {
    fn complete<'a>(
        &'a self,
        request: &'a ModelRequest,
        sink: Option<&'a dyn StreamSink>,
    ) -> ModelFuture<'a> {
        Box::pin(self.run(request, sink))
    }

    fn name(&self) -> &str {
        "openai"
    }

    fn default_model(&self) -> &str {
        &self.default_model
    }
}

/// `system` and `messages` as chat completion messages: the system prompt first, assistant
/// tool calls as `tool_calls`, and each tool result as a `tool` message ahead of the user's
/// text, since tool messages must follow the call they answer.
pub fn chat_messages(system: &str, messages: &[Message]) -> Vec<Value> {
    let mut out = Vec::new();
    if !system.is_empty() {
        out.push(json!({ "role": "system", "content": system }));
    }
    for message in messages {
        let text = message.text();
        match message.role {
            Role::User => {
                for block in &message.content {
                    if let Block::ToolResult {
                        tool_use_id,
                        content,
                        is_error,
                    } = block
                    {
                        let content = if *is_error {
                            format!("{TOOL_ERROR_PREFIX}{content}")
                        } else {
                            content.clone()
                        };
                        out.push(json!({
                            "role": "tool",
                            "tool_call_id": tool_use_id,
                            "content": content,
                        }));
                    }
                }
                let only_results = !message.content.is_empty()
                    && message
                        .content
                        .iter()
                        .all(|b| matches!(b, Block::ToolResult { .. }));
                if !only_results {
                    out.push(json!({ "role": "user", "content": text }));
                }
            }
            Role::Assistant => {
                let calls: Vec<Value> = message
                    .tool_uses()
                    .map(|(id, name, input)| {
                        json!({
                            "id": id,
                            "type": "function",
                            "function": { "name": name, "arguments": input.to_string() },
                        })
                    })
                    .collect();
                let mut m = Map::new();
                m.insert("role".into(), "assistant".into());
                m.insert(
                    "content".into(),
                    if text.is_empty() && !calls.is_empty() {
                        Value::Null
                    } else {
                        text.into()
                    },
                );
                if !calls.is_empty() {
                    m.insert("tool_calls".into(), calls.into());
                }
                out.push(Value::Object(m));
            }
        }
    }
    out
}

#[derive(Deserialize)]
struct Chunk {
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    choices: Vec<Choice>,
    #[serde(default)]
    usage: Option<ApiUsage>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize)]
struct Choice {
    #[serde(default)]
    delta: Option<Delta>,
    /// What a server that does not stream answers instead of `delta`.
    #[serde(default)]
    message: Option<Delta>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct Delta {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<CallDelta>>,
}

#[derive(Deserialize)]
struct CallDelta {
    #[serde(default)]
    index: Option<usize>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    function: Option<FunctionDelta>,
}

#[derive(Deserialize)]
struct FunctionDelta {
    #[serde(default)]
    name: Option<String>,
    /// A fragment of the JSON string; some servers send the object itself.
    #[serde(default)]
    arguments: Option<Value>,
}

#[derive(Deserialize)]
struct ApiUsage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
}

#[derive(Default)]
struct Call {
    id: String,
    name: String,
    arguments: String,
}

/// A completion as its chunks arrive.
struct StreamedChat {
    model: String,
    text: String,
    calls: BTreeMap<usize, Call>,
    finish_reason: Option<String>,
    usage: Usage,
}

impl StreamedChat {
    fn new(model: String) -> Self {
        StreamedChat {
            model,
            text: String::new(),
            calls: BTreeMap::new(),
            finish_reason: None,
            usage: Usage::default(),
        }
    }

    /// Takes one chunk; true at `[DONE]`.
    fn chunk(&mut self, data: &str, sink: Option<&dyn StreamSink>) -> Result<bool, ModelError> {
        if data.trim() == "[DONE]" {
            return Ok(true);
        }
        let chunk: Chunk =
            serde_json::from_str(data).map_err(|e| http::malformed(format_args!("chunk: {e}")))?;
        if let Some(error) = chunk.error {
            return Err(stream_error(&error));
        }
        if let Some(model) = chunk.model.filter(|m| !m.is_empty()) {
            self.model = model;
        }
        if let Some(usage) = chunk.usage {
            self.usage = Usage {
                input_tokens: usage.prompt_tokens,
                output_tokens: usage.completion_tokens,
            };
        }
        // Only one choice is asked for (`n` is left at 1).
        let Some(choice) = chunk.choices.into_iter().next() else {
            return Ok(false);
        };
        if let Some(reason) = choice.finish_reason {
            self.finish_reason = Some(reason);
        }
        let Some(delta) = choice.delta.or(choice.message) else {
            return Ok(false);
        };
        if let Some(text) = delta.content.filter(|t| !t.is_empty()) {
            if let Some(sink) = sink {
                sink.text_delta(&text);
            }
            self.text.push_str(&text);
        }
        for (position, part) in delta.tool_calls.into_iter().flatten().enumerate() {
            let call = self
                .calls
                .entry(part.index.unwrap_or(position))
                .or_default();
            // Ids and names come whole in one chunk; some servers repeat them in later ones.
            if let Some(id) = part.id.filter(|id| !id.is_empty())
                && call.id.is_empty()
            {
                call.id = id;
            }
            let Some(function) = part.function else {
                continue;
            };
            if let Some(name) = function.name.filter(|n| !n.is_empty())
                && call.name.is_empty()
            {
                call.name = name;
            }
            match function.arguments {
                Some(Value::String(fragment)) => call.arguments.push_str(&fragment),
                Some(Value::Null) | None => {}
                Some(whole) => call.arguments = whole.to_string(),
            }
        }
        Ok(false)
    }

    fn finish(self) -> Result<ModelResponse, ModelError> {
        let stop_reason = match self.finish_reason.as_deref() {
            Some("length") => StopReason::MaxTokens,
            Some("content_filter") => StopReason::Refusal,
            // Some servers say `stop` even when the turn ends in tool calls.
            _ if !self.calls.is_empty() => StopReason::ToolUse,
            _ => StopReason::EndTurn,
        };
        let mut content = Vec::with_capacity(1 + self.calls.len());
        if !self.text.is_empty() {
            content.push(Block::Text { text: self.text });
        }
        for (index, call) in self.calls {
            let input = if call.arguments.trim().is_empty() {
                Ok(Value::Object(Map::new()))
            } else {
                serde_json::from_str::<Value>(&call.arguments)
            };
            match input {
                Ok(input) => content.push(Block::ToolUse {
                    id: if call.id.is_empty() {
                        // The result must name the call; a server that gave no id gets one.
                        let tail: String = (0..16).map(|_| fastrand::alphanumeric()).collect();
                        format!("call_{index}_{tail}")
                    } else {
                        call.id
                    },
                    name: call.name,
                    input,
                }),
                // A call cut off by the token limit cannot be run; the stop reason says why.
                Err(_) if stop_reason == StopReason::MaxTokens => {}
                Err(e) => {
                    return Err(http::malformed(format_args!(
                        "the arguments of tool call `{}` are not JSON: {e}",
                        call.name
                    )));
                }
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

/// The error a chunk reports in place of content.
fn stream_error(error: &Value) -> ModelError {
    let (error_type, message) = http::error_fields(error);
    let status = error
        .get("error")
        .unwrap_or(error)
        .get("code")
        .and_then(Value::as_u64)
        .and_then(|c| u16::try_from(c).ok());
    let by_status = status
        .and_then(|s| reqwest::StatusCode::from_u16(s).ok())
        .map(http::kind_for_status)
        .filter(|k| *k != ModelErrorKind::Unknown);
    let kind = by_status
        .or_else(|| error_type.map(http::kind_for_type))
        .unwrap_or(ModelErrorKind::Unknown);
    ModelError::new(
        kind,
        message.unwrap_or("the server reported an error mid-stream"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_in_chat_shape() {
        let messages = vec![
            Message::user("list files"),
            Message {
                role: Role::Assistant,
                content: vec![Block::ToolUse {
                    id: "c1".into(),
                    name: "Bash".into(),
                    input: json!({"command": "ls"}),
                }],
            },
            Message {
                role: Role::User,
                content: vec![Block::ToolResult {
                    tool_use_id: "c1".into(),
                    content: "denied".into(),
                    is_error: true,
                }],
            },
        ];
        let out = chat_messages("be brief", &messages);
        assert_eq!(
            Value::Array(out),
            json!([
                {"role": "system", "content": "be brief"},
                {"role": "user", "content": "list files"},
                {"role": "assistant", "content": null, "tool_calls": [
                    {"id": "c1", "type": "function",
                     "function": {"name": "Bash", "arguments": "{\"command\":\"ls\"}"}}
                ]},
                {"role": "tool", "tool_call_id": "c1", "content": "Error: denied"},
            ])
        );
    }

    #[test]
    fn whole_completion_without_stream() {
        let mut chat = StreamedChat::new(String::new());
        let body = json!({
            "model": "qwen",
            "choices": [{"message": {"role": "assistant", "content": null, "tool_calls": [
                {"id": "x", "type": "function", "function": {"name": "Read", "arguments": {"path": "a"}}}
            ]}, "finish_reason": "tool_calls"}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 2}
        });
        assert!(!chat.chunk(&body.to_string(), None).unwrap());
        let r = chat.finish().unwrap();
        assert_eq!(r.model, "qwen");
        assert_eq!(r.stop_reason, StopReason::ToolUse);
        assert_eq!(
            r.content,
            vec![Block::ToolUse {
                id: "x".into(),
                name: "Read".into(),
                input: json!({"path": "a"})
            }]
        );
        assert_eq!(r.usage.input_tokens, 5);
    }

    #[test]
    fn missing_call_ids_are_made_up() {
        let mut chat = StreamedChat::new(String::new());
        chat.chunk(
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"name":"Now","arguments":""}}]},"finish_reason":"stop"}]}"#,
            None,
        )
        .unwrap();
        let r = chat.finish().unwrap();
        assert_eq!(r.stop_reason, StopReason::ToolUse);
        let (id, name, input) = match &r.content[0] {
            Block::ToolUse { id, name, input } => (id, name, input),
            other => panic!("{other:?}"),
        };
        assert!(id.starts_with("call_0_") && id.len() > 10, "{id}");
        assert_eq!((name.as_str(), input), ("Now", &json!({})));
    }

    #[test]
    fn chunk_errors() {
        let e = stream_error(&json!({"error": {"code": 503, "message": "loading model"}}));
        assert_eq!(
            (e.kind, e.message.as_str()),
            (ModelErrorKind::ServerError, "loading model")
        );
        let e = stream_error(&json!({"message": "slow down", "type": "rate_limit_error"}));
        assert_eq!(e.kind, ModelErrorKind::RateLimit);
    }
}
