//! Test helpers: file trees, git repositories, a git daemon.
#![allow(dead_code)]

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::Value;

/// Writes `files` (relative path, contents) under `root`.
/// The smallest valid WebAssembly component (`(component)`): install checks that a declared
/// component's file is one, and these tests decide things before anything is compiled.
pub const EMPTY_COMPONENT: &str = "\0asm\x0d\0\x01\0";

pub fn write_tree(root: &Path, files: &[(&str, &str)]) {
    for (p, c) in files {
        let f = root.join(p);
        std::fs::create_dir_all(f.parent().expect("parent")).expect("mkdir");
        std::fs::write(&f, c).expect("write");
    }
}

/// Reads a JSON file.
pub fn read_json(p: &Path) -> Value {
    serde_json::from_str(
        &std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display())),
    )
    .expect("json")
}

/// Runs git, panicking on failure.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .current_dir(dir)
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.com",
            "-c",
            "init.defaultBranch=main",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .output()
        .expect("git");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// Makes `dir` a git repository with everything committed; returns the commit.
pub fn git_init_commit(dir: &Path) -> String {
    if !dir.join(".git").exists() {
        git(dir, &["init", "-q"]);
    }
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "c", "--allow-empty"]);
    git(dir, &["rev-parse", "HEAD"])
}

/// `file://` URL of a path.
pub fn file_url(p: &Path) -> String {
    format!("file://{}", p.display())
}

/// A `git daemon` serving `base` on a free loopback port; killed on drop.
pub struct Daemon {
    child: Child,
    /// Port.
    pub port: u16,
}

impl Daemon {
    /// Starts the daemon and waits until it accepts connections.
    pub fn start(base: &Path) -> Daemon {
        let port = TcpListener::bind("127.0.0.1:0")
            .expect("bind")
            .local_addr()
            .expect("addr")
            .port();
        let mut child = Command::new("git")
            .args([
                "daemon",
                "--export-all",
                "--reuseaddr",
                &format!("--base-path={}", base.display()),
                &format!("--port={port}"),
                "--listen=127.0.0.1",
                &base.display().to_string(),
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("git daemon");
        for _ in 0..200 {
            if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return Daemon { child, port };
            }
            std::thread::sleep(std::time::Duration::from_millis(25));
        }
        let _ = child.kill();
        let _ = child.wait();
        panic!("git daemon did not start on port {port}");
    }

    /// `git://127.0.0.1:<port>/<rel>`.
    pub fn url(&self, rel: &str) -> String {
        format!("git://127.0.0.1:{}/{rel}", self.port)
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A scratch environment: home, project directory, marketplace directory.
pub struct Env {
    /// Keeps the temp dir alive.
    pub tmp: tempfile::TempDir,
    /// `$WARDEN_HOME`.
    pub home: PathBuf,
    /// Project (cwd).
    pub project: PathBuf,
}

impl Env {
    /// A fresh environment.
    pub fn new() -> Env {
        let tmp = tempfile::tempdir().expect("tmp");
        let home = tmp.path().join("home");
        let project = tmp.path().join("project");
        std::fs::create_dir_all(&home).expect("home");
        std::fs::create_dir_all(&project).expect("project");
        Env { tmp, home, project }
    }

    /// A path inside the temp dir.
    pub fn path(&self, rel: &str) -> PathBuf {
        self.tmp.path().join(rel)
    }

    /// A quiet manager.
    pub fn manager(&self) -> warden_plugins::PluginManager {
        warden_plugins::PluginManager::new(warden_config::Home::new(&self.home), &self.project)
            .quiet(true)
    }
}

/// A marketplace.json with the given entries.
pub fn marketplace_json(name: &str, entries: Value) -> String {
    serde_json::json!({"name": name, "owner": {"name": "Test"}, "plugins": entries}).to_string()
}

/// A simple plugin's files (`version` None = no version).
pub fn simple_plugin(root: &Path, name: &str, version: Option<&str>) {
    let mut m = serde_json::json!({"name": name, "description": "d"});
    if let Some(v) = version {
        m["version"] = v.into();
    }
    write_tree(
        root,
        &[
            (".claude-plugin/plugin.json", &m.to_string()),
            (
                "skills/review/SKILL.md",
                "---\nname: review\ndescription: Review code\n---\nBody\n",
            ),
            (
                "commands/deploy.md",
                "---\ndescription: Deploy\n---\nDeploy $ARGUMENTS\n",
            ),
            (
                "hooks/hooks.json",
                r#"{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"bash ${CLAUDE_PLUGIN_ROOT}/h.sh"}]}]}}"#,
            ),
            ("h.sh", "#!/bin/sh\nexit 0\n"),
        ],
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(root.join("h.sh"), std::fs::Permissions::from_mode(0o755))
            .expect("chmod");
    }
}
