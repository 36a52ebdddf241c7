//! Spec table 1.10: exit code × stdout × JSON schema, the HTTP response rules, the universal
//! fields and the per-event decision patterns.

mod common;

use serde_json::{Value, json};
use warden_hooks::*;

fn run(event: Event, code: i32, stdout: &str, stderr: &str) -> Classified {
    classify_raw(
        event,
        &RawOutcome::exited(code, stdout, stderr),
        OnFailure::Continue,
        "hook.sh",
        None,
    )
}

fn merged(event: Event, results: &[Classified]) -> MergedResult {
    merge(event, &json!({}), results, None)
}

fn pre_allow() -> String {
    json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}})
        .to_string()
}

// --- stdout classification ---

#[test]
fn stdout_leading_whitespace_is_trimmed_before_the_json_check() {
    let c = run(Event::PreToolUse, 0, &format!("\n  \t{}", pre_allow()), "");
    assert_eq!(c.outcome, Outcome::Success);
    assert!(c.json.is_some());
}

#[test]
fn stdout_that_fails_to_parse_is_plain_text() {
    let c = run(Event::UserPromptSubmit, 0, "{not json", "");
    assert_eq!(c.outcome, Outcome::Success);
    assert!(c.json.is_none());
    assert_eq!(c.plain.as_deref(), Some("{not json"));
}

#[test]
fn json_arrays_and_strings_are_plain_text() {
    for s in ["[1,2]", "\"str\""] {
        let c = run(Event::UserPromptSubmit, 0, s, "");
        assert!(c.json.is_none());
        assert_eq!(c.plain.as_deref(), Some(s));
    }
}

// --- exit 0 ---

#[test]
fn exit_0_plain_stdout_is_context_only_on_prompt_and_session_start_events() {
    for e in [
        Event::UserPromptSubmit,
        Event::UserPromptExpansion,
        Event::SessionStart,
    ] {
        let m = merged(e, &[run(e, 0, "remember this", "")]);
        assert_eq!(
            m.additional_context,
            vec!["remember this".to_string()],
            "{e}"
        );
    }
    for e in [Event::PreToolUse, Event::PostToolUse, Event::Stop] {
        let m = merged(e, &[run(e, 0, "debug noise", "")]);
        assert!(m.additional_context.is_empty(), "{e}");
        assert!(m.errors.is_empty());
    }
}

#[test]
fn exit_0_json_is_applied() {
    let m = merged(
        Event::PreToolUse,
        &[run(Event::PreToolUse, 0, &pre_allow(), "")],
    );
    assert_eq!(m.permission, Some(HookVerdict::Decided(Decision::Allow)));
}

#[test]
fn exit_0_schema_invalid_json_is_a_non_blocking_error() {
    let bad = json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "maybe"}}).to_string();
    let c = run(Event::PreToolUse, 0, &bad, "");
    assert!(matches!(c.outcome, Outcome::NonBlockingError { .. }));
    let m = merged(Event::PreToolUse, &[c]);
    assert_eq!(m.permission, None);
    assert!(!m.blocked);
    assert_eq!(m.errors.len(), 1);
}

#[test]
fn hook_event_name_is_required_and_must_match() {
    let missing = json!({"hookSpecificOutput": {"permissionDecision": "deny"}}).to_string();
    assert!(matches!(
        run(Event::PreToolUse, 0, &missing, "").outcome,
        Outcome::NonBlockingError { .. }
    ));
    let wrong = json!({"hookSpecificOutput": {"hookEventName": "PostToolUse"}}).to_string();
    assert!(matches!(
        run(Event::PreToolUse, 0, &wrong, "").outcome,
        Outcome::NonBlockingError { .. }
    ));
}

// --- exit 2 ---

#[test]
fn exit_2_blocks_on_events_that_can_block_with_stderr_as_reason() {
    for e in Event::ALL
        .into_iter()
        .filter(|e| e.can_block() && *e != Event::PermissionRequest)
    {
        let m = merged(e, &[run(e, 2, "", "not allowed\n")]);
        assert!(m.blocked, "{e}");
        assert_eq!(m.block_reasons, vec!["not allowed".to_string()], "{e}");
    }
}

#[test]
fn exit_2_on_events_that_cannot_block_is_feedback_not_a_block() {
    for e in [
        Event::PostToolUse,
        Event::SessionStart,
        Event::Notification,
        Event::SessionEnd,
    ] {
        let m = merged(e, &[run(e, 2, "", "look at this")]);
        assert!(!m.blocked, "{e}");
        assert_eq!(m.feedback, vec!["look at this".to_string()]);
    }
}

#[test]
fn exit_2_blocks_even_if_json_says_allow_and_json_is_still_read() {
    let out = json!({
        "systemMessage": "read me",
        "hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow", "permissionDecisionReason": "json reason"}
    });
    let m = merged(
        Event::PreToolUse,
        &[run(Event::PreToolUse, 2, &out.to_string(), "stderr reason")],
    );
    assert!(m.blocked);
    assert_eq!(
        m.block_reasons,
        vec!["json reason".to_string()],
        "JSON reason preferred over stderr"
    );
    assert_eq!(m.system_messages, vec!["read me".to_string()]);
    assert_eq!(
        m.permission_verdict().decision,
        Some(HookVerdict::Decided(Decision::Deny))
    );
}

#[test]
fn exit_2_with_invalid_json_still_blocks_with_stderr() {
    let m = merged(Event::Stop, &[run(Event::Stop, 2, "{broken", "keep going")]);
    assert!(m.blocked);
    assert_eq!(m.block_reasons, vec!["keep going".to_string()]);
}

#[test]
fn exit_2_on_elicitation_ignores_hook_specific_output() {
    let out = json!({"hookSpecificOutput": {"hookEventName": "Elicitation", "action": "accept"}})
        .to_string();
    let m = merged(
        Event::Elicitation,
        &[run(Event::Elicitation, 2, &out, "no")],
    );
    assert!(m.blocked);
    assert!(m.hook_specific.is_empty());
}

// --- other exit codes ---

#[test]
fn other_exit_with_schema_valid_json_lets_json_decide_without_error() {
    let deny = json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny"}}).to_string();
    let c = run(Event::PreToolUse, 1, &deny, "oops");
    assert_eq!(c.outcome, Outcome::Success);
    let m = merged(Event::PreToolUse, &[c]);
    assert_eq!(m.permission, Some(HookVerdict::Decided(Decision::Deny)));
    assert!(m.errors.is_empty());
}

#[test]
fn other_exit_with_plain_or_empty_or_invalid_output_is_a_non_blocking_error() {
    for stdout in ["", "plain", "{bad"] {
        let c = run(Event::PreToolUse, 1, stdout, "first line\nsecond line");
        match &c.outcome {
            Outcome::NonBlockingError { message } => {
                assert!(
                    message.contains("Failed with non-blocking status code: first line"),
                    "{message}"
                );
                assert!(!message.contains("second line"));
            }
            other => panic!("{other:?}"),
        }
        assert!(!merged(Event::PreToolUse, &[c]).blocked);
    }
}

#[test]
fn a_hook_that_cannot_start_is_a_non_blocking_error() {
    let c = classify_raw(
        Event::PreToolUse,
        &RawOutcome::error("No such file"),
        OnFailure::Continue,
        "x",
        None,
    );
    assert!(matches!(c.outcome, Outcome::NonBlockingError { .. }));
    let c127 = run(Event::PreToolUse, 127, "", "sh: 1: nope: not found");
    assert!(matches!(c127.outcome, Outcome::NonBlockingError { .. }));
}

#[test]
fn worktree_create_fails_on_any_non_zero_exit_and_takes_the_last_stdout_line() {
    let m = merged(
        Event::WorktreeCreate,
        &[run(Event::WorktreeCreate, 1, "", "cannot")],
    );
    assert!(m.blocked);
    let ok = run(
        Event::WorktreeCreate,
        0,
        "creating…\n\x1b[32m/tmp/wt\x1b[0m\n\n",
        "",
    );
    let m = merged(Event::WorktreeCreate, &[ok]);
    assert_eq!(m.worktree_path.as_deref(), Some("/tmp/wt"));
    let (out, code, _) = to_cc_output(&m, Event::WorktreeCreate);
    assert_eq!((render_stdout(&out), code), ("/tmp/wt".to_string(), 0));
}

#[test]
fn timed_out_hooks_give_no_decision() {
    let c = classify_raw(
        Event::PreToolUse,
        &RawOutcome::timed_out(),
        OnFailure::Continue,
        "x",
        None,
    );
    assert_eq!(c.outcome, Outcome::Cancelled);
    let m = merged(Event::PreToolUse, &[c]);
    assert!(!m.blocked && m.permission.is_none());
}

// --- caps ---

#[test]
fn output_strings_are_capped_at_10000_characters_with_spill_file() {
    let dir = tempfile::tempdir().unwrap();
    let long = "é".repeat(25_000);
    let capped = cap_text(&long, Some(dir.path()));
    assert!(capped.chars().count() <= MAX_OUTPUT_CHARS);
    assert!(capped.contains("25000 characters"));
    let spilled = std::fs::read_dir(dir.path())
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    assert_eq!(std::fs::read_to_string(spilled).unwrap(), long);
    assert_eq!(cap_text("short", None), "short");
    let ctx = json!({"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "x".repeat(20_000)}});
    let m = merged(
        Event::PostToolUse,
        &[run(Event::PostToolUse, 0, &ctx.to_string(), "")],
    );
    assert!(m.additional_context[0].chars().count() <= MAX_OUTPUT_CHARS);
}

// --- universal fields ---

#[test]
fn continue_false_and_stop_reason_and_system_message() {
    let out = json!({"continue": false, "stopReason": "halt", "systemMessage": "warn user", "suppressOutput": true});
    let m = merged(
        Event::PostToolUse,
        &[run(Event::PostToolUse, 0, &out.to_string(), "")],
    );
    assert!(!m.continue_);
    assert_eq!(m.stop_reasons, vec!["halt".to_string()]);
    assert_eq!(m.system_messages, vec!["warn user".to_string()]);
    let (v, code, _) = to_cc_output(&m, Event::PostToolUse);
    assert_eq!(code, 0);
    assert_eq!(v["continue"], false);
    assert_eq!(v["stopReason"], "halt");
}

#[test]
fn universal_fields_are_type_checked() {
    for bad in [
        json!({"continue": "no"}),
        json!({"systemMessage": 3}),
        json!({"decision": "maybe"}),
    ] {
        assert!(
            validate_output(Event::Stop, bad.as_object().unwrap()).is_err(),
            "{bad}"
        );
    }
}

// --- decision patterns ---

#[test]
fn top_level_decision_block_blocks_the_decision_events() {
    for e in [
        Event::UserPromptSubmit,
        Event::UserPromptExpansion,
        Event::PostToolBatch,
        Event::Stop,
        Event::SubagentStop,
        Event::ConfigChange,
        Event::PreCompact,
        Event::TaskCreated,
    ] {
        let out = json!({"decision": "block", "reason": "because"}).to_string();
        let m = merged(e, &[run(e, 0, &out, "")]);
        assert!(m.blocked, "{e}");
        let (v, code, _) = to_cc_output(&m, e);
        assert_eq!(
            (v["decision"].clone(), v["reason"].clone(), code),
            (json!("block"), json!("because"), 0),
            "{e}"
        );
    }
}

#[test]
fn post_tool_use_block_is_rendered_as_decision_for_claude() {
    let out = json!({"decision": "block", "reason": "lint failed"}).to_string();
    let m = merged(Event::PostToolUse, &[run(Event::PostToolUse, 0, &out, "")]);
    let (v, _, _) = to_cc_output(&m, Event::PostToolUse);
    assert_eq!(v["decision"], "block");
}

#[test]
fn config_change_from_policy_settings_cannot_block() {
    let out = json!({"decision": "block", "reason": "no"}).to_string();
    let r = run(Event::ConfigChange, 0, &out, "");
    let m = merge(
        Event::ConfigChange,
        &json!({"source": "policy_settings"}),
        &[r],
        None,
    );
    assert!(!m.blocked);
}

#[test]
fn teammate_idle_and_task_completed_block_by_exit_2() {
    for e in [Event::TeammateIdle, Event::TaskCompleted] {
        let m = merged(e, &[run(e, 2, "", "keep working")]);
        let (_, code, stderr) = to_cc_output(&m, e);
        assert_eq!((code, stderr.as_deref()), (2, Some("keep working")));
        let stop = json!({"continue": false, "stopReason": "done"}).to_string();
        assert!(!merged(e, &[run(e, 0, &stop, "")]).continue_);
    }
}

#[test]
fn pre_tool_use_decisions_merge_most_restrictive_first() {
    let d = |x: &str, why: &str| {
        run(
            Event::PreToolUse,
            0,
            &json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": x, "permissionDecisionReason": why}})
                .to_string(),
            "",
        )
    };
    let order = [
        ("allow", HookVerdict::Decided(Decision::Allow)),
        ("ask", HookVerdict::Decided(Decision::Ask)),
        ("defer", HookVerdict::Defer),
        ("deny", HookVerdict::Decided(Decision::Deny)),
    ];
    for (i, (hi, expected)) in order.iter().enumerate() {
        for (lo, _) in &order[..i] {
            let m = merged(Event::PreToolUse, &[d(hi, "hi"), d(lo, "lo")]);
            assert_eq!(m.permission, Some(*expected));
            assert_eq!(m.permission_reasons, vec!["hi".to_string()]);
            let m = merged(Event::PreToolUse, &[d(lo, "lo"), d(hi, "hi")]);
            assert_eq!(m.permission, Some(*expected));
        }
    }
}

#[test]
fn deprecated_pre_tool_use_decision_values_are_mapped() {
    let approve = run(
        Event::PreToolUse,
        0,
        &json!({"decision": "approve", "reason": "ok"}).to_string(),
        "",
    );
    assert_eq!(
        merged(Event::PreToolUse, &[approve]).permission,
        Some(HookVerdict::Decided(Decision::Allow))
    );
    let block = run(
        Event::PreToolUse,
        0,
        &json!({"decision": "block", "reason": "no"}).to_string(),
        "",
    );
    let m = merged(Event::PreToolUse, &[block]);
    assert_eq!(
        m.permission_verdict().decision,
        Some(HookVerdict::Decided(Decision::Deny))
    );
    assert_eq!(m.permission_verdict().reason.as_deref(), Some("no"));
}

#[test]
fn contexts_concatenate_and_updated_input_is_last_writer() {
    let out = |ctx: &str, cmd: &str| {
        run(
            Event::PreToolUse,
            0,
            &json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": ctx, "updatedInput": {"command": cmd}}})
                .to_string(),
            "",
        )
    };
    let m = merged(Event::PreToolUse, &[out("one", "a"), out("two", "b")]);
    assert_eq!(
        m.additional_context,
        vec!["one".to_string(), "two".to_string()]
    );
    assert_eq!(m.updated_input, Some(json!({"command": "b"})));
    let (v, _, _) = to_cc_output(&m, Event::PreToolUse);
    assert_eq!(v["hookSpecificOutput"]["additionalContext"], "one\ntwo");
    assert_eq!(
        v["hookSpecificOutput"]["updatedInput"],
        json!({"command": "b"})
    );
}

#[test]
fn permission_request_behaviour_and_deny_wins() {
    let allow = json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "allow", "updatedPermissions": [{"type": "setMode", "mode": "acceptEdits", "destination": "session"}]}}});
    let deny = json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "deny", "message": "no", "interrupt": true}}});
    let e = Event::PermissionRequest;
    let m = merged(e, &[run(e, 0, &allow.to_string(), "")]);
    let v = m.permission_verdict();
    assert_eq!(v.decision, Some(HookVerdict::Decided(Decision::Allow)));
    assert_eq!(v.updated_permissions.len(), 1);
    let m = merged(
        e,
        &[
            run(e, 0, &deny.to_string(), ""),
            run(e, 0, &allow.to_string(), ""),
        ],
    );
    let v = m.permission_verdict();
    assert_eq!(
        (v.decision, v.interrupt, v.reason.as_deref()),
        (Some(HookVerdict::Decided(Decision::Deny)), true, Some("no"))
    );
    let (out, code, _) = to_cc_output(&m, e);
    assert_eq!(out["hookSpecificOutput"]["decision"]["behavior"], "deny");
    assert_eq!(code, 0);
    // Exit 2 is not honoured on PermissionRequest.
    let m = merged(e, &[run(e, 2, "", "nope")]);
    assert!(!m.blocked && m.permission_request.is_none());
}

#[test]
fn permission_denied_retry_and_session_start_fields_pass_through() {
    let e = Event::PermissionDenied;
    let m = merged(
        e,
        &[run(
            e,
            0,
            &json!({"hookSpecificOutput": {"hookEventName": "PermissionDenied", "retry": true}})
                .to_string(),
            "",
        )],
    );
    assert_eq!(m.hook_specific.get("retry"), Some(&Value::Bool(true)));
    let e = Event::SessionStart;
    let out = json!({"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "ctx", "sessionTitle": "T", "watchPaths": ["/a"]}});
    let m = merged(e, &[run(e, 0, &out.to_string(), "")]);
    assert_eq!(m.additional_context, vec!["ctx".to_string()]);
    let (v, _, _) = to_cc_output(&m, e);
    assert_eq!(v["hookSpecificOutput"]["sessionTitle"], "T");
    assert_eq!(v["hookSpecificOutput"]["watchPaths"], json!(["/a"]));
    let bad = json!({"hookSpecificOutput": {"hookEventName": "CwdChanged", "watchPaths": "/a"}});
    assert!(validate_output(Event::CwdChanged, bad.as_object().unwrap()).is_err());
}

#[test]
fn elicitation_action_is_validated_and_passed_through() {
    let e = Event::Elicitation;
    let ok = json!({"hookSpecificOutput": {"hookEventName": "Elicitation", "action": "decline"}});
    let m = merged(e, &[run(e, 0, &ok.to_string(), "")]);
    assert_eq!(m.hook_specific["action"], "decline");
    let bad = json!({"hookSpecificOutput": {"hookEventName": "Elicitation", "action": "maybe"}});
    assert!(validate_output(e, bad.as_object().unwrap()).is_err());
}

#[test]
fn non_blocking_errors_alone_render_as_exit_1() {
    let m = merged(Event::PreToolUse, &[run(Event::PreToolUse, 1, "", "boom")]);
    let (v, code, stderr) = to_cc_output(&m, Event::PreToolUse);
    assert_eq!((v, code), (Value::Null, 1));
    assert!(stderr.unwrap().contains("boom"));
    let (v, code, stderr) = to_cc_output(&MergedResult::empty(Event::Stop), Event::Stop);
    assert_eq!((v, code, stderr), (Value::Null, 0, None));
}
