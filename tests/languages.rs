//! Guest languages: the same reference hook built from Rust, Python, JavaScript and C by
//! `warden build` answers one decision table alike and fails alike under the same limits;
//! the example plugins in each language pass their own cases; `warden new` scaffolds a
//! plugin in each language that builds with one command and validates.
//!
//! The toolchains are pinned and installed on first use (`tests/support/toolchains.rs`), and
//! built components are cached by the hash of their inputs.

#[path = "support/toolchains.rs"]
mod toolchains;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::time::Duration;

use serde_json::{Value, json};
use warden::hook_result::Decision;
use warden::runtime::{
    CallContext, DigestPin, Grant, Limits, LoadedComponent, Runtime, RuntimeConfig, World,
};

const LANGS: [&str; 4] = ["rust", "python", "js", "c"];

fn runtime() -> &'static Runtime {
    static RT: OnceLock<Runtime> = OnceLock::new();
    RT.get_or_init(|| Runtime::new(RuntimeConfig::default()).expect("runtime"))
}

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio")
        .block_on(f)
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The reference hook of `lang`, built (or taken from the cache) and loaded.
fn reference(lang: &str) -> LoadedComponent {
    let dir = toolchains::repo().join("tests/guests/decision").join(lang);
    let built = toolchains::build(&dir);
    runtime()
        .load_file(&built[0], World::Hook, &Grant::default(), DigestPin::None)
        .unwrap_or_else(|e| panic!("load the {lang} reference hook: {e}"))
}

fn bash(command: &str) -> String {
    json!({
        "session_id": "s", "transcript_path": "/tmp/t.jsonl", "cwd": "/tmp",
        "permission_mode": "default", "hook_event_name": "PreToolUse",
        "tool_name": "Bash", "tool_input": { "command": command }, "tool_use_id": "t1"
    })
    .to_string()
}

fn call(
    hook: &LoadedComponent,
    event: &str,
    input: &str,
    limits: &Limits,
) -> Result<warden::runtime::HookResult, warden::runtime::RuntimeError> {
    block_on(runtime().call_hook(
        hook,
        event,
        input,
        limits,
        CallContext::new("/tmp", &Grant::default()),
    ))
    .map(|c| c.result)
}

/// (event, input, decision, reason, additional context, updated input, system message,
/// continue, stop reason): the rules in `tests/guests/decision/README.md`.
#[allow(clippy::type_complexity)]
fn table() -> Vec<(
    &'static str,
    String,
    Decision,
    Option<&'static str>,
    Option<&'static str>,
    Option<Value>,
    Option<&'static str>,
    bool,
    Option<&'static str>,
)> {
    use Decision::*;
    let read = json!({
        "session_id": "s", "transcript_path": "/tmp/t.jsonl", "cwd": "/tmp",
        "hook_event_name": "PreToolUse", "tool_name": "Read",
        "tool_input": { "file_path": "/etc/passwd" }
    })
    .to_string();
    let no_command = json!({
        "session_id": "s", "transcript_path": "/tmp/t.jsonl", "cwd": "/tmp",
        "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": { "command": 42 }
    })
    .to_string();
    let post = json!({
        "session_id": "s", "transcript_path": "/tmp/t.jsonl", "cwd": "/tmp",
        "hook_event_name": "PostToolUse", "tool_name": "Bash",
        "tool_input": { "command": "ls" }, "tool_response": {}
    })
    .to_string();
    vec![
        ("PostToolUse", post, None, None, None, None, None, true, None),
        ("PreToolUse", read, None, None, None, None, None, true, None),
        ("PreToolUse", no_command, None, None, None, None, None, true, None),
        (
            "PreToolUse",
            bash("psql -c 'Drop Table users'"),
            Deny,
            Some("destructive SQL: DROP TABLE"),
            None,
            None,
            None,
            true,
            None,
        ),
        (
            "PreToolUse",
            bash("sudo rm -rf /var/tmp/x"),
            Ask,
            Some("runs as root"),
            None,
            None,
            None,
            true,
            None,
        ),
        (
            "PreToolUse",
            bash("sudo drop table"),
            Deny,
            Some("destructive SQL: DROP TABLE"),
            None,
            None,
            None,
            true,
            None,
        ),
        (
            "PreToolUse",
            bash("ls"),
            Allow,
            Some("read-only listing"),
            None,
            None,
            None,
            true,
            None,
        ),
        ("PreToolUse", bash("ls -la"), None, None, None, None, None, true, None),
        (
            "PreToolUse",
            bash("rewrite"),
            Allow,
            Some("rewritten"),
            None,
            Some(json!({ "command": "ls -la" })),
            None,
            true,
            None,
        ),
        (
            "PreToolUse",
            bash("stop"),
            None,
            None,
            None,
            None,
            None,
            false,
            Some("stopped by policy"),
        ),
        (
            "PreToolUse",
            bash("say héllo ✓ 日本 \"quoted\" \\ back"),
            None,
            None,
            None,
            None,
            Some("héllo ✓ 日本 \"quoted\" \\ back"),
            true,
            None,
        ),
        (
            "PreToolUse",
            bash("echo hi"),
            None,
            None,
            Some("echo is harmless"),
            None,
            None,
            true,
            None,
        ),
        ("PreToolUse", bash("sudo"), None, None, None, None, None, true, None),
        ("PreToolUse", bash(""), None, None, None, None, None, true, None),
    ]
}

#[test]
fn one_decision_table_agrees_across_rust_python_js_and_c() {
    let limits = Limits {
        deadline: Duration::from_secs(30),
        ..Limits::default()
    };
    for lang in LANGS {
        let hook = reference(lang);
        for (event, input, decision, reason, context, updated, message, cont, stop) in table() {
            let got = call(&hook, event, &input, &limits)
                .unwrap_or_else(|e| panic!("{lang}: {input}: {e}"));
            let what = format!("{lang}: {input}: {got:?}");
            assert_eq!(got.decision, decision, "{what}");
            assert_eq!(got.reason.as_deref(), reason, "{what}");
            assert_eq!(got.additional_context.as_deref(), context, "{what}");
            let updated_got = got
                .updated_input
                .as_deref()
                .map(|u| serde_json::from_str::<Value>(u).expect("updated input is JSON"));
            assert_eq!(updated_got, updated, "{what}");
            assert_eq!(got.system_message.as_deref(), message, "{what}");
            assert_eq!(got.continue_, cont, "{what}");
            assert_eq!(got.stop_reason.as_deref(), stop, "{what}");
            assert!(!got.suppress_output, "{what}");
        }
    }
}

#[test]
fn every_language_fails_the_same_way_on_a_loop_a_memory_bomb_and_a_crash() {
    let limits = Limits {
        deadline: Duration::from_millis(1500),
        memory_bytes: 128 << 20,
        ..Limits::default()
    };
    for lang in LANGS {
        let hook = reference(lang);
        for (command, kind) in [
            ("__loop__", "deadline"),
            ("__bomb__", "memory-limit"),
            ("__trap__", "trap"),
        ] {
            let started = std::time::Instant::now();
            let err = call(&hook, "PreToolUse", &bash(command), &limits)
                .err()
                .unwrap_or_else(|| panic!("{lang}: {command} returned"));
            assert_eq!(err.kind(), kind, "{lang}: {command}: {err}");
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "{lang}: {command} took {:?}",
                started.elapsed()
            );
        }
        // The runtime is unharmed and the next call gets a fresh sandbox.
        let ok = call(&hook, "PreToolUse", &bash("ls"), &limits).expect("after the failures");
        assert_eq!(ok.decision, Decision::Allow, "{lang}");
    }
}

/// `plugins/<name>/tests/cases.json`: `{name, event, input, expect: {decision,
/// reason_contains?, reason_excludes?}}`.
fn run_cases(plugin: &str) {
    let dir = toolchains::repo().join("plugins").join(plugin);
    let built = toolchains::build(&dir);
    let hook = runtime()
        .load_file(&built[0], World::Hook, &Grant::default(), DigestPin::None)
        .unwrap_or_else(|e| panic!("load {plugin}: {e}"));
    let cases: Vec<Value> = serde_json::from_slice(
        &std::fs::read(dir.join("tests/cases.json")).expect("read cases.json"),
    )
    .expect("parse cases.json");
    assert!(cases.len() >= 12, "{plugin} has {} cases", cases.len());
    let limits = Limits::default();
    for case in cases {
        let name = case["name"].as_str().unwrap_or("?");
        let event = case["event"].as_str().unwrap_or("PreToolUse");
        let got = call(&hook, event, &case["input"].to_string(), &limits)
            .unwrap_or_else(|e| panic!("{plugin}: {name}: {e}"));
        let expect = &case["expect"];
        let decision = format!("{:?}", got.decision).to_lowercase();
        assert_eq!(
            Some(decision.as_str()),
            expect["decision"].as_str(),
            "{plugin}: {name}: {got:?}"
        );
        let reason = got.reason.clone().unwrap_or_default();
        if let Some(want) = expect["reason_contains"].as_str() {
            assert!(reason.contains(want), "{plugin}: {name}: {reason:?} lacks {want:?}");
        }
        if let Some(never) = expect["reason_excludes"].as_str() {
            assert!(!reason.contains(never), "{plugin}: {name}: {reason:?} has {never:?}");
        }
    }
}

#[test]
fn block_drop_table_in_python_passes_its_cases() {
    run_cases("block-drop-table");
}

#[test]
fn secret_scanner_in_javascript_passes_its_cases() {
    run_cases("secret-scanner");
}

#[test]
fn url_guard_in_c_passes_its_cases() {
    run_cases("url-guard");
}

fn warden(args: &[&str], cwd: &Path, toolchain: bool) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_warden"));
    cmd.args(args)
        .current_dir(cwd)
        .env("WARDEN_NO_CLAUDE_CONFIG", "1");
    if toolchain {
        for (k, v) in toolchains::env() {
            cmd.env(k, v);
        }
    }
    cmd.output().expect("run warden")
}

#[test]
fn warden_new_scaffolds_a_plugin_in_each_language_that_builds_validates_and_runs() {
    let scratch = tempfile::tempdir().expect("tempdir");
    for lang in LANGS {
        for kind in ["hook", "tool"] {
            let name = format!("my-{lang}-{kind}");
            let out = warden(&["new", kind, "--lang", lang, &name], scratch.path(), false);
            assert!(out.status.success(), "new {kind} {lang}: {}", text(&out));
            let dir = scratch.path().join(&name);
            assert!(dir.join(".claude-plugin/plugin.json").is_file());
            assert!(dir.join("warden.toml").is_file());
            assert!(dir.join("README.md").is_file());

            // Like `cargo new`, it refuses to overwrite.
            let again = warden(&["new", kind, "--lang", lang, &name], scratch.path(), false);
            assert!(!again.status.success(), "{name} created twice");
            assert!(text(&again).contains("already exists"), "{}", text(&again));

            // Before the build, validate says how to make the component.
            let before = warden(&["plugin", "validate", "."], &dir, false);
            assert!(!before.status.success(), "{name}: {}", text(&before));
            assert!(text(&before).contains("warden build"), "{name}: {}", text(&before));

            let built = warden(&["build"], &dir, true);
            assert!(built.status.success(), "build {name}: {}", text(&built));
            let valid = warden(&["plugin", "validate", "."], &dir, false);
            assert!(valid.status.success(), "validate {name}: {}", text(&valid));

            let wasm = dir.join(format!("wasm/{name}.wasm"));
            if kind == "hook" {
                let hook = runtime()
                    .load_file(&wasm, World::Hook, &Grant::default(), DigestPin::None)
                    .expect("load the scaffolded hook");
                let limits = Limits::default();
                let sudo = call(&hook, "PreToolUse", &bash("sudo ls"), &limits).expect("call");
                assert_eq!(sudo.decision, Decision::Ask, "{name}: {sudo:?}");
                let rm = call(&hook, "PreToolUse", &bash("rm -rf /"), &limits).expect("call");
                assert_eq!(rm.decision, Decision::Deny, "{name}: {rm:?}");
                let ls = call(&hook, "PreToolUse", &bash("ls"), &limits).expect("call");
                assert_eq!(ls.decision, Decision::None, "{name}: {ls:?}");
            } else {
                let tool = runtime()
                    .load_file(&wasm, World::Tool, &Grant::default(), DigestPin::None)
                    .expect("load the scaffolded tool");
                let info = block_on(runtime().describe_tool(
                    &tool,
                    &Limits::default(),
                    CallContext::new("/tmp", &Grant::default()),
                ))
                .expect("describe");
                assert!(!info.name.is_empty(), "{name}");
                let out = block_on(runtime().call_tool(
                    &tool,
                    &json!({ "text": "one two\nthree\n" }).to_string(),
                    &Limits::default(),
                    CallContext::new("/tmp", &Grant::default()),
                ))
                .expect("invoke");
                let content = format!("{out:?}");
                assert!(content.contains("2 lines"), "{name}: {content}");
                assert!(content.contains("3 words"), "{name}: {content}");
            }
        }
    }
}

#[test]
fn warden_new_refuses_names_claude_code_refuses() {
    let scratch = tempfile::tempdir().expect("tempdir");
    for bad in ["My Hook", "UPPER", "-dash", "a/../../b", "has_underscore"] {
        let out = warden(&["new", "hook", "--lang", "rust", bad], scratch.path(), false);
        assert!(!out.status.success(), "{bad}: {}", text(&out));
        assert!(
            text(&out).contains("not a valid plugin name") || text(&out).contains("already exists"),
            "{bad}: {}",
            text(&out)
        );
    }
    assert_eq!(
        std::fs::read_dir(scratch.path()).expect("read").count(),
        0,
        "nothing was left behind"
    );
}

/// A copy of a plugin with a `build` key, for the failure tests.
fn python_plugin(dir: &Path) -> PathBuf {
    let out = warden(&["new", "hook", "--lang", "python", "p"], dir, false);
    assert!(out.status.success(), "{}", text(&out));
    dir.join("p")
}

#[test]
fn warden_build_names_a_missing_tool_and_how_to_install_it() {
    let scratch = tempfile::tempdir().expect("tempdir");
    let plugin = python_plugin(scratch.path());
    let out = Command::new(env!("CARGO_BIN_EXE_warden"))
        .arg("build")
        .arg(&plugin)
        .env("PATH", "/nonexistent")
        .env_remove("WARDEN_COMPONENTIZE_PY")
        .output()
        .expect("run");
    assert!(!out.status.success());
    let msg = text(&out);
    assert!(msg.contains("componentize-py was not found"), "{msg}");
    assert!(msg.contains("pip install componentize-py=="), "{msg}");
    assert!(!msg.contains("panicked"), "{msg}");
}

#[cfg(unix)]
#[test]
fn warden_build_never_writes_outside_the_plugin() {
    let scratch = tempfile::tempdir().expect("tempdir");
    let outside = tempfile::tempdir().expect("outside");
    let plugin = python_plugin(scratch.path());
    // A hostile plugin ships `wasm` as a symlink to somewhere else.
    std::os::unix::fs::symlink(outside.path(), plugin.join("wasm")).expect("symlink");
    let out = warden(&["build"], &plugin, true);
    assert!(!out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("outside the plugin root"), "{}", text(&out));
    assert_eq!(
        std::fs::read_dir(outside.path()).expect("read").count(),
        0,
        "nothing written outside"
    );

    // A source that is a symlink out of the plugin is refused before any tool runs.
    let plugin2 = scratch.path().join("p2");
    std::fs::create_dir_all(plugin2.join(".claude-plugin")).expect("mkdir");
    std::fs::write(outside.path().join("stolen.py"), "x = 1\n").expect("write");
    std::os::unix::fs::symlink(outside.path().join("stolen.py"), plugin2.join("hook.py"))
        .expect("symlink");
    std::fs::write(
        plugin2.join("warden.toml"),
        "[components.x]\npath = \"wasm/x.wasm\"\nworld = \"hook\"\nbuild = { lang = \"python\", source = \"hook.py\" }\n",
    )
    .expect("write");
    let out = warden(&["build"], &plugin2, true);
    assert!(!out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("outside the plugin root"), "{}", text(&out));
    assert!(!plugin2.join("wasm").exists());
}

#[test]
fn a_failed_build_leaves_the_previous_component_working() {
    let scratch = tempfile::tempdir().expect("tempdir");
    let plugin = python_plugin(scratch.path());
    let ok = warden(&["build"], &plugin, true);
    assert!(ok.status.success(), "{}", text(&ok));
    let wasm = plugin.join("wasm/p.wasm");
    let before = std::fs::read(&wasm).expect("built");
    std::fs::write(plugin.join("hook.py"), "def broken(:\n").expect("break it");
    let bad = warden(&["build"], &plugin, true);
    assert!(!bad.status.success());
    assert!(text(&bad).contains("componentize-py"), "{}", text(&bad));
    assert_eq!(std::fs::read(&wasm).expect("still there"), before);
}
