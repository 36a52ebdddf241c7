//! Hooks files beside the verdict of the plugin validator on each: every
//! `host/crates/vocab/tests/hooks/<name>.json` is loaded as a plugin's `hooks/hooks.json`, and its
//! diagnostics (with line and column) and what would load must equal `<name>.validate`.
//! `WARDEN_BLESS=1` rewrites the expectations from what the validator says now.

mod common;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use warden_plugins::{load_plugin, validate};

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
    let t = tempfile::tempdir().expect("tmp");
    common::write_tree(
        t.path(),
        &[
            (".claude-plugin/plugin.json", r#"{"name":"p"}"#),
            ("hooks/hooks.json", input),
        ],
    );
    let root = t.path().display().to_string();
    let mut out = String::new();
    for d in validate(t.path()).diagnostics {
        let at = match (d.line, d.column) {
            (Some(l), Some(c)) => format!(":{l}:{c}"),
            (Some(l), None) => format!(":{l}"),
            _ => String::new(),
        };
        let file = d.file.strip_prefix(t.path()).unwrap_or(&d.file);
        let sev = if d.is_error() { "error" } else { "warning" };
        // The temporary root changes from run to run; the expectation names it `<root>`.
        let message = d.message.replace(&root, "<root>");
        let _ = writeln!(out, "{}{at}: {sev}: {message}", file.display());
    }
    let p = load_plugin(t.path()).expect("plugin loads around its hooks");
    for set in &p.hooks {
        for (event, groups) in &set.hooks {
            let handlers: Vec<usize> = groups
                .as_array()
                .into_iter()
                .flatten()
                .map(|g| g["hooks"].as_array().map_or(0, Vec::len))
                .collect();
            let _ = writeln!(out, "loads {event}: handlers per group {handlers:?}");
        }
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
        let expected_file = case.with_extension("validate");
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
