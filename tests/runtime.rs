//! The sandboxed component runtime, driven through the library and the real `warden` binary
//! with real components built from `plugins/`.

#[path = "support/faults.rs"]
mod faults;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use warden::hook_result::Decision;
use warden::runtime::{
    CacheOutcome, CallContext, Capability, ComponentCache, DigestPin, Grant, HookCall, Limits,
    LoadedComponent, Runtime, RuntimeConfig, RuntimeError, WitVersion, World,
};

fn runtime() -> Runtime {
    Runtime::new(RuntimeConfig::default()).expect("runtime")
}

fn load(rt: &Runtime, path: &str) -> LoadedComponent {
    rt.load_file(
        Path::new(path),
        World::Hook,
        &Grant::default(),
        DigestPin::None,
    )
    .expect("load component")
}

fn pre_tool_use(tool: &str, input: Value) -> String {
    json!({
        "session_id": "71cfac67-90e0-43e2-abeb-b74b74b35d8e",
        "transcript_path": "/home/dev/.claude/projects/p/t.jsonl",
        "cwd": "/home/dev/project",
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": input,
        "tool_use_id": "toolu_1",
    })
    .to_string()
}

fn attack(name: &str) -> String {
    pre_tool_use("Probe", json!({ "attack": name }))
}

fn ctx() -> CallContext {
    CallContext::new("/tmp", &Grant::default())
}

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("tokio")
        .block_on(f)
}

/// One PreToolUse call of the hostile guest, carrying out `name`, with default limits.
fn attack_call(
    rt: &Runtime,
    hostile: &LoadedComponent,
    name: &str,
) -> Result<HookCall, RuntimeError> {
    block_on(rt.call_hook(
        hostile,
        "PreToolUse",
        &attack(name),
        &Limits::default(),
        ctx(),
    ))
}

/// The same runtime still answers a normal call after `f` misbehaved.
fn assert_still_serves(rt: &Runtime, hostile: &LoadedComponent) {
    let call = block_on(rt.call_hook(
        hostile,
        "PreToolUse",
        &attack("none"),
        &Limits::default(),
        ctx(),
    ))
    .expect("normal call");
    assert_eq!(call.result.decision, Decision::Allow);
    assert_eq!(call.result.reason.as_deref(), Some("ok"));
}

#[test]
fn protect_secrets_decides_on_real_payloads() {
    let rt = runtime();
    let guard = load(&rt, warden::guests::PROTECT_SECRETS);
    let cases = [
        (
            "Read",
            json!({"file_path": "/home/dev/project/.env"}),
            Decision::Deny,
        ),
        (
            "Read",
            json!({"file_path": "/home/dev/project/README.md"}),
            Decision::None,
        ),
        (
            "Edit",
            json!({"file_path": "keys/server.pem", "old_string": "a", "new_string": "b"}),
            Decision::Deny,
        ),
        (
            "Write",
            json!({"file_path": "/home/dev/.ssh/id_rsa", "content": ""}),
            Decision::Deny,
        ),
        (
            "Read",
            json!({"file_path": "/srv/app/secrets/db.yaml"}),
            Decision::Deny,
        ),
        (
            "Bash",
            json!({"command": "cat .env | grep KEY"}),
            Decision::Deny,
        ),
        (
            "Bash",
            json!({"command": "git -C . push origin main"}),
            Decision::None,
        ),
        (
            "WebFetch",
            json!({"url": "https://example.com/.env"}),
            Decision::None,
        ),
    ];
    for (tool, input, expected) in cases {
        let call = block_on(rt.call_hook(
            &guard,
            "PreToolUse",
            &pre_tool_use(tool, input.clone()),
            &Limits::default(),
            ctx(),
        ))
        .expect("call");
        assert_eq!(call.result.decision, expected, "{tool} {input}");
        if expected == Decision::Deny {
            let reason = call.result.reason.expect("a deny carries a reason");
            assert!(
                reason.contains("protect-secrets") && reason.contains("ask the user"),
                "{reason}"
            );
        }
    }
}

#[test]
fn hook_wasm_cli_prints_claude_code_json() {
    let payload = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/fixtures/pre_tool_use_read_env.json"
    ))
    .expect("fixture");
    let out = run_cli(
        &["hook-wasm", warden::guests::PROTECT_SECRETS, "PreToolUse"],
        &payload,
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("stdout is JSON");
    assert_eq!(v["hookSpecificOutput"]["hookEventName"], "PreToolUse");
    assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "deny");
    assert!(
        v["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .is_some_and(|r| r.contains(".env"))
    );

    // No opinion prints an empty object and exits 0.
    let out = run_cli(
        &["hook-wasm", warden::guests::PROTECT_SECRETS, "PreToolUse"],
        &pre_tool_use("Bash", json!({"command": "ls"})),
    );
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        serde_json::from_slice::<Value>(&out.stdout).expect("json"),
        json!({})
    );

    // A block exits 2 with the reason on stderr, as a command hook would.
    let stop =
        json!({"session_id": "s", "transcript_path": "/t", "cwd": "/", "hook_event_name": "Stop",
        "tool_name": "Probe", "tool_input": {"attack": "block"}})
        .to_string();
    let out = run_cli(
        &["hook-wasm", warden_test_artifacts::HOSTILE, "Stop"],
        &stop,
    );
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        serde_json::from_slice::<Value>(&out.stdout).expect("json"),
        json!({"decision": "block", "reason": "blocked on request"})
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("blocked on request"));

    // Unusable input is an error naming the problem, exit 1.
    let out = run_cli(
        &["hook-wasm", warden::guests::PROTECT_SECRETS, "PreToolUse"],
        "{not json",
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not valid JSON"));
}

fn run_cli(args: &[&str], stdin: &str) -> std::process::Output {
    let home = tempfile::tempdir().expect("home");
    let mut child = Command::new(env!("CARGO_BIN_EXE_warden"))
        .args(args)
        .env("WARDEN_HOME", home.path())
        .env("WARDEN_NO_CLAUDE_CONFIG", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn warden");
    // warden may exit before reading stdin (an unknown event); that is not a failure here.
    let _ = child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes());
    child.wait_with_output().expect("wait")
}

#[test]
fn infinite_loop_hits_the_deadline_within_twice_the_deadline() {
    let rt = runtime();
    let hostile = load(&rt, warden_test_artifacts::HOSTILE);
    let deadline = Duration::from_millis(200);
    let started = Instant::now();
    let err = block_on(rt.call_hook(
        &hostile,
        "PreToolUse",
        &attack("loop"),
        &Limits::with_deadline(deadline),
        ctx(),
    ))
    .expect_err("must be stopped");
    let took = started.elapsed();
    assert!(matches!(err, RuntimeError::Deadline { .. }), "{err}");
    assert!(err.to_string().contains("deadline of 200 ms"), "{err}");
    assert!(took < deadline * 2, "stopped after {took:?}");
    assert_still_serves(&rt, &hostile);
}

/// Dropping a runtime wakes its epoch ticker instead of waiting out the tick, so a one-event
/// process exits as soon as it has answered.
#[test]
fn dropping_a_runtime_does_not_wait_for_the_next_tick() {
    let rt = Runtime::new(RuntimeConfig {
        tick: Duration::from_secs(600),
        ..RuntimeConfig::default()
    })
    .expect("runtime");
    let started = Instant::now();
    drop(rt);
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "drop waited {:?} for a 600 s tick",
        started.elapsed()
    );
}

#[test]
fn memory_bomb_hits_the_memory_limit() {
    let rt = runtime();
    let hostile = load(&rt, warden_test_artifacts::HOSTILE);
    let limits = Limits {
        memory_bytes: 32 << 20,
        ..Limits::default()
    };
    let err = block_on(rt.call_hook(&hostile, "PreToolUse", &attack("membomb"), &limits, ctx()))
        .expect_err("must be stopped");
    assert!(
        matches!(err, RuntimeError::MemoryLimit { limit, .. } if limit == 32 << 20),
        "{err}"
    );
    assert_eq!(err.kind(), "memory-limit");
    assert_still_serves(&rt, &hostile);
}

/// The byte at position `i` of the lean-alloc guest's buffers.
fn lean_pattern(i: usize) -> u8 {
    (i.wrapping_mul(31) ^ (i >> 7)) as u8
}

/// The lean allocator (`warden_sdk::lean!`): memory grows as needed, the newest block grows in
/// place, older blocks are copied, freed temporaries are reused, every byte survives, and the
/// call's memory limit still stops it. The component imports nothing but Warden's own
/// interfaces.
#[test]
fn lean_allocator_grows_in_place_copies_and_stops_at_the_limit() {
    let rt = runtime();
    let lean = load(&rt, warden_test_artifacts::LEAN_ALLOC);
    assert!(
        lean.imports()
            .iter()
            .all(|i| i.starts_with("warden:plugin/")),
        "{:?}",
        lean.imports()
    );
    let limits = Limits {
        memory_bytes: 48 << 20,
        ..Limits::default()
    };
    let call = |input: Value| {
        block_on(rt.call_hook(
            &lean,
            "PreToolUse",
            &pre_tool_use("Probe", input),
            &limits,
            ctx(),
        ))
    };

    // 24 MiB pushed byte by byte: the buffer's capacity ends at 32 MiB, which fits in 48 MiB
    // only if each doubling extended the block where it was (copying would need 16 + 32).
    let mib = 24;
    let temporaries: u64 = (0..mib << 20)
        .step_by(65_536)
        .map(|i: usize| i.to_string().len() as u64)
        .sum();
    let bytes: u64 = (0..mib << 20).map(|i| u64::from(lean_pattern(i))).sum();
    let out = call(json!({ "grow_mib": mib })).expect("grows in place within the limit");
    assert_eq!(
        out.result.additional_context,
        Some((temporaries + bytes).to_string())
    );

    // 200 vectors growing in turn: every growth but the newest vector's is a copy.
    let n = 200;
    let expected: u64 = (0..n)
        .flat_map(|k| (0..64).flat_map(move |round| (0..16).map(move |j| round * 16 + j + k)))
        .map(|i| u64::from(lean_pattern(i)))
        .sum();
    let out = call(json!({ "vecs": n })).expect("copies");
    assert_eq!(out.result.additional_context, Some(expected.to_string()));

    let err = call(json!({ "grow_mib": 40 })).expect_err("64 MiB of capacity is over 48");
    assert!(
        matches!(err, RuntimeError::MemoryLimit { limit, .. } if limit == 48 << 20),
        "{err}"
    );
    let out = call(json!({ "vecs": 3 })).expect("the runtime still serves");
    assert!(out.result.additional_context.is_some());
}

#[test]
fn deep_recursion_is_a_reported_trap() {
    let rt = runtime();
    let hostile = load(&rt, warden_test_artifacts::HOSTILE);
    let err = attack_call(&rt, &hostile, "recurse").expect_err("trap");
    // Rust guests keep address-taken locals on a shadow stack in linear memory, so deep
    // recursion ends either in the engine's stack-overflow trap or in an out-of-bounds access
    // below that shadow stack; both must come back as a trap, never take the host down.
    assert!(
        matches!(&err, RuntimeError::Trap { message, .. } if message.contains("stack overflow") || message.contains("out of bounds")),
        "{err}"
    );
    assert_still_serves(&rt, &hostile);
}

#[test]
fn panic_is_a_trap_carrying_the_panic_message() {
    let rt = runtime();
    let hostile = load(&rt, warden_test_artifacts::HOSTILE);
    let err = attack_call(&rt, &hostile, "panic").expect_err("trap");
    assert!(err.to_string().contains("panicked on purpose"), "{err}");
    assert_still_serves(&rt, &hostile);
}

#[test]
fn huge_stdout_is_truncated_and_flagged() {
    let rt = runtime();
    let hostile = load(&rt, warden_test_artifacts::HOSTILE);
    let limits = Limits {
        capture_bytes: 64 << 10,
        ..Limits::default()
    };
    let call = block_on(rt.call_hook(&hostile, "PreToolUse", &attack("shout"), &limits, ctx()))
        .expect("call completes");
    assert!(call.stdout.truncated);
    assert_eq!(call.stdout.text.len(), 64 << 10);
    assert!(!call.stderr.truncated);
    assert_still_serves(&rt, &hostile);

    let call = attack_call(&rt, &hostile, "stderr").expect("call");
    assert_eq!(call.stdout.text, "a note on stdout\n");
    assert_eq!(call.stderr.text, "a note on stderr\n");
    assert!(!call.stdout.truncated);
}

#[test]
fn oversized_result_hits_the_output_limit() {
    let rt = runtime();
    let hostile = load(&rt, warden_test_artifacts::HOSTILE);
    let err = attack_call(&rt, &hostile, "big-output").expect_err("limit");
    assert!(
        matches!(err, RuntimeError::OutputLimit { size, limit, .. } if size == 2 << 20 && limit == 1 << 20),
        "{err}"
    );
    assert_still_serves(&rt, &hostile);
}

#[test]
fn ungranted_capability_is_refused_at_link_time() {
    let rt = runtime();
    let err = rt
        .load_file(
            Path::new(warden_test_artifacts::USES_EXEC),
            World::Hook,
            &Grant::default(),
            DigestPin::None,
        )
        .err()
        .expect("refused");
    match &err {
        RuntimeError::CapabilityNotGranted {
            capability, import, ..
        } => {
            assert_eq!(*capability, Capability::Exec);
            assert!(import.starts_with("warden:plugin/exec@0.1"), "{import}");
        }
        other => panic!("wrong error: {other}"),
    }
    assert!(err.to_string().contains("`exec` capability"), "{err}");
    // With the grant the same component links.
    let grant = Grant {
        exec: vec!["git".into()],
        ..Grant::default()
    };
    let digest = warden::runtime::sha256_hex(
        &std::fs::read(warden_test_artifacts::USES_EXEC).expect("read uses_exec"),
    );
    rt.load_file(
        Path::new(warden_test_artifacts::USES_EXEC),
        World::Hook,
        &grant,
        DigestPin::Sha256(&digest),
    )
    .expect("links with exec granted");

    let hostile = load(&rt, warden_test_artifacts::HOSTILE);
    assert_still_serves(&rt, &hostile);
}

#[test]
fn every_call_gets_a_fresh_sandbox_with_nothing_in_it() {
    let rt = runtime();
    let hostile = load(&rt, warden_test_artifacts::HOSTILE);
    for _ in 0..3 {
        let call = attack_call(&rt, &hostile, "count").expect("call");
        assert_eq!(
            call.result.reason.as_deref(),
            Some("1"),
            "state leaked between calls"
        );
    }
    // SAFETY of the test: the host has plenty of environment; the guest must see none of it.
    assert!(std::env::vars().count() > 0);
    let call = attack_call(&rt, &hostile, "probe").expect("call");
    assert_eq!(call.result.reason.as_deref(), Some("env=0 args=0"));
}

/// A call that writes 128 separate runs of pages of initialised data: every one of them must
/// hold the module's original bytes again in the next call, however many runs there are. And
/// where the pool resets only the pages a call wrote, they stay resident for the next fresh
/// instance in the slot instead of being faulted in again on every call (an interpreter's
/// scattered reference counts cost Python four fifths of its call time that way).
#[test]
fn every_page_a_call_wrote_is_reset_and_stays_resident_for_the_next_call() {
    let rt = runtime();
    let hostile = load(&rt, warden_test_artifacts::HOSTILE);
    // Each call finds every page back as the image has it (it counts the written ones).
    let scatter = || {
        let call = attack_call(&rt, &hostile, "scatter").expect("call");
        assert_eq!(
            call.result.reason.as_deref(),
            Some("0"),
            "a page written by an earlier call was not reset"
        );
    };
    (0..3).for_each(|_| scatter());
    // The guest runs on this thread (a current-thread executor), so other tests running at the
    // same time do not count.
    let calls = 20;
    let before = faults::minor_faults(libc::RUSAGE_THREAD);
    (0..calls).for_each(|_| scatter());
    let per_call = (faults::minor_faults(libc::RUSAGE_THREAD) - before) / calls;
    if rt.config().resident_window() >= 2 << 20 {
        assert!(
            per_call < 32,
            "{per_call} page faults per call: written pages were given back to the kernel \
             instead of being reset in place"
        );
    } else {
        eprintln!(
            "no PAGEMAP_SCAN here: the pool resets the first {} bytes only, so {per_call} faults \
             per call are expected",
            rt.config().resident_window()
        );
    }
}

#[test]
fn wrong_world_is_refused() {
    let rt = runtime();
    let err = rt
        .load_file(
            Path::new(warden::guests::PROTECT_SECRETS),
            World::Tool,
            &Grant::default(),
            DigestPin::None,
        )
        .err()
        .expect("refused");
    assert!(
        matches!(err, RuntimeError::WrongWorld { world: "tool", .. }),
        "{err}"
    );
    let err = rt
        .load(
            "junk",
            b"\0asm not really",
            World::Hook,
            &Grant::default(),
            DigestPin::None,
        )
        .err()
        .expect("refused");
    assert!(matches!(err, RuntimeError::Compile { .. }), "{err}");
}

#[test]
fn compile_cache_is_reused_and_never_trusted_blindly() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = || RuntimeConfig {
        cache_dir: Some(dir.path().to_path_buf()),
        ..RuntimeConfig::default()
    };
    let wasm = std::fs::read(warden::guests::PROTECT_SECRETS).expect("wasm");

    let rt = Runtime::new(config()).expect("runtime");
    assert_eq!(
        rt.load(
            "guard",
            &wasm,
            World::Hook,
            &Grant::default(),
            DigestPin::None
        )
        .expect("load")
        .cache_outcome(),
        CacheOutcome::Compiled
    );
    drop(rt);
    let rt = Runtime::new(config()).expect("runtime");
    assert_eq!(
        rt.load(
            "guard",
            &wasm,
            World::Hook,
            &Grant::default(),
            DigestPin::None
        )
        .expect("load")
        .cache_outcome(),
        CacheOutcome::Hit
    );

    let artifact = std::fs::read_dir(dir.path())
        .expect("cache dir")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "cwasm"))
        .expect("a cwasm entry");

    // Corrupt: bytes no longer match the recorded digest.
    let mut bytes = std::fs::read(&artifact).expect("read");
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0xff;
    std::fs::write(&artifact, &bytes).expect("write");
    let loaded = rt
        .load(
            "guard",
            &wasm,
            World::Hook,
            &Grant::default(),
            DigestPin::None,
        )
        .expect("recompiled");
    assert_eq!(loaded.cache_outcome(), CacheOutcome::Replaced);
    let call = block_on(rt.call_hook(
        &loaded,
        "PreToolUse",
        &pre_tool_use("Read", json!({"file_path": ".env"})),
        &Limits::default(),
        ctx(),
    ))
    .expect("call");
    assert_eq!(call.result.decision, Decision::Deny);

    // Foreign: not a compiled component at all, with a sidecar that matches it.
    std::fs::write(&artifact, b"not native code").expect("write");
    let sidecar = artifact.with_extension("sha256");
    std::fs::write(&sidecar, warden::runtime::sha256_hex(b"not native code")).expect("write");
    assert_eq!(
        rt.load(
            "guard",
            &wasm,
            World::Hook,
            &Grant::default(),
            DigestPin::None
        )
        .expect("load")
        .cache_outcome(),
        CacheOutcome::Replaced
    );
    assert_eq!(
        rt.load(
            "guard",
            &wasm,
            World::Hook,
            &Grant::default(),
            DigestPin::None
        )
        .expect("load")
        .cache_outcome(),
        CacheOutcome::Hit
    );
}

#[test]
fn demo_runs() {
    let out = run_cli(&["demo"], "");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let line = |start: &str| {
        text.lines()
            .find(|l| l.trim_start().starts_with(start))
            .unwrap_or_else(|| panic!("no line starting {start} in:\n{text}"))
            .to_string()
    };
    // The WASM hook denies the secret; the rule holds against `git -C . push`.
    assert!(
        line("Read(.env)").contains("deny by PreToolUse hook wasm:guard"),
        "{text}"
    );
    assert!(
        line("Bash(git -C . push").contains("deny by rule `Bash(git push *)`"),
        "{text}"
    );
    // The WASM Read tool, Warden's own MCP server and the plugin's namespaced skill ran.
    assert!(text.contains("ran: 1\t# Demo"), "{text}");
    assert!(line("mcp__warden__Glob").contains("allow"), "{text}");
    assert!(
        text.contains("ran: Launching skill: protect-secrets:audit"),
        "{text}"
    );
    // The Stop hook sent the model back once, then let it stop.
    assert!(text.contains("Stop hook: not yet"), "{text}");
    assert!(text.contains("The session completed."), "{text}");
    let stops = text
        .lines()
        .filter(|l| l.trim_start().starts_with("Stop ") && l.contains("stop-"))
        .count();
    assert_eq!(stops, 2, "{text}");
}

/// The bytes of `wasm` with one more custom section: a different file (and digest) that does
/// exactly the same.
fn tampered(wasm: &[u8]) -> Vec<u8> {
    let name = b"tampered";
    let mut out = wasm.to_vec();
    out.push(0);
    out.push((1 + name.len() + 1) as u8);
    out.push(name.len() as u8);
    out.extend_from_slice(name);
    out.push(1);
    out
}

fn exec_grant() -> Grant {
    Grant {
        exec: vec!["git".into()],
        ..Grant::default()
    }
}

#[test]
fn a_granted_component_whose_file_changed_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cache = tempfile::tempdir().expect("cache");
    // Through the compile cache, so the digest checked is the one the cache records.
    let rt = Runtime::new(RuntimeConfig {
        cache_dir: Some(cache.path().to_path_buf()),
        pooling: false,
        ..RuntimeConfig::default()
    })
    .expect("runtime");
    let file = dir.path().join("uses_exec.wasm");
    let original = std::fs::read(warden_test_artifacts::USES_EXEC).expect("read");
    std::fs::write(&file, &original).expect("write");
    let approved = warden::runtime::sha256_hex(&original);

    // Unchanged: loads, twice (the second time from the cache's record).
    for _ in 0..2 {
        let c = rt
            .load_file(
                &file,
                World::Hook,
                &exec_grant(),
                DigestPin::Sha256(&approved),
            )
            .expect("unchanged file loads");
        assert_eq!(c.digest(), approved);
    }

    std::fs::write(&file, tampered(&original)).expect("tamper");
    let err = rt
        .load_file(
            &file,
            World::Hook,
            &exec_grant(),
            DigestPin::Sha256(&approved),
        )
        .err()
        .expect("tampered file refused");
    match &err {
        RuntimeError::DigestMismatch {
            component,
            expected,
            actual,
        } => {
            assert_eq!(component, "uses_exec.wasm");
            assert_eq!(expected, &approved);
            assert_eq!(actual, &warden::runtime::sha256_hex(&tampered(&original)));
        }
        other => panic!("wrong error: {other}"),
    }
    assert_eq!(err.kind(), "digest-mismatch");
    let msg = err.to_string();
    for needle in [
        "changed since its capabilities were granted",
        "warden plugin verify",
        "warden plugin install",
    ] {
        assert!(msg.contains(needle), "{needle:?} missing from: {msg}");
    }

    // No digest at all: a granted component fails closed; the caller must opt in.
    let err = rt
        .load_file(&file, World::Hook, &exec_grant(), DigestPin::None)
        .err()
        .expect("unpinned grant refused");
    assert!(matches!(err, RuntimeError::Unpinned { .. }), "{err}");
    assert!(err.to_string().contains("exec"), "{err}");
    rt.load_file(&file, World::Hook, &exec_grant(), DigestPin::Unchecked)
        .expect("explicit opt-in loads");
}

#[test]
fn an_ungranted_component_with_changed_bytes_still_loads() {
    let rt = runtime();
    let original = std::fs::read(warden::guests::PROTECT_SECRETS).expect("read");
    let approved = warden::runtime::sha256_hex(&original);
    let guard = rt
        .load(
            "guard",
            &tampered(&original),
            World::Hook,
            &Grant::default(),
            DigestPin::Sha256(&approved),
        )
        .expect("nothing granted, nothing to pin");
    let call = block_on(rt.call_hook(
        &guard,
        "PreToolUse",
        &pre_tool_use("Read", json!({"file_path": "/home/dev/project/.env"})),
        &Limits::default(),
        ctx(),
    ))
    .expect("call");
    assert_eq!(call.result.decision, Decision::Deny);
}

#[test]
fn the_component_cache_loads_once_and_notices_a_changed_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cache = ComponentCache::new(
        Runtime::shared(RuntimeConfig {
            pooling: false,
            ..RuntimeConfig::default()
        })
        .expect("runtime"),
    );
    let file = dir.path().join("uses_exec.wasm");
    let original = std::fs::read(warden_test_artifacts::USES_EXEC).expect("read");
    std::fs::write(&file, &original).expect("write");
    let approved = warden::runtime::sha256_hex(&original);
    let pin = DigestPin::Sha256(&approved);

    let a = cache
        .file(&file, World::Hook, &exec_grant(), pin)
        .expect("load");
    let b = cache
        .file(&file, World::Hook, &exec_grant(), pin)
        .expect("load");
    assert!(std::sync::Arc::ptr_eq(&a, &b), "loaded twice");
    // Another grant is another entry.
    let other = Grant {
        exec: vec!["git".into(), "ls".into()],
        ..Grant::default()
    };
    let c = cache.file(&file, World::Hook, &other, pin).expect("load");
    assert!(!std::sync::Arc::ptr_eq(&a, &c));
    assert_eq!(cache.len(), 2);
    // A pin that is not the loaded file's digest is refused even on a hit.
    let wrong = "0".repeat(64);
    let err = cache
        .file(&file, World::Hook, &exec_grant(), DigestPin::Sha256(&wrong))
        .err()
        .expect("refused");
    assert!(matches!(err, RuntimeError::DigestMismatch { .. }), "{err}");

    // The file is replaced behind the cache's back: the next lookup re-reads and refuses it.
    std::fs::write(&file, tampered(&original)).expect("tamper");
    let err = cache
        .file(&file, World::Hook, &exec_grant(), pin)
        .err()
        .expect("tampered file refused");
    assert!(matches!(err, RuntimeError::DigestMismatch { .. }), "{err}");

    // Bytes: one load per digest, world and grant.
    let wasm = std::fs::read(warden::guests::PROTECT_SECRETS).expect("read");
    let x = cache
        .bytes(
            "guard",
            &wasm,
            World::Hook,
            &Grant::default(),
            DigestPin::None,
        )
        .expect("load");
    let y = cache
        .bytes(
            "guard",
            &wasm,
            World::Hook,
            &Grant::default(),
            DigestPin::None,
        )
        .expect("load");
    assert!(std::sync::Arc::ptr_eq(&x, &y));
}

#[test]
fn runtimes_are_shared_per_config() {
    let config = RuntimeConfig {
        pooling: false,
        max_instances: 3,
        ..RuntimeConfig::default()
    };
    let a = Runtime::shared(config.clone()).expect("runtime");
    let b = Runtime::shared(config.clone()).expect("runtime");
    assert!(std::sync::Arc::ptr_eq(&a, &b));
    let c = Runtime::shared(RuntimeConfig {
        max_instances: 4,
        ..config
    })
    .expect("runtime");
    assert!(!std::sync::Arc::ptr_eq(&a, &c));
}

/// A hook built once with the 0.1 SDK and checked in (see `tests/fixtures/components/README.md`):
/// whatever the current SDK and WIT become, guests built against 0.1 must keep running.
const HOOK_V0_1: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../tests/fixtures/components/protect-secrets-v0.1.wasm"
);

#[test]
fn a_component_built_with_the_0_1_sdk_still_runs() {
    let rt = runtime();
    let guard = load(&rt, HOOK_V0_1);
    assert_eq!(guard.version(), WitVersion::V0_1);
    let run = |input: String| {
        block_on(rt.call_hook(&guard, "PreToolUse", &input, &Limits::default(), ctx()))
            .expect("call")
            .result
    };
    let denied = run(pre_tool_use(
        "Read",
        json!({"file_path": "/home/dev/project/.env"}),
    ));
    assert_eq!(denied.decision, Decision::Deny);
    let allowed = run(pre_tool_use(
        "Read",
        json!({"file_path": "/home/dev/project/src/main.rs"}),
    ));
    assert_ne!(allowed.decision, Decision::Deny);
}

/// The component with every `@0.1.0` in it (its `warden:plugin` imports) renamed to
/// `@{version}`: the same length, so the binary stays valid and only claims another version.
fn claiming(version: &str) -> Vec<u8> {
    assert_eq!(version.len(), "0.1.0".len());
    let wasm = std::fs::read(HOOK_V0_1).expect("read");
    let (from, to) = (b"@0.1.0".as_slice(), format!("@{version}"));
    let mut out = Vec::with_capacity(wasm.len());
    let mut i = 0;
    let mut replaced = 0;
    while i < wasm.len() {
        if wasm[i..].starts_with(from) {
            out.extend_from_slice(to.as_bytes());
            i += from.len();
            replaced += 1;
        } else {
            out.push(wasm[i]);
            i += 1;
        }
    }
    assert!(replaced > 0, "the fixture names no @0.1.0 interface");
    out
}

#[test]
fn a_component_built_against_an_unknown_wit_version_is_refused_by_name() {
    let rt = runtime();
    for version in ["0.2.0", "9.0.0"] {
        let err = rt
            .load(
                "future-hook",
                &claiming(version),
                World::Hook,
                &Grant::default(),
                DigestPin::None,
            )
            .err()
            .expect("refused");
        match &err {
            RuntimeError::UnsupportedVersion {
                component,
                version: v,
                supported,
            } => {
                assert_eq!(component, "future-hook");
                assert_eq!(v, version);
                assert_eq!(supported, "0.1.x");
            }
            other => panic!("{version}: wrong error: {other}"),
        }
        assert_eq!(err.kind(), "unsupported-version");
        let msg = err.to_string();
        assert!(
            msg.contains(&format!("warden:plugin@{version}")) && msg.contains("0.1.x"),
            "{msg}"
        );
    }
    // A patch release of 0.1 is still 0.1.
    let patch = rt
        .load(
            "patch-hook",
            &claiming("0.1.9"),
            World::Hook,
            &Grant::default(),
            DigestPin::None,
        )
        .expect("0.1.9 is 0.1");
    assert_eq!(patch.version(), WitVersion::V0_1);
}

/// Language runtimes import `wasi:filesystem` and `wasi:sockets` whatever the guest does, so
/// the host links them, inert: a component using them directly loads, and reaches nothing.
#[test]
fn wasi_files_and_sockets_are_linked_but_reach_nothing() {
    let rt = runtime();
    let secret = tempfile::tempdir().expect("tempdir");
    let file = secret.path().join("secret.txt");
    std::fs::write(&file, "top secret").expect("write");
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.set_nonblocking(true).expect("nonblocking");
    let addr = listener.local_addr().expect("addr").to_string();

    let guest = load(&rt, warden_test_artifacts::USES_WASI_FS);
    let call = block_on(rt.call_hook(
        &guest,
        "PreToolUse",
        &pre_tool_use(
            "Probe",
            json!({ "path": file.display().to_string(), "addr": addr }),
        ),
        &Limits::default(),
        ctx(),
    ))
    .expect("the call completes");
    let result = call.result;
    assert_eq!(result.decision, Decision::Deny, "{result:?}");
    let reason = result.reason.unwrap_or_default();
    assert!(reason.contains("file: "), "{reason}");
    assert!(reason.contains("net: "), "{reason}");
    assert!(!reason.contains("top secret"), "{reason}");
    // Nothing connected to the listener.
    assert!(
        matches!(listener.accept(), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
        "the guest reached a socket"
    );
}

fn sleep_for(ms: u64) -> String {
    pre_tool_use("Probe", json!({ "attack": "sleep", "ms": ms }))
}

/// More concurrent calls than sandbox slots: the calls beyond the pool wait for a slot in
/// turn instead of failing. The guest sleeps on a WASI clock, so each call holds its slot
/// while suspended and the pool really is full.
#[test]
fn a_full_pool_queues_calls_until_a_slot_comes_free() {
    let rt = Arc::new(
        Runtime::new(RuntimeConfig {
            max_instances: 2,
            ..RuntimeConfig::default()
        })
        .expect("runtime"),
    );
    let hostile = Arc::new(load(&rt, warden_test_artifacts::HOSTILE));
    let calls: u64 = 40;
    let results = block_on(async {
        let mut set = tokio::task::JoinSet::new();
        for _ in 0..calls {
            let (rt, hostile) = (rt.clone(), hostile.clone());
            set.spawn(async move {
                let limits = Limits::with_deadline(Duration::from_secs(30));
                rt.call_hook(&hostile, "PreToolUse", &sleep_for(20), &limits, ctx())
                    .await
            });
        }
        set.join_all().await
    });
    assert_eq!(results.len() as u64, calls);
    for r in results {
        let call = r.expect("every call gets a slot in the end");
        assert_eq!(call.result.reason.as_deref(), Some("slept"));
    }
    let stats = rt.slot_stats();
    assert_eq!(stats.slots, 2);
    assert_eq!(stats.peak_in_use, 2, "{stats:?}");
    assert_eq!(stats.queued, calls - 2, "{stats:?}");
    assert_eq!(stats.busy, 0, "{stats:?}");
    assert_eq!(stats.in_use, 0, "{stats:?}");
}

/// A call waits for a slot no longer than its own deadline, then fails with `Busy`; the slot
/// of a call that is abandoned comes back.
#[test]
fn a_queued_call_gives_up_with_busy_at_its_deadline() {
    let rt = Arc::new(
        Runtime::new(RuntimeConfig {
            max_instances: 1,
            ..RuntimeConfig::default()
        })
        .expect("runtime"),
    );
    let hostile = Arc::new(load(&rt, warden_test_artifacts::HOSTILE));
    block_on(async {
        let holder = {
            let (rt, hostile) = (rt.clone(), hostile.clone());
            tokio::spawn(async move {
                let limits = Limits::with_deadline(Duration::from_secs(60));
                rt.call_hook(&hostile, "PreToolUse", &sleep_for(30_000), &limits, ctx())
                    .await
            })
        };
        while rt.slot_stats().in_use == 0 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        let deadline = Duration::from_millis(300);
        let started = Instant::now();
        let err = rt
            .call_hook(
                &hostile,
                "PreToolUse",
                &attack("none"),
                &Limits::with_deadline(deadline),
                ctx(),
            )
            .await
            .expect_err("the only slot stays taken");
        let waited = started.elapsed();
        assert!(matches!(err, RuntimeError::Busy { .. }), "{err}");
        assert_eq!(err.kind(), "busy");
        assert!(
            err.to_string().contains("no sandbox slot came free"),
            "{err}"
        );
        assert!(waited >= deadline, "gave up early, after {waited:?}");
        assert!(
            waited < Duration::from_secs(10),
            "waited {waited:?} for a 300 ms deadline"
        );
        let stats = rt.slot_stats();
        assert_eq!(
            (stats.queued, stats.busy, stats.in_use),
            (1, 1, 1),
            "{stats:?}"
        );

        holder.abort();
        let _ = holder.await;
        assert_eq!(rt.slot_stats().in_use, 0);
        let call = rt
            .call_hook(
                &hostile,
                "PreToolUse",
                &attack("none"),
                &Limits::default(),
                ctx(),
            )
            .await
            .expect("the slot is free again");
        assert_eq!(call.result.reason.as_deref(), Some("ok"));
    });
}

/// Deadlines are wall time, also while every core is busy: with more spinning threads than
/// cores the epoch ticker wakes late, and the ticks it missed must still count. The guest is
/// never stopped before its deadline either.
#[test]
fn a_looping_guest_stops_at_its_deadline_while_the_machine_is_busy() {
    let rt = runtime();
    let hostile = load(&rt, warden_test_artifacts::HOSTILE);
    let stop = Arc::new(AtomicBool::new(false));
    let cores = std::thread::available_parallelism().map_or(2, usize::from);
    let spinners: Vec<_> = (0..cores * 4)
        .map(|_| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut n: u64 = 0;
                while !stop.load(Ordering::Relaxed) {
                    n = std::hint::black_box(n.wrapping_add(1));
                }
            })
        })
        .collect();
    let deadline = Duration::from_secs(1);
    let started = Instant::now();
    let result = block_on(rt.call_hook(
        &hostile,
        "PreToolUse",
        &attack("loop"),
        &Limits::with_deadline(deadline),
        ctx(),
    ));
    let took = started.elapsed();
    stop.store(true, Ordering::Relaxed);
    for s in spinners {
        s.join().expect("spinner");
    }
    let err = result.expect_err("must be stopped");
    assert!(matches!(err, RuntimeError::Deadline { .. }), "{err}");
    assert!(took >= deadline, "stopped early, after {took:?}");
    assert!(
        took < deadline * 2,
        "a 1 s deadline took {took:?} with {} busy threads on {cores} cores",
        cores * 4
    );
    assert_still_serves(&rt, &hostile);
}
