//! The decision vocabulary: spellings, order, conversions, and how `decide` takes a hook's
//! verdict (a deferring hook leaves the call to the rules).

use serde_json::{Value, json};
use warden_config::{Scope, Settings, SettingsFile};
use warden_permissions::{Decision, HookVerdict, Mode, Options, Permissions, UnknownDecision};

const ALL: [Decision; 3] = [Decision::Allow, Decision::Ask, Decision::Deny];

#[test]
fn decisions_are_spelled_as_claude_code_spells_them() {
    for (d, word) in ALL.into_iter().zip(["allow", "ask", "deny"]) {
        assert_eq!(d.as_str(), word);
        assert_eq!(d.to_string(), word);
        assert_eq!(Decision::parse(word), Some(d));
        assert_eq!(word.parse::<Decision>(), Ok(d));
        assert_eq!(serde_json::to_value(d).ok(), Some(json!(word)));
        assert_eq!(
            serde_json::from_value::<Decision>(json!(word)).ok(),
            Some(d)
        );
    }
}

#[test]
fn unknown_words_are_not_decisions() {
    for word in ["defer", "Allow", "approve", "block", ""] {
        assert_eq!(Decision::parse(word), None, "{word}");
        assert_eq!(
            word.parse::<Decision>(),
            Err(UnknownDecision(word.to_string()))
        );
        assert!(serde_json::from_value::<Decision>(json!(word)).is_err());
    }
    let err = "maybe".parse::<Decision>().err().map(|e| e.to_string());
    assert_eq!(
        err.as_deref(),
        Some("unknown permission decision `maybe`; use allow, ask or deny (a hook may also defer)")
    );
}

#[test]
fn deny_beats_ask_beats_allow() {
    assert!(Decision::Deny > Decision::Ask && Decision::Ask > Decision::Allow);
    assert_eq!(ALL.into_iter().max(), Some(Decision::Deny));
    assert_eq!(
        [Decision::Allow, Decision::Ask].into_iter().max(),
        Some(Decision::Ask)
    );
}

#[test]
fn hook_verdicts_merge_deny_defer_ask_allow() {
    let order = [
        HookVerdict::Decided(Decision::Allow),
        HookVerdict::Decided(Decision::Ask),
        HookVerdict::Defer,
        HookVerdict::Decided(Decision::Deny),
    ];
    for (i, lo) in order.iter().enumerate() {
        for hi in &order[i + 1..] {
            assert!(hi > lo, "{hi} > {lo}");
            assert_eq!((*lo).max(*hi), *hi);
        }
    }
}

#[test]
fn hook_verdicts_are_spelled_as_claude_code_spells_them() {
    for word in ["allow", "ask", "defer", "deny"] {
        let v = HookVerdict::parse(word);
        assert_eq!(v.map(HookVerdict::as_str), Some(word));
        assert_eq!(v.map(|v| v.to_string()).as_deref(), Some(word));
        assert_eq!(word.parse::<HookVerdict>().ok(), v);
        assert_eq!(serde_json::to_value(v).ok(), Some(json!(word)));
        assert_eq!(serde_json::from_value::<HookVerdict>(json!(word)).ok(), v);
    }
    assert_eq!(HookVerdict::parse("defer"), Some(HookVerdict::Defer));
    // The deprecated `approve`/`block` belong to hook output parsing, not to the vocabulary.
    assert_eq!(HookVerdict::parse("approve"), None);
    assert!(serde_json::from_value::<HookVerdict>(json!("block")).is_err());
}

#[test]
fn conversions_keep_the_decision_and_drop_defer() {
    for d in ALL {
        let v = HookVerdict::from(d);
        assert_eq!(v, HookVerdict::Decided(d));
        assert_eq!(v.decision(), Some(d));
        assert_eq!(Option::<Decision>::from(v), Some(d));
    }
    assert_eq!(HookVerdict::Defer.decision(), None);
    assert_eq!(Option::<Decision>::from(HookVerdict::Defer), None);
}

fn engine(value: Value, mode: Mode) -> Permissions {
    let f = SettingsFile {
        scope: Scope::User,
        origin: Default::default(),
        path: Some("/home/u/.warden/settings.json".into()),
        value: value.as_object().cloned().unwrap_or_default(),
    };
    let o = Options {
        cwd: "/work/proj".into(),
        home: "/home/u".into(),
        mode: Some(mode),
        trusted: true,
        ..Options::default()
    };
    let settings = Settings {
        files: vec![f],
        errors: vec![],
        ..Default::default()
    };
    match Permissions::from_settings(&settings, &o) {
        Ok(p) => p,
        Err(e) => panic!("engine: {e}"),
    }
}

#[test]
fn a_deferring_hook_leaves_the_call_to_the_rules() {
    let p = engine(
        json!({"permissions": {"allow": ["Bash(make *)"], "ask": ["Bash(git push *)"]}}),
        Mode::Default,
    );
    for cmd in ["make all", "git push origin", "curl x"] {
        let input = json!({ "command": cmd });
        let without = p.decide("Bash", &input, None);
        let deferred = p.decide("Bash", &input, Some(HookVerdict::Defer));
        assert_eq!(deferred, without, "{cmd}");
    }
    // Where an allowing hook would have approved, a deferring one does not.
    let input = json!({"command": "curl x"});
    assert_eq!(
        p.decide("Bash", &input, Some(Decision::Allow.into()))
            .decision,
        Decision::Allow
    );
    assert_eq!(
        p.decide("Bash", &input, Some(HookVerdict::Defer)).decision,
        Decision::Ask
    );
}

#[test]
fn a_deferring_hook_does_not_block_like_a_denying_one() {
    let p = engine(json!({}), Mode::BypassPermissions);
    let input = json!({"command": "ls"});
    assert_eq!(
        p.decide("Bash", &input, Some(HookVerdict::Defer)).decision,
        Decision::Allow
    );
    assert_eq!(
        p.decide("Bash", &input, Some(Decision::Deny.into()))
            .decision,
        Decision::Deny
    );
}
