//! A fake model API on 127.0.0.1: it records each request and answers with the next scripted
//! reply.

#![allow(dead_code)]

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::{Bytes, Frame, Incoming};
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use serde_json::Value;
use tokio::net::TcpListener;
use warden_model::StreamSink;

/// A request as the server saw it.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Value,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// One scripted answer.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    /// Written as separate body frames.
    pub chunks: Vec<String>,
}

impl Reply {
    /// A JSON body.
    pub fn json(status: u16, body: Value) -> Reply {
        Reply {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            chunks: vec![body.to_string()],
        }
    }

    /// An event stream of named events (`event:` + `data:`), one frame each.
    pub fn events(events: &[(&str, Value)]) -> Reply {
        Reply::sse(
            events
                .iter()
                .map(|(name, data)| format!("event: {name}\ndata: {data}\n\n"))
                .collect(),
        )
    }

    /// An event stream of unnamed `data:` lines, one frame each.
    pub fn data(lines: &[String]) -> Reply {
        Reply::sse(lines.iter().map(|d| format!("data: {d}\n\n")).collect())
    }

    /// An event stream of raw frames.
    pub fn sse(chunks: Vec<String>) -> Reply {
        Reply {
            status: 200,
            headers: vec![("content-type".into(), "text/event-stream".into())],
            chunks,
        }
    }

    pub fn header(mut self, name: &str, value: &str) -> Reply {
        self.headers.push((name.into(), value.into()));
        self
    }
}

#[derive(Default)]
struct State {
    replies: VecDeque<Reply>,
    requests: Vec<Recorded>,
}

/// The server; it stops with the test's runtime.
pub struct FakeServer {
    pub url: String,
    state: Arc<Mutex<State>>,
}

impl FakeServer {
    /// Listens on a free port and answers with `replies` in order, then with 500.
    pub async fn start(replies: Vec<Reply>) -> FakeServer {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let url = format!("http://{}", listener.local_addr().expect("addr"));
        let state = Arc::new(Mutex::new(State {
            replies: replies.into(),
            requests: Vec::new(),
        }));
        let shared = state.clone();
        tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                let state = shared.clone();
                tokio::spawn(async move {
                    let service = service_fn(move |req| answer(req, state.clone()));
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        FakeServer { url, state }
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.state.lock().unwrap().requests.clone()
    }
}

async fn answer(
    req: Request<Incoming>,
    state: Arc<Mutex<State>>,
) -> Result<Response<BoxBody<Bytes, Infallible>>, Infallible> {
    let method = req.method().to_string();
    let path = req.uri().path().to_string();
    let headers = req
        .headers()
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_str().unwrap_or_default().to_string()))
        .collect();
    let bytes = req
        .into_body()
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    let reply = {
        let mut state = state.lock().unwrap();
        state.requests.push(Recorded {
            method,
            path,
            headers,
            body,
        });
        state.replies.pop_front()
    };
    let reply = reply.unwrap_or_else(|| {
        Reply::json(
            500,
            serde_json::json!({"error": {"type": "api_error", "message": "no scripted reply left"}}),
        )
    });
    let mut builder = Response::builder().status(reply.status);
    for (k, v) in &reply.headers {
        builder = builder.header(k, v);
    }
    let body = if reply.chunks.len() == 1 {
        Full::new(Bytes::from(reply.chunks[0].clone())).boxed()
    } else {
        let frames = reply
            .chunks
            .into_iter()
            .map(|c| Ok::<_, Infallible>(Frame::data(Bytes::from(c))));
        StreamBody::new(futures::stream::iter(frames)).boxed()
    };
    Ok(builder.body(body).expect("response"))
}

/// A sink that keeps every delta.
#[derive(Default)]
pub struct Collect(pub Mutex<Vec<String>>);

impl Collect {
    pub fn deltas(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
}

impl StreamSink for Collect {
    fn text_delta(&self, text: &str) {
        self.0.lock().unwrap().push(text.to_string());
    }
}

/// An address nothing listens on.
pub async fn closed_port_url() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    drop(listener);
    format!("http://{addr}")
}
