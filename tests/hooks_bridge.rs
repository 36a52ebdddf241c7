//! `warden hook`: the bridge Claude Code calls, with command hooks written in bash and
//! python3 beside a WASM hook component, all run by the real binary.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

fn warden(args: &[&str], home: &Path, stdin: &str) -> Output {
    warden_in(None, args, home, stdin)
}

/// Runs warden in `dir` (default: the test's own directory).
fn warden_in(dir: Option<&Path>, args: &[&str], home: &Path, stdin: &str) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_warden"));
    if let Some(dir) = dir {
        cmd.current_dir(dir);
    }
    let mut child = cmd
        .args(args)
        .env("WARDEN_HOME", home)
        .env("WARDEN_NO_CLAUDE_CONFIG", "1")
        .env("WARDEN_MANAGED_SETTINGS_DIR", "")
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

fn guard_plugin() -> PathBuf {
    PathBuf::from(warden::guests::PLUGINS_DIR).join("protect-secrets")
}

fn pre_tool_use(cwd: &Path, tool: &str, input: Value) -> String {
    json!({
        "session_id": "00000000-1111-4222-8333-444444444444",
        "transcript_path": cwd.join("t.jsonl").display().to_string(),
        "cwd": cwd.display().to_string(),
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": input,
        "tool_use_id": "toolu_bridge",
    })
    .to_string()
}

/// The decision `warden hook PreToolUse` printed: `Some("deny")`, or `None` for no output.
fn decision(out: &Output) -> Option<String> {
    assert_eq!(
        out.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    if text.trim().is_empty() {
        return None;
    }
    let v: Value = serde_json::from_str(&text).expect("stdout is JSON");
    v["hookSpecificOutput"]["permissionDecision"]
        .as_str()
        .map(str::to_string)
}

const BASH_HOOK: &str = r#"#!/usr/bin/env bash
# Deny file tools on credential files, reading the event from stdin as Claude Code sends it.
input=$(cat)
path=$(printf '%s' "$input" | grep -o '"file_path" *: *"[^"]*"' | sed 's/.*: *"\(.*\)"/\1/')
case "$path" in
  *.env|*/.env|*.pem|*id_rsa*|*secrets/*)
    echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"bash: protected file"}}'
    ;;
esac
exit 0
"#;

const PYTHON_HOOK: &str = r#"import json, os, re, sys
event = json.load(sys.stdin)
path = event.get("tool_input", {}).get("file_path", "")
name = os.path.basename(path)
if name == ".env" or name.endswith(".pem") or name.startswith("id_rsa") or re.search(r"(^|/)secrets/", path):
    print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                             "permissionDecisionReason": "python: protected file"}}))
sys.exit(0)
"#;

fn project_with_hook(dir: &Path, command: &str) {
    std::fs::create_dir_all(dir.join(".claude")).expect("mkdir");
    let settings = json!({"hooks": {"PreToolUse": [{"matcher": "Read|Edit|Write", "hooks": [{"type": "command", "command": command}]}]}});
    std::fs::write(dir.join(".claude/settings.json"), settings.to_string()).expect("settings");
}

#[test]
fn bash_python_and_wasm_hooks_make_the_same_decisions() {
    let t = tempfile::tempdir().expect("tempdir");
    let home = t.path().join("home");
    let bash = t.path().join("bash-proj");
    let python = t.path().join("python-proj");
    let wasm = t.path().join("wasm-proj");
    for d in [&bash, &python, &wasm] {
        std::fs::create_dir_all(d).expect("mkdir");
    }
    // A project's hook scripts live in the project, which is what its (confined) hooks read.
    std::fs::write(bash.join("hook.sh"), BASH_HOOK).expect("write");
    std::fs::write(python.join("hook.py"), PYTHON_HOOK).expect("write");
    project_with_hook(&bash, &format!("bash {}", bash.join("hook.sh").display()));
    project_with_hook(
        &python,
        &format!("python3 {}", python.join("hook.py").display()),
    );
    let plugin = guard_plugin();
    let plugin = plugin.to_str().expect("utf-8");

    let cases = [
        ("Read", "/home/dev/project/.env", Some("deny")),
        ("Read", "README.md", None),
        ("Edit", "deploy/tls/server.pem", Some("deny")),
        ("Write", "/home/dev/.ssh/id_rsa", Some("deny")),
        ("Read", "config/secrets/prod.json", Some("deny")),
        ("Read", "src/environment.rs", None),
    ];
    for (tool, path, expected) in cases {
        let input = json!({"file_path": path});
        let b = decision(&warden(
            &["hook", "PreToolUse"],
            &home,
            &pre_tool_use(&bash, tool, input.clone()),
        ));
        let p = decision(&warden(
            &["hook", "PreToolUse"],
            &home,
            &pre_tool_use(&python, tool, input.clone()),
        ));
        let w = decision(&warden(
            &["hook", "PreToolUse", "--plugin-dir", plugin],
            &home,
            &pre_tool_use(&wasm, tool, input),
        ));
        let expected = expected.map(str::to_string);
        assert_eq!(b, expected, "bash on {tool} {path}");
        assert_eq!(p, expected, "python3 on {tool} {path}");
        assert_eq!(w, expected, "wasm on {tool} {path}");
    }
}

#[test]
fn wasm_only_runs_only_the_wasm_hooks() {
    let t = tempfile::tempdir().expect("tempdir");
    let home = t.path().join("home");
    let proj = t.path().join("proj");
    std::fs::create_dir_all(&proj).expect("mkdir");
    let marker = proj.join("command-hook-ran");
    // A command hook that would deny everything and leave a trace (in the project, the one
    // place a project's hook may write).
    project_with_hook(
        &proj,
        &format!(
            "touch {}; echo '{{\"hookSpecificOutput\":{{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"deny\",\"permissionDecisionReason\":\"command says no\"}}}}'",
            marker.display()
        ),
    );
    let plugin = guard_plugin();
    let plugin = plugin.to_str().expect("utf-8");

    let readme = pre_tool_use(&proj, "Read", json!({"file_path": "README.md"}));
    let out = warden(
        &["hook", "--wasm-only", "PreToolUse", "--plugin-dir", plugin],
        &home,
        &readme,
    );
    assert_eq!(decision(&out), None);
    assert!(!marker.exists(), "--wasm-only must not run command hooks");

    let env = pre_tool_use(&proj, "Read", json!({"file_path": ".env"}));
    let out = warden(
        &["hook", "--wasm-only", "PreToolUse", "--plugin-dir", plugin],
        &home,
        &env,
    );
    assert_eq!(decision(&out).as_deref(), Some("deny"));
    assert!(String::from_utf8_lossy(&out.stdout).contains("protect-secrets"));
    assert!(!marker.exists());

    // Without the flag both run and the merge keeps both reasons.
    let out = warden(&["hook", "PreToolUse", "--plugin-dir", plugin], &home, &env);
    assert_eq!(decision(&out).as_deref(), Some("deny"));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("command says no") && text.contains("protect-secrets"),
        "{text}"
    );
    assert!(marker.exists());
}

/// `--plugin-dir` is resolved against the directory warden runs in, not the event's `cwd`, and
/// a directory that cannot be loaded is named on stderr while the event still gets an answer.
#[test]
fn plugin_dir_is_relative_to_where_warden_runs_and_a_missing_one_is_named() {
    let t = tempfile::tempdir().expect("tempdir");
    let project = t.path().join("project");
    std::fs::create_dir_all(&project).expect("mkdir");
    let input = pre_tool_use(&project, "Read", json!({"file_path": ".env"}));
    let plugins = guard_plugin();
    let parent = plugins.parent().expect("plugins dir");
    let home = t.path().join("home");
    let run_in = |dir: &Path, plugin_dir: &str| {
        warden_in(
            Some(dir),
            &["hook", "PreToolUse", "--plugin-dir", plugin_dir],
            &home,
            &input,
        )
    };
    let out = run_in(parent, "protect-secrets");
    assert_eq!(decision(&out).as_deref(), Some("deny"));

    // A guard that cannot be loaded blocks the call (exit 2) and is named.
    let out = run_in(parent, "no-such-plugin");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--plugin-dir") && stderr.contains("no-such-plugin"),
        "{stderr}"
    );
}

/// Guards live in settings files and plugins: when either cannot be read, a guarded event is
/// blocked (exit 2) and the reason names what could not be read, rather than answered by
/// whatever part of the configuration did load.
#[test]
fn an_unreadable_settings_file_or_plugin_state_blocks_a_guarded_call() {
    let t = tempfile::tempdir().expect("tempdir");
    let project = t.path().join("project");
    let home = t.path().join("home");
    std::fs::create_dir_all(project.join(".claude")).expect("mkdir");
    std::fs::create_dir_all(home.join("plugins")).expect("mkdir");
    let input = pre_tool_use(&project, "Read", json!({"file_path": "README.md"}));
    let hook = || warden_in(Some(&project), &["hook", "PreToolUse"], &home, &input);
    let blocked = |out: &Output, says: &str, names: &str| {
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(
            stderr.contains(says) && stderr.contains(names),
            "{says} / {names}: {stderr}"
        );
    };

    let settings = project.join(".claude/settings.json");
    std::fs::write(&settings, "{broken").expect("settings");
    blocked(&hook(), "cannot read a settings file", "settings.json");
    std::fs::remove_file(&settings).expect("rm settings");

    let state = home.join("plugins/installed_plugins.json");
    std::fs::write(&state, "not json").expect("state");
    blocked(
        &hook(),
        "cannot load Warden's configuration",
        "installed_plugins.json",
    );
    std::fs::remove_file(&state).expect("rm state");

    // With both readable again, the same call is answered.
    assert_eq!(decision(&hook()), None);
}

#[test]
fn bridge_reports_unusable_input() {
    let t = tempfile::tempdir().expect("tempdir");
    // An event that guards nothing keeps exit 1 for input it cannot read.
    let out = warden(&["hook", "PostToolUse"], t.path(), "not json");
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not valid JSON"));
    let out = warden(&["hook", "NoSuchEvent"], t.path(), "{}");
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("NoSuchEvent"));
}

/// Input a guard event cannot be answered from blocks the call (exit 2, the reason on
/// stderr): exit 1 would be a non-blocking error, and Claude Code would run the call. Events
/// that guard nothing keep exit 1.
#[test]
fn guard_events_block_on_input_they_cannot_read() {
    let t = tempfile::tempdir().expect("tempdir");
    let deep = format!("{{\"tool_input\":{}1{}}}", "[".repeat(300), "]".repeat(300));
    let bad: [(&str, &str, &str); 4] = [
        ("empty", "", "empty"),
        ("malformed", "{\"tool_name\": \"Bash\",", "not valid JSON"),
        (
            "not an object",
            "[\"Bash\", {\"command\": \"ls\"}]",
            "JSON object",
        ),
        ("nested too deep", &deep, "recursion limit"),
    ];
    for (event, also) in [
        ("PreToolUse", &["hook", "PreToolUse"][..]),
        (
            "PermissionRequest",
            &["hook", "--wasm-only", "PermissionRequest"][..],
        ),
    ] {
        for (what, input, says) in bad {
            let out = warden_in(Some(t.path()), also, t.path(), input);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{event}, {what}: {stderr}");
            assert!(
                stderr.contains("blocked") && stderr.contains(says) && stderr.contains(event),
                "{event}, {what}: {stderr}"
            );
            assert!(out.stdout.is_empty(), "{event}, {what}");
        }
    }
    for (what, input, _) in bad {
        let out = warden_in(Some(t.path()), &["hook", "PostToolUse"], t.path(), input);
        assert_eq!(out.status.code(), Some(1), "PostToolUse, {what}");
    }
}

#[test]
fn bridge_plugin_is_a_valid_claude_code_plugin() {
    let t = tempfile::tempdir().expect("tempdir");
    let dir = PathBuf::from(warden::guests::PLUGINS_DIR).join("warden-bridge");
    let out = warden(
        &[
            "plugin",
            "validate",
            dir.to_str().expect("utf-8"),
            "--strict",
        ],
        t.path(),
        "",
    );
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let hooks: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("hooks/hooks.json")).expect("hooks.json"),
    )
    .expect("json");
    for event in [
        "PreToolUse",
        "PermissionRequest",
        "PermissionDenied",
        "PostToolUse",
        "PostToolUseFailure",
    ] {
        let command = hooks["hooks"][event][0]["hooks"][0]["command"]
            .as_str()
            .expect("command hook");
        assert_eq!(command, format!("warden hook --wasm-only {event}"));
    }
}

// Failure modes of the bridge: each one blocks a guard event (exit 2, a reason on stderr) and
// is a row of the README's table.

fn bridge(home: &Path, project: &Path, extra: &[&str], input: &str) -> Output {
    let mut args = vec!["hook", "--wasm-only", "PreToolUse"];
    args.extend_from_slice(extra);
    warden_in(Some(project), &args, home, input)
}

fn assert_blocked(out: &Output, needles: &[&str]) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "stderr: {stderr}");
    assert!(stderr.contains("blocked"), "{stderr}");
    for n in needles {
        assert!(stderr.contains(n), "missing {n:?} in: {stderr}");
    }
}

/// A Warden home with protect-secrets installed from the example marketplace; returns the
/// installed copy's directory.
fn home_with_guard(home: &Path) -> PathBuf {
    let plugins = PathBuf::from(warden::guests::PLUGINS_DIR);
    for args in [
        vec![
            "plugin",
            "marketplace",
            "add",
            plugins.to_str().expect("utf-8"),
        ],
        vec![
            "plugin",
            "install",
            "protect-secrets@warden-examples",
            "--yes",
        ],
    ] {
        let out = warden(&args, home, "");
        assert!(
            out.status.success(),
            "{args:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let installed = read_json_file(&home.join("plugins/installed_plugins.json"));
    let path = installed["plugins"]["protect-secrets@warden-examples"][0]["installPath"]
        .as_str()
        .expect("installPath");
    PathBuf::from(path)
}

fn read_json_file(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).expect("read")).expect("json")
}

#[test]
fn bridge_guards_with_the_installed_plugin_and_fails_closed_when_its_component_is_corrupt() {
    let t = tempfile::tempdir().expect("tempdir");
    let home = t.path().join("home");
    let project = t.path().join("project");
    std::fs::create_dir_all(&project).expect("mkdir");
    let installed = home_with_guard(&home);
    assert!(installed.join("warden.toml").is_file());
    let env = pre_tool_use(&project, "Read", json!({"file_path": ".env"}));
    let readme = pre_tool_use(&project, "Read", json!({"file_path": "README.md"}));
    assert_eq!(
        decision(&bridge(&home, &project, &[], &env)).as_deref(),
        Some("deny")
    );
    assert_eq!(decision(&bridge(&home, &project, &[], &readme)), None);

    std::fs::write(
        installed.join("wasm/protect_secrets.wasm"),
        b"\x00asm garbage",
    )
    .expect("corrupt");
    assert_blocked(&bridge(&home, &project, &[], &readme), &["protect-secrets"]);
}

#[test]
fn bridge_fails_closed_when_the_installed_plugin_directory_is_gone() {
    let t = tempfile::tempdir().expect("tempdir");
    let home = t.path().join("home");
    let project = t.path().join("project");
    std::fs::create_dir_all(&project).expect("mkdir");
    let installed = home_with_guard(&home);
    std::fs::remove_dir_all(&installed).expect("rm");
    let readme = pre_tool_use(&project, "Read", json!({"file_path": "README.md"}));
    assert_blocked(
        &bridge(&home, &project, &[], &readme),
        &["protect-secrets@warden-examples", "not loaded"],
    );
}

#[test]
fn bridge_fails_closed_on_an_empty_home_and_names_where_it_looked() {
    let t = tempfile::tempdir().expect("tempdir");
    let home = t.path().join("empty-home");
    let project = t.path().join("project");
    std::fs::create_dir_all(&project).expect("mkdir");
    let readme = pre_tool_use(&project, "Read", json!({"file_path": "README.md"}));
    assert_blocked(
        &bridge(&home, &project, &[], &readme),
        &[
            home.to_str().expect("utf-8"),
            "$WARDEN_HOME",
            "no WASM plugin",
        ],
    );

    // Without WARDEN_HOME the home is ~/.warden of the HOME the hook process sees.
    let user = t.path().join("user");
    std::fs::create_dir_all(&user).expect("mkdir");
    let mut child = Command::new(env!("CARGO_BIN_EXE_warden"))
        .args(["hook", "--wasm-only", "PermissionRequest"])
        .current_dir(&project)
        .env_remove("WARDEN_HOME")
        .env("HOME", &user)
        .env("WARDEN_NO_CLAUDE_CONFIG", "1")
        .env("WARDEN_MANAGED_SETTINGS_DIR", "")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let _ = child
        .stdin
        .take()
        .expect("stdin")
        .write_all(readme.replace("PreToolUse", "PermissionRequest").as_bytes());
    let out = child.wait_with_output().expect("wait");
    let looked = user.join(".warden");
    assert_blocked(
        &out,
        &[
            looked.to_str().expect("utf-8"),
            "~/.warden",
            "WARDEN_HOME is not set",
        ],
    );
}

#[test]
fn bridge_fails_closed_when_a_guard_times_out() {
    let t = tempfile::tempdir().expect("tempdir");
    let home = t.path().join("home");
    let project = t.path().join("project");
    let plugin = t.path().join("looper");
    std::fs::create_dir_all(&project).expect("mkdir");
    std::fs::create_dir_all(plugin.join(".claude-plugin")).expect("mkdir");
    std::fs::create_dir_all(plugin.join("wasm")).expect("mkdir");
    std::fs::copy(
        warden_test_artifacts::HOSTILE,
        plugin.join("wasm/hostile.wasm"),
    )
    .expect("copy");
    std::fs::write(
        plugin.join(".claude-plugin/plugin.json"),
        r#"{"name": "looper"}"#,
    )
    .expect("write");
    std::fs::write(
        plugin.join("warden.toml"),
        "[components.spin]\npath = \"wasm/hostile.wasm\"\nworld = \"hook\"\n\n\
         [[hooks.PreToolUse]]\nmatcher = \"Bash\"\nhooks = [{ type = \"wasm\", component = \"spin\", timeout = 1 }]\n",
    )
    .expect("write");
    let input = pre_tool_use(&project, "Bash", json!({"command": "ls", "attack": "loop"}));
    let started = std::time::Instant::now();
    let out = bridge(
        &home,
        &project,
        &["--plugin-dir", plugin.to_str().expect("utf-8")],
        &input,
    );
    assert_blocked(&out, &["spin"]);
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
}

#[test]
fn bridge_fails_closed_when_a_plugins_warden_toml_is_invalid() {
    let t = tempfile::tempdir().expect("tempdir");
    let home = t.path().join("home");
    let project = t.path().join("project");
    let plugin = t.path().join("broken");
    std::fs::create_dir_all(&project).expect("mkdir");
    std::fs::create_dir_all(plugin.join(".claude-plugin")).expect("mkdir");
    std::fs::write(
        plugin.join(".claude-plugin/plugin.json"),
        r#"{"name": "broken"}"#,
    )
    .expect("write");
    std::fs::write(
        plugin.join("warden.toml"),
        "[components.guard]\nworld = \"hook\"\npath = \n",
    )
    .expect("write");
    let readme = pre_tool_use(&project, "Read", json!({"file_path": "README.md"}));
    assert_blocked(
        &bridge(
            &home,
            &project,
            &["--plugin-dir", plugin.to_str().expect("utf-8")],
            &readme,
        ),
        &["not loaded", "warden.toml:3:"],
    );
}

/// `warden` missing from PATH is Claude Code's side: the bridge's command cannot start, which
/// `onFailure: "block"` turns into a denied call on the guard events.
#[test]
fn bridge_guard_events_block_when_warden_cannot_start() {
    let dir = PathBuf::from(warden::guests::PLUGINS_DIR).join("warden-bridge");
    let hooks = read_json_file(&dir.join("hooks/hooks.json"));
    let empty = tempfile::tempdir().expect("tempdir");
    for event in ["PreToolUse", "PermissionRequest"] {
        let h = &hooks["hooks"][event][0]["hooks"][0];
        assert_eq!(h["onFailure"], "block", "{event}");
        let out = Command::new("/bin/sh")
            .args(["-c", h["command"].as_str().expect("command")])
            .env("PATH", empty.path())
            .stdin(Stdio::null())
            .output()
            .expect("sh");
        // Any exit but 0 and 2 is a failure for onFailure; 127 is "command not found".
        assert_eq!(out.status.code(), Some(127), "{event}");
    }
}

/// A command hook that exits without reading its input is ordinary (`exit 0`, or a script
/// that decides from its arguments). Warden writing the rest of the input into the closed pipe
/// must not kill it: the input here is larger than a pipe holds, so the write always meets the
/// closed end.
#[test]
fn a_command_hook_that_ignores_its_input_does_not_kill_warden() {
    let t = tempfile::tempdir().expect("tempdir");
    let home = t.path().join("home");
    let proj = t.path().join("proj");
    project_with_hook(
        &proj,
        r#"echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no input needed"}}'"#,
    );
    let big = "x".repeat(1 << 20);
    let input = pre_tool_use(
        &proj,
        "Write",
        json!({"file_path": "a.txt", "content": big}),
    );
    for _ in 0..3 {
        let out = warden_in(Some(&proj), &["hook", "PreToolUse"], &home, &input);
        assert_eq!(decision(&out).as_deref(), Some("deny"), "{out:?}");
    }
}

/// The bridge plugins exist so that Claude Code runs Warden's hooks. Loaded into Warden itself
/// (a user installing the whole example marketplace), they would start a second Warden inside
/// the sandbox, which cannot read Warden's home, or post to a `warden serve` nobody started,
/// and so block every tool call: Warden does not run them, and says so.
#[test]
fn the_bridge_plugins_do_not_block_warden_itself() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let home = tmp.path().join("home");
    let project = tmp.path().join("project");
    std::fs::create_dir_all(&project).expect("project");
    std::fs::write(project.join("notes.txt"), "bridge-free\n").expect("notes");
    let plugins = PathBuf::from(warden::guests::PLUGINS_DIR);
    let input = json!({"file_path": project.join("notes.txt").display().to_string()}).to_string();
    let out = warden_in(
        Some(&project),
        &[
            "tool",
            "--plugin-dir",
            &plugins.join("warden-bridge").display().to_string(),
            "--plugin-dir",
            &plugins.join("warden-bridge-http").display().to_string(),
            "Read",
            "--input",
            &input,
        ],
        &home,
        "",
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("bridge-free"),
        "status {:?}\nstdout {stdout}\nstderr {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let check = warden_in(
        Some(&project),
        &[
            "check",
            "--verbose",
            "--tool",
            "Read",
            "--input",
            &input,
            "--plugin-dir",
            &plugins.join("warden-bridge").display().to_string(),
        ],
        &home,
        "",
    );
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&check.stdout),
        String::from_utf8_lossy(&check.stderr)
    );
    assert!(
        text.contains("hands events to Warden itself"),
        "check does not say the bridge is skipped:\n{text}"
    );
}
