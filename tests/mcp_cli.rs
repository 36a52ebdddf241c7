//! `warden mcp add`, `remove`, `get` and `approve`: where each scope's servers are written, what
//! is refused, and how a project server's approval binds to its definition. Every run has its
//! own `WARDEN_HOME` and project, and reads none of the developer's configuration.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};

/// A stdio MCP server in a few lines of Python: one tool, `hello`. Its first argument ends up
/// in the definition, so the tests can change the definition without changing the program.
const SERVER: &str = r#"import json, sys
for line in sys.stdin:
    line = line.strip()
    if not line:
        continue
    m = json.loads(line)
    if "id" not in m:
        continue
    method = m.get("method")
    if method == "initialize":
        r = {"protocolVersion": m["params"].get("protocolVersion", "2025-06-18"),
             "capabilities": {"tools": {}}, "serverInfo": {"name": "t", "version": "1"}}
    elif method == "tools/list":
        r = {"tools": [{"name": "hello", "description": "Says hello",
                        "inputSchema": {"type": "object"}}]}
    elif method == "ping":
        r = {}
    else:
        out = {"jsonrpc": "2.0", "id": m["id"], "error": {"code": -32601, "message": method}}
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()
        continue
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": r}) + "\n")
    sys.stdout.flush()
"#;

const PYTHON: &str = "/usr/bin/python3";

struct Project {
    _t: tempfile::TempDir,
    dir: PathBuf,
    home: PathBuf,
}

impl Project {
    fn new() -> Project {
        let t = tempfile::tempdir().expect("tempdir");
        let dir = t.path().join("proj");
        std::fs::create_dir_all(dir.join(".claude")).expect("mkdir");
        let dir = dir.canonicalize().expect("canonical");
        let home = t.path().join("home");
        std::fs::create_dir_all(&home).expect("home");
        std::fs::write(home.join("settings.json"), "{}").expect("settings");
        Project { _t: t, dir, home }
    }

    fn cwd(&self) -> &str {
        self.dir.to_str().expect("utf-8")
    }

    fn write(&self, rel: &str, text: &str) -> PathBuf {
        let p = self.dir.join(rel);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(&p, text).expect("write");
        p
    }

    /// `warden mcp <verb> --cwd <proj> <args…>` with this project's home. `--cwd` goes before
    /// the rest: after `--`, it would be the server's own argument.
    fn mcp(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_warden"))
            .arg("mcp")
            .args(&args[..1])
            .args(["--cwd", self.cwd()])
            .args(&args[1..])
            .env("WARDEN_NO_CLAUDE_CONFIG", "1")
            .env("WARDEN_HOME", &self.home)
            .env("WARDEN_MANAGED_SETTINGS_DIR", "")
            .output()
            .expect("run warden")
    }

    fn state(&self) -> Value {
        read_json(&self.home.join("state.json"))
    }

    fn mcp_json(&self) -> Value {
        read_json(&self.dir.join(".mcp.json"))
    }

    /// A `.mcp.json` with the Python server as `srv`, its first argument `arg`.
    fn project_server(&self, arg: &str) -> Value {
        let script = self.write("server.py", SERVER);
        let entry = json!({"command": PYTHON, "args": [script, arg]});
        self.write(
            ".mcp.json",
            &serde_json::to_string_pretty(&json!({"mcpServers": {"srv": entry}})).expect("json"),
        );
        entry
    }
}

fn read_json(p: &Path) -> Value {
    let text = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn text(out: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn ok(out: &Output) -> &Output {
    assert_eq!(out.status.code(), Some(0), "{}", text(out));
    out
}

fn json_out(out: &Output) -> Value {
    ok(out);
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(out)))
}

/// Refused with exit `code`, and stderr says each of `needles`.
fn refused(out: &Output, code: i32, needles: &[&str]) {
    assert_eq!(out.status.code(), Some(code), "{}", text(out));
    for n in needles {
        assert!(stderr(out).contains(n), "missing {n:?}\n{}", text(out));
    }
}

/// The `mcp list --json` row of `name`.
fn listed(p: &Project, name: &str) -> Value {
    let v = json_out(&p.mcp(&["list", "--json"]));
    v.as_array()
        .expect("array")
        .iter()
        .find(|s| s["name"] == name)
        .cloned()
        .unwrap_or_else(|| panic!("{name} not listed: {v}"))
}

#[test]
fn add_get_remove_round_trip_in_each_scope() {
    let p = Project::new();
    // Content that is not a server survives every change, in its order.
    std::fs::write(
        p.home.join("state.json"),
        r#"{"theme": "dark", "projects": {"/elsewhere": {"mcpServers": {"x": {"command": "x"}}}}}"#,
    )
    .expect("state");
    p.write(
        ".mcp.json",
        r#"{"$schema": "https://example.invalid/mcp.json", "mcpServers": {}}"#,
    );
    let key = p.cwd().to_string();

    for scope in ["local", "project", "user"] {
        let out = p.mcp(&[
            "add",
            "--scope",
            scope,
            "-e",
            "API_KEY=s3cret",
            "-e",
            "REGION=${REGION:-eu}",
            "db",
            "--",
            "npx",
            "-y",
            "dbhub",
            "--dsn",
            "x",
        ]);
        ok(&out);
        assert!(
            stdout(&out).contains(&format!("to {scope} scope")),
            "{}",
            text(&out)
        );

        let want = json!({
            "type": "stdio", "command": "npx", "args": ["-y", "dbhub", "--dsn", "x"],
            "env": {"API_KEY": "s3cret", "REGION": "${REGION:-eu}"}
        });
        let written = match scope {
            "local" => p.state()["projects"][&key]["mcpServers"]["db"].clone(),
            "project" => p.mcp_json()["mcpServers"]["db"].clone(),
            _ => p.state()["mcpServers"]["db"].clone(),
        };
        assert_eq!(written, want, "{scope}");
        assert_eq!(p.state()["theme"], "dark");
        assert_eq!(
            p.state()["projects"]["/elsewhere"]["mcpServers"]["x"]["command"],
            "x"
        );
        assert_eq!(p.mcp_json()["$schema"], "https://example.invalid/mcp.json");

        let g = json_out(&p.mcp(&["get", "db", "--json"]));
        assert_eq!(g["scope"], scope, "{g}");
        assert_eq!(g["type"], "stdio", "{g}");
        assert_eq!(g["command"], "npx", "{g}");
        assert_eq!(g["args"], json!(["-y", "dbhub", "--dsn", "x"]), "{g}");
        // Values are masked; a variable reference names no secret and is shown.
        assert_eq!(g["env"]["API_KEY"], "***", "{g}");
        assert_eq!(g["env"]["REGION"], "${REGION:-eu}", "{g}");
        let expected_approval = if scope == "project" {
            "needs approval"
        } else {
            "approved"
        };
        assert_eq!(g["approval"], expected_approval, "{g}");
        let t = p.mcp(&["get", "db"]);
        ok(&t);
        assert!(!stdout(&t).contains("s3cret"), "{}", text(&t));
        assert!(
            stdout(&t).contains(&format!("warden mcp remove db --scope {scope}")),
            "{}",
            text(&t)
        );

        // The same name again in that scope is refused, naming where it is.
        let again = p.mcp(&["add", "-s", scope, "db", "--", "other"]);
        refused(&again, 2, &["already exists", &format!("{scope} scope")]);

        let out = p.mcp(&["remove", "db", "--scope", scope]);
        ok(&out);
        assert!(
            stdout(&out).contains(&format!("from {scope} scope")),
            "{}",
            text(&out)
        );
        let gone = p.mcp(&["get", "db"]);
        refused(&gone, 2, &["no MCP server `db`"]);
    }
    assert_eq!(p.state()["projects"][&key]["mcpServers"], json!({}));
    assert_eq!(p.state()["mcpServers"], json!({}));
    assert_eq!(p.mcp_json()["mcpServers"], json!({}));

    // Remote servers: the transport, URL and headers, and the header's value masked.
    let out = p.mcp(&[
        "add",
        "-t",
        "http",
        "-s",
        "user",
        "-H",
        "Authorization: Bearer tok3n",
        "-H",
        "X-Team: ${TEAM}",
        "api",
        "https://mcp.example.com/mcp",
    ]);
    ok(&out);
    assert_eq!(
        p.state()["mcpServers"]["api"],
        json!({"type": "http", "url": "https://mcp.example.com/mcp",
               "headers": {"Authorization": "Bearer tok3n", "X-Team": "${TEAM}"}})
    );
    let g = json_out(&p.mcp(&["get", "api", "--json"]));
    assert_eq!(g["type"], "http", "{g}");
    assert_eq!(g["url"], "https://mcp.example.com/mcp", "{g}");
    assert_eq!(g["headers"]["Authorization"], "***", "{g}");
    assert_eq!(g["headers"]["X-Team"], "${TEAM}", "{g}");
    ok(&p.mcp(&[
        "add",
        "--transport",
        "sse",
        "events",
        "https://mcp.example.com/sse",
    ]));
    assert_eq!(
        p.state()["projects"][&key]["mcpServers"]["events"]["type"],
        "sse"
    );

    // The state file holds tokens: only its owner reads it.
    use std::os::unix::fs::PermissionsExt as _;
    let mode = std::fs::metadata(p.home.join("state.json"))
        .expect("state")
        .permissions()
        .mode();
    assert_eq!(mode & 0o077, 0, "{mode:o}");
}

#[test]
fn a_fresh_home_and_a_flat_mcp_json_are_written_where_they_are_read() {
    let p = Project::new();
    // No state file yet, and a `.mcp.json` without the `mcpServers` wrapper.
    p.write(".mcp.json", r#"{"old": {"command": "old-server"}}"#);
    ok(&p.mcp(&["add", "-s", "project", "new", "--", "new-server"]));
    let v = p.mcp_json();
    assert_eq!(v["old"]["command"], "old-server", "{v}");
    assert_eq!(v["new"]["command"], "new-server", "{v}");
    assert!(v.get("mcpServers").is_none(), "stays flat: {v}");
    ok(&p.mcp(&["add", "mine", "--", "my-server"]));
    let v = json_out(&p.mcp(&["list", "--json"]));
    let names: Vec<&str> = v
        .as_array()
        .expect("array")
        .iter()
        .filter_map(|s| s["name"].as_str())
        .collect();
    for n in ["old", "new", "mine"] {
        assert!(names.contains(&n), "{n} in {v}");
    }
}

#[test]
fn remove_of_a_name_in_several_scopes_names_them_and_removes_nothing() {
    let p = Project::new();
    ok(&p.mcp(&["add", "-s", "local", "db", "--", "a"]));
    ok(&p.mcp(&["add", "-s", "user", "db", "--", "b"]));
    let out = p.mcp(&["remove", "db"]);
    refused(
        &out,
        2,
        &[
            "exists in several scopes",
            "local (",
            "user (",
            "warden mcp remove db --scope local",
            "warden mcp remove db --scope user",
        ],
    );
    assert_eq!(p.state()["mcpServers"]["db"]["command"], "b");
    assert_eq!(
        p.state()["projects"][p.cwd()]["mcpServers"]["db"]["command"],
        "a"
    );
    // The local one wins; `get` says so and names the one it hides.
    let g = json_out(&p.mcp(&["get", "db", "--json"]));
    assert_eq!(g["scope"], "local", "{g}");
    assert_eq!(g["hides"][0]["scope"], "user", "{g}");

    ok(&p.mcp(&["remove", "db", "--scope", "user"]));
    assert!(p.state()["mcpServers"].get("db").is_none());
    ok(&p.mcp(&["remove", "db"]));
    let out = p.mcp(&["remove", "db"]);
    refused(&out, 2, &["no MCP server `db`", "state.json", ".mcp.json"]);
}

#[test]
fn bad_input_is_refused_naming_the_reason_and_the_file() {
    let p = Project::new();
    let cases: &[(&[&str], &[&str])] = &[
        (
            &["add", "bad name", "--", "x"],
            &["invalid server name `bad name`", "' '"],
        ),
        (
            &["add", "a.b", "--", "x"],
            &["invalid server name `a.b`", "'.'"],
        ),
        (
            &["add", "-t", "http", "web", "ftp://example.com"],
            &["url", "http:// or https://"],
        ),
        (
            &["add", "-t", "http", "web", "https://"],
            &["url", "no host"],
        ),
        (
            &["add", "-t", "http", "web", "https://a b.example"],
            &["invalid URL"],
        ),
        (
            &[
                "add",
                "-t",
                "http",
                "-H",
                "NoColon",
                "web",
                "https://e.example",
            ],
            &["invalid header `NoColon`", "no `:`"],
        ),
        (
            &[
                "add",
                "-t",
                "http",
                "-H",
                "X-A: b\r\nX-B: c",
                "web",
                "https://e.example",
            ],
            &["invalid header", "line break"],
        ),
        (
            &[
                "add",
                "-t",
                "http",
                "-H",
                "Bad Name: v",
                "web",
                "https://e.example",
            ],
            &["invalid header", "not allowed in a header name"],
        ),
        (
            &["add", "-e", "1X=y", "s", "--", "x"],
            &["invalid environment variable `1X=y`"],
        ),
        (
            &["add", "-e", "NOEQUALS", "s", "--", "x"],
            &["invalid environment variable", "no `=`"],
        ),
        (
            &["add", "-H", "A: b", "s", "--", "x"],
            &["--header applies to http and sse"],
        ),
        (
            &["add", "-t", "http", "-e", "A=b", "w", "https://e.example"],
            &["--env applies to stdio"],
        ),
        (
            &["add", "-t", "http", "w", "https://e.example", "extra"],
            &["one URL", "extra"],
        ),
    ];
    for (args, needles) in cases {
        refused(&p.mcp(args), 2, needles);
    }
    // Nothing was written for any of them.
    assert!(!p.home.join("state.json").exists());
    assert!(!p.dir.join(".mcp.json").exists());

    // A file that cannot be parsed is named with the line and column; it is left as it was.
    let broken = "{\n  \"mcpServers\": {,}\n}\n";
    p.write(".mcp.json", broken);
    let out = p.mcp(&["add", "-s", "project", "s", "--", "x"]);
    refused(&out, 1, &[".mcp.json:2:", "invalid JSON"]);
    assert_eq!(
        std::fs::read_to_string(p.dir.join(".mcp.json")).expect("read"),
        broken
    );
    std::fs::write(p.home.join("state.json"), r#"{"mcpServers": ["x"]}"#).expect("state");
    let out = p.mcp(&["add", "-s", "user", "s", "--", "x"]);
    refused(
        &out,
        1,
        &[
            "state.json",
            "`mcpServers` must be an object",
            "found array",
        ],
    );
    std::fs::write(p.home.join("state.json"), r#"{"projects": []}"#).expect("state");
    let out = p.mcp(&["add", "s", "--", "x"]);
    refused(&out, 1, &["state.json", "`projects` must be an object"]);
}

#[test]
fn a_symlinked_mcp_json_is_neither_written_nor_approved_through() {
    let p = Project::new();
    let outside = p.dir.parent().expect("tmp").join("outside.json");
    let original = r#"{"mcpServers": {"srv": {"command": "x"}}}"#;
    std::fs::write(&outside, original).expect("outside");
    std::os::unix::fs::symlink(&outside, p.dir.join(".mcp.json")).expect("symlink");

    for args in [
        &["add", "-s", "project", "new", "--", "y"][..],
        &["remove", "srv", "--scope", "project"][..],
        &["approve", "srv"][..],
    ] {
        refused(&p.mcp(args), 1, &[".mcp.json", "symbolic link"]);
    }
    assert_eq!(std::fs::read_to_string(&outside).expect("read"), original);
    assert!(
        std::fs::symlink_metadata(p.dir.join(".mcp.json"))
            .expect("link")
            .file_type()
            .is_symlink()
    );
    assert!(!p.home.join("state.json").exists());
}

#[test]
fn approval_runs_a_project_server_until_its_definition_changes() {
    let p = Project::new();
    p.project_server("v1");

    // Pending: list and tools say what to run.
    let row = listed(&p, "srv");
    assert_eq!(row["status"], "needs approval", "{row}");
    let command = format!("warden mcp approve srv --cwd {}", p.cwd());
    assert_eq!(row["approve"], command.as_str(), "{row}");
    let out = p.mcp(&["list"]);
    ok(&out);
    assert!(
        stdout(&out).contains(&format!("approve it with: {command}")),
        "{}",
        text(&out)
    );
    let out = p.mcp(&["tools"]);
    ok(&out);
    assert!(!stdout(&out).contains("mcp__srv__hello"), "{}", text(&out));
    assert!(
        stderr(&out).contains("`srv`") && stderr(&out).contains("needs approval"),
        "{}",
        text(&out)
    );
    assert!(stderr(&out).contains(&command), "{}", text(&out));
    let g = json_out(&p.mcp(&["get", "srv", "--json"]));
    assert_eq!(g["approval"], "needs approval", "{g}");
    assert_eq!(g["approve"], command.as_str(), "{g}");

    // Approved: recorded in the user's state file, pinned to the definition.
    let out = p.mcp(&["approve", "srv"]);
    ok(&out);
    assert!(stdout(&out).contains("sha256:"), "{}", text(&out));
    let pinned = p.state()["projects"][p.cwd()]["approvedMcpjsonServers"]["srv"].clone();
    assert!(
        pinned.as_str().is_some_and(|d| d.starts_with("sha256:")),
        "{}",
        p.state()
    );
    assert_eq!(listed(&p, "srv")["status"], "connected");
    let out = p.mcp(&["tools"]);
    ok(&out);
    assert!(stdout(&out).contains("mcp__srv__hello"), "{}", text(&out));

    // The same definition reformatted, keys reordered, keeps its approval.
    let script = p.dir.join("server.py");
    p.write(
        ".mcp.json",
        &format!(
            "{{\"mcpServers\":{{\"srv\":{{\"args\":[\"{}\",\"v1\"],\"command\":\"{PYTHON}\"}}}}}}",
            script.display()
        ),
    );
    assert_eq!(listed(&p, "srv")["status"], "connected");

    // A changed definition needs approval again, and the notice says why.
    p.project_server("v2");
    let out = p.mcp(&["list", "--json"]);
    ok(&out);
    assert!(
        stderr(&out).contains("changed since it was approved"),
        "{}",
        text(&out)
    );
    assert_eq!(listed(&p, "srv")["status"], "needs approval");
    let out = p.mcp(&["tools"]);
    assert!(!stdout(&out).contains("mcp__srv__hello"), "{}", text(&out));
    ok(&p.mcp(&["approve", "srv"]));
    assert_eq!(listed(&p, "srv")["status"], "connected");

    // Denied: off in this project until approved again.
    ok(&p.mcp(&["approve", "srv", "--deny"]));
    assert_eq!(listed(&p, "srv")["status"], "disabled");
    assert_eq!(
        p.state()["projects"][p.cwd()]["disabledMcpjsonServers"],
        json!(["srv"])
    );
    ok(&p.mcp(&["approve", "srv"]));
    assert_eq!(listed(&p, "srv")["status"], "connected");
    let project = &p.state()["projects"][p.cwd()];
    assert!(project.get("disabledMcpjsonServers").is_none(), "{project}");

    // Only a project server needs approval.
    refused(
        &p.mcp(&["approve", "nope"]),
        2,
        &["no MCP server `nope`", ".mcp.json", "srv"],
    );
}

#[test]
fn a_repository_cannot_approve_its_own_server() {
    let p = Project::new();
    let entry = p.project_server("v1");
    let digest = warden_config::mcp::definition_digest("srv", &entry);
    let cwd = p.cwd().to_string();
    // Every way a repository might say "approved": the settings keys, a pinned approval with
    // the right digest (a repository can compute it), and a state-file-shaped `projects`
    // entry, in both settings files it ships.
    let claims = json!({
        "enableAllProjectMcpServers": true,
        "enabledMcpjsonServers": ["srv"],
        "approvedMcpjsonServers": {"srv": digest},
        "projects": {cwd.clone(): {"approvedMcpjsonServers": {"srv": digest}}},
    });
    p.write(".claude/settings.local.json", &claims.to_string());
    p.write(".claude/settings.json", &claims.to_string());
    assert_eq!(listed(&p, "srv")["status"], "needs approval");

    // Nor can fields of `.mcp.json` itself, beside or inside the entry.
    let mut hostile = entry.clone();
    hostile["approved"] = json!(true);
    hostile["approvedMcpjsonServers"] = json!({"srv": digest});
    p.write(
        ".mcp.json",
        &json!({
            "mcpServers": {"srv": hostile},
            "enableAllProjectMcpServers": true,
            "approvedMcpjsonServers": {"srv": digest},
            "projects": {cwd: {"approvedMcpjsonServers": {"srv": digest}}},
        })
        .to_string(),
    );
    assert_eq!(listed(&p, "srv")["status"], "needs approval");
    let out = p.mcp(&["tools"]);
    assert!(!stdout(&out).contains("mcp__srv__hello"), "{}", text(&out));
    // The user's own approval still works, and was never written into the project.
    ok(&p.mcp(&["approve", "srv"]));
    assert_eq!(listed(&p, "srv")["status"], "connected");
    let local = read_json(&p.dir.join(".claude/settings.local.json"));
    assert_eq!(local, claims);
}
