//! The fuzz smoke run: every committed seed (`fuzz/seeds/<target>/`) and every regression
//! input (`fuzz/regressions/<target>/`) through every fuzz target body, on stable Rust with no
//! libFuzzer. A regression input is one that once crashed, hung or exhausted memory; replaying
//! it through all targets, not only the one that found it, keeps parsers that share code
//! honest. The bodies are `fuzz/src/targets.rs`, the same functions the fuzzers run.

#[allow(dead_code, missing_docs)]
#[path = "../fuzz/src/targets.rs"]
mod targets;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// One input taking longer than this through one body counts as a hang: libFuzzer runs with
/// `-timeout=10` on an instrumented build, and a release build is faster than that.
const SLOW: Duration = Duration::from_secs(10);

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("repo root")
        .join("fuzz")
}

/// Every file under `fuzz/<kind>/<target>/`, for every target directory present.
fn inputs(kind: &str) -> Vec<PathBuf> {
    let root = fuzz_dir().join(kind);
    let mut out = Vec::new();
    let Ok(dirs) = std::fs::read_dir(&root) else {
        return out;
    };
    for d in dirs.flatten() {
        let Ok(files) = std::fs::read_dir(d.path()) else {
            continue;
        };
        for f in files.flatten() {
            if f.path().is_file() {
                out.push(f.path());
            }
        }
    }
    out.sort();
    out
}

fn replay(paths: &[PathBuf]) {
    for path in paths {
        let data = std::fs::read(path).expect("read a corpus file");
        for (name, body) in targets::TARGETS {
            let start = Instant::now();
            body(&data);
            let took = start.elapsed();
            assert!(
                took < SLOW,
                "{name} took {took:?} on {}: a hang the fuzzer would report",
                path.display()
            );
        }
    }
}

#[test]
fn every_target_has_seeds() {
    let seeds = fuzz_dir().join("seeds");
    for (name, _) in targets::TARGETS {
        let dir = seeds.join(name);
        let n = std::fs::read_dir(&dir)
            .map(|d| d.flatten().count())
            .unwrap_or(0);
        assert!(n > 0, "no seeds in {}", dir.display());
        assert!(
            fuzz_dir()
                .join("fuzz_targets")
                .join(format!("{name}.rs"))
                .is_file(),
            "no fuzz target for {name}"
        );
    }
}

#[test]
fn seeds_replay_through_every_target() {
    let seeds = inputs("seeds");
    assert!(!seeds.is_empty(), "no seeds under fuzz/seeds");
    replay(&seeds);
}

#[test]
fn regressions_replay_through_every_target() {
    replay(&inputs("regressions"));
}
