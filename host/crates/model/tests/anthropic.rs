//! The Anthropic driver against a fake Messages API.

mod common;

use std::time::Duration;

use common::{Collect, FakeServer, Reply, closed_port_url};
use serde_json::{Value, json};
use warden_model::anthropic::{self, AnthropicDriver};
use warden_model::{
    Block, Message, ModelDriver, ModelErrorKind, ModelRequest, RetryPolicy, Role, StopReason,
    ToolSpec, Usage,
};

fn fast_retry(max_attempts: u32) -> RetryPolicy {
    RetryPolicy {
        max_attempts,
        base_delay: Duration::from_millis(2),
        max_delay: Duration::from_millis(20),
    }
}

fn driver(server: &FakeServer) -> AnthropicDriver {
    AnthropicDriver::new("sk-test", &server.url)
        .expect("driver")
        .with_retry(fast_retry(4))
}

fn request(text: &str) -> ModelRequest {
    ModelRequest {
        system: "You are terse.".into(),
        messages: vec![Message::user(text)],
        max_tokens: 256,
        ..Default::default()
    }
}

fn message_start(model: &str, input_tokens: u64) -> (&'static str, Value) {
    (
        "message_start",
        json!({"type": "message_start", "message": {
            "id": "msg_1", "type": "message", "role": "assistant", "model": model,
            "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": input_tokens, "output_tokens": 1}
        }}),
    )
}

fn text_block(index: usize, deltas: &[&str]) -> Vec<(&'static str, Value)> {
    let mut out = vec![(
        "content_block_start",
        json!({"type": "content_block_start", "index": index,
               "content_block": {"type": "text", "text": ""}}),
    )];
    for d in deltas {
        out.push((
            "content_block_delta",
            json!({"type": "content_block_delta", "index": index,
                   "delta": {"type": "text_delta", "text": d}}),
        ));
    }
    out.push((
        "content_block_stop",
        json!({"type": "content_block_stop", "index": index}),
    ));
    out
}

fn message_end(stop_reason: &str, output_tokens: u64) -> Vec<(&'static str, Value)> {
    vec![
        (
            "message_delta",
            json!({"type": "message_delta",
                   "delta": {"stop_reason": stop_reason, "stop_sequence": null},
                   "usage": {"output_tokens": output_tokens}}),
        ),
        ("message_stop", json!({"type": "message_stop"})),
    ]
}

fn text_reply(deltas: &[&str]) -> Reply {
    let mut events = vec![
        message_start("claude-sonnet-4-6", 12),
        ("ping", json!({"type": "ping"})),
    ];
    events.extend(text_block(0, deltas));
    events.extend(message_end("end_turn", 7));
    Reply::events(&events)
}

fn api_error(status: u16, error_type: &str, message: &str) -> Reply {
    Reply::json(
        status,
        json!({"type": "error", "error": {"type": error_type, "message": message}}),
    )
}

#[tokio::test]
async fn streams_text_to_the_sink_and_assembles_it() {
    let server = FakeServer::start(vec![text_reply(&["Hel", "lo, ", "world."])]).await;
    let driver = driver(&server);
    let sink = Collect::default();
    let resp = driver
        .complete(&request("hi"), Some(&sink))
        .await
        .expect("answer");

    assert_eq!(sink.deltas(), vec!["Hel", "lo, ", "world."]);
    assert_eq!(resp.content, vec![Block::text("Hello, world.")]);
    assert_eq!(resp.stop_reason, StopReason::EndTurn);
    assert_eq!(
        resp.usage,
        Usage {
            input_tokens: 12,
            output_tokens: 7
        }
    );
    assert_eq!(resp.model, "claude-sonnet-4-6");

    let reqs = server.requests();
    assert_eq!(reqs.len(), 1);
    let r = &reqs[0];
    assert_eq!(
        (r.method.as_str(), r.path.as_str()),
        ("POST", "/v1/messages")
    );
    assert_eq!(r.header("x-api-key"), Some("sk-test"));
    assert_eq!(r.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(
        r.body,
        json!({
            "model": "claude-sonnet-4-6",
            "max_tokens": 256,
            "system": "You are terse.",
            "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
            "stream": true
        })
    );
}

#[tokio::test]
async fn without_a_sink_the_text_is_still_assembled() {
    let server = FakeServer::start(vec![text_reply(&["a", "b"])]).await;
    let resp = driver(&server)
        .complete(&request("hi"), None)
        .await
        .expect("answer");
    assert_eq!(resp.content, vec![Block::text("ab")]);
}

#[tokio::test]
async fn an_event_split_across_reads_is_reassembled() {
    let mut text = String::new();
    let mut events = vec![message_start("claude-haiku-4-5", 3)];
    events.extend(text_block(0, &["split"]));
    events.extend(message_end("end_turn", 1));
    for (name, data) in events {
        text.push_str(&format!("event: {name}\ndata: {data}\n\n"));
    }
    // Frames that cut lines and events anywhere.
    let chunks: Vec<String> = text
        .as_bytes()
        .chunks(7)
        .map(|c| String::from_utf8(c.to_vec()).unwrap())
        .collect();
    let server = FakeServer::start(vec![Reply::sse(chunks)]).await;
    let resp = driver(&server)
        .complete(&request("hi"), None)
        .await
        .expect("answer");
    assert_eq!(resp.content, vec![Block::text("split")]);
    assert_eq!(resp.model, "claude-haiku-4-5");
}

#[tokio::test]
async fn tool_use_round_trip() {
    let mut first = vec![message_start("claude-sonnet-4-6", 40)];
    first.extend(text_block(0, &["Let me look."]));
    first.push((
        "content_block_start",
        json!({"type": "content_block_start", "index": 1, "content_block":
               {"type": "tool_use", "id": "toolu_01", "name": "Bash", "input": {}}}),
    ));
    for fragment in ["", "{\"comm", "and\": \"ls", " -la\", \"timeout\"", ": 5}"] {
        first.push((
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 1,
                   "delta": {"type": "input_json_delta", "partial_json": fragment}}),
        ));
    }
    first.push((
        "content_block_stop",
        json!({"type": "content_block_stop", "index": 1}),
    ));
    first.extend(message_end("tool_use", 30));

    let server = FakeServer::start(vec![Reply::events(&first), text_reply(&["Two files."])]).await;
    let driver = driver(&server);
    let tools = vec![ToolSpec {
        name: "Bash".into(),
        description: "Runs a command".into(),
        input_schema: json!({"type": "object", "properties": {"command": {"type": "string"}}}),
    }];
    let mut req = ModelRequest {
        model: "opus".into(),
        tools: tools.clone(),
        ..request("list files")
    };
    let resp = driver.complete(&req, None).await.expect("first answer");
    assert_eq!(resp.stop_reason, StopReason::ToolUse);
    assert_eq!(
        resp.content,
        vec![
            Block::text("Let me look."),
            Block::ToolUse {
                id: "toolu_01".into(),
                name: "Bash".into(),
                input: json!({"command": "ls -la", "timeout": 5}),
            }
        ]
    );

    req.messages.push(Message {
        role: Role::Assistant,
        content: resp.content.clone(),
    });
    req.messages.push(Message {
        role: Role::User,
        content: vec![
            Block::ToolResult {
                tool_use_id: "toolu_01".into(),
                content: "a\nb".into(),
                is_error: false,
            },
            Block::ToolResult {
                tool_use_id: "toolu_02".into(),
                content: "permission denied".into(),
                is_error: true,
            },
        ],
    });
    let resp = driver.complete(&req, None).await.expect("second answer");
    assert_eq!(resp.content, vec![Block::text("Two files.")]);
    assert_eq!(resp.stop_reason, StopReason::EndTurn);

    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    assert_eq!(reqs[0].body["model"], "claude-opus-4-6");
    assert_eq!(
        reqs[0].body["tools"],
        json!([{
            "name": "Bash",
            "description": "Runs a command",
            "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}}
        }])
    );
    assert_eq!(
        reqs[1].body["messages"],
        json!([
            {"role": "user", "content": [{"type": "text", "text": "list files"}]},
            {"role": "assistant", "content": [
                {"type": "text", "text": "Let me look."},
                {"type": "tool_use", "id": "toolu_01", "name": "Bash",
                 "input": {"command": "ls -la", "timeout": 5}}
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_01", "content": "a\nb"},
                {"type": "tool_result", "tool_use_id": "toolu_02",
                 "content": "permission denied", "is_error": true}
            ]}
        ])
    );
}

#[tokio::test]
async fn retries_rate_limit_and_overload_then_succeeds() {
    let server = FakeServer::start(vec![
        api_error(
            429,
            "rate_limit_error",
            "Number of requests has exceeded your rate limit",
        )
        .header("retry-after", "0"),
        api_error(529, "overloaded_error", "Overloaded"),
        text_reply(&["finally"]),
    ])
    .await;
    let resp = driver(&server)
        .complete(&request("hi"), None)
        .await
        .expect("answer after retries");
    assert_eq!(resp.content, vec![Block::text("finally")]);
    let reqs = server.requests();
    assert_eq!(reqs.len(), 3);
    // The same request each time.
    assert!(reqs.iter().all(|r| r.body == reqs[0].body));
}

#[tokio::test]
async fn gives_up_after_max_attempts_with_the_last_error() {
    let server = FakeServer::start(vec![
        api_error(500, "api_error", "Internal server error"),
        api_error(529, "overloaded_error", "Overloaded"),
        text_reply(&["never sent"]),
    ])
    .await;
    let driver = driver(&server).with_retry(fast_retry(2));
    let err = driver
        .complete(&request("hi"), None)
        .await
        .expect_err("gives up");
    assert_eq!(err.kind, ModelErrorKind::Overloaded);
    assert_eq!(err.status, Some(529));
    assert_eq!(err.message, "Overloaded");
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn invalid_request_is_not_retried() {
    let server = FakeServer::start(vec![
        api_error(400, "invalid_request_error", "messages: field required"),
        text_reply(&["never sent"]),
    ])
    .await;
    let err = driver(&server)
        .complete(&request("hi"), None)
        .await
        .expect_err("400");
    assert_eq!(err.kind, ModelErrorKind::InvalidRequest);
    assert_eq!(err.message, "messages: field required");
    assert_eq!(err.status, Some(400));
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn authentication_failure() {
    let server = FakeServer::start(vec![api_error(
        401,
        "authentication_error",
        "invalid x-api-key",
    )])
    .await;
    let err = driver(&server)
        .complete(&request("hi"), None)
        .await
        .expect_err("401");
    assert_eq!(err.kind, ModelErrorKind::AuthenticationFailed);
    assert_eq!(err.kind.as_str(), "authentication_failed");
    assert_eq!(err.message, "invalid x-api-key");
    assert_eq!(err.status, Some(401));
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn other_statuses_map_to_their_kinds() {
    let cases = [
        (402, "billing_error", ModelErrorKind::BillingError),
        (
            403,
            "permission_error",
            ModelErrorKind::AuthenticationFailed,
        ),
        (404, "not_found_error", ModelErrorKind::ModelNotFound),
    ];
    for (status, error_type, kind) in cases {
        let server = FakeServer::start(vec![api_error(status, error_type, "nope")]).await;
        let err = driver(&server)
            .complete(&request("hi"), None)
            .await
            .expect_err("error");
        assert_eq!((err.kind, err.status), (kind, Some(status)), "{status}");
        assert_eq!(server.requests().len(), 1);
    }
}

#[tokio::test]
async fn an_error_event_mid_stream_is_a_model_error() {
    let mut events = vec![message_start("claude-sonnet-4-6", 5)];
    events.push((
        "content_block_start",
        json!({"type": "content_block_start", "index": 0,
               "content_block": {"type": "text", "text": ""}}),
    ));
    events.push((
        "content_block_delta",
        json!({"type": "content_block_delta", "index": 0,
               "delta": {"type": "text_delta", "text": "Partial"}}),
    ));
    events.push((
        "error",
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
    ));
    let server = FakeServer::start(vec![Reply::events(&events), text_reply(&["x"])]).await;
    let sink = Collect::default();
    let err = driver(&server)
        .complete(&request("hi"), Some(&sink))
        .await
        .expect_err("error event");
    assert_eq!(err.kind, ModelErrorKind::Overloaded);
    assert_eq!(err.message, "Overloaded");
    assert_eq!(sink.deltas(), vec!["Partial"]);
    // Text already reached the sink: sending again would repeat it.
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn a_stream_cut_before_message_stop_is_an_error() {
    let mut events = vec![message_start("claude-sonnet-4-6", 5)];
    events.extend(text_block(0, &["half"]));
    let server = FakeServer::start(vec![Reply::events(&events)]).await;
    let err = driver(&server)
        .complete(&request("hi"), None)
        .await
        .expect_err("cut");
    assert_eq!(err.kind, ModelErrorKind::Unknown);
    assert!(err.message.contains("message_stop"), "{}", err.message);
}

#[tokio::test]
async fn max_tokens_is_a_stop_reason_not_an_error() {
    let mut events = vec![message_start("claude-sonnet-4-6", 5)];
    events.extend(text_block(0, &["It was the best of"]));
    events.extend(message_end("max_tokens", 5));
    let server = FakeServer::start(vec![Reply::events(&events)]).await;
    let resp = driver(&server)
        .complete(&request("hi"), None)
        .await
        .expect("answer");
    assert_eq!(resp.stop_reason, StopReason::MaxTokens);
    assert_eq!(resp.content, vec![Block::text("It was the best of")]);
}

#[tokio::test]
async fn connection_failures_are_retried_then_reported() {
    let url = closed_port_url().await;
    let driver = AnthropicDriver::new("sk-test", &url)
        .unwrap()
        .with_retry(fast_retry(3));
    let err = driver
        .complete(&request("hi"), None)
        .await
        .expect_err("refused");
    assert_eq!(err.kind, ModelErrorKind::Unknown);
    assert_eq!(err.status, None);
    assert!(err.message.contains(&url), "{}", err.message);
    assert!(err.message.contains("after 3 attempts"), "{}", err.message);
}

#[test]
fn missing_key_names_the_variable() {
    let err = AnthropicDriver::from_env_with(|_| None).expect_err("no key");
    assert!(err.to_string().contains("ANTHROPIC_API_KEY"), "{err}");
    let err = AnthropicDriver::from_env_with(|k| (k == "ANTHROPIC_API_KEY").then(String::new))
        .expect_err("empty key");
    assert!(err.to_string().contains("ANTHROPIC_API_KEY"), "{err}");
}

#[test]
fn configuration_from_the_environment() {
    let env = |k: &str| match k {
        "ANTHROPIC_API_KEY" => Some("sk-x".to_string()),
        "ANTHROPIC_BASE_URL" => Some("http://127.0.0.1:9/".to_string()),
        "ANTHROPIC_MODEL" => Some("haiku".to_string()),
        _ => None,
    };
    let driver = AnthropicDriver::from_env_with(env).expect("driver");
    assert_eq!(driver.base_url(), "http://127.0.0.1:9");
    assert_eq!(driver.default_model(), "claude-haiku-4-5");
    assert_eq!(driver.name(), "anthropic");
    assert_eq!(driver.retry_policy(), RetryPolicy::default());
    assert!(!format!("{driver:?}").contains("sk-x"));

    let driver = AnthropicDriver::from_env_with(|k| (k == "ANTHROPIC_API_KEY").then(|| "k".into()))
        .expect("defaults");
    assert_eq!(driver.base_url(), anthropic::DEFAULT_BASE_URL);
    assert_eq!(driver.default_model(), anthropic::DEFAULT_MODEL);

    let err = AnthropicDriver::from_env_with(|k| match k {
        "ANTHROPIC_API_KEY" => Some("k".into()),
        "ANTHROPIC_BASE_URL" => Some("api.anthropic.com".into()),
        _ => None,
    })
    .expect_err("bad url");
    assert!(err.to_string().contains("ANTHROPIC_BASE_URL"), "{err}");
}

#[test]
fn cost_is_priced_by_model_family() {
    let driver = AnthropicDriver::new("k", anthropic::DEFAULT_BASE_URL).unwrap();
    let usage = Usage {
        input_tokens: 1_000_000,
        output_tokens: 100_000,
    };
    assert_eq!(driver.cost_usd("sonnet", usage), Some(4.5));
    assert_eq!(driver.cost_usd("claude-haiku-4-5", usage), Some(1.5));
    assert_eq!(driver.cost_usd("claude-opus-4-6", usage), Some(7.5));
    assert_eq!(driver.cost_usd("", usage), Some(4.5));
    assert_eq!(driver.cost_usd("llama-3", usage), None);
}

#[tokio::test]
async fn retry_after_is_honoured() {
    let server = FakeServer::start(vec![
        api_error(429, "rate_limit_error", "slow down").header("retry-after", "1"),
        text_reply(&["ok"]),
    ])
    .await;
    let driver = driver(&server).with_retry(RetryPolicy {
        max_attempts: 2,
        base_delay: Duration::from_millis(1),
        max_delay: Duration::from_secs(5),
    });
    let started = std::time::Instant::now();
    driver.complete(&request("hi"), None).await.expect("answer");
    assert!(
        started.elapsed() >= Duration::from_millis(950),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(server.requests().len(), 2);
}
