//! MCP server configuration: files, checks, expansion, scopes and approval.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Map, Value, json};
use warden_config::mcp::{
    Approval, McpConfigError, McpScope, McpServers, PluginServer, Transport, check_entry,
    project_approval, read_servers_file, resolve, tool_name,
};
use warden_config::{Home, Scope, Settings, SettingsFile};

fn write(p: &Path, text: &str) {
    std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
    std::fs::write(p, text).expect("write");
}

fn obj(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        other => panic!("not an object: {other}"),
    }
}

fn settings(files: &[(Scope, Value)]) -> Settings {
    Settings {
        files: files
            .iter()
            .map(|(scope, v)| SettingsFile {
                scope: *scope,
                origin: Default::default(),
                path: Some(PathBuf::from(format!("/{scope}.json"))),
                value: obj(v.clone()),
            })
            .collect(),
        errors: Vec::new(),
        ..Default::default()
    }
}

fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let m: BTreeMap<String, String> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    move |k| m.get(k).cloned()
}

fn fields(problems: &[warden_config::mcp::EntryProblem], error: bool) -> Vec<String> {
    problems
        .iter()
        .filter(|p| p.error == error)
        .map(|p| p.field.clone())
        .collect()
}

// Files

#[test]
fn wrapped_and_flat_files_and_schema_key() {
    let t = tempfile::tempdir().expect("tmp");
    let wrapped = t.path().join("wrapped.json");
    write(
        &wrapped,
        r#"{"$schema":"x","mcpServers":{"db":{"command":"db-mcp"},"gh":{"type":"http","url":"https://gh"}}}"#,
    );
    let s = read_servers_file(&wrapped).expect("read").expect("exists");
    assert_eq!(s.keys().collect::<Vec<_>>(), ["db", "gh"]);

    let flat = t.path().join("flat.json");
    write(
        &flat,
        "\u{feff}{\"$schema\":\"https://example.com/s.json\",\"github\":{\"type\":\"http\",\"url\":\"https://api.example.com/mcp/\"}}",
    );
    let s = read_servers_file(&flat).expect("read").expect("exists");
    assert_eq!(s.keys().collect::<Vec<_>>(), ["github"]);

    // `mcpServers` that is not an object makes the file flat: it is a (broken) server entry.
    let odd = t.path().join("odd.json");
    write(&odd, r#"{"mcpServers":["a"],"x":{"command":"y"}}"#);
    let s = read_servers_file(&odd).expect("read").expect("exists");
    assert_eq!(s.keys().collect::<Vec<_>>(), ["mcpServers", "x"]);

    assert!(
        read_servers_file(&t.path().join("missing.json"))
            .expect("missing is fine")
            .is_none()
    );
}

#[test]
fn malformed_file_names_path_line_and_column() {
    let t = tempfile::tempdir().expect("tmp");
    let p = t.path().join(".mcp.json");
    write(
        &p,
        "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\",}\n  }\n}\n",
    );
    let e = read_servers_file(&p).expect_err("trailing comma");
    assert!(matches!(e, McpConfigError::File(_)));
    let msg = e.to_string();
    assert!(
        msg.starts_with(&format!("{}:3:", p.display())),
        "position missing: {msg}"
    );
    assert!(msg.contains("invalid JSON"), "{msg}");

    write(&p, "[1]");
    let msg = read_servers_file(&p).expect_err("array").to_string();
    assert!(msg.contains("must be a JSON object"), "{msg}");
}

#[test]
fn oversized_and_non_regular_files_are_refused() {
    let t = tempfile::tempdir().expect("tmp");
    let big = t.path().join("big.json");
    let pad = "x".repeat(usize::try_from(warden_config::MAX_SETTINGS_BYTES).expect("fits"));
    write(&big, &format!("{{\"a\":{{\"command\":\"{pad}\"}}}}"));
    assert!(
        read_servers_file(&big)
            .expect_err("too large")
            .to_string()
            .contains("limit")
    );
    let dir = t.path().join("dir.json");
    std::fs::create_dir_all(&dir).expect("mkdir");
    assert!(
        read_servers_file(&dir)
            .expect_err("directory")
            .to_string()
            .contains("not a regular file")
    );
}

// Checks

#[test]
fn misspelled_type_and_numeric_url_are_two_errors() {
    let p = check_entry("x", &json!({"type": "htp", "url": 5}));
    let errors: Vec<_> = p.iter().filter(|p| p.error).collect();
    assert_eq!(errors.len(), 2, "{p:?}");
    assert_eq!(errors[0].field, "type");
    assert_eq!(
        errors[0].message,
        "unknown transport `htp` (did you mean `http`?)"
    );
    assert_eq!(errors[1].field, "url");
    assert_eq!(errors[1].message, "must be a string, found number");
    assert!(p.iter().all(|p| p.error), "no warnings expected: {p:?}");
}

#[test]
fn valid_entries_have_no_problems() {
    for e in [
        json!({"command": "npx", "args": ["-y", "pkg"], "env": {"A": "1"}, "timeout": 60000, "alwaysLoad": true}),
        json!({"type": "stdio", "command": "${CLAUDE_PLUGIN_ROOT}/bin/server"}),
        json!({"type": "http", "url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}}),
        json!({"type": "sse", "url": "http://localhost:8080/sse"}),
        json!({"type": "ws", "url": "wss://example.com/ws"}),
        json!({"type": "http", "url": "${BASE_URL}/mcp"}),
        json!({"type": "http", "url": "http${S}://h/mcp"}),
        json!({"command": "x", "_docs": "comments are fine"}),
    ] {
        assert_eq!(check_entry("s", &e), [], "{e}");
    }
}

#[test]
fn structural_errors() {
    let errors = |e: Value| fields(&check_entry("s", &e), true);
    assert_eq!(errors(json!({"type": "stdio"})), ["command"]);
    assert_eq!(errors(json!({"type": "http"})), ["url"]);
    assert_eq!(
        errors(json!({"url": "https://x"})),
        ["type"],
        "remote needs a type"
    );
    assert_eq!(errors(json!({})), ["command"]);
    assert_eq!(errors(json!("npx server")), [""]);
    assert_eq!(
        errors(json!({"command": "x", "url": "https://x"})),
        ["url"],
        "both command and url"
    );
    assert_eq!(
        errors(json!({"command": "x", "args": ["a", 2, true]})),
        ["args[1]", "args[2]"]
    );
    assert_eq!(errors(json!({"command": "x", "args": "a b"})), ["args"]);
    assert_eq!(
        errors(json!({"command": "x", "env": {"PORT": 8080, "OK": "1"}})),
        ["env.PORT"]
    );
    assert_eq!(
        errors(json!({"type": "http", "url": "https://x", "headers": {"X-N": 1}})),
        ["headers.X-N"]
    );
    assert_eq!(
        errors(json!({"type": "http", "url": "https://x", "headers": []})),
        ["headers"]
    );
    for t in [json!(0), json!(-5), json!("30s")] {
        assert_eq!(
            errors(json!({"command": "x", "timeout": t})),
            ["timeout"],
            "{t}"
        );
    }
    assert_eq!(
        errors(json!({"command": "x", "alwaysLoad": "yes"})),
        ["alwaysLoad"]
    );
    assert_eq!(errors(json!({"type": 1, "command": "x"})), ["type"]);
    assert_eq!(errors(json!({"type": "stdio", "command": ""})), ["command"]);
}

#[test]
fn url_schemes_fit_the_transport() {
    let check = |e: Value| {
        check_entry("s", &e)
            .into_iter()
            .find(|p| p.error)
            .map(|p| p.message)
    };
    let m = check(json!({"type": "http", "url": "ftp://x"})).expect("ftp");
    assert!(m.contains("http:// or https://"), "{m}");
    let m = check(json!({"type": "http", "url": "wss://x"})).expect("ws url on http");
    assert!(m.contains("\"type\": \"ws\""), "{m}");
    let m = check(json!({"type": "ws", "url": "https://x"})).expect("http url on ws");
    assert!(m.contains("ws:// or wss://"), "{m}");
    assert!(check(json!({"type": "http", "url": "https://"})).is_some());
    assert!(check(json!({"type": "http", "url": "HTTPS://Example.com"})).is_none());
    assert!(check(json!({"type": "sse", "url": "localhost:3000"})).is_some());

    // An empty URL is a placeholder in published plugins: the entry loads, but cannot connect.
    let placeholder = json!({"type": "http", "url": ""});
    let p = check_entry("gmail", &placeholder);
    assert_eq!(fields(&p, false), ["url"], "{p:?}");
    assert_eq!(fields(&p, true), Vec::<String>::new());
    let e = resolve("gmail", &placeholder, &|_: &str| None).expect_err("cannot connect");
    assert!(
        matches!(&e, McpConfigError::Invalid { field, .. } if field == "url"),
        "{e:?}"
    );
}

#[test]
fn transport_suggestions() {
    let msg = |t: &str| {
        check_entry("s", &json!({"type": t, "url": "https://x"}))
            .into_iter()
            .find(|p| p.field == "type")
            .map(|p| p.message)
            .expect("type problem")
    };
    assert!(msg("streamable-http").contains("did you mean `http`"));
    assert!(msg("HTTP").contains("did you mean `http`"));
    assert!(msg("websocket").contains("did you mean `ws`"));
    assert!(msg("sdk").contains("SDK process"));
    assert_eq!(
        msg("grpc"),
        "unknown transport `grpc`; use stdio, http, sse or ws"
    );
}

#[test]
fn warnings_never_error() {
    let p = check_entry(
        "s",
        &json!({
            "command": "node",
            "args": ["${PLUGIN_ROOT}/x.js"],
            "description": "template decoy",
            "enabled": true,
            "comand": "typo",
            "headers": {"A": "b"},
            "timeout": 30
        }),
    );
    assert_eq!(fields(&p, true), Vec::<String>::new(), "{p:?}");
    let warned = fields(&p, false);
    for f in [
        "args[0]",
        "description",
        "enabled",
        "comand",
        "headers",
        "timeout",
    ] {
        assert!(warned.contains(&f.to_string()), "{f} not warned: {p:?}");
    }
    let typo = p.iter().find(|p| p.field == "comand").expect("typo");
    assert!(typo.message.contains("did you mean `command`"), "{typo:?}");
    let root = p.iter().find(|p| p.field == "args[0]").expect("root");
    assert!(root.message.contains("${CLAUDE_PLUGIN_ROOT}"), "{root:?}");
    let enabled = p.iter().find(|p| p.field == "enabled").expect("enabled");
    assert!(enabled.message.contains("disabledMcpjsonServers"));
}

#[test]
fn oauth_and_headers_helper_are_reported_as_unsupported() {
    let p = check_entry(
        "s",
        &json!({"type": "http", "url": "https://x", "oauth": {"clientId": "c", "callbackPort": 3118}, "headersHelper": "get-token"}),
    );
    assert_eq!(fields(&p, true), Vec::<String>::new());
    assert_eq!(fields(&p, false), ["headersHelper", "oauth"]);
    assert!(p.iter().any(|p| p.message.contains("does not run OAuth")));
    assert!(
        p.iter()
            .any(|p| p.message.contains("does not run header helpers"))
    );
    assert_eq!(
        fields(
            &check_entry(
                "s",
                &json!({"type": "http", "url": "https://x", "oauth": "yes"})
            ),
            true
        ),
        ["oauth"]
    );
}

#[test]
fn command_with_spaces_and_no_args_warns() {
    let p = check_entry("s", &json!({"command": "npx -y some-server"}));
    assert_eq!(fields(&p, false), ["command"]);
    assert!(
        check_entry("s", &json!({"command": "/opt/My Tools/server"})).is_empty(),
        "a path with spaces is one program"
    );
}

// Expansion

#[test]
fn expansion_with_defaults() {
    let entry = json!({
        "command": "${RUNNER:-npx}",
        "args": ["-y", "${PKG}", "--dir=${CLAUDE_PROJECT_DIR:-.}", "$HOME", "$${KEEP}", "cost: 5$"],
        "env": {"TOKEN": "${TOKEN}", "EMPTY": "${UNSET:-}", "SET_EMPTY": "${BLANK:-fallback}"},
        "timeout": 1500
    });
    let vars = env(&[("PKG", "srv@1"), ("TOKEN", "t0k"), ("BLANK", "")]);
    let s = resolve("db", &entry, &vars).expect("resolves");
    assert_eq!(s.name, "db");
    assert_eq!(s.timeout, Some(Duration::from_millis(1500)));
    assert!(!s.always_load);
    let Transport::Stdio { command, args, env } = s.transport else {
        panic!("stdio expected");
    };
    assert_eq!(command, "npx");
    assert_eq!(
        args,
        ["-y", "srv@1", "--dir=.", "$HOME", "$${KEEP}", "cost: 5$"]
    );
    assert_eq!(env["TOKEN"], "t0k");
    assert_eq!(env["EMPTY"], "");
    assert_eq!(env["SET_EMPTY"], "", "set but empty is used as is");
}

#[test]
fn nested_looking_defaults_end_at_the_first_brace() {
    let entry = json!({"type": "http", "url": "https://h/${A:-${B}}/x", "headers": {"K": "${}"}});
    let s = resolve("s", &entry, &env(&[("A", "a")])).expect("resolves");
    assert_eq!(
        s.transport,
        Transport::Http {
            url: "https://h/a}/x".into(),
            headers: [("K".to_string(), "${}".to_string())].into()
        }
    );
    let s = resolve("s", &entry, &env(&[])).expect("default used");
    let Transport::Http { url, .. } = s.transport else {
        panic!("http expected");
    };
    assert_eq!(url, "https://h/${B}/x");
    let p = check_entry("s", &entry);
    assert_eq!(fields(&p, false), ["url", "headers.K"], "{p:?}");
}

#[test]
fn unset_variable_names_server_field_and_variable() {
    let entry = json!({"type": "http", "url": "https://x", "headers": {"Authorization": "Bearer ${ZOOM_TOKEN}"}});
    let e = resolve("zoom", &entry, &env(&[])).expect_err("unset");
    match &e {
        McpConfigError::MissingVariable {
            server,
            field,
            variable,
        } => {
            assert_eq!(
                (server.as_str(), field.as_str(), variable.as_str()),
                ("zoom", "headers.Authorization", "ZOOM_TOKEN")
            );
        }
        other => panic!("wrong error: {other:?}"),
    }
    let msg = e.to_string();
    assert!(
        msg.contains("`zoom`")
            && msg.contains("headers.Authorization")
            && msg.contains("`ZOOM_TOKEN`")
            && msg.contains("${ZOOM_TOKEN:-}"),
        "{msg}"
    );
    let e = resolve(
        "s",
        &json!({"command": "x", "args": ["a", "${NOPE}"]}),
        &env(&[]),
    )
    .expect_err("unset");
    assert!(e.to_string().contains("args[1]"), "{e}");
}

#[test]
fn only_connection_fields_are_expanded() {
    let entry = json!({"command": "x", "env": {"${NAME}": "v"}, "description": "${NOPE}"});
    let s = resolve("s", &entry, &env(&[])).expect("keys and unknown fields are not expanded");
    let Transport::Stdio { env, .. } = s.transport else {
        panic!("stdio");
    };
    assert_eq!(env["${NAME}"], "v");
}

#[test]
fn type_inference_and_transports() {
    let vars = env(&[("HOST", "example.com")]);
    let kind = |e: Value| resolve("s", &e, &vars).map(|s| s.transport.kind());
    assert_eq!(kind(json!({"command": "x"})).expect("stdio"), "stdio");
    assert_eq!(
        kind(json!({"type": "sse", "url": "https://${HOST}/sse"})).expect("sse"),
        "sse"
    );
    assert_eq!(
        kind(json!({"type": "ws", "url": "ws://${HOST}"})).expect("ws"),
        "ws"
    );
    let e = resolve("s", &json!({"url": "https://x"}), &vars).expect_err("no type");
    assert!(
        matches!(&e, McpConfigError::Invalid { field, .. } if field == "type"),
        "{e:?}"
    );
    let e = resolve("s", &json!({"type": "htp", "url": 5}), &vars).expect_err("invalid");
    assert_eq!(
        e.to_string(),
        "MCP server `s`: type: unknown transport `htp` (did you mean `http`?)"
    );
    let e = resolve(
        "s",
        &json!({"type": "http", "url": "${U}"}),
        &env(&[("U", "file:///etc/passwd")]),
    )
    .expect_err("scheme checked after expansion");
    assert!(
        matches!(&e, McpConfigError::Invalid { field, .. } if field == "url"),
        "{e:?}"
    );
    let e = resolve("s", &json!({"command": "${C:-}"}), &vars).expect_err("empty command");
    assert!(e.to_string().contains("empty"), "{e}");
}

// Scopes, approval, plugins

fn state(home: &Home, v: Value) {
    write(&home.state_file(), &v.to_string());
}

#[test]
fn precedence_local_over_project_over_user() {
    let t = tempfile::tempdir().expect("tmp");
    let home = Home::new(t.path().join("home"));
    let cwd = t.path().join("proj");
    std::fs::create_dir_all(&cwd).expect("mkdir");
    state(
        &home,
        json!({
            "mcpServers": {
                "a": {"command": "user-a"},
                "b": {"command": "user-b"},
                "c": {"command": "user-c"}
            },
            "projects": {
                cwd.display().to_string(): {"mcpServers": {"a": {"command": "local-a", "args": ["l"]}}},
                "/elsewhere": {"mcpServers": {"d": {"command": "other-project"}}}
            }
        }),
    );
    write(
        &cwd.join(".mcp.json"),
        r#"{"mcpServers":{"a":{"command":"project-a"},"b":{"command":"project-b"}}}"#,
    );
    let s = settings(&[(Scope::User, json!({"enableAllProjectMcpServers": true}))]);
    let m = McpServers::load(&cwd, &home, &s);
    assert!(m.problems.is_empty(), "{:?}", m.problems);
    let got: Vec<(&str, McpScope, &str)> = m
        .servers
        .iter()
        .map(|e| {
            (
                e.name.as_str(),
                e.scope,
                e.entry["command"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("a", McpScope::Local, "local-a"),
            ("b", McpScope::Project, "project-b"),
            ("c", McpScope::User, "user-c"),
        ]
    );
    // The whole winning entry is used: local `a` keeps its args, nothing from the others.
    assert_eq!(
        m.get("a").expect("a").entry,
        json!({"command": "local-a", "args": ["l"]})
    );
    assert_eq!(m.get("b").expect("b").approval, Approval::Approved);
    assert_eq!(
        m.get("b").expect("b").origin,
        cwd.join(".mcp.json").display().to_string()
    );
    assert!(m.get("d").is_none());
}

#[test]
fn unapproved_project_server_does_not_hide_the_users() {
    let t = tempfile::tempdir().expect("tmp");
    let home = Home::new(t.path().join("home"));
    let cwd = t.path().join("proj");
    state(
        &home,
        json!({"mcpServers": {"github": {"command": "mine"}}}),
    );
    write(
        &cwd.join(".mcp.json"),
        r#"{"github":{"command":"theirs"},"extra":{"command":"e"}}"#,
    );
    let m = McpServers::load(&cwd, &home, &Settings::default());
    let gh = m.get("github").expect("github");
    assert_eq!(
        (gh.scope, gh.entry["command"].clone()),
        (McpScope::User, json!("mine"))
    );
    assert_eq!(m.get("extra").expect("extra").approval, Approval::Pending);
    assert_eq!(m.problems.len(), 1, "{:?}", m.problems);
    assert!(m.problems[0].contains("`github` is not approved"));
}

#[test]
fn project_settings_cannot_approve_their_own_servers() {
    let s = settings(&[(
        Scope::Project,
        json!({"enableAllProjectMcpServers": true, "enabledMcpjsonServers": ["evil"]}),
    )]);
    assert_eq!(project_approval(&s, "evil"), Approval::Pending);
}

#[test]
fn user_controlled_settings_approve() {
    for scope in [Scope::User, Scope::Managed, Scope::Cli] {
        let s = settings(&[(scope, json!({"enabledMcpjsonServers": ["db"]}))]);
        assert_eq!(project_approval(&s, "db"), Approval::Approved, "{scope}");
        assert_eq!(project_approval(&s, "other"), Approval::Pending, "{scope}");
    }
    let s = settings(&[(Scope::User, json!({"enableAllProjectMcpServers": true}))]);
    assert_eq!(project_approval(&s, "anything"), Approval::Approved);
    // A committed `.claude/settings.local.json` is the repository's, like its settings.json.
    let s = settings(&[(Scope::Local, json!({"enableAllProjectMcpServers": true}))]);
    assert_eq!(project_approval(&s, "anything"), Approval::Pending);
    let s = settings(&[(Scope::User, json!({"enableAllProjectMcpServers": "true"}))]);
    assert_eq!(
        project_approval(&s, "anything"),
        Approval::Pending,
        "only the boolean true approves"
    );
}

#[test]
fn disabled_wins_over_enabled() {
    let s = settings(&[
        (
            Scope::Managed,
            json!({"enableAllProjectMcpServers": true, "enabledMcpjsonServers": ["db"]}),
        ),
        (Scope::Project, json!({"disabledMcpjsonServers": ["db"]})),
    ]);
    assert_eq!(project_approval(&s, "db"), Approval::Disabled);
    assert_eq!(project_approval(&s, "other"), Approval::Approved);
}

#[test]
fn load_reports_broken_files_and_sections() {
    let t = tempfile::tempdir().expect("tmp");
    let home = Home::new(t.path().join("home"));
    let cwd = t.path().join("proj");
    write(&home.state_file(), r#"{"mcpServers": [], "projects": 3}"#);
    write(&cwd.join(".mcp.json"), "{ nope");
    let m = McpServers::load(&cwd, &home, &Settings::default());
    assert!(m.servers.is_empty());
    assert_eq!(m.problems.len(), 3, "{:?}", m.problems);
    assert!(m.problems.iter().any(|p| p.contains(".mcp.json:1:")));
    assert!(m.problems.iter().any(|p| p.contains("`projects`")));
    assert!(m.problems.iter().any(|p| p.contains("`mcpServers`")));
}

fn plugin(name: &str) -> PluginServer {
    PluginServer {
        plugin_id: format!("{name}@mkt"),
        plugin_name: name.to_string(),
        root: PathBuf::from(format!("/plugins/{name}")),
        data_dir: PathBuf::from(format!("/data/{name}")),
    }
}

#[test]
fn plugin_servers_are_deduplicated_by_endpoint() {
    let t = tempfile::tempdir().expect("tmp");
    let home = Home::new(t.path().join("home"));
    let cwd = t.path().join("proj");
    state(
        &home,
        json!({"mcpServers": {
            "my-github": {"type": "http", "url": "https://api.example.com/mcp/"},
            "fs": {"command": "fs-server", "args": ["--root", "/"]},
        }}),
    );
    let mut m = McpServers::load(&cwd, &home, &Settings::default());
    m.add_plugin_servers(
        plugin("github"),
        &obj(json!({
            "github": {"type": "http", "url": "https://api.example.com/mcp"},
            "fs": {"command": "fs-server", "args": ["--root", "/"]},
            "fs2": {"command": "fs-server", "args": ["--root", "/tmp"]},
        })),
    );
    m.add_plugin_servers(
        plugin("other"),
        &obj(json!({"fs2": {"command": "fs-server", "args": ["--root", "/tmp"]}})),
    );
    let names: Vec<String> = m.servers.iter().map(|s| s.tool_prefix_name()).collect();
    assert_eq!(names, ["my-github", "fs", "plugin_github_fs2"]);
    assert_eq!(m.problems.len(), 3, "{:?}", m.problems);
    assert!(m.problems[0].contains("plugin github@mkt: MCP server `github` is left out"));
    assert!(
        m.problems[2].contains("plugin:github:fs2"),
        "{}",
        m.problems[2]
    );
    let p = m.get("plugin_github_fs2").expect("plugin server");
    assert_eq!(p.scope, McpScope::Plugin);
    assert_eq!(p.approval, Approval::Approved);
    assert_eq!(p.origin, "plugin github@mkt");
}

#[test]
fn disabled_project_server_does_not_suppress_a_plugin_server() {
    let t = tempfile::tempdir().expect("tmp");
    let home = Home::new(t.path().join("home"));
    let cwd = t.path().join("proj");
    write(
        &cwd.join(".mcp.json"),
        r#"{"gh":{"type":"http","url":"https://gh.example/mcp"}}"#,
    );
    let s = settings(&[(Scope::Local, json!({"disabledMcpjsonServers": ["gh"]}))]);
    let mut m = McpServers::load(&cwd, &home, &s);
    assert_eq!(m.get("gh").expect("listed").approval, Approval::Disabled);
    m.add_plugin_servers(
        plugin("gh"),
        &obj(json!({"gh": {"type": "http", "url": "https://gh.example/mcp"}})),
    );
    assert!(m.get("plugin_gh_gh").is_some(), "{:?}", m.problems);
}

#[test]
fn names_are_sanitised() {
    let mut m = McpServers::default();
    m.add_plugin_servers(plugin("my.plugin"), &obj(json!({"d b": {"command": "x"}})));
    let e = &m.servers[0];
    assert_eq!(e.tool_prefix_name(), "plugin_my_plugin_d_b");
    assert_eq!(e.handler_name(), "plugin:my.plugin:d b");
    assert_eq!(
        tool_name(&e.tool_prefix_name(), "q:x"),
        "mcp__plugin_my_plugin_d_b__q_x"
    );
    assert_eq!(tool_name("my-server", "search"), "mcp__my-server__search");
    assert!(std::ptr::eq(
        m.get("plugin_my.plugin_d b").expect("as written"),
        m.get("plugin_my_plugin_d_b").expect("sanitised")
    ));
}

#[test]
fn state_file_location() {
    assert_eq!(Home::new("/h").state_file(), PathBuf::from("/h/state.json"));
}

#[test]
fn a_pinned_approval_holds_for_the_definition_it_was_made_for() {
    use warden_config::mcp::{definition_digest, edit};
    let t = tempfile::tempdir().expect("tmp");
    let home = Home::new(t.path().join("home"));
    let cwd = t.path().join("proj");
    let entry = json!({"command": "srv", "args": ["a"], "env": {"K": "v"}});
    write(
        &cwd.join(".mcp.json"),
        &json!({"mcpServers": {"srv": entry}}).to_string(),
    );
    let approval = |s: &Settings| {
        McpServers::load(&cwd, &home, s)
            .get("srv")
            .expect("srv")
            .approval
    };
    assert_eq!(approval(&Settings::default()), Approval::Pending);

    // A pinned approval in any settings file, the user's included, is not read: only
    // `state.json` holds them.
    let digest = definition_digest("srv", &entry);
    for scope in [Scope::Local, Scope::Project, Scope::User] {
        let s = settings(&[(scope, json!({"approvedMcpjsonServers": {"srv": digest}}))]);
        assert_eq!(approval(&s), Approval::Pending, "{scope}");
    }

    let choice = edit::approve(&cwd, &home, "srv", true).expect("approve");
    assert_eq!(choice.digest.as_deref(), Some(digest.as_str()));
    assert_eq!(approval(&Settings::default()), Approval::Approved);

    // Key order and spacing are not the definition; a value is.
    write(
        &cwd.join(".mcp.json"),
        r#"{"mcpServers": {"srv": {"env": {"K": "v"}, "args": ["a"], "command": "srv"}}}"#,
    );
    assert_eq!(approval(&Settings::default()), Approval::Approved);
    for changed in [
        json!({"command": "srv", "args": ["b"], "env": {"K": "v"}}),
        json!({"command": "srv", "args": ["a"], "env": {"K": "w"}}),
        json!({"command": "srv2", "args": ["a"], "env": {"K": "v"}}),
        json!({"command": "srv", "args": ["a"], "env": {"K": "v"}, "timeout": 5000}),
    ] {
        write(
            &cwd.join(".mcp.json"),
            &json!({"mcpServers": {"srv": changed}}).to_string(),
        );
        let m = McpServers::load(&cwd, &home, &Settings::default());
        assert_eq!(
            m.get("srv").expect("srv").approval,
            Approval::Pending,
            "{changed}"
        );
        assert!(
            m.problems
                .iter()
                .any(|p| p.contains("changed since it was approved")),
            "{:?}",
            m.problems
        );
    }
    // The same definition under another name is another server.
    assert_ne!(definition_digest("other", &entry), digest);

    // A denial recorded by the user disables the server, even against a settings approval.
    write(
        &cwd.join(".mcp.json"),
        &json!({"mcpServers": {"srv": entry}}).to_string(),
    );
    edit::approve(&cwd, &home, "srv", false).expect("deny");
    let s = settings(&[(Scope::User, json!({"enableAllProjectMcpServers": true}))]);
    assert_eq!(approval(&s), Approval::Disabled);
}
