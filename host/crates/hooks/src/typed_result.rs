//! A WASM hook's typed result as Claude Code hook JSON, and back.
//!
//! WASM hooks return a typed `hook-result`; command hooks print JSON. Both meet here: a
//! typed result becomes exactly the JSON (and exit code) a command hook would have produced
//! for the same event, so everything downstream (merging, the `warden hook` bridge, Claude
//! Code itself) treats them alike.

use serde_json::{Map, Value, json};
use warden_vocab::{HookDecision as Decision, HookResult};

/// Events whose hooks block with a top-level `"decision": "block"`.
const TOP_LEVEL_BLOCK: &[&str] = &[
    "UserPromptSubmit",
    "UserPromptExpansion",
    "PostToolUse",
    "PostToolUseFailure",
    "PostToolBatch",
    "Stop",
    "SubagentStop",
    "ConfigChange",
    "PreCompact",
    "TaskCreated",
];

/// Events that accept `hookSpecificOutput.additionalContext`.
const TAKES_CONTEXT: &[&str] = &[
    "SessionStart",
    "Setup",
    "SubagentStart",
    "UserPromptSubmit",
    "UserPromptExpansion",
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "PostToolBatch",
    "Stop",
    "SubagentStop",
];

/// Claude Code's rendering of a hook result: stdout JSON, exit code, stderr.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CcOutput {
    /// The JSON object to print on stdout (`{}` when there is nothing to say).
    pub json: Value,
    /// 0, or 2 for a block.
    pub exit_code: i32,
    /// The block reason, written to stderr with exit code 2.
    pub stderr: Option<String>,
}

/// Claude Code's hook JSON for a typed [`HookResult`] (a trait, because the result type is the
/// runtime's and the format is this crate's).
pub trait TypedHookResult: Sized {
    /// The JSON and exit code a command hook would produce for `event`.
    fn to_cc_output(&self, event: &str) -> CcOutput;
    /// Reads Claude Code hook JSON output back into a typed result.
    fn from_cc_json(event: &str, json: &Value, exit_code: i32) -> Self;
}

impl TypedHookResult for HookResult {
    /// The JSON and exit code a command hook would produce for `event`.
    ///
    /// PreToolUse decisions go in `hookSpecificOutput.permissionDecision` (a `block` there is
    /// the legacy spelling of `deny`); PermissionRequest uses `hookSpecificOutput.decision`;
    /// events with a top-level `decision` get `"block"` for block or deny. A block on any event
    /// also exits 2 with the reason on stderr, which is how Claude Code blocks events that have
    /// no JSON decision field.
    fn to_cc_output(&self, event: &str) -> CcOutput {
        let mut out = Map::new();
        let mut specific = Map::new();
        let updated_input: Option<Value> = self
            .updated_input
            .as_deref()
            .and_then(|s| serde_json::from_str(s).ok());
        let mut exit_code = 0;
        let mut stderr = None;
        match event {
            "PreToolUse" => {
                let d = match self.decision {
                    Decision::Allow => Some("allow"),
                    Decision::Deny | Decision::Block => Some("deny"),
                    Decision::Ask => Some("ask"),
                    Decision::Defer => Some("defer"),
                    Decision::None => None,
                };
                if let Some(d) = d {
                    specific.insert("permissionDecision".into(), json!(d));
                    if let Some(r) = &self.reason {
                        specific.insert("permissionDecisionReason".into(), json!(r));
                    }
                }
                if let Some(u) = &updated_input {
                    specific.insert("updatedInput".into(), u.clone());
                }
            }
            "PermissionRequest" => match self.decision {
                Decision::Allow => {
                    let mut d = Map::new();
                    d.insert("behavior".into(), json!("allow"));
                    if let Some(u) = &updated_input {
                        d.insert("updatedInput".into(), u.clone());
                    }
                    specific.insert("decision".into(), Value::Object(d));
                }
                Decision::Deny | Decision::Block => {
                    let mut d = Map::new();
                    d.insert("behavior".into(), json!("deny"));
                    if let Some(r) = &self.reason {
                        d.insert("message".into(), json!(r));
                    }
                    specific.insert("decision".into(), Value::Object(d));
                }
                _ => {}
            },
            e if TOP_LEVEL_BLOCK.contains(&e) => {
                if matches!(self.decision, Decision::Block | Decision::Deny) {
                    out.insert("decision".into(), json!("block"));
                    if let Some(r) = &self.reason {
                        out.insert("reason".into(), json!(r));
                    }
                }
            }
            _ => {
                if self.decision == Decision::Block {
                    exit_code = 2;
                    stderr = Some(
                        self.reason
                            .clone()
                            .unwrap_or_else(|| "blocked by hook".into()),
                    );
                }
            }
        }
        if self.decision == Decision::Block && TOP_LEVEL_BLOCK.contains(&event) {
            exit_code = 2;
            stderr = Some(
                self.reason
                    .clone()
                    .unwrap_or_else(|| "blocked by hook".into()),
            );
        }
        if let Some(c) = self
            .additional_context
            .as_ref()
            .filter(|_| TAKES_CONTEXT.contains(&event))
        {
            specific.insert("additionalContext".into(), json!(c));
        }
        if !specific.is_empty() {
            let mut hso = Map::new();
            hso.insert("hookEventName".into(), json!(event));
            hso.extend(specific);
            out.insert("hookSpecificOutput".into(), Value::Object(hso));
        }
        if !self.continue_ {
            out.insert("continue".into(), json!(false));
            if let Some(r) = &self.stop_reason {
                out.insert("stopReason".into(), json!(r));
            }
        }
        if let Some(m) = &self.system_message {
            out.insert("systemMessage".into(), json!(m));
        }
        if self.suppress_output {
            out.insert("suppressOutput".into(), json!(true));
        }
        CcOutput {
            json: Value::Object(out),
            exit_code,
            stderr,
        }
    }

    /// Reads Claude Code hook JSON output back into a typed result (the inverse of
    /// [`to_cc_output`](Self::to_cc_output) for the fields it writes; deprecated spellings
    /// `approve`/`block` on PreToolUse are understood).
    fn from_cc_json(event: &str, json: &Value, exit_code: i32) -> HookResult {
        let s = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_string);
        let hso = json.get("hookSpecificOutput");
        let mut r = HookResult {
            system_message: s(json.get("systemMessage")),
            continue_: json
                .get("continue")
                .and_then(Value::as_bool)
                .unwrap_or(true),
            stop_reason: s(json.get("stopReason")),
            suppress_output: json
                .get("suppressOutput")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            additional_context: s(hso.and_then(|h| h.get("additionalContext"))),
            ..HookResult::default()
        };
        match event {
            "PreToolUse" => {
                let d = s(hso.and_then(|h| h.get("permissionDecision")))
                    .or_else(|| s(json.get("decision")));
                r.decision = match d.as_deref() {
                    Some("allow" | "approve") => Decision::Allow,
                    Some("deny" | "block") => Decision::Deny,
                    Some("ask") => Decision::Ask,
                    Some("defer") => Decision::Defer,
                    _ => Decision::None,
                };
                r.reason = s(hso.and_then(|h| h.get("permissionDecisionReason")))
                    .or_else(|| s(json.get("reason")));
                r.updated_input = hso
                    .and_then(|h| h.get("updatedInput"))
                    .map(Value::to_string);
            }
            "PermissionRequest" => {
                let d = hso.and_then(|h| h.get("decision"));
                r.decision = match s(d.and_then(|d| d.get("behavior"))).as_deref() {
                    Some("allow") => Decision::Allow,
                    Some("deny") => Decision::Deny,
                    _ => Decision::None,
                };
                r.reason = s(d.and_then(|d| d.get("message")));
                r.updated_input = d.and_then(|d| d.get("updatedInput")).map(Value::to_string);
            }
            _ => {
                if json.get("decision").and_then(Value::as_str) == Some("block") {
                    r.decision = Decision::Block;
                    r.reason = s(json.get("reason"));
                }
            }
        }
        if exit_code == 2 && r.decision == Decision::None {
            r.decision = Decision::Block;
        }
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deny(reason: &str) -> HookResult {
        HookResult {
            decision: Decision::Deny,
            reason: Some(reason.into()),
            ..HookResult::default()
        }
    }

    #[test]
    fn pre_tool_use_deny() {
        let out = deny("no").to_cc_output("PreToolUse");
        assert_eq!(
            out.json,
            json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "no"}})
        );
        assert_eq!(out.exit_code, 0);
    }

    #[test]
    fn none_is_empty_object() {
        let out = HookResult::default().to_cc_output("PreToolUse");
        assert_eq!(out.json, json!({}));
        assert_eq!(out.exit_code, 0);
    }

    #[test]
    fn stop_block_is_top_level_and_exit_2() {
        let r = HookResult {
            decision: Decision::Block,
            reason: Some("tests fail".into()),
            ..HookResult::default()
        };
        let out = r.to_cc_output("Stop");
        assert_eq!(
            out.json,
            json!({"decision": "block", "reason": "tests fail"})
        );
        assert_eq!(out.exit_code, 2);
        assert_eq!(out.stderr.as_deref(), Some("tests fail"));
    }

    #[test]
    fn permission_request_and_round_trip() {
        let r = HookResult {
            decision: Decision::Allow,
            updated_input: Some(r#"{"command":"ls"}"#.into()),
            system_message: Some("hi".into()),
            continue_: false,
            stop_reason: Some("done".into()),
            ..HookResult::default()
        };
        for event in ["PermissionRequest", "PreToolUse"] {
            let out = r.to_cc_output(event);
            let back = HookResult::from_cc_json(event, &out.json, out.exit_code);
            assert_eq!(back, r, "{event}: {}", out.json);
        }
        let d = deny("nope");
        let out = d.to_cc_output("PermissionRequest");
        assert_eq!(
            out.json["hookSpecificOutput"]["decision"],
            json!({"behavior": "deny", "message": "nope"})
        );
        assert_eq!(
            HookResult::from_cc_json("PermissionRequest", &out.json, 0),
            d
        );
    }

    #[test]
    fn legacy_spellings() {
        let v = json!({"decision": "approve", "reason": "ok"});
        assert_eq!(
            HookResult::from_cc_json("PreToolUse", &v, 0).decision,
            Decision::Allow
        );
        let v = json!({"decision": "block", "reason": "no"});
        assert_eq!(
            HookResult::from_cc_json("PreToolUse", &v, 0).decision,
            Decision::Deny
        );
    }

    #[test]
    fn context_only_where_accepted() {
        let r = HookResult {
            additional_context: Some("ctx".into()),
            ..HookResult::default()
        };
        assert_eq!(
            r.to_cc_output("SessionStart").json["hookSpecificOutput"]["additionalContext"],
            "ctx"
        );
        assert_eq!(r.to_cc_output("Notification").json, json!({}));
    }
}
