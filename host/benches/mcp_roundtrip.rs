//! What MCP adds to a tool call, measured side by side in one run.
//!
//! `cargo bench --workspace --bench mcp_roundtrip` prints p50/p99 of, interleaved round by
//! round so load on the machine hits both rows alike:
//! 1. the built-in `Read` tool called in process through the session's pipeline (rules, a
//!    fresh WebAssembly sandbox, the fs capability);
//! 2. the same call as a `tools/call` round trip to `warden mcp serve` over stdio, from an
//!    MCP client on the official Rust SDK (`rmcp`), which adds framing, JSON-RPC and two
//!    pipe crossings to the same pipeline.
//!
//! The difference of the two p50s is MCP's overhead per call (goal: ≤ 100 µs).

use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::TokioChildProcess;
use serde_json::json;
use warden::session::{DenyAsker, Session, SessionOptions, ToolStatus};
use warden_config::Home;

const ROUNDS: usize = 400;

fn p(samples: &mut [Duration], q: f64) -> Duration {
    samples.sort();
    samples[((samples.len() as f64 - 1.0) * q).round() as usize]
}

fn us(d: Duration) -> String {
    format!("{:.1} µs", d.as_secs_f64() * 1e6)
}

/// The thinnest possible client: JSON-RPC lines written to the server's stdin and read from
/// its stdout with blocking pipes, so row 4 minus row 1 is what the server adds.
struct RawClient {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    stdout: std::io::BufReader<std::process::ChildStdout>,
    line: String,
}

impl RawClient {
    fn start(proj: &std::path::Path, home: &std::path::Path) -> RawClient {
        use std::process::Stdio;
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_warden"))
            .args(["mcp", "serve", "--cwd"])
            .arg(proj)
            .env("WARDEN_HOME", home)
            .env("WARDEN_NO_CLAUDE_CONFIG", "1")
            .env("WARDEN_MANAGED_SETTINGS_DIR", "")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start warden mcp serve");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = std::io::BufReader::new(child.stdout.take().expect("stdout"));
        let mut c = RawClient {
            child,
            stdin,
            stdout,
            line: String::new(),
        };
        c.call(
            &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "bench", "version": "0"}}}),
        );
        c.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        c
    }

    fn send(&mut self, v: &serde_json::Value) {
        use std::io::Write;
        let mut bytes = serde_json::to_vec(v).expect("json");
        bytes.push(b'\n');
        self.stdin.write_all(&bytes).expect("write");
        self.stdin.flush().expect("flush");
    }

    fn call(&mut self, v: &serde_json::Value) {
        use std::io::BufRead;
        self.send(v);
        self.line.clear();
        self.stdout.read_line(&mut self.line).expect("read");
        assert!(self.line.contains("\"result\""), "{}", self.line);
    }
}

impl Drop for RawClient {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn main() {
    let dir = tempfile::tempdir().expect("tempdir");
    let proj = dir.path().join("proj");
    let home = dir.path().join("home");
    std::fs::create_dir_all(proj.join(".claude")).expect("mkdir");
    std::fs::create_dir_all(&home).expect("mkdir");
    let proj = proj.canonicalize().expect("canonical");
    let file = proj.join("notes.txt");
    std::fs::write(&file, "a line of notes\n".repeat(20)).expect("write");
    std::fs::write(
        proj.join(".claude/settings.json"),
        json!({"permissions": {"allow": ["Read"]}}).to_string(),
    )
    .expect("settings");
    let input = json!({"file_path": file.display().to_string()});

    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");

    let mut opts = SessionOptions::new(&proj, Home::new(&home));
    opts.managed_dir = None;
    opts.claude_config = warden_config::ClaudeConfig::default();
    opts.runtime.pooling = true;
    let session = Arc::new(Session::load(&opts));

    // The client gets a runtime of its own, on one thread, as a simple MCP client would.
    let crt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_warden"));
    cmd.args(["mcp", "serve", "--cwd"])
        .arg(&proj)
        .env("WARDEN_HOME", &home)
        .env("WARDEN_NO_CLAUDE_CONFIG", "1")
        .env("WARDEN_MANAGED_SETTINGS_DIR", "");
    let client = crt.block_on(async {
        let transport = TokioChildProcess::new(cmd).expect("start warden mcp serve");
        ().serve(transport).await.expect("initialize")
    });
    let args = input.as_object().cloned().expect("object");
    let mut raw = RawClient::start(&proj, &home);
    let raw_call = json!({"jsonrpc": "2.0", "id": 0, "method": "tools/call",
        "params": {"name": "Read", "arguments": input}});

    let in_process = || {
        rt.block_on(async {
            let o = session
                .call_tool("Read", input.clone(), &DenyAsker)
                .await
                .expect("call");
            assert!(matches!(o.status, ToolStatus::Ok { .. }), "{o:?}");
        })
    };
    let over_mcp = || {
        crt.block_on(async {
            let r = client
                .peer()
                .call_tool(CallToolRequestParams::new("Read").with_arguments(args.clone()))
                .await
                .expect("tools/call");
            assert_eq!(r.is_error, Some(false), "{r:?}");
        })
    };
    // A request the server answers without running anything: the protocol's own cost.
    let protocol_only = || {
        crt.block_on(async {
            let ping = rmcp::model::ClientRequest::PingRequest(rmcp::model::PingRequest {
                method: Default::default(),
                extensions: Default::default(),
            });
            client.peer().send_request(ping).await.expect("ping");
        })
    };
    // Warm both: the first call compiles and instantiates.
    for _ in 0..20 {
        in_process();
        over_mcp();
        raw.call(&raw_call);
    }
    let (mut a, mut b, mut c, mut d) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        let t = Instant::now();
        raw.call(&raw_call);
        d.push(t.elapsed());
        let t = Instant::now();
        protocol_only();
        c.push(t.elapsed());
        let t = Instant::now();
        in_process();
        a.push(t.elapsed());
        let t = Instant::now();
        over_mcp();
        b.push(t.elapsed());
    }
    let (a50, a99) = (p(&mut a, 0.5), p(&mut a, 0.99));
    let (b50, b99) = (p(&mut b, 0.5), p(&mut b, 0.99));
    println!("Read tool call, {ROUNDS} rounds interleaved (p50 / p99):");
    println!(
        "  1. in process, session pipeline        {:>10} / {:>10}",
        us(a50),
        us(a99)
    );
    println!(
        "  2. tools/call via warden mcp serve      {:>10} / {:>10}",
        us(b50),
        us(b99)
    );
    let (c50, c99) = (p(&mut c, 0.5), p(&mut c, 0.99));
    println!(
        "  3. ping to warden mcp serve             {:>10} / {:>10}",
        us(c50),
        us(c99)
    );
    let (d50, d99) = (p(&mut d, 0.5), p(&mut d, 0.99));
    println!(
        "  4. tools/call, line-level client        {:>10} / {:>10}",
        us(d50),
        us(d99)
    );
    println!(
        "  server-side MCP overhead at p50 (4 - 1): {}",
        us(d50.saturating_sub(a50))
    );
    println!(
        "  MCP overhead at p50: {} ({:.2}x)",
        us(b50.saturating_sub(a50)),
        b50.as_secs_f64() / a50.as_secs_f64()
    );
    crt.block_on(async {
        let _ = client.cancel().await;
    });
}
