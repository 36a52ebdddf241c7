//! The OpenAI-compatible driver against a fake chat completions server.

mod common;

use std::time::Duration;

use common::{Collect, FakeServer, Reply};
use serde_json::{Value, json};
use warden_model::openai::{self, OpenAiDriver};
use warden_model::{
    Block, Message, ModelDriver, ModelErrorKind, ModelRequest, RetryPolicy, Role, StopReason,
    ToolSpec, Usage,
};

fn driver(server: &FakeServer) -> OpenAiDriver {
    OpenAiDriver::new(format!("{}/v1", server.url), None)
        .expect("driver")
        .with_default_model("qwen2.5-coder")
        .with_retry(RetryPolicy {
            max_attempts: 3,
            base_delay: Duration::from_millis(2),
            max_delay: Duration::from_millis(20),
        })
}

fn request(text: &str) -> ModelRequest {
    ModelRequest {
        system: "You are terse.".into(),
        messages: vec![Message::user(text)],
        max_tokens: 128,
        ..Default::default()
    }
}

fn chunk(delta: Value, finish_reason: Option<&str>) -> String {
    json!({
        "id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1,
        "model": "qwen2.5-coder-7b",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}]
    })
    .to_string()
}

fn usage_chunk(prompt: u64, completion: u64) -> String {
    json!({
        "id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1,
        "model": "qwen2.5-coder-7b", "choices": [],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                  "total_tokens": prompt + completion}
    })
    .to_string()
}

fn text_reply(deltas: &[&str]) -> Reply {
    let mut lines = vec![chunk(json!({"role": "assistant", "content": ""}), None)];
    for d in deltas {
        lines.push(chunk(json!({"content": d}), None));
    }
    lines.push(chunk(json!({}), Some("stop")));
    lines.push(usage_chunk(20, 4));
    lines.push("[DONE]".into());
    Reply::data(&lines)
}

#[tokio::test]
async fn streams_text_to_the_sink_and_assembles_it() {
    let server = FakeServer::start(vec![text_reply(&["Hi", " there", "."])]).await;
    let sink = Collect::default();
    let resp = driver(&server)
        .complete(&request("hello"), Some(&sink))
        .await
        .expect("answer");
    assert_eq!(sink.deltas(), vec!["Hi", " there", "."]);
    assert_eq!(resp.content, vec![Block::text("Hi there.")]);
    assert_eq!(resp.stop_reason, StopReason::EndTurn);
    assert_eq!(
        resp.usage,
        Usage {
            input_tokens: 20,
            output_tokens: 4
        }
    );
    assert_eq!(resp.model, "qwen2.5-coder-7b");

    let reqs = server.requests();
    assert_eq!(reqs.len(), 1);
    let r = &reqs[0];
    assert_eq!(
        (r.method.as_str(), r.path.as_str()),
        ("POST", "/v1/chat/completions")
    );
    assert_eq!(r.header("authorization"), None);
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(
        r.body,
        json!({
            "model": "qwen2.5-coder",
            "messages": [
                {"role": "system", "content": "You are terse."},
                {"role": "user", "content": "hello"}
            ],
            "max_tokens": 128,
            "stream": true,
            "stream_options": {"include_usage": true}
        })
    );
}

#[tokio::test]
async fn tool_call_round_trip_with_fragmented_arguments() {
    let first = Reply::data(&[
        chunk(json!({"role": "assistant", "content": "Checking."}), None),
        chunk(
            json!({"tool_calls": [{"index": 0, "id": "call_a", "type": "function",
                                   "function": {"name": "Bash", "arguments": ""}}]}),
            None,
        ),
        chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"comma"}}]}),
            None,
        ),
        chunk(
            json!({"tool_calls": [{"index": 1, "id": "call_b", "type": "function",
                                   "function": {"name": "Read", "arguments": "{\"path\":"}}]}),
            None,
        ),
        chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": "nd\": \"ls\"}"}}]}),
            None,
        ),
        chunk(
            json!({"tool_calls": [{"index": 1, "function": {"arguments": " \"a.txt\"}"}}]}),
            None,
        ),
        chunk(json!({}), Some("tool_calls")),
        "[DONE]".into(),
    ]);
    let server = FakeServer::start(vec![first, text_reply(&["Done."])]).await;
    let driver = driver(&server);
    let mut req = ModelRequest {
        // An Anthropic alias means nothing here: the default model is sent.
        model: "sonnet".into(),
        tools: vec![ToolSpec {
            name: "Bash".into(),
            description: "Runs a command".into(),
            input_schema: json!({"type": "object", "properties": {"command": {"type": "string"}}}),
        }],
        ..request("look around")
    };
    let resp = driver.complete(&req, None).await.expect("first answer");
    assert_eq!(resp.stop_reason, StopReason::ToolUse);
    assert_eq!(
        resp.content,
        vec![
            Block::text("Checking."),
            Block::ToolUse {
                id: "call_a".into(),
                name: "Bash".into(),
                input: json!({"command": "ls"})
            },
            Block::ToolUse {
                id: "call_b".into(),
                name: "Read".into(),
                input: json!({"path": "a.txt"})
            },
        ]
    );

    req.messages.push(Message {
        role: Role::Assistant,
        content: resp.content,
    });
    req.messages.push(Message {
        role: Role::User,
        content: vec![
            Block::ToolResult {
                tool_use_id: "call_a".into(),
                content: "a.txt".into(),
                is_error: false,
            },
            Block::ToolResult {
                tool_use_id: "call_b".into(),
                content: "no such file".into(),
                is_error: true,
            },
        ],
    });
    let resp = driver.complete(&req, None).await.expect("second answer");
    assert_eq!(resp.content, vec![Block::text("Done.")]);

    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    assert_eq!(reqs[0].body["model"], "qwen2.5-coder");
    assert_eq!(
        reqs[0].body["tools"],
        json!([{"type": "function", "function": {
            "name": "Bash",
            "description": "Runs a command",
            "parameters": {"type": "object", "properties": {"command": {"type": "string"}}}
        }}])
    );
    assert_eq!(
        reqs[1].body["messages"],
        json!([
            {"role": "system", "content": "You are terse."},
            {"role": "user", "content": "look around"},
            {"role": "assistant", "content": "Checking.", "tool_calls": [
                {"id": "call_a", "type": "function",
                 "function": {"name": "Bash", "arguments": "{\"command\":\"ls\"}"}},
                {"id": "call_b", "type": "function",
                 "function": {"name": "Read", "arguments": "{\"path\":\"a.txt\"}"}}
            ]},
            {"role": "tool", "tool_call_id": "call_a", "content": "a.txt"},
            {"role": "tool", "tool_call_id": "call_b",
             "content": format!("{}no such file", openai::TOOL_ERROR_PREFIX)}
        ])
    );
}

#[tokio::test]
async fn length_is_max_tokens() {
    let server = FakeServer::start(vec![Reply::data(&[
        chunk(json!({"content": "Once upon"}), None),
        chunk(json!({}), Some("length")),
        "[DONE]".into(),
    ])])
    .await;
    let resp = driver(&server)
        .complete(&request("story"), None)
        .await
        .expect("answer");
    assert_eq!(resp.stop_reason, StopReason::MaxTokens);
    assert_eq!(resp.content, vec![Block::text("Once upon")]);
}

#[tokio::test]
async fn api_errors_map_to_kinds_with_the_servers_message() {
    let server = FakeServer::start(vec![Reply::json(
        400,
        json!({"error": {"code": 400, "type": "invalid_request_error",
                         "message": "the request exceeds the available context size"}}),
    )])
    .await;
    let err = driver(&server)
        .complete(&request("hi"), None)
        .await
        .expect_err("400");
    assert_eq!(err.kind, ModelErrorKind::InvalidRequest);
    assert_eq!(
        err.message,
        "the request exceeds the available context size"
    );
    assert_eq!(err.status, Some(400));
    assert_eq!(server.requests().len(), 1);

    // Ollama's shape: the error is a string.
    let server = FakeServer::start(vec![Reply::json(
        404,
        json!({"error": "model \"qwen2.5-coder\" not found, try pulling it first"}),
    )])
    .await;
    let err = driver(&server)
        .complete(&request("hi"), None)
        .await
        .expect_err("404");
    assert_eq!(err.kind, ModelErrorKind::ModelNotFound);
    assert!(
        err.message.contains("try pulling it first"),
        "{}",
        err.message
    );
}

#[tokio::test]
async fn server_errors_are_retried() {
    let server = FakeServer::start(vec![
        Reply::json(503, json!({"error": {"message": "Loading model", "type": "unavailable_error", "code": 503}})),
        Reply::json(429, json!({"error": {"message": "busy"}})).header("retry-after", "0"),
        text_reply(&["up"]),
    ])
    .await;
    let resp = driver(&server)
        .complete(&request("hi"), None)
        .await
        .expect("answer");
    assert_eq!(resp.content, vec![Block::text("up")]);
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn an_error_chunk_mid_stream_is_a_model_error() {
    let server = FakeServer::start(vec![Reply::data(&[
        chunk(json!({"content": "Part"}), None),
        json!({"error": {"message": "out of memory", "type": "server_error"}}).to_string(),
    ])])
    .await;
    let sink = Collect::default();
    let err = driver(&server)
        .complete(&request("hi"), Some(&sink))
        .await
        .expect_err("error chunk");
    assert_eq!(err.kind, ModelErrorKind::ServerError);
    assert_eq!(err.message, "out of memory");
    assert_eq!(sink.deltas(), vec!["Part"]);
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn the_key_is_sent_as_a_bearer_token() {
    let server = FakeServer::start(vec![text_reply(&["ok"])]).await;
    let driver =
        OpenAiDriver::new(format!("{}/v1/", server.url), Some("sk-local".into())).expect("driver");
    driver.complete(&request("hi"), None).await.expect("answer");
    let reqs = server.requests();
    assert_eq!(reqs[0].header("authorization"), Some("Bearer sk-local"));
    assert_eq!(reqs[0].path, "/v1/chat/completions");
    // No default model and none asked for: the field is left to the server.
    assert_eq!(reqs[0].body.get("model"), None);
}

#[tokio::test]
async fn a_server_that_does_not_stream_is_understood() {
    let server = FakeServer::start(vec![Reply::json(
        200,
        json!({
            "id": "chatcmpl-2", "object": "chat.completion", "model": "llama",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": "whole"}}],
            "usage": {"prompt_tokens": 3, "completion_tokens": 1}
        }),
    )])
    .await;
    let sink = Collect::default();
    let resp = driver(&server)
        .complete(&request("hi"), Some(&sink))
        .await
        .expect("answer");
    assert_eq!(resp.content, vec![Block::text("whole")]);
    assert_eq!(resp.model, "llama");
    assert_eq!(sink.deltas(), vec!["whole"]);
}

#[test]
fn configuration_from_the_environment() {
    let driver = OpenAiDriver::from_env_with(|_| None).expect("defaults");
    assert_eq!(driver.base_url(), openai::DEFAULT_BASE_URL);
    assert_eq!(driver.default_model(), "");
    assert_eq!(driver.name(), "openai");
    assert_eq!(driver.cost_usd("anything", Usage::default()), None);

    let driver = OpenAiDriver::from_env_with(|k| match k {
        "OPENAI_BASE_URL" => Some("http://localhost:11434/v1".into()),
        "OPENAI_API_KEY" => Some("secret".into()),
        "OPENAI_MODEL" => Some("llama3.1".into()),
        _ => None,
    })
    .expect("driver");
    assert_eq!(driver.base_url(), "http://localhost:11434/v1");
    assert_eq!(driver.default_model(), "llama3.1");
    assert!(!format!("{driver:?}").contains("secret"));

    let err = OpenAiDriver::from_env_with(|k| (k == "OPENAI_BASE_URL").then(|| "localhost".into()))
        .expect_err("bad url");
    assert!(err.to_string().contains("OPENAI_BASE_URL"), "{err}");
}
