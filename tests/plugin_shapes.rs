//! Real plugins keep working confined. `tests/fixtures/plugin-shapes` is a marketplace of
//! plugins shaped like published ones (a format-on-save hook that rewrites the edited file, a
//! bash+jq guard that exits 2, a python3 guard that answers with a JSON decision, a node
//! logger appending to its data directory, SessionStart and UserPromptSubmit hooks that add
//! project notes and the git branch to the context, a hook that is a jq program). The same
//! session runs through `warden hook` in two fresh, identical worlds: confined (the default)
//! and with the user's `sandbox.confinePlugins: false`. Every answer, exit code and side
//! effect must be the same, and each is also checked for what it should be, so a hook broken
//! the same way in both worlds fails too.
//!
//! Also here: what `warden plugin details` says about a plugin's programs (profile, grants,
//! the user's opt-out, recent refusals) and how `warden mcp list` explains a server the
//! sandbox stopped.

#![cfg(target_os = "linux")]

#[path = "support/peers.rs"]
mod peers;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

/// The shapes marketplace, copied into each world.
fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/plugin-shapes")
}

const PLUGINS: &[&str] = &[
    "fmt-on-save",
    "bash-guard",
    "file-guard",
    "session-log",
    "project-context",
    "tool-notes",
];

const SESSION: &str = "71cfac67-90e0-43e2-abeb-b74b74b35d8e";

/// `src/app.py` before and after format-on-save.
const UNFORMATTED: &str = "def main():   \n    return 1\t\n";
const FORMATTED: &str = "def main():\n    return 1\n";

/// A user (home with a git identity and a key), a git project on branch `feature/login`,
/// and a copy of the shapes marketplace.
struct World {
    _t: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
    warden_home: PathBuf,
    project: PathBuf,
    tmp: PathBuf,
    /// Directory holding `node`, `python3`, `jq` and `git`, first on the hooks' `PATH`.
    path: String,
}

impl World {
    fn new(confined: bool) -> World {
        let t = tempfile::tempdir().expect("tempdir");
        let root = t.path().canonicalize().expect("canonical");
        let home = root.join("home");
        let warden_home = home.join(".warden");
        let project = root.join("project");
        let tmp = root.join("tmp");
        for d in [
            home.join(".ssh"),
            warden_home.clone(),
            project.join(".claude"),
            project.join(".guard"),
            project.join("config"),
            project.join("src"),
            tmp.clone(),
        ] {
            std::fs::create_dir_all(d).expect("mkdir");
        }
        let files: &[(&Path, &str, &str)] = &[
            (&home, ".ssh/id_rsa", "SECRET-KEY\n"),
            (&home, ".bashrc", "# rc\n"),
            (
                &home,
                ".gitconfig",
                "[user]\n\tname = Dana Tester\n\temail = dana@example.com\n",
            ),
            (
                &project,
                "NOTES.md",
                "Use the staging database for experiments.\n",
            ),
            (
                &project,
                ".claude/conventions.md",
                "Prefer small functions.\n",
            ),
            (
                &project,
                ".guard/blocked-commands",
                "# never from an agent\npush origin main\nrm -rf /\n",
            ),
            (&project, ".protected", "config/*.prod.yml\n"),
            (&project, "config/app.prod.yml", "replicas: 3\n"),
            (&project, "src/app.py", UNFORMATTED),
            (&project, ".env", "API=SECRET-ENV\n"),
        ];
        for (dir, rel, body) in files {
            std::fs::write(dir.join(rel), body).expect("write");
        }
        let git = |args: &[&str]| {
            let out = Command::new("git")
                .args(args)
                .current_dir(&project)
                .env("HOME", &home)
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .output()
                .expect("git");
            assert!(out.status.success(), "git {args:?}: {}", text(&out));
        };
        git(&["init", "-q", "-b", "feature/login"]);
        git(&["add", "-A"]);
        git(&["commit", "-q", "-m", "init"]);
        copy_tree(&fixtures(), &root.join("market"));
        if !confined {
            std::fs::write(
                warden_home.join("settings.json"),
                json!({"sandbox": {"confinePlugins": false}}).to_string(),
            )
            .expect("settings");
        }
        // The interpreters the suite already relies on, found first on PATH in both worlds.
        let bin = root.join("bin");
        std::fs::create_dir_all(&bin).expect("bin");
        for (name, found) in [
            ("node", peers::node()),
            ("python3", peers::python3()),
            ("jq", which("jq")),
            ("git", which("git")),
        ] {
            std::os::unix::fs::symlink(&found, bin.join(name)).expect("symlink");
        }
        let path = format!("{}:/usr/local/bin:/usr/bin:/bin", bin.display());
        World {
            _t: t,
            root,
            home,
            warden_home,
            project,
            tmp,
            path,
        }
    }

    /// Adds the shapes marketplace and installs every plugin, consenting to what it asks.
    fn install_all(&self) {
        let market = self.root.join("market");
        let out = self.warden(
            &[
                "plugin",
                "marketplace",
                "add",
                market.to_str().expect("utf-8"),
            ],
            "",
        );
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        for p in PLUGINS {
            let out = self.warden(&["plugin", "install", &format!("{p}@shapes"), "--yes"], "");
            assert_eq!(out.status.code(), Some(0), "{p}: {}", text(&out));
        }
    }

    fn warden(&self, args: &[&str], stdin: &str) -> Output {
        let mut child = Command::new(env!("CARGO_BIN_EXE_warden"))
            .args(args)
            .current_dir(&self.project)
            .env("HOME", &self.home)
            .env("WARDEN_HOME", &self.warden_home)
            .env("WARDEN_NO_CLAUDE_CONFIG", "1")
            .env("WARDEN_MANAGED_SETTINGS_DIR", "")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("TMPDIR", &self.tmp)
            .env("PATH", &self.path)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn warden");
        let _ = child
            .stdin
            .take()
            .expect("stdin")
            .write_all(stdin.as_bytes());
        child.wait_with_output().expect("wait")
    }

    /// A hook input shaped as Claude Code sends it (`reference-payloads/hook_stdin`), for
    /// this world's paths.
    fn payload(&self, event: &str, extra: Value) -> String {
        let transcript = self
            .home
            .join(".claude/projects/-project")
            .join(format!("{SESSION}.jsonl"));
        let mut v = json!({
            "session_id": SESSION,
            "transcript_path": transcript.display().to_string(),
            "cwd": self.project.display().to_string(),
            "hook_event_name": event,
        });
        if !matches!(event, "SessionStart") {
            v["prompt_id"] = json!("9c901b05-ad04-4a4c-8f8e-b5d552c5c5cf");
            v["permission_mode"] = json!("default");
            v["effort"] = json!({"level": "medium"});
        }
        if let (Some(o), Value::Object(e)) = (v.as_object_mut(), extra) {
            o.extend(e);
        }
        v.to_string()
    }

    /// `warden hook EVENT` with `payload`, paths of this world written as `<root>`.
    fn hook(&self, event: &str, payload: &str) -> Run {
        let out = self.warden(&["hook", event, "--verbose"], payload);
        let root = self.root.display().to_string();
        Run {
            code: out.status.code(),
            stdout: String::from_utf8_lossy(&out.stdout).replace(&root, "<root>"),
            stderr: String::from_utf8_lossy(&out.stderr).replace(&root, "<root>"),
        }
    }

    fn data_dir(&self, plugin: &str) -> PathBuf {
        let dirs: Vec<PathBuf> = std::fs::read_dir(self.warden_home.join("plugins/data"))
            .expect("data dirs")
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with(&format!("{plugin}-shapes")))
            })
            .collect();
        assert_eq!(dirs.len(), 1, "data dirs of {plugin}: {dirs:?}");
        dirs[0].clone()
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl Run {
    fn json(&self) -> Value {
        if self.stdout.trim().is_empty() {
            return Value::Null;
        }
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {self:?}"))
    }
}

fn text(out: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn which(name: &str) -> PathBuf {
    std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|d| d.join(name))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("`{name}` is not on PATH; the plugin shapes need it"))
}

/// Copies a directory tree, keeping file modes (an executable hook stays executable).
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read_dir") {
        let e = e.expect("entry");
        let target = to.join(e.file_name());
        if e.file_type().expect("type").is_dir() {
            copy_tree(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).expect("copy");
        }
    }
}

/// Every file under `dir` (relative path → contents), leaving out `skip` entries.
fn snapshot(dir: &Path, skip: &[&str]) -> BTreeMap<String, String> {
    fn walk(base: &Path, dir: &Path, skip: &[&str], out: &mut BTreeMap<String, String>) {
        for e in std::fs::read_dir(dir)
            .expect("read_dir")
            .filter_map(Result::ok)
        {
            let p = e.path();
            let rel = p
                .strip_prefix(base)
                .expect("under base")
                .display()
                .to_string();
            if skip.contains(&rel.as_str()) {
                continue;
            }
            if p.is_dir() {
                walk(base, &p, skip, out);
            } else {
                let body = std::fs::read(&p).expect("read");
                out.insert(rel, String::from_utf8_lossy(&body).into_owned());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, skip, &mut out);
    out
}

/// One session: what each step sends, in order.
fn session(w: &World) -> Vec<(&'static str, &'static str, String)> {
    let app = w.project.join("src/app.py").display().to_string();
    let prod = w.project.join("config/app.prod.yml").display().to_string();
    vec![
        (
            "start",
            "SessionStart",
            w.payload("SessionStart", json!({"source": "startup"})),
        ),
        (
            "prompt",
            "UserPromptSubmit",
            w.payload(
                "UserPromptSubmit",
                json!({"prompt": "add a test for the login form"}),
            ),
        ),
        (
            "push",
            "PreToolUse",
            w.payload(
                "PreToolUse",
                json!({"tool_name": "Bash", "tool_input": {"command": "git -C . push origin main"}, "tool_use_id": "toolu_fake0019a900f6"}),
            ),
        ),
        (
            "ls",
            "PreToolUse",
            w.payload(
                "PreToolUse",
                json!({"tool_name": "Bash", "tool_input": {"command": "ls -la", "description": "list"}, "tool_use_id": "toolu_fake00ecf6938b"}),
            ),
        ),
        (
            "write-prod",
            "PreToolUse",
            w.payload(
                "PreToolUse",
                json!({"tool_name": "Write", "tool_input": {"file_path": prod, "content": "replicas: 0\n"}, "tool_use_id": "toolu_fake0089ac8181"}),
            ),
        ),
        (
            "edit-app",
            "PreToolUse",
            w.payload(
                "PreToolUse",
                json!({"tool_name": "Edit", "tool_input": {"file_path": app, "old_string": "1", "new_string": "2", "replace_all": false}, "tool_use_id": "toolu_fake0193b8dbcf"}),
            ),
        ),
        (
            "edited-app",
            "PostToolUse",
            w.payload(
                "PostToolUse",
                json!({"tool_name": "Edit",
                    "tool_input": {"file_path": app, "old_string": "1", "new_string": "2", "replace_all": false},
                    "tool_response": {"filePath": app, "oldString": "1", "newString": "2", "originalFile": UNFORMATTED,
                        "structuredPatch": [], "userModified": false, "replaceAll": false},
                    "tool_use_id": "toolu_fake0193b8dbcf", "duration_ms": 35}),
            ),
        ),
        (
            "listed",
            "PostToolUse",
            w.payload(
                "PostToolUse",
                json!({"tool_name": "Bash", "tool_input": {"command": "ls -la", "description": "list"},
                    "tool_response": {"stdout": "README.md\n", "stderr": "", "interrupted": false, "isImage": false, "noOutputExpected": false},
                    "tool_use_id": "toolu_fake00ecf6938b", "duration_ms": 527}),
            ),
        ),
        (
            "stop",
            "Stop",
            w.payload(
                "Stop",
                json!({"stop_hook_active": false, "last_assistant_message": "done", "background_tasks": [], "session_crons": []}),
            ),
        ),
        (
            "end",
            "SessionEnd",
            w.payload("SessionEnd", json!({"reason": "other"})),
        ),
    ]
}

/// What each step must answer, in either world.
fn check_step(world: &str, step: &str, r: &Run) {
    let v = r.json();
    let ctx = |event: &str| {
        assert_eq!(
            v["hookSpecificOutput"]["hookEventName"], event,
            "{world} {step}: {r:?}"
        );
        v["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .unwrap_or_else(|| panic!("{world} {step}: no additionalContext: {r:?}"))
            .to_string()
    };
    match step {
        "start" => {
            let c = ctx("SessionStart");
            assert!(
                c.contains("Branch: feature/login (commits by Dana Tester)"),
                "{world}: {r:?}"
            );
            assert!(c.contains("staging database"), "{world}: {r:?}");
        }
        "prompt" => {
            let c = ctx("UserPromptSubmit");
            assert!(c.contains("Prefer small functions."), "{world}: {r:?}");
            assert!(c.contains("make test"), "{world}: {r:?}");
        }
        // The guard's exit 2 and stderr become the bridge's deny and its reason.
        "push" => {
            assert_eq!(
                v["hookSpecificOutput"]["permissionDecision"], "deny",
                "{world}: the guard did not block: {r:?}"
            );
            assert!(
                v["hookSpecificOutput"]["permissionDecisionReason"]
                    .as_str()
                    .is_some_and(|s| s.contains(
                        "bash-guard: `git -C . push origin main` is blocked in this project"
                    )),
                "{world}: {r:?}"
            );
        }
        "write-prod" => {
            assert_eq!(
                v["hookSpecificOutput"]["permissionDecision"], "deny",
                "{world}: the guard did not deny: {r:?}"
            );
            assert!(
                v["hookSpecificOutput"]["permissionDecisionReason"]
                    .as_str()
                    .is_some_and(|s| s.contains("config/app.prod.yml is protected")),
                "{world}: {r:?}"
            );
        }
        "ls" | "edit-app" => {
            assert_eq!(r.code, Some(0), "{world} {step}: {r:?}");
            assert!(
                v["hookSpecificOutput"]["permissionDecision"].is_null(),
                "{world} {step}: {r:?}"
            );
        }
        "edited-app" => assert_eq!(
            v["systemMessage"], "fmt-on-save: formatted src/app.py",
            "{world}: {r:?}"
        ),
        "listed" => assert_eq!(
            v["systemMessage"], "tool-notes: ran `ls -la`",
            "{world}: {r:?}"
        ),
        _ => assert!(v.is_null(), "{world} {step}: {r:?}"),
    }
    assert_eq!(r.code, Some(0), "{world} {step}: {r:?}");
}

/// Everything a world ends with that the plugins could have changed.
fn side_effects(w: &World) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for (k, v) in snapshot(&w.project, &[".git"]) {
        out.insert(format!("project/{k}"), v);
    }
    for (k, v) in snapshot(&w.home, &[".warden"]) {
        out.insert(format!("home/{k}"), v);
    }
    // Files only: a confined plugin's data directory is created before its first program
    // starts, an unconfined one's when the program makes it, so an empty one is no effect.
    for (k, v) in snapshot(&w.warden_home.join("plugins/data"), &[]) {
        out.insert(format!("data/{k}"), v);
    }
    for (k, v) in snapshot(&w.tmp, &[]) {
        out.insert(format!("tmp/{k}"), v);
    }
    out
}

#[test]
fn real_plugin_shapes_answer_and_act_the_same_confined_and_unconfined() {
    let confined = World::new(true);
    let open = World::new(false);
    confined.install_all();
    open.install_all();
    let mut answers = Vec::new();
    for (w, name) in [(&confined, "confined"), (&open, "unconfined")] {
        let runs: Vec<(&str, Run)> = session(w)
            .into_iter()
            .map(|(step, event, payload)| (step, w.hook(event, &payload)))
            .collect();
        for (step, r) in &runs {
            check_step(name, step, r);
        }
        answers.push(runs);
    }
    let (a, b) = (&answers[0], &answers[1]);
    for ((step, c), (_, o)) in a.iter().zip(b) {
        assert_eq!(
            (c.code, &c.stdout),
            (o.code, &o.stdout),
            "step {step}: confined and unconfined answers differ\nconfined: {c:?}\nunconfined: {o:?}"
        );
    }

    let (c, o) = (side_effects(&confined), side_effects(&open));
    assert_eq!(c, o, "confined and unconfined side effects differ");
    // What the effects are, so the same breakage in both worlds cannot pass.
    assert_eq!(c["project/src/app.py"], FORMATTED);
    assert_eq!(c["project/config/app.prod.yml"], "replicas: 3\n");
    assert_eq!(c["project/.env"], "API=SECRET-ENV\n");
    assert_eq!(c["home/.bashrc"], "# rc\n");
    let data = confined.data_dir("session-log");
    let data = data.file_name().and_then(|n| n.to_str()).expect("name");
    let log: Vec<Value> = c[&format!("data/{data}/events.jsonl")]
        .lines()
        .map(|l| serde_json::from_str(l).expect("log line"))
        .collect();
    let events: Vec<String> = log
        .iter()
        .map(|e| {
            format!(
                "{}:{}",
                e["event"].as_str().unwrap_or(""),
                e["tool"].as_str().unwrap_or("")
            )
        })
        .collect();
    assert_eq!(
        events,
        [
            "SessionStart:",
            "UserPromptSubmit:",
            "PreToolUse:Bash",
            "PreToolUse:Bash",
            "PreToolUse:Write",
            "PreToolUse:Edit",
            "PostToolUse:Edit",
            "PostToolUse:Bash",
            "Stop:",
            "SessionEnd:",
        ]
    );
    assert!(log.iter().all(|e| e["session"] == SESSION), "{log:?}");
    let counts: Value =
        serde_json::from_str(&c[&format!("data/{data}/counts.json")]).expect("counts.json");
    assert_eq!(counts["PreToolUse"], 4, "{counts}");
    // format-on-save's temporary copy went with it, in both worlds.
    assert!(
        !c.keys().any(|k| k.starts_with("tmp/")),
        "left in TMPDIR: {c:?}"
    );
}

/// The comparison sees a plugin that needs more than it was given: format-on-save loaded
/// with `--plugin-dir` has no grant to write the project, so confined it cannot format, and
/// the refusal says which grant would allow it.
#[test]
fn a_missing_grant_shows_as_a_difference_and_names_the_grant() {
    let confined = World::new(true);
    let open = World::new(false);
    let run = |w: &World| {
        let plugin = w.root.join("market/fmt-on-save");
        let app = w.project.join("src/app.py").display().to_string();
        let payload = w.payload(
            "PostToolUse",
            json!({"tool_name": "Write", "tool_input": {"file_path": app, "content": UNFORMATTED},
                "tool_response": {"type": "create", "filePath": app, "content": UNFORMATTED,
                    "structuredPatch": [], "originalFile": null, "userModified": false},
                "tool_use_id": "toolu_fake0089ac8181", "duration_ms": 41}),
        );
        let out = w.warden(
            &[
                "hook",
                "PostToolUse",
                "--verbose",
                "--plugin-dir",
                plugin.to_str().expect("utf-8"),
            ],
            &payload,
        );
        let formatted = std::fs::read_to_string(w.project.join("src/app.py")).expect("app");
        (out, formatted)
    };
    let (out, formatted) = run(&open);
    assert_eq!(formatted, FORMATTED, "{}", text(&out));
    let (out, formatted) = run(&confined);
    assert_eq!(formatted, UNFORMATTED, "{}", text(&out));
    let app = confined.project.join("src/app.py");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(&format!(
            "warden: the sandbox refused plugin `fmt-on-save@--plugin-dir` writing {}; a plugin loaded with --plugin-dir gets the default profile only; to allow it, install it (warden plugin install) and run: warden plugin grant fmt-on-save --write {}",
            app.display(),
            app.display()
        )),
        "{}",
        text(&out)
    );
}
