//! `warden mcp`: Warden's MCP client and server.
//!
//! * `serve [--http 127.0.0.1:PORT]`: the session's WASM tools as an MCP server, over stdio
//!   (for `claude mcp add warden -- warden mcp serve`) or streamable HTTP on a loopback port,
//!   answering only connections of the same user ([`warden::mcp::serve_http`]).
//! * `list`: the configured servers, where each comes from, and whether it connects.
//! * `tools`: every connected server's tools, under the names rules and hooks use.
//! * `call <server> <tool> [JSON]`: one call through the session's pipeline.
//! * `add`, `remove`, `get`: the servers of the local, project and user scopes, as `claude mcp`
//!   changes them ([`warden_config::mcp::edit`]).
//! * `approve [--deny]`: the user's choice for a project (`.mcp.json`) server, recorded in
//!   `state.json` and pinned to the server's definition.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use rmcp::ServiceExt;
use serde_json::{Value, json};
use warden::mcp::{ServerState, WardenServer};
use warden::session::Session;
use warden_config::mcp::edit::{self, EditError};

use super::SessionArgs;
use super::tool::{Report, call_and_report};

/// Arguments.
#[derive(clap::Args)]
#[command(after_help = "Examples:
  warden mcp list                            the configured servers and their status
  warden mcp tools --json                    every server's tools
  warden mcp call github list_issues '{\"repo\":\"o/r\"}'
  warden mcp add db -- npx -y @bytebase/dbhub   a stdio server for this project (local scope)
  warden mcp add --transport http -s user sentry https://mcp.sentry.dev/mcp
  warden mcp approve db                      let the project's .mcp.json server `db` run
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
    /// Add a server: `add NAME -- CMD [ARGS…]` (stdio) or `add --transport http NAME URL`.
    Add(AddArgs),
    /// Remove a server from its scope (name the scope when it is in several).
    Remove(RemoveArgs),
    /// Show one server: scope, file, transport, command or URL, environment and headers
    /// (values masked), approval.
    Get(GetArgs),
    /// Approve a project (`.mcp.json`) server, or refuse it with `--deny`. The choice is kept
    /// in Warden's state file, never in the project, and binds to the server's definition: a
    /// changed entry needs approval again.
    Approve(ApproveArgs),
}

/// The scopes `add` and `remove` write.
#[derive(Clone, Copy, clap::ValueEnum)]
enum EditScope {
    /// This project, this user: `$WARDEN_HOME/state.json` → `projects["<dir>"].mcpServers`.
    Local,
    /// Everyone who checks the project out: `.mcp.json` at the project root.
    Project,
    /// This user, every project: `$WARDEN_HOME/state.json` → `mcpServers`.
    User,
}

impl EditScope {
    fn scope(self) -> warden_config::mcp::McpScope {
        use warden_config::mcp::McpScope;
        match self {
            EditScope::Local => McpScope::Local,
            EditScope::Project => McpScope::Project,
            EditScope::User => McpScope::User,
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum AddTransport {
    Stdio,
    Http,
    Sse,
}

#[derive(clap::Args)]
#[command(after_help = "Examples:
  warden mcp add airtable -e AIRTABLE_API_KEY=KEY -- npx -y airtable-mcp-server
  warden mcp add --transport http notion https://mcp.notion.com/mcp
  warden mcp add -t http -s project api https://api.example.com/mcp -H 'Authorization: Bearer ${API_TOKEN}'

Options go before the name; `--` separates the server's own command line from Warden's.")]
struct AddArgs {
    /// The server's name, also its tool-name prefix (`mcp__NAME__<tool>`): letters, digits,
    /// `-` and `_`.
    name: String,
    /// The program (stdio) or the URL (http, sse).
    command_or_url: String,
    /// The program's arguments (stdio).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    args: Vec<String>,
    /// Where to keep it.
    #[arg(short, long, value_enum, default_value = "local")]
    scope: EditScope,
    /// How to reach it.
    #[arg(short, long, value_enum, default_value = "stdio")]
    transport: AddTransport,
    /// An environment variable for a stdio server, KEY=value (repeatable).
    #[arg(short, long = "env", value_name = "KEY=VALUE")]
    env: Vec<String>,
    /// A header for an http or sse server, "Name: value" (repeatable).
    #[arg(short = 'H', long = "header", value_name = "NAME: VALUE")]
    header: Vec<String>,
    /// The project directory (default: the current directory).
    #[arg(long, value_name = "DIR")]
    cwd: Option<std::path::PathBuf>,
}

#[derive(clap::Args)]
struct RemoveArgs {
    /// The server's name.
    name: String,
    /// The scope to remove it from (needed when the name is in several).
    #[arg(short, long, value_enum)]
    scope: Option<EditScope>,
    /// The project directory (default: the current directory).
    #[arg(long, value_name = "DIR")]
    cwd: Option<std::path::PathBuf>,
}

#[derive(clap::Args)]
struct GetArgs {
    /// The server: its configured name, `plugin:<plugin>:<server>`, or its tool-name prefix.
    name: String,
    #[command(flatten)]
    session: SessionArgs,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args)]
#[command(
    after_help = "The approval is recorded in $WARDEN_HOME/state.json under this project's
path, with the sha256 of the server's entry: editing the entry in .mcp.json (command, arguments,
environment, URL, headers) makes it need approval again. The project's own files, its
.claude/settings.local.json included, cannot approve it."
)]
struct ApproveArgs {
    /// The server's name in the project's `.mcp.json`.
    name: String,
    /// Refuse it instead: it never starts in this project (until approved).
    #[arg(long)]
    deny: bool,
    /// The project directory (default: the current directory).
    #[arg(long, value_name = "DIR")]
    cwd: Option<std::path::PathBuf>,
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
        Command::Add(a) => add(a),
        Command::Remove(a) => remove(a),
        Command::Get(a) => get(a),
        Command::Approve(a) => approve(a),
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
        let hint = matches!(state, ServerState::NeedsApproval)
            .then(|| approve_command(&s.entry.name, &args.session));
        rows.push((s, state.label(), tools, transport, detail, hint));
    }
    if args.json {
        let v: Vec<Value> = rows
            .iter()
            .map(|(s, status, tools, transport, detail, hint)| {
                json!({
                    "name": s.entry.handler_name(),
                    "prefix": s.entry.tool_prefix_name(),
                    "scope": s.entry.scope.as_str(),
                    "origin": s.entry.origin,
                    "status": status,
                    "transport": transport,
                    "tools": tools,
                    "error": detail,
                    "approve": hint,
                })
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else if rows.is_empty() {
        println!("No MCP servers configured.");
    } else {
        for (s, status, tools, transport, detail, hint) in &rows {
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
            if let Some(h) = hint {
                println!("    approve it with: {h}");
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
    if hub.servers().is_empty() && !args.json {
        println!("No MCP servers configured.");
    }
    // Stderr, so that stdout stays one tool per line (or the JSON array) for scripts.
    for s in hub.servers() {
        let name = s.entry.handler_name();
        let at = format!("{}: {}", s.entry.scope.as_str(), s.entry.origin);
        match hub.state(s) {
            ServerState::Connected { .. } => {}
            ServerState::NeedsApproval => eprintln!(
                "warden mcp: `{name}` [{at}]: not listed: needs approval; approve it with: {}",
                approve_command(&s.entry.name, &args.session)
            ),
            ServerState::Disabled => eprintln!(
                "warden mcp: `{name}` [{at}]: not listed: disabled by `disabledMcpjsonServers`"
            ),
            ServerState::Failed(e) | ServerState::Invalid(e) => {
                eprintln!("warden mcp: `{name}` [{at}]: not listed: {e}")
            }
            other => eprintln!("warden mcp: `{name}` [{at}]: not listed: {}", other.label()),
        }
    }
    rt.block_on(session.close());
    Ok(ExitCode::SUCCESS)
}

/// The command line that approves project server `name` for the session `args` describe.
fn approve_command(name: &str, args: &SessionArgs) -> String {
    match &args.cwd {
        Some(dir) => format!(
            "warden mcp approve {name} --cwd {}",
            shell_word(&dir.display().to_string())
        ),
        None => format!("warden mcp approve {name}"),
    }
}

/// `s`, quoted for a POSIX shell when it needs to be.
fn shell_word(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+:=@,".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// The project directory: `--cwd`, else the current directory.
fn project_dir(cwd: Option<&std::path::Path>) -> anyhow::Result<Result<PathBuf, String>> {
    match cwd {
        Some(c) if c.is_dir() => Ok(Ok(c.canonicalize()?)),
        Some(c) => Ok(Err(format!("--cwd {} is not a directory", c.display()))),
        None => Ok(Ok(std::env::current_dir()?)),
    }
}

/// Reports a refused change; input the user can correct exits 2, a file that cannot be read
/// or written exits 1.
fn refused(verb: &str, e: &EditError) -> ExitCode {
    eprintln!("warden mcp {verb}: {e}");
    match e {
        EditError::File(_)
        | EditError::Shape { .. }
        | EditError::Symlink { .. }
        | EditError::Write { .. } => ExitCode::from(1),
        _ => ExitCode::from(2),
    }
}

fn add(a: AddArgs) -> anyhow::Result<ExitCode> {
    let dir = match project_dir(a.cwd.as_deref())? {
        Ok(d) => d,
        Err(m) => {
            eprintln!("warden mcp add: {m}");
            return Ok(ExitCode::from(2));
        }
    };
    let home = warden_config::Home::from_env()?;
    let entry = match build_entry(&a) {
        Ok(e) => e,
        Err(e) => return Ok(refused("add", &e)),
    };
    let scope = a.scope.scope();
    match edit::add(&dir, &home, scope, &a.name, entry) {
        Ok(place) => {
            let kind = match a.transport {
                AddTransport::Stdio => "stdio",
                AddTransport::Http => "http",
                AddTransport::Sse => "sse",
            };
            println!(
                "Added {kind} MCP server `{}` to {scope} scope: {}",
                a.name,
                place.describe()
            );
            if scope == warden_config::mcp::McpScope::Project {
                println!(
                    "A project server runs once approved: warden mcp approve {}",
                    a.name
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => Ok(refused("add", &e)),
    }
}

fn build_entry(a: &AddArgs) -> Result<Value, EditError> {
    match a.transport {
        AddTransport::Stdio => {
            if !a.header.is_empty() {
                return Err(EditError::Input(
                    "--header applies to http and sse servers; give a stdio server --env".into(),
                ));
            }
            let lower = a.command_or_url.to_ascii_lowercase();
            if lower.starts_with("http://") || lower.starts_with("https://") {
                eprintln!(
                    "warden mcp add: `{}` looks like a URL but is added as a program to run; for a remote server give --transport http (or sse)",
                    a.command_or_url
                );
            }
            let env = a
                .env
                .iter()
                .map(|e| edit::parse_env(e))
                .collect::<Result<Vec<_>, _>>()?;
            edit::stdio_entry(&a.command_or_url, &a.args, &env)
        }
        AddTransport::Http | AddTransport::Sse => {
            if !a.args.is_empty() {
                return Err(EditError::Input(format!(
                    "an http or sse server takes one URL; unexpected arguments after it: {}",
                    a.args.join(" ")
                )));
            }
            if !a.env.is_empty() {
                return Err(EditError::Input(
                    "--env applies to stdio servers; send values to a remote server with --header"
                        .into(),
                ));
            }
            let headers = a
                .header
                .iter()
                .map(|h| edit::parse_header(h))
                .collect::<Result<Vec<_>, _>>()?;
            let kind = if a.transport == AddTransport::Http {
                "http"
            } else {
                "sse"
            };
            edit::remote_entry(kind, &a.command_or_url, &headers)
        }
    }
}

fn remove(a: RemoveArgs) -> anyhow::Result<ExitCode> {
    let dir = match project_dir(a.cwd.as_deref())? {
        Ok(d) => d,
        Err(m) => {
            eprintln!("warden mcp remove: {m}");
            return Ok(ExitCode::from(2));
        }
    };
    let home = warden_config::Home::from_env()?;
    match edit::remove(&dir, &home, a.scope.map(EditScope::scope), &a.name) {
        Ok(place) => {
            println!(
                "Removed MCP server `{}` from {} scope: {}",
                a.name,
                place.scope,
                place.describe()
            );
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => Ok(refused("remove", &e)),
    }
}

fn approve(a: ApproveArgs) -> anyhow::Result<ExitCode> {
    let dir = match project_dir(a.cwd.as_deref())? {
        Ok(d) => d,
        Err(m) => {
            eprintln!("warden mcp approve: {m}");
            return Ok(ExitCode::from(2));
        }
    };
    let home = warden_config::Home::from_env()?;
    let choice = match edit::approve(&dir, &home, &a.name, !a.deny) {
        Ok(c) => c,
        Err(e) => return Ok(refused("approve", &e)),
    };
    let recorded = format!(
        "{} → projects[\"{}\"]",
        choice.state.display(),
        choice.project_key
    );
    match &choice.digest {
        Some(d) => {
            println!(
                "Approved MCP server `{}` of {} as defined now ({d}), recorded in {recorded}.{}",
                a.name,
                choice.mcp_json.display(),
                warden_config::mcp::APPROVED_KEY
            );
            println!("A changed definition needs approval again.");
            // A settings file that disables the server still wins.
            let settings =
                warden_config::Settings::load(&warden_config::LoadOptions::new(&dir, home));
            if warden_config::mcp::project_approval(&settings, &a.name)
                == warden_config::mcp::Approval::Disabled
            {
                eprintln!(
                    "warden mcp approve: `{}` is still off: a settings file lists it in `disabledMcpjsonServers`",
                    a.name
                );
            }
        }
        None => println!(
            "Denied MCP server `{}` in {}: it does not start here; recorded in {recorded}.{}",
            a.name,
            dir.display(),
            warden_config::mcp::DISABLED_KEY
        ),
    }
    Ok(ExitCode::SUCCESS)
}

fn get(a: GetArgs) -> anyhow::Result<ExitCode> {
    let dir = match project_dir(a.session.cwd.as_deref())? {
        Ok(d) => d,
        Err(m) => {
            eprintln!("warden mcp get: {m}");
            return Ok(ExitCode::from(2));
        }
    };
    let session = match open(&a.session, None)? {
        Ok(s) => s,
        Err(code) => return Ok(code),
    };
    let hub = session.mcp();
    let Some(server) = hub.by_name(&a.name) else {
        let known: Vec<String> = hub
            .servers()
            .iter()
            .map(|s| s.entry.handler_name())
            .collect();
        eprintln!(
            "warden mcp get: no MCP server `{}`; configured: {}",
            a.name,
            if known.is_empty() {
                "none".to_string()
            } else {
                known.join(", ")
            }
        );
        return Ok(ExitCode::from(2));
    };
    let entry = &server.entry;
    // The same name in lower scopes, which this one hides.
    let mut hidden = Vec::new();
    if entry.plugin.is_none() {
        let home = warden_config::Home::from_env()?;
        match edit::find(&dir, &home, &entry.name) {
            Ok(found) => hidden.extend(
                found
                    .into_iter()
                    .filter(|f| f.place.scope != entry.scope)
                    .map(|f| (f.place.scope, f.place.describe())),
            ),
            Err(e) => eprintln!("warden mcp get: {e}"),
        }
    }
    let v = describe(entry);
    let e = &entry.entry;
    let strings = |k: &str| -> Vec<String> {
        e.get(k)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect()
    };
    let masked = |k: &str| -> serde_json::Map<String, Value> {
        e.get(k)
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .map(|(name, v)| {
                let shown = v.as_str().map_or_else(|| v.to_string(), mask_value);
                (name.clone(), Value::String(shown))
            })
            .collect()
    };
    let approval = v["approval"].as_str().unwrap_or("").to_string();
    let hint = (entry.approval == warden_config::mcp::Approval::Pending)
        .then(|| approve_command(&entry.name, &a.session));
    if a.json {
        let out = json!({
            "name": entry.handler_name(),
            "scope": entry.scope.as_str(),
            "origin": entry.origin,
            "type": v["transport"],
            "command": e.get("command"),
            "args": strings("args"),
            "env": masked("env"),
            "url": e.get("url"),
            "headers": masked("headers"),
            "tools": v["tools"],
            "approval": approval,
            "approve": hint,
            "hides": hidden.iter().map(|(s, p)| json!({"scope": s.as_str(), "origin": p})).collect::<Vec<_>>(),
        });
        println!("{}", serde_json::to_string_pretty(&out)?);
        rt_close(&session)?;
        return Ok(ExitCode::SUCCESS);
    }
    println!("{}:", entry.handler_name());
    println!("  Scope: {} ({})", entry.scope.as_str(), entry.origin);
    println!("  Type: {}", v["transport"].as_str().unwrap_or("?"));
    if let Some(c) = e.get("command").and_then(Value::as_str) {
        println!("  Command: {c}");
        println!("  Args: {}", strings("args").join(" "));
    }
    if let Some(u) = e.get("url").and_then(Value::as_str) {
        println!("  URL: {u}");
    }
    for (key, title, sep) in [("env", "Environment", "="), ("headers", "Headers", ": ")] {
        let m = masked(key);
        if !m.is_empty() {
            println!("  {title}:");
            for (k, v) in &m {
                println!("    {k}{sep}{}", v.as_str().unwrap_or(""));
            }
        }
    }
    println!("  Tools: {}", v["tools"].as_str().unwrap_or(""));
    match &hint {
        Some(h) => println!("  Approval: {approval}; approve it with: {h}"),
        None => println!("  Approval: {approval}"),
    }
    for (scope, place) in &hidden {
        println!("  Also in {scope} scope ({place}), unused while this one is configured");
    }
    match &entry.plugin {
        Some(p) => println!(
            "It comes with plugin {}; `warden plugin disable {}` turns it off.",
            p.plugin_id, p.plugin_id
        ),
        None => println!(
            "To remove it: warden mcp remove {} --scope {}",
            entry.name,
            entry.scope.as_str()
        ),
    }
    rt_close(&session)?;
    Ok(ExitCode::SUCCESS)
}

fn rt_close(session: &Arc<Session>) -> anyhow::Result<()> {
    runtime()?.block_on(session.close());
    Ok(())
}

/// An environment or header value as `get` shows it: each `${VAR}` reference as written (it
/// names a variable, not a secret), the literal text between them as `***`.
fn mask_value(v: &str) -> String {
    let mut out = String::new();
    let mut rest = v;
    while !rest.is_empty() {
        match rest.find("${") {
            Some(i) => {
                if i > 0 {
                    out.push_str("***");
                }
                let tail = &rest[i..];
                match tail.find('}') {
                    Some(end) => {
                        out.push_str(&tail[..=end]);
                        rest = &tail[end + 1..];
                    }
                    None => {
                        out.push_str("***");
                        rest = "";
                    }
                }
            }
            None => {
                out.push_str("***");
                rest = "";
            }
        }
    }
    out
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
