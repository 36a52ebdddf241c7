//! `warden serve`: the bridge as a local HTTP service, for Claude Code's `http` hooks.
//!
//! `warden hook` starts a whole process per event. `warden serve` answers the same events
//! from one long-lived process that keeps the engine, the compiled components and the
//! instance templates warm: Claude Code POSTs the hook input to
//! `http://127.0.0.1:47017/hook/<Event>` and gets the same answer `warden hook --wasm-only
//! <Event>` would print, as a 2xx JSON decision (an HTTP hook cannot block by exit code, so
//! what would be exit 2 becomes a deny or block decision carrying the reason).
//!
//! Fail closed: the bridge plugin declares its guard hooks with `"onFailure": "block"`, so a
//! service that is down, slow or answering with an error blocks the call in Claude Code. The
//! settings and installed plugins are read afresh for every event, as `warden hook` does.
//!
//! Who may ask ([`warden::peer`]): the service listens on loopback only, and on Linux answers
//! only connections whose socket belongs to the same user (the kernel's sock_diag names the
//! owner of the client's socket): another local user cannot run this user's hooks, nor read
//! what they answer. Elsewhere it refuses to start. A request must name the service's own
//! address as `Host` and carry no `Origin` but the service's own, and a hook input must be
//! `application/json`: a web page in the user's browser, which can reach loopback too, gets a
//! 403 (or 415) and runs nothing.
//!
//! Which projects ([`warden::opened`]): with `--all-handlers` the service runs command hooks,
//! with the user's rights, from the settings of the session's project, so it runs events only
//! for the projects it was started for (the directory it starts in, or `--cwd`, and each
//! `--project`), each in the opened project holding its `cwd`. An event elsewhere runs
//! nothing: a guard event is denied with the reason, another is a 403. Without
//! `--all-handlers` only WASM handlers of installed plugins run, sandboxed, for any project.
//!
//! Life cycle: `warden serve --ensure` (the bridge's SessionStart command hook) starts the
//! service in the background unless one already answers, and waits until it does; the
//! service exits after `--idle-exit` seconds without a request. One service serves every
//! concurrent session of the user. Before it trusts what answers, `--ensure` checks that the
//! socket listening at the address is this user's: if another user's is, it prints
//! `{"continue": false, …}` (Claude Code then stops the session, whose `http` hooks would go to
//! that listener) and fails.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::{Method, Request, Response, StatusCode};
use serde_json::{Value, json};
use warden::opened::OpenedProjects;
use warden::peer::{self, Listener, PeerError};
use warden_hooks::Event;

use super::SessionArgs;
use super::hook::{Answer, Bridge, answer, parse_input};

/// Where the bridge plugin's `http` hooks find the service.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:47017";

/// Largest hook input accepted (Claude Code's inputs are a few KiB; a tool input can be
/// large, an edit of a big file).
const MAX_BODY: usize = 32 << 20;

/// Arguments.
#[derive(clap::Args)]
#[command(after_help = "Examples:
  warden serve                                  answer hook events on 127.0.0.1:47017
  warden serve --ensure                         start it in the background unless it runs (a SessionStart hook)
  warden serve --listen 127.0.0.1:0 --verbose   any free port, with configuration warnings
  warden serve --all-handlers --project ../lib  command hooks too, for this project and ../lib")]
pub struct Args {
    /// Loopback address to listen on.
    #[arg(long, default_value = DEFAULT_LISTEN)]
    listen: SocketAddr,
    /// Exit after this many seconds without a request (0: never).
    #[arg(long, default_value_t = 900)]
    idle_exit: u64,
    /// Start the service in the background unless one already answers at `--listen`, wait
    /// until it answers, and exit (for a SessionStart hook).
    #[arg(long)]
    ensure: bool,
    /// Run every handler, not only WASM ones (the bridge runs only WASM handlers, since
    /// Claude Code runs its own command hooks itself). Command hooks run with your rights, so
    /// only for events whose `cwd` lies in a project the service was started for: the
    /// directory it starts in (or `--cwd`) and each `--project`.
    #[arg(long)]
    all_handlers: bool,
    /// With `--all-handlers`: another project whose hooks the service may run (repeatable).
    #[arg(long, value_name = "DIR", requires = "all_handlers")]
    project: Vec<PathBuf>,
    #[command(flatten)]
    session: SessionArgs,
    /// Print configuration warnings with each answer.
    #[arg(long)]
    verbose: bool,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if !args.listen.ip().is_loopback() {
        anyhow::bail!(
            "--listen {}: warden serve listens on loopback addresses only",
            args.listen
        );
    }
    if !cfg!(target_os = "linux") {
        anyhow::bail!(
            "warden serve needs Linux to tell which user a connection comes from; use `warden hook` instead"
        );
    }
    if args.ensure {
        return ensure(&args);
    }
    // Resolved before the service starts, so a project that does not exist is an error now
    // rather than a refusal of every event later.
    let opened = if args.all_handlers {
        let start = match &args.session.cwd {
            Some(dir) => dir.clone(),
            None => std::env::current_dir().context("finding the current directory")?,
        };
        Some(OpenedProjects::new(
            std::iter::once(start).chain(args.project.iter().cloned()),
        )?)
    } else {
        None
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    rt.block_on(serve(args, opened))
}

/// Whether a service answers at `addr` (a `GET /health` within `wait`).
fn healthy(addr: SocketAddr, wait: Duration) -> bool {
    use std::io::{Read, Write};
    let Ok(mut s) = std::net::TcpStream::connect_timeout(&addr, wait) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(wait));
    let _ = s.set_write_timeout(Some(wait));
    let req = format!("GET /health HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    if s.write_all(req.as_bytes()).is_err() {
        return false;
    }
    let mut buf = Vec::new();
    let _ = s.take(64 << 10).read_to_end(&mut buf);
    let text = String::from_utf8_lossy(&buf);
    text.starts_with("HTTP/1.1 200") && text.contains("\"service\":\"warden\"")
}

/// Whether this user's service answers at `addr`: another user's listener there is an error,
/// before and after the exchange (so a listener that changed hands during it is caught).
fn ours_healthy(addr: SocketAddr, wait: Duration) -> Result<bool, PeerError> {
    if peer::listener_at(addr)? == Listener::Nobody {
        return Ok(false);
    }
    let up = healthy(addr, wait);
    Ok(peer::listener_at(addr)? == Listener::Mine && up)
}

/// `--ensure` found the address unusable: Claude Code's `http` hooks would still go there, so
/// the session is stopped (`continue: false`, read from stdout whatever the exit code), and
/// the command fails with the reason.
fn refuse_listener(e: PeerError) -> anyhow::Error {
    let e = anyhow::Error::from(e);
    let reason = format!("warden serve --ensure: {e:#}; the session is stopped");
    println!("{}", json!({"continue": false, "stopReason": reason}));
    e
}

fn ensure(args: &Args) -> anyhow::Result<ExitCode> {
    if ours_healthy(args.listen, Duration::from_millis(300)).map_err(refuse_listener)? {
        return Ok(ExitCode::SUCCESS);
    }
    let exe = std::env::current_exe().context("finding the warden binary")?;
    let mut cmd = std::process::Command::new(exe);
    cmd.args([
        "serve",
        "--listen",
        &args.listen.to_string(),
        "--idle-exit",
        &args.idle_exit.to_string(),
    ]);
    if args.all_handlers {
        cmd.arg("--all-handlers");
    }
    // The service runs elsewhere: relative directories must mean what they meant here. Its
    // working directory is this one, the project it is started for.
    if let Some(dir) = &args.session.cwd {
        cmd.arg("--cwd").arg(std::path::absolute(dir)?);
    }
    for dir in &args.project {
        cmd.arg("--project").arg(std::path::absolute(dir)?);
    }
    for s in &args.session.settings {
        cmd.args(["--settings", s]);
    }
    for d in &args.session.plugin_dirs {
        cmd.arg("--plugin-dir").arg(std::path::absolute(d)?);
    }
    if let Some(mode) = &args.session.mode {
        cmd.args(["--mode", mode]);
    }
    let log = log_file();
    let out = log
        .as_ref()
        .and_then(|p| {
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(p)
                .ok()
        })
        .map_or_else(std::process::Stdio::null, std::process::Stdio::from);
    cmd.stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(out);
    {
        use std::os::unix::process::CommandExt;
        // Its own session: the service outlives the hook process that started it, and the
        // terminal's signals are not its business.
        // SAFETY: setsid(2) is async-signal-safe and touches no memory of this process.
        unsafe {
            cmd.pre_exec(|| {
                if libc::setsid() < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
    cmd.spawn()
        .context("starting warden serve in the background")?;
    let until = Instant::now() + Duration::from_secs(5);
    while Instant::now() < until {
        if ours_healthy(args.listen, Duration::from_millis(200)).map_err(refuse_listener)? {
            return Ok(ExitCode::SUCCESS);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    anyhow::bail!(
        "warden serve did not answer at {} within 5 s{}",
        args.listen,
        log.map(|p| format!("; see {}", p.display()))
            .unwrap_or_default()
    )
}

/// `serve.log` in Warden's home, where a background service writes its errors.
fn log_file() -> Option<PathBuf> {
    let home = warden_config::Home::from_env().ok()?;
    std::fs::create_dir_all(home.root()).ok()?;
    Some(home.root().join("serve.log"))
}

struct State {
    session: SessionArgs,
    bridge: Bridge,
    /// With `--all-handlers`: the projects whose events run.
    opened: Option<OpenedProjects>,
    /// The address requests must name as `Host`.
    local: SocketAddr,
    last_request: AtomicU64,
    active: AtomicUsize,
    started: Instant,
}

impl State {
    fn touch(&self) {
        let now = u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.last_request.store(now, Ordering::Relaxed);
    }

    fn idle_for(&self) -> Duration {
        let now = self.started.elapsed();
        now.saturating_sub(Duration::from_millis(
            self.last_request.load(Ordering::Relaxed),
        ))
    }
}

async fn serve(args: Args, opened: Option<OpenedProjects>) -> anyhow::Result<ExitCode> {
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .with_context(|| format!("listening on {}", args.listen))?;
    let local = listener.local_addr()?;
    eprintln!(
        "warden serve: listening on http://{local} (pid {})",
        std::process::id()
    );
    // One runtime and one set of loaded components for every event this process answers:
    // what makes an answer cheaper than a `warden hook` process.
    let template = match args.session.options(None)? {
        Ok(o) => o,
        Err(e) => anyhow::bail!("{}", e.0),
    };
    let runtime = warden::runtime::Runtime::shared(template.runtime)?;
    let components = Arc::new(warden::runtime::ComponentCache::new(runtime));
    let state = Arc::new(State {
        session: args.session.clone(),
        bridge: Bridge {
            wasm_only: !args.all_handlers,
            verbose: args.verbose,
            project_dir: None,
            components: Some(components),
        },
        opened,
        local,
        last_request: AtomicU64::new(0),
        active: AtomicUsize::new(0),
        started: Instant::now(),
    });
    let idle = (args.idle_exit > 0).then(|| Duration::from_secs(args.idle_exit));
    loop {
        let accepted = match idle {
            Some(limit) => {
                let left = limit.saturating_sub(state.idle_for());
                match tokio::time::timeout(left.max(Duration::from_millis(50)), listener.accept())
                    .await
                {
                    Ok(a) => a,
                    Err(_) => {
                        if state.active.load(Ordering::Relaxed) == 0 && state.idle_for() >= limit {
                            eprintln!("warden serve: idle for {}s, exiting", limit.as_secs());
                            return Ok(ExitCode::SUCCESS);
                        }
                        continue;
                    }
                }
            }
            None => listener.accept().await,
        };
        let (stream, peer) = match accepted {
            Ok(a) => a,
            Err(e) => {
                eprintln!("warden serve: accept: {e}");
                continue;
            }
        };
        if !peer::same_user(peer, local) {
            // Not this user's: say nothing, not even an error page.
            drop(stream);
            continue;
        }
        let _ = stream.set_nodelay(true);
        let state = state.clone();
        tokio::spawn(async move {
            let io = hyper_util::rt::TokioIo::new(stream);
            let svc = hyper::service::service_fn(move |req| handle(req, state.clone()));
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(io, svc)
                .await;
        });
    }
}

fn respond(status: StatusCode, body: String) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(Bytes::from(body)));
    *r.status_mut() = status;
    r.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    r
}

async fn handle(
    req: Request<Incoming>,
    state: Arc<State>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    state.touch();
    state.active.fetch_add(1, Ordering::Relaxed);
    let r = route(req, &state).await;
    state.active.fetch_sub(1, Ordering::Relaxed);
    state.touch();
    Ok(r)
}

async fn route(req: Request<Incoming>, state: &State) -> Response<Full<Bytes>> {
    let headers = req.headers();
    let values = |name| {
        headers
            .get_all(name)
            .iter()
            .map(|v| v.as_bytes())
            .collect::<Vec<_>>()
    };
    if let Err(e) = peer::check_local_request(
        &values(hyper::header::HOST),
        &values(hyper::header::ORIGIN),
        state.local,
    ) {
        return respond(
            StatusCode::FORBIDDEN,
            json!({"error": e.to_string()}).to_string(),
        );
    }
    let path = req.uri().path().to_string();
    if req.method() == Method::GET && path == "/health" {
        let body = json!({"service": "warden", "version": env!("CARGO_PKG_VERSION"), "pid": std::process::id()});
        return respond(StatusCode::OK, body.to_string());
    }
    let Some(name) = path.strip_prefix("/hook/") else {
        return respond(
            StatusCode::NOT_FOUND,
            json!({"error": format!("no such endpoint {path}; POST /hook/<Event>")}).to_string(),
        );
    };
    if req.method() != Method::POST {
        return respond(
            StatusCode::METHOD_NOT_ALLOWED,
            json!({"error": "POST the hook input"}).to_string(),
        );
    }
    let event: Event = match name.parse() {
        Ok(e) => e,
        Err(e) => {
            return respond(
                StatusCode::NOT_FOUND,
                json!({"error": e.to_string()}).to_string(),
            );
        }
    };
    // Claude Code sends JSON; a browser sends `text/plain` and the other "simple" types
    // without asking the service first, and JSON only after a preflight this service never
    // answers.
    let json_type = req
        .headers()
        .get(hyper::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|t| t.trim().eq_ignore_ascii_case("application/json"));
    if !json_type {
        return respond(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            json!({"error": "POST the hook input as Content-Type: application/json"}).to_string(),
        );
    }
    let body = match Limited::new(req.into_body(), MAX_BODY).collect().await {
        Ok(b) => b.to_bytes(),
        Err(e) => {
            return respond(
                StatusCode::PAYLOAD_TOO_LARGE,
                json!({"error": format!("reading the hook input: {e}")}).to_string(),
            );
        }
    };
    let input = match std::str::from_utf8(&body)
        .map_err(anyhow::Error::from)
        .and_then(parse_input)
    {
        Ok(v) => v,
        Err(e) => {
            return respond(
                StatusCode::BAD_REQUEST,
                json!({"error": format!("{e:#}")}).to_string(),
            );
        }
    };
    let mut session = state.session.clone();
    if let Some(opened) = &state.opened {
        let cwd = input.get("cwd").and_then(Value::as_str).unwrap_or("");
        match opened.project_of(std::path::Path::new(cwd)) {
            // The session is the opened project's, whatever directory inside it `cwd` names.
            Some(root) => session.cwd = Some(root.to_path_buf()),
            None => return not_opened(event, cwd, opened),
        }
    }
    match answer(event, &input, &session, state.bridge.clone()).await {
        Ok(a) => http_answer(event, a),
        // Not an answer: with `onFailure: "block"` Claude Code blocks the call.
        Err(e) => respond(
            StatusCode::INTERNAL_SERVER_ERROR,
            json!({"error": format!("{e:#}")}).to_string(),
        ),
    }
}

/// The answer to an event whose `cwd` lies in no project the service was started for: a guard
/// event is blocked with the reason, as for any guard that cannot run; another event is
/// refused.
fn not_opened(event: Event, cwd: &str, opened: &OpenedProjects) -> Response<Full<Bytes>> {
    let roots: Vec<String> = opened
        .roots()
        .iter()
        .map(|r| r.display().to_string())
        .collect();
    let reason = format!(
        "warden serve runs hooks only for the projects it was started for ({}), and the event's cwd `{cwd}` is in none of them; start it there, or add `--project <DIR>`",
        roots.join(", ")
    );
    if matches!(event, Event::PreToolUse | Event::PermissionRequest) {
        http_answer(
            event,
            Answer {
                stdout: String::new(),
                stderr: vec![reason],
                code: 2,
            },
        )
    } else {
        respond(StatusCode::FORBIDDEN, json!({"error": reason}).to_string())
    }
}

/// An answer as an HTTP hook gives it: exit 0 is its JSON (or an empty body); exit 2 is a
/// decision that blocks the way exit 2 does for the event, carrying the reason; any other exit
/// is an error status, which Claude Code treats as a failed hook.
fn http_answer(event: Event, a: Answer) -> Response<Full<Bytes>> {
    match a.code {
        0 => respond(StatusCode::OK, a.stdout),
        2 => {
            let reason: Vec<&str> = a
                .stderr
                .iter()
                .map(String::as_str)
                .filter(|l| !l.starts_with("warning: "))
                .collect();
            let reason = if reason.is_empty() {
                "blocked by a Warden hook".to_string()
            } else {
                reason.join("\n")
            };
            respond(StatusCode::OK, blocking_json(event, &reason).to_string())
        }
        code => respond(
            StatusCode::INTERNAL_SERVER_ERROR,
            json!({"error": format!("the hooks ended with exit code {code}"), "stderr": a.stderr.join("\n")})
                .to_string(),
        ),
    }
}

/// The JSON that blocks `event` as exit 2 would (spec 1.10): a deny for the permission
/// events, a block decision for the rest.
fn blocking_json(event: Event, reason: &str) -> Value {
    match event {
        Event::PreToolUse => json!({"hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        }}),
        Event::PermissionRequest => json!({"hookSpecificOutput": {
            "hookEventName": "PermissionRequest",
            "decision": {"behavior": "deny", "message": reason},
        }}),
        _ => json!({"decision": "block", "reason": reason}),
    }
}
