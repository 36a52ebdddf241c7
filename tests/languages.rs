//! Guest languages: the same reference hook built from Rust, Python, JavaScript and C by
//! `warden build` answers one decision table alike and fails alike under the same limits;
//! the example plugins in each language pass their own cases; `warden new` scaffolds a
//! plugin in each language that builds with one command and validates.
//!
//! The toolchains are pinned and installed on first use (`tests/support/toolchains.rs`), and
//! built components are cached by the hash of their inputs.

#[path = "support/toolchains.rs"]
mod toolchains;

#[path = "support/ensure.rs"]
mod ensure;

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

/// One row of the decision table: what every build must answer.
#[derive(Clone)]
struct Row {
    event: &'static str,
    input: String,
    decision: Decision,
    reason: Option<&'static str>,
    context: Option<&'static str>,
    updated: Option<Value>,
    message: Option<&'static str>,
    cont: bool,
    stop: Option<&'static str>,
}

impl Row {
    fn new(event: &'static str, input: String) -> Row {
        Row {
            event,
            input,
            decision: Decision::None,
            reason: None,
            context: None,
            updated: None,
            message: None,
            cont: true,
            stop: None,
        }
    }

    fn bash(command: &str) -> Row {
        Row::new("PreToolUse", bash(command))
    }

    fn decide(mut self, d: Decision, reason: &'static str) -> Row {
        self.decision = d;
        self.reason = Some(reason);
        self
    }
}

/// The rules in `tests/guests/decision/README.md`.
fn table() -> Vec<Row> {
    let other = |event: &'static str, tool: &str, input: Value| {
        Row::new(
            event,
            json!({
                "session_id": "s", "transcript_path": "/tmp/t.jsonl", "cwd": "/tmp",
                "hook_event_name": event, "tool_name": tool, "tool_input": input,
                "tool_response": {}
            })
            .to_string(),
        )
    };
    vec![
        other("PostToolUse", "Bash", json!({ "command": "ls" })),
        other("PreToolUse", "Read", json!({ "file_path": "/etc/passwd" })),
        other("PreToolUse", "Bash", json!({ "command": 42 })),
        Row::bash("psql -c 'Drop Table users'")
            .decide(Decision::Deny, "destructive SQL: DROP TABLE"),
        Row::bash("sudo rm -rf /var/tmp/x").decide(Decision::Ask, "runs as root"),
        Row::bash("sudo drop table").decide(Decision::Deny, "destructive SQL: DROP TABLE"),
        Row::bash("ls").decide(Decision::Allow, "read-only listing"),
        Row::bash("ls -la"),
        Row {
            updated: Some(json!({ "command": "ls -la" })),
            ..Row::bash("rewrite").decide(Decision::Allow, "rewritten")
        },
        Row {
            cont: false,
            stop: Some("stopped by policy"),
            ..Row::bash("stop")
        },
        Row {
            message: Some("héllo ✓ 日本 \"quoted\" \\ back"),
            ..Row::bash("say héllo ✓ 日本 \"quoted\" \\ back")
        },
        Row {
            context: Some("echo is harmless"),
            ..Row::bash("echo hi")
        },
        Row::bash("sudo"),
        Row::bash(""),
    ]
}

/// Default limits with a deadline an interpreter guest meets even on a loaded machine.
fn roomy() -> Limits {
    Limits {
        deadline: Duration::from_secs(30),
        ..Limits::default()
    }
}

#[test]
fn one_decision_table_agrees_across_rust_python_js_and_c() {
    let limits = roomy();
    for lang in LANGS {
        let hook = reference(lang);
        for row in table() {
            let got = call(&hook, row.event, &row.input, &limits)
                .unwrap_or_else(|e| panic!("{lang}: {}: {e}", row.input));
            let what = format!("{lang}: {}: {got:?}", row.input);
            assert_eq!(got.decision, row.decision, "{what}");
            assert_eq!(got.reason.as_deref(), row.reason, "{what}");
            assert_eq!(got.additional_context.as_deref(), row.context, "{what}");
            let updated_got = got
                .updated_input
                .as_deref()
                .map(|u| serde_json::from_str::<Value>(u).expect("updated input is JSON"));
            assert_eq!(updated_got, row.updated, "{what}");
            assert_eq!(got.system_message.as_deref(), row.message, "{what}");
            assert_eq!(got.continue_, row.cont, "{what}");
            assert_eq!(got.stop_reason.as_deref(), row.stop, "{what}");
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

/// A guest keeps nothing from one call to the next, whatever its language: a global counter
/// read and bumped on every call answers 1 every time, with the pool's slots (and the pages
/// they keep resident) reused call after call.
#[test]
fn no_guest_state_survives_from_one_call_to_the_next_in_any_language() {
    let limits = roomy();
    for lang in LANGS {
        let hook = reference(lang);
        for i in 0..50 {
            let got = call(&hook, "PreToolUse", &bash("__count__"), &limits)
                .unwrap_or_else(|e| panic!("{lang}: call {i}: {e}"));
            assert_eq!(got.decision, Decision::Allow, "{lang}: call {i}: {got:?}");
            assert_eq!(got.reason.as_deref(), Some("1"), "{lang}: call {i}");
        }
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
            assert!(
                reason.contains(want),
                "{plugin}: {name}: {reason:?} lacks {want:?}"
            );
        }
        if let Some(never) = expect["reason_excludes"].as_str() {
            assert!(
                !reason.contains(never),
                "{plugin}: {name}: {reason:?} has {never:?}"
            );
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
            assert!(
                text(&before).contains("warden build"),
                "{name}: {}",
                text(&before)
            );

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
    for bad in [
        "My Hook",
        "UPPER",
        "9lives",
        "has_underscore",
        "trailing-",
        "a--b",
    ] {
        let out = warden(
            &["new", "hook", "--lang", "rust", bad],
            scratch.path(),
            false,
        );
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
    assert!(
        text(&out).contains("outside the plugin root"),
        "{}",
        text(&out)
    );
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
    assert!(
        text(&out).contains("outside the plugin root"),
        "{}",
        text(&out)
    );
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

fn sha256(path: &Path) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(
        std::fs::read(path).expect("read component"),
    ))
}

fn post_tool_use(cwd: &Path, command: &str) -> String {
    json!({
        "session_id": "s1", "transcript_path": "/tmp/t.jsonl", "cwd": cwd.display().to_string(),
        "permission_mode": "default", "hook_event_name": "PostToolUse", "tool_name": "Bash",
        "tool_input": { "command": command }, "tool_response": { "stdout": "ok" },
        "tool_use_id": format!("t-{command}")
    })
    .to_string()
}

#[test]
fn audit_log_appends_a_line_per_call_to_its_data_dir_and_can_write_nowhere_else() {
    let dir = toolchains::repo().join("plugins/audit-log");
    let wasm = toolchains::build(&dir).remove(0);
    let scratch = tempfile::tempdir().expect("tempdir");
    let data = scratch.path().join("data");
    let project = scratch.path().join("project");
    std::fs::create_dir_all(&data).expect("mkdir");
    std::fs::create_dir_all(&project).expect("mkdir");
    let grant = Grant {
        fs: vec![warden::runtime::FsGrant {
            path: data.clone(),
            write: true,
        }],
        env: vec!["CLAUDE_PLUGIN_DATA".into()],
        ..Grant::default()
    };
    let hook = runtime()
        .load_file(
            &wasm,
            World::Hook,
            &grant,
            DigestPin::Sha256(&sha256(&wasm)),
        )
        .expect("load audit-log with its grant");
    let call_with = |data_var: &Path, command: &str| {
        let mut ctx = CallContext::new(&project, &grant);
        ctx.env = vec![("CLAUDE_PLUGIN_DATA".into(), data_var.display().to_string())];
        block_on(runtime().call_hook(
            &hook,
            "PostToolUse",
            &post_tool_use(&project, command),
            &Limits::default(),
            ctx,
        ))
        .expect("the hook runs")
        .result
    };

    // Concurrent calls, as a turn's parallel tool calls make them: every line arrives whole.
    std::thread::scope(|s| {
        for i in 0..8 {
            let call_with = &call_with;
            let data = &data;
            s.spawn(move || {
                let r = call_with(data, &format!("echo {i}"));
                assert_eq!(r.decision, Decision::None, "{r:?}");
            });
        }
    });
    let log = std::fs::read_to_string(data.join("audit.jsonl")).expect("the log exists");
    let lines: Vec<Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect();
    assert_eq!(lines.len(), 8, "{log}");
    for line in &lines {
        assert_eq!(line["tool_name"], "Bash", "{line}");
        assert_eq!(line["session_id"], "s1", "{line}");
    }

    // Told to log into the project (a hostile or mistaken variable), it cannot: the grant
    // covers the data directory only. The hook still answers, and nothing appears there.
    let r = call_with(&project, "echo elsewhere");
    assert_eq!(r.decision, Decision::None, "{r:?}");
    assert_eq!(std::fs::read_dir(&project).expect("read").count(), 0);
    // Nor through `..` out of the granted directory.
    let escape = data.join("..").join("project");
    let r = call_with(&escape, "echo escape");
    assert_eq!(r.decision, Decision::None, "{r:?}");
    assert_eq!(std::fs::read_dir(&project).expect("read").count(), 0);
    assert_eq!(
        std::fs::read_to_string(data.join("audit.jsonl"))
            .expect("log")
            .lines()
            .count(),
        8
    );
}

#[test]
fn json_query_answers_its_cases_with_a_read_only_grant() {
    let dir = toolchains::repo().join("plugins/json-query");
    let wasm = toolchains::build(&dir).remove(0);
    let cases: Vec<Value> = serde_json::from_slice(
        &std::fs::read(dir.join("tests/cases.json")).expect("read cases.json"),
    )
    .expect("parse cases.json");
    assert!(cases.len() >= 10);
    for case in cases {
        let name = case["name"].as_str().unwrap_or("?");
        let scratch = tempfile::tempdir().expect("tempdir");
        let project = scratch.path().join("project");
        std::fs::create_dir_all(&project).expect("mkdir");
        for (rel, content) in case["files"].as_object().into_iter().flatten() {
            let path = project.join(rel);
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            std::fs::write(&path, serde_json::to_vec_pretty(content).expect("json"))
                .expect("write");
        }
        let grant = Grant {
            fs: vec![warden::runtime::FsGrant {
                path: project.clone(),
                write: false,
            }],
            ..Grant::default()
        };
        let tool = runtime()
            .load_file(
                &wasm,
                World::Tool,
                &grant,
                DigestPin::Sha256(&sha256(&wasm)),
            )
            .expect("load json-query");
        let out = block_on(runtime().call_tool(
            &tool,
            &case["input"].to_string(),
            &Limits::default(),
            CallContext::new(&project, &grant),
        ))
        .unwrap_or_else(|e| panic!("{name}: {e}"));
        use warden::runtime::ToolCallOutcome as O;
        let expect = &case["expect"];
        match (&out.outcome, expect["ok"].as_bool()) {
            (O::Ok { content, .. }, Some(true)) => {
                let want = expect["content_contains"].as_str().unwrap_or("");
                assert!(content.contains(want), "{name}: {content:?} lacks {want:?}");
            }
            (O::InvalidInput(m), Some(false))
            | (O::Denied(m), Some(false))
            | (O::Failed(m), Some(false)) => {
                let kind = match &out.outcome {
                    O::InvalidInput(_) => "invalid-input",
                    O::Denied(_) => "denied",
                    _ => "failed",
                };
                assert_eq!(Some(kind), expect["error"].as_str(), "{name}: {m}");
                if let Some(want) = expect["message_contains"].as_str() {
                    assert!(m.contains(want), "{name}: {m:?} lacks {want:?}");
                }
            }
            (other, _) => panic!("{name}: unexpected {other:?} for {expect}"),
        }
        // Read-only: nothing in the project changed.
        assert!(!project.join("out.json").exists());
    }
}

/// `sdk/python/wit/worlds.wit` is what `gen_worlds.py` renders, and `sdk/python/bindings/` is
/// what componentize-py generates from it (the `editor` world) and `wit/v0.1`.
#[test]
fn python_editor_bindings_and_worlds_are_what_their_generators_make() {
    let sdk = toolchains::repo().join("sdk/python");
    let cpy = toolchains::componentize_py();
    let python = cpy.with_file_name("python3");
    let out = Command::new(&python)
        .arg("-c")
        .arg("import sys; sys.path.insert(0, 'scripts'); import gen_worlds; sys.stdout.write(gen_worlds.render())")
        .current_dir(&sdk)
        .output()
        .expect("run python3");
    assert!(out.status.success(), "gen_worlds.py: {}", text(&out));
    ensure::ensure_file(
        &sdk.join("wit/worlds.wit"),
        &out.stdout,
        "python3 sdk/python/scripts/gen_worlds.py",
    );

    let scratch = tempfile::tempdir().expect("tempdir");
    let fresh = scratch.path().join("bindings");
    let out = Command::new(&cpy)
        .arg("-d")
        .arg(toolchains::repo().join("wit/v0.1"))
        .arg("-d")
        .arg(sdk.join("wit"))
        .args(["-w", "warden:python/editor@0.1.0", "bindings"])
        .arg(&fresh)
        .output()
        .expect("run componentize-py");
    assert!(
        out.status.success(),
        "componentize-py bindings: {}",
        text(&out)
    );
    ensure::ensure_tree(
        &fresh,
        &sdk.join("bindings"),
        "sdk/python/scripts/regen_bindings.sh",
    );
}

/// `sdk/js/types/wit/` is what `sdk/js/gen-types.mjs` (jco's type generator) makes from
/// `wit/v0.1`.
#[test]
fn js_wit_types_are_what_their_generator_makes() {
    let repo = toolchains::repo();
    let scratch = tempfile::tempdir().expect("tempdir");
    let fresh = scratch.path().join("wit");
    let out = Command::new(toolchains::peers::node())
        .arg(repo.join("sdk/js/gen-types.mjs"))
        .arg("--jco")
        .arg(toolchains::jco_typegen())
        .arg(repo.join("wit/v0.1"))
        .arg(&fresh)
        .output()
        .expect("run node");
    assert!(out.status.success(), "gen-types.mjs: {}", text(&out));
    ensure::ensure_tree(
        &fresh,
        &repo.join("sdk/js/types/wit"),
        "node sdk/js/gen-types.mjs --jco <jco-transpile> wit/v0.1 sdk/js/types/wit",
    );
}
