//! Claude Code's own validator and installer on Warden's example plugins: the real
//! `@anthropic-ai/claude-code` at the version Warden tracks, installed with npm once per run
//! under the cargo target directory. A missing npm or a failed install fails the test: the
//! point is to catch plugins that Claude Code refuses.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

const VERSION: &str = "2.1.332";

fn repo_plugins() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("repo root")
        .join("plugins")
}

/// `<target>/claude-code`, beside the profile directory holding the warden binary.
fn install_dir() -> PathBuf {
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_warden"));
    let profile = bin.parent().expect("profile dir");
    profile.parent().unwrap_or(profile).join("claude-code")
}

fn version_of(claude: &Path) -> Option<String> {
    let out = Command::new(claude).arg("--version").output().ok()?;
    Some(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// The `claude` binary, installed on first use. Test threads share one install: the
/// `OnceLock` serialises them within this process, and an exclusive lock file serialises
/// concurrent runs of the test binary.
fn claude() -> &'static Path {
    static CLAUDE: OnceLock<PathBuf> = OnceLock::new();
    CLAUDE.get_or_init(|| {
        let dir = install_dir();
        std::fs::create_dir_all(&dir).expect("create the Claude Code install dir");
        let bin = dir.join("node_modules/.bin/claude");
        let lock = std::fs::File::create(dir.join(".install.lock")).expect("lock file");
        lock.lock().expect("lock the Claude Code install dir");
        if version_of(&bin).is_some_and(|v| v.starts_with(VERSION)) {
            return bin;
        }
        let out = Command::new("npm")
            .args([
                "install",
                "--no-save",
                "--no-audit",
                "--no-fund",
                "--prefix",
                dir.to_str().expect("utf-8 target dir"),
                &format!("@anthropic-ai/claude-code@{VERSION}"),
            ])
            .output()
            .unwrap_or_else(|e| {
                panic!("npm is needed to install Claude Code {VERSION} for this test: {e}")
            });
        assert!(
            out.status.success(),
            "npm install @anthropic-ai/claude-code@{VERSION} failed (this test needs the npm registry):\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let v = version_of(&bin);
        assert!(
            v.as_deref().is_some_and(|v| v.starts_with(VERSION)),
            "{} --version printed {v:?}, expected {VERSION}",
            bin.display()
        );
        bin
    })
}

/// Runs `claude` with a fresh HOME so no user configuration is read or written.
fn run(home: &Path, args: &[&str]) -> Output {
    Command::new(claude())
        .args(args)
        .env("HOME", home)
        .env_remove("CLAUDE_CONFIG_DIR")
        .env("DISABLE_AUTOUPDATER", "1")
        .output()
        .expect("run claude")
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Exit 0 and nothing Claude Code calls a warning.
fn assert_clean(out: &Output, what: &str) {
    let t = text(out);
    assert!(out.status.success(), "{what} failed:\n{t}");
    assert!(
        !t.to_lowercase().contains("warning") && !t.contains('⚠'),
        "{what} warned:\n{t}"
    );
}

fn example_plugins() -> Vec<String> {
    let mkt = std::fs::read_to_string(repo_plugins().join(".claude-plugin/marketplace.json"))
        .expect("marketplace.json");
    let mkt: serde_json::Value = serde_json::from_str(&mkt).expect("marketplace json");
    mkt["plugins"]
        .as_array()
        .expect("plugins")
        .iter()
        .map(|p| p["name"].as_str().expect("name").to_string())
        .collect()
}

#[test]
fn claude_code_validates_and_installs_the_example_plugins() {
    let home = tempfile::tempdir().expect("tempdir");
    let plugins = repo_plugins();
    let dir = plugins.to_str().expect("utf-8");
    assert_clean(
        &run(home.path(), &["plugin", "validate", dir]),
        "validate marketplace",
    );
    let names = example_plugins();
    assert!(
        names.contains(&"protect-secrets".to_string())
            && names.contains(&"warden-bridge".to_string())
    );
    for name in &names {
        let p = plugins.join(name);
        assert_clean(
            &run(
                home.path(),
                &["plugin", "validate", p.to_str().expect("utf-8")],
            ),
            &format!("validate {name}"),
        );
    }
    assert_clean(
        &run(home.path(), &["plugin", "marketplace", "add", dir]),
        "marketplace add",
    );
    for name in &names {
        let id = format!("{name}@warden-examples");
        let out = run(home.path(), &["plugin", "install", &id]);
        assert!(out.status.success(), "install {id}:\n{}", text(&out));
    }
    let out = run(home.path(), &["plugin", "list"]);
    let listed = text(&out);
    for name in &names {
        assert!(listed.contains(name), "{name} not listed:\n{listed}");
    }
}

/// The layout Warden used before warden.toml is refused by Claude Code: this is what the test
/// above guards against, and shows the validator can fail here.
#[test]
fn claude_code_refuses_warden_hooks_inside_plugin_json() {
    let home = tempfile::tempdir().expect("tempdir");
    let t = tempfile::tempdir().expect("tempdir");
    let old = t.path().join("protect-secrets");
    let src = repo_plugins().join("protect-secrets");
    std::fs::create_dir_all(old.join(".claude-plugin")).expect("mkdir");
    std::fs::create_dir_all(old.join("assets")).expect("mkdir");
    for f in ["README.md", "warden.toml", "assets/icon.svg"] {
        std::fs::copy(src.join(f), old.join(f)).expect("copy");
    }
    // The same plugin, its Warden part moved back into plugin.json.
    let mut manifest: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(src.join(".claude-plugin/plugin.json")).expect("plugin.json"),
    )
    .expect("json");
    manifest["warden"] = serde_json::json!({
        "components": {"guard": {"path": "wasm/protect_secrets.wasm", "world": "hook", "capabilities": {}}},
        "hooks": {"PreToolUse": [{"matcher": "Read|Edit|MultiEdit|Write|NotebookEdit|Bash",
                                  "hooks": [{"type": "wasm", "component": "guard", "timeout": 5, "onFailure": "block"}]}]}
    });
    std::fs::remove_file(old.join("warden.toml")).expect("rm");
    std::fs::write(
        old.join(".claude-plugin/plugin.json"),
        serde_json::to_string_pretty(&manifest).expect("json"),
    )
    .expect("write");
    let out = run(
        home.path(),
        &["plugin", "validate", old.to_str().expect("utf-8")],
    );
    let t = text(&out);
    assert!(!out.status.success(), "the old layout validated:\n{t}");
    assert!(t.contains("Unknown field 'warden'"), "{t}");
}

/// Starts `warden mcp serve` once and lists its tools, so the built-in tools are compiled into
/// `warden_home`'s cache before a client with a short health-check timeout asks for them (a
/// fresh home compiles them on the first `tools/list`, a few seconds on this machine).
fn warm_mcp_serve(warden_home: &Path, project: &Path) {
    use std::io::{BufRead, BufReader, Write};
    let mut child = Command::new(env!("CARGO_BIN_EXE_warden"))
        .args(["mcp", "serve", "--cwd"])
        .arg(project)
        .env("WARDEN_HOME", warden_home)
        .env("WARDEN_NO_CLAUDE_CONFIG", "1")
        .env("WARDEN_MANAGED_SETTINGS_DIR", "")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("start warden mcp serve");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    for line in [
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"warm","version":"0"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
    ] {
        writeln!(stdin, "{line}").expect("write");
    }
    let mut answer = String::new();
    for _ in 0..2 {
        answer.clear();
        stdout.read_line(&mut answer).expect("read");
    }
    assert!(answer.contains("\"Read\""), "tools/list: {answer}");
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn claude_code_connects_to_warden_mcp_serve() {
    let t = tempfile::tempdir().expect("tempdir");
    let home = t.path().join("home");
    let warden_home = t.path().join("warden");
    let project = t.path().join("proj");
    for d in [&home, &warden_home, &project] {
        std::fs::create_dir_all(d).expect("mkdir");
    }
    warm_mcp_serve(&warden_home, &project);
    let warden = env!("CARGO_BIN_EXE_warden");
    let env = format!("WARDEN_HOME={}", warden_home.display());
    let add = run(
        &home,
        &[
            "mcp",
            "add",
            "-s",
            "user",
            "warden",
            "-e",
            &env,
            "-e",
            "WARDEN_MANAGED_SETTINGS_DIR=",
            "--",
            warden,
            "mcp",
            "serve",
            "--cwd",
            project.to_str().expect("utf-8"),
        ],
    );
    assert!(add.status.success(), "claude mcp add:\n{}", text(&add));
    // `claude mcp list` starts each server, initializes it and lists its tools.
    let list = run(&home, &["mcp", "list"]);
    let out = text(&list);
    let line = out
        .lines()
        .find(|l| l.starts_with("warden:"))
        .unwrap_or_else(|| panic!("warden not listed:\n{out}"));
    assert!(line.contains("Connected"), "{out}");
    assert!(!line.contains("failed"), "{out}");
}
