//! Spec table 1.11: `onFailure: "block"` (fail-closed hooks).

mod common;

use serde_json::json;
use warden_hooks::*;

fn block(event: Event, raw: RawOutcome) -> Classified {
    classify_raw(event, &raw, OnFailure::Block, "guard.sh", None)
}

fn is_fail_closed(c: &Classified) -> bool {
    matches!(
        &c.outcome,
        Outcome::Blocking {
            fail_closed: true,
            ..
        }
    )
}

#[test]
fn cannot_start_is_a_failure() {
    assert!(is_fail_closed(&block(
        Event::PreToolUse,
        RawOutcome::error("ENOENT")
    )));
}

#[test]
fn exit_other_than_0_or_2_is_a_failure_even_with_allow_json() {
    let allow = json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}});
    let c = block(
        Event::PreToolUse,
        RawOutcome::exited(1, allow.to_string(), ""),
    );
    assert!(is_fail_closed(&c));
    let m = merge(Event::PreToolUse, &json!({}), &[c], None);
    assert_eq!(
        m.permission_verdict().decision,
        Some(HookVerdict::Decided(Decision::Deny))
    );
}

#[test]
fn timeout_is_a_failure_with_its_own_message() {
    let c = block(Event::PreToolUse, RawOutcome::timed_out());
    match c.outcome {
        Outcome::Blocking {
            reason,
            fail_closed: true,
        } => {
            assert_eq!(
                reason,
                "[guard.sh]: timed out; blocking because onFailure is \"block\""
            )
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn unparseable_or_schema_invalid_json_is_a_failure() {
    assert!(is_fail_closed(&block(
        Event::PreToolUse,
        RawOutcome::exited(0, "{oops", "")
    )));
    let bad = json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "perhaps"}});
    let c = block(
        Event::PreToolUse,
        RawOutcome::exited(0, bad.to_string(), ""),
    );
    match c.outcome {
        Outcome::Blocking {
            reason,
            fail_closed: true,
        } => {
            assert_eq!(
                reason,
                "[guard.sh]: failed; blocking because onFailure is \"block\""
            )
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn plain_text_stdout_is_not_a_failure() {
    assert_eq!(
        block(Event::PreToolUse, RawOutcome::exited(0, "all good", "")).outcome,
        Outcome::Success
    );
    assert_eq!(
        block(Event::PreToolUse, RawOutcome::exited(0, "", "")).outcome,
        Outcome::Success
    );
}

#[test]
fn exit_2_is_unchanged() {
    let c = block(Event::PreToolUse, RawOutcome::exited(2, "", "nope"));
    assert_eq!(
        c.outcome,
        Outcome::Blocking {
            reason: "nope".into(),
            fail_closed: false
        }
    );
}

#[test]
fn failure_behaves_as_exit_2_on_the_event() {
    // Blocks where exit 2 blocks…
    let m = merge(
        Event::UserPromptSubmit,
        &json!({}),
        &[block(Event::UserPromptSubmit, RawOutcome::error("x"))],
        None,
    );
    assert!(m.blocked);
    // …and is feedback where exit 2 is feedback.
    let m = merge(
        Event::PostToolUse,
        &json!({}),
        &[block(Event::PostToolUse, RawOutcome::error("x"))],
        None,
    );
    assert!(!m.blocked);
    assert_eq!(m.feedback.len(), 1);
}

#[test]
fn permission_request_is_denied() {
    let c = block(Event::PermissionRequest, RawOutcome::timed_out());
    let m = merge(Event::PermissionRequest, &json!({}), &[c], None);
    let v = m.permission_verdict();
    assert_eq!(v.decision, Some(HookVerdict::Decided(Decision::Deny)));
    let (out, _, _) = to_cc_output(&m, Event::PermissionRequest);
    assert_eq!(out["hookSpecificOutput"]["decision"]["behavior"], "deny");
}

#[test]
fn no_effect_on_stop_subagent_stop_task_completed_teammate_idle() {
    for e in [
        Event::Stop,
        Event::SubagentStop,
        Event::TaskCompleted,
        Event::TeammateIdle,
    ] {
        assert_eq!(
            block(e, RawOutcome::timed_out()).outcome,
            Outcome::Cancelled,
            "{e}"
        );
        assert!(
            matches!(
                block(e, RawOutcome::exited(1, "", "x")).outcome,
                Outcome::NonBlockingError { .. }
            ),
            "{e}"
        );
    }
}

#[test]
fn continue_is_the_default() {
    let c = classify_raw(
        Event::PreToolUse,
        &RawOutcome::timed_out(),
        OnFailure::Continue,
        "x",
        None,
    );
    assert_eq!(c.outcome, Outcome::Cancelled);
}

#[tokio::test]
async fn no_effect_on_async_hooks() {
    let dir = tempfile::tempdir().unwrap();
    let hooks = common::one_group(
        "PreToolUse",
        "Bash",
        json!([{ "type": "command", "command": "exit 1", "async": true, "onFailure": "block" }]),
    );
    let c = common::user_hooks(hooks);
    let r = dispatch(
        Event::PreToolUse,
        &common::pre_tool("Bash", json!({"command": "ls"})),
        &c,
        &common::opts(dir.path()),
    )
    .await;
    assert!(!r.merged.blocked);
    assert_eq!(r.handlers[0].result.outcome, Outcome::Async);
}

#[tokio::test]
async fn http_failures_fail_closed() {
    let dir = tempfile::tempdir().unwrap();
    // Nothing listens on this port: connection failure.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let hooks = common::one_group(
        "PreToolUse",
        "*",
        json!([{ "type": "http", "url": format!("http://127.0.0.1:{port}/hook"), "onFailure": "block", "timeout": 5 }]),
    );
    let c = common::user_hooks(hooks);
    let r = dispatch(
        Event::PreToolUse,
        &common::pre_tool("Bash", json!({"command": "ls"})),
        &c,
        &common::opts(dir.path()),
    )
    .await;
    assert!(r.merged.blocked, "{:?}", r.handlers);
}
