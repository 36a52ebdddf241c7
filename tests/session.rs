//! The session's one tool-call pipeline: schema check, PreToolUse hooks, rules and mode, the
//! asker, the tool in a fresh sandbox, PostToolUse / PostToolUseFailure hooks, and the trace.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use warden::session::{
    AskAnswer, AskFuture, AskRequest, Asker, DenyAsker, Session, SessionOptions, Step, ToolOutcome,
    ToolStatus,
};
use warden_config::Home;
use warden_permissions::Decision;

struct Project {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    dir: PathBuf,
}

impl Project {
    /// A project whose `.claude/settings.json` is `settings`.
    fn new(settings: Value) -> Project {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = tmp.path().canonicalize().expect("canonical");
        let dir = root.join("project");
        std::fs::create_dir_all(dir.join(".claude")).expect("mkdir");
        std::fs::write(dir.join(".claude/settings.json"), settings.to_string()).expect("write");
        std::fs::write(dir.join("README.md"), "hello\n").expect("write");
        Project {
            _tmp: tmp,
            root,
            dir,
        }
    }

    fn session(&self) -> Arc<Session> {
        let mut opts = SessionOptions::new(&self.dir, Home::new(self.root.join("home")));
        opts.user_home = Some(self.root.clone());
        opts.managed_dir = None;
        opts.runtime.cache_dir = None;
        opts.claude_config = warden_config::ClaudeConfig::Dir(self.claude_dir());
        Arc::new(Session::load(&opts))
    }

    /// Claude Code's user directory of the session (empty unless a test writes to it).
    fn claude_dir(&self) -> PathBuf {
        self.root.join("claude-config")
    }

    /// A command hook script under the project; `body` is its shell code.
    fn script(&self, name: &str, body: &str) -> String {
        let p = self.dir.join(name);
        std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).expect("write script");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        }
        p.display().to_string()
    }

    /// Project settings with one PreToolUse command hook for `matcher` that prints `output`.
    fn pre_tool_use_hook(&self, name: &str, matcher: &str, output: Value) {
        let hook = self.script(name, &format!("cat >/dev/null; echo '{output}'"));
        std::fs::write(
            self.dir.join(".claude/settings.json"),
            json!({"hooks": {"PreToolUse": [{"matcher": matcher,
                   "hooks": [{"type": "command", "command": hook}]}]}})
            .to_string(),
        )
        .expect("settings");
    }

    /// `warden ARGS` in the project with `input` on stdin and Warden's home `home`.
    fn warden_with_input(&self, args: &[&str], home: &Path, input: &Value) -> Output {
        use std::io::Write;
        let mut child = Command::new(env!("CARGO_BIN_EXE_warden"))
            .args(args)
            .current_dir(&self.dir)
            .env("WARDEN_HOME", home)
            .env("HOME", &self.root)
            .env("CLAUDE_CONFIG_DIR", self.claude_dir())
            .env("WARDEN_MANAGED_SETTINGS_DIR", "")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(input.to_string().as_bytes())
            .expect("write");
        child.wait_with_output().expect("wait")
    }

    fn warden(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_warden"))
            .args(args)
            .current_dir(&self.dir)
            .env("WARDEN_HOME", self.root.join("home"))
            .env("HOME", &self.root)
            .env("CLAUDE_CONFIG_DIR", self.claude_dir())
            .env("WARDEN_MANAGED_SETTINGS_DIR", "")
            .stdin(Stdio::null())
            .output()
            .expect("run warden")
    }
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio")
}

fn call(session: &Arc<Session>, tool: &str, input: Value, asker: &dyn Asker) -> ToolOutcome {
    rt().block_on(session.call_tool(tool, input, asker))
        .expect("pipeline")
}

fn steps(o: &ToolOutcome) -> Vec<Step> {
    o.trace.iter().map(|t| t.step).collect()
}

/// Says yes, and remembers what it was asked.
#[derive(Default)]
struct Yes(Mutex<Vec<String>>);

impl Asker for Yes {
    fn ask<'a>(&'a self, r: AskRequest<'a>) -> AskFuture<'a> {
        self.0
            .lock()
            .expect("lock")
            .push(format!("{} {}", r.tool, r.reason));
        Box::pin(std::future::ready(AskAnswer::AllowOnce))
    }
}

#[test]
fn a_missing_required_field_is_reported_as_claude_code_does_and_nothing_runs() {
    let p = Project::new(json!({}));
    let s = p.session();
    let o = call(&s, "Bash", json!({"cmd": "touch x"}), &Yes::default());
    match &o.status {
        ToolStatus::InvalidInput { message } => {
            assert!(
                message.contains("InputValidationError: Bash failed")
                    && message.contains("The required parameter `command` is missing"),
                "{message}"
            )
        }
        other => panic!("expected invalid input, got {other:?}"),
    }
    assert_eq!(steps(&o), vec![Step::Validate]);
    assert!(!p.dir.join("x").exists());

    let o = call(&s, "Read", json!({"file_path": 5}), &DenyAsker);
    let ToolStatus::InvalidInput { message } = &o.status else {
        panic!("{o:?}")
    };
    assert!(
        message.contains("`file_path` type is expected as `string` but provided as `number`"),
        "{message}"
    );

    // `warden check` used to answer allow for this; now it is unusable input.
    let out = p.warden(&["check", "--tool", "Bash", "--input", r#"{"cmd":"ls"}"#]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("`command` is missing"));
}

#[test]
fn an_unknown_tool_is_an_error_that_lists_the_tools() {
    let p = Project::new(json!({}));
    let s = p.session();
    let e = rt()
        .block_on(s.call_tool("Bashh", json!({"command": "ls"}), &DenyAsker))
        .expect_err("unknown tool");
    let m = e.to_string();
    assert!(
        m.contains("unknown tool `Bashh`") && m.contains("Bash"),
        "{m}"
    );
    let out = p.warden(&["check", "--tool", "Bashh", "--input", r#"{"command":"ls"}"#]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_pre_tool_use_hook_denies_before_the_tool_runs_and_is_named() {
    let p = Project::new(json!({}));
    p.pre_tool_use_hook(
        "deny.sh",
        "Write",
        json!({"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no writes today"}}),
    );
    let s = p.session();
    let o = call(
        &s,
        "Write",
        json!({"file_path": "out.txt", "content": "x"}),
        &Yes::default(),
    );
    assert_eq!(o.decision, Decision::Deny);
    assert!(
        matches!(&o.status, ToolStatus::Denied { message } if message.contains("no writes today")),
        "{o:?}"
    );
    assert!(
        o.source
            .as_deref()
            .is_some_and(|s| s.contains("PreToolUse hook") && s.contains("deny.sh")),
        "{:?}",
        o.source
    );
    assert!(!p.dir.join("out.txt").exists(), "the tool ran");
    assert!(!steps(&o).contains(&Step::Execute));
    let hook_step = o
        .trace
        .iter()
        .find(|t| t.step == Step::PreToolUse)
        .expect("hook step");
    assert_eq!(hook_step.decision, "deny");
}

#[test]
fn updated_input_from_a_hook_is_what_the_rules_and_the_tool_see() {
    let p = Project::new(json!({}));
    p.pre_tool_use_hook(
        "redirect.sh",
        "Write",
        json!({"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"redirected","updatedInput":{"file_path":"safe.txt","content":"rewritten"}}}),
    );
    let s = p.session();
    let o = call(
        &s,
        "Write",
        json!({"file_path": "danger.txt", "content": "original"}),
        &Yes::default(),
    );
    assert!(matches!(o.status, ToolStatus::Ok { .. }), "{o:?}");
    assert_eq!(o.input["file_path"], "safe.txt");
    assert_eq!(
        std::fs::read_to_string(p.dir.join("safe.txt")).expect("written"),
        "rewritten"
    );
    assert!(!p.dir.join("danger.txt").exists());
}

#[test]
fn rules_deny_and_an_ask_nobody_can_answer_is_a_denial() {
    let p = Project::new(
        json!({"permissions": {"deny": ["Read(./secret.txt)"], "ask": ["Bash(touch *)"]}}),
    );
    std::fs::write(p.dir.join("secret.txt"), "s3cret").expect("write");
    let s = p.session();
    let o = call(
        &s,
        "Read",
        json!({"file_path": "secret.txt"}),
        &Yes::default(),
    );
    assert_eq!(o.decision, Decision::Deny);
    assert_eq!(o.rule.as_deref(), Some("Read(./secret.txt)"));
    assert!(!steps(&o).contains(&Step::Execute));

    let o = call(&s, "Bash", json!({"command": "touch made.txt"}), &DenyAsker);
    assert_eq!(o.decision, Decision::Ask);
    assert!(
        matches!(&o.status, ToolStatus::Denied { message } if message.contains("nobody can be asked")),
        "{o:?}"
    );
    assert!(!p.dir.join("made.txt").exists());

    let yes = Yes::default();
    let o = call(&s, "Bash", json!({"command": "touch made.txt"}), &yes);
    assert!(matches!(o.status, ToolStatus::Ok { .. }), "{o:?}");
    assert!(p.dir.join("made.txt").exists());
    assert_eq!(yes.0.lock().expect("lock").len(), 1);
    assert_eq!(
        steps(&o),
        vec![Step::Validate, Step::Rules, Step::Ask, Step::Execute]
    );

    // `warden tool` without a terminal cannot ask: the call is refused, exit 2.
    let out = p.warden(&["tool", "Bash", "--input", r#"{"command":"touch cli.txt"}"#]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(!p.dir.join("cli.txt").exists());
    let out = p.warden(&[
        "tool",
        "Bash",
        "--yes",
        "--input",
        r#"{"command":"touch cli.txt"}"#,
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(p.dir.join("cli.txt").exists());
}

#[test]
fn post_tool_use_hooks_see_the_response_and_failures_go_to_post_tool_use_failure() {
    let p = Project::new(json!({}));
    // In the project: its hooks run confined to it.
    let log = p.dir.join("post.log");
    let post = p.script(
        "post.sh",
        &format!("cat >> {}; echo >> {}", log.display(), log.display()),
    );
    std::fs::write(
        p.dir.join(".claude/settings.json"),
        json!({"hooks": {
            "PostToolUse": [{"matcher": "Read", "hooks": [{"type": "command", "command": post}]}],
            "PostToolUseFailure": [{"matcher": "Read", "hooks": [{"type": "command", "command": post}]}],
        }})
        .to_string(),
    )
    .expect("settings");
    let s = p.session();
    let o = call(&s, "Read", json!({"file_path": "README.md"}), &DenyAsker);
    assert!(matches!(o.status, ToolStatus::Ok { .. }), "{o:?}");
    assert_eq!(steps(&o).last(), Some(&Step::PostToolUse));
    let o = call(&s, "Read", json!({"file_path": "missing.md"}), &DenyAsker);
    assert!(matches!(o.status, ToolStatus::Failed { .. }), "{o:?}");
    assert_eq!(steps(&o).last(), Some(&Step::PostToolUseFailure));

    let lines: Vec<Value> = std::fs::read_to_string(&log)
        .expect("log")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("hook input JSON"))
        .collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert_eq!(lines[0]["hook_event_name"], "PostToolUse");
    // Read's response in Claude Code's shape: the lines as in the file.
    assert!(
        lines[0]["tool_response"]["file"]["content"]
            .as_str()
            .is_some_and(|c| c.contains("hello")),
        "{}",
        lines[0]
    );
    assert_eq!(lines[0]["tool_response"]["type"], "text");
    assert_eq!(lines[1]["hook_event_name"], "PostToolUseFailure");
    assert!(lines[1]["error"].as_str().is_some_and(|e| !e.is_empty()));
    assert_eq!(lines[1]["tool_use_id"], o.tool_use_id.as_str());
    assert_ne!(lines[0]["tool_use_id"], lines[1]["tool_use_id"]);
}

#[test]
fn check_explains_every_step_and_names_the_deciding_hook() {
    let p = Project::new(json!({}));
    p.pre_tool_use_hook(
        "allow.sh",
        "Bash",
        json!({"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"reviewed by the allow hook"}}),
    );
    let out = p.warden(&[
        "check",
        "--tool",
        "Bash",
        "--input",
        r#"{"command":"cargo build"}"#,
        "--json",
        "--explain",
    ]);
    assert!(out.status.success(), "{out:?}");
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["decision"], "allow", "{v}");
    // A hook's allow keeps its reason and names the hook.
    assert_eq!(v["reason"], "reviewed by the allow hook", "{v}");
    assert!(
        v["source"].as_str().is_some_and(|s| s.contains("allow.sh")),
        "{v}"
    );
    let trace = v["trace"].as_array().expect("trace");
    let kinds: Vec<&str> = trace.iter().filter_map(|t| t["step"].as_str()).collect();
    assert_eq!(kinds, vec!["validate", "preToolUse", "rules"], "{v}");
}

#[test]
fn hooks_obey_the_users_rules_at_the_capability_boundary() {
    // The uses-exec hook runs `git status` through its exec grant. With a rule denying that
    // command, the session's policy refuses it inside the hook too, on the `hook-wasm` path.
    let p = Project::new(json!({"permissions": {"deny": ["Bash(git status)"]}}));
    let run = |q: &Project| {
        let input = json!({"hook_event_name": "PreToolUse", "cwd": q.dir.display().to_string(),
                           "tool_name": "Bash", "tool_input": {"command": "ls"}});
        let args = [
            "hook-wasm",
            warden_test_artifacts::USES_EXEC,
            "PreToolUse",
            "--grant",
            r#"{"exec":["git"]}"#,
        ];
        q.warden_with_input(&args, &q.root.join("home"), &input)
    };
    let out = run(&p);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("exec failed"),
        "{text} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Without the rule the same hook runs git.
    let free = Project::new(json!({}));
    let out = run(&free);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("git exited"),
        "{text} {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A plugin whose component runs `git status` through an exec grant, in a directory
/// marketplace `mkt` under `root`.
fn git_plugin_marketplace(root: &Path) -> PathBuf {
    let mkt = root.join("mkt");
    let plugin = mkt.join("git-guard");
    std::fs::create_dir_all(mkt.join(".claude-plugin")).expect("mkdir");
    std::fs::create_dir_all(plugin.join(".claude-plugin")).expect("mkdir");
    std::fs::create_dir_all(plugin.join("wasm")).expect("mkdir");
    std::fs::write(
        mkt.join(".claude-plugin/marketplace.json"),
        json!({"name": "test-mkt", "owner": {"name": "t"},
               "plugins": [{"name": "git-guard", "source": "./git-guard"}]})
        .to_string(),
    )
    .expect("write");
    std::fs::write(
        plugin.join(".claude-plugin/plugin.json"),
        json!({"name": "git-guard", "version": "1.0.0", "warden": {
            "components": {"guard": {"path": "wasm/guard.wasm", "world": "hook",
                                     "capabilities": {"exec": ["git"]}}},
            "hooks": {"PreToolUse": [{"matcher": "Bash",
                      "hooks": [{"type": "wasm", "component": "guard", "timeout": 10}]}]}}})
        .to_string(),
    )
    .expect("write");
    std::fs::copy(
        warden_test_artifacts::USES_EXEC,
        plugin.join("wasm/guard.wasm"),
    )
    .expect("copy component");
    mkt
}

#[test]
fn a_tampered_granted_component_is_refused_and_the_guard_event_is_blocked() {
    let p = Project::new(json!({}));
    let mkt = git_plugin_marketplace(&p.root);
    let home = Home::new(p.root.join("home"));
    let manager = warden_plugins::PluginManager::new(home, &p.dir).quiet(true);
    manager
        .marketplace_add(mkt.to_str().expect("utf-8"), warden_config::Scope::User)
        .expect("marketplace add");
    let outcome = manager
        .install(
            "git-guard@test-mkt",
            &warden_plugins::InstallOptions {
                scope: warden_config::Scope::User,
                accept_capabilities: true,
            },
        )
        .expect("install");
    let installed = outcome.installed().expect("installed").install_path.clone();

    let hook = |p: &Project| {
        let input = json!({"session_id": "s", "transcript_path": "", "hook_event_name": "PreToolUse",
                           "cwd": p.dir.display().to_string(), "permission_mode": "default",
                           "tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_use_id": "t"});
        p.warden_with_input(
            &["hook", "--wasm-only", "PreToolUse"],
            &p.root.join("home"),
            &input,
        )
    };
    // As installed and granted, the guard runs git and allows.
    let out = hook(&p);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("git exited"), "{stdout}");

    // Another valid component in its place keeps the file name but not the approved digest.
    std::fs::copy(
        warden::guests::PROTECT_SECRETS,
        installed.join("wasm/guard.wasm"),
    )
    .expect("tamper");
    let out = hook(&p);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("warden plugin verify") && stderr.contains("guard.wasm"),
        "{stderr}"
    );
}

#[test]
fn the_bridge_blocks_guard_events_when_it_has_nothing_to_guard_with() {
    // An empty Warden home (a hook process that sees another WARDEN_HOME than the user's
    // shell) must not silently guard nothing.
    let p = Project::new(json!({}));
    let input = json!({"hook_event_name": "PreToolUse", "cwd": p.dir.display().to_string(),
                       "tool_name": "Read", "tool_input": {"file_path": ".env"}});
    let out = p.warden_with_input(
        &["hook", "--wasm-only", "PreToolUse"],
        &p.root.join("empty-home"),
        &input,
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("no WASM plugin enabled"), "{stderr}");
}

/// Claude Code's user settings count in a session: their deny rules decide, their bridge hooks
/// (which would run Warden within Warden) are left out, and an embedder can leave the whole
/// directory out.
#[test]
fn claude_codes_user_settings_count_unless_the_embedder_opts_out() {
    let p = Project::new(json!({}));
    std::fs::create_dir_all(p.claude_dir()).expect("mkdir");
    std::fs::write(
        p.claude_dir().join("settings.json"),
        json!({
            "permissions": {"deny": ["Read(./secret.txt)"]},
            "hooks": {"PreToolUse": [{"matcher": "*", "hooks": [
                {"type": "command", "command": "/usr/local/bin/warden hook --wasm-only PreToolUse"}
            ]}]}
        })
        .to_string(),
    )
    .expect("write");
    let decide = |s: &Arc<Session>| {
        rt().block_on(s.decide_tool("Read", json!({"file_path": "secret.txt"})))
            .expect("decide")
    };

    let s = p.session();
    let o = decide(&s);
    assert_eq!(o.decision, Decision::Deny);
    assert_eq!(
        o.source.as_deref(),
        Some(
            p.claude_dir()
                .join("settings.json")
                .display()
                .to_string()
                .as_str()
        )
    );
    assert_eq!(s.settings.skipped_hooks.len(), 1);
    assert!(
        s.hook_config()
            .hooks(warden_hooks::Event::PreToolUse)
            .is_empty()
    );

    let mut opts = SessionOptions::new(&p.dir, Home::new(p.root.join("home")));
    opts.managed_dir = None;
    opts.claude_config =
        warden_config::ClaudeConfig::Off(warden_config::ClaudeConfigOff::NotRequested);
    let s = Arc::new(Session::load(&opts));
    assert_ne!(decide(&s).decision, Decision::Deny);
    assert!(s.settings.claude_code_file().is_none());
}

#[test]
fn a_wasm_guard_that_fails_blocks_the_call_whatever_the_rules_say() {
    let p = Project::new(json!({"permissions": {"allow": ["Bash(touch *)"]}}));
    let plugin = p.root.join("guard-plugin");
    std::fs::create_dir_all(plugin.join(".claude-plugin")).expect("mkdir");
    std::fs::create_dir_all(plugin.join("wasm")).expect("mkdir");
    std::fs::copy(
        warden_test_artifacts::HOSTILE,
        plugin.join("wasm/hostile.wasm"),
    )
    .expect("copy component");
    // No `onFailure`: Claude Code's default for a command hook is non-blocking, but a guard
    // that did not answer must not leave the rules to decide alone.
    std::fs::write(
        plugin.join(".claude-plugin/plugin.json"),
        json!({"name": "guard-plugin", "version": "1.0.0", "warden": {
            "components": {"guard": {"path": "wasm/hostile.wasm", "world": "hook"}},
            "hooks": {"PreToolUse": [{"matcher": "Bash",
                      "hooks": [{"type": "wasm", "component": "guard", "timeout": 1}]}]}}})
        .to_string(),
    )
    .expect("plugin.json");
    let mut opts = SessionOptions::new(&p.dir, Home::new(p.root.join("home")));
    opts.user_home = Some(p.root.clone());
    opts.managed_dir = None;
    opts.claude_config = warden_config::ClaudeConfig::Dir(p.claude_dir());
    opts.plugin_dirs = vec![plugin];
    let s = Arc::new(Session::load(&opts));

    for (attack, says) in [
        ("panic", "failed"),
        ("loop", "deadline"),
        ("membomb", "failed"),
    ] {
        let file = format!("{attack}.txt");
        let o = call(
            &s,
            "Bash",
            json!({"command": format!("touch {file}"), "attack": attack}),
            &Yes::default(),
        );
        assert_eq!(o.decision, Decision::Deny, "{attack}: {o:?}");
        assert!(
            matches!(&o.status, ToolStatus::Denied { message }
                if message.contains("the guard") && message.contains(says) && message.contains("blocked")),
            "{attack}: {o:?}"
        );
        assert!(!steps(&o).contains(&Step::Execute), "{attack}: {o:?}");
        assert!(!p.dir.join(&file).exists(), "{attack}: the tool ran");
    }
    // The same guard answering runs the call the allow rule allows.
    let o = call(
        &s,
        "Bash",
        json!({"command": "touch ok.txt"}),
        &Yes::default(),
    );
    assert!(matches!(o.status, ToolStatus::Ok { .. }), "{o:?}");
    assert!(p.dir.join("ok.txt").exists());
}

/// A session runs the component it loaded (and, for an installed plugin, verified) for the
/// rest of its life: bytes swapped in behind it never run in it, and the next session loads
/// the file anew.
#[test]
fn a_component_swapped_during_a_session_does_not_run_in_it() {
    let p = Project::new(json!({}));
    std::fs::write(p.dir.join(".env"), "TOKEN=1\n").expect("write");
    let plugin = p.root.join("secrets-plugin");
    std::fs::create_dir_all(plugin.join(".claude-plugin")).expect("mkdir");
    std::fs::create_dir_all(plugin.join("wasm")).expect("mkdir");
    let guard = plugin.join("wasm/guard.wasm");
    std::fs::copy(warden::guests::PROTECT_SECRETS, &guard).expect("copy component");
    std::fs::write(
        plugin.join(".claude-plugin/plugin.json"),
        json!({"name": "secrets-plugin", "version": "1.0.0", "warden": {
            "components": {"guard": {"path": "wasm/guard.wasm", "world": "hook"}},
            "hooks": {"PreToolUse": [{"matcher": "Read",
                      "hooks": [{"type": "wasm", "component": "guard"}]}]}}})
        .to_string(),
    )
    .expect("plugin.json");
    let session = || {
        let mut opts = SessionOptions::new(&p.dir, Home::new(p.root.join("home")));
        opts.user_home = Some(p.root.clone());
        opts.managed_dir = None;
        opts.runtime.cache_dir = None;
        opts.claude_config = warden_config::ClaudeConfig::Dir(p.claude_dir());
        opts.plugin_dirs = vec![plugin.clone()];
        Arc::new(Session::load(&opts))
    };
    let read_env = |s: &Arc<Session>| {
        call(
            s,
            "Read",
            json!({"file_path": p.dir.join(".env")}),
            &Yes::default(),
        )
    };
    let s = session();
    let o = read_env(&s);
    assert_eq!(o.decision, Decision::Deny, "{o:?}");

    // An allow-everything component under the same name, as an update or an attacker with
    // write access to the plugin would leave it.
    let tmp = plugin.join("wasm/guard.wasm.new");
    std::fs::copy(warden_test_artifacts::HOSTILE, &tmp).expect("copy");
    std::fs::rename(&tmp, &guard).expect("swap");
    let o = read_env(&s);
    assert_eq!(
        o.decision,
        Decision::Deny,
        "the swapped-in component ran: {o:?}"
    );

    let o = read_env(&session());
    assert!(
        matches!(o.status, ToolStatus::Ok { .. }),
        "a new session must load the file as it is now: {o:?}"
    );
}
