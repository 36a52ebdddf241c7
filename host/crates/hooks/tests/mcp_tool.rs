//! `mcp_tool` handlers (spec 1.6): `${path}` substitution, the tool's text read as command
//! stdout, errors, timeouts, `onFailure` and the missing-runner notice.

mod common;

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};
use warden_hooks::*;

/// What a runner saw of one call, owned so the test can read it after the dispatch.
#[derive(Debug, Clone, PartialEq)]
struct SeenCall {
    server: String,
    tool: String,
    arguments: Map<String, Value>,
    event: Event,
    timeout: Duration,
}

/// An in-process MCP client: records every call and answers with a fixed reply, optionally
/// after a delay.
struct Runner {
    reply: McpToolReply,
    delay: Duration,
    seen: Mutex<Vec<SeenCall>>,
}

impl Runner {
    fn replying(reply: McpToolReply) -> Arc<Self> {
        Arc::new(Runner {
            reply,
            delay: Duration::ZERO,
            seen: Mutex::new(Vec::new()),
        })
    }

    fn seen(&self) -> Vec<SeenCall> {
        self.seen.lock().unwrap().clone()
    }
}

impl McpToolRunner for Runner {
    fn call<'a>(
        &'a self,
        call: McpToolCall<'a>,
    ) -> Pin<Box<dyn Future<Output = McpToolReply> + Send + 'a>> {
        self.seen.lock().unwrap().push(SeenCall {
            server: call.server.to_string(),
            tool: call.tool.to_string(),
            arguments: call.arguments.clone(),
            event: call.event,
            timeout: call.timeout,
        });
        Box::pin(async move {
            tokio::time::sleep(self.delay).await;
            self.reply.clone()
        })
    }
}

fn mcp_config(event: &str, handler: Value) -> HookConfig {
    let cfg = common::user_hooks(common::one_group(event, "*", json!([handler])));
    assert!(cfg.warnings.is_empty(), "{:?}", cfg.warnings);
    cfg
}

async fn run(cfg: &HookConfig, runner: Arc<Runner>, event: Event, input: &Value) -> DispatchResult {
    let dir = tempfile::tempdir().unwrap();
    let opts = common::opts(dir.path()).with_mcp_runner(runner);
    dispatch(event, input, cfg, &opts).await
}

fn deny_json() -> String {
    json!({
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "scanner: secrets in file"
        }
    })
    .to_string()
}

#[tokio::test]
async fn input_templates_are_filled_from_the_hook_input_before_the_call() {
    let cfg = mcp_config(
        "PreToolUse",
        json!({
            "type": "mcp_tool",
            "server": "plugin:scan:scanner",
            "tool": "scan_file",
            "input": {
                "path": "${tool_input.file_path}",
                "note": "reading ${tool_input.file_path} in ${cwd}",
                "nested": {
                    "list": ["${tool_input.limit}", "${tool_input.edits.1}", 7, "${tool_input.flag}"],
                    "missing": "[${tool_input.nope}]",
                    "null": "[${tool_input.empty}]",
                    "whole": "${tool_input.opts}"
                },
                "${tool_input.file_path}": "keys are not templates",
                "literal": true
            }
        }),
    );
    let runner = Runner::replying(McpToolReply::Text(String::new()));
    let input = common::pre_tool(
        "Read",
        json!({
            "file_path": "/src/main.rs",
            "limit": 20,
            "edits": ["a", "b"],
            "flag": false,
            "empty": null,
            "opts": {"deep": [1, "x"]}
        }),
    );
    let r = run(&cfg, runner.clone(), Event::PreToolUse, &input).await;
    assert_eq!(r.handlers[0].result.outcome, Outcome::Success);
    let seen = runner.seen();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].server, "plugin:scan:scanner");
    assert_eq!(seen[0].tool, "scan_file");
    assert_eq!(seen[0].event, Event::PreToolUse);
    assert_eq!(seen[0].timeout, Duration::from_secs(600));
    assert_eq!(
        Value::Object(seen[0].arguments.clone()),
        json!({
            "path": "/src/main.rs",
            "note": "reading /src/main.rs in /tmp",
            "nested": {
                "list": ["20", "b", 7, "false"],
                "missing": "[]",
                "null": "[]",
                "whole": r#"{"deep":[1,"x"]}"#
            },
            "${tool_input.file_path}": "keys are not templates",
            "literal": true
        })
    );
}

#[tokio::test]
async fn a_handler_without_input_calls_the_tool_with_no_arguments() {
    let cfg = mcp_config(
        "UserPromptSubmit",
        json!({"type": "mcp_tool", "server": "memory", "tool": "recall", "timeout": 4}),
    );
    let runner = Runner::replying(McpToolReply::Text(String::new()));
    let input = common::input(Event::UserPromptSubmit, json!({"prompt": "hi"}));
    run(&cfg, runner.clone(), Event::UserPromptSubmit, &input).await;
    let seen = runner.seen();
    assert_eq!(seen.len(), 1);
    assert!(seen[0].arguments.is_empty());
    assert_eq!(seen[0].timeout, Duration::from_secs(4));
}

#[tokio::test]
async fn a_deny_from_the_tool_denies_the_tool_call() {
    let cfg = mcp_config(
        "PreToolUse",
        json!({"type": "mcp_tool", "server": "scanner", "tool": "check"}),
    );
    let runner = Runner::replying(McpToolReply::Text(deny_json()));
    let input = common::pre_tool("Write", json!({"file_path": "/a", "content": "k"}));
    let r = run(&cfg, runner, Event::PreToolUse, &input).await;
    let verdict = r.merged.permission_verdict();
    assert_eq!(verdict.decision, Some(HookVerdict::Decided(Decision::Deny)));
    assert_eq!(verdict.reason.as_deref(), Some("scanner: secrets in file"));
    assert_eq!(r.handlers[0].handler_type, HandlerType::McpTool);
    assert_eq!(r.handlers[0].label, "scanner:check");
    assert_eq!(r.handlers[0].exit_code, None);
}

#[tokio::test]
async fn tool_text_is_read_exactly_as_command_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let text = "remember: tests live in tests/";
    let cases = [
        (
            Event::PreToolUse,
            "PreToolUse",
            common::pre_tool("Bash", json!({"command": "ls"})),
        ),
        (
            Event::UserPromptSubmit,
            "UserPromptSubmit",
            common::input(Event::UserPromptSubmit, json!({"prompt": "hi"})),
        ),
    ];
    for (event, name, input) in cases {
        let mcp = mcp_config(
            name,
            json!({"type": "mcp_tool", "server": "s", "tool": "t"}),
        );
        let runner = Runner::replying(McpToolReply::Text(text.to_string()));
        let opts = common::opts(dir.path()).with_mcp_runner(runner);
        let from_tool = dispatch(event, &input, &mcp, &opts).await;

        let cmd = mcp_config(
            name,
            json!({"type": "command", "command": format!("printf '%s' '{text}'")}),
        );
        let from_command = dispatch(event, &input, &cmd, &opts).await;

        assert_eq!(from_tool.merged, from_command.merged, "{event}");
        assert_eq!(
            from_tool.handlers[0].result,
            from_command.handlers[0].result
        );
        assert_eq!(from_tool.handlers[0].result.outcome, Outcome::Success);
        assert_eq!(from_tool.merged.permission_verdict().decision, None);
        let context_expected = event == Event::UserPromptSubmit;
        assert_eq!(
            from_tool.merged.additional_context == vec![text.to_string()],
            context_expected,
            "{event}: {:?}",
            from_tool.merged.additional_context
        );
    }
}

#[tokio::test]
async fn tool_errors_and_missing_servers_are_non_blocking_errors_naming_server_and_tool() {
    let cfg = mcp_config(
        "PreToolUse",
        json!({"type": "mcp_tool", "server": "scanner", "tool": "check"}),
    );
    let input = common::pre_tool("Bash", json!({"command": "ls"}));
    for (reply, detail) in [
        (
            McpToolReply::ToolError("file too large".into()),
            "returned an error: file too large",
        ),
        (
            McpToolReply::NotConnected("server is still starting".into()),
            "is not connected",
        ),
        (
            McpToolReply::Failed("connection reset".into()),
            "failed: connection reset",
        ),
    ] {
        let r = run(
            &cfg,
            Runner::replying(reply.clone()),
            Event::PreToolUse,
            &input,
        )
        .await;
        let message = match &r.handlers[0].result.outcome {
            Outcome::NonBlockingError { message } => message.clone(),
            other => panic!("{reply:?}: {other:?}"),
        };
        assert!(message.contains("`scanner`"), "{message}");
        assert!(message.contains("`check`"), "{message}");
        assert!(message.contains(detail), "{message}");
        assert!(!r.merged.blocked);
        assert_eq!(r.merged.permission_verdict().decision, None);
        assert_eq!(r.merged.errors, vec![message]);
    }
}

#[tokio::test]
async fn on_failure_block_denies_when_the_server_is_not_connected() {
    let cfg = mcp_config(
        "PreToolUse",
        json!({"type": "mcp_tool", "server": "scanner", "tool": "check", "onFailure": "block"}),
    );
    let runner = Runner::replying(McpToolReply::NotConnected(String::new()));
    let input = common::pre_tool("Bash", json!({"command": "ls"}));
    let r = run(&cfg, runner, Event::PreToolUse, &input).await;
    assert!(r.merged.blocked);
    assert_eq!(
        r.merged.block_reasons,
        vec!["[scanner:check]: failed; blocking because onFailure is \"block\"".to_string()]
    );
    assert_eq!(
        r.merged.permission_verdict().decision,
        Some(HookVerdict::Decided(Decision::Deny))
    );
}

#[tokio::test]
async fn a_tool_that_outlives_its_timeout_is_cancelled_without_a_decision() {
    let cfg = mcp_config(
        "PreToolUse",
        json!({"type": "mcp_tool", "server": "slow", "tool": "think", "timeout": 1}),
    );
    let runner = Arc::new(Runner {
        reply: McpToolReply::Text(deny_json()),
        delay: Duration::from_secs(30),
        seen: Mutex::new(Vec::new()),
    });
    let input = common::pre_tool("Bash", json!({"command": "ls"}));
    let start = Instant::now();
    let r = run(&cfg, runner.clone(), Event::PreToolUse, &input).await;
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(runner.seen()[0].timeout, Duration::from_secs(1));
    assert_eq!(r.handlers[0].result.outcome, Outcome::Cancelled);
    assert_eq!(r.merged.permission_verdict().decision, None);
    assert!(!r.merged.blocked);
    assert!(r.merged.errors.is_empty());
}

#[tokio::test]
async fn without_a_runner_mcp_tool_handlers_are_skipped_with_a_notice() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = mcp_config(
        "PreToolUse",
        json!({"type": "mcp_tool", "server": "scanner", "tool": "check"}),
    );
    let r = dispatch(
        Event::PreToolUse,
        &common::pre_tool("Bash", json!({"command": "ls"})),
        &cfg,
        &common::opts(dir.path()),
    )
    .await;
    assert_eq!(r.handlers.len(), 1);
    assert!(
        matches!(&r.handlers[0].result.outcome, Outcome::Skipped { reason } if reason.contains("scanner:check")),
        "{:?}",
        r.handlers[0].result.outcome
    );
    assert_eq!(r.warnings.len(), 1);
    assert!(
        r.warnings[0].contains("no MCP tool runner"),
        "{:?}",
        r.warnings
    );
    assert_eq!(r.merged, MergedResult::empty(Event::PreToolUse));
}

#[test]
fn an_input_that_is_not_an_object_drops_the_handler() {
    let cfg = common::user_hooks(common::one_group(
        "PreToolUse",
        "*",
        json!([{"type": "mcp_tool", "server": "s", "tool": "t", "input": "${tool_input}"}]),
    ));
    assert_eq!(cfg.warnings.len(), 1);
    assert!(
        cfg.warnings[0]
            .message
            .contains("`input` must be an object"),
        "{:?}",
        cfg.warnings
    );
    assert!(cfg.hooks(Event::PreToolUse).is_empty());
}
