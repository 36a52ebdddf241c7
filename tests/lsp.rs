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
use std::sync::OnceLock;

use serde_json::{Value, json};

/// The tests take turns: each starts servers, and two cores are all CI has.
static PYRIGHT_TURN: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The pinned pyright (npm `pyright`).
const PYRIGHT: &str = "1.1.414";

/// `node_modules/pyright/langserver.index.js`, installed on first use.
fn pyright() -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = peers::install_dir().join("pyright");
        let marker = peers::install_dir().join("pyright.installed");
        let lock = std::fs::File::create(peers::install_dir().join("pyright.lock")).expect("lock");
        lock.lock().expect("lock the pyright dir");
        let entry = dir.join("node_modules/pyright/langserver.index.js");
        if entry.is_file() && std::fs::read_to_string(&marker).is_ok_and(|m| m == PYRIGHT) {
            return dir;
        }
        let _ = std::fs::remove_file(&marker);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("mkdir pyright");
        let manifest = json!({"name": "warden-lsp-peers", "private": true,
            "dependencies": {"pyright": PYRIGHT}});
        std::fs::write(dir.join("package.json"), manifest.to_string()).expect("package.json");
        let out = Command::new(peers::npm())
            .args(["install", "--no-audit", "--no-fund"])
            .current_dir(&dir)
            .output()
            .expect("run npm");
        assert!(
            out.status.success(),
            "npm install pyright@{PYRIGHT} failed (the LSP tests need the npm registry once):\n{}",
            peers::text(&out)
        );
        assert!(entry.is_file(), "{} after npm install", entry.display());
        std::fs::write(&marker, PYRIGHT).expect("marker");
        dir
    })
    .join("node_modules/pyright/langserver.index.js")
}

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
        "args": [pyright().display().to_string(), "--stdio"],
        "extensionToLanguage": {".py": "python", ".pyi": "python"},
        "settings": {"python": {"analysis": {"typeCheckingMode": "basic"}}}
    }})
}

const LIB: &str = "def greet(name: str) -> str:\n    return \"hello \" + name\n";
const MAIN: &str =
    "from lib import greet\n\nmessage: int = greet(\"world\")\nprint(greet(\"again\"))\n";

#[test]
fn pyright_diagnostics_list_and_the_lsp_tool_on_a_real_server() {
    let _turn = PYRIGHT_TURN.lock().unwrap_or_else(|e| e.into_inner());
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
}

#[test]
fn a_write_through_the_session_gets_the_new_diagnostics_of_its_file() {
    let _turn = PYRIGHT_TURN.lock().unwrap_or_else(|e| e.into_inner());
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
    let _turn = PYRIGHT_TURN.lock().unwrap_or_else(|e| e.into_inner());
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
    let _turn = PYRIGHT_TURN.lock().unwrap_or_else(|e| e.into_inner());
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
