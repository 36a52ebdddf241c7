//! Warden as an MCP server (`warden mcp serve`): the session's WASM tools (the built-in ones
//! and the enabled plugins' tool components) offered to any MCP client.
//!
//! Each `tools/call` is one [`Session::call_tool`]: input validation, PreToolUse hooks, the
//! permission rules, a fresh sandbox, PostToolUse hooks. A rule's `ask` becomes an
//! elicitation (`elicitation/create`, form mode with no fields: accept runs the call once,
//! decline or cancel refuses it) when the client declared that it supports elicitation;
//! otherwise it is refused with a message saying why. A tool that is refused, traps or
//! runs out of time answers with `isError: true` and the server keeps serving.
//!
//! Over streamable HTTP ([`serve_http`]) the tools are one loopback port away from every
//! local user and every web page: only connections from sockets of the user the server runs
//! as are answered (another user's is closed unanswered, [`crate::peer::same_user`]), and
//! only requests naming the server's own address as `Host` and carrying no other site's
//! `Origin`.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ElicitRequestParams,
    ElicitationAction, ElicitationSchema, Implementation, ListToolsResult, PaginatedRequestParams,
    ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{ElicitationMode, RequestContext};
use rmcp::{ErrorData, Peer, RoleServer, ServerHandler};
use serde_json::Value;

use crate::session::{
    AskAnswer, AskFuture, AskRequest, Asker, DenyAsker, Session, SessionError, ToolStatus,
};

/// The server: one session, shared by every call.
#[derive(Clone)]
pub struct WardenServer {
    session: Arc<Session>,
}

impl WardenServer {
    /// Serves `session`'s tools.
    pub fn new(session: Arc<Session>) -> Self {
        WardenServer { session }
    }

    /// The tools as MCP lists them, each with its component's `describe()` schema. A tool
    /// that cannot describe itself is left out and named on stderr.
    pub async fn list(&self) -> Vec<Tool> {
        let mut out = Vec::new();
        for t in self.session.tools().iter() {
            match t.describe(&self.session).await {
                Ok(d) => {
                    let schema = match &d.input_schema {
                        Value::Object(o) => o.clone(),
                        _ => serde_json::Map::new(),
                    };
                    out.push(Tool::new(
                        t.name.clone(),
                        d.description.clone(),
                        Arc::new(schema),
                    ));
                }
                Err(e) => eprintln!("warden mcp serve: {} is not offered: {e}", t.name),
            }
        }
        out
    }
}

impl ServerHandler for WardenServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("warden", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Warden's sandboxed tools. Every call passes the user's hooks and permission rules and runs in a fresh WebAssembly sandbox.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.list().await))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.to_string();
        if self.session.tools().get(&name).is_none() {
            return Err(ErrorData::invalid_params(
                format!(
                    "unknown tool `{name}`; this server offers: {}",
                    self.session.tools().names().join(", ")
                ),
                None,
            ));
        }
        let input = Value::Object(request.arguments.unwrap_or_default());
        let elicit = ElicitAsker {
            peer: context.peer.clone(),
        };
        let asker: &dyn Asker = if context
            .peer
            .supported_elicitation_modes()
            .contains(&ElicitationMode::Form)
        {
            &elicit
        } else {
            &NoElicitation
        };
        let out = match self.session.call_tool(&name, input, asker).await {
            Ok(out) => out,
            Err(SessionError::UnknownTool { .. }) => {
                return Err(ErrorData::invalid_params(
                    format!("unknown tool `{name}`"),
                    None,
                ));
            }
            Err(e) => return Ok(error_result(e.to_string()).into()),
        };
        let mut result = match out.status {
            ToolStatus::Ok {
                content,
                structured,
            } => {
                let mut r = CallToolResult::success(vec![ContentBlock::text(content)]);
                r.structured_content = structured;
                r
            }
            ToolStatus::Denied { message } => error_result(format!("Denied: {message}")),
            ToolStatus::InvalidInput { message } => error_result(message),
            ToolStatus::Failed { message } => error_result(message),
            ToolStatus::Decided => error_result("the call was decided but not run".into()),
        };
        for c in out.additional_context {
            result.content.push(ContentBlock::text(c));
        }
        Ok(result.into())
    }
}

fn error_result(message: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message)])
}

/// Why [`serve_http`] stopped.
#[derive(Debug, thiserror::Error)]
pub enum ServeHttpError {
    /// The listener is not on a loopback address.
    #[error(
        "{0}: Warden serves MCP on loopback addresses only (127.0.0.1 or ::1); its tools act with your rights"
    )]
    NotLoopback(SocketAddr),
    /// Accepting or inspecting a connection failed.
    #[error("serving MCP over HTTP: {0}")]
    Io(#[from] std::io::Error),
}

/// Serves `session`'s tools as streamable HTTP at `/mcp` on `listener`, which must be bound
/// to a loopback address, until accepting fails. Each connection whose socket belongs to
/// another user is closed before a byte is read or written.
pub async fn serve_http(
    session: Arc<Session>,
    listener: tokio::net::TcpListener,
) -> Result<(), ServeHttpError> {
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService,
    };
    let local = listener.local_addr()?;
    if !local.ip().is_loopback() {
        return Err(ServeHttpError::NotLoopback(local));
    }
    let own = match local {
        SocketAddr::V4(v4) => v4.ip().to_string(),
        SocketAddr::V6(v6) => format!("[{}]", v6.ip()),
    };
    let port = local.port();
    let mut config = StreamableHttpServerConfig::default();
    // A page on a name rebound to this address sends that name as Host; only the server's
    // own spellings pass.
    config.allowed_hosts = vec![format!("{own}:{port}"), format!("localhost:{port}")];
    // A browser page may not drive the tools: only this address's own origin passes.
    config.allowed_origins = vec![
        format!("http://{own}:{port}"),
        format!("http://localhost:{port}"),
    ];
    let service = StreamableHttpService::new(
        move || Ok(WardenServer::new(session.clone())),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    loop {
        let (stream, peer) = listener.accept().await?;
        if !crate::peer::same_user(peer, local) {
            // Not this user's: say nothing, not even an error page.
            drop(stream);
            continue;
        }
        let svc = hyper_util::service::TowerToHyperService::new(service.clone());
        tokio::spawn(async move {
            let io = hyper_util::rt::TokioIo::new(stream);
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(io, svc)
                .await;
        });
    }
}

/// Longest tool input shown in an elicitation's question, in bytes.
const MAX_ASKED_INPUT: usize = 2_000;

/// Asks the MCP client's user through an elicitation.
struct ElicitAsker {
    peer: Peer<RoleServer>,
}

impl Asker for ElicitAsker {
    fn ask<'a>(&'a self, request: AskRequest<'a>) -> AskFuture<'a> {
        Box::pin(async move {
            // The input is the caller's; a long one is cut so the question stays readable.
            let mut input = request.input.to_string();
            if input.len() > MAX_ASKED_INPUT {
                let mut cut = MAX_ASKED_INPUT;
                while !input.is_char_boundary(cut) {
                    cut -= 1;
                }
                input.truncate(cut);
                input.push('…');
            }
            let message = format!(
                "Warden: allow {} with {input}?\n{}{}",
                request.tool,
                request.reason,
                request
                    .rule
                    .map(|r| format!(" (rule {r})"))
                    .unwrap_or_default()
            );
            let params = ElicitRequestParams::FormElicitationParams {
                meta: None,
                message,
                requested_schema: ElicitationSchema::new(BTreeMap::new()),
            };
            match self.peer.create_elicitation(params).await {
                Ok(r) if r.action == ElicitationAction::Accept => AskAnswer::AllowOnce,
                _ => AskAnswer::Deny,
            }
        })
    }

    fn label(&self) -> &str {
        "MCP elicitation"
    }
}

/// For clients that cannot be asked: refuses, and the pipeline's message says why.
struct NoElicitation;

impl Asker for NoElicitation {
    fn ask<'a>(&'a self, request: AskRequest<'a>) -> AskFuture<'a> {
        DenyAsker.ask(request)
    }

    fn label(&self) -> &str {
        DenyAsker.label()
    }
}
