//! Configuration sources, real-world shapes and policy gates.

mod common;

use std::sync::Arc;

use serde_json::json;
use warden_config::Scope;
use warden_hooks::*;

fn plugin(dir: &std::path::Path) -> PluginContext {
    PluginContext::new("p@m", dir, dir.join("data"))
}

fn cmd(c: &str) -> serde_json::Value {
    json!({"type": "command", "command": c})
}

#[test]
fn hooks_json_wrapped_bare_and_extra_keys() {
    let dir = tempfile::tempdir().unwrap();
    let mut b = HookConfigBuilder::new();
    let p = Arc::new(plugin(dir.path()));
    b.add_plugin_hooks(
        p.clone(),
        &json!({"description": "d", "$schema": "x", "version": "1", "_metadata": {}, "hooks": {"Stop": [{"hooks": [cmd("a")]}]}}),
        "wrapped.json",
    );
    b.add_plugin_hooks(
        p.clone(),
        &json!({"description": "d", "SessionStart": [{"hooks": [cmd("b")]}]}),
        "bare.json",
    );
    b.add_plugin_hooks(
        p,
        &json!({"hooks": [{"event": "Stop", "command": "x"}]}),
        "array.json",
    );
    let c = b.build();
    assert_eq!(c.hooks(Event::Stop).len(), 1);
    assert_eq!(c.hooks(Event::SessionStart).len(), 1);
    assert_eq!(c.warnings.len(), 1, "{:?}", c.warnings);
    assert_eq!(c.warnings[0].origin, "array.json");
}

#[test]
fn unknown_events_and_keys_are_warnings_naming_the_file() {
    let c = common::user_hooks(json!({
        "postToolUse": [{"hooks": [cmd("a")]}],
        "beforeShellExecution": [{"hooks": [cmd("a")]}],
        "Stop": [{"id": 3, "description": "ok", "hooks": [{"type": "command", "command": "a", "continueOnError": true}]}]
    }));
    assert_eq!(c.hooks(Event::Stop).len(), 1);
    let msgs: Vec<String> = c.warnings.iter().map(ToString::to_string).collect();
    assert_eq!(msgs.len(), 4, "{msgs:?}");
    assert!(
        msgs.iter()
            .all(|m| m.starts_with("/settings/user-0.json: ")),
        "{msgs:?}"
    );
    assert!(msgs[0].contains("did you mean `PostToolUse`"));
    assert!(msgs[1].contains("unknown hook event `beforeShellExecution`"));
    assert!(msgs.iter().any(|m| m.contains("`id`")));
    assert!(msgs.iter().any(|m| m.contains("`continueOnError`")));
}

#[test]
fn millisecond_timeouts_are_kept_as_seconds_with_a_warning() {
    let c = common::user_hooks(json!({"PostToolUse": [{"matcher": "Edit|Write", "hooks": [
        {"type": "command", "command": "bash ${CLAUDE_PLUGIN_ROOT}/h.sh", "timeout": 5000}
    ]}]}));
    let h = &c.hooks(Event::PostToolUse)[0].handler;
    assert_eq!(h.timeout, Some(std::time::Duration::from_secs(5000)));
    assert_eq!(c.warnings.len(), 1);
    assert!(c.warnings[0].message.contains("looks like milliseconds"));
    let bad = common::user_hooks(
        json!({"Stop": [{"hooks": [{"type": "command", "command": "a", "timeout": -1}]}]}),
    );
    assert_eq!(bad.hooks(Event::Stop)[0].handler.timeout, None);
    assert_eq!(bad.warnings.len(), 1);
}

#[test]
fn default_timeouts_per_type_and_event() {
    use std::time::Duration;
    assert_eq!(
        HandlerType::Command.default_timeout(Event::PreToolUse),
        Duration::from_secs(600)
    );
    assert_eq!(
        HandlerType::Http.default_timeout(Event::UserPromptSubmit),
        Duration::from_secs(30)
    );
    assert_eq!(
        HandlerType::Command.default_timeout(Event::MessageDisplay),
        Duration::from_secs(10)
    );
    assert_eq!(
        HandlerType::Prompt.default_timeout(Event::Stop),
        Duration::from_secs(30)
    );
    assert_eq!(
        HandlerType::Agent.default_timeout(Event::Stop),
        Duration::from_secs(60)
    );
}

#[test]
fn wasm_type_is_only_accepted_from_the_warden_section() {
    let dir = tempfile::tempdir().unwrap();
    let mut b = HookConfigBuilder::new();
    b.add_plugin_hooks(
        Arc::new(plugin(dir.path())),
        &json!({"hooks": {"PreToolUse": [{"hooks": [{"type": "wasm", "component": "guard"}]}]}}),
        "hooks.json",
    );
    let c = b.build();
    assert!(c.is_empty());
    assert!(
        c.warnings[0]
            .message
            .contains("unknown handler type \"wasm\"")
    );
    let c =
        common::wasm_plugin_config(dir.path(), "PreToolUse", "Read|Bash", json!({"timeout": 5}));
    let h = &c.hooks(Event::PreToolUse)[0];
    match &h.handler.kind {
        HandlerKind::Wasm(w) => assert_eq!(w.path, dir.path().join("wasm/guard.wasm")),
        other => panic!("{other:?}"),
    }
    assert_eq!(h.source.label(), "Plugin Hooks (p@m)");
}

#[test]
fn warden_section_rejects_unknown_components_and_escaping_paths() {
    let dir = tempfile::tempdir().unwrap();
    let manifest = json!({"warden": {
        "components": {"bad": {"path": "../x.wasm"}},
        "hooks": {"PreToolUse": [{"hooks": [{"type": "wasm", "component": "missing"}, {"type": "wasm", "component": "bad"}]}]}
    }});
    let mut b = HookConfigBuilder::new();
    b.add_plugin(plugin(dir.path()), Some(&manifest));
    let c = b.build();
    assert!(c.is_empty());
    assert_eq!(c.warnings.len(), 2, "{:?}", c.warnings);
}

#[test]
fn plugin_manifest_hooks_as_path_array_and_inline() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("hooks")).unwrap();
    std::fs::write(
        dir.path().join("hooks/hooks.json"),
        json!({"hooks": {"Stop": [{"hooks": [cmd("default")]}]}}).to_string(),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("extra.json"),
        json!({"SessionStart": [{"hooks": [cmd("extra")]}]}).to_string(),
    )
    .unwrap();
    std::fs::write(dir.path().join("broken.json"), "{ nope").unwrap();
    let manifest = json!({"hooks": [
        "./hooks/hooks.json",
        "./extra.json",
        "./broken.json",
        "../outside.json",
        {"hooks": {"PreCompact": [{"hooks": [cmd("inline")]}]}}
    ]});
    let mut b = HookConfigBuilder::new();
    b.add_plugin(plugin(dir.path()), Some(&manifest));
    let c = b.build();
    assert_eq!(c.hooks(Event::Stop).len(), 1, "default file loaded once");
    assert_eq!(c.hooks(Event::SessionStart).len(), 1);
    assert_eq!(c.hooks(Event::PreCompact).len(), 1);
    assert_eq!(c.warnings.len(), 2, "{:?}", c.warnings);
    assert!(c.warnings.iter().any(|w| w.origin.ends_with("broken.json")));
    let single = json!({"hooks": "./extra.json"});
    let mut b = HookConfigBuilder::new();
    b.add_plugin(plugin(dir.path()), Some(&single));
    assert_eq!(b.build().len(), 2);
}

#[test]
fn handler_types_unsupported_on_an_event_are_skipped() {
    let c = common::user_hooks(json!({"SessionStart": [{"hooks": [
        {"type": "prompt", "prompt": "x"},
        {"type": "http", "url": "http://127.0.0.1/x"},
        {"type": "command", "command": "ok"}
    ]}]}));
    assert_eq!(c.hooks(Event::SessionStart).len(), 1);
    assert_eq!(c.warnings.len(), 2);
}

#[test]
fn a_model_handler_needs_a_prompt() {
    for handler in [
        json!({"type": "prompt"}),
        json!({"type": "agent", "prompt": "  "}),
        json!({"type": "prompt", "prompt": 3}),
    ] {
        let cfg = common::user_hooks(common::one_group("Stop", "", json!([handler])));
        assert!(cfg.hooks(Event::Stop).is_empty(), "{handler}");
        assert_eq!(cfg.warnings.len(), 1, "{handler}");
        assert!(
            cfg.warnings[0]
                .message
                .contains("needs a non-empty string `prompt`"),
            "{:?}",
            cfg.warnings
        );
    }
}

#[test]
fn shell_form_plugin_hook_with_user_config_does_not_run() {
    let dir = tempfile::tempdir().unwrap();
    let mut b = HookConfigBuilder::new();
    b.add_plugin_hooks(
        Arc::new(plugin(dir.path())),
        &json!({"Stop": [{"hooks": [cmd("echo ${user_config.key}"), {"type": "command", "command": "echo", "args": ["${user_config.key}"]}]}]}),
        "hooks.json",
    );
    let c = b.build();
    assert_eq!(c.hooks(Event::Stop).len(), 1);
    assert!(c.warnings[0].message.contains("CLAUDE_PLUGIN_OPTION_"));
}

#[test]
fn agent_frontmatter_stop_becomes_subagent_stop_and_skill_once_is_honoured() {
    let mut b = HookConfigBuilder::new();
    b.add_agent_hooks(
        "reviewer",
        None,
        None,
        &json!({"Stop": [{"hooks": [cmd("a")]}]}),
    );
    b.add_skill_hooks(
        "deploy",
        None,
        None,
        &json!({"PreToolUse": [{"hooks": [{"type": "command", "command": "b", "once": true}]}]}),
    );
    b.add_session_hooks(
        "sdk",
        &json!({"Stop": [{"hooks": [{"type": "command", "command": "c", "once": true}]}]}),
    );
    let c = b.build();
    assert_eq!(c.hooks(Event::SubagentStop).len(), 1);
    assert!(c.hooks(Event::PreToolUse)[0].handler.once);
    assert!(
        !c.hooks(Event::Stop)[0].handler.once,
        "`once` outside skills is ignored"
    );
    assert_eq!(c.warnings.len(), 1);
}

#[tokio::test]
async fn skill_once_hook_runs_once() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let mut b = HookConfigBuilder::new();
    let h =
        json!({"type": "command", "command": format!("echo x >> {}", log.display()), "once": true});
    b.add_skill_hooks("s", None, None, &json!({"PreToolUse": [{"hooks": [h]}]}));
    let c = b.build();
    let o = common::opts(dir.path());
    for _ in 0..3 {
        dispatch(
            Event::PreToolUse,
            &common::pre_tool("Bash", json!({})),
            &c,
            &o,
        )
        .await;
    }
    assert_eq!(std::fs::read_to_string(log).unwrap().lines().count(), 1);
}

fn gated(files: &[(Scope, serde_json::Value)], add_plugin: bool) -> HookConfig {
    let dir = std::env::temp_dir();
    let mut b = HookConfigBuilder::from_settings(&common::settings(files));
    if add_plugin {
        b.add_plugin_hooks(
            Arc::new(PluginContext::new("p@m", &dir, &dir)),
            &json!({"Stop": [{"hooks": [cmd("plugin")]}]}),
            "hooks.json",
        );
    }
    b.build()
}

fn labels(c: &HookConfig) -> Vec<String> {
    c.hooks(Event::Stop)
        .iter()
        .map(|h| h.handler.label())
        .collect()
}

fn hooks_of(c: &str) -> serde_json::Value {
    json!({"Stop": [{"hooks": [cmd(c)]}]})
}

#[test]
fn disable_all_hooks_from_user_file_spares_managed_hooks() {
    let c = gated(
        &[
            (Scope::Managed, json!({"hooks": hooks_of("managed")})),
            (
                Scope::User,
                json!({"disableAllHooks": true, "hooks": hooks_of("user")}),
            ),
        ],
        true,
    );
    assert_eq!(labels(&c), vec!["managed"]);
    assert!(
        c.warnings
            .iter()
            .any(|w| w.message.contains("disableAllHooks"))
    );
}

#[test]
fn project_false_beats_user_true() {
    let c = gated(
        &[
            (Scope::Project, json!({"disableAllHooks": false})),
            (
                Scope::User,
                json!({"disableAllHooks": true, "hooks": hooks_of("user")}),
            ),
        ],
        true,
    );
    assert_eq!(labels(&c), vec!["user", "plugin"]);
}

#[test]
fn managed_disable_all_hooks_disables_everything() {
    let c = gated(
        &[(
            Scope::Managed,
            json!({"disableAllHooks": true, "hooks": hooks_of("managed")}),
        )],
        true,
    );
    assert!(c.is_empty());
}

#[test]
fn allow_managed_hooks_only_keeps_managed_and_force_enabled_plugins() {
    let files = [
        (
            Scope::Managed,
            json!({"allowManagedHooksOnly": true, "hooks": hooks_of("managed")}),
        ),
        (Scope::Project, json!({"hooks": hooks_of("project")})),
    ];
    assert_eq!(labels(&gated(&files, true)), vec!["managed"]);
    let files = [
        (
            Scope::Managed,
            json!({"allowManagedHooksOnly": true, "enabledPlugins": {"p@m": true}, "hooks": hooks_of("managed")}),
        ),
        (Scope::Project, json!({"hooks": hooks_of("project")})),
    ];
    assert_eq!(labels(&gated(&files, true)), vec!["managed", "plugin"]);
    // The key is managed-only: elsewhere it has no effect.
    let files = [(
        Scope::User,
        json!({"allowManagedHooksOnly": true, "hooks": hooks_of("user")}),
    )];
    assert_eq!(labels(&gated(&files, false)), vec!["user"]);
}

#[test]
fn strict_plugin_only_customization_stops_settings_hooks() {
    let files = [
        (
            Scope::Managed,
            json!({"strictPluginOnlyCustomization": ["hooks"], "hooks": hooks_of("managed")}),
        ),
        (Scope::User, json!({"hooks": hooks_of("user")})),
    ];
    assert_eq!(labels(&gated(&files, true)), vec!["managed", "plugin"]);
}

#[test]
fn allowed_http_hook_urls_gate() {
    let http = |u: &str| json!({"type": "http", "url": u});
    let hooks = json!({"Stop": [{"hooks": [http("https://Hooks.Example.com./a"), http("https://evil.test/x")]}]});
    let c = gated(
        &[(
            Scope::User,
            json!({"allowedHttpHookUrls": ["https://hooks.example.com/*"], "hooks": hooks}),
        )],
        false,
    );
    assert_eq!(labels(&c), vec!["https://Hooks.Example.com./a"]);
    let c = gated(
        &[(
            Scope::User,
            json!({"allowedHttpHookUrls": [], "hooks": {"Stop": [{"hooks": [http("https://a/")]}]}}),
        )],
        false,
    );
    assert!(c.is_empty(), "[] blocks all HTTP hooks");
    let c = gated(
        &[(
            Scope::User,
            json!({"hooks": {"Stop": [{"hooks": [http("https://a/")]}]}}),
        )],
        false,
    );
    assert_eq!(c.len(), 1, "unset allows any URL");
    assert!(url_allowed(
        "http://localhost:*/*",
        "http://LOCALHOST:8080/hook"
    ));
    assert!(!url_allowed("https://a.com/*", "https://a.com.evil/x"));
}

#[test]
fn http_env_var_allowlist_is_merged_across_files() {
    let c = gated(
        &[
            (Scope::Project, json!({"httpHookAllowedEnvVars": ["A"]})),
            (Scope::User, json!({"httpHookAllowedEnvVars": ["B", "A"]})),
        ],
        false,
    );
    assert_eq!(
        c.http_allowed_env_vars,
        Some(vec!["A".to_string(), "B".to_string()])
    );
}

#[test]
fn source_labels() {
    let c = gated(&[(Scope::Project, json!({"hooks": hooks_of("x")}))], true);
    let l: Vec<String> = c
        .hooks(Event::Stop)
        .iter()
        .map(|h| h.source.label())
        .collect();
    assert_eq!(l, vec!["Project Settings", "Plugin Hooks (p@m)"]);
}
