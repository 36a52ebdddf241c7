//! Running handlers: command processes, HTTP requests, WASM components (through
//! [`WasmHookRunner`]) and MCP tool calls (through [`McpToolRunner`]). Every runner produces a
//! raw result; `output.rs` classifies it (and depends on this file, not the other way round).

use std::collections::BTreeMap;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use serde_json::{Map, Value};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};

use warden_vocab::Event;

/// Most bytes kept from one output stream; the rest is read and discarded so a chatty hook
/// never blocks on a full pipe nor grows the host's memory without bound.
pub const MAX_CAPTURE_BYTES: usize = 4 << 20;

/// How long output pipes are drained after the hook process exits. A background child that
/// inherited stdout would otherwise hold the call open until the hook's timeout.
pub const PIPE_GRACE: Duration = Duration::from_millis(500);

/// The raw result of a command process or a WASM component: the same shape for both, so both
/// go through the same classification (spec 1.10).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RawOutcome {
    /// Exit code; a process killed by signal `n` reports `128 + n`. `None` when it timed out
    /// or never ran.
    pub exit_code: Option<i32>,
    /// Standard output (lossily decoded, capped at [`MAX_CAPTURE_BYTES`]).
    pub stdout: String,
    /// Standard error (same caps).
    pub stderr: String,
    /// The handler was stopped at its timeout; its output is discarded and it gives no decision.
    pub timed_out: bool,
    /// The handler could not run (spawn failure, component that fails to load or traps). It is
    /// classified like a command that cannot start (exit 127): a non-blocking error.
    pub error: Option<String>,
    /// Standard output as an already-parsed JSON object, which then stands in for `stdout`.
    /// A WASM hook's typed result is rendered straight to this object, sparing a print and a
    /// parse per call; it is classified exactly as the same object printed on stdout.
    pub json: Option<Map<String, Value>>,
}

impl RawOutcome {
    /// A finished run.
    pub fn exited(code: i32, stdout: impl Into<String>, stderr: impl Into<String>) -> Self {
        RawOutcome {
            exit_code: Some(code),
            stdout: stdout.into(),
            stderr: stderr.into(),
            ..Default::default()
        }
    }

    /// A finished run whose standard output is the JSON object `json`.
    pub fn exited_json(code: i32, json: Map<String, Value>, stderr: impl Into<String>) -> Self {
        RawOutcome {
            exit_code: Some(code),
            stderr: stderr.into(),
            json: Some(json),
            ..Default::default()
        }
    }

    /// A run stopped at its timeout.
    pub fn timed_out() -> Self {
        RawOutcome {
            timed_out: true,
            ..Default::default()
        }
    }

    /// A handler that could not run.
    pub fn error(message: impl Into<String>) -> Self {
        RawOutcome {
            error: Some(message.into()),
            ..Default::default()
        }
    }
}

/// One WASM hook invocation. Borrows from the dispatch, which outlives the call.
#[derive(Debug, Clone, Copy)]
pub struct WasmHookCall<'a> {
    /// Absolute path of the `.wasm` component.
    pub component: &'a Path,
    /// Its key in `warden.components`.
    pub component_name: &'a str,
    /// Declared world (e.g. `"hook"`).
    pub world: Option<&'a str>,
    /// The full component declaration from `plugin.json`.
    pub declaration: &'a serde_json::Value,
    /// Plugin id (`name@marketplace`; empty outside plugins).
    pub plugin_id: &'a str,
    /// Plugin install directory.
    pub plugin_root: &'a Path,
    /// Plugin data directory.
    pub plugin_data: &'a Path,
    /// Project directory.
    pub project_dir: &'a Path,
    /// The event.
    pub event: Event,
    /// The exact stdin JSON a command hook would receive.
    pub input: &'a str,
    /// Budget for the call. The dispatcher also enforces it by dropping the future.
    pub timeout: Duration,
}

/// Runs WASM hook components. The host implements it with wasmtime; tests use an in-process
/// function.
pub trait WasmHookRunner: Send + Sync {
    /// Runs `call.component` for `call.event` with `call.input`, within `call.timeout`.
    fn run<'a>(
        &'a self,
        call: WasmHookCall<'a>,
    ) -> Pin<Box<dyn Future<Output = RawOutcome> + Send + 'a>>;
}

/// One `mcp_tool` handler call.
#[derive(Debug, Clone, PartialEq)]
pub struct McpToolCall<'a> {
    /// The server as configured: its name, or `plugin:<plugin>:<server>` for a plugin's server.
    pub server: &'a str,
    /// The tool on that server.
    pub tool: &'a str,
    /// The handler's `input` after `${path}` substitution from the hook input (rules on
    /// [`McpToolHandler::input`](crate::McpToolHandler::input)); empty when it has none.
    pub arguments: Map<String, Value>,
    /// The event.
    pub event: Event,
    /// Budget for the call. The dispatcher also enforces it by dropping the future.
    pub timeout: Duration,
}

/// The text a tool returned, or why there is none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McpToolReply {
    /// The joined text content of a successful call; it is read as a command's stdout.
    Text(String),
    /// The tool answered with `isError: true`; the text it gave.
    ToolError(String),
    /// No such server, or it is not connected; why.
    NotConnected(String),
    /// Transport or protocol failure; what went wrong.
    Failed(String),
}

/// Calls tools on connected MCP servers. The host implements it with its MCP client; tests use
/// an in-process function.
pub trait McpToolRunner: Send + Sync {
    /// Calls `call.tool` on `call.server` with `call.arguments`, within `call.timeout`. It must
    /// not connect or authenticate a server that is not already connected (spec 1.6).
    fn call<'a>(
        &'a self,
        call: McpToolCall<'a>,
    ) -> Pin<Box<dyn Future<Output = McpToolReply> + Send + 'a>>;
}

/// Substitutes `${path}` templates in the string values of an `mcp_tool` handler's `input`,
/// with the rules documented on [`McpToolHandler::input`](crate::McpToolHandler::input).
pub(crate) fn substitute_input(template: &Value, hook_input: &Value) -> Value {
    match template {
        Value::String(s) => Value::String(substitute_paths(s, hook_input)),
        Value::Array(a) => {
            Value::Array(a.iter().map(|v| substitute_input(v, hook_input)).collect())
        }
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, v)| (k.clone(), substitute_input(v, hook_input)))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn lookup<'v>(root: &'v Value, path: &str) -> Option<&'v Value> {
    path.split('.').try_fold(root, |v, seg| match v {
        Value::Object(m) => m.get(seg),
        Value::Array(a) => a.get(seg.parse::<usize>().ok()?),
        _ => None,
    })
}

fn substitute_paths(s: &str, hook_input: &Value) -> String {
    static RE: OnceLock<Option<regex::Regex>> = OnceLock::new();
    let Some(re) = RE.get_or_init(|| regex::Regex::new(r"\$\{([^{}]+)\}").ok()) else {
        return s.to_string();
    };
    re.replace_all(s, |c: &regex::Captures<'_>| {
        let path = c.get(1).map_or("", |m| m.as_str());
        match lookup(hook_input, path) {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(v)) => v.clone(),
            Some(other) => other.to_string(),
        }
    })
    .into_owned()
}

/// Cuts `s` to at most [`MAX_CAPTURE_BYTES`] on a character boundary, so a tool's text is
/// bounded exactly as a command's stdout is.
fn cap_capture(mut s: String) -> String {
    if s.len() > MAX_CAPTURE_BYTES {
        let mut end = MAX_CAPTURE_BYTES;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s.truncate(end);
    }
    s
}

/// Turns a tool's reply into the raw result a command would have given: its text is stdout of
/// a run that exited 0, and a call that produced no text is a handler that could not run (a
/// non-blocking error, or a failure for `onFailure`).
pub(crate) fn mcp_raw_outcome(server: &str, tool: &str, reply: McpToolReply) -> RawOutcome {
    let with_detail = |what: String, detail: &str| {
        let detail = detail.trim();
        if detail.is_empty() {
            what
        } else {
            format!("{what}: {detail}")
        }
    };
    match reply {
        McpToolReply::Text(text) => RawOutcome::exited(0, cap_capture(text), ""),
        McpToolReply::ToolError(detail) => RawOutcome::error(with_detail(
            format!("MCP tool `{tool}` on server `{server}` returned an error"),
            &detail,
        )),
        McpToolReply::NotConnected(detail) => RawOutcome::error(with_detail(
            format!("MCP server `{server}` is not connected, so tool `{tool}` cannot be called"),
            &detail,
        )),
        McpToolReply::Failed(detail) => RawOutcome::error(with_detail(
            format!("calling MCP tool `{tool}` on server `{server}` failed"),
            &detail,
        )),
    }
}

/// How lines the host adds to a confined handler's stderr start (see
/// [`ConfinedProcess::finish`]).
pub const HOST_NOTE_PREFIX: &str = "warden: ";

/// Confines the processes command handlers start. The host implements it with the OS's
/// confinement (Linux: `warden-confine`); without one, handlers run as Claude Code runs them.
pub trait ProcessConfiner: Send + Sync {
    /// Starts `launch`, a handler declared by `source`, confined, with its standard streams
    /// piped. `Ok(None)`: the user opted this source out, start it as it is. `Err`: it did not
    /// start; the message says why (it becomes the handler's error).
    #[allow(clippy::type_complexity)]
    fn spawn(
        &self,
        source: &crate::config::HookSource,
        launch: &Launch<'_>,
        timeout: Duration,
    ) -> Result<Option<(Box<dyn ConfinedChild>, Box<dyn ConfinedProcess>)>, String>;
}

/// What a command handler's process is started with.
#[derive(Debug, Clone, Copy)]
pub struct Launch<'a> {
    /// Looked up in `env`'s `PATH` when it holds no `/`.
    pub program: &'a str,
    /// Arguments after the program.
    pub args: &'a [String],
    /// The whole environment.
    pub env: &'a BTreeMap<String, String>,
    /// The directory it starts in.
    pub cwd: &'a Path,
}

/// A confined handler's running process.
pub trait ConfinedChild: Send {
    /// The caller's ends of the piped standard input, output and error (once).
    fn take_stdio(&mut self) -> [Option<std::os::fd::OwnedFd>; 3];
    /// Waits for the process: every process of the call has ended when it returns.
    fn wait(
        &mut self,
    ) -> Pin<Box<dyn Future<Output = std::io::Result<std::process::ExitStatus>> + Send + '_>>;
    /// Ends every process of the call (its deadline passed, or the dispatch was dropped).
    fn end(&mut self);
}

/// A confined handler's process, until it has been waited for.
pub trait ConfinedProcess: Send {
    /// Called once the process has been waited for (every process of the call has ended):
    /// undoes what the call left, and returns lines to add to the handler's stderr (restored
    /// paths, refusals of the sandbox explained with the grant that would allow them).
    /// `exit_code` is the handler's, `None` when it timed out or was killed.
    fn finish(self: Box<Self>, exit_code: Option<i32>, stderr: &str) -> Vec<String>;
}

/// A fully prepared process.
#[derive(Clone)]
pub(crate) struct ProcessSpec {
    pub program: String,
    pub args: Vec<String>,
    pub env: BTreeMap<String, String>,
    pub cwd: PathBuf,
    pub stdin: Arc<str>,
    pub timeout: Duration,
    /// Confines the process, with the handler's source.
    pub confine: Option<(Arc<dyn ProcessConfiner>, crate::config::HookSource)>,
}

impl std::fmt::Debug for ProcessSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProcessSpec")
            .field("program", &self.program)
            .field("args", &self.args)
            .field("cwd", &self.cwd)
            .field("timeout", &self.timeout)
            .field("confined", &self.confine.is_some())
            .finish_non_exhaustive()
    }
}

/// Kills a whole process group when dropped while armed: a cancelled dispatch (or a timeout)
/// must not leave hook processes behind.
struct GroupGuard {
    pgid: Option<i32>,
}

impl GroupGuard {
    fn kill(&mut self) {
        if let Some(pgid) = self.pgid.take() {
            // SAFETY: `kill` has no memory-safety preconditions; a negative pid addresses the
            // process group this guard's child leads (spawned with `process_group(0)`).
            unsafe {
                libc::kill(-pgid, libc::SIGKILL);
            }
        }
    }

    fn disarm(&mut self) {
        self.pgid = None;
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Ends a confined child's call when dropped while armed (a cancelled dispatch).
struct EndGuard(Option<Box<dyn ConfinedChild>>);

impl EndGuard {
    fn child(&mut self) -> &mut dyn ConfinedChild {
        match &mut self.0 {
            Some(c) => c.as_mut(),
            None => unreachable!("the child is taken only when the guard is done"),
        }
    }
}

impl Drop for EndGuard {
    fn drop(&mut self) {
        if let Some(c) = &mut self.0 {
            c.end();
        }
    }
}

type Buffer = Arc<Mutex<Vec<u8>>>;

fn spawn_reader<R: AsyncRead + Unpin + Send + 'static>(
    mut r: R,
    buf: Buffer,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut chunk = vec![0u8; 16 * 1024];
        loop {
            match r.read(&mut chunk).await {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if let Ok(mut b) = buf.lock() {
                        let room = MAX_CAPTURE_BYTES.saturating_sub(b.len());
                        b.extend_from_slice(&chunk[..n.min(room)]);
                    }
                }
            }
        }
    })
}

fn take(buf: &Buffer) -> String {
    match buf.lock() {
        Ok(mut b) => String::from_utf8_lossy(&std::mem::take(&mut *b)).into_owned(),
        Err(_) => String::new(),
    }
}

/// Runs a process, feeding `stdin`: confined where the session confines its source, else in
/// its own process group; everything it started is killed at the timeout.
pub(crate) async fn run_process(spec: ProcessSpec) -> RawOutcome {
    if let Some((confiner, source)) = &spec.confine {
        let launch = Launch {
            program: &spec.program,
            args: &spec.args,
            env: &spec.env,
            cwd: &spec.cwd,
        };
        match confiner.spawn(source, &launch, spec.timeout) {
            Ok(Some((child, finisher))) => return run_confined(&spec, child, finisher).await,
            Ok(None) => {}
            Err(e) => return RawOutcome::error(e),
        }
    }
    run_plain(&spec).await
}

fn feed_stdin<W: tokio::io::AsyncWrite + Unpin + Send + 'static>(mut stdin: W, data: Arc<str>) {
    // A hook that never reads stdin must not stall the call, so the write runs on its own;
    // EPIPE from a hook that exits early is expected and ignored.
    tokio::spawn(async move {
        let _ = stdin.write_all(data.as_bytes()).await;
        let _ = stdin.shutdown().await;
    });
}

/// Waits for the readers to reach end-of-file, at most `grace`.
async fn drain(tasks: [Option<tokio::task::JoinHandle<()>>; 2], grace: Duration) {
    for t in tasks.into_iter().flatten() {
        let abort = t.abort_handle();
        if tokio::time::timeout(grace, t).await.is_err() {
            abort.abort();
        }
    }
}

fn exit_code(status: std::process::ExitStatus) -> Option<i32> {
    status.code().or_else(|| {
        use std::os::unix::process::ExitStatusExt;
        status.signal().map(|s| 128 + s)
    })
}

async fn run_confined(
    spec: &ProcessSpec,
    child: Box<dyn ConfinedChild>,
    finisher: Box<dyn ConfinedProcess>,
) -> RawOutcome {
    let mut child = EndGuard(Some(child));
    let [stdin, stdout, stderr] = child.child().take_stdio();
    if let Some(fd) = stdin
        && let Ok(w) = tokio::process::ChildStdin::from_std(std::process::ChildStdin::from(fd))
    {
        feed_stdin(w, spec.stdin.clone());
    }
    let (out_buf, err_buf): (Buffer, Buffer) = Default::default();
    let out_task = stdout
        .and_then(|fd| tokio::process::ChildStdout::from_std(fd.into()).ok())
        .map(|s| spawn_reader(s, out_buf.clone()));
    let err_task = stderr
        .and_then(|fd| tokio::process::ChildStderr::from_std(fd.into()).ok())
        .map(|s| spawn_reader(s, err_buf.clone()));
    let started = tokio::time::Instant::now();
    let status = match tokio::time::timeout(spec.timeout, child.child().wait()).await {
        Ok(Ok(status)) => status,
        Ok(Err(e)) => {
            child.child().end();
            let _ = child.child().wait().await;
            finisher.finish(None, "");
            return RawOutcome::error(format!("waiting for `{}` failed: {e}", spec.program));
        }
        Err(_) => {
            child.child().end();
            let _ = child.child().wait().await;
            for t in [out_task, err_task].into_iter().flatten() {
                t.abort();
            }
            finisher.finish(None, "");
            return RawOutcome::timed_out();
        }
    };
    // Every process of the call has ended with it: nothing is left to end.
    child.0 = None;
    let grace = spec
        .timeout
        .saturating_sub(started.elapsed())
        .min(PIPE_GRACE);
    drain([out_task, err_task], grace).await;
    let code = exit_code(status);
    let mut stderr = take(&err_buf);
    for note in finisher.finish(code, &stderr) {
        if !stderr.is_empty() && !stderr.ends_with('\n') {
            stderr.push('\n');
        }
        stderr.push_str(&note);
        stderr.push('\n');
    }
    RawOutcome {
        exit_code: code,
        stdout: take(&out_buf),
        stderr,
        timed_out: false,
        error: None,
        json: None,
    }
}

async fn run_plain(spec: &ProcessSpec) -> RawOutcome {
    use std::process::Stdio;
    let mut cmd = tokio::process::Command::new(&spec.program);
    cmd.args(&spec.args)
        .env_clear()
        .envs(&spec.env)
        .current_dir(&spec.cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return RawOutcome::error(format!("cannot start `{}`: {e}", spec.program)),
    };
    let mut guard = GroupGuard {
        pgid: child.id().and_then(|p| i32::try_from(p).ok()),
    };
    if let Some(stdin) = child.stdin.take() {
        feed_stdin(stdin, spec.stdin.clone());
    }
    let (out_buf, err_buf): (Buffer, Buffer) = Default::default();
    let out_task = child
        .stdout
        .take()
        .map(|s| spawn_reader(s, out_buf.clone()));
    let err_task = child
        .stderr
        .take()
        .map(|s| spawn_reader(s, err_buf.clone()));
    let started = tokio::time::Instant::now();
    let status = match tokio::time::timeout(spec.timeout, child.wait()).await {
        Ok(Ok(status)) => status,
        Ok(Err(e)) => {
            guard.kill();
            return RawOutcome::error(format!("waiting for `{}` failed: {e}", spec.program));
        }
        Err(_) => {
            guard.kill();
            let _ = child.wait().await;
            for t in [out_task, err_task].into_iter().flatten() {
                t.abort();
            }
            return RawOutcome::timed_out();
        }
    };
    // The leader has exited; its group may live on (background children are the hook's
    // business, as in Claude Code), so the guard no longer owns it.
    guard.disarm();
    let grace = spec
        .timeout
        .saturating_sub(started.elapsed())
        .min(PIPE_GRACE);
    drain([out_task, err_task], grace).await;
    RawOutcome {
        exit_code: exit_code(status),
        stdout: take(&out_buf),
        stderr: take(&err_buf),
        timed_out: false,
        error: None,
        json: None,
    }
}

/// The result of an HTTP hook.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum HttpOutcome {
    /// A response arrived.
    Response { status: u16, body: String },
    /// Connection or protocol failure.
    Failed(String),
    /// The timeout elapsed.
    TimedOut,
}

fn http_client() -> Result<&'static reqwest::Client, String> {
    static CLIENT: OnceLock<Result<reqwest::Client, String>> = OnceLock::new();
    CLIENT
        .get_or_init(|| {
            reqwest::Client::builder()
                .build()
                .map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// POSTs `body` to `url` with `headers`.
pub(crate) async fn run_http(
    url: &str,
    headers: &[(String, String)],
    body: Arc<str>,
    timeout: Duration,
) -> HttpOutcome {
    let client = match http_client() {
        Ok(c) => c,
        Err(e) => return HttpOutcome::Failed(format!("HTTP client unavailable: {e}")),
    };
    let mut req = client
        .post(url)
        .header("content-type", "application/json")
        .body(body.to_string());
    for (k, v) in headers {
        req = req.header(k.as_str(), v.as_str());
    }
    let fut = async {
        let resp = req.send().await.map_err(|e| e.to_string())?;
        let status = resp.status().as_u16();
        let mut resp = resp;
        let mut body = Vec::new();
        while let Some(chunk) = resp.chunk().await.map_err(|e| e.to_string())? {
            let room = MAX_CAPTURE_BYTES.saturating_sub(body.len());
            body.extend_from_slice(&chunk[..chunk.len().min(room)]);
        }
        Ok::<_, String>((status, String::from_utf8_lossy(&body).into_owned()))
    };
    match tokio::time::timeout(timeout, fut).await {
        Ok(Ok((status, body))) => HttpOutcome::Response { status, body },
        Ok(Err(e)) => HttpOutcome::Failed(e),
        Err(_) => HttpOutcome::TimedOut,
    }
}

/// Interpolates `$VAR` and `${VAR}` in a header value: variables in `allowed` take their value
/// from `env`, all others become empty strings.
pub(crate) fn interpolate_header(
    value: &str,
    allowed: &[String],
    env: &BTreeMap<String, String>,
) -> String {
    static RE: OnceLock<Option<regex::Regex>> = OnceLock::new();
    let Some(re) = RE.get_or_init(|| {
        regex::Regex::new(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)").ok()
    }) else {
        return value.to_string();
    };
    re.replace_all(value, |c: &regex::Captures<'_>| {
        let name = c
            .get(1)
            .or_else(|| c.get(2))
            .map(|m| m.as_str())
            .unwrap_or_default();
        if allowed.iter().any(|a| a == name) {
            env.get(name).cloned().unwrap_or_default()
        } else {
            String::new()
        }
    })
    .into_owned()
}
