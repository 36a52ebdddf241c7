//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;

use serde_json::{Map, Value, json};
use warden_config::{Scope, Settings, SettingsFile};
use warden_hooks::*;

/// A settings set with one file per `(scope, hooks)` pair.
pub fn settings(files: &[(Scope, Value)]) -> Settings {
    let mut s = Settings::default();
    for (i, (scope, value)) in files.iter().enumerate() {
        let value = match value {
            Value::Object(m) => m.clone(),
            _ => Map::new(),
        };
        s.files.push(SettingsFile {
            scope: *scope,
            origin: Default::default(),
            path: Some(PathBuf::from(format!(
                "/settings/{}-{i}.json",
                scope.as_str()
            ))),
            value,
        });
    }
    s
}

/// A config with `hooks` in one user settings file.
pub fn user_hooks(hooks: Value) -> HookConfig {
    HookConfigBuilder::from_settings(&settings(&[(Scope::User, json!({ "hooks": hooks }))])).build()
}

/// Hooks for one event/matcher with the given handlers.
pub fn one_group(event: &str, matcher: &str, handlers: Value) -> Value {
    json!({ event: [ { "matcher": matcher, "hooks": handlers } ] })
}

/// A PreToolUse input for `tool`.
pub fn pre_tool(tool: &str, input: Value) -> Value {
    json!({
        "session_id": "s-1",
        "transcript_path": "/tmp/t.jsonl",
        "cwd": "/tmp",
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": input,
        "tool_use_id": "toolu_1"
    })
}

/// An input for a non-tool event with extra fields.
pub fn input(event: Event, extra: Value) -> Value {
    let mut m = json!({
        "session_id": "s-1",
        "transcript_path": "/tmp/t.jsonl",
        "cwd": "/tmp",
        "hook_event_name": event.as_str(),
    });
    if let (Some(m), Value::Object(e)) = (m.as_object_mut(), extra) {
        m.extend(e);
    }
    m
}

/// Dispatch options rooted at `dir`, with a clean, deterministic environment.
pub fn opts(dir: &Path) -> DispatchOptions {
    let mut o = DispatchOptions::new(dir);
    let mut env = std::collections::BTreeMap::new();
    for k in ["PATH", "HOME", "PYENV_ROOT", "PYENV_VERSION", "LANG"] {
        if let Ok(v) = std::env::var(k) {
            env.insert(k.to_string(), v);
        }
    }
    o.env = Some(env);
    o.stop_block_cap = DEFAULT_STOP_BLOCK_CAP;
    o
}

/// A WASM runner backed by a Rust function of the input JSON.
pub struct FnRunner<F>(pub F);

impl<F> WasmHookRunner for FnRunner<F>
where
    F: Fn(&WasmHookCall) -> RawOutcome + Send + Sync,
{
    fn run<'a>(
        &'a self,
        call: WasmHookCall<'a>,
    ) -> Pin<Box<dyn Future<Output = RawOutcome> + Send + 'a>> {
        let out = (self.0)(&call);
        Box::pin(async move { out })
    }
}

/// The guard policy every language implements in the tests: deny `rm -rf`, allow the rest.
pub fn guard_decision(input: &Value) -> Value {
    let cmd = input
        .pointer("/tool_input/command")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let decision = if cmd.contains("rm -rf") {
        "deny"
    } else {
        "allow"
    };
    json!({
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": decision,
            "permissionDecisionReason": format!("guard: {decision}")
        }
    })
}

/// A runner implementing [`guard_decision`].
pub fn guard_runner() -> Arc<dyn WasmHookRunner> {
    Arc::new(FnRunner(|call: &WasmHookCall| {
        let input: Value = serde_json::from_str(call.input).unwrap_or(Value::Null);
        RawOutcome::exited(0, guard_decision(&input).to_string(), "")
    }))
}

/// A plugin whose `warden` section declares component `guard` for `event`/`matcher`.
pub fn wasm_plugin_config(root: &Path, event: &str, matcher: &str, extra: Value) -> HookConfig {
    let mut handler = json!({"type": "wasm", "component": "guard"});
    if let (Some(h), Value::Object(e)) = (handler.as_object_mut(), extra) {
        h.extend(e);
    }
    let manifest = json!({
        "name": "p",
        "warden": {
            "components": { "guard": { "path": "wasm/guard.wasm", "world": "hook" } },
            "hooks": { event: [ { "matcher": matcher, "hooks": [handler] } ] }
        }
    });
    let mut b = HookConfigBuilder::new();
    b.add_plugin(
        PluginContext::new("p@m", root, root.join("data")),
        Some(&manifest),
    );
    let c = b.build();
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    c
}
