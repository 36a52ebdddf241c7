//! Spec table 1.4: matcher semantics, one test per rule.

mod common;

use serde_json::json;
use warden_hooks::*;

fn m(s: &str) -> Matcher {
    Matcher::parse(s, false).expect("compiles")
}

fn narrow(s: &str) -> Matcher {
    Matcher::parse(s, true).expect("compiles")
}

#[test]
fn absent_empty_and_star_match_everything() {
    for matcher in [
        Matcher::from_json(None, false).unwrap(),
        m(""),
        m("*"),
        Matcher::from_json(Some(&json!(null)), false).unwrap(),
    ] {
        assert!(matcher.matches("Bash"));
        assert!(matcher.matches("mcp__x__y"));
        assert!(matcher.matches(""));
    }
}

#[test]
fn exact_set_splits_on_pipe_and_equals() {
    let x = m("Edit|Write");
    assert!(matches!(x, Matcher::Exact(_)));
    assert!(x.matches("Edit"));
    assert!(x.matches("Write"));
    assert!(
        !x.matches("NotebookEdit"),
        "exact list is equality, not substring"
    );
    assert!(!x.matches("Edi"));
}

#[test]
fn exact_set_accepts_commas_and_trims_whitespace() {
    let x = m("Edit, Write | Read");
    assert!(x.matches("Edit") && x.matches("Write") && x.matches("Read"));
    assert!(!x.matches(" Write"));
}

#[test]
fn hyphen_is_in_the_exact_set() {
    let x = m("code-reviewer");
    assert!(matches!(x, Matcher::Exact(_)));
    assert!(x.matches("code-reviewer"));
    assert!(!x.matches("senior-code-reviewer"));
}

#[test]
fn other_characters_make_an_unanchored_regex() {
    let x = m("Edit.*");
    assert!(matches!(x, Matcher::Regex(_)));
    assert!(x.matches("Edit"));
    assert!(
        x.matches("NotebookEdit"),
        "unanchored: RegExp.prototype.test"
    );
    let anchored = m("^Edit$");
    assert!(anchored.matches("Edit"));
    assert!(!anchored.matches("NotebookEdit"));
}

#[test]
fn matchers_are_case_sensitive() {
    assert!(!m("bash").matches("Bash"));
    assert!(!m("^bash$").matches("Bash"));
    assert!(m("Bash").matches("Bash"));
}

#[test]
fn narrow_set_for_file_changed_and_stop_failure() {
    let x = narrow("rate_limit|overloaded");
    assert!(matches!(x, Matcher::Exact(_)));
    assert!(x.matches("rate_limit") && x.matches("overloaded"));
    // A comma or space is not in the narrow set: the whole string is a regex.
    let y = narrow("rate_limit, overloaded");
    assert!(matches!(y, Matcher::Regex(_)));
    assert!(!y.matches("rate_limit"));
    // A hyphen is not in the narrow set either.
    assert!(matches!(narrow("my-file"), Matcher::Regex(_)));
    // A dot makes `.env` a regex that also matches other names.
    let dot = narrow(".env");
    assert!(dot.matches(".env") && dot.matches("xenv"));
}

#[test]
fn mcp_server_prefix_alone_matches_no_tool() {
    let bare = m("mcp__memory");
    assert!(!bare.matches("mcp__memory__create_entities"));
    let all = m("mcp__memory__.*");
    assert!(all.matches("mcp__memory__create_entities"));
    assert!(!all.matches("mcp__other__x"));
    assert!(m("mcp__plugin_p_db__.*").matches("mcp__plugin_p_db__query"));
}

#[test]
fn plugin_agent_types_with_colon_take_the_regex_path() {
    let unanchored = m("my-plugin:reviewer");
    assert!(matches!(unanchored, Matcher::Regex(_)));
    assert!(unanchored.matches("my-plugin:reviewer"));
    assert!(
        unanchored.matches("my-plugin:reviewer-2"),
        "unanchored regex"
    );
    let anchored = m("^my-plugin:reviewer$");
    assert!(!anchored.matches("my-plugin:reviewer-2"));
}

#[test]
fn look_around_uses_the_backtracking_engine() {
    let x = m("^(?!Read$).*");
    assert!(matches!(x, Matcher::Fancy(_)));
    assert!(x.matches("Bash"));
    assert!(!x.matches("Read"));
}

#[test]
fn invalid_regex_and_object_matchers_skip_the_group_with_a_warning() {
    let hooks = json!({ "PostToolUse": [
        { "matcher": "Write(docs/**)", "hooks": [ { "type": "command", "command": "true" } ] },
        { "matcher": { "toolNames": ["Write"] }, "hooks": [] },
        { "matcher": "Edit|Write", "hooks": [ { "type": "command", "command": "true" } ] }
    ]});
    let c = common::user_hooks(hooks);
    assert_eq!(c.hooks(Event::PostToolUse).len(), 1);
    assert_eq!(
        c.hooks(Event::PostToolUse)[0].matcher_text.as_deref(),
        Some("Edit|Write")
    );
    assert_eq!(c.warnings.len(), 2, "{:?}", c.warnings);
    assert!(
        c.warnings[0].message.contains("Write(docs/**)")
            && c.warnings[0].message.contains("Nothing to repeat")
    );
    assert!(
        c.warnings[0].origin.ends_with(".json"),
        "warnings name the file"
    );
    assert!(c.warnings[1].message.contains("must be a string"));
}

#[test]
fn permission_rule_that_compiles_matches_only_its_literal_text() {
    let x = m("Skill(deploy)");
    assert!(x.matches("Skilldeploy"));
    assert!(!x.matches("Skill"));
}

#[tokio::test]
async fn matcher_on_event_without_matcher_support_is_ignored() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("ran");
    let hooks = common::one_group(
        "UserPromptSubmit",
        "Write(docs/**)",
        json!([{ "type": "command", "command": format!("touch {}", out.display()) }]),
    );
    let c = common::user_hooks(hooks);
    assert!(
        c.warnings.is_empty(),
        "no warning: the matcher is ignored, not compiled"
    );
    let input = common::input(Event::UserPromptSubmit, json!({"prompt": "hi"}));
    dispatch(
        Event::UserPromptSubmit,
        &input,
        &c,
        &common::opts(dir.path()),
    )
    .await;
    assert!(out.exists());
}

#[tokio::test]
async fn file_changed_matches_the_basename() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("ran");
    let hooks = common::one_group(
        "FileChanged",
        ".envrc|package_json",
        json!([{ "type": "command", "command": format!("echo x >> {}", out.display()) }]),
    );
    let c = common::user_hooks(hooks);
    let input = common::input(
        Event::FileChanged,
        json!({"file_path": "/proj/sub/.envrc", "event": "change"}),
    );
    dispatch(Event::FileChanged, &input, &c, &common::opts(dir.path())).await;
    assert!(out.exists());
}

#[tokio::test]
async fn non_tool_matcher_fields_are_used() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("ran");
    let hooks = common::one_group(
        "SessionStart",
        "startup|clear",
        json!([{ "type": "command", "command": format!("echo x >> {}", out.display()) }]),
    );
    let c = common::user_hooks(hooks);
    let resume = common::input(Event::SessionStart, json!({"source": "resume"}));
    dispatch(Event::SessionStart, &resume, &c, &common::opts(dir.path())).await;
    assert!(!out.exists());
    let startup = common::input(Event::SessionStart, json!({"source": "startup"}));
    dispatch(Event::SessionStart, &startup, &c, &common::opts(dir.path())).await;
    assert!(out.exists());
}
