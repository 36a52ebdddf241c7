//! Guest languages side by side: the same reference hook (`tests/guests/decision/`) built from
//! Rust (std), C, JavaScript (QuickJS) and Python, plus the lean `no_std` Rust hook
//! `protect-secrets`, each called in a fresh sandbox, rounds interleaved so every language
//! sees the same machine.
//!
//! `cargo bench --workspace --bench languages` installs the pinned toolchains and builds the
//! guests on first use (as `cargo test` does), then prints per language: component size,
//! first load (compile, or the compile cache), and p50 / p99 of one fresh-sandbox call.
//! componentize-py and componentize-qjs snapshot the initialised interpreter at build time
//! (wizer-style pre-initialisation, always on in both), so these numbers include it.

#[path = "../../tests/support/toolchains.rs"]
mod toolchains;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::json;
use warden::runtime::{
    CallContext, DigestPin, Grant, Limits, LoadedComponent, Runtime, RuntimeConfig, World,
};

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio")
        .block_on(f)
}

fn pct(samples: &mut [Duration], q: f64) -> Duration {
    samples.sort();
    samples[((samples.len() as f64 - 1.0) * q).round() as usize]
}

fn main() {
    // `cargo bench` passes `--bench`; nothing else is taken.
    let rounds: usize = std::env::var("WARDEN_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10);
    let per_round = 100;
    let rt = Runtime::new(RuntimeConfig::default()).expect("runtime");
    let mut guests: Vec<(&str, PathBuf)> = vec![(
        "Rust lean (protect-secrets)",
        PathBuf::from(warden::guests::PROTECT_SECRETS),
    )];
    for (label, lang) in [
        ("Rust std", "rust"),
        ("C", "c"),
        ("JavaScript (QuickJS)", "js"),
        ("Python", "python"),
    ] {
        let dir = toolchains::repo().join("tests/guests/decision").join(lang);
        guests.push((label, toolchains::build(&dir).remove(0)));
    }
    let input = json!({
        "session_id": "s", "transcript_path": "/tmp/t.jsonl", "cwd": "/tmp",
        "permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": "Bash",
        "tool_input": { "command": "ls" }, "tool_use_id": "t"
    })
    .to_string();
    let limits = Limits::default();
    let mut loaded: Vec<(&str, u64, Duration, LoadedComponent)> = Vec::new();
    for (label, path) in &guests {
        let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
        let t = Instant::now();
        let c = rt
            .load_file(
                Path::new(path),
                World::Hook,
                &Grant::default(),
                DigestPin::None,
            )
            .expect("load");
        loaded.push((label, size, t.elapsed(), c));
    }
    let mut samples: Vec<Vec<Duration>> = vec![Vec::new(); loaded.len()];
    for _ in 0..rounds {
        for (i, (_, _, _, c)) in loaded.iter().enumerate() {
            for _ in 0..per_round {
                let t = Instant::now();
                block_on(rt.call_hook(
                    c,
                    "PreToolUse",
                    &input,
                    &limits,
                    CallContext::new("/tmp", &Grant::default()),
                ))
                .expect("call");
                samples[i].push(t.elapsed());
            }
        }
    }
    println!("\nfresh-sandbox PreToolUse call, {rounds} interleaved rounds x {per_round} calls");
    println!("| guest | component | first load | p50 | p99 |");
    println!("|---|---|---|---|---|");
    for ((label, size, load, _), s) in loaded.iter().zip(samples.iter_mut()) {
        let size = if *size >= 1 << 20 {
            format!("{:.1} MiB", *size as f64 / (1 << 20) as f64)
        } else {
            format!("{:.1} KiB", *size as f64 / 1024.0)
        };
        println!(
            "| {label} | {size} | {:.0} ms | {:.1} µs | {:.1} µs |",
            load.as_secs_f64() * 1e3,
            pct(s, 0.50).as_secs_f64() * 1e6,
            pct(s, 0.99).as_secs_f64() * 1e6
        );
    }
}
