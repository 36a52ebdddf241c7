//! The legacy HTTP+SSE transport (MCP 2024-11-05), for `"type": "sse"` servers and as the
//! fallback of `http` ones: a `GET` opens an event stream whose first `endpoint` event names
//! the URL to `POST` messages to; answers and notifications arrive as `message` events.
//!
//! The SDK parses the events (`sse-stream`) and runs the protocol; this file only moves
//! messages. The `endpoint` must be on the same origin as the configured URL, so a server
//! cannot make Warden post the session's traffic (and its headers) to another host.

use std::collections::BTreeMap;
use std::time::Duration;

use futures::StreamExt;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use rmcp::service::{RunningService, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::{RoleClient, ServiceExt};
use sse_stream::SseStream;

use super::client::{Handler, http_client};

/// Longest single event accepted from a server.
const MAX_EVENT: usize = 16 * 1024 * 1024;

/// A connected legacy SSE session.
pub(super) struct SseTransport {
    client: reqwest::Client,
    endpoint: reqwest::Url,
    headers: HeaderMap,
    rx: tokio::sync::mpsc::Receiver<RxJsonRpcMessage<RoleClient>>,
    reader: tokio::task::JoinHandle<()>,
}

impl Transport<RoleClient> for SseTransport {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let client = self.client.clone();
        let url = self.endpoint.clone();
        let headers = self.headers.clone();
        async move {
            let body = serde_json::to_vec(&item).map_err(std::io::Error::other)?;
            client
                .post(url)
                .headers(headers)
                .header(CONTENT_TYPE, "application/json")
                .body(body)
                .send()
                .await
                .map_err(std::io::Error::other)?
                .error_for_status()
                .map_err(std::io::Error::other)?;
            Ok(())
        }
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send {
        self.rx.recv()
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.reader.abort();
        std::future::ready(Ok(()))
    }
}

impl Drop for SseTransport {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

fn header_map(headers: &BTreeMap<String, String>) -> Result<HeaderMap, String> {
    let mut map = HeaderMap::new();
    for (k, v) in headers {
        let name =
            HeaderName::from_bytes(k.as_bytes()).map_err(|e| format!("header `{k}`: {e}"))?;
        let value = HeaderValue::from_str(v).map_err(|e| format!("header `{k}`: {e}"))?;
        map.insert(name, value);
    }
    Ok(map)
}

async fn open(url: &str, headers: &BTreeMap<String, String>) -> Result<SseTransport, String> {
    let client = http_client()?;
    let base = reqwest::Url::parse(url).map_err(|e| format!("invalid URL: {e}"))?;
    let headers = header_map(headers)?;
    let resp = client
        .get(base.clone())
        .headers(headers.clone())
        .header(ACCEPT, "text/event-stream")
        .send()
        .await
        .map_err(|e| format!("GET failed: {e}"))?;
    if !resp.status().is_success() {
        return Err(format!("GET answered HTTP {}", resp.status()));
    }
    let is_sse = resp
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    if !is_sse {
        return Err("GET did not answer with an event stream".into());
    }
    let mut events = SseStream::from_bytes_stream(resp.bytes_stream());
    let endpoint = loop {
        match events.next().await {
            Some(Ok(e)) if e.event.as_deref() == Some("endpoint") => {
                let data = e.data.unwrap_or_default();
                let endpoint = base
                    .join(data.trim())
                    .map_err(|err| format!("invalid endpoint `{data}`: {err}"))?;
                if endpoint.origin() != base.origin() {
                    return Err(format!(
                        "the server named an endpoint on another origin ({endpoint}); refused"
                    ));
                }
                break endpoint;
            }
            Some(Ok(_)) => continue,
            Some(Err(e)) => return Err(format!("event stream failed: {e}")),
            None => return Err("the event stream ended before naming an endpoint".into()),
        }
    };
    let (tx, rx) = tokio::sync::mpsc::channel(64);
    let reader = tokio::spawn(async move {
        while let Some(Ok(e)) = events.next().await {
            if !matches!(e.event.as_deref(), None | Some("message")) {
                continue;
            }
            let Some(data) = e.data else { continue };
            if data.len() > MAX_EVENT {
                break;
            }
            // A message that is not JSON-RPC is dropped; the request it answers times out.
            if let Ok(msg) = serde_json::from_str::<RxJsonRpcMessage<RoleClient>>(&data)
                && tx.send(msg).await.is_err()
            {
                break;
            }
        }
    });
    Ok(SseTransport {
        client,
        endpoint,
        headers,
        rx,
        reader,
    })
}

/// Connects to a legacy SSE server at `url` within `startup`.
pub(super) async fn connect(
    handler: Handler,
    url: &str,
    headers: &BTreeMap<String, String>,
    startup: Duration,
) -> Result<RunningService<RoleClient, Handler>, String> {
    let go = async {
        let transport = open(url, headers).await?;
        handler
            .serve(transport)
            .await
            .map_err(|e| format!("initialize failed: {e}"))
    };
    tokio::time::timeout(startup, go).await.unwrap_or_else(|_| {
        Err(format!(
            "no answer within {} ms (MCP_TIMEOUT)",
            startup.as_millis()
        ))
    })
}
