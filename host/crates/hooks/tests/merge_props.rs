//! Property tests for merging handler results: handlers of one event run in parallel and
//! finish in any order, so the decisions merged from them must not depend on that order.

use proptest::prelude::*;
use serde_json::{Map, Value, json};
use warden_hooks::{Classified, Event, MergedResult, Outcome, merge};

/// One handler's result, as any handler could produce it: an outcome, maybe JSON with any
/// decision field an event reads, maybe plain stdout.
fn classified() -> impl Strategy<Value = Classified> {
    let outcome = prop_oneof![
        4 => Just(Outcome::Success),
        1 => ("[a-c]{0,2}", any::<bool>()).prop_map(|(reason, fail_closed)| Outcome::Blocking { reason, fail_closed }),
        1 => "[a-c]{1,2}".prop_map(|message| Outcome::NonBlockingError { message }),
        1 => Just(Outcome::Cancelled),
    ];
    let permission = prop_oneof![
        Just(None),
        Just(Some("allow")),
        Just(Some("ask")),
        Just(Some("deny")),
        Just(Some("defer")),
        Just(Some("bogus")),
    ];
    let top_decision = prop_oneof![Just(None), Just(Some("block")), Just(Some("approve"))];
    let request = prop_oneof![Just(None), Just(Some("allow")), Just(Some("deny"))];
    let json = (
        any::<bool>(),
        permission,
        top_decision,
        request,
        "[a-c]{0,2}",
        any::<bool>(),
    )
        .prop_map(|(present, perm, top, req, reason, stop)| {
            if !present {
                return None;
            }
            let mut o = Map::new();
            let mut hso = Map::new();
            if let Some(d) = perm {
                hso.insert("permissionDecision".into(), d.into());
                hso.insert("permissionDecisionReason".into(), reason.clone().into());
            }
            if let Some(r) = req {
                hso.insert(
                    "decision".into(),
                    json!({ "behavior": r, "message": reason }),
                );
            }
            if !hso.is_empty() {
                o.insert("hookSpecificOutput".into(), Value::Object(hso));
            }
            if let Some(d) = top {
                o.insert("decision".into(), d.into());
                o.insert("reason".into(), reason.into());
            }
            if stop {
                o.insert("continue".into(), false.into());
            }
            Some(o)
        });
    (outcome, json).prop_map(|(outcome, json)| Classified {
        outcome,
        json,
        plain: None,
    })
}

fn event() -> impl Strategy<Value = Event> {
    prop_oneof![
        Just(Event::PreToolUse),
        Just(Event::PermissionRequest),
        Just(Event::PostToolUse),
        Just(Event::UserPromptSubmit),
        Just(Event::Stop),
        Just(Event::Notification),
    ]
}

/// What a merge decided, with the reasons as a multiset: the order reasons are listed in
/// follows finish order by design, which reasons are given does not.
fn decisions(m: &MergedResult) -> impl PartialEq + std::fmt::Debug + use<> {
    let v = m.permission_verdict();
    let sorted = |xs: &[String]| {
        let mut xs = xs.to_vec();
        xs.sort();
        xs
    };
    let behaviour = m
        .permission_request
        .as_ref()
        .and_then(|d| d.get("behavior"))
        .and_then(Value::as_str)
        .map(str::to_string);
    let mut reason_lines: Vec<String> = v
        .reason
        .as_deref()
        .map(|r| r.split('\n').map(str::to_string).collect())
        .unwrap_or_default();
    // PermissionRequest takes one decision object whole; when several agree, which one's
    // message wins follows finish order.
    if m.event == Event::PermissionRequest {
        reason_lines.clear();
    }
    reason_lines.sort();
    (
        v.decision,
        m.blocked,
        m.continue_,
        behaviour,
        sorted(&m.block_reasons),
        sorted(&m.feedback),
        sorted(&m.errors),
        reason_lines,
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    /// Any permutation of the same handler results merges to the same decision, block,
    /// continue flag and reasons.
    #[test]
    fn merging_does_not_depend_on_finish_order(
        e in event(),
        results in proptest::collection::vec(classified(), 0..6),
        seed in any::<u64>(),
    ) {
        let input = json!({"tool_name": "Bash", "tool_input": {"command": "ls"}});
        let forward = merge(e, &input, &results, None);
        let mut reversed = results.clone();
        reversed.reverse();
        // A rotation by a generated amount reaches orders a reversal does not.
        let mut rotated = results.clone();
        if !rotated.is_empty() {
            let k = (seed % rotated.len() as u64) as usize;
            rotated.rotate_left(k);
        }
        let want = decisions(&forward);
        prop_assert_eq!(&want, &decisions(&merge(e, &input, &reversed, None)), "reversed {:?}", results);
        prop_assert_eq!(&want, &decisions(&merge(e, &input, &rotated, None)), "rotated {:?}", results);
    }
}
