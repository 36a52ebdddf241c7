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
//! Who may ask: the service listens on loopback only, and on Linux answers only connections
//! whose socket belongs to the same user (the kernel's sock_diag names the owner of the
//! client's socket): another local user
//! cannot run this user's hooks, nor read what they answer. Elsewhere it refuses to start.
//!
//! Life cycle: `warden serve --ensure` (the bridge's SessionStart command hook) starts the
//! service in the background unless one already answers, and waits until it does; the
//! service exits after `--idle-exit` seconds without a request. One service serves every
//! concurrent session of the user.

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
  warden serve --listen 127.0.0.1:0 --verbose   any free port, with configuration warnings")]
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
    /// Claude Code runs its own command hooks itself).
    #[arg(long)]
    all_handlers: bool,
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
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    rt.block_on(serve(args))
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

fn ensure(args: &Args) -> anyhow::Result<ExitCode> {
    if healthy(args.listen, Duration::from_millis(300)) {
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
    for s in &args.session.settings {
        cmd.args(["--settings", s]);
    }
    for d in &args.session.plugin_dirs {
        // The service runs elsewhere: a relative directory must mean what it meant here.
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
        if healthy(args.listen, Duration::from_millis(200)) {
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

async fn serve(args: Args) -> anyhow::Result<ExitCode> {
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
        if !same_user(peer, local) {
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
    match answer(event, &input, &state.session, state.bridge.clone()).await {
        Ok(a) => http_answer(event, a),
        // Not an answer: with `onFailure: "block"` Claude Code blocks the call.
        Err(e) => respond(
            StatusCode::INTERNAL_SERVER_ERROR,
            json!({"error": format!("{e:#}")}).to_string(),
        ),
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

/// Whether the connection from `peer` to `local` comes from a socket this user owns: the
/// kernel is asked for the owner of the client's socket (sock_diag, one netlink round trip),
/// or where that is unavailable, `/proc/net/tcp` is searched (which walks every socket of the
/// machine, so it is the fallback).
fn same_user(peer: SocketAddr, local: SocketAddr) -> bool {
    // SAFETY: geteuid(2) cannot fail and touches no memory.
    let me = unsafe { libc::geteuid() };
    match socket_owner(peer, local) {
        Some(uid) => uid == me,
        None => proc_owner(peer, local) == Some(me),
    }
}

/// The owner of the TCP socket whose local end is `src` and remote end is `dst`, from
/// `SOCK_DIAG_BY_FAMILY` (linux/inet_diag.h). `None` when the kernel cannot say.
fn socket_owner(src: SocketAddr, dst: SocketAddr) -> Option<u32> {
    use std::os::fd::{FromRawFd, OwnedFd};
    const NETLINK_SOCK_DIAG: libc::c_int = 4;
    const SOCK_DIAG_BY_FAMILY: u16 = 20;
    const NLMSG_ERROR: u16 = 2;
    let (family, addr_words) = match (src, dst) {
        (SocketAddr::V4(s), SocketAddr::V4(d)) => {
            let mut s16 = [0u8; 16];
            let mut d16 = [0u8; 16];
            s16[..4].copy_from_slice(&s.ip().octets());
            d16[..4].copy_from_slice(&d.ip().octets());
            (libc::AF_INET as u8, (s16, d16))
        }
        (SocketAddr::V6(s), SocketAddr::V6(d)) => {
            (libc::AF_INET6 as u8, (s.ip().octets(), d.ip().octets()))
        }
        _ => return None,
    };
    // struct nlmsghdr (16) + struct inet_diag_req_v2 (56).
    let mut req = Vec::with_capacity(72);
    req.extend_from_slice(&72u32.to_ne_bytes());
    req.extend_from_slice(&SOCK_DIAG_BY_FAMILY.to_ne_bytes());
    req.extend_from_slice(&(libc::NLM_F_REQUEST as u16).to_ne_bytes());
    req.extend_from_slice(&1u32.to_ne_bytes()); // seq
    req.extend_from_slice(&0u32.to_ne_bytes()); // pid: the kernel
    req.extend_from_slice(&[family, libc::IPPROTO_TCP as u8, 0, 0]);
    req.extend_from_slice(&u32::MAX.to_ne_bytes()); // every state
    req.extend_from_slice(&src.port().to_be_bytes());
    req.extend_from_slice(&dst.port().to_be_bytes());
    req.extend_from_slice(&addr_words.0);
    req.extend_from_slice(&addr_words.1);
    req.extend_from_slice(&0u32.to_ne_bytes()); // interface
    req.extend_from_slice(&u32::MAX.to_ne_bytes()); // no cookie
    req.extend_from_slice(&u32::MAX.to_ne_bytes());
    // SAFETY: plain socket(2); the descriptor is owned right away.
    let fd = unsafe {
        libc::socket(
            libc::AF_NETLINK,
            libc::SOCK_DGRAM | libc::SOCK_CLOEXEC,
            NETLINK_SOCK_DIAG,
        )
    };
    if fd < 0 {
        return None;
    }
    // SAFETY: `fd` was just returned by socket(2) and belongs to nobody else.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    use std::os::fd::AsRawFd;
    // SAFETY: an all-zero sockaddr_nl is valid; family set below; pid 0 is the kernel.
    let mut kernel: libc::sockaddr_nl = unsafe { std::mem::zeroed() };
    kernel.nl_family = libc::AF_NETLINK as libc::sa_family_t;
    // SAFETY: `req` and `kernel` are valid for the lengths given.
    let sent = unsafe {
        libc::sendto(
            fd.as_raw_fd(),
            req.as_ptr().cast(),
            req.len(),
            0,
            (&raw const kernel).cast(),
            std::mem::size_of::<libc::sockaddr_nl>() as libc::socklen_t,
        )
    };
    if sent != req.len() as isize {
        return None;
    }
    let mut buf = [0u8; 1024];
    let timeout = libc::timeval {
        tv_sec: 1,
        tv_usec: 0,
    };
    // SAFETY: setsockopt(2) reads `timeout` for its size.
    unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVTIMEO,
            (&raw const timeout).cast(),
            std::mem::size_of::<libc::timeval>() as libc::socklen_t,
        );
    }
    // SAFETY: recv(2) writes at most `buf.len()` bytes into `buf`.
    let n = unsafe { libc::recv(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), 0) };
    let n = usize::try_from(n).ok()?;
    // nlmsghdr, then struct inet_diag_msg: family, state, timer, retrans (4), the socket id
    // (48), expires, rqueue, wqueue (12), uid.
    let msg_type = u16::from_ne_bytes(buf.get(4..6)?.try_into().ok()?);
    if msg_type == NLMSG_ERROR || msg_type != SOCK_DIAG_BY_FAMILY || n < 16 + 68 {
        return None;
    }
    Some(u32::from_ne_bytes(buf.get(80..84)?.try_into().ok()?))
}

/// The owner of the socket from `src` to `dst`, from `/proc/net/tcp` (and `tcp6`): the
/// client's socket is the one whose local end is `src` and remote end is `dst`.
fn proc_owner(src: SocketAddr, dst: SocketAddr) -> Option<u32> {
    let table = if src.is_ipv4() {
        "/proc/net/tcp"
    } else {
        "/proc/net/tcp6"
    };
    let text = std::fs::read_to_string(table).ok()?;
    let (want_local, want_remote) = (proc_addr(src), proc_addr(dst));
    text.lines().skip(1).find_map(|line| {
        let f: Vec<&str> = line.split_whitespace().collect();
        (f.len() > 7
            && f[1].eq_ignore_ascii_case(&want_local)
            && f[2].eq_ignore_ascii_case(&want_remote))
        .then(|| f[7].parse::<u32>().ok())
        .flatten()
    })
}

/// An address as `/proc/net/tcp` prints it: the address in 32-bit words of host byte order,
/// in hex, then the port.
fn proc_addr(a: SocketAddr) -> String {
    let words: Vec<u32> = match a {
        SocketAddr::V4(v4) => vec![u32::from_ne_bytes(v4.ip().octets())],
        SocketAddr::V6(v6) => v6
            .ip()
            .octets()
            .chunks_exact(4)
            .map(|c| u32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
            .collect(),
    };
    let hex: String = words.iter().map(|w| format!("{w:08X}")).collect();
    format!("{hex}:{:04X}", a.port())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_are_spelled_as_proc_spells_them() {
        let v4: SocketAddr = "127.0.0.1:47017".parse().expect("addr");
        assert_eq!(proc_addr(v4), "0100007F:B7A9");
        let v6: SocketAddr = "[::1]:80".parse().expect("addr");
        assert_eq!(proc_addr(v6), "00000000000000000000000001000000:0050");
    }

    #[test]
    fn a_connection_from_this_user_is_recognised() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let local = l.local_addr().expect("addr");
        let c = std::net::TcpStream::connect(local).expect("connect");
        let (_s, peer) = l.accept().expect("accept");
        assert_eq!(peer, c.local_addr().expect("client addr"));
        assert!(same_user(peer, local));
        // SAFETY: geteuid cannot fail.
        let me = unsafe { libc::geteuid() };
        // Both ways of asking name the same owner.
        assert_eq!(socket_owner(peer, local), Some(me));
        assert_eq!(proc_owner(peer, local), Some(me));
        // A connection that does not exist belongs to nobody.
        let stranger = SocketAddr::new(peer.ip(), peer.port().wrapping_add(1).max(1));
        assert!(!same_user(stranger, local));
        assert_eq!(socket_owner(stranger, local), None);
    }
}
