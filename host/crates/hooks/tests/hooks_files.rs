//! Hooks files beside the verdict of the hook engine on each: every
//! `host/crates/vocab/tests/hooks/<name>.json` is added as a plugin's hooks file, and the
//! warnings and the handlers registered must equal `<name>.engine`. `WARDEN_BLESS=1` rewrites
//! the expectations from what the engine does now.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use warden_hooks::{HookConfigBuilder, PluginContext};

fn cases() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../vocab/tests/hooks");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("hooks cases")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    v.sort();
    assert!(!v.is_empty(), "no cases in {}", dir.display());
    v
}

fn verdict(input: &str) -> String {
    let value: serde_json::Value = serde_json::from_str(input).expect("cases are JSON");
    let mut b = HookConfigBuilder::new();
    let plugin = PluginContext::new("p@m", "/plugin", "/plugin-data");
    b.add_plugin_hooks(Arc::new(plugin), &value, "hooks.json");
    let config = b.build();
    let mut out = String::new();
    for w in &config.warnings {
        let _ = writeln!(out, "warning: {w}");
    }
    for h in config.all() {
        let matcher = h.matcher_text.as_deref().unwrap_or("*");
        let timeout = h
            .handler
            .timeout
            .map(|t| format!(" timeout {}s", t.as_secs_f64()))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "runs {} [{matcher}] {}{timeout}",
            h.event,
            h.handler.label()
        );
    }
    out
}

#[test]
fn each_hooks_file_gets_the_verdict_written_beside_it() {
    let bless = std::env::var_os("WARDEN_BLESS").is_some();
    let mut failures = Vec::new();
    for case in cases() {
        let input = std::fs::read_to_string(&case).expect("read case");
        let got = verdict(&input);
        let expected_file = case.with_extension("engine");
        if bless {
            std::fs::write(&expected_file, &got).expect("bless");
            continue;
        }
        let expected = std::fs::read_to_string(&expected_file).unwrap_or_default();
        if got != expected {
            failures.push(format!(
                "{}:\n--- expected\n{expected}--- got\n{got}",
                case.display()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
