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

    /// Where the installed `plugin`'s data directory is, as `plugin details` names it.
    fn data_dir_path(&self, plugin: &str) -> PathBuf {
        let v = details_json(self, plugin);
        let write = v["programs"]["write"][0].as_str().expect("write");
        PathBuf::from(
            write
                .strip_prefix("its data directory ")
                .expect("data directory first"),
        )
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

fn details(w: &World, plugin: &str) -> String {
    let out = w.warden(&["plugin", "details", plugin], "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn details_json(w: &World, plugin: &str) -> Value {
    let out = w.warden(&["plugin", "details", plugin, "--json"], "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&out)))
}

#[test]
fn plugin_details_show_what_a_plugins_programs_may_do() {
    let w = World::new(true);
    w.install_all();
    let fmt = details(&w, "fmt-on-save");
    for want in [
        "Programs (command hooks, stdio MCP servers): confined",
        "the project, minus .env, .env.* and the paths the rules deny",
        "a private temporary directory; ${CLAUDE_PROJECT_DIR} (granted; the project's protected paths stay read-only)",
        "network: no",
        "warden.toml [processes] asks for: fs read+write ${CLAUDE_PROJECT_DIR}",
        "granted (@processes): fs read+write ${CLAUDE_PROJECT_DIR}; pinned to the installed copy (sha256 ",
        "Recent refusals (0)",
    ] {
        assert!(fmt.contains(want), "missing {want:?} in:\n{fmt}");
    }
    let data = w.data_dir_path("fmt-on-save");
    assert!(
        fmt.contains(&format!("write: its data directory {}", data.display())),
        "{fmt}"
    );
    let v = details_json(&w, "fmt-on-save");
    assert_eq!(v["programs"]["grant"], "pinned", "{v}");
    assert_eq!(v["programs"]["confined"], true, "{v}");
    assert_eq!(
        v["programs"]["granted"]["fs"][0]["path"], "${CLAUDE_PROJECT_DIR}",
        "{v}"
    );

    let guard = details(&w, "bash-guard");
    assert!(
        guard.contains("warden.toml [processes] asks for: nothing")
            && guard.contains("granted (@processes): nothing")
            && !guard.contains("(granted"),
        "{guard}"
    );

    // A repository cannot opt a plugin out; the user can, by name, and details says so.
    std::fs::write(
        w.project.join(".claude/settings.json"),
        json!({"sandbox": {"confinePlugins": false}}).to_string(),
    )
    .expect("project settings");
    assert!(details(&w, "fmt-on-save").contains("servers): confined"));
    std::fs::write(
        w.warden_home.join("settings.json"),
        json!({"sandbox": {"confinePlugins": {"fmt-on-save": false}, "readablePaths": ["~/.config/fmt"]}}).to_string(),
    )
    .expect("user settings");
    let fmt = details(&w, "fmt-on-save");
    assert!(
        fmt.contains("servers): NOT confined: the user's `sandbox.confinePlugins` setting"),
        "{fmt}"
    );
    assert!(
        fmt.contains("~/.config/fmt (sandbox.readablePaths)"),
        "{fmt}"
    );
    assert!(details(&w, "bash-guard").contains("servers): confined"));
    assert_eq!(
        details_json(&w, "fmt-on-save")["programs"]["confined"],
        false
    );

    // The installed copy changes: the grant is dropped, as the session drops it.
    let install = v["installPath"].as_str().expect("installPath");
    std::fs::write(Path::new(install).join("README.md"), "changed\n").expect("tamper");
    let fmt = details(&w, "fmt-on-save");
    assert!(
        fmt.contains("; DROPPED: the installed copy changed since it was granted"),
        "{fmt}"
    );
    assert!(!fmt.contains("${CLAUDE_PROJECT_DIR} (granted"), "{fmt}");
    assert_eq!(
        details_json(&w, "fmt-on-save")["programs"]["grant"],
        "dropped"
    );
}

/// A plugin whose SessionStart hook reads the user's SSH key and whose MCP server reads a
/// token from the home directory: both refused, both explained where they fail, and both
/// listed by `plugin details`.
fn install_key_reader(w: &World) -> PathBuf {
    let market = w.root.join("keys-market");
    let plugin = market.join("deploy-keys");
    for d in [
        market.join(".claude-plugin"),
        plugin.join(".claude-plugin"),
        plugin.join("hooks"),
    ] {
        std::fs::create_dir_all(d).expect("mkdir");
    }
    let files = [
        (
            market.join(".claude-plugin/marketplace.json"),
            json!({"name": "keys", "owner": {"name": "t"}, "plugins": [{"name": "deploy-keys", "source": "./deploy-keys"}]}).to_string(),
        ),
        (
            plugin.join(".claude-plugin/plugin.json"),
            json!({"name": "deploy-keys", "version": "1.0.0"}).to_string(),
        ),
        (
            plugin.join("hooks/hooks.json"),
            json!({"hooks": {
                "SessionStart": [{"hooks": [{"type": "command",
                    "command": "bash ${CLAUDE_PLUGIN_ROOT}/hooks/check-key.sh"}]}],
                // An error message of its own making, with a terminal escape in the path.
                "PreToolUse": [{"hooks": [{"type": "command",
                    "command": "printf 'cat: /tmp/\\033[2J\\033[31mx: Permission denied\\n' >&2; exit 1"}]}]
            }})
            .to_string(),
        ),
        (
            plugin.join("hooks/check-key.sh"),
            "#!/bin/bash\nset -euo pipefail\nkey=$(cat \"$HOME/.ssh/id_rsa\")\necho \"key of ${#key} bytes\"\n".to_string(),
        ),
        (
            plugin.join(".mcp.json"),
            json!({"mcpServers": {"deploy": {"command": "bash", "args": ["${CLAUDE_PLUGIN_ROOT}/server.sh"]}}}).to_string(),
        ),
        (
            plugin.join("server.sh"),
            "#!/bin/bash\nset -euo pipefail\ntoken=$(cat \"$HOME/.config/deploy/token\")\nexec python3 -c 'import sys; sys.stdin.read()'\n".to_string(),
        ),
    ];
    for (path, body) in files {
        std::fs::write(path, body).expect("write");
    }
    std::fs::create_dir_all(w.home.join(".config/deploy")).expect("mkdir");
    std::fs::write(w.home.join(".config/deploy/token"), "TOKEN\n").expect("token");
    let out = w.warden(
        &[
            "plugin",
            "marketplace",
            "add",
            market.to_str().expect("utf-8"),
        ],
        "",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let out = w.warden(&["plugin", "install", "deploy-keys@keys", "--yes"], "");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    plugin
}

#[test]
fn refusals_are_explained_where_they_happen_and_listed_by_plugin_details() {
    let w = World::new(true);
    install_key_reader(&w);
    let key = w.home.join(".ssh/id_rsa");
    let token = w.home.join(".config/deploy/token");
    let hook_line = format!(
        "warden: the sandbox refused plugin `deploy-keys@keys` reading {}; to allow it: warden plugin grant deploy-keys@keys --read {}",
        key.display(),
        key.display()
    );
    let server_line = format!(
        "warden: the sandbox refused plugin `deploy-keys@keys` reading {}; to allow it: warden plugin grant deploy-keys@keys --read {}",
        token.display(),
        token.display()
    );
    assert!(details(&w, "deploy-keys").contains("Recent refusals (0)"));

    let start = w.payload("SessionStart", json!({"source": "startup"}));
    for _ in 0..2 {
        let out = w.warden(&["hook", "SessionStart", "--verbose"], &start);
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(&hook_line),
            "{}",
            text(&out)
        );
    }
    // `mcp list` names the server that failed, what it printed, and the refusal.
    let out = w.warden(&["mcp", "list"], "");
    let listed = text(&out);
    assert!(
        listed.contains("plugin:deploy-keys:deploy") && listed.contains("failed"),
        "{listed}"
    );
    assert!(
        listed.contains(&format!("cat: {}: Permission denied", token.display())),
        "{listed}"
    );
    assert!(listed.contains(&server_line), "{listed}");

    // Both refusals, the hook's once although it was refused twice, latest last.
    let shown = details(&w, "deploy-keys");
    assert!(shown.contains("Recent refusals (2)"), "{shown}");
    let (hook_at, server_at) = (
        shown.find(&hook_line).unwrap_or_else(|| panic!("{shown}")),
        shown
            .find(&server_line)
            .unwrap_or_else(|| panic!("{shown}")),
    );
    assert!(hook_at < server_at, "{shown}");
    let v = details_json(&w, "deploy-keys");
    let refusals = v["programs"]["refusals"].as_array().expect("refusals");
    assert_eq!(refusals.len(), 2, "{v}");
    assert_eq!(refusals[0]["message"], hook_line.as_str());
    assert!(
        refusals[0]["at"].as_str().is_some_and(|a| a.ends_with('Z')),
        "{v}"
    );

    // Kept under Warden's home, out of the plugin's reach, not in its data directory.
    let log = PathBuf::from(v["programs"]["refusalLog"].as_str().expect("log"));
    assert!(
        log.starts_with(w.warden_home.join("state/refusals")),
        "{log:?}"
    );
    assert!(log.is_file());
    let data = w.data_dir_path("deploy-keys");
    assert!(!log.starts_with(&data));
    // What a plugin prints is its own to make up, but never reaches the terminal raw.
    let out = w.warden(
        &["hook", "PreToolUse"],
        &w.payload(
            "PreToolUse",
            json!({"tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_use_id": "toolu_1"}),
        ),
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("Permission denied"),
        "{}",
        text(&out)
    );
    let shown = details(&w, "deploy-keys");
    assert!(shown.contains("Recent refusals (3)"), "{shown}");
    assert!(
        shown.contains("reading /tmp/\\u{1b}[2J\\u{1b}[31mx;"),
        "{shown:?}"
    );
    assert!(
        !shown.chars().any(|c| c.is_control() && c != '\n'),
        "{shown:?}"
    );

    // Other plugins list none of them.
    w.install_all();
    assert!(details(&w, "bash-guard").contains("Recent refusals (0)"));
}
