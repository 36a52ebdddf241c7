//! What the HTTP drivers share: the client, configuration errors, retries with backoff, the
//! mapping of HTTP failures to [`ModelErrorKind`], and the event stream.

use std::time::Duration;

use futures::{Stream, StreamExt};
use reqwest::StatusCode;
use reqwest::header::HeaderMap;
use serde_json::Value;

use crate::{ModelError, ModelErrorKind};

/// A driver could not be set up from its configuration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DriverConfigError {
    /// A required environment variable is unset or empty.
    #[error("{var} is not set; {hint}")]
    MissingVar {
        /// The variable.
        var: &'static str,
        /// What to set it to.
        hint: &'static str,
    },
    /// A setting has a value the driver cannot use.
    #[error("{setting} is not usable: {reason}")]
    Invalid {
        /// The setting (an environment variable, or the constructor argument).
        setting: String,
        /// Why.
        reason: String,
    },
    /// The HTTP client could not be built.
    #[error("cannot build the HTTP client: {0}")]
    Client(String),
}

/// When a failed request is sent again: on 429, 529 and other 5xx answers and on connection
/// failures, up to [`max_attempts`](Self::max_attempts) in all, waiting what the server's
/// `retry-after` asks or else an exponential backoff with jitter.
///
/// A request whose answer has started to stream is never sent again, since its text may
/// already have reached the sink.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in all, the first included; 1 never retries (0 counts as 1).
    pub max_attempts: u32,
    /// The wait before the first retry; it doubles for each further one.
    pub base_delay: Duration,
    /// The longest wait, for the backoff and for a server's `retry-after` alike.
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    /// 4 attempts, 500 ms doubling, at most 60 s between two.
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 4,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
    /// The wait before retry number `retry` (1 for the first), when the server named none.
    pub fn backoff(&self, retry: u32) -> Duration {
        let doubling = 2u32.saturating_pow(retry.saturating_sub(1));
        let delay = self.base_delay.saturating_mul(doubling).min(self.max_delay);
        // Up to a quarter off, so that clients which failed together do not retry together.
        delay.mul_f64(1.0 - fastrand::f64() * 0.25)
    }
}

/// The client both drivers use: rustls with the ring provider and the platform's roots.
pub(crate) fn client() -> Result<reqwest::Client, DriverConfigError> {
    // reqwest is built without a default provider; several callers may race to install one,
    // and any installed provider will do.
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(30))
        // A stalled stream fails rather than hanging the conversation. Local servers may think
        // long before the first token of a large prompt, hence the generous bound.
        .read_timeout(Duration::from_secs(600))
        .build()
        .map_err(|e| DriverConfigError::Client(e.to_string()))
}

/// `url` without trailing slashes, once it parses as an http(s) URL.
pub(crate) fn base_url(setting: &str, url: &str) -> Result<String, DriverConfigError> {
    let invalid = |reason: String| DriverConfigError::Invalid {
        setting: setting.to_string(),
        reason,
    };
    let trimmed = url.trim().trim_end_matches('/');
    let parsed = reqwest::Url::parse(trimmed).map_err(|e| invalid(format!("`{url}`: {e}")))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(invalid(format!("`{url}` is not an http or https URL")));
    }
    Ok(trimmed.to_string())
}

/// Sends the request `build` makes until it is answered with a success, retrying as `policy`
/// says; `api_error` turns a failed answer's status and body into the error.
pub(crate) async fn send(
    policy: &RetryPolicy,
    url: &str,
    build: impl Fn() -> reqwest::RequestBuilder,
    api_error: impl Fn(StatusCode, &str) -> ModelError,
) -> Result<reqwest::Response, ModelError> {
    let attempts = policy.max_attempts.max(1);
    let mut attempt = 1;
    loop {
        let (error, transient, asked) = match build().send().await {
            Ok(resp) if resp.status().is_success() => return Ok(resp),
            Ok(resp) => {
                let status = resp.status();
                let asked = retry_after(resp.headers());
                // A body that cannot be read still leaves the status to go by.
                let body = resp.text().await.unwrap_or_default();
                let error = api_error(status, &body);
                let transient = status.as_u16() == 429 || status.is_server_error();
                (error, transient, asked)
            }
            Err(e) => {
                // Only failures before an answer: the request was not processed.
                let transient = e.is_connect() || e.is_timeout() || e.is_request();
                // reqwest's own message repeats the URL; its causes say what failed.
                let cause = match std::error::Error::source(&e) {
                    Some(source) => error_chain(source),
                    None => e.to_string(),
                };
                let error = ModelError::new(
                    ModelErrorKind::Unknown,
                    format!("cannot reach {url}: {cause}"),
                );
                (error, transient, None)
            }
        };
        if !transient || attempt >= attempts {
            if transient && attempts > 1 && error.status.is_none() {
                return Err(ModelError {
                    message: format!("{} (after {attempts} attempts)", error.message),
                    ..error
                });
            }
            return Err(error);
        }
        let wait = asked
            .map(|d| d.min(policy.max_delay))
            .unwrap_or_else(|| policy.backoff(attempt));
        tokio::time::sleep(wait).await;
        attempt += 1;
    }
}

/// How long the server asked to wait: `retry-after-ms`, or `retry-after` in seconds. An HTTP
/// date is not honoured; the backoff applies instead.
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let number = |name: &str| -> Option<f64> {
        let v: f64 = headers.get(name)?.to_str().ok()?.trim().parse().ok()?;
        (v.is_finite() && v >= 0.0).then_some(v)
    };
    if let Some(ms) = number("retry-after-ms") {
        return Some(Duration::from_secs_f64(ms.min(86_400_000.0) / 1000.0));
    }
    number("retry-after").map(|s| Duration::from_secs_f64(s.min(86_400.0)))
}

/// The message of `e` and of its causes, which is where reqwest keeps "connection refused".
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        source = s.source();
    }
    out
}

/// The kind of a failed HTTP answer.
pub(crate) fn kind_for_status(status: StatusCode) -> ModelErrorKind {
    match status.as_u16() {
        401 | 403 => ModelErrorKind::AuthenticationFailed,
        402 => ModelErrorKind::BillingError,
        400 | 413 | 422 => ModelErrorKind::InvalidRequest,
        404 => ModelErrorKind::ModelNotFound,
        429 => ModelErrorKind::RateLimit,
        529 => ModelErrorKind::Overloaded,
        500..=599 => ModelErrorKind::ServerError,
        _ => ModelErrorKind::Unknown,
    }
}

/// The kind an error `type` names, in the Anthropic and OpenAI spellings.
pub(crate) fn kind_for_type(error_type: &str) -> ModelErrorKind {
    match error_type {
        "invalid_request_error" | "request_too_large" => ModelErrorKind::InvalidRequest,
        "authentication_error" | "permission_error" => ModelErrorKind::AuthenticationFailed,
        "billing_error" | "insufficient_quota" => ModelErrorKind::BillingError,
        "not_found_error" | "model_not_found" => ModelErrorKind::ModelNotFound,
        "rate_limit_error" | "rate_limit_exceeded" => ModelErrorKind::RateLimit,
        "overloaded_error" => ModelErrorKind::Overloaded,
        "api_error" | "server_error" | "timeout_error" => ModelErrorKind::ServerError,
        _ => ModelErrorKind::Unknown,
    }
}

/// The error `type` and `message` of an API error body: `{"error":{"type":…,"message":…}}`
/// (Anthropic, OpenAI, llama.cpp, vLLM) or `{"error":"…"}` (Ollama).
pub(crate) fn error_fields(body: &Value) -> (Option<&str>, Option<&str>) {
    let error = body.get("error").unwrap_or(body);
    if let Some(message) = error.as_str() {
        return (None, Some(message));
    }
    let error_type = error
        .get("type")
        .and_then(Value::as_str)
        .or_else(|| error.get("code").and_then(Value::as_str));
    (error_type, error.get("message").and_then(Value::as_str))
}

/// The error a failed HTTP answer stands for: its kind from the status, its message the API's
/// own where the body carries one.
pub(crate) fn http_error(status: StatusCode, body: &str) -> ModelError {
    let json: Option<Value> = serde_json::from_str(body).ok();
    let message = match json.as_ref().map(error_fields) {
        Some((_, Some(message))) => message.to_string(),
        _ => {
            let text = body.trim();
            if text.is_empty() {
                format!("HTTP {status}")
            } else {
                format!("HTTP {status}: {}", truncate(text, 2000))
            }
        }
    };
    ModelError {
        kind: kind_for_status(status),
        message,
        status: Some(status.as_u16()),
    }
}

fn truncate(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// Whether an answer is an event stream rather than a single JSON body.
pub(crate) fn is_event_stream(resp: &reqwest::Response) -> bool {
    resp.headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().starts_with("text/event-stream"))
}

/// The server-sent events of an answer.
pub(crate) fn events(
    resp: reqwest::Response,
) -> impl Stream<Item = Result<sse_stream::Sse, ModelError>> + Send {
    sse_stream::SseStream::from_bytes_stream(resp.bytes_stream()).map(|r| {
        r.map_err(|e| {
            ModelError::new(
                ModelErrorKind::Unknown,
                format!("the answer's event stream broke off: {}", error_chain(&e)),
            )
        })
    })
}

/// An answer that is not what the API promises.
pub(crate) fn malformed(what: impl std::fmt::Display) -> ModelError {
    ModelError::new(
        ModelErrorKind::Unknown,
        format!("malformed answer from the model API: {what}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_within_jitter_and_caps() {
        let p = RetryPolicy {
            max_attempts: 10,
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(1000),
        };
        for retry in 1..=3u32 {
            let full = 100u64 << (retry - 1);
            let d = p.backoff(retry).as_millis() as u64;
            assert!(d <= full && d >= full * 3 / 4, "retry {retry}: {d} ms");
        }
        assert!(p.backoff(20).as_millis() <= 1000);
        assert!(p.backoff(u32::MAX).as_millis() <= 1000);
    }

    #[test]
    fn retry_after_headers() {
        let mut h = HeaderMap::new();
        assert_eq!(retry_after(&h), None);
        h.insert("retry-after", "2".parse().unwrap());
        assert_eq!(retry_after(&h), Some(Duration::from_secs(2)));
        h.insert("retry-after-ms", "150".parse().unwrap());
        assert_eq!(retry_after(&h), Some(Duration::from_millis(150)));
        let mut h = HeaderMap::new();
        h.insert(
            "retry-after",
            "Wed, 21 Oct 2015 07:28:00 GMT".parse().unwrap(),
        );
        assert_eq!(retry_after(&h), None);
        h.insert("retry-after", "-1".parse().unwrap());
        assert_eq!(retry_after(&h), None);
    }

    #[test]
    fn error_bodies() {
        let e = http_error(
            StatusCode::BAD_REQUEST,
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"bad"}}"#,
        );
        assert_eq!(
            (e.kind, e.message.as_str(), e.status),
            (ModelErrorKind::InvalidRequest, "bad", Some(400))
        );
        let e = http_error(StatusCode::NOT_FOUND, r#"{"error":"model 'x' not found"}"#);
        assert_eq!(e.kind, ModelErrorKind::ModelNotFound);
        assert_eq!(e.message, "model 'x' not found");
        let e = http_error(StatusCode::BAD_GATEWAY, "<html>oops</html>");
        assert_eq!(e.kind, ModelErrorKind::ServerError);
        assert!(e.message.contains("502") && e.message.contains("oops"));
        let e = http_error(StatusCode::from_u16(529).unwrap(), "");
        assert_eq!(e.kind, ModelErrorKind::Overloaded);
        let e = http_error(StatusCode::PAYMENT_REQUIRED, "{}");
        assert_eq!(e.kind, ModelErrorKind::BillingError);
        let e = http_error(StatusCode::FORBIDDEN, "{}");
        assert_eq!(e.kind, ModelErrorKind::AuthenticationFailed);
        assert_eq!(truncate("héllo", 2), "h");
    }

    #[test]
    fn base_urls() {
        assert_eq!(
            base_url("X", "https://api.example.com/").unwrap(),
            "https://api.example.com"
        );
        assert_eq!(
            base_url("X", "http://127.0.0.1:8080/v1").unwrap(),
            "http://127.0.0.1:8080/v1"
        );
        let e = base_url("X_URL", "ftp://x").unwrap_err();
        assert!(e.to_string().contains("X_URL"), "{e}");
        assert!(base_url("X", "not a url").is_err());
    }
}
