//! A fake Anthropic Messages API for `warden run`: it answers each request with the next
//! scripted turn as a streamed (SSE) answer and hands every request body to the test. Shared by
//! the test binaries that run `warden run` against `ANTHROPIC_BASE_URL`.

#![allow(dead_code)]

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::sync::mpsc::Receiver;

use serde_json::{Value, json};

/// Serves `turns` (each `{text}` and/or `{tool_use: [{id, name, input}]}`), one per request,
/// on a local port. Returns its base URL and the requests' bodies as they come.
pub fn serve(turns: &[Value]) -> (String, Receiver<Value>) {
    serve_bodies(
        turns
            .iter()
            .enumerate()
            .map(|(n, t)| sse_turn(t, n))
            .collect(),
    )
}

/// Serves each SSE body as a `200` answer, one per request.
pub fn serve_bodies(bodies: Vec<String>) -> (String, Receiver<Value>) {
    serve_responses(bodies.into_iter().map(|b| (200, b)).collect())
}

/// Serves each `(status, body)`, one per request: a `200` body as an event stream, any
/// other as a JSON error.
pub fn serve_responses(replies: Vec<(u16, String)>) -> (String, Receiver<Value>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for (status, body) in replies {
            let Ok((stream, _)) = listener.accept() else {
                return;
            };
            let Ok(read_half) = stream.try_clone() else {
                return;
            };
            let mut reader = BufReader::new(read_half);
            let mut length = 0usize;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap_or(0);
                }
            }
            let mut request = vec![0; length];
            if reader.read_exact(&mut request).is_err() {
                return;
            }
            let _ = tx.send(serde_json::from_slice::<Value>(&request).unwrap_or(Value::Null));
            let kind = if status == 200 {
                "text/event-stream"
            } else {
                "application/json"
            };
            let mut out = stream;
            let _ = write!(
                out,
                "HTTP/1.1 {status} X\r\ncontent-type: {kind}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    (url, rx)
}

/// One scripted turn as the SSE events of a streamed Messages API answer.
pub fn sse_turn(turn: &Value, n: usize) -> String {
    let mut events = vec![
        json!({"type": "message_start", "message": {"id": format!("msg_{n}"),
        "type": "message", "role": "assistant", "model": "claude-sonnet-4-5", "content": [],
        "usage": {"input_tokens": 10, "output_tokens": 0}}}),
    ];
    let mut index = 0;
    if let Some(text) = turn["text"].as_str() {
        events.push(json!({"type": "content_block_start", "index": index,
            "content_block": {"type": "text", "text": ""}}));
        events.push(json!({"type": "content_block_delta", "index": index,
            "delta": {"type": "text_delta", "text": text}}));
        events.push(json!({"type": "content_block_stop", "index": index}));
        index += 1;
    }
    let calls = turn["tool_use"].as_array().cloned().unwrap_or_default();
    for call in &calls {
        events.push(json!({"type": "content_block_start", "index": index,
            "content_block": {"type": "tool_use", "id": call["id"], "name": call["name"], "input": {}}}));
        events.push(json!({"type": "content_block_delta", "index": index,
            "delta": {"type": "input_json_delta", "partial_json": call["input"].to_string()}}));
        events.push(json!({"type": "content_block_stop", "index": index}));
        index += 1;
    }
    let stop = if calls.is_empty() {
        "end_turn"
    } else {
        "tool_use"
    };
    events.push(
        json!({"type": "message_delta", "delta": {"stop_reason": stop},
        "usage": {"output_tokens": 5}}),
    );
    events.push(json!({"type": "message_stop"}));
    events
        .iter()
        .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap_or("")))
        .collect()
}

/// Every text block of a request's messages, in order.
pub fn texts(request: &Value) -> Vec<String> {
    request["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|m| match &m["content"] {
            Value::String(s) => vec![s.clone()],
            Value::Array(blocks) => blocks
                .iter()
                .filter_map(|b| b["text"].as_str().map(str::to_string))
                .collect(),
            _ => Vec::new(),
        })
        .collect()
}
