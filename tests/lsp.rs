//! Language servers from plugins, end to end through the `warden` binary: a real server
//! (pyright from npm, pinned, installed once per target directory beside the MCP peers) for
//! diagnostics, the `LSP` tool and `<new-diagnostics>` after a Write; a toy server
//! (`host/crates/lsp/tests/fixtures/toy_server.py`) for the sandbox's refusals; and a
//! malformed `.lsp.json` for `plugin validate`. Restarts after crashes are tested on the
//! client itself (`host/crates/lsp/tests/client.rs`), where one process sees them all.

#[path = "support/peers.rs"]
mod peers;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};

struct Project {
    _t: tempfile::TempDir,
    dir: PathBuf,
    home: PathBuf,
    plugin: PathBuf,
}

impl Project {
    /// A project, a home whose user settings make the peers readable to confined programs, and
    /// a `--plugin-dir` plugin with `lsp` as its `.lsp.json`.
    fn new(lsp: Value) -> Project {
        let t = tempfile::tempdir().expect("tempdir");
        let dir = t.path().join("proj");
        std::fs::create_dir_all(dir.join(".claude")).expect("mkdir");
        let dir = dir.canonicalize().expect("canonical");
        let home = t.path().join("home");
        std::fs::create_dir_all(&home).expect("home");
        std::fs::write(
            home.join("settings.json"),
            json!({"sandbox": {"readablePaths": [peers::install_dir()]}}).to_string(),
        )
        .expect("user settings");
        let plugin = t.path().join("plugin");
        std::fs::create_dir_all(plugin.join(".claude-plugin")).expect("plugin");
        std::fs::write(
            plugin.join(".claude-plugin/plugin.json"),
            r#"{"name": "langs"}"#,
        )
        .expect("manifest");
        std::fs::write(plugin.join(".lsp.json"), format!("{lsp:#}")).expect(".lsp.json");
        Project {
            _t: t,
            dir,
            home,
            plugin,
        }
    }

    fn write(&self, rel: &str, text: &str) -> PathBuf {
        let p = self.dir.join(rel);
        std::fs::write(&p, text).expect("write");
        p
    }

    fn run(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_warden"))
            .args(args)
            .args(["--cwd", self.dir.to_str().expect("utf-8")])
            .arg("--plugin-dir")
            .arg(&self.plugin)
            .env("WARDEN_NO_CLAUDE_CONFIG", "1")
            .env("WARDEN_HOME", &self.home)
            .env("WARDEN_MANAGED_SETTINGS_DIR", "")
            .output()
            .expect("run warden")
    }

    /// `warden tool LSP --json` with `input`: the tool's structured result.
    fn lsp(&self, input: Value) -> Value {
        let o = self.run(&[
            "tool",
            "LSP",
            "--yes",
            "--json",
            "--input",
            &input.to_string(),
        ]);
        assert!(o.status.success(), "LSP {input}: {}", peers::text(&o));
        let v: Value = serde_json::from_slice(&o.stdout).expect("JSON");
        v["structured"].clone()
    }
}

fn pyright_config() -> Value {
    json!({"python": {
        "command": peers::node().display().to_string(),
        "args": [peers::pyright().display().to_string(), "--stdio"],
        "extensionToLanguage": {".py": "python", ".pyi": "python"},
        "settings": {"python": {"analysis": {"typeCheckingMode": "basic"}}}
    }})
}

const LIB: &str = "def greet(name: str) -> str:\n    return \"hello \" + name\n";
const MAIN: &str = "from lib import greet\n\nmessage: int = greet(\"world\")\nprint(greet(\"again\"))\n\n\ndef shout(name: str) -> str:\n    return greet(name).upper()\n\n\ndef main() -> None:\n    print(shout(\"world\"))\n";

#[test]
fn pyright_diagnostics_list_and_the_lsp_tool_on_a_real_server() {
    let p = Project::new(pyright_config());
    p.write("lib.py", LIB);
    p.write("main.py", MAIN);

    let o = p.run(&["lsp", "list", "--json"]);
    assert!(o.status.success(), "{}", peers::text(&o));
    let list: Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(list[0]["id"], "plugin:langs:python", "{list:#}");
    assert_eq!(list[0]["status"], "not started");
    assert_eq!(list[0]["extensions"][0]["extension"], ".py");

    // The declared type is int; greet returns str.
    let o = p.run(&["lsp", "diagnostics", "main.py", "lib.py"]);
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    assert_eq!(o.status.code(), Some(1), "{}", peers::text(&o));
    let line = out
        .lines()
        .find(|l| l.starts_with("main.py:3:16 error "))
        .unwrap_or_else(|| panic!("no type error at main.py:3:16:\n{}", peers::text(&o)));
    assert!(
        line.contains("\"str\"") && line.ends_with("[Pyright]"),
        "{line}"
    );
    assert!(!out.contains("lib.py:"), "lib.py is clean:\n{out}");

    let o = p.run(&["lsp", "diagnostics", "lib.py", "--json"]);
    assert!(o.status.success(), "{}", peers::text(&o));
    assert_eq!(
        serde_json::from_slice::<Value>(&o.stdout).expect("JSON"),
        json!([])
    );

    let at = |op: &str, file: &str, line: u32, character: u32| json!({"operation": op, "filePath": file, "line": line, "character": character});
    // `greet` in `print(greet("again"))`.
    let def = p.lsp(at("goToDefinition", "main.py", 4, 7));
    assert_eq!(def["result"], "Defined in lib.py:1:5", "{def:#}");
    assert_eq!(def["resultCount"], 1);
    assert_eq!(def["operation"], "goToDefinition");
    assert_eq!(def["filePath"], "main.py");

    let hover = p.lsp(at("hover", "main.py", 4, 7));
    let text = hover["result"].as_str().unwrap_or("");
    assert!(text.contains("def greet(name: str) -> str"), "{hover:#}");

    let symbols = p.lsp(at("documentSymbol", "lib.py", 1, 1));
    let text = symbols["result"].as_str().unwrap_or("");
    assert!(text.contains("greet (Function) - line 1"), "{symbols:#}");

    let refs = p.lsp(at("findReferences", "main.py", 4, 7));
    assert_eq!(refs["fileCount"], 2, "{refs:#}");
    assert!(
        refs["resultCount"].as_u64().is_some_and(|n| n >= 3),
        "{refs:#}"
    );
    let text = refs["result"].as_str().unwrap_or("");
    assert!(
        text.contains("lib.py:1:5") && text.contains("main.py:4:7"),
        "{refs:#}"
    );

    // pyright answers `workspace/symbol` from the files of its workspace, lib.py unopened,
    // once it has loaded them: on this cold server the answer must not be empty.
    let found = p.lsp(json!({"operation": "workspaceSymbol", "filePath": "main.py", "line": 1, "character": 1, "query": "greet"}));
    assert_eq!(
        found["result"], "Found 1 symbol matching `greet`:\n  greet (Function) - lib.py:1:5",
        "{found:#}"
    );
    assert_eq!(found["fileCount"], 1);

    // `shout` (main.py:7:5) calls greet and is called by main.
    let item = p.lsp(at("prepareCallHierarchy", "main.py", 7, 5));
    assert_eq!(
        item["result"], "Call hierarchy item:\n  shout (Function) - main.py:7:5",
        "{item:#}"
    );
    let incoming = p.lsp(at("incomingCalls", "main.py", 7, 5));
    assert_eq!(
        incoming["result"],
        "Found 1 incoming call to `shout`:\n  main (Function) - main.py:11:5 [calls at 12:11]",
        "{incoming:#}"
    );
    let outgoing = p.lsp(at("outgoingCalls", "main.py", 7, 5));
    let text = outgoing["result"].as_str().unwrap_or("");
    assert!(
        text.contains("\n  greet (Function) - lib.py:1:5 [called at 8:12]"),
        "{outgoing:#}"
    );
    assert_eq!(
        p.lsp(at("outgoingCalls", "main.py", 1, 1))["result"],
        "No call hierarchy item at this position.",
    );
}

#[test]
fn a_write_through_the_session_gets_the_new_diagnostics_of_its_file() {
    let p = Project::new(pyright_config());
    p.write("lib.py", LIB);
    let write = |file: &str, content: &str| {
        let input = json!({"file_path": p.dir.join(file), "content": content});
        let o = p.run(&["tool", "Write", "--yes", "--input", &input.to_string()]);
        assert!(o.status.success(), "{}", peers::text(&o));
        String::from_utf8_lossy(&o.stdout).to_string()
    };
    let out = write("main.py", MAIN);
    let block = out
        .split_once("<new-diagnostics>")
        .map(|(_, b)| b)
        .unwrap_or_else(|| panic!("no <new-diagnostics> after the Write:\n{out}"));
    assert!(block.contains("</new-diagnostics>"), "{out}");
    assert!(block.contains("main.py:"), "{out}");
    assert!(
        block.contains("[Line 3:16]") && block.contains("\"str\""),
        "{out}"
    );

    // A clean file and a file no server handles get nothing appended.
    let out = write("ok.py", "x: int = 1\n");
    assert!(!out.contains("new-diagnostics"), "{out}");
    let out = write("notes.txt", "hello\n");
    assert!(!out.contains("new-diagnostics"), "{out}");
}

fn clangd_config() -> Value {
    json!({"cpp": {
        "command": peers::clangd().display().to_string(),
        "extensionToLanguage": {".cpp": "cpp", ".h": "cpp"}
    }})
}

const SHAPES_H: &str = "struct Shape {\n  virtual ~Shape() = default;\n  virtual double area() const = 0;\n};\nstruct Square : Shape {\n  explicit Square(double s) : side(s) {}\n  double area() const override;\n  double side;\n};\n";
const MAIN_CPP: &str = "#include \"shapes.h\"\n\ndouble Square::area() const { return side * side; }\n\ndouble total(const Shape &a, const Shape &b) { return a.area() + b.area(); }\n\nint main() {\n  Square s(2.0);\n  return static_cast<int>(total(s, s));\n}\n";

/// A C++ project for clangd: a virtual method with an override, and `total` between `main`
/// and the method it calls.
fn cpp_project() -> Project {
    let p = Project::new(clangd_config());
    p.write("shapes.h", SHAPES_H);
    p.write("main.cpp", MAIN_CPP);
    p
}

#[test]
fn the_nine_operations_on_clangd() {
    let p = cpp_project();
    let at = |op: &str, line: u32, character: u32| {
        let out = p.lsp(json!({"operation": op, "filePath": "main.cpp", "line": line, "character": character, "query": "total"}));
        assert_eq!(out["operation"], op, "{out:#}");
        assert_eq!(out["filePath"], "main.cpp", "{out:#}");
        out["result"].as_str().unwrap_or("").to_string()
    };
    // `total(s, s)` in main, `total`'s own name, and `a.area()` in it.
    let (call, total, area) = ((9, 27), (5, 8), (5, 57));
    assert_eq!(
        at("goToDefinition", call.0, call.1),
        "Defined in main.cpp:5:8"
    );
    // The pure virtual Shape::area is implemented by Square::area, defined in main.cpp.
    assert_eq!(
        at("goToImplementation", area.0, area.1),
        "Implemented in main.cpp:3:16"
    );
    assert_eq!(
        at("findReferences", total.0, total.1),
        "Found 2 references across 1 file:\n  main.cpp:5:8\n  main.cpp:9:27"
    );
    let hover = at("hover", total.0, total.1);
    assert!(
        hover.starts_with("Hover at 5:8:\n")
            && hover.contains("double total(const Shape &a, const Shape &b)"),
        "{hover}"
    );
    assert_eq!(
        at("documentSymbol", 1, 1),
        "Document symbols:\nSquare::area (Method) - line 3\ntotal (Function) - line 5\nmain (Function) - line 7"
    );
    // clangd answers from its index of the open file, built after parsing it.
    assert_eq!(
        at("workspaceSymbol", 1, 1),
        "Found 1 symbol matching `total`:\n  total (Function) - main.cpp:5:8"
    );
    assert_eq!(
        at("prepareCallHierarchy", total.0, total.1),
        "Call hierarchy item:\n  total (Function) - main.cpp:5:8"
    );
    assert_eq!(
        at("incomingCalls", total.0, total.1),
        "Found 1 incoming call to `total`:\n  main (Function) - main.cpp:7:5 [calls at 9:27]"
    );
    assert_eq!(
        at("outgoingCalls", total.0, total.1),
        "Found 1 outgoing call from `total`:\n  area (Method) - shapes.h:3:18 [called at 5:57, 5:68]"
    );

    // clangd's diagnostics, as `warden lsp diagnostics` prints them.
    p.write("bad.cpp", "int f() { return undefined_name; }\n");
    let o = p.run(&["lsp", "diagnostics", "bad.cpp", "main.cpp"]);
    assert_eq!(o.status.code(), Some(1), "{}", peers::text(&o));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "bad.cpp:1:18 error Use of undeclared identifier 'undefined_name' [clang]\n",
        "{}",
        peers::text(&o)
    );
}

#[test]
fn warden_context_lists_the_language_servers_and_their_extensions() {
    let p = Project::new(json!({
        "cpp": {"command": "clangd", "extensionToLanguage": {".cpp": "cpp", ".h": "cpp"}},
        "python": {"command": "pyright-langserver", "args": ["--stdio"], "extensionToLanguage": {".py": "python"}}
    }));
    let o = p.run(&["context", "--no-hooks"]);
    assert!(o.status.success(), "{}", peers::text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains(
            "\nLSP servers (2):\n  plugin:langs:cpp: .cpp (cpp), .h (cpp)\n  plugin:langs:python: .py (python)\n"
        ),
        "{out}"
    );
    let o = p.run(&["context", "--no-hooks", "--json"]);
    assert!(o.status.success(), "{}", peers::text(&o));
    let v: Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(
        v["lspServers"],
        json!([
            {"id": "plugin:langs:cpp", "command": "clangd", "error": null, "extensions": [
                {"extension": ".cpp", "language": "cpp"}, {"extension": ".h", "language": "cpp"}]},
            {"id": "plugin:langs:python", "command": "pyright-langserver", "error": null,
                "extensions": [{"extension": ".py", "language": "python"}]}
        ]),
        "{:#}",
        v["lspServers"]
    );
}

/// `warden mcp serve` over stdio, one JSON-RPC message a line.
struct McpServe {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    stdout: std::io::BufReader<std::process::ChildStdout>,
}

impl McpServe {
    fn start(p: &Project) -> McpServe {
        use std::process::Stdio;
        let mut child = Command::new(env!("CARGO_BIN_EXE_warden"))
            .args(["mcp", "serve", "--cwd"])
            .arg(&p.dir)
            .arg("--plugin-dir")
            .arg(&p.plugin)
            .env("WARDEN_NO_CLAUDE_CONFIG", "1")
            .env("WARDEN_HOME", &p.home)
            .env("WARDEN_MANAGED_SETTINGS_DIR", "")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start warden mcp serve");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = std::io::BufReader::new(child.stdout.take().expect("stdout"));
        let mut s = McpServe {
            child,
            stdin,
            stdout,
        };
        s.call(
            0,
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "lsp-test", "version": "0"}}),
        );
        s.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        s
    }

    fn send(&mut self, v: &Value) {
        use std::io::Write;
        writeln!(self.stdin, "{v}").expect("write");
        self.stdin.flush().expect("flush");
    }

    fn call(&mut self, id: u64, method: &str, params: Value) -> Value {
        use std::io::BufRead;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let mut line = String::new();
            let n = self.stdout.read_line(&mut line).expect("read");
            assert!(
                n > 0,
                "warden mcp serve closed its output before answering {method}"
            );
            let v: Value = serde_json::from_str(&line).expect("a JSON-RPC line");
            if v["id"] == id {
                return v;
            }
        }
    }
}

impl Drop for McpServe {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn the_lsp_tool_is_offered_by_warden_mcp_serve() {
    let p = cpp_project();
    p.write(
        ".claude/settings.json",
        &json!({"permissions": {"allow": ["LSP"]}}).to_string(),
    );
    let mut s = McpServe::start(&p);
    let list = s.call(1, "tools/list", json!({}));
    let tools = list["result"]["tools"].as_array().expect("tools");
    let lsp = tools
        .iter()
        .find(|t| t["name"] == "LSP")
        .unwrap_or_else(|| panic!("no LSP tool in {list:#}"));
    assert_eq!(
        lsp["inputSchema"]["properties"]["operation"]["enum"]
            .as_array()
            .map(Vec::len),
        Some(9),
        "{lsp:#}"
    );
    let call = s.call(
        2,
        "tools/call",
        json!({"name": "LSP", "arguments": {"operation": "goToDefinition", "filePath": "main.cpp", "line": 9, "character": 27}}),
    );
    let r = &call["result"];
    assert_eq!(r["isError"], false, "{call:#}");
    assert_eq!(
        r["content"][0]["text"], "Defined in main.cpp:5:8",
        "{call:#}"
    );
    assert_eq!(
        r["structuredContent"],
        json!({"operation": "goToDefinition", "result": "Defined in main.cpp:5:8",
            "filePath": "main.cpp", "resultCount": 1, "fileCount": 1}),
        "{call:#}"
    );
    // The server is the session's: a second call reuses it.
    let call = s.call(
        3,
        "tools/call",
        json!({"name": "LSP", "arguments": {"operation": "findReferences", "filePath": "main.cpp", "line": 5, "character": 8}}),
    );
    assert_eq!(
        call["result"]["structuredContent"]["resultCount"], 2,
        "{call:#}"
    );
    // A project without language servers offers no LSP tool.
    let bare = Project::new(json!({}));
    let mut s = McpServe::start(&bare);
    let list = s.call(1, "tools/list", json!({}));
    let names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(!names.is_empty() && !names.contains(&"LSP"), "{names:?}");
}

fn toy_config(plugin_script: &str, extra: &[&str]) -> Value {
    let mut args = vec![format!("${{CLAUDE_PLUGIN_ROOT}}/{plugin_script}")];
    args.extend(extra.iter().map(|s| s.to_string()));
    json!({"toy": {
        "command": "python3",
        "args": args,
        "extensionToLanguage": {".toy": "toy"}
    }})
}

fn toy_script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("crates/lsp/tests/fixtures/toy_server.py")
}

fn find(dir: &Path, name: &str) -> Option<PathBuf> {
    for e in std::fs::read_dir(dir).ok()?.flatten() {
        let p = e.path();
        if p.file_name().is_some_and(|n| n == name) {
            return Some(p);
        }
        if p.is_dir()
            && let Some(f) = find(&p, name)
        {
            return Some(f);
        }
    }
    None
}

#[test]
fn a_server_is_refused_the_env_file_and_denied_files_are_never_opened() {
    let p = Project::new(toy_config(
        "toy_server.py",
        &[
            "--read",
            "${CLAUDE_PROJECT_DIR}/.env",
            "--log",
            "${CLAUDE_PLUGIN_DATA}/toy.log",
        ],
    ));
    std::fs::copy(toy_script(), p.plugin.join("toy_server.py")).expect("copy the toy server");
    p.write(".env", "API_TOKEN=hunter2\n");
    p.write("a.toy", "first line\n");
    p.write("secret.toy", "PASSWORD=swordfish\n");
    p.write(
        ".claude/settings.json",
        &json!({"permissions": {"deny": ["Read(./secret.toy)"]}}).to_string(),
    );

    let o = p.run(&["lsp", "diagnostics", "a.toy"]);
    let out = peers::text(&o);
    assert!(
        out.contains("a.toy:1:1 warning text: first line [toy]"),
        "{out}"
    );
    // The server tried: the sandbox refused it, and the secret never reached it.
    assert!(
        out.contains("refused: [Errno 13] Permission denied"),
        "{out}"
    );
    assert!(!out.contains("hunter2"), "{out}");

    for denied in ["secret.toy", ".env.toy"] {
        p.write(".env.toy", "X=1\n");
        let o = p.run(&["lsp", "diagnostics", denied]);
        let out = peers::text(&o);
        assert_eq!(o.status.code(), Some(1), "{out}");
        assert!(!out.contains("swordfish"), "{out}");
        if denied == "secret.toy" {
            assert!(
                out.contains("the permission rules deny reading it"),
                "{out}"
            );
        } else {
            assert!(out.contains("is a .env file"), "{out}");
        }
    }
    let log = find(&p.home, "toy.log").expect("the toy server's log in its data directory");
    let log = std::fs::read_to_string(log).expect("log");
    assert_eq!(
        log.matches("textDocument/didOpen").count(),
        1,
        "only a.toy was ever opened:\n{log}"
    );
    assert!(
        log.contains("shutdown\nexit\n"),
        "shut down gracefully:\n{log}"
    );
}

#[test]
fn a_malformed_lsp_json_fails_validation_at_its_positions() {
    let p = Project::new(json!({}));
    std::fs::write(
        p.plugin.join(".lsp.json"),
        "{\n  \"py\": {\n    \"command\": \"pyright-langserver --stdio\",\n    \"extensionToLanguage\": {\"py\": \"python\"},\n    \"requestTimeout\": \"soon\",\n    \"colour\": 1\n  }\n}\n",
    )
    .expect("write");
    let o = Command::new(env!("CARGO_BIN_EXE_warden"))
        .args(["plugin", "validate"])
        .arg(&p.plugin)
        .env("WARDEN_HOME", &p.home)
        .output()
        .expect("validate");
    let out = peers::text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    let file = p.plugin.join(".lsp.json").display().to_string();
    for (pos, what) in [
        ("3:5", "`command` `pyright-langserver --stdio` has spaces"),
        ("4:29", "`extensionToLanguage.py` is not a file extension"),
        (
            "5:5",
            "`requestTimeout` must be a positive number of milliseconds",
        ),
        ("6:5", "unknown field `colour`"),
    ] {
        let want = format!("{file}:{pos}: LSP server `py`: {what}");
        assert!(out.contains(&want), "{want}\n{out}");
    }
    // An invalid server is skipped: no LSP tool, nothing to list.
    let o = p.run(&["lsp", "list", "--json"]);
    assert_eq!(
        serde_json::from_slice::<Value>(&o.stdout).expect("JSON"),
        json!([])
    );
}
