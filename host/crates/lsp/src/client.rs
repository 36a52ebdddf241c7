//! One running language server: started through a [`Launcher`] (the host confines it),
//! initialized with the workspace folder, fed documents, asked requests with a timeout, and
//! ended with `shutdown`/`exit`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use lsp_types::notification::Notification;
use lsp_types::request::Request;
use lsp_types::{Diagnostic, ServerCapabilities};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, BufReader};
use tokio::sync::{mpsc, oneshot, watch};

use crate::ServerConfig;
use crate::framing::{FrameError, read_message, write_message};

/// How much of a server's stderr is kept, for error messages.
const STDERR_TAIL_BYTES: usize = 8 << 10;

/// Prepares a server's process before it is spawned: the host confines it there.
pub trait Launcher: Send + Sync {
    /// Changes `cmd` so the process it spawns is confined. `Ok(None)`: it runs as it is.
    /// `Err`: it must not start, for the reason given. With a guard, the child `cmd` spawns is
    /// a supervisor, ended with SIGTERM (never SIGKILL, which would leave its processes).
    fn prepare(
        &self,
        cmd: &mut std::process::Command,
    ) -> Result<Option<Box<dyn LaunchGuard>>, String>;
}

/// A confined server's confinement, until it has ended.
pub trait LaunchGuard: Send {
    /// Called once the server has ended: undoes what it left and returns lines explaining what
    /// the sandbox refused it (from `stderr`) when it `failed`.
    fn finish(self: Box<Self>, failed: bool, stderr: &str) -> Vec<String>;
}

/// Runs servers as they are (tests, and users who opted their plugins out).
#[derive(Debug, Default, Clone, Copy)]
pub struct Unconfined;

impl Launcher for Unconfined {
    fn prepare(
        &self,
        _: &mut std::process::Command,
    ) -> Result<Option<Box<dyn LaunchGuard>>, String> {
        Ok(None)
    }
}

/// What went wrong talking to a server.
#[derive(Debug, Clone, thiserror::Error)]
pub enum LspError {
    /// It could not be started or initialized.
    #[error("{0}")]
    Start(String),
    /// It exited (or closed its output) while the client needed it.
    #[error("{0}")]
    Exited(String),
    /// No answer in time.
    #[error("`{method}` got no answer within {ms} ms (requestTimeout)")]
    Timeout {
        /// The request.
        method: String,
        /// The limit.
        ms: u128,
    },
    /// The server answered with an error.
    #[error("`{method}` failed on the server: {message} (code {code})")]
    Response {
        /// The request.
        method: String,
        /// JSON-RPC error code.
        code: i64,
        /// Its message.
        message: String,
    },
    /// The answer was not what the protocol says.
    #[error("{0}")]
    Protocol(String),
}

/// Diagnostics published for one file.
#[derive(Debug, Clone, Default)]
struct Published {
    /// The client-wide publication counter when they arrived.
    seq: u64,
    items: Vec<Diagnostic>,
}

/// An answer: the result, or the error's code and message.
type Answer = Result<Value, (i64, String)>;

struct Shared {
    name: String,
    pending: Mutex<HashMap<i64, oneshot::Sender<Answer>>>,
    diagnostics: Mutex<HashMap<PathBuf, Published>>,
    published: watch::Sender<u64>,
    alive: AtomicBool,
    exit: Mutex<Option<String>>,
    stderr: Mutex<Vec<u8>>,
    outgoing: mpsc::UnboundedSender<Vec<u8>>,
    settings: Option<Value>,
    folder: PathBuf,
}

impl Shared {
    fn stderr_tail(&self) -> String {
        self.stderr
            .lock()
            .map(|s| String::from_utf8_lossy(&s).trim().to_string())
            .unwrap_or_default()
    }

    fn died(&self, why: String) {
        self.alive.store(false, Ordering::SeqCst);
        if let Ok(mut e) = self.exit.lock()
            && e.is_none()
        {
            *e = Some(why);
        }
        let msg = self.exit_message();
        if let Ok(mut p) = self.pending.lock() {
            for (_, tx) in p.drain() {
                let _ = tx.send(Err((-32099, msg.clone())));
            }
        }
        self.published.send_modify(|n| *n += 1);
    }

    fn exit_message(&self) -> String {
        let why = self
            .exit
            .lock()
            .ok()
            .and_then(|e| e.clone())
            .unwrap_or_else(|| "it exited".into());
        let tail = self.stderr_tail();
        let mut msg = format!("LSP server `{}` stopped: {why}", self.name);
        if !tail.is_empty() {
            let last: Vec<&str> = tail.lines().rev().take(6).collect();
            msg.push_str("; its stderr ends:");
            for l in last.into_iter().rev() {
                msg.push_str("\n  ");
                msg.push_str(l);
            }
        }
        msg
    }

    fn send(&self, message: &Value) -> bool {
        self.outgoing.send(message.to_string().into_bytes()).is_ok()
    }

    /// Answers a request the server sent.
    fn answer(&self, id: Value, method: &str, params: Option<&Value>) {
        let result = match method {
            "workspace/configuration" => {
                let items = params
                    .and_then(|p| p.get("items"))
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                Value::Array(
                    items
                        .iter()
                        .map(|i| {
                            let section = i.get("section").and_then(Value::as_str);
                            section_of(self.settings.as_ref(), section)
                        })
                        .collect(),
                )
            }
            "workspace/workspaceFolders" => json!([{
                "uri": file_uri(&self.folder).map(|u| u.as_str().to_string()).unwrap_or_default(),
                "name": folder_name(&self.folder),
            }]),
            "client/registerCapability"
            | "client/unregisterCapability"
            | "window/workDoneProgress/create"
            | "window/showMessageRequest"
            | "workspace/semanticTokens/refresh"
            | "workspace/diagnostic/refresh"
            | "workspace/inlayHint/refresh"
            | "workspace/codeLens/refresh" => Value::Null,
            _ => {
                self.send(&json!({
                    "jsonrpc": "2.0",
                    "id": id,
                    "error": {"code": -32601, "message": format!("{method} is not supported")},
                }));
                return;
            }
        };
        self.send(&json!({"jsonrpc": "2.0", "id": id, "result": result}));
    }

    fn on_message(&self, msg: Value) {
        let method = msg.get("method").and_then(Value::as_str);
        match (msg.get("id"), method) {
            (Some(id), Some(m)) => self.answer(id.clone(), m, msg.get("params")),
            (Some(id), None) => {
                let Some(id) = id.as_i64() else { return };
                let tx = self.pending.lock().ok().and_then(|mut p| p.remove(&id));
                if let Some(tx) = tx {
                    let answer = match msg.get("error") {
                        Some(e) => Err((
                            e.get("code").and_then(Value::as_i64).unwrap_or(0),
                            e.get("message")
                                .and_then(Value::as_str)
                                .unwrap_or("")
                                .to_string(),
                        )),
                        None => Ok(msg.get("result").cloned().unwrap_or(Value::Null)),
                    };
                    let _ = tx.send(answer);
                }
            }
            (None, Some(lsp_types::notification::PublishDiagnostics::METHOD)) => {
                let Some(params) = msg.get("params").cloned().and_then(|p| {
                    serde_json::from_value::<lsp_types::PublishDiagnosticsParams>(p).ok()
                }) else {
                    return;
                };
                let Some(path) = uri_path(&params.uri) else {
                    return;
                };
                // Stored before waiters are woken (the table's lock is held across both), so
                // a waiter that wakes always finds what woke it.
                if let Ok(mut d) = self.diagnostics.lock() {
                    let mut seq = 0;
                    self.published.send_modify(|n| {
                        *n += 1;
                        seq = *n;
                    });
                    d.insert(
                        path,
                        Published {
                            seq,
                            items: params.diagnostics,
                        },
                    );
                }
            }
            _ => {}
        }
    }
}

/// `settings` at a dotted `section` (`python.analysis`), or all of it without one.
fn section_of(settings: Option<&Value>, section: Option<&str>) -> Value {
    let Some(mut v) = settings else {
        return Value::Null;
    };
    if let Some(section) = section.filter(|s| !s.is_empty()) {
        if let Some(whole) = v.get(section) {
            return whole.clone();
        }
        for part in section.split('.') {
            match v.get(part) {
                Some(next) => v = next,
                None => return Value::Null,
            }
        }
    }
    v.clone()
}

fn folder_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| p.display().to_string())
}

/// The `file://` URI of an absolute path.
pub fn file_uri(path: &Path) -> Option<lsp_types::Uri> {
    let url = url::Url::from_file_path(path).ok()?;
    url.as_str().parse().ok()
}

/// The path of a `file://` URI.
pub fn uri_path(uri: &lsp_types::Uri) -> Option<PathBuf> {
    url::Url::parse(uri.as_str()).ok()?.to_file_path().ok()
}

/// An open document.
#[derive(Debug, Clone)]
struct OpenDoc {
    version: i32,
    text: String,
}

/// A running server.
pub struct Client {
    shared: Arc<Shared>,
    next_id: AtomicI64,
    docs: Mutex<HashMap<PathBuf, OpenDoc>>,
    capabilities: ServerCapabilities,
    config: ServerConfig,
    child: tokio::sync::Mutex<Option<tokio::process::Child>>,
    pid: i32,
    guard: Mutex<Option<Box<dyn LaunchGuard>>>,
    confined: bool,
    notes: Mutex<Vec<String>>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("name", &self.shared.name)
            .field("pid", &self.pid)
            .finish_non_exhaustive()
    }
}

impl Client {
    /// Starts the server `config` (already expanded) for `folder`, and initializes it:
    /// `initialize` (within `startupTimeout`), `initialized`, then
    /// `workspace/didChangeConfiguration` with `settings`.
    pub async fn start(
        name: &str,
        config: &ServerConfig,
        folder: &Path,
        launcher: &dyn Launcher,
    ) -> Result<Client, LspError> {
        let mut cmd = tokio::process::Command::new(&config.command);
        cmd.args(&config.args)
            .envs(&config.env)
            .current_dir(folder)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        let guard = launcher
            .prepare(cmd.as_std_mut())
            .map_err(|e| LspError::Start(format!("LSP server `{name}`: {e}")))?;
        let confined = guard.is_some();
        cmd.kill_on_drop(!confined);
        let mut child = cmd.spawn().map_err(|e| {
            LspError::Start(format!(
                "LSP server `{name}`: cannot start `{}`: {e}",
                config.command
            ))
        })?;
        let pid = child
            .id()
            .and_then(|p| i32::try_from(p).ok())
            .ok_or_else(|| LspError::Start(format!("LSP server `{name}` exited at once")))?;
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(LspError::Start(format!(
                "LSP server `{name}`: its standard streams were not opened"
            )));
        };
        let (tx, mut rx) = mpsc::unbounded_channel::<Vec<u8>>();
        let shared = Arc::new(Shared {
            name: name.to_string(),
            pending: Mutex::new(HashMap::new()),
            diagnostics: Mutex::new(HashMap::new()),
            published: watch::channel(0).0,
            alive: AtomicBool::new(true),
            exit: Mutex::new(None),
            stderr: Mutex::new(Vec::new()),
            outgoing: tx,
            settings: config.settings.clone(),
            folder: folder.to_path_buf(),
        });
        {
            let shared = shared.clone();
            let mut stdin = stdin;
            tokio::spawn(async move {
                while let Some(body) = rx.recv().await {
                    if let Err(e) = write_message(&mut stdin, &body).await {
                        shared.died(format!("writing to it failed ({e})"));
                        break;
                    }
                }
            });
        }
        {
            let shared = shared.clone();
            let mut stderr = stderr;
            tokio::spawn(async move {
                let mut buf = [0u8; 4096];
                while let Ok(n) = stderr.read(&mut buf).await {
                    if n == 0 {
                        break;
                    }
                    if let Ok(mut s) = shared.stderr.lock() {
                        s.extend_from_slice(&buf[..n]);
                        if s.len() > STDERR_TAIL_BYTES {
                            let cut = s.len() - STDERR_TAIL_BYTES;
                            s.drain(..cut);
                        }
                    }
                }
            });
        }
        {
            let shared = shared.clone();
            tokio::spawn(async move {
                let mut r = BufReader::new(stdout);
                loop {
                    match read_message(&mut r).await {
                        Ok(body) => match serde_json::from_slice::<Value>(&body) {
                            Ok(msg) => shared.on_message(msg),
                            Err(e) => {
                                shared.died(format!("it wrote a message that is not JSON ({e})"));
                                break;
                            }
                        },
                        Err(FrameError::Closed) => {
                            shared.died("it exited".into());
                            break;
                        }
                        Err(e) => {
                            shared.died(e.to_string());
                            break;
                        }
                    }
                }
            });
        }
        let mut client = Client {
            shared,
            next_id: AtomicI64::new(1),
            docs: Mutex::new(HashMap::new()),
            capabilities: ServerCapabilities::default(),
            config: config.clone(),
            child: tokio::sync::Mutex::new(Some(child)),
            pid,
            guard: Mutex::new(guard),
            confined,
            notes: Mutex::new(Vec::new()),
        };
        let init = client.initialize_params(folder);
        let startup = config.startup_timeout();
        let answer = client
            .request_within::<lsp_types::request::Initialize>(init, startup, "startupTimeout")
            .await;
        let result = match answer {
            Ok(r) => r,
            Err(e) => {
                client.kill().await;
                let mut msg = format!("LSP server `{name}` did not initialize: {e}");
                for n in client.notes() {
                    msg.push_str("\n  ");
                    msg.push_str(&n);
                }
                return Err(LspError::Start(msg));
            }
        };
        client.capabilities = result.capabilities;
        client.notify::<lsp_types::notification::Initialized>(lsp_types::InitializedParams {});
        if let Some(settings) = &config.settings {
            client.notify::<lsp_types::notification::DidChangeConfiguration>(
                lsp_types::DidChangeConfigurationParams {
                    settings: settings.clone(),
                },
            );
        }
        Ok(client)
    }

    #[allow(deprecated)]
    fn initialize_params(&self, folder: &Path) -> lsp_types::InitializeParams {
        use lsp_types::*;
        let uri = file_uri(folder);
        InitializeParams {
            // A confined server lives in a PID namespace of its own, where Warden's pid names
            // another process or none: servers that watch their parent (pyright) would exit.
            // The client ends them itself.
            process_id: None,
            root_uri: uri.clone(),
            root_path: Some(folder.display().to_string()),
            initialization_options: self.config.initialization_options.clone(),
            workspace_folders: uri.map(|uri| {
                vec![WorkspaceFolder {
                    uri,
                    name: folder_name(folder),
                }]
            }),
            client_info: Some(ClientInfo {
                name: "warden".into(),
                version: Some(env!("CARGO_PKG_VERSION").into()),
            }),
            capabilities: ClientCapabilities {
                workspace: Some(WorkspaceClientCapabilities {
                    configuration: Some(true),
                    workspace_folders: Some(true),
                    did_change_configuration: Some(DynamicRegistrationClientCapabilities {
                        dynamic_registration: Some(false),
                    }),
                    symbol: Some(WorkspaceSymbolClientCapabilities::default()),
                    ..Default::default()
                }),
                text_document: Some(TextDocumentClientCapabilities {
                    synchronization: Some(TextDocumentSyncClientCapabilities {
                        did_save: Some(true),
                        ..Default::default()
                    }),
                    publish_diagnostics: Some(PublishDiagnosticsClientCapabilities {
                        related_information: Some(false),
                        version_support: Some(true),
                        ..Default::default()
                    }),
                    hover: Some(HoverClientCapabilities {
                        content_format: Some(vec![MarkupKind::Markdown, MarkupKind::PlainText]),
                        ..Default::default()
                    }),
                    definition: Some(GotoCapability {
                        link_support: Some(true),
                        ..Default::default()
                    }),
                    implementation: Some(GotoCapability {
                        link_support: Some(true),
                        ..Default::default()
                    }),
                    references: Some(DynamicRegistrationClientCapabilities::default()),
                    document_symbol: Some(DocumentSymbolClientCapabilities {
                        hierarchical_document_symbol_support: Some(true),
                        ..Default::default()
                    }),
                    call_hierarchy: Some(CallHierarchyClientCapabilities::default()),
                    ..Default::default()
                }),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    /// The server's name.
    pub fn name(&self) -> &str {
        &self.shared.name
    }

    /// What it said it can do.
    pub fn capabilities(&self) -> &ServerCapabilities {
        &self.capabilities
    }

    /// Whether it is still running.
    pub fn is_alive(&self) -> bool {
        self.shared.alive.load(Ordering::SeqCst)
    }

    /// Why it stopped, with the end of its stderr.
    pub fn exit_message(&self) -> String {
        self.shared.exit_message()
    }

    /// Lines its confinement added once it ended (refusals of the sandbox explained).
    pub fn notes(&self) -> Vec<String> {
        self.notes.lock().map(|n| n.clone()).unwrap_or_default()
    }

    /// Sends a notification.
    pub fn notify<N: Notification>(&self, params: N::Params) {
        let params = serde_json::to_value(params).unwrap_or(Value::Null);
        self.shared
            .send(&json!({"jsonrpc": "2.0", "method": N::METHOD, "params": params}));
    }

    /// Sends a request and waits for its answer within `requestTimeout`.
    pub async fn request<R: Request>(&self, params: R::Params) -> Result<R::Result, LspError> {
        self.request_within::<R>(params, self.config.request_timeout(), "requestTimeout")
            .await
    }

    async fn request_within<R: Request>(
        &self,
        params: R::Params,
        limit: Duration,
        _what: &str,
    ) -> Result<R::Result, LspError> {
        let value = self.raw_request(R::METHOD, params, limit).await?;
        serde_json::from_value(value).map_err(|e| {
            LspError::Protocol(format!(
                "LSP server `{}` answered `{}` with something that is not its result: {e}",
                self.shared.name,
                R::METHOD
            ))
        })
    }

    async fn raw_request(
        &self,
        method: &str,
        params: impl serde::Serialize,
        limit: Duration,
    ) -> Result<Value, LspError> {
        if !self.is_alive() {
            return Err(LspError::Exited(self.exit_message()));
        }
        let id = self.next_id.fetch_add(1, Ordering::SeqCst);
        let (tx, rx) = oneshot::channel();
        if let Ok(mut p) = self.shared.pending.lock() {
            p.insert(id, tx);
        }
        let params = serde_json::to_value(params).unwrap_or(Value::Null);
        let sent = self
            .shared
            .send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        if !sent {
            return Err(LspError::Exited(self.exit_message()));
        }
        match tokio::time::timeout(limit, rx).await {
            Ok(Ok(Ok(v))) => Ok(v),
            Ok(Ok(Err((code, message)))) => {
                if !self.is_alive() {
                    Err(LspError::Exited(self.exit_message()))
                } else {
                    Err(LspError::Response {
                        method: method.to_string(),
                        code,
                        message,
                    })
                }
            }
            Ok(Err(_)) => Err(LspError::Exited(self.exit_message())),
            Err(_) => {
                if let Ok(mut p) = self.shared.pending.lock() {
                    p.remove(&id);
                }
                self.shared.send(&json!({
                    "jsonrpc": "2.0",
                    "method": "$/cancelRequest",
                    "params": {"id": id},
                }));
                Err(LspError::Timeout {
                    method: method.to_string(),
                    ms: limit.as_millis(),
                })
            }
        }
    }

    /// The publication counter now: diagnostics published later than this are newer than a
    /// change made after reading it.
    pub fn publications(&self) -> u64 {
        *self.shared.published.borrow()
    }

    /// Opens `path` with `text` as `language`, or sends the new text if it is open and changed
    /// (`didOpen` / `didChange`, full text). `Ok(false)`: it was open with this text already.
    pub fn sync(&self, path: &Path, language: &str, text: &str) -> Result<bool, LspError> {
        use lsp_types::*;
        let uri = file_uri(path).ok_or_else(|| {
            LspError::Protocol(format!("{} is not an absolute path", path.display()))
        })?;
        let Ok(mut docs) = self.docs.lock() else {
            return Err(LspError::Protocol("the document table is poisoned".into()));
        };
        match docs.get_mut(path) {
            None => {
                docs.insert(
                    path.to_path_buf(),
                    OpenDoc {
                        version: 1,
                        text: text.to_string(),
                    },
                );
                drop(docs);
                self.notify::<notification::DidOpenTextDocument>(DidOpenTextDocumentParams {
                    text_document: TextDocumentItem {
                        uri,
                        language_id: language.to_string(),
                        version: 1,
                        text: text.to_string(),
                    },
                });
            }
            Some(doc) if doc.text != text => {
                doc.version += 1;
                doc.text = text.to_string();
                let version = doc.version;
                drop(docs);
                self.notify::<notification::DidChangeTextDocument>(DidChangeTextDocumentParams {
                    text_document: VersionedTextDocumentIdentifier { uri, version },
                    content_changes: vec![TextDocumentContentChangeEvent {
                        range: None,
                        range_length: None,
                        text: text.to_string(),
                    }],
                });
            }
            Some(_) => return Ok(false),
        }
        Ok(true)
    }

    /// Tells the server `path` was saved (`didSave`, with its text).
    pub fn saved(&self, path: &Path, text: &str) {
        use lsp_types::*;
        let Some(uri) = file_uri(path) else { return };
        self.notify::<notification::DidSaveTextDocument>(DidSaveTextDocumentParams {
            text_document: TextDocumentIdentifier { uri },
            text: Some(text.to_string()),
        });
    }

    /// Diagnostics published for `path` after publication `after`, once they have settled:
    /// waits up to `first` for the first publication, then while more keep coming within
    /// `quiet`. `None` when none came in time.
    pub async fn diagnostics_after(
        &self,
        path: &Path,
        after: u64,
        first: Duration,
        quiet: Duration,
    ) -> Option<Vec<Diagnostic>> {
        let mut rx = self.shared.published.subscribe();
        let current = |path: &Path| {
            self.shared
                .diagnostics
                .lock()
                .ok()
                .and_then(|d| d.get(path).cloned())
                .filter(|p| p.seq > after)
        };
        let deadline = tokio::time::Instant::now() + first;
        let mut got = loop {
            if let Some(p) = current(path) {
                break p;
            }
            if !self.is_alive() {
                return None;
            }
            match tokio::time::timeout_at(deadline, rx.changed()).await {
                Ok(Ok(())) => {}
                _ => return current(path).map(|p| p.items),
            }
        };
        loop {
            match tokio::time::timeout(quiet, rx.changed()).await {
                Ok(Ok(())) => {
                    if let Some(p) = current(path) {
                        got = p;
                    }
                }
                _ => return Some(got.items),
            }
        }
    }

    /// The last diagnostics published for `path`, if any.
    pub fn diagnostics(&self, path: &Path) -> Option<Vec<Diagnostic>> {
        self.shared
            .diagnostics
            .lock()
            .ok()
            .and_then(|d| d.get(path).map(|p| p.items.clone()))
    }

    /// Ends the server: `shutdown` then `exit`, each within `shutdownTimeout`; a server still
    /// running after that is ended (its supervisor with SIGTERM when confined).
    pub async fn shutdown(&self) {
        let limit = self.config.shutdown_timeout();
        if self.is_alive() {
            let _ = self.raw_request("shutdown", Value::Null, limit).await;
            self.shared
                .send(&json!({"jsonrpc": "2.0", "method": "exit", "params": null}));
        }
        let mut child = self.child.lock().await;
        if let Some(c) = child.as_mut()
            && tokio::time::timeout(limit, c.wait()).await.is_err()
        {
            self.signal();
            let _ = tokio::time::timeout(limit, c.wait()).await;
        }
        child.take();
        drop(child);
        self.finish(false);
    }

    /// Ends the server at once.
    pub async fn kill(&self) {
        self.signal();
        let mut child = self.child.lock().await;
        if let Some(c) = child.as_mut() {
            let _ = tokio::time::timeout(Duration::from_secs(2), c.wait()).await;
        }
        child.take();
        drop(child);
        self.finish(true);
    }

    fn signal(&self) {
        // SAFETY: kill(2)/killpg(2) only send signals, to the supervisor or process group
        // this client started.
        unsafe {
            if self.confined {
                libc::kill(self.pid, libc::SIGTERM);
            } else {
                libc::killpg(self.pid, libc::SIGKILL);
            }
        }
    }

    fn finish(&self, failed: bool) {
        let guard = self.guard.lock().ok().and_then(|mut g| g.take());
        if let Some(g) = guard {
            let notes = g.finish(failed, &self.shared.stderr_tail());
            if let Ok(mut n) = self.notes.lock() {
                n.extend(notes);
            }
        }
    }

    /// Reaps a server that exited by itself and records what its confinement explains.
    pub async fn reap(&self) {
        let mut child = self.child.lock().await;
        if let Some(c) = child.as_mut() {
            let _ = tokio::time::timeout(Duration::from_secs(2), c.wait()).await;
        }
        child.take();
        drop(child);
        self.finish(true);
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        // A client dropped without `shutdown` (a panic, a cancelled session) must not leave
        // its server running.
        if let Ok(mut c) = self.child.try_lock()
            && let Some(child) = c.as_mut()
            && child.try_wait().ok().flatten().is_none()
        {
            self.signal();
        }
    }
}
