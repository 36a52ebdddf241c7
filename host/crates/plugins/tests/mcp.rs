//! `plugin validate` checks every MCP server entry of a plugin.

mod common;

use common::write_tree;
use warden_plugins::{Diagnostic, Severity, load_plugin, validate};

fn mcp_diags(diags: &[Diagnostic]) -> Vec<&Diagnostic> {
    diags
        .iter()
        .filter(|d| d.message.starts_with("MCP server"))
        .collect()
}

#[test]
fn misspelled_type_and_numeric_url_fail_validation() {
    let t = tempfile::tempdir().expect("tmp");
    write_tree(
        t.path(),
        &[
            (".claude-plugin/plugin.json", r#"{"name":"p"}"#),
            (
                ".mcp.json",
                "{\n  \"mcpServers\": {\n    \"x\": {\"type\": \"htp\", \"url\": 5}\n  }\n}\n",
            ),
        ],
    );
    let r = validate(t.path());
    assert!(r.has_errors, "{r}");
    let mcp = mcp_diags(&r.diagnostics);
    assert_eq!(mcp.len(), 2, "{r}");
    let file = t.path().canonicalize().expect("canon").join(".mcp.json");
    let ty = mcp
        .iter()
        .find(|d| d.message.contains("type:"))
        .expect("type error");
    assert_eq!(ty.severity, Severity::Error);
    assert_eq!(ty.file, file);
    assert_eq!(
        ty.message,
        "MCP server `x`: type: unknown transport `htp` (did you mean `http`?)"
    );
    assert_eq!((ty.line, ty.column), (Some(3), Some(11)));
    let url = mcp
        .iter()
        .find(|d| d.message.contains("url:"))
        .expect("url error");
    assert_eq!(url.severity, Severity::Error);
    assert_eq!(
        url.message,
        "MCP server `x`: url: must be a string, found number"
    );
    assert_eq!((url.line, url.column), (Some(3), Some(26)));
    assert!(
        r.to_string().contains(&format!(
            "error: {}:3:11: MCP server `x`: type: unknown transport `htp`",
            file.display()
        )),
        "{r}"
    );
}

#[test]
fn valid_http_and_stdio_servers_have_no_mcp_diagnostics() {
    let t = tempfile::tempdir().expect("tmp");
    write_tree(
        t.path(),
        &[
            (
                ".claude-plugin/plugin.json",
                r#"{"name":"p","version":"1.0.0"}"#,
            ),
            (
                ".mcp.json",
                r#"{"mcpServers":{
                    "remote":{"type":"http","url":"https://mcp.example.com/mcp","headers":{"Authorization":"Bearer ${EXAMPLE_TOKEN}"}},
                    "local":{"command":"${CLAUDE_PLUGIN_ROOT}/bin/server","args":["--data","${CLAUDE_PLUGIN_DATA}"],"env":{"LOG":"info"}}
                }}"#,
            ),
        ],
    );
    let r = validate(t.path());
    assert!(!r.has_errors, "{r}");
    assert!(mcp_diags(&r.diagnostics).is_empty(), "{r}");
    assert_eq!(
        load_plugin(t.path())
            .expect("loads")
            .mcp_servers
            .keys()
            .collect::<Vec<_>>(),
        ["remote", "local"]
    );
}

#[test]
fn inline_manifest_servers_are_checked_with_positions() {
    let t = tempfile::tempdir().expect("tmp");
    let manifest = "{\n  \"name\": \"p\",\n  \"mcpServers\": {\n    \"name\": {\"command\": \"x\", \"env\": {\"PORT\": 8080}},\n    \"api\": {\"type\": \"http\"}\n  }\n}\n";
    write_tree(t.path(), &[(".claude-plugin/plugin.json", manifest)]);
    let p = load_plugin(t.path()).expect("loads: MCP problems are not fatal");
    let mf = t
        .path()
        .canonicalize()
        .expect("canon")
        .join(".claude-plugin/plugin.json");
    let mcp = mcp_diags(&p.diagnostics);
    assert_eq!(mcp.len(), 2, "{mcp:?}");
    assert!(mcp.iter().all(|d| d.is_error() && d.file == mf), "{mcp:?}");
    let port = mcp
        .iter()
        .find(|d| d.message == "MCP server `name`: env.PORT: must be a string, found number")
        .expect("env error");
    // The server named `name` is found inside `mcpServers`, not at the plugin's `name`.
    assert_eq!((port.line, port.column), (Some(4), Some(38)));
    let api = mcp
        .iter()
        .find(|d| d.message.starts_with("MCP server `api`: url: missing"))
        .expect("url error");
    assert_eq!(
        (api.line, api.column),
        (Some(5), Some(5)),
        "a missing field points at its server"
    );
    assert!(validate(t.path()).has_errors);
}

#[test]
fn plugin_root_placeholder_warns_once_with_its_field() {
    let t = tempfile::tempdir().expect("tmp");
    write_tree(
        t.path(),
        &[(
            ".mcp.json",
            r#"{"mcpServers":{"s":{"command":"node","args":["${PLUGIN_ROOT}/x.js"]}}}"#,
        )],
    );
    let p = load_plugin(t.path()).expect("loads");
    let hits: Vec<_> = p
        .diagnostics
        .iter()
        .filter(|d| d.message.contains("${PLUGIN_ROOT}"))
        .collect();
    assert_eq!(hits.len(), 1, "{:?}", p.diagnostics);
    assert_eq!(hits[0].severity, Severity::Warning);
    assert!(hits[0].message.starts_with("MCP server `s`: args[0]: "));
}

#[test]
fn unsupported_features_and_unknown_fields_only_warn() {
    let t = tempfile::tempdir().expect("tmp");
    write_tree(
        t.path(),
        &[
            (".claude-plugin/plugin.json", r#"{"name":"p"}"#),
            (
                ".mcp.json",
                r#"{"crm":{"type":"http","url":"https://crm.example.com/mcp","oauth":{"clientId":"abc","callbackPort":3118},"_docs":"see README"},
                    "tmpl":{"command":"npx","args":["-y","tmpl"],"description":"template","category":"demo"}}"#,
            ),
        ],
    );
    let r = validate(t.path());
    assert!(!r.has_errors, "{r}");
    let mcp = mcp_diags(&r.diagnostics);
    let messages: Vec<&str> = mcp.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(mcp.len(), 3, "{messages:?}");
    assert!(
        messages
            .iter()
            .any(|m| m.starts_with("MCP server `crm`: oauth: Warden does not run OAuth"))
    );
    assert!(messages.contains(&"MCP server `tmpl`: description: unknown field; it is ignored"));
    assert!(messages.contains(&"MCP server `tmpl`: category: unknown field; it is ignored"));
    assert!(r.fails(true), "--strict fails on the warnings");
}

#[test]
fn empty_url_placeholder_warns_without_failing() {
    let t = tempfile::tempdir().expect("tmp");
    write_tree(
        t.path(),
        &[
            (".claude-plugin/plugin.json", r#"{"name":"p"}"#),
            (
                ".mcp.json",
                r#"{"mcpServers":{"gmail":{"type":"http","url":""},"crm":{"type":"http","url":"https://crm.example.com/mcp"}}}"#,
            ),
        ],
    );
    let r = validate(t.path());
    assert!(!r.has_errors, "{r}");
    let mcp = mcp_diags(&r.diagnostics);
    assert_eq!(mcp.len(), 1, "{r}");
    assert!(
        mcp[0]
            .message
            .starts_with("MCP server `gmail`: url: is empty")
    );
}

#[test]
fn an_mcp_tool_hook_may_say_what_happens_when_its_server_fails() {
    let t = tempfile::tempdir().expect("tmp");
    write_tree(
        t.path(),
        &[
            (".claude-plugin/plugin.json", r#"{"name":"p"}"#),
            (
                "hooks/hooks.json",
                r#"{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[
                    {"type":"mcp_tool","server":"guard","tool":"check","onFailure":"block","colour":"red"}
                ]}]}}"#,
            ),
        ],
    );
    let r = validate(t.path());
    let unknown: Vec<&str> = r
        .diagnostics
        .iter()
        .filter(|d| d.message.contains("unknown key"))
        .map(|d| d.message.as_str())
        .collect();
    // `onFailure` is a key of mcp_tool handlers, as of command, http and wasm ones; a key no
    // handler has is still reported.
    assert_eq!(unknown.len(), 1, "{r}");
    assert!(unknown[0].contains("`colour`"), "{r}");
}
