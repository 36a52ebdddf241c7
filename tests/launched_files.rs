//! The files configured hooks and approved MCP servers start cannot be changed by a call:
//! a project hook `bash scripts/fmt.sh`, a hook `"$CLAUDE_PROJECT_DIR"/tools/guard.sh`, a
//! local one `sh ./bin/lint.sh`, a user one `sh ~/bin/notify.sh` (which reads its script)
//! and an approved `.mcp.json` server `node
//! server/index.js` point at files the model could otherwise rewrite with the Bash tool or
//! the file tools, so that the next event or server start runs its payload. The hooks still
//! run, and the rest of the project stays writable.

#![cfg(target_os = "linux")]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};

struct World {
    _t: tempfile::TempDir,
    home: PathBuf,
    warden_home: PathBuf,
    project: PathBuf,
}

const SCRIPTS: &[&str] = &[
    "scripts/fmt.sh",
    "tools/guard.sh",
    "server/index.js",
    "bin/lint.sh",
];

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, text).expect("write");
}

impl World {
    fn new() -> World {
        let t = tempfile::tempdir().expect("tempdir");
        let root = t.path().canonicalize().expect("canonical");
        let home = root.join("home");
        let warden_home = home.join(".warden");
        let project = root.join("project");
        std::fs::create_dir_all(&warden_home).expect("mkdir");
        for s in SCRIPTS {
            write(&project.join(s), &format!("echo ran {s} >> hook.log\n"));
        }
        write(&project.join("README.md"), "hello\n");
        write(&home.join("bin/notify.sh"), "echo ran notify >> hook.log\n");
        let hook = |command: &str| json!({"hooks": [{"type": "command", "command": command}]});
        write(
            &project.join(".claude/settings.json"),
            &json!({"hooks": {"PreToolUse": [
                hook("bash scripts/fmt.sh"),
                hook("sh \"$CLAUDE_PROJECT_DIR\"/tools/guard.sh"),
            ]}})
            .to_string(),
        );
        // The local file names its script with `./`, exec form.
        write(
            &project.join(".claude/settings.local.json"),
            &json!({"hooks": {"PreToolUse": [{"hooks": [
                {"type": "command", "command": "sh", "args": ["./bin/lint.sh"]}
            ]}]}})
            .to_string(),
        );
        write(
            &project.join(".mcp.json"),
            &json!({"mcpServers": {"srv": {"command": "node", "args": ["server/index.js"]}}})
                .to_string(),
        );
        write(
            &warden_home.join("settings.json"),
            &json!({
                "enabledMcpjsonServers": ["srv"],
                "hooks": {"PreToolUse": [hook("sh ~/bin/notify.sh")]},
            })
            .to_string(),
        );
        World {
            _t: t,
            home,
            warden_home,
            project,
        }
    }

    fn tool(&self, name: &str, input: Value) -> Output {
        Command::new(env!("CARGO_BIN_EXE_warden"))
            .args([
                "tool",
                name,
                "--yes",
                "--input",
                &input.to_string(),
                "--cwd",
            ])
            .arg(&self.project)
            .current_dir(&self.project)
            .env("HOME", &self.home)
            .env("WARDEN_HOME", &self.warden_home)
            .env("WARDEN_NO_CLAUDE_CONFIG", "1")
            .env("WARDEN_MANAGED_SETTINGS_DIR", "")
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .output()
            .expect("run warden")
    }

    fn bash(&self, command: &str) -> Output {
        self.tool("Bash", json!({"command": command, "timeout": 20_000}))
    }

    fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.project.join(rel)).unwrap_or_default()
    }
}

fn text(o: &Output) -> String {
    format!(
        "exit {:?}\nstdout: {}\nstderr: {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn the_bash_tool_cannot_rewrite_a_script_a_hook_or_server_starts() {
    let w = World::new();
    let mut problems = Vec::new();
    for s in SCRIPTS {
        let before = w.read(s);
        for attack in [
            format!("echo payload >> {s}"),
            format!("sed -i 's/ran/payload/' {s}"),
            format!("rm -f {s}; echo payload > {s}"),
            format!("mv {s} {s}.old; echo payload > {s}"),
        ] {
            let out = w.bash(&attack);
            let after = w.read(s);
            if after != before {
                problems.push(format!(
                    "`{attack}` changed {s} to {after:?}: {}",
                    text(&out)
                ));
                write(&w.project.join(s), &before);
            }
        }
    }
    let home_script = w.home.join("bin/notify.sh");
    assert_eq!(
        std::fs::read_to_string(&home_script).expect("notify.sh"),
        "echo ran notify >> hook.log\n"
    );
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));

    // The rest of the project is still the call's to change, and every hook still runs.
    let out = w.bash("echo note >> notes.txt");
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(w.read("notes.txt"), "note\n");
    let log = w.read("hook.log");
    for s in ["scripts/fmt.sh", "tools/guard.sh", "bin/lint.sh", "notify"] {
        assert!(log.contains(&format!("ran {s}")), "{s} did not run: {log}");
    }
}

#[test]
fn the_file_tools_refuse_a_script_a_hook_or_server_starts() {
    let w = World::new();
    let mut problems = Vec::new();
    for s in SCRIPTS {
        let before = w.read(s);
        let path = w.project.join(s).display().to_string();
        let calls = [
            (
                "Write",
                json!({"file_path": path, "content": "echo payload\n"}),
            ),
            (
                "Edit",
                json!({"file_path": path, "old_string": "ran", "new_string": "payload"}),
            ),
        ];
        for (tool, input) in calls {
            let out = w.tool(tool, input);
            let after = w.read(s);
            if after != before {
                problems.push(format!("{tool} changed {s} to {after:?}: {}", text(&out)));
                write(&w.project.join(s), &before);
            } else if !text(&out).contains("a configured hook or MCP server runs") {
                problems.push(format!("{tool} on {s} does not say why: {}", text(&out)));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
    let out = w.tool(
        "Write",
        json!({"file_path": w.project.join("notes.txt"), "content": "note\n"}),
    );
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(w.read("notes.txt"), "note\n");
}
