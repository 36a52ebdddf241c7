//! End-to-end dispatch: real processes, the in-process WASM runner, timeouts, caps, env,
//! async, dedup, the Stop-loop cap and parallelism.

mod common;

use std::future::Future;
use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use warden_config::Scope;
use warden_hooks::*;

const BASH_GUARD: &str = r#"#!/usr/bin/env bash
input=$(cat)
if [[ "$input" == *'rm -rf'* ]]; then d=deny; else d=allow; fi
printf '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"%s","permissionDecisionReason":"guard: %s"}}' "$d" "$d"
"#;

const PY_GUARD: &str = r#"import json, sys
data = json.load(sys.stdin)
d = "deny" if "rm -rf" in data.get("tool_input", {}).get("command", "") else "allow"
print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": d, "permissionDecisionReason": "guard: " + d}}))
"#;

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

#[tokio::test]
async fn bash_python_and_wasm_hooks_make_the_same_decision() {
    let dir = tempfile::tempdir().unwrap();
    let bash = write(dir.path(), "guard.sh", BASH_GUARD);
    let py = write(dir.path(), "guard.py", PY_GUARD);
    let bash_cfg = common::user_hooks(common::one_group(
        "PreToolUse",
        "Bash",
        json!([{"type": "command", "command": format!("bash {bash}")}]),
    ));
    let py_cfg = common::user_hooks(common::one_group(
        "PreToolUse",
        "Bash",
        json!([{"type": "command", "command": "python3", "args": [py]}]),
    ));
    let wasm_cfg =
        common::wasm_plugin_config(dir.path(), "PreToolUse", "Read|Bash", json!({"timeout": 5}));
    let opts = common::opts(dir.path()).with_wasm_runner(common::guard_runner());
    for (cmd, expected) in [
        ("rm -rf /", HookVerdict::Decided(Decision::Deny)),
        ("ls -la", HookVerdict::Decided(Decision::Allow)),
    ] {
        let input = common::pre_tool("Bash", json!({"command": cmd}));
        let mut verdicts = Vec::new();
        for cfg in [&bash_cfg, &py_cfg, &wasm_cfg] {
            let r = dispatch(Event::PreToolUse, &input, cfg, &opts).await;
            assert_eq!(r.handlers.len(), 1, "{:?}", r.handlers);
            verdicts.push(r.merged.permission_verdict());
        }
        assert_eq!(verdicts[0].decision, Some(expected), "{cmd}");
        assert_eq!(verdicts[0], verdicts[1]);
        assert_eq!(verdicts[1], verdicts[2]);
    }
}

#[tokio::test]
async fn a_hanging_hook_is_killed_at_its_timeout_and_the_call_proceeds() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("child.pid");
    // The hook leaves a grandchild behind; the whole process group must die.
    let cmd = format!("sleep 300 & echo $! > {}; wait", pidfile.display());
    let cfg = common::user_hooks(common::one_group(
        "PreToolUse",
        "*",
        json!([{"type": "command", "command": cmd, "timeout": 1}]),
    ));
    let start = Instant::now();
    let r = dispatch(
        Event::PreToolUse,
        &common::pre_tool("Bash", json!({"command": "ls"})),
        &cfg,
        &common::opts(dir.path()),
    )
    .await;
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(r.handlers[0].result.outcome, Outcome::Cancelled);
    assert!(!r.merged.blocked);
    assert_eq!(
        r.merged.permission_verdict().decision,
        None,
        "fail open: no decision"
    );
    let pid = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .to_string();
    let deadline = Instant::now() + Duration::from_secs(3);
    loop {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let state = stat
            .rsplit(')')
            .next()
            .and_then(|s| s.split_whitespace().next())
            .unwrap_or("");
        if stat.is_empty() || state == "Z" {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "grandchild {pid} still alive: {stat}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn a_hanging_hook_with_on_failure_block_blocks() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = common::user_hooks(common::one_group(
        "PreToolUse",
        "*",
        json!([{"type": "command", "command": "sleep 30", "timeout": 0.5, "onFailure": "block"}]),
    ));
    let r = dispatch(
        Event::PreToolUse,
        &common::pre_tool("Bash", json!({"command": "ls"})),
        &cfg,
        &common::opts(dir.path()),
    )
    .await;
    assert!(r.merged.blocked);
    let v = r.merged.permission_verdict();
    assert_eq!(v.decision, Some(HookVerdict::Decided(Decision::Deny)));
    assert!(
        v.reason
            .unwrap()
            .contains("timed out; blocking because onFailure is \"block\"")
    );
}

#[tokio::test]
async fn a_hook_printing_one_mebibyte_is_capped() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = common::user_hooks(json!({"UserPromptSubmit": [{"hooks": [
        {"type": "command", "command": "head -c 1048576 /dev/zero | tr '\\0' a"}
    ]}]}));
    let mut opts = common::opts(dir.path());
    opts.spill_dir = Some(dir.path().join("spill"));
    let input = common::input(Event::UserPromptSubmit, json!({"prompt": "hi"}));
    let r = dispatch(Event::UserPromptSubmit, &input, &cfg, &opts).await;
    assert_eq!(r.merged.additional_context.len(), 1);
    let ctx = &r.merged.additional_context[0];
    assert!(ctx.chars().count() <= MAX_OUTPUT_CHARS, "{}", ctx.len());
    assert!(ctx.contains("1048576 characters"));
    let (out, _, _) = to_cc_output(&r.merged, Event::UserPromptSubmit);
    assert!(out.to_string().len() < 20_000);
}

#[tokio::test]
async fn exit_127_is_a_non_blocking_error() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = common::user_hooks(common::one_group(
        "PreToolUse",
        "*",
        json!([
            {"type": "command", "command": "definitely-not-a-command-xyz"},
            {"type": "command", "command": "definitely-not-a-program-xyz", "args": ["a"]}
        ]),
    ));
    let r = dispatch(
        Event::PreToolUse,
        &common::pre_tool("Bash", json!({"command": "ls"})),
        &cfg,
        &common::opts(dir.path()),
    )
    .await;
    assert_eq!(r.handlers.len(), 2);
    assert!(
        r.handlers
            .iter()
            .all(|h| matches!(h.result.outcome, Outcome::NonBlockingError { .. })),
        "{:?}",
        r.handlers
    );
    assert!(r.handlers.iter().any(|h| h.exit_code == Some(127)));
    assert!(!r.merged.blocked);
    assert_eq!(r.merged.errors.len(), 2);
}

#[tokio::test]
async fn plugin_variables_are_substituted_and_exported() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("plugin root");
    std::fs::create_dir_all(&root).unwrap();
    let mut plugin = PluginContext::new("p@m", &root, dir.path().join("data"));
    plugin.options.insert("api_url".into(), json!("https://x"));
    let hooks = json!({"hooks": {"SessionStart": [{"hooks": [
        {"type": "command", "command": "printf '%s|%s|%s|%s|%s|%s' \"${CLAUDE_PLUGIN_ROOT}\" \"${CLAUDE_PLUGIN_ROOT:-unset}\" \"$CLAUDE_PLUGIN_DATA\" \"$CLAUDE_PROJECT_DIR\" \"$CLAUDE_PLUGIN_OPTION_API_URL\" \"$CLAUDE_ENV_FILE\""},
        {"type": "command", "command": "printf", "args": ["[%s]", "${CLAUDE_PLUGIN_DATA}/${user_config.api_url}"]}
    ]}]}});
    let mut b = HookConfigBuilder::new();
    b.add_plugin_hooks(Arc::new(plugin), &hooks, "hooks.json");
    let cfg = b.build();
    assert!(cfg.warnings.is_empty(), "{:?}", cfg.warnings);
    let mut opts = common::opts(dir.path());
    opts.env_file = Some(dir.path().join("env.sh"));
    let input = common::input(Event::SessionStart, json!({"source": "startup"}));
    let r = dispatch(Event::SessionStart, &input, &cfg, &opts).await;
    let root_s = root.display().to_string();
    let data_s = dir.path().join("data").display().to_string();
    let expected = format!(
        "{root_s}|{root_s}|{data_s}|{}|https://x|{}",
        dir.path().display(),
        dir.path().join("env.sh").display()
    );
    assert!(
        r.merged.additional_context.contains(&expected),
        "{:?}",
        r.merged.additional_context
    );
    assert!(
        r.merged
            .additional_context
            .contains(&format!("[{data_s}/https://x]")),
        "{:?}",
        r.merged.additional_context
    );
}

#[tokio::test]
async fn hook_process_environment_and_stdin() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = common::user_hooks(json!({"UserPromptSubmit": [{"hooks": [
        {"type": "command", "command": "printf '%s %s %s %s ' \"$CLAUDECODE\" \"$CLAUDE_CODE_CHILD_SESSION\" \"$CLAUDE_CODE_SESSION_ID\" \"${OTEL_X:-none}\"; pwd; cat"}
    ]}]}));
    let mut opts = common::opts(dir.path());
    opts.env
        .as_mut()
        .unwrap()
        .insert("OTEL_X".into(), "leak".into());
    let input = common::input(Event::UserPromptSubmit, json!({"prompt": "hi"}));
    let r = dispatch(Event::UserPromptSubmit, &input, &cfg, &opts).await;
    let ctx = &r.merged.additional_context[0];
    let cwd = std::fs::canonicalize(dir.path()).unwrap();
    assert!(
        ctx.starts_with(&format!("1 1 s-1 none {}\n", cwd.display())),
        "{ctx}"
    );
    assert!(
        ctx.ends_with(&input.to_string()),
        "stdin is the input JSON: {ctx}"
    );
}

#[tokio::test]
async fn async_hooks_do_not_wait_and_report_later() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = common::user_hooks(common::one_group(
        "PostToolUse",
        "*",
        json!([{"type": "command", "command": "sleep 0.3; echo '{\"systemMessage\":\"later\"}'", "async": true}]),
    ));
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let mut opts = common::opts(dir.path());
    opts.async_sink = Some(tx);
    let mut input = common::pre_tool("Bash", json!({"command": "ls"}));
    input["hook_event_name"] = json!("PostToolUse");
    let start = Instant::now();
    let r = dispatch(Event::PostToolUse, &input, &cfg, &opts).await;
    assert!(start.elapsed() < Duration::from_millis(250));
    assert_eq!(r.handlers[0].result.outcome, Outcome::Async);
    let report = tokio::time::timeout(Duration::from_secs(5), rx.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(report.system_message.as_deref(), Some("later"));
}

#[tokio::test]
async fn handlers_run_in_parallel() {
    let dir = tempfile::tempdir().unwrap();
    let h = json!({"type": "command", "command": "sleep 0.5"});
    let mut hs = Vec::new();
    for i in 0..4 {
        let mut x = h.clone();
        x["statusMessage"] = json!(format!("n{i}")); // distinct handlers: no dedup
        hs.push(x);
    }
    let cfg = common::user_hooks(common::one_group("PreToolUse", "*", Value::Array(hs)));
    let start = Instant::now();
    let r = dispatch(
        Event::PreToolUse,
        &common::pre_tool("Bash", json!({})),
        &cfg,
        &common::opts(dir.path()),
    )
    .await;
    assert_eq!(r.handlers.len(), 4);
    assert!(
        start.elapsed() < Duration::from_millis(1500),
        "{:?}",
        start.elapsed()
    );
}

#[tokio::test]
async fn identical_settings_handlers_run_once_but_plugin_copies_run() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let handler = json!({"type": "command", "command": format!("echo x >> {}", log.display())});
    let hooks = json!({"hooks": common::one_group("PreToolUse", "Bash", json!([handler.clone()]))});
    let hooks_other_matcher =
        json!({"hooks": common::one_group("PreToolUse", "*", json!([handler.clone()]))});
    let settings = common::settings(&[
        (Scope::Project, hooks.clone()),
        (Scope::User, hooks_other_matcher),
    ]);
    let mut b = HookConfigBuilder::from_settings(&settings);
    b.add_plugin_hooks(
        Arc::new(PluginContext::new("p@m", dir.path(), dir.path())),
        &hooks,
        "hooks.json",
    );
    let cfg = b.build();
    dispatch(
        Event::PreToolUse,
        &common::pre_tool("Bash", json!({})),
        &cfg,
        &common::opts(dir.path()),
    )
    .await;
    assert_eq!(std::fs::read_to_string(&log).unwrap().lines().count(), 2);
}

#[tokio::test]
async fn stop_loop_is_capped_after_eight_consecutive_blocks() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = common::user_hooks(
        json!({"Stop": [{"hooks": [{"type": "command", "command": "echo more >&2; exit 2"}]}]}),
    );
    let opts = common::opts(dir.path());
    let input = common::input(
        Event::Stop,
        json!({"stop_hook_active": true, "last_assistant_message": "", "background_tasks": [], "session_crons": []}),
    );
    for i in 0..8 {
        let r = dispatch(Event::Stop, &input, &cfg, &opts).await;
        assert!(r.merged.blocked, "block {i}");
    }
    let r = dispatch(Event::Stop, &input, &cfg, &opts).await;
    assert!(!r.merged.blocked && r.merged.stop_cap_overridden);
    assert!(
        r.warnings
            .iter()
            .any(|w| w.contains("CLAUDE_CODE_STOP_HOOK_BLOCK_CAP"))
    );
    assert!(
        dispatch(Event::Stop, &input, &cfg, &opts)
            .await
            .merged
            .blocked,
        "counter restarts"
    );
}

#[tokio::test]
async fn if_filter_runs_only_on_tool_events() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let handler = json!({"type": "command", "if": "Bash(git *)", "command": format!("echo $0 >> {}", log.display())});
    let cfg = common::user_hooks(json!({
        "PreToolUse": [{"hooks": [handler.clone()]}],
        "UserPromptSubmit": [{"hooks": [handler]}]
    }));
    let opts = common::opts(dir.path());
    dispatch(
        Event::PreToolUse,
        &common::pre_tool("Read", json!({"file_path": "/x"})),
        &cfg,
        &opts,
    )
    .await;
    assert!(!log.exists(), "rule names another tool");
    dispatch(
        Event::UserPromptSubmit,
        &common::input(Event::UserPromptSubmit, json!({"prompt": "git"})),
        &cfg,
        &opts,
    )
    .await;
    assert!(!log.exists(), "`if` on a non-tool event never runs");
    dispatch(
        Event::PreToolUse,
        &common::pre_tool("Bash", json!({"command": "git status"})),
        &cfg,
        &opts,
    )
    .await;
    assert!(log.exists());
}

#[tokio::test]
async fn wasm_only_runs_just_the_wasm_handlers() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = common::wasm_plugin_config(dir.path(), "PreToolUse", "Bash", json!({}));
    cfg.extend(common::user_hooks(common::one_group(
        "PreToolUse",
        "*",
        json!([{"type": "command", "command": "exit 2"}]),
    )));
    let mut opts = common::opts(dir.path()).with_wasm_runner(common::guard_runner());
    opts.wasm_only = true;
    let r = dispatch(
        Event::PreToolUse,
        &common::pre_tool("Bash", json!({"command": "ls"})),
        &cfg,
        &opts,
    )
    .await;
    assert_eq!(r.handlers.len(), 1);
    assert_eq!(r.handlers[0].handler_type, HandlerType::Wasm);
    assert_eq!(
        r.merged.permission,
        Some(HookVerdict::Decided(Decision::Allow))
    );
    let (out, code, _) = to_cc_output(&r.merged, Event::PreToolUse);
    assert_eq!(code, 0);
    assert_eq!(out["hookSpecificOutput"]["permissionDecision"], "allow");
    assert_eq!(out["hookSpecificOutput"]["hookEventName"], "PreToolUse");
}

struct Hang;
impl WasmHookRunner for Hang {
    fn run<'a>(
        &'a self,
        _call: WasmHookCall<'a>,
    ) -> Pin<Box<dyn Future<Output = RawOutcome> + Send + 'a>> {
        Box::pin(async {
            tokio::time::sleep(Duration::from_secs(3600)).await;
            RawOutcome::exited(0, "", "")
        })
    }
}

#[tokio::test]
async fn a_hanging_wasm_runner_is_cut_off_at_the_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = common::wasm_plugin_config(
        dir.path(),
        "PreToolUse",
        "*",
        json!({"timeout": 0.3, "onFailure": "block"}),
    );
    let opts = common::opts(dir.path()).with_wasm_runner(Arc::new(Hang));
    let start = Instant::now();
    let r = dispatch(
        Event::PreToolUse,
        &common::pre_tool("Bash", json!({})),
        &cfg,
        &opts,
    )
    .await;
    assert!(start.elapsed() < Duration::from_secs(2));
    assert!(r.merged.blocked);
}

#[tokio::test]
async fn wasm_runner_receives_the_call() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = common::wasm_plugin_config(dir.path(), "PreToolUse", "*", json!({"timeout": 7}));
    let seen = Arc::new(std::sync::Mutex::new(None));
    let s2 = seen.clone();
    let runner = common::FnRunner(move |c: &WasmHookCall| {
        *s2.lock().unwrap() = Some((
            c.component.to_path_buf(),
            c.world.map(str::to_string),
            c.plugin_id.to_string(),
            c.event,
            c.timeout,
            c.input.to_string(),
        ));
        RawOutcome::exited(2, "", "wasm says no")
    });
    let opts = common::opts(dir.path()).with_wasm_runner(Arc::new(runner));
    let input = common::pre_tool("Bash", json!({"command": "ls"}));
    let r = dispatch(Event::PreToolUse, &input, &cfg, &opts).await;
    assert_eq!(r.merged.block_reasons, vec!["wasm says no".to_string()]);
    let (component, world, plugin_id, event, timeout, seen_input) =
        seen.lock().unwrap().clone().unwrap();
    assert_eq!(component, dir.path().join("wasm/guard.wasm"));
    assert_eq!(world.as_deref(), Some("hook"));
    assert_eq!(plugin_id, "p@m");
    assert_eq!(event, Event::PreToolUse);
    assert_eq!(timeout, Duration::from_secs(7));
    assert_eq!(seen_input, input.to_string());
}

#[tokio::test]
async fn session_end_hooks_share_a_short_budget() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = common::user_hooks(
        json!({"SessionEnd": [{"hooks": [{"type": "command", "command": "sleep 20"}]}]}),
    );
    let start = Instant::now();
    let r = dispatch(
        Event::SessionEnd,
        &common::input(Event::SessionEnd, json!({"reason": "other"})),
        &cfg,
        &common::opts(dir.path()),
    )
    .await;
    assert!(
        start.elapsed() < Duration::from_secs(4),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(r.handlers[0].result.outcome, Outcome::Cancelled);
}

#[tokio::test]
async fn model_handlers_without_a_model_runner_are_skipped_with_a_notice() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = common::user_hooks(common::one_group(
        "PreToolUse",
        "*",
        json!([
            {"type": "prompt", "prompt": "is this ok? $ARGUMENTS"},
            {"type": "agent", "prompt": "check"}
        ]),
    ));
    assert!(cfg.warnings.is_empty(), "{:?}", cfg.warnings);
    let r = dispatch(
        Event::PreToolUse,
        &common::pre_tool("Bash", json!({})),
        &cfg,
        &common::opts(dir.path()),
    )
    .await;
    assert_eq!(r.handlers.len(), 2);
    assert!(
        r.handlers
            .iter()
            .all(|h| matches!(h.result.outcome, Outcome::Skipped { .. }))
    );
    assert_eq!(r.warnings.len(), 2, "{:?}", r.warnings);
    assert!(r.warnings[0].contains("need a model"), "{:?}", r.warnings);
    assert!(r.warnings[1].contains("need a model"), "{:?}", r.warnings);
    assert_eq!(r.merged, MergedResult::empty(Event::PreToolUse));
}
