//! One connection to one MCP server, through the official SDK (`rmcp`).
//!
//! * **stdio**: the server is spawned in a process group of its own (so `npx`, `uvx` and the
//!   node or python they start all end together), with its stderr captured (the last
//!   [`STDERR_TAIL`] bytes are kept for `warden mcp list` and connection errors), and the whole
//!   group is killed when the connection is dropped or shut down.
//! * **http**: streamable HTTP; when the server refuses it, the legacy HTTP+SSE transport is
//!   tried on the same URL (the MCP specification's backwards-compatibility advice).
//! * **sse**: the legacy HTTP+SSE transport ([`super::sse`]).
//!
//! Startup is bounded by `MCP_TIMEOUT` (milliseconds, default 30 s), each tool call by the
//! server's `timeout` or `MCP_TOOL_TIMEOUT` (default: none beyond the caller's own). A server
//! that announces `notifications/tools/list_changed` has its list fetched again.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, ContentBlock,
    Implementation, Tool,
};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::transport::streamable_http_client::{
    StreamableHttpClientTransport, StreamableHttpClientTransportConfig,
};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use tokio::io::AsyncReadExt;
use warden_config::mcp::{ServerSpec, Transport};

use crate::session::processes::{ProcessGuard, ProcessOrigin, ProcessProfiles};

/// Bytes of a stdio server's stderr kept for diagnostics.
pub const STDERR_TAIL: usize = 16 * 1024;
/// Startup budget when `MCP_TIMEOUT` is unset (Claude Code's default).
pub const DEFAULT_STARTUP: Duration = Duration::from_secs(30);
/// Longest text a tool result may hand the model, as Claude Code caps MCP output at 25,000
/// tokens (about four characters each).
pub const MAX_RESULT_CHARS: usize = 100_000;

/// `MCP_TIMEOUT`, milliseconds.
pub fn startup_timeout() -> Duration {
    env_millis("MCP_TIMEOUT").unwrap_or(DEFAULT_STARTUP)
}

/// `MCP_TOOL_TIMEOUT`, milliseconds.
pub fn tool_timeout_from_env() -> Option<Duration> {
    env_millis("MCP_TOOL_TIMEOUT")
}

fn env_millis(var: &str) -> Option<Duration> {
    std::env::var(var)
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|ms| *ms > 0)
        .map(Duration::from_millis)
}

/// Why a server could not be reached or a call failed.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{0}")]
pub struct McpError(pub String);

/// The last bytes a stdio server wrote on stderr.
#[derive(Debug, Default)]
pub struct StderrTail(Vec<u8>);

impl StderrTail {
    fn push(&mut self, bytes: &[u8]) {
        self.0.extend_from_slice(bytes);
        if self.0.len() > STDERR_TAIL {
            let cut = self.0.len() - STDERR_TAIL;
            self.0.drain(..cut);
        }
    }

    /// The kept text.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.0).into_owned()
    }
}

/// Receives what a server tells Warden unasked: a changed tool list.
#[derive(Clone)]
pub(super) struct Handler {
    tools: Arc<RwLock<Vec<Tool>>>,
}

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("warden", env!("CARGO_PKG_VERSION")),
        )
    }

    async fn on_tool_list_changed(&self, context: NotificationContext<RoleClient>) {
        if let Ok(list) = context.peer.list_all_tools().await
            && let Ok(mut tools) = self.tools.write()
        {
            *tools = list;
        }
    }
}

/// A live connection.
pub struct Connection {
    service: tokio::sync::Mutex<Option<RunningService<RoleClient, Handler>>>,
    peer: rmcp::Peer<RoleClient>,
    tools: Arc<RwLock<Vec<Tool>>>,
    stderr: Arc<Mutex<StderrTail>>,
    /// Process group of a stdio server (with `guard`: its supervisor's pid).
    pgid: Option<i32>,
    /// The confinement of a confined stdio server, until it has ended.
    guard: Mutex<Option<ProcessGuard>>,
    /// `serverInfo` of its `initialize` answer.
    pub server_info: Option<Implementation>,
    /// Per-call limit (the entry's `timeout`, else `MCP_TOOL_TIMEOUT`).
    pub tool_timeout: Option<Duration>,
    /// `stdio`, `http`, `sse`: what it is connected by.
    pub transport: &'static str,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("transport", &self.transport)
            .field("pgid", &self.pgid)
            .finish_non_exhaustive()
    }
}

/// How a stdio server is started: in `cwd`, with `CLAUDE_PROJECT_DIR` set as Claude Code does.
#[derive(Debug, Clone)]
pub struct SpawnContext<'a> {
    /// The directory the server starts in.
    pub cwd: &'a Path,
    /// `CLAUDE_PROJECT_DIR`.
    pub project_dir: &'a Path,
    /// Confines the server (a plugin's, or a project's `.mcp.json`), for the whole session.
    pub confine: Option<(&'a ProcessProfiles, ProcessOrigin)>,
}

impl Connection {
    /// Connects to `spec` within `startup` (initialize, then the first `tools/list`).
    pub async fn connect(
        spec: &ServerSpec,
        ctx: &SpawnContext<'_>,
        startup: Duration,
    ) -> Result<Connection, McpError> {
        let tools = Arc::new(RwLock::new(Vec::new()));
        let handler = Handler {
            tools: tools.clone(),
        };
        let stderr = Arc::new(Mutex::new(StderrTail::default()));
        let tool_timeout = spec.timeout.or_else(tool_timeout_from_env);
        let name = &spec.name;
        let mut guard = None;
        let (service, pgid, transport) = match &spec.transport {
            Transport::Stdio { command, args, env } => {
                let explainer = ctx.confine.as_ref().map(|(p, o)| p.explainer(o));
                let (service, pgid, g) =
                    connect_stdio(handler, command, args, env, ctx, &stderr, startup)
                        .await
                        .map_err(|e| {
                            let tail = stderr.lock().map(|t| t.text()).unwrap_or_default();
                            let tail = tail.trim();
                            let mut msg = if tail.is_empty() {
                                format!("MCP server `{name}`: {e}")
                            } else {
                                format!(
                                    "MCP server `{name}`: {e}\n  its stderr ends:\n{}",
                                    indent(last_lines(tail, 8))
                                )
                            };
                            for line in explainer.iter().flat_map(|x| x.explain(tail)) {
                                msg.push_str("\n  ");
                                msg.push_str(&line);
                            }
                            McpError(msg)
                        })?;
                guard = g;
                (service, Some(pgid), "stdio")
            }
            Transport::Http { url, headers } => {
                match connect_http(handler.clone(), url, headers, startup).await {
                    Ok(s) => (s, None, "http"),
                    Err(http_err) => {
                        match super::sse::connect(handler, url, headers, startup).await {
                            Ok(s) => (s, None, "sse"),
                            Err(sse_err) => {
                                return Err(McpError(format!(
                                    "MCP server `{name}` ({url}): streamable HTTP failed: {http_err}; the legacy SSE transport failed too: {sse_err}"
                                )));
                            }
                        }
                    }
                }
            }
            Transport::Sse { url, headers } => (
                super::sse::connect(handler, url, headers, startup)
                    .await
                    .map_err(|e| McpError(format!("MCP server `{name}` ({url}): {e}")))?,
                None,
                "sse",
            ),
            Transport::Ws { url, .. } => {
                return Err(McpError(format!(
                    "MCP server `{name}` ({url}): the WebSocket transport is not supported; use http or sse"
                )));
            }
        };
        let peer = service.peer().clone();
        let server_info = service.peer_info().and_then(|i| i.server_info.clone());
        let conn = Connection {
            service: tokio::sync::Mutex::new(Some(service)),
            peer,
            tools,
            stderr,
            pgid,
            guard: Mutex::new(guard),
            server_info,
            tool_timeout,
            transport,
        };
        let listed = tokio::time::timeout(startup, conn.peer.list_all_tools())
            .await
            .map_err(|_| McpError(format!("MCP server `{name}`: tools/list timed out")))?
            .map_err(|e| McpError(format!("MCP server `{name}`: tools/list failed: {e}")))?;
        if let Ok(mut t) = conn.tools.write() {
            *t = listed;
        }
        Ok(conn)
    }

    /// The server's tools, as last listed.
    pub fn tools(&self) -> Vec<Tool> {
        self.tools.read().map(|t| t.clone()).unwrap_or_default()
    }

    /// What the server wrote on stderr lately (stdio servers), followed by what the sandbox
    /// refused it, when its stderr shows a refusal.
    pub fn stderr_tail(&self) -> String {
        let mut text = self.stderr.lock().map(|t| t.text()).unwrap_or_default();
        let notes = self
            .guard
            .lock()
            .ok()
            .and_then(|g| g.as_ref().map(|g| g.explainer().explain(&text)))
            .unwrap_or_default();
        for line in notes {
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(&line);
            text.push('\n');
        }
        text
    }

    /// Calls `tool` with `arguments`, bounded by `limit` and the server's own per-call limit.
    pub async fn call(
        &self,
        tool: &str,
        arguments: serde_json::Map<String, serde_json::Value>,
        limit: Option<Duration>,
    ) -> Result<CallToolResult, McpError> {
        let params = CallToolRequestParams::new(tool.to_string()).with_arguments(arguments);
        let limit = match (limit, self.tool_timeout) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let call = self.peer.call_tool(params);
        let result = match limit {
            Some(d) => tokio::time::timeout(d, call)
                .await
                .map_err(|_| McpError(format!("{tool} timed out after {} ms", d.as_millis())))?,
            None => call.await,
        };
        result.map_err(|e| McpError(format!("{tool}: {e}")))
    }

    /// Ends the session and, for a stdio server, its whole process group.
    pub async fn shutdown(&self) {
        let service = self.service.lock().await.take();
        if let Some(s) = service {
            let _ = tokio::time::timeout(Duration::from_secs(3), s.cancel()).await;
        }
        self.kill_group();
    }

    fn kill_group(&self) {
        let guard = self.guard.lock().ok().and_then(|mut g| g.take());
        let Some(pgid) = self.pgid.filter(|p| *p > 1) else {
            return;
        };
        match guard {
            Some(guard) => {
                end_supervisor(pgid);
                // Every process of the server has ended: what it changed of the protected
                // paths can be put back.
                let _ = guard.finish(false, "");
            }
            // SAFETY: killpg only sends a signal; the group is the one this connection
            // created for its server, so nothing else is in it.
            None => unsafe {
                libc::killpg(pgid, libc::SIGKILL);
            },
        }
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.kill_group();
    }
}

/// Ends a confined server: SIGTERM makes its supervisor kill every process of the server
/// (SIGKILL would leave those that left its session), then waits briefly for it to exit.
fn end_supervisor(pid: i32) {
    // SAFETY: kill(2) only sends a signal, to the supervisor this connection started.
    unsafe {
        libc::kill(pid, libc::SIGTERM);
    }
    let stat = format!("/proc/{pid}/stat");
    let deadline = std::time::Instant::now() + Duration::from_millis(500);
    while std::time::Instant::now() < deadline {
        match std::fs::read_to_string(&stat) {
            // Exited: a zombie until the runtime reaps it.
            Ok(s) if s.rsplit_once(") ").is_some_and(|(_, r)| r.starts_with('Z')) => return,
            Ok(_) => std::thread::sleep(Duration::from_millis(2)),
            Err(_) => return,
        }
    }
}

async fn connect_stdio(
    handler: Handler,
    command: &str,
    args: &[String],
    env: &BTreeMap<String, String>,
    ctx: &SpawnContext<'_>,
    stderr: &Arc<Mutex<StderrTail>>,
    startup: Duration,
) -> Result<
    (
        RunningService<RoleClient, Handler>,
        i32,
        Option<ProcessGuard>,
    ),
    String,
> {
    let mut cmd = tokio::process::Command::new(command);
    cmd.args(args)
        .envs(env)
        .env("CLAUDE_PROJECT_DIR", ctx.project_dir)
        .current_dir(ctx.cwd)
        .process_group(0);
    let guard = match &ctx.confine {
        Some((profiles, origin)) => profiles.confine(origin, cmd.as_std_mut(), None)?,
        None => None,
    };
    // A confined server's child is its supervisor, ended by SIGTERM (see `end_supervisor`).
    cmd.kill_on_drop(guard.is_none());
    let (transport, err) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start `{command}`: {e}"))?;
    let pid = transport
        .id()
        .and_then(|p| i32::try_from(p).ok())
        .ok_or_else(|| format!("`{command}` exited at once"))?;
    if let Some(mut err) = err {
        let tail = stderr.clone();
        tokio::spawn(async move {
            let mut buf = [0u8; 4096];
            while let Ok(n) = err.read(&mut buf).await {
                if n == 0 {
                    break;
                }
                if let Ok(mut t) = tail.lock() {
                    t.push(&buf[..n]);
                }
            }
        });
    }
    let confined = guard.is_some();
    let kill = |msg: String| {
        if confined {
            end_supervisor(pid);
        } else {
            // SAFETY: signals the group just created for this server.
            unsafe {
                libc::killpg(pid, libc::SIGKILL);
            }
        }
        msg
    };
    match tokio::time::timeout(startup, handler.serve(transport)).await {
        Ok(Ok(s)) => Ok((s, pid, guard)),
        Ok(Err(e)) => Err(kill(format!("initialize failed: {e}"))),
        Err(_) => Err(kill(format!(
            "no answer to initialize within {} ms (MCP_TIMEOUT)",
            startup.as_millis()
        ))),
    }
}

/// The HTTP client MCP connections use: rustls with the ring provider, the platform's roots.
pub(crate) fn http_client() -> Result<reqwest::Client, String> {
    // Several callers may race to install it; any installed ring provider will do.
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .build()
        .map_err(|e| format!("cannot build the HTTP client: {e}"))
}

async fn connect_http(
    handler: Handler,
    url: &str,
    headers: &BTreeMap<String, String>,
    startup: Duration,
) -> Result<RunningService<RoleClient, Handler>, String> {
    let client = http_client()?;
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_string());
    let mut custom = std::collections::HashMap::new();
    for (k, v) in headers {
        if k.eq_ignore_ascii_case("authorization") {
            config = config.auth_header(v.strip_prefix("Bearer ").unwrap_or(v).to_string());
            continue;
        }
        let name =
            http::HeaderName::from_bytes(k.as_bytes()).map_err(|e| format!("header `{k}`: {e}"))?;
        let value = http::HeaderValue::from_str(v).map_err(|e| format!("header `{k}`: {e}"))?;
        custom.insert(name, value);
    }
    config.custom_headers = custom;
    let transport = StreamableHttpClientTransport::with_client(client, config);
    match tokio::time::timeout(startup, handler.serve(transport)).await {
        Ok(Ok(s)) => Ok(s),
        Ok(Err(e)) => Err(format!("initialize failed: {e}")),
        Err(_) => Err(format!(
            "no answer to initialize within {} ms (MCP_TIMEOUT)",
            startup.as_millis()
        )),
    }
}

/// The text of a tool result for the model: its text parts, a note for each other part,
/// capped at [`MAX_RESULT_CHARS`].
pub fn result_text(result: &CallToolResult) -> String {
    let mut parts = Vec::new();
    for c in &result.content {
        match c {
            ContentBlock::Text(t) => parts.push(t.text.clone()),
            ContentBlock::Image(i) => parts.push(format!("[image {}]", i.mime_type)),
            ContentBlock::Audio(a) => parts.push(format!("[audio {}]", a.mime_type)),
            ContentBlock::Resource(r) => parts.push(match serde_json::to_value(&r.resource) {
                Ok(v) => v
                    .get("text")
                    .and_then(|t| t.as_str())
                    .map(str::to_string)
                    .unwrap_or_else(|| "[resource]".into()),
                Err(_) => "[resource]".into(),
            }),
            ContentBlock::ResourceLink(l) => parts.push(format!("[resource {}]", l.uri)),
            #[allow(unreachable_patterns)]
            _ => parts.push("[content]".into()),
        }
    }
    let mut text = parts.join("\n");
    if text.chars().count() > MAX_RESULT_CHARS {
        let cut: String = text.chars().take(MAX_RESULT_CHARS).collect();
        text = format!(
            "{cut}\n[output truncated: it exceeded {MAX_RESULT_CHARS} characters (about 25,000 tokens)]"
        );
    }
    text
}

fn last_lines(s: &str, n: usize) -> &str {
    let mut idx = s.len();
    for _ in 0..n {
        match s[..idx].rfind('\n') {
            Some(i) => idx = i,
            None => return s,
        }
    }
    &s[idx + 1..]
}

fn indent(s: &str) -> String {
    s.lines()
        .map(|l| format!("    {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}
