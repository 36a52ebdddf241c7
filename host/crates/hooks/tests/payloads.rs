//! Hook input JSON against the payloads Claude Code 2.1.332 sends, and the event catalogue.
#![recursion_limit = "256"]

use std::path::Path;

use serde_json::{Value, json};
use warden_hooks::*;

fn fixtures() -> Vec<(String, Value)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hook_stdin");
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).expect("fixtures") {
        let p = e.expect("entry").path();
        let text = std::fs::read_to_string(&p).expect("read");
        out.push((
            p.file_name().unwrap().to_string_lossy().into_owned(),
            serde_json::from_str(&text).expect("json"),
        ));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

#[test]
fn every_reference_payload_round_trips_byte_for_byte() {
    let all = fixtures();
    assert_eq!(all.len(), 30);
    for (name, v) in all {
        let parsed = HookInput::from_value(&v).unwrap_or_else(|e| panic!("{name}: {e}"));
        let event: Event = v["hook_event_name"].as_str().unwrap().parse().unwrap();
        assert_eq!(parsed.event(), event, "{name}");
        let rebuilt = parsed.to_value();
        // Compact serialisation compares values *and* key order (preserve_order is on).
        assert_eq!(rebuilt.to_string(), v.to_string(), "{name}");
    }
}

#[test]
fn builder_produces_reference_key_order() {
    let common = CommonFields {
        session_id: "71cfac67-90e0-43e2-abeb-b74b74b35d8e".into(),
        transcript_path: "/home/dev/.claude/projects/-home-dev-project/71cfac67-90e0-43e2-abeb-b74b74b35d8e.jsonl".into(),
        cwd: "/home/dev/project".into(),
        prompt_id: Some("9c901b05-ad04-4a4c-8f8e-b5d552c5c5cf".into()),
        permission_mode: Some("default".into()),
        effort: Some(Effort { level: "medium".into() }),
        ..Default::default()
    };
    let input = HookInput::new(
        common.clone(),
        EventPayload::PreToolUse(PreToolUse {
            tool_name: "Bash".into(),
            tool_input: json!({"command": "git -C . push origin main"}),
            tool_use_id: "toolu_fake0019a900f6".into(),
            mcp_server: None,
        }),
    );
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/hook_stdin/PreToolUse__Bash.json"),
    )
    .unwrap();
    let reference: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(input.to_value().to_string(), reference.to_string());

    let stop = HookInput::new(
        common,
        EventPayload::Stop(Stop {
            stop_hook_active: false,
            last_assistant_message: "done".into(),
            background_tasks: vec![],
            session_crons: vec![],
        }),
    );
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hook_stdin/Stop.json"),
    )
    .unwrap();
    assert_eq!(
        stop.to_value().to_string(),
        serde_json::from_str::<Value>(&text).unwrap().to_string()
    );
}

#[test]
fn session_start_omits_absent_common_fields() {
    let input = HookInput::new(
        CommonFields {
            session_id: "s".into(),
            transcript_path: "t".into(),
            cwd: "/p".into(),
            ..Default::default()
        },
        EventPayload::SessionStart(SessionStart {
            source: "startup".into(),
            ..Default::default()
        }),
    );
    assert_eq!(
        input.to_value().to_string(),
        r#"{"session_id":"s","transcript_path":"t","cwd":"/p","hook_event_name":"SessionStart","source":"startup"}"#
    );
}

#[test]
fn all_events_parse_and_display_by_exact_name() {
    let names = [
        "SessionStart",
        "Setup",
        "InstructionsLoaded",
        "UserPromptSubmit",
        "UserPromptExpansion",
        "MessageDisplay",
        "PreToolUse",
        "PermissionRequest",
        "PermissionDenied",
        "PostToolUse",
        "PostToolUseFailure",
        "PostToolBatch",
        "Notification",
        "SubagentStart",
        "SubagentStop",
        "TaskCreated",
        "TaskCompleted",
        "Stop",
        "StopFailure",
        "TeammateIdle",
        "ConfigChange",
        "CwdChanged",
        "DirectoryAdded",
        "FileChanged",
        "WorktreeCreate",
        "WorktreeRemove",
        "PreCompact",
        "PostCompact",
        "Elicitation",
        "ElicitationResult",
        "SessionEnd",
    ];
    assert_eq!(names.len(), 31);
    for n in names {
        let e: Event = n.parse().unwrap();
        assert_eq!(e.to_string(), n);
    }
    assert!("postToolUse".parse::<Event>().is_err());
    assert!("sessionStart".parse::<Event>().is_err());
    assert_eq!(
        Event::ALL.len(),
        33,
        "31 baseline events plus Pre/PostModelSwitch"
    );
}

#[test]
fn every_event_builds_an_input_with_its_name() {
    for e in Event::ALL {
        let fields = json!({
            "source": "x", "trigger": "x", "file_path": "/f", "memory_type": "User", "load_reason": "include",
            "prompt": "p", "expansion_type": "slash_command", "command_name": "c", "command_args": "", "command_source": "user",
            "turn_id": "t", "message_id": "m", "index": 0, "final": true, "delta": "d",
            "tool_name": "Bash", "tool_input": {}, "tool_use_id": "u", "reason": "r", "tool_response": {}, "error": "e",
            "tool_calls": [], "message": "m", "notification_type": "idle_prompt", "agent_id": "a", "agent_type": "t",
            "stop_hook_active": false, "agent_transcript_path": "/t", "last_assistant_message": "m",
            "background_tasks": [], "session_crons": [], "task_id": "1", "task_subject": "s", "teammate_name": "n",
            "team_name": "t", "old_cwd": "/a", "new_cwd": "/b", "directory": "/d", "event": "change", "name": "w",
            "worktree_path": "/w", "custom_instructions": "", "compact_summary": "s", "mcp_server_name": "m",
            "action": "accept", "hook_event_name": e.as_str(), "session_id": "s", "transcript_path": "t", "cwd": "/"
        });
        let input = HookInput::from_value(&fields).unwrap_or_else(|err| panic!("{e}: {err}"));
        let v = input.to_value();
        assert_eq!(v["hook_event_name"], e.as_str());
        assert_eq!(HookInput::from_value(&v).unwrap(), input);
    }
}
