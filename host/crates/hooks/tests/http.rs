//! HTTP hooks against a real server on 127.0.0.1.

mod common;

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use warden_config::Scope;
use warden_hooks::*;

#[derive(Default, Clone)]
struct Seen(Arc<Mutex<Vec<(String, String)>>>);

/// Serves each connection with `status` and `body`, recording the request head and body.
async fn server(status: u16, body: &'static str) -> (String, Seen) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let seen = Seen::default();
    let s2 = seen.clone();
    tokio::spawn(async move {
        loop {
            let Ok((mut sock, _)) = listener.accept().await else {
                return;
            };
            let seen = s2.clone();
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                let (head, len) = loop {
                    let n = sock.read(&mut chunk).await.unwrap_or(0);
                    if n == 0 {
                        return;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                    if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                        let head = String::from_utf8_lossy(&buf[..i]).to_string();
                        let len = head
                            .lines()
                            .find_map(|l| {
                                l.to_ascii_lowercase()
                                    .strip_prefix("content-length:")
                                    .map(|v| v.trim().parse::<usize>().unwrap())
                            })
                            .unwrap_or(0);
                        buf.drain(..i + 4);
                        break (head, len);
                    }
                };
                while buf.len() < len {
                    let n = sock.read(&mut chunk).await.unwrap_or(0);
                    if n == 0 {
                        break;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                }
                seen.0
                    .lock()
                    .unwrap()
                    .push((head, String::from_utf8_lossy(&buf).to_string()));
                let resp = format!(
                    "HTTP/1.1 {status} X\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = sock.write_all(resp.as_bytes()).await;
            });
        }
    });
    (format!("http://{addr}/hook"), seen)
}

fn cfg(settings: Value) -> HookConfig {
    HookConfigBuilder::from_settings(&common::settings(&[(Scope::User, settings)])).build()
}

#[tokio::test]
async fn posts_input_json_and_applies_the_decision() {
    let (url, seen) = server(200, r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"remote"}}"#).await;
    let c = cfg(json!({
        "httpHookAllowedEnvVars": ["TOKEN", "OTHER"],
        "hooks": {"PreToolUse": [{"hooks": [{
            "type": "http", "url": url,
            "headers": {"Authorization": "Bearer $TOKEN", "X-Other": "${OTHER}-${SECRET}", "X-Not-Listed": "$HIDDEN"},
            "allowedEnvVars": ["TOKEN", "SECRET", "HIDDEN2"]
        }]}]}
    }));
    let dir = tempfile::tempdir().unwrap();
    let mut o = common::opts(dir.path());
    let env = o.env.as_mut().unwrap();
    for (k, v) in [
        ("TOKEN", "t0k"),
        ("OTHER", "o"),
        ("SECRET", "s"),
        ("HIDDEN", "h"),
    ] {
        env.insert(k.into(), v.into());
    }
    let input = common::pre_tool("Bash", json!({"command": "ls"}));
    let r = dispatch(Event::PreToolUse, &input, &c, &o).await;
    let v = r.merged.permission_verdict();
    assert_eq!(
        (v.decision, v.reason.as_deref()),
        (Some(HookVerdict::Decided(Decision::Deny)), Some("remote"))
    );
    let (head, body) = seen.0.lock().unwrap()[0].clone();
    assert!(head.starts_with("POST /hook HTTP/1.1"));
    let lower = head.to_ascii_lowercase();
    assert!(lower.contains("content-type: application/json"));
    assert!(head.contains("Bearer t0k"), "{head}");
    // OTHER is allowed globally but not by the hook; SECRET by the hook but not globally.
    assert!(
        lower.contains("x-other: -\r\n") || lower.ends_with("x-other: -"),
        "{head}"
    );
    assert!(
        lower.contains("x-not-listed: \r\n")
            || lower.ends_with("x-not-listed: ")
            || lower.contains("x-not-listed:\r\n"),
        "{head}"
    );
    assert_eq!(body, input.to_string());
}

async fn outcome_for(status: u16, body: &'static str) -> Outcome {
    let (url, _) = server(status, body).await;
    let c = cfg(json!({"hooks": {"PreToolUse": [{"hooks": [{"type": "http", "url": url}]}]}}));
    let dir = tempfile::tempdir().unwrap();
    let r = dispatch(
        Event::PreToolUse,
        &common::pre_tool("Bash", json!({})),
        &c,
        &common::opts(dir.path()),
    )
    .await;
    r.handlers[0].result.outcome.clone()
}

#[tokio::test]
async fn response_handling_rows() {
    assert_eq!(outcome_for(200, "").await, Outcome::Success, "2xx empty");
    assert_eq!(outcome_for(204, "").await, Outcome::Success);
    assert!(
        matches!(
            outcome_for(200, "plain words").await,
            Outcome::NonBlockingError { .. }
        ),
        "2xx other body"
    );
    assert!(
        matches!(
            outcome_for(200, r#"{"continue": "x"}"#).await,
            Outcome::NonBlockingError { .. }
        ),
        "2xx invalid JSON schema"
    );
    assert!(
        matches!(outcome_for(500, "").await, Outcome::NonBlockingError { .. }),
        "non-2xx"
    );
    assert!(
        matches!(
            outcome_for(403, r#"{"decision":"block"}"#).await,
            Outcome::NonBlockingError { .. }
        ),
        "status alone cannot block"
    );
}

#[tokio::test]
async fn timeout_cancels_without_decision() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/slow", listener.local_addr().unwrap());
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((s, _)) = listener.accept().await {
            held.push(s);
        }
    });
    let c = cfg(
        json!({"hooks": {"PreToolUse": [{"hooks": [{"type": "http", "url": url, "timeout": 0.5}]}]}}),
    );
    let dir = tempfile::tempdir().unwrap();
    let r = dispatch(
        Event::PreToolUse,
        &common::pre_tool("Bash", json!({})),
        &c,
        &common::opts(dir.path()),
    )
    .await;
    assert_eq!(r.handlers[0].result.outcome, Outcome::Cancelled);
    assert!(!r.merged.blocked);
}

#[tokio::test]
async fn disallowed_url_never_gets_a_request() {
    let (url, seen) = server(200, "").await;
    let c = cfg(
        json!({"allowedHttpHookUrls": ["https://only.example/*"], "hooks": {"PreToolUse": [{"hooks": [{"type": "http", "url": url}]}]}}),
    );
    assert!(c.is_empty());
    let dir = tempfile::tempdir().unwrap();
    dispatch(
        Event::PreToolUse,
        &common::pre_tool("Bash", json!({})),
        &c,
        &common::opts(dir.path()),
    )
    .await;
    assert!(seen.0.lock().unwrap().is_empty());
}
