//! Hook latency: WASM hooks in fresh sandboxes against command hooks run the way Claude Code
//! runs them, measured side by side in one run.
//!
//! `cargo bench -p warden --bench hook_latency` prints, before criterion's own report:
//! 1. one PreToolUse decision by the protect-secrets component in a fresh sandbox (the lean
//!    `no_std` build, and the same decision code built with std) vs the same decision by a
//!    `bash` + `jq` command hook reading stdin (p50/p99 and the ratios);
//! 2. warm start: loading 100 distinct cached components into a new runtime (zero compiles);
//! 3. one PreToolUse dispatched through 10 matching WASM hooks in parallel (lean, and std) vs
//!    10 command hooks;
//! 4. the bridge as Claude Code runs it: one `warden hook` process per event, compile cache
//!    warm, vs a bare `bash -c true` hook;
//! 5. the bridge as a service (`warden serve`), one HTTP POST per event on a fresh connection,
//!    interleaved with bare `bash -c true` spawns.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::Criterion;
use serde_json::{Value, json};
use warden::hook_result::Decision;
use warden::runtime::{
    CacheOutcome, CallContext, DigestPin, Grant, Limits, Runtime, RuntimeConfig, World,
};
use warden::session::{Session, SessionOptions};
use warden_hooks::{Event, dispatch};

const JQ_HOOK: &str = r#"jq -e '(.tool_input.file_path // "") | test("(^|/)(\\.env(\\..*)?|[^/]*\\.pem|id_rsa[^/]*)$|(^|/)secrets/")' >/dev/null && echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"protected"}}'; exit 0"#;

fn event() -> Value {
    json!({
        "session_id": "00000000-0000-4000-8000-000000000000",
        "transcript_path": "/tmp/t.jsonl",
        "cwd": "/tmp",
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": "Read",
        "tool_input": {"file_path": "/home/dev/project/.env"},
        "tool_use_id": "toolu_bench",
    })
}

struct Stats {
    p50: Duration,
    p99: Duration,
}

fn stats(mut samples: Vec<Duration>) -> Stats {
    samples.sort();
    let at = |q: f64| samples[((samples.len() as f64 - 1.0) * q).round() as usize];
    Stats {
        p50: at(0.50),
        p99: at(0.99),
    }
}

fn fmt(d: Duration) -> String {
    if d < Duration::from_millis(1) {
        format!("{:.1} µs", d.as_secs_f64() * 1e6)
    } else {
        format!("{:.2} ms", d.as_secs_f64() * 1e3)
    }
}

fn row(name: &str, s: &Stats, n: usize) {
    println!(
        "  {name:<52} p50 {:>10}   p99 {:>10}   (n={n})",
        fmt(s.p50),
        fmt(s.p99)
    );
}

fn tokio_rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio")
}

fn spawn_with_stdin(
    program: &str,
    args: &[&str],
    stdin: &[u8],
    env: &[(&str, &Path)],
) -> (Duration, Vec<u8>) {
    let started = Instant::now();
    let mut cmd = Command::new(program);
    cmd.args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("spawn");
    // A hook may exit without reading its input (`bash -c true`); Claude Code ignores that.
    let _ = child.stdin.take().expect("stdin").write_all(stdin);
    let out = child.wait_with_output().expect("wait");
    (started.elapsed(), out.stdout)
}

/// Gives each copy of a component distinct bytes (so a distinct digest and cache entry) by
/// appending a custom section, which does not change what the component does.
fn with_custom_section(wasm: &[u8], i: usize) -> Vec<u8> {
    let name = b"warden-bench";
    let payload = i.to_le_bytes();
    let mut out = wasm.to_vec();
    out.push(0);
    out.push((1 + name.len() + payload.len()) as u8);
    out.push(name.len() as u8);
    out.extend_from_slice(name);
    out.extend_from_slice(&payload);
    out
}

/// A plugin with `wasm_hooks` copies of the `guard` component and `command_hooks` jq hooks,
/// all on PreToolUse for Read.
fn write_plugin(dir: &Path, guard: &str, wasm_hooks: usize, command_hooks: usize) {
    std::fs::create_dir_all(dir.join(".claude-plugin")).expect("mkdir");
    std::fs::create_dir_all(dir.join("wasm")).expect("mkdir");
    std::fs::copy(guard, dir.join("wasm/guard.wasm")).expect("copy");
    let mut components = serde_json::Map::new();
    let mut wasm = Vec::new();
    for i in 0..wasm_hooks {
        components.insert(
            format!("guard{i}"),
            json!({"path": "wasm/guard.wasm", "world": "hook"}),
        );
        wasm.push(json!({"type": "wasm", "component": format!("guard{i}"), "timeout": 5}));
    }
    let mut manifest = json!({"name": "bench", "version": "0.1.0"});
    if wasm_hooks > 0 {
        manifest["warden"] = json!({"components": components, "hooks": {"PreToolUse": [{"matcher": "Read", "hooks": wasm}]}});
    }
    if command_hooks > 0 {
        let cmds: Vec<Value> = (0..command_hooks)
            .map(|i| json!({"type": "command", "command": format!("{JQ_HOOK} # {i}"), "timeout": 10}))
            .collect();
        std::fs::create_dir_all(dir.join("hooks")).expect("mkdir");
        std::fs::write(
            dir.join("hooks/hooks.json"),
            json!({"hooks": {"PreToolUse": [{"matcher": "Read", "hooks": cmds}]}}).to_string(),
        )
        .expect("write hooks");
    }
    std::fs::write(dir.join(".claude-plugin/plugin.json"), manifest.to_string())
        .expect("write manifest");
}

fn report(tmp: &Path) {
    let rt_tokio = tokio_rt();
    let input = event().to_string();
    println!("\nWarden hook latency (2 tokio workers; fresh sandbox per call)\n");

    // 1. One decision: fresh WASM sandbox (the lean component, and the same decision code built
    // with std) vs bash + jq command hook.
    let runtime = Runtime::new(RuntimeConfig::default()).expect("runtime");
    let guard = runtime
        .load(
            "protect-secrets",
            warden::guests::PROTECT_SECRETS_WASM,
            World::Hook,
            &Grant::default(),
            DigestPin::None,
        )
        .expect("load");
    let guard_std = runtime
        .load_file(
            Path::new(warden_test_artifacts::PROTECT_SECRETS_STD),
            World::Hook,
            &Grant::default(),
            DigestPin::None,
        )
        .expect("load");
    let limits = Limits::with_deadline(Duration::from_secs(5));
    let call = |component| {
        let started = Instant::now();
        let r = rt_tokio
            .block_on(runtime.call_hook(
                component,
                "PreToolUse",
                &input,
                &limits,
                CallContext::new("/tmp", &Grant::default()),
            ))
            .expect("call");
        assert_eq!(r.result.decision, Decision::Deny);
        started.elapsed()
    };
    for _ in 0..500 {
        call(&guard);
        call(&guard_std);
    }
    let n = 5000;
    let (mut lean, mut std_build) = (Vec::new(), Vec::new());
    for _ in 0..n {
        lean.push(call(&guard));
        std_build.push(call(&guard_std));
    }
    let wasm = stats(lean);
    let wasm_std = stats(std_build);
    let jq_n = 100;
    let jq: Vec<Duration> = (0..jq_n)
        .map(|_| {
            let (d, out) = spawn_with_stdin("bash", &["-c", JQ_HOOK], input.as_bytes(), &[]);
            assert!(
                String::from_utf8_lossy(&out).contains("deny"),
                "the jq hook must make the same decision"
            );
            d
        })
        .collect();
    let jq = stats(jq);
    println!("1. One PreToolUse decision (protect-secrets)");
    row("WASM component (lean), fresh sandbox", &wasm, n);
    row("same decision code built with std", &wasm_std, n);
    row("command hook: bash + jq reading stdin", &jq, jq_n);
    println!(
        "  ratio (command / WASM) at p50: {:.0}×; std / lean: {:.2}\n",
        jq.p50.as_secs_f64() / wasm.p50.as_secs_f64(),
        wasm_std.p50.as_secs_f64() / wasm.p50.as_secs_f64()
    );

    // A host has one runtime: this one (and its epoch ticker) must not run beside the ones below.
    drop(guard);
    drop(guard_std);
    drop(runtime);

    // 2. Warm start: 100 cached components, zero compiles.
    let cache = tmp.join("cache");
    let copies: Vec<Vec<u8>> = (0..100)
        .map(|i| with_custom_section(warden::guests::PROTECT_SECRETS_WASM, i))
        .collect();
    {
        let rt = Runtime::new(RuntimeConfig {
            cache_dir: Some(cache.clone()),
            ..RuntimeConfig::default()
        })
        .expect("runtime");
        for (i, w) in copies.iter().enumerate() {
            rt.load(
                &format!("copy{i}"),
                w,
                World::Hook,
                &Grant::default(),
                DigestPin::None,
            )
            .expect("compile");
        }
    }
    let mut warm = Vec::new();
    for _ in 0..5 {
        let rt = Runtime::new(RuntimeConfig {
            cache_dir: Some(cache.clone()),
            ..RuntimeConfig::default()
        })
        .expect("runtime");
        let started = Instant::now();
        for (i, w) in copies.iter().enumerate() {
            let c = rt
                .load(
                    &format!("copy{i}"),
                    w,
                    World::Hook,
                    &Grant::default(),
                    DigestPin::None,
                )
                .expect("load");
            assert_eq!(
                c.cache_outcome(),
                CacheOutcome::Hit,
                "warm start must not compile"
            );
        }
        warm.push(started.elapsed());
    }
    let warm = stats(warm);
    println!("2. Warm start: load 100 cached components into a new runtime (0 compiles)");
    row("100 components", &warm, 5);
    println!();

    // 3. Dispatch through 10 matching hooks.
    let wasm_plugin = tmp.join("wasm10");
    write_plugin(&wasm_plugin, warden::guests::PROTECT_SECRETS, 10, 0);
    let std_plugin = tmp.join("std10");
    write_plugin(
        &std_plugin,
        warden_test_artifacts::PROTECT_SECRETS_STD,
        10,
        0,
    );
    let cmd_plugin = tmp.join("cmd10");
    write_plugin(&cmd_plugin, warden::guests::PROTECT_SECRETS, 0, 10);
    let home = warden_config::Home::new(tmp.join("home"));
    let value = event();
    let dispatch_stats = |plugin: &Path, n: usize| {
        // A session as `warden hook` opens one (the user's rules as the guests' policy), with
        // the pooling allocator of a long-lived host.
        let mut opts = SessionOptions::new("/tmp", home.clone());
        opts.plugin_dirs = vec![plugin.to_path_buf()];
        opts.claude_config = warden_config::ClaudeConfig::default();
        opts.runtime = RuntimeConfig::default();
        let session = Arc::new(Session::load(&opts));
        let config = session.hook_config();
        assert!(config.warnings.is_empty(), "{:?}", config.warnings);
        let dopts = session.dispatch_options().expect("dispatch options");
        let mut samples = Vec::new();
        for i in 0..n + n / 10 {
            let started = Instant::now();
            let r = rt_tokio.block_on(dispatch(Event::PreToolUse, &value, config, &dopts));
            let d = started.elapsed();
            assert_eq!(r.handlers.len(), 10);
            assert!(r.merged.permission_verdict().decision.is_some());
            if i >= n / 10 {
                samples.push(d);
            }
        }
        stats(samples)
    };
    let wasm10 = dispatch_stats(&wasm_plugin, 2000);
    let std10 = dispatch_stats(&std_plugin, 2000);
    let cmd10 = dispatch_stats(&cmd_plugin, 30);
    println!("3. One PreToolUse through 10 matching hooks, in parallel");
    row("10 WASM hooks (lean)", &wasm10, 2000);
    row("10 WASM hooks, same code built with std", &std10, 2000);
    row("10 command hooks (bash + jq)", &cmd10, 30);
    println!(
        "  ratio (command / lean WASM) at p50: {:.0}×; std / lean: {:.2}\n",
        cmd10.p50.as_secs_f64() / wasm10.p50.as_secs_f64(),
        std10.p50.as_secs_f64() / wasm10.p50.as_secs_f64()
    );

    // 4. The bridge, one process per event, as Claude Code runs it.
    let exe = env!("CARGO_BIN_EXE_warden");
    let guard_plugin = PathBuf::from(warden::guests::PLUGINS_DIR).join("protect-secrets");
    let bridge_home = tmp.join("bridge-home");
    let args = [
        "hook",
        "PreToolUse",
        "--plugin-dir",
        guard_plugin.to_str().expect("utf-8 path"),
    ];
    let env: [(&str, &Path); 3] = [
        ("WARDEN_HOME", &bridge_home),
        ("WARDEN_MANAGED_SETTINGS_DIR", Path::new("")),
        ("WARDEN_NO_CLAUDE_CONFIG", Path::new("1")),
    ];
    let (_, out) = spawn_with_stdin(exe, &args, input.as_bytes(), &env);
    assert!(
        String::from_utf8_lossy(&out).contains("\"deny\""),
        "bridge must deny: {}",
        String::from_utf8_lossy(&out)
    );
    let bridge_n = 200;
    let bridge = stats(
        (0..bridge_n)
            .map(|_| spawn_with_stdin(exe, &args, input.as_bytes(), &env).0)
            .collect(),
    );
    let bare = stats(
        (0..bridge_n)
            .map(|_| spawn_with_stdin("bash", &["-c", "true"], input.as_bytes(), &[]).0)
            .collect(),
    );
    println!("4. Bridge: one `warden hook PreToolUse` process per event, cache warm");
    row(
        "warden hook (protect-secrets via --plugin-dir)",
        &bridge,
        bridge_n,
    );
    row("bare `bash -c true` command hook", &bare, bridge_n);
    println!(
        "  ratio (warden / bash) at p50: {:.2}\n",
        bridge.p50.as_secs_f64() / bare.p50.as_secs_f64()
    );

    // 5. The bridge as a service: one HTTP POST per event, a fresh connection each time, as
    // Claude Code's `http` hook sends it; interleaved with bare `bash -c true` spawns.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("free port")
        .port();
    let listen = format!("127.0.0.1:{port}");
    let mut service = Command::new(exe)
        .args(["serve", "--listen", &listen, "--plugin-dir"])
        .arg(&guard_plugin)
        .env("WARDEN_HOME", &bridge_home)
        .env("WARDEN_NO_CLAUDE_CONFIG", "1")
        .env("WARDEN_MANAGED_SETTINGS_DIR", "")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("warden serve");
    let post = |body: &str| -> (Duration, String) {
        use std::io::Read;
        let started = Instant::now();
        let mut s = std::net::TcpStream::connect(&listen).expect("connect");
        let _ = s.set_nodelay(true);
        let req = format!(
            "POST /hook/PreToolUse HTTP/1.1\r\nHost: {listen}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        s.write_all(req.as_bytes()).expect("send");
        let mut out = String::new();
        s.read_to_string(&mut out).expect("receive");
        (started.elapsed(), out)
    };
    let until = Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(&listen).is_err() {
        assert!(Instant::now() < until, "warden serve did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    let (_, out) = post(&input);
    assert!(out.contains("\"deny\""), "service must deny: {out}");
    let (mut served, mut bare) = (Vec::new(), Vec::new());
    for _ in 0..bridge_n {
        served.push(post(&input).0);
        bare.push(spawn_with_stdin("bash", &["-c", "true"], input.as_bytes(), &[]).0);
    }
    let (served, bare) = (stats(served), stats(bare));
    let _ = service.kill();
    let _ = service.wait();
    println!("5. Bridge as a service: `warden serve`, one HTTP POST per event, cache warm");
    row(
        "warden serve (protect-secrets via --plugin-dir)",
        &served,
        bridge_n,
    );
    row("bare `bash -c true` command hook", &bare, bridge_n);
    println!(
        "  ratio (warden serve / bash) at p50: {:.2}\n",
        served.p50.as_secs_f64() / bare.p50.as_secs_f64()
    );
}

fn criterion_benches(c: &mut Criterion) {
    let rt_tokio = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio");
    let runtime = Runtime::new(RuntimeConfig::default()).expect("runtime");
    let guard = runtime
        .load(
            "protect-secrets",
            warden::guests::PROTECT_SECRETS_WASM,
            World::Hook,
            &Grant::default(),
            DigestPin::None,
        )
        .expect("load");
    let input = event().to_string();
    let limits = Limits::with_deadline(Duration::from_secs(5));
    c.bench_function("wasm_hook_fresh_sandbox", |b| {
        b.iter(|| {
            rt_tokio
                .block_on(runtime.call_hook(
                    &guard,
                    "PreToolUse",
                    &input,
                    &limits,
                    CallContext::new("/tmp", &Grant::default()),
                ))
                .expect("call")
        })
    });
}

fn main() {
    let tmp = tempfile::tempdir().expect("tempdir");
    // SAFETY: set before any thread is started.
    unsafe {
        std::env::set_var("WARDEN_MANAGED_SETTINGS_DIR", "");
    }
    report(tmp.path());
    let mut c = Criterion::default().configure_from_args();
    criterion_benches(&mut c);
    c.final_summary();
}
