//! Dispatch latency of one `PreToolUse` through 10 matching handlers: bash command hooks versus
//! a trivial in-process WASM runner (the host crate adds the wasmtime-backed variant).
//!
//! Besides criterion's mean, prints p50 / p99 over a fixed number of dispatches.
#![allow(missing_docs)] // `criterion_group!` generates an undocumented function.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use warden_config::{Scope, Settings, SettingsFile};
use warden_hooks::*;

struct Trivial;

impl WasmHookRunner for Trivial {
    fn run<'a>(
        &'a self,
        call: WasmHookCall<'a>,
    ) -> Pin<Box<dyn Future<Output = RawOutcome> + Send + 'a>> {
        Box::pin(async move {
            let input: Value = serde_json::from_str(call.input).unwrap_or(Value::Null);
            let deny = input
                .pointer("/tool_input/command")
                .and_then(Value::as_str)
                .is_some_and(|c| c.contains("rm -rf"));
            let d = if deny { "deny" } else { "allow" };
            RawOutcome::exited(
                0,
                format!(
                    r#"{{"hookSpecificOutput":{{"hookEventName":"PreToolUse","permissionDecision":"{d}"}}}}"#
                ),
                "",
            )
        })
    }
}

fn input() -> Value {
    json!({
        "session_id": "s", "transcript_path": "/tmp/t.jsonl", "cwd": "/tmp", "permission_mode": "default",
        "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls -la"}, "tool_use_id": "u"
    })
}

fn bash_config(script: &str) -> HookConfig {
    let handlers: Vec<Value> = (0..10)
        .map(|i| json!({"type": "command", "command": format!("bash {script} {i}")}))
        .collect();
    let mut value = serde_json::Map::new();
    value.insert(
        "hooks".into(),
        json!({"PreToolUse": [{"matcher": "Bash", "hooks": handlers}]}),
    );
    let settings = Settings {
        files: vec![SettingsFile {
            scope: Scope::User,
            origin: Default::default(),
            path: None,
            value,
        }],
        errors: vec![],
        ..Default::default()
    };
    HookConfigBuilder::from_settings(&settings).build()
}

fn wasm_config(root: &std::path::Path) -> HookConfig {
    let mut components = serde_json::Map::new();
    let mut handlers = Vec::new();
    for i in 0..10 {
        components.insert(
            format!("c{i}"),
            json!({"path": format!("wasm/c{i}.wasm"), "world": "hook"}),
        );
        handlers.push(json!({"type": "wasm", "component": format!("c{i}")}));
    }
    let manifest = json!({"warden": {"components": components, "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": handlers}]}}});
    let mut b = HookConfigBuilder::new();
    b.add_plugin(
        PluginContext::new("bench@local", root, root.join("data")),
        Some(&manifest),
    );
    b.build()
}

fn percentiles(
    rt: &tokio::runtime::Runtime,
    cfg: &HookConfig,
    opts: &DispatchOptions,
    n: usize,
) -> (Duration, Duration) {
    let input = input();
    let mut samples: Vec<Duration> = (0..n)
        .map(|_| {
            let t = Instant::now();
            let r = rt.block_on(dispatch(Event::PreToolUse, &input, cfg, opts));
            assert_eq!(
                r.merged.permission,
                Some(HookVerdict::Decided(Decision::Allow))
            );
            t.elapsed()
        })
        .collect();
    samples.sort();
    let at = |q: f64| samples[((samples.len() as f64 - 1.0) * q).round() as usize];
    (at(0.50), at(0.99))
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let dir = tempfile::tempdir().expect("tempdir");
    let script = dir.path().join("guard.sh");
    std::fs::write(
        &script,
        "input=$(cat)\nif [[ \"$input\" == *'rm -rf'* ]]; then d=deny; else d=allow; fi\nprintf '{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"%s\"}}' \"$d\"\n",
    )
    .expect("script");
    let bash = bash_config(&script.display().to_string());
    let wasm = wasm_config(dir.path());
    let opts = DispatchOptions::new(dir.path());
    let wasm_opts = DispatchOptions::new(dir.path()).with_wasm_runner(Arc::new(Trivial));

    for (name, cfg, o, n) in [
        ("10 bash command hooks", &bash, &opts, 200),
        ("10 in-process runner hooks", &wasm, &wasm_opts, 2000),
    ] {
        let (p50, p99) = percentiles(&rt, cfg, o, n);
        println!("pre_tool_use / {name}: p50 {p50:?}  p99 {p99:?}  (n = {n})");
    }

    let mut g = c.benchmark_group("pre_tool_use");
    g.sample_size(30);
    let input = input();
    g.bench_function("10_bash_command_hooks", |b| {
        b.iter(|| rt.block_on(dispatch(Event::PreToolUse, &input, &bash, &opts)))
    });
    g.bench_function("10_in_process_runner_hooks", |b| {
        b.iter(|| rt.block_on(dispatch(Event::PreToolUse, &input, &wasm, &wasm_opts)))
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default();
    targets = bench
}
criterion_main!(benches);
