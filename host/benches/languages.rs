//! Guest languages side by side: the same reference hook (`tests/guests/decision/`) built from
//! Rust (std), C, JavaScript (QuickJS) and Python, plus the lean `no_std` Rust hook
//! `protect-secrets`, each called in a fresh sandbox, rounds interleaved so every language
//! sees the same machine.
//!
//! `cargo bench --workspace --bench languages` installs the pinned toolchains and builds the
//! guests on first use (as `cargo test` does), then prints per language: component size,
//! first load (compile, or the compile cache), p50 / p99 of one fresh-sandbox call, and the
//! process's minor page faults per call. `WARDEN_BENCH_ROUNDS` sets the rounds;
//! `WARDEN_BENCH_KEEP_RESIDENT=64K,16M` runs one runtime per keep-resident window side by
//! side; `WARDEN_BENCH_EXTRA=LABEL=PATH;...` adds components built by hand;
//! `WARDEN_BENCH_ONLY=TEXT` keeps the guests whose label contains TEXT.
//! componentize-py and componentize-qjs snapshot the initialised interpreter at build time
//! (wizer-style pre-initialisation, always on in both), so these numbers include it.

#[path = "../../tests/support/faults.rs"]
mod faults;
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

/// `64K`, `16M`, `1G` or a plain byte count.
fn bytes(text: &str) -> usize {
    let t = text.trim();
    let (num, shift) = match t.chars().last() {
        Some('K' | 'k') => (&t[..t.len() - 1], 10),
        Some('M' | 'm') => (&t[..t.len() - 1], 20),
        Some('G' | 'g') => (&t[..t.len() - 1], 30),
        _ => (t, 0),
    };
    num.parse::<usize>()
        .unwrap_or_else(|_| panic!("not a size: {text:?}"))
        << shift
}

fn main() {
    // `cargo bench` passes `--bench`; nothing else is taken.
    let rounds: usize = std::env::var("WARDEN_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10);
    // A comma-separated list of pool keep-resident sizes puts one runtime per size side by
    // side in the same rounds; unset, the default configuration alone.
    let keep: Vec<Option<usize>> = match std::env::var("WARDEN_BENCH_KEEP_RESIDENT") {
        Ok(list) => list.split(',').map(|v| Some(bytes(v))).collect(),
        Err(_) => vec![None],
    };
    let per_round = 100;
    let cache = tempfile::tempdir().expect("compile cache dir");
    let runtimes: Vec<(String, Runtime)> = keep
        .iter()
        .map(|k| {
            let mut config = RuntimeConfig {
                cache_dir: Some(cache.path().to_path_buf()),
                ..RuntimeConfig::default()
            };
            let label = match k {
                Some(k) => {
                    config.keep_resident_bytes = *k;
                    format!(", keep {} KiB", k >> 10)
                }
                None => String::new(),
            };
            (label, Runtime::new(config).expect("runtime"))
        })
        .collect();
    let mut guests: Vec<(String, PathBuf)> = vec![(
        "Rust lean (protect-secrets)".into(),
        PathBuf::from(warden::guests::PROTECT_SECRETS),
    )];
    for (label, lang) in [
        ("Rust std", "rust"),
        ("C", "c"),
        ("JavaScript (QuickJS)", "js"),
        ("Python", "python"),
    ] {
        let dir = toolchains::repo().join("tests/guests/decision").join(lang);
        guests.push((label.into(), toolchains::build(&dir).remove(0)));
    }
    // `LABEL=PATH;...`: more components of the same reference hook, e.g. a variant built by hand.
    if let Ok(extra) = std::env::var("WARDEN_BENCH_EXTRA") {
        for item in extra.split(';').filter(|i| !i.is_empty()) {
            let (label, path) = item.split_once('=').expect("LABEL=PATH");
            guests.push((label.into(), PathBuf::from(path)));
        }
    }
    // A substring of the labels to keep, to profile one guest alone.
    if let Ok(only) = std::env::var("WARDEN_BENCH_ONLY") {
        guests.retain(|(label, _)| label.contains(only.as_str()));
    }
    let input = json!({
        "session_id": "s", "transcript_path": "/tmp/t.jsonl", "cwd": "/tmp",
        "permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": "Bash",
        "tool_input": { "command": "ls" }, "tool_use_id": "t"
    })
    .to_string();
    let limits = Limits::default();
    let mut loaded: Vec<(String, u64, Duration, &Runtime, LoadedComponent)> = Vec::new();
    for (label, path) in &guests {
        for (config, rt) in &runtimes {
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
            loaded.push((format!("{label}{config}"), size, t.elapsed(), rt, c));
        }
    }
    let mut samples: Vec<Vec<Duration>> = vec![Vec::new(); loaded.len()];
    let mut faults = vec![0i64; loaded.len()];
    for _ in 0..rounds {
        for (i, (_, _, _, rt, c)) in loaded.iter().enumerate() {
            let before = faults::minor_faults(libc::RUSAGE_SELF);
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
            faults[i] += faults::minor_faults(libc::RUSAGE_SELF) - before;
        }
    }
    println!("\nfresh-sandbox PreToolUse call, {rounds} interleaved rounds x {per_round} calls");
    println!("| guest | component | first load | p50 | p99 | page faults / call |");
    println!("|---|---|---|---|---|---|");
    for ((label, size, load, _, _), (s, f)) in loaded.iter().zip(samples.iter_mut().zip(&faults)) {
        let size = if *size >= 1 << 20 {
            format!("{:.1} MiB", *size as f64 / (1 << 20) as f64)
        } else {
            format!("{:.1} KiB", *size as f64 / 1024.0)
        };
        println!(
            "| {label} | {size} | {:.0} ms | {:.1} µs | {:.1} µs | {:.0} |",
            load.as_secs_f64() * 1e3,
            pct(s, 0.50).as_secs_f64() * 1e6,
            pct(s, 0.99).as_secs_f64() * 1e6,
            *f as f64 / s.len() as f64
        );
    }
}
