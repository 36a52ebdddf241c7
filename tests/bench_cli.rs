//! `warden bench` through the real binary, in a size that takes seconds: every dispatch
//! answers correctly, a pool smaller than the burst makes calls queue instead of failing, and
//! the JSON has the shape scripts read. The full run (`warden bench` with its defaults) is a
//! command, not a test: see the README's "Load and soak".

use std::process::Command;

use serde_json::Value;

const WARDEN: &str = env!("CARGO_BIN_EXE_warden");

fn number(v: &Value, key: &str) -> f64 {
    v.get(key)
        .and_then(Value::as_f64)
        .unwrap_or_else(|| panic!("`{key}` is not a number in {v}"))
}

#[test]
fn a_small_bench_run_queues_on_a_small_pool_and_reports_no_errors() {
    let out = Command::new(WARDEN)
        .args([
            "bench",
            "--plugins",
            "10",
            "--concurrent",
            "500",
            "--rounds",
            "2",
            "--sequential",
            "5000",
            "--direct",
            "2000",
            // One slot for four worker threads: calls running on different threads at once
            // must wait for the slot, not fail.
            "--pool",
            "1",
            "--threads",
            "4",
            "--json",
        ])
        .env("WARDEN_MANAGED_SETTINGS_DIR", "")
        .env("WARDEN_NO_CLAUDE_CONFIG", "1")
        .output()
        .expect("run warden bench");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "exit {:?}\n{stdout}\n{stderr}",
        out.status
    );
    let report: Value = serde_json::from_str(&stdout).expect("one JSON object on stdout");

    assert_eq!(report["errors"], 0, "{report:#}");
    assert_eq!(report["busy"], 0, "{report:#}");
    assert_eq!(report["runtime"]["slots"], 1);
    assert_eq!(report["machine"]["workerThreads"], 4);
    assert_eq!(report["hook"]["event"], "PreToolUse");
    assert!(
        report["dispatchPath"]
            .as_str()
            .is_some_and(|p| p.contains("warden_hooks::dispatch"))
    );

    let plugins = &report["plugins"];
    assert_eq!(plugins["count"], 10);
    assert_eq!(plugins["errors"], 0, "{plugins:#}");
    assert!(number(plugins, "rssIdleMib") > 0.0);
    assert!(number(plugins, "rssSessionLoadedMib") > 0.0);
    assert!(plugins["withinGoal"].is_boolean());

    let runs = report["runs"].as_array().expect("runs");
    let parts: Vec<(&str, u64, u64)> = runs
        .iter()
        .map(|r| {
            (
                r["path"].as_str().unwrap_or(""),
                r["concurrency"].as_u64().unwrap_or(0),
                r["calls"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    assert_eq!(
        parts,
        [
            ("dispatch", 500, 1000),
            ("dispatch", 1, 5000),
            ("runtime", 1, 1000),
            ("runtime", 4, 1000)
        ],
        "{report:#}"
    );
    for run in runs {
        assert_eq!(run["errors"], 0, "{run:#}");
        assert_eq!(run["busy"], 0, "{run:#}");
        assert!(number(run, "callsPerSec") > 0.0, "{run:#}");
        let (p50, p99) = (number(run, "p50Us"), number(run, "p99Us"));
        assert!(p50 > 0.0 && p99 >= p50, "{run:#}");
        assert!(
            run["peakSlotsInUse"].as_u64().is_some_and(|p| p <= 1),
            "{run:#}"
        );
        let rss = &run["rss"];
        assert!(number(rss, "startMib") > 0.0, "{run:#}");
        assert!(number(rss, "endMib") > 0.0, "{run:#}");
        assert!(rss["flatWithin10Pct"].is_boolean(), "{run:#}");
        assert!(rss["flatRule"].is_string(), "{run:#}");
    }
    // The burst ran on four threads at once against one slot.
    assert!(
        runs[0]["queued"].as_u64().is_some_and(|q| q > 0),
        "no call of the burst queued: {:#}",
        runs[0]
    );
    assert!(number(&report["hookCallsPerSec"], "dispatch") > 0.0);
    assert!(number(&report["hookCallsPerSec"], "callHookAlone") > 0.0);
}
