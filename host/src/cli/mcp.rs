//! `warden mcp`: Warden's MCP client and server.
//!
//! * `serve [--http 127.0.0.1:PORT]`: the session's WASM tools as an MCP server, over stdio
//!   (for `claude mcp add warden -- warden mcp serve`) or streamable HTTP on a loopback port,
//!   answering only connections of the same user ([`warden::mcp::serve_http`]).
//! * `list`: the configured servers, where each comes from, and whether it connects.
//! * `tools`: every connected server's tools, under the names rules and hooks use.
//! * `call <server> <tool> [JSON]`: one call through the session's pipeline.

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use rmcp::ServiceExt;
use serde_json::{Value, json};
use warden::mcp::{ServerState, WardenServer};
use warden::session::Session;

use super::SessionArgs;
use super::tool::{Report, call_and_report};

/// Arguments.
#[derive(clap::Args)]
#[command(after_help = "Examples:
  warden mcp list                            the configured servers and their status
  warden mcp tools --json                    every server's tools
  warden mcp call github list_issues '{\"repo\":\"o/r\"}'
  claude mcp add warden -- warden mcp serve  Warden's sandboxed tools inside Claude Code")]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Subcommand)]
enum Command {
    /// Serve the session's WASM tools (built-in and plugin) to any MCP client; every call
    /// passes hooks, rules and a fresh sandbox.
    Serve(ServeArgs),
    /// List the configured MCP servers, their status and tool counts.
    List(ListArgs),
    /// List the tools of every configured MCP server, as `mcp__<server>__<tool>`.
    Tools(ListArgs),
    /// Call one tool of one MCP server through the session's pipeline.
    Call(CallArgs),
}

#[derive(clap::Args)]
struct ServeArgs {
    #[command(flatten)]
    session: SessionArgs,
    /// Serve streamable HTTP on this loopback address (e.g. 127.0.0.1:8765; port 0 picks
    /// one) instead of stdio.
    #[arg(long, value_name = "ADDR")]
    http: Option<SocketAddr>,
    /// Longest a tool call may run, in seconds (default: each tool's own limit).
    #[arg(long, value_name = "SECS")]
    tool_timeout: Option<u64>,
}

#[derive(clap::Args)]
struct ListArgs {
    #[command(flatten)]
    session: SessionArgs,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args)]
#[command(after_help = "Examples:
  warden mcp call github list_issues '{\"repo\":\"o/r\"}'   one call through hooks and rules
  warden mcp call plugin:db:sql query '{\"q\":\"select 1\"}' --explain
  warden mcp call fs read '{}' --yes                    approve an `ask` once")]
struct CallArgs {
    /// The server: its configured name, `plugin:<plugin>:<server>`, or its tool-name prefix.
    server: String,
    /// The tool, as the server names it.
    tool: String,
    /// The tool input, a JSON object.
    #[arg(default_value = "{}")]
    input: String,
    #[command(flatten)]
    session: SessionArgs,
    /// Approve a call the rules would ask about, without asking (once).
    #[arg(long, conflicts_with = "strict")]
    yes: bool,
    /// Refuse every call the rules would ask about, even on a terminal.
    #[arg(long)]
    strict: bool,
    /// Also print every step of the pipeline on stderr.
    #[arg(long)]
    explain: bool,
    /// Print the whole result as JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    match args.command {
        Command::Serve(a) => serve(a),
        Command::List(a) => list(a),
        Command::Tools(a) => tools(a),
        Command::Call(a) => call(a),
    }
}

fn open(
    args: &SessionArgs,
    tool_timeout: Option<u64>,
) -> anyhow::Result<Result<Arc<Session>, ExitCode>> {
    let mut opts = match args.options(None)? {
        Ok(o) => o,
        Err(e) => {
            eprintln!("warden mcp: {}", e.0);
            return Ok(Err(ExitCode::from(2)));
        }
    };
    opts.tool_deadline = tool_timeout.map(Duration::from_secs);
    // A long-lived server keeps its instances warm.
    opts.runtime.pooling = true;
    let session = Session::load(&opts);
    for p in session.load_problems() {
        eprintln!("warden mcp: {p}");
    }
    Ok(Ok(Arc::new(session)))
}

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?)
}

fn serve(args: ServeArgs) -> anyhow::Result<ExitCode> {
    let session = match open(&args.session, args.tool_timeout)? {
        Ok(s) => s,
        Err(code) => return Ok(code),
    };
    // One client over stdio sends one request at a time in the common case: a single thread
    // answers it without a cross-thread wake-up per message. HTTP may have many clients.
    let rt = if args.http.is_none() {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?
    } else {
        runtime()?
    };
    rt.block_on(async move {
        match args.http {
            None => {
                let server = WardenServer::new(session.clone());
                // Pipes (as MCP clients start servers) are read on the I/O reactor, not
                // through a blocking thread per read.
                let running = server
                    .serve(rmcp::transport::stdio_pipes())
                    .await
                    .context("MCP initialize over stdio failed")?;
                let _ = running.waiting().await;
            }
            Some(addr) => serve_http(session.clone(), addr).await?,
        }
        session.close().await;
        Ok(ExitCode::SUCCESS)
    })
}

async fn serve_http(session: Arc<Session>, addr: SocketAddr) -> anyhow::Result<()> {
    if !addr.ip().is_loopback() {
        anyhow::bail!("--http {}", warden::mcp::ServeHttpError::NotLoopback(addr));
    }
    if !cfg!(target_os = "linux") {
        anyhow::bail!(
            "--http needs Linux to tell which user a connection comes from; serve over stdio instead"
        );
    }
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("cannot listen on {addr}"))?;
    let local = listener.local_addr()?;
    println!("listening on http://{local}/mcp");
    eprintln!("warden mcp serve: streamable HTTP on http://{local}/mcp");
    Ok(warden::mcp::serve_http(session, listener).await?)
}

fn list(args: ListArgs) -> anyhow::Result<ExitCode> {
    let session = match open(&args.session, None)? {
        Ok(s) => s,
        Err(code) => return Ok(code),
    };
    let rt = runtime()?;
    let hub = session.mcp();
    rt.block_on(hub.connect_all());
    let mut rows = Vec::new();
    for s in hub.servers() {
        let state = hub.state(s);
        let (tools, transport, detail) = match &state {
            ServerState::Connected { tools, transport } => (Some(*tools), Some(*transport), None),
            ServerState::Failed(e) | ServerState::Invalid(e) => (None, None, Some(e.clone())),
            _ => (None, None, None),
        };
        rows.push((s, state.label(), tools, transport, detail));
    }
    if args.json {
        let v: Vec<Value> = rows
            .iter()
            .map(|(s, status, tools, transport, detail)| {
                json!({
                    "name": s.entry.handler_name(),
                    "prefix": s.entry.tool_prefix_name(),
                    "scope": s.entry.scope.as_str(),
                    "origin": s.entry.origin,
                    "status": status,
                    "transport": transport,
                    "tools": tools,
                    "error": detail,
                })
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else if rows.is_empty() {
        println!("No MCP servers configured.");
    } else {
        for (s, status, tools, transport, detail) in &rows {
            let extra = match (tools, transport) {
                (Some(n), Some(t)) => format!(" ({t}, {n} tool{})", if *n == 1 { "" } else { "s" }),
                _ => String::new(),
            };
            println!(
                "{}  [{}: {}]  {status}{extra}",
                s.entry.handler_name(),
                s.entry.scope.as_str(),
                s.entry.origin
            );
            if let Some(d) = detail {
                for line in d.lines() {
                    println!("    {line}");
                }
            }
        }
    }
    for p in hub.problems() {
        eprintln!("warden mcp: {p}");
    }
    rt.block_on(session.close());
    Ok(ExitCode::SUCCESS)
}

fn tools(args: ListArgs) -> anyhow::Result<ExitCode> {
    let session = match open(&args.session, None)? {
        Ok(s) => s,
        Err(code) => return Ok(code),
    };
    let rt = runtime()?;
    let hub = session.mcp();
    let tools = rt.block_on(hub.tools());
    if args.json {
        let v: Vec<Value> = tools
            .iter()
            .map(|t| {
                json!({
                    "name": t.name,
                    "server": t.server,
                    "tool": t.tool.name,
                    "description": t.tool.description,
                    "inputSchema": t.tool.input_schema,
                })
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        for t in &tools {
            let d = t.tool.description.as_deref().unwrap_or("");
            let first = d.lines().next().unwrap_or("");
            println!("{}  {first}", t.name);
        }
    }
    for s in hub.servers() {
        if let ServerState::Failed(e) | ServerState::Invalid(e) = hub.state(s) {
            eprintln!("warden mcp: {e}");
        }
    }
    rt.block_on(session.close());
    Ok(ExitCode::SUCCESS)
}

fn call(args: CallArgs) -> anyhow::Result<ExitCode> {
    let input: Value = serde_json::from_str(&args.input).context("the input is not valid JSON")?;
    let session = match open(&args.session, None)? {
        Ok(s) => s,
        Err(code) => return Ok(code),
    };
    let Some(server) = session.mcp().by_name(&args.server) else {
        let known: Vec<String> = session
            .mcp()
            .servers()
            .iter()
            .map(|s| s.entry.handler_name())
            .collect();
        eprintln!(
            "warden mcp call: no MCP server `{}`; configured: {}",
            args.server,
            if known.is_empty() {
                "none".to_string()
            } else {
                known.join(", ")
            }
        );
        return Ok(ExitCode::from(2));
    };
    let name = warden_config::mcp::tool_name(&server.entry.tool_prefix_name(), &args.tool);
    call_and_report(
        &session,
        &name,
        input,
        &Report {
            command: "warden mcp call",
            yes: args.yes,
            strict: args.strict,
            explain: args.explain,
            json: args.json,
        },
    )
}

/// One configured server as `context` and `plugin install` list it: without connecting.
pub(crate) fn describe(entry: &warden_config::mcp::ServerEntry) -> Value {
    let e = &entry.entry;
    let transport =
        e.get("type")
            .and_then(Value::as_str)
            .unwrap_or(if e.get("command").is_some() {
                "stdio"
            } else {
                "?"
            });
    let endpoint = match e.get("url").and_then(Value::as_str) {
        Some(u) => u.to_string(),
        None => {
            let mut parts = vec![
                e.get("command")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string(),
            ];
            parts.extend(
                e.get("args")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .map(str::to_string),
            );
            parts.join(" ")
        }
    };
    json!({
        "name": entry.handler_name(),
        "scope": entry.scope.as_str(),
        "origin": entry.origin,
        "transport": transport,
        "endpoint": endpoint,
        "tools": format!("mcp__{}__*", entry.tool_prefix_name()),
        "approval": match entry.approval {
            warden_config::mcp::Approval::Approved => "approved",
            warden_config::mcp::Approval::Pending => "needs approval",
            warden_config::mcp::Approval::Disabled => "disabled",
        },
    })
}

/// The text line for [`describe`]'s value.
pub(crate) fn describe_line(v: &Value) -> String {
    let s = |k: &str| v[k].as_str().unwrap_or("").to_string();
    let approval = s("approval");
    format!(
        "{} [{}, {}] {}  → {}{}",
        s("name"),
        s("scope"),
        s("transport"),
        s("endpoint"),
        s("tools"),
        if approval == "approved" {
            String::new()
        } else {
            format!("  ({approval})")
        }
    )
}

/// The MCP servers of the plugin installed at `root`, described.
pub(crate) fn plugin_servers(root: &std::path::Path, plugin_id: &str) -> Vec<Value> {
    let Ok(plugin) = warden_plugins::load_plugin(root) else {
        return Vec::new();
    };
    let mut servers = warden_config::mcp::McpServers::default();
    servers.add_plugin_servers(
        warden_config::mcp::PluginServer {
            plugin_id: plugin_id.to_string(),
            plugin_name: plugin.name.clone(),
            root: root.to_path_buf(),
            data_dir: root.to_path_buf(),
        },
        &plugin.mcp_servers,
    );
    servers.servers.iter().map(describe).collect()
}
