//! `prompt` and `agent` handlers (spec 1.6, 1.12): the request the model runner gets, the
//! model's answer read on each event, `continueOnBlock`, failures, timeouts and the
//! missing-runner notice.

mod common;

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use warden_hooks::*;

/// What a runner saw of one call, owned so the test can read it after the dispatch.
#[derive(Debug, Clone, PartialEq)]
struct SeenCall {
    event: Event,
    handler_type: HandlerType,
    prompt: String,
    instructions: String,
    model: Option<String>,
    input: Value,
    timeout: Duration,
}

/// An in-process model: records every call and answers with scripted text, chosen by a
/// substring of the prompt, optionally after a delay.
struct Runner {
    default: Result<String, String>,
    when: Vec<(&'static str, Result<String, String>)>,
    delay: Duration,
    seen: Mutex<Vec<SeenCall>>,
}

impl Runner {
    fn answering(text: &str) -> Self {
        Runner {
            default: Ok(text.to_string()),
            when: Vec::new(),
            delay: Duration::ZERO,
            seen: Mutex::new(Vec::new()),
        }
    }

    fn failing(error: &str) -> Self {
        Runner {
            default: Err(error.to_string()),
            ..Runner::answering("")
        }
    }

    /// Answers `text` to prompts containing `needle`.
    fn when(mut self, needle: &'static str, text: &str) -> Self {
        self.when.push((needle, Ok(text.to_string())));
        self
    }

    fn seen(&self) -> Vec<SeenCall> {
        self.seen.lock().unwrap().clone()
    }
}

impl ModelHookRunner for Runner {
    fn run<'a>(
        &'a self,
        call: ModelHookCall<'a>,
    ) -> Pin<Box<dyn Future<Output = Result<String, String>> + Send + 'a>> {
        let reply = self
            .when
            .iter()
            .find(|(needle, _)| call.prompt.contains(needle))
            .map_or(&self.default, |(_, r)| r)
            .clone();
        self.seen.lock().unwrap().push(SeenCall {
            event: call.event,
            handler_type: call.handler_type,
            prompt: call.prompt,
            instructions: call.instructions.to_string(),
            model: call.model.map(str::to_string),
            input: call.input.clone(),
            timeout: call.timeout,
        });
        Box::pin(async move {
            tokio::time::sleep(self.delay).await;
            reply
        })
    }
}

fn config(event: &str, handlers: Value) -> HookConfig {
    let cfg = common::user_hooks(common::one_group(event, "*", handlers));
    assert!(cfg.warnings.is_empty(), "{:?}", cfg.warnings);
    cfg
}

async fn run(cfg: &HookConfig, runner: Arc<Runner>, event: Event, input: &Value) -> DispatchResult {
    let dir = tempfile::tempdir().unwrap();
    let opts = common::opts(dir.path()).with_model_runner(runner);
    dispatch(event, input, cfg, &opts).await
}

fn stop_input() -> Value {
    common::input(
        Event::Stop,
        json!({"stop_hook_active": false, "last_assistant_message": "Done."}),
    )
}

fn bash_input() -> Value {
    common::pre_tool("Bash", json!({"command": "rm -rf build"}))
}

const DENY: &str = r#"{"ok": false, "reason": "deleting build/ loses the cache"}"#;

#[tokio::test]
async fn arguments_are_replaced_by_the_hook_input_json() {
    let cfg = config(
        "PreToolUse",
        json!([{
            "type": "prompt",
            "prompt": "Is this command safe? $ARGUMENTS Answer carefully.",
            "model": "claude-haiku-4-5"
        }]),
    );
    let runner = Arc::new(Runner::answering(r#"{"ok": true}"#));
    let input = bash_input();
    run(&cfg, runner.clone(), Event::PreToolUse, &input).await;
    let seen = runner.seen();
    assert_eq!(seen.len(), 1);
    let call = &seen[0];
    assert_eq!(
        call.prompt,
        format!("Is this command safe? {input} Answer carefully.")
    );
    assert!(call.prompt.contains(r#""command":"rm -rf build""#));
    assert_eq!(call.event, Event::PreToolUse);
    assert_eq!(call.handler_type, HandlerType::Prompt);
    assert_eq!(call.model.as_deref(), Some("claude-haiku-4-5"));
    assert_eq!(call.input, input);
    assert_eq!(call.timeout, Duration::from_secs(30));
    assert!(
        call.instructions.contains("\"ok\""),
        "{}",
        call.instructions
    );
    assert!(call.instructions.contains("impossible"));
}

#[tokio::test]
async fn a_prompt_without_arguments_gets_the_input_appended() {
    let cfg = config(
        "Stop",
        json!([{"type": "agent", "prompt": "Check that the tests were run."}]),
    );
    let runner = Arc::new(Runner::answering(r#"{"ok": true}"#));
    let input = stop_input();
    run(&cfg, runner.clone(), Event::Stop, &input).await;
    let call = &runner.seen()[0];
    assert_eq!(
        call.prompt,
        format!("Check that the tests were run.\n\nARGUMENTS: {input}")
    );
    assert_eq!(call.handler_type, HandlerType::Agent);
    assert_eq!(call.model, None);
    assert_eq!(call.timeout, Duration::from_secs(60));
    assert!(!call.instructions.contains("impossible"));
}

#[tokio::test]
async fn not_ok_on_pre_tool_use_denies_with_the_reason() {
    let cfg = config(
        "PreToolUse",
        json!([{"type": "prompt", "prompt": "Safe? $ARGUMENTS"}]),
    );
    let r = run(
        &cfg,
        Arc::new(Runner::answering(DENY)),
        Event::PreToolUse,
        &bash_input(),
    )
    .await;
    let verdict = r.merged.permission_verdict();
    assert_eq!(verdict.decision, Some(HookVerdict::Decided(Decision::Deny)));
    assert_eq!(
        verdict.reason.as_deref(),
        Some("deleting build/ loses the cache")
    );
    assert_eq!(r.handlers[0].handler_type, HandlerType::Prompt);
    assert_eq!(r.handlers[0].label, "prompt \"Safe? $ARGUMENTS\"");
    assert_eq!(r.handlers[0].exit_code, None);
    let (stdout, code, _) = to_cc_output(&r.merged, Event::PreToolUse);
    assert_eq!(code, 0);
    assert_eq!(
        stdout["hookSpecificOutput"]["permissionDecision"],
        json!("deny")
    );
}

#[tokio::test]
async fn not_ok_on_stop_blocks_so_the_turn_goes_on_with_the_reason() {
    let cfg = config(
        "Stop",
        json!([{"type": "prompt", "prompt": "Is the work finished? $ARGUMENTS"}]),
    );
    let runner = Arc::new(Runner::answering(
        r#"{"ok": false, "reason": "Run the tests before stopping."}"#,
    ));
    let r = run(&cfg, runner, Event::Stop, &stop_input()).await;
    assert!(r.merged.blocked);
    assert_eq!(
        r.merged.block_reasons,
        vec!["Run the tests before stopping.".to_string()]
    );
    let (stdout, code, _) = to_cc_output(&r.merged, Event::Stop);
    assert_eq!(code, 0);
    assert_eq!(
        stdout,
        json!({"decision": "block", "reason": "Run the tests before stopping."})
    );
}

#[tokio::test]
async fn impossible_lets_a_prompt_handler_allow_the_stop() {
    let cfg = config(
        "Stop",
        json!([{"type": "prompt", "prompt": "Is the work finished?"}]),
    );
    let runner = Arc::new(Runner::answering(
        r#"{"ok": false, "reason": "The API key is missing.", "impossible": true}"#,
    ));
    let r = run(&cfg, runner, Event::Stop, &stop_input()).await;
    assert_eq!(r.handlers[0].result.outcome, Outcome::Success);
    assert!(!r.merged.blocked);
    assert!(r.merged.block_reasons.is_empty());
    assert_eq!(r.merged.continue_on_block, None);
    assert_eq!(r.merged, MergedResult::empty(Event::Stop));
}

#[tokio::test]
async fn agent_handlers_have_no_impossible_and_still_block() {
    let cfg = config(
        "SubagentStop",
        json!([{"type": "agent", "prompt": "Is the work finished?"}]),
    );
    let runner = Arc::new(Runner::answering(
        r#"{"ok": false, "reason": "Tests fail.", "impossible": true}"#,
    ));
    let input = common::input(
        Event::SubagentStop,
        json!({"stop_hook_active": false, "agent_id": "a-1", "agent_type": "x"}),
    );
    let r = run(&cfg, runner, Event::SubagentStop, &input).await;
    assert!(r.merged.blocked);
    assert_eq!(r.merged.block_reasons, vec!["Tests fail.".to_string()]);
}

#[tokio::test]
async fn ok_gives_no_decision() {
    for (event, name, input) in [
        (Event::PreToolUse, "PreToolUse", bash_input()),
        (Event::Stop, "Stop", stop_input()),
    ] {
        let cfg = config(name, json!([{"type": "prompt", "prompt": "Fine?"}]));
        let runner = Arc::new(Runner::answering(
            r#"{"ok": true, "reason": "nothing to object to"}"#,
        ));
        let r = run(&cfg, runner, event, &input).await;
        assert_eq!(r.handlers[0].result.outcome, Outcome::Success, "{event}");
        assert_eq!(r.handlers[0].continue_on_block, None);
        assert_eq!(r.merged, MergedResult::empty(event), "{event}");
        assert_eq!(r.merged.permission_verdict().decision, None);
    }
}

#[tokio::test]
async fn an_answer_in_prose_or_a_fence_is_found() {
    let cfg = config(
        "PreToolUse",
        json!([{"type": "prompt", "prompt": "Safe? $ARGUMENTS"}]),
    );
    for text in [
        "Let me look.\n```json\n{\"ok\": false, \"reason\": \"not in CI\"}\n```\nThat's all.",
        "The answer is {\"ok\": false, \"reason\": \"not in CI\"} as requested.",
    ] {
        let r = run(
            &cfg,
            Arc::new(Runner::answering(text)),
            Event::PreToolUse,
            &bash_input(),
        )
        .await;
        let verdict = r.merged.permission_verdict();
        assert_eq!(
            verdict.decision,
            Some(HookVerdict::Decided(Decision::Deny)),
            "{text}"
        );
        assert_eq!(verdict.reason.as_deref(), Some("not in CI"));
    }
}

#[tokio::test]
async fn unusable_answers_are_non_blocking_errors_naming_the_handler() {
    let cfg = config(
        "PreToolUse",
        json!([{"type": "prompt", "prompt": "Is this command safe?\nMore lines."}]),
    );
    for (text, detail) in [
        ("Looks fine to me.", "holds no JSON object"),
        (r#"{"verdict": "ok"}"#, "no boolean `ok`"),
        (r#"{"ok": false}"#, "without a `reason`"),
        (r#"{"ok": false, "reason": ["x"]}"#, "`reason`"),
    ] {
        let r = run(
            &cfg,
            Arc::new(Runner::answering(text)),
            Event::PreToolUse,
            &bash_input(),
        )
        .await;
        let message = match &r.handlers[0].result.outcome {
            Outcome::NonBlockingError { message } => message.clone(),
            other => panic!("{text}: {other:?}"),
        };
        assert!(
            message.starts_with("prompt \"Is this command safe?\""),
            "{message}"
        );
        assert!(message.contains(detail), "{message}");
        assert!(message.contains(text), "the answer is quoted: {message}");
        assert!(!r.merged.blocked);
        assert_eq!(r.merged.permission_verdict().decision, None);
        assert_eq!(r.merged.errors, vec![message]);
        assert_eq!(r.merged.continue_on_block, None);
    }
}

#[tokio::test]
async fn a_failed_model_call_is_a_non_blocking_error() {
    let cfg = config("Stop", json!([{"type": "agent", "prompt": "Done?"}]));
    let r = run(
        &cfg,
        Arc::new(Runner::failing("model overloaded")),
        Event::Stop,
        &stop_input(),
    )
    .await;
    let message = match &r.handlers[0].result.outcome {
        Outcome::NonBlockingError { message } => message.clone(),
        other => panic!("{other:?}"),
    };
    assert!(message.starts_with("agent \"Done?\""), "{message}");
    assert!(message.contains("model overloaded"), "{message}");
    assert!(!r.merged.blocked);
}

#[tokio::test]
async fn on_failure_block_denies_when_the_model_cannot_answer() {
    let cfg = config(
        "PreToolUse",
        json!([{"type": "prompt", "prompt": "Safe?", "onFailure": "block"}]),
    );
    for runner in [Runner::failing("no credentials"), Runner::answering("hmm")] {
        let r = run(&cfg, Arc::new(runner), Event::PreToolUse, &bash_input()).await;
        assert!(r.merged.blocked);
        assert_eq!(
            r.merged.block_reasons,
            vec!["[prompt \"Safe?\"]: failed; blocking because onFailure is \"block\"".to_string()]
        );
        assert_eq!(
            r.merged.permission_verdict().decision,
            Some(HookVerdict::Decided(Decision::Deny))
        );
        // The model said nothing, so there is no model block for continueOnBlock to govern.
        assert_eq!(r.merged.continue_on_block, None);
    }
}

#[tokio::test]
async fn a_model_that_outlives_its_timeout_is_cancelled_without_a_decision() {
    let cfg = config(
        "PreToolUse",
        json!([{"type": "prompt", "prompt": "Safe?", "timeout": 1}]),
    );
    let runner = Arc::new(Runner {
        delay: Duration::from_secs(30),
        ..Runner::answering(DENY)
    });
    let start = Instant::now();
    let r = run(&cfg, runner.clone(), Event::PreToolUse, &bash_input()).await;
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
async fn without_a_runner_model_handlers_are_skipped_with_a_notice() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(
        "Stop",
        json!([{"type": "prompt", "prompt": "Is the work finished?"}]),
    );
    let r = dispatch(Event::Stop, &stop_input(), &cfg, &common::opts(dir.path())).await;
    assert_eq!(r.handlers.len(), 1);
    assert!(
        matches!(&r.handlers[0].result.outcome, Outcome::Skipped { reason } if reason.contains("Is the work finished?")),
        "{:?}",
        r.handlers[0].result.outcome
    );
    assert_eq!(
        r.warnings,
        vec![
            "prompt \"Is the work finished?\": no model runner configured (prompt handlers need a model); skipped"
                .to_string()
        ]
    );
    assert_eq!(r.merged, MergedResult::empty(Event::Stop));
}

#[tokio::test]
async fn continue_on_block_is_recorded_per_handler_and_merged() {
    let post = common::input(
        Event::PostToolUse,
        json!({
            "tool_name": "Bash",
            "tool_input": {"command": "make"},
            "tool_response": {"stdout": "", "stderr": "error", "exit_code": 2},
            "tool_use_id": "toolu_1"
        }),
    );
    let not_ok = r#"{"ok": false, "reason": "the build failed"}"#;
    let cases = [
        // (handlers, expected per-handler flags in config order, merged)
        (
            json!([{"type": "prompt", "prompt": "A", "continueOnBlock": true}]),
            vec![Some(true)],
            Some(true),
        ),
        (
            json!([{"type": "prompt", "prompt": "A"}]),
            vec![Some(false)],
            Some(false),
        ),
        (
            json!([{"type": "agent", "prompt": "A"}]),
            vec![Some(true)],
            Some(true),
        ),
        (
            json!([
                {"type": "agent", "prompt": "A"},
                {"type": "prompt", "prompt": "B", "continueOnBlock": false}
            ]),
            vec![Some(true), Some(false)],
            Some(false),
        ),
        (
            json!([
                {"type": "prompt", "prompt": "A", "continueOnBlock": true},
                {"type": "prompt", "prompt": "OK"}
            ]),
            vec![Some(true), None],
            Some(true),
        ),
    ];
    for (handlers, flags, merged) in cases {
        let cfg = config("PostToolUse", handlers.clone());
        let runner = Arc::new(Runner::answering(not_ok).when("OK", r#"{"ok": true}"#));
        let r = run(&cfg, runner, Event::PostToolUse, &post).await;
        let mut reports = r.handlers.clone();
        reports.sort_by(|a, b| a.label.cmp(&b.label));
        let got: Vec<Option<bool>> = reports.iter().map(|h| h.continue_on_block).collect();
        assert_eq!(got, flags, "{handlers}");
        assert_eq!(r.merged.continue_on_block, merged, "{handlers}");
        assert!(r.merged.blocked, "{handlers}");
        assert!(
            r.merged
                .block_reasons
                .contains(&"the build failed".to_string())
        );
    }
}

#[tokio::test]
async fn not_ok_on_other_events_takes_each_events_way_of_blocking() {
    let not_ok = r#"{"ok": false, "reason": "no"}"#;
    let tool = |event: Event| {
        common::input(
            event,
            json!({"tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_use_id": "t"}),
        )
    };
    let blocking = [
        (
            Event::UserPromptSubmit,
            common::input(Event::UserPromptSubmit, json!({"prompt": "hi"})),
        ),
        (Event::PostToolUseFailure, tool(Event::PostToolUseFailure)),
        (
            Event::PostToolBatch,
            common::input(Event::PostToolBatch, json!({"tool_calls": []})),
        ),
        (
            Event::TaskCreated,
            common::input(
                Event::TaskCreated,
                json!({"task_id": "1", "task_subject": "s"}),
            ),
        ),
    ];
    for (event, input) in blocking {
        let cfg = config(event.as_str(), json!([{"type": "prompt", "prompt": "?"}]));
        let r = run(&cfg, Arc::new(Runner::answering(not_ok)), event, &input).await;
        assert!(r.merged.blocked, "{event}");
        assert_eq!(r.merged.block_reasons, vec!["no".to_string()], "{event}");
        let (stdout, _, _) = to_cc_output(&r.merged, event);
        assert_eq!(stdout["decision"], json!("block"), "{event}");
    }

    // TaskCompleted and TeammateIdle block by exit code only.
    for event in [Event::TaskCompleted, Event::TeammateIdle] {
        let input = common::input(event, json!({"task_id": "1", "teammate_name": "t"}));
        let cfg = config(event.as_str(), json!([{"type": "agent", "prompt": "?"}]));
        let r = run(&cfg, Arc::new(Runner::answering(not_ok)), event, &input).await;
        assert!(
            matches!(&r.handlers[0].result.outcome, Outcome::Blocking { reason, fail_closed: false } if reason == "no"),
            "{event}: {:?}",
            r.handlers[0].result.outcome
        );
        let (_, code, stderr) = to_cc_output(&r.merged, event);
        assert_eq!((code, stderr.as_deref()), (2, Some("no")), "{event}");
    }

    // On PermissionRequest and PermissionDenied `ok: false` has no effect.
    for event in [Event::PermissionRequest, Event::PermissionDenied] {
        let cfg = config(event.as_str(), json!([{"type": "prompt", "prompt": "?"}]));
        let r = run(
            &cfg,
            Arc::new(Runner::answering(not_ok)),
            event,
            &tool(event),
        )
        .await;
        assert_eq!(r.handlers[0].result.outcome, Outcome::Success, "{event}");
        assert_eq!(r.handlers[0].continue_on_block, None, "{event}");
        assert_eq!(r.merged, MergedResult::empty(event), "{event}");
    }
}
