//! `warden context` and `warden skill` driven through the real binary: what a session in a
//! project loads and why, skills rendered with their `!` commands run only when the permission
//! rules allow them, the `InstructionsLoaded` hook fired once per loaded file, and what was
//! read of Claude Code's own user configuration.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};

/// A project two directories deep, a Warden home and a plugin, in one temporary directory.
///
/// ```text
/// home/CLAUDE.md                       user memory
/// proj/CLAUDE.md                       outer project memory
/// proj/app/CLAUDE.md                   the session's directory; imports @notes.md
/// proj/app/notes.md
/// proj/app/CLAUDE.local.md
/// proj/app/nested/CLAUDE.md            loaded only once nested/ is touched
/// proj/app/.claude/rules/ts.md         paths: src/{a,b}/*.{ts,tsx}
/// proj/app/.claude/rules/always.md     no paths
/// proj/app/.claude/skills/…            skills whose `!` commands exercise the rules
/// proj/app/.claude/agents/nodesc.md    an agent without description (a warning)
/// proj/app/.claude/settings.json       permissions and an InstructionsLoaded hook
/// kit/                                 a plugin named `kit` (--plugin-dir)
/// claude-config/                       Claude Code's user directory (empty unless a test
///                                      writes to it)
/// ```
struct Fixture {
    _tmp: tempfile::TempDir,
    base: PathBuf,
    app: PathBuf,
    home: PathBuf,
    cc: PathBuf,
    kit: PathBuf,
    hook_log: PathBuf,
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, text).expect("write");
}

fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().expect("tempdir");
    let base = std::fs::canonicalize(tmp.path()).expect("canonical tempdir");
    let home = base.join("home");
    let proj = base.join("proj");
    let app = proj.join("app");
    let kit = base.join("kit");
    // In the project: its hooks run confined to it.
    let hook_log = app.join("hook-log.jsonl");
    let cc = base.join("claude-config");
    std::fs::create_dir_all(proj.join(".git")).expect("git dir");
    write(&home.join("CLAUDE.md"), "user memory\n");
    write(&proj.join("CLAUDE.md"), "outer project memory\n");
    write(
        &app.join("CLAUDE.md"),
        "app memory\nSee @notes.md for details.\n",
    );
    write(&app.join("notes.md"), "imported notes\n");
    write(&app.join("CLAUDE.local.md"), "local memory\n");
    write(&app.join("nested/CLAUDE.md"), "nested memory\n");
    write(
        &app.join(".claude/rules/ts.md"),
        "---\npaths: src/{a,b}/*.{ts,tsx}\n---\nUse strict TypeScript.\n",
    );
    write(&app.join(".claude/rules/always.md"), "Always rule.\n");
    write(
        &app.join(".claude/skills/greet/SKILL.md"),
        "---\ndescription: Greets people by name\nargument-hint: <who>\n---\n\
         Hello $ARGUMENTS, first is $0.\nSaid: !`echo injected-output`\n",
    );
    write(
        &app.join(".claude/skills/make/SKILL.md"),
        "---\ndescription: Creates a marker allowed by a rule\n---\nMake: !`touch allowed.txt`\n",
    );
    write(
        &app.join(".claude/skills/destroy/SKILL.md"),
        "---\ndescription: Runs a denied command\n---\n\
         First: !`touch before-deny.txt`\nThen: !`touch denied.txt`\n",
    );
    write(
        &app.join(".claude/skills/unruled/SKILL.md"),
        "---\ndescription: Runs a command no rule covers\n---\nRun: !`mkdir asked-dir`\n",
    );
    write(
        &app.join(".claude/skills/preapproved/SKILL.md"),
        "---\ndescription: Pre-approves its own command\nallowed-tools: Bash(mkdir:*)\n---\n\
         Run: !`mkdir preapproved-dir`\n",
    );
    write(
        &app.join(".claude/agents/nodesc.md"),
        "---\nname: nodesc\n---\nNo description here.\n",
    );
    let settings = json!({
        "permissions": {
            "allow": ["Bash(touch:*)"],
            "deny": ["Bash(touch denied.txt)"]
        },
        "hooks": {
            "InstructionsLoaded": [{
                "hooks": [{
                    "type": "command",
                    "command": format!("cat >> '{}'", hook_log.display())
                }]
            }]
        }
    });
    write(
        &app.join(".claude/settings.json"),
        &serde_json::to_string_pretty(&settings).expect("json"),
    );
    write(
        &kit.join(".claude-plugin/plugin.json"),
        r#"{"name": "kit", "version": "1.0.0"}"#,
    );
    write(
        &kit.join("skills/lint/SKILL.md"),
        "---\ndescription: Lints the code\n---\nLint ${CLAUDE_PLUGIN_ROOT} with $ARGUMENTS.\n",
    );
    write(
        &kit.join("agents/reviewer.md"),
        "---\nname: reviewer\ndescription: Reviews changes\n---\nReview.\n",
    );
    write(
        &kit.join("commands/ship.md"),
        "---\ndescription: Ships it\n---\nShip.\n",
    );
    Fixture {
        _tmp: tmp,
        base,
        app,
        home,
        cc,
        kit,
        hook_log,
    }
}

impl Fixture {
    fn warden(&self, args: &[&str]) -> Output {
        self.warden_env(args, &[])
    }

    /// `warden ARGS` with the fixture's homes, Claude Code's directory and `env` added.
    fn warden_env(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_warden"));
        cmd.args(args)
            .current_dir(&self.base)
            .env("WARDEN_HOME", &self.home)
            .env("WARDEN_MANAGED_SETTINGS_DIR", "")
            .env("HOME", &self.base)
            .env("CLAUDE_CONFIG_DIR", &self.cc)
            .env_remove("WARDEN_NO_CLAUDE_CONFIG");
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.output().expect("run warden")
    }

    fn context(&self, extra: &[&str]) -> Output {
        self.context_env(extra, &[])
    }

    fn context_env(&self, extra: &[&str], env: &[(&str, &str)]) -> Output {
        let app = self.app.display().to_string();
        let kit = self.kit.display().to_string();
        let mut args = vec!["context", "--cwd", &app, "--plugin-dir", &kit];
        args.extend_from_slice(extra);
        self.warden_env(&args, env)
    }

    fn context_json(&self, extra: &[&str]) -> Value {
        self.context_json_env(extra, &[])
    }

    fn context_json_env(&self, extra: &[&str], env: &[(&str, &str)]) -> Value {
        let mut args = vec!["--json"];
        args.extend_from_slice(extra);
        let out = self.context_env(&args, env);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        serde_json::from_slice(&out.stdout).expect("context JSON")
    }

    fn skill_show(&self, name: &str, args: &[&str]) -> Output {
        let app = self.app.display().to_string();
        let kit = self.kit.display().to_string();
        let mut a = vec![
            "skill",
            "show",
            name,
            "--cwd",
            &app,
            "--plugin-dir",
            &kit,
            "--",
        ];
        a.extend_from_slice(args);
        self.warden(&a)
    }

    fn rel(&self, p: &str) -> String {
        self.app.join(p).display().to_string()
    }
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `(file_path, load_reason)` of every memory entry, in order.
fn memory(v: &Value) -> Vec<(String, String)> {
    v["memory"]
        .as_array()
        .expect("memory array")
        .iter()
        .map(|m| {
            (
                m["path"].as_str().expect("path").to_string(),
                m["loadReason"].as_str().expect("loadReason").to_string(),
            )
        })
        .collect()
}

fn names(v: &Value, key: &str) -> Vec<String> {
    v[key]
        .as_array()
        .expect("array")
        .iter()
        .map(|s| s["name"].as_str().expect("name").to_string())
        .collect()
}

#[test]
fn memory_at_start_in_order_with_reasons() {
    let f = fixture();
    let v = f.context_json(&["--no-hooks"]);
    let outer = f.base.join("proj/CLAUDE.md").display().to_string();
    let user = f.home.join("CLAUDE.md").display().to_string();
    assert_eq!(
        memory(&v),
        vec![
            (user, "session_start".to_string()),
            (outer, "session_start".to_string()),
            (f.rel("CLAUDE.md"), "session_start".to_string()),
            (f.rel("notes.md"), "include".to_string()),
            (
                f.rel(".claude/rules/always.md"),
                "session_start".to_string()
            ),
            (f.rel("CLAUDE.local.md"), "session_start".to_string()),
        ]
    );
    let notes = &v["memory"][3];
    assert_eq!(notes["parentFilePath"], json!(f.rel("CLAUDE.md")));
    assert_eq!(v["memory"][5]["memoryType"], json!("Local"));
    assert_eq!(v["memory"][0]["memoryType"], json!("User"));
    // The conditional rule is known but waits for a matching file.
    let rules = v["rules"].as_array().expect("rules");
    let ts = rules
        .iter()
        .find(|r| r["path"] == json!(f.rel(".claude/rules/ts.md")))
        .expect("ts rule listed");
    assert_eq!(ts["loaded"], json!(false));
    assert_eq!(ts["paths"], json!(["src/{a,b}/*.{ts,tsx}"]));
}

#[test]
fn touching_files_loads_nested_memory_and_matching_rules_only() {
    let f = fixture();
    // Neither touch matches: c/ is not in {a,b}, .js is not in {ts,tsx}.
    let v = f.context_json(&[
        "--no-hooks",
        "--touch",
        "src/c/x.ts",
        "--touch",
        "src/a/x.js",
    ]);
    assert!(
        !memory(&v).iter().any(|(p, _)| p.ends_with("ts.md")),
        "{v:#}"
    );
    assert!(
        !memory(&v).iter().any(|(p, _)| p.contains("nested")),
        "{v:#}"
    );

    let v = f.context_json(&[
        "--no-hooks",
        "--touch",
        "nested/main.rs",
        "--touch",
        "src/b/view.tsx",
    ]);
    let m = memory(&v);
    assert_eq!(m.len(), 8, "{m:?}");
    assert_eq!(
        m[6],
        (f.rel("nested/CLAUDE.md"), "nested_traversal".to_string())
    );
    assert_eq!(
        m[7],
        (f.rel(".claude/rules/ts.md"), "path_glob_match".to_string())
    );
    assert_eq!(
        v["memory"][6]["triggerFilePath"],
        json!(f.rel("nested/main.rs"))
    );
    assert_eq!(
        v["memory"][7]["triggerFilePath"],
        json!(f.rel("src/b/view.tsx"))
    );
    assert_eq!(v["memory"][7]["globs"], json!(["src/{a,b}/*.{ts,tsx}"]));
    let ts = v["rules"]
        .as_array()
        .expect("rules")
        .iter()
        .find(|r| r["path"] == json!(f.rel(".claude/rules/ts.md")))
        .expect("ts rule");
    assert_eq!(ts["loaded"], json!(true));

    // The text form says the same.
    let out = f.context(&["--no-hooks", "--touch", "src/a/page.ts"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let rule_line = text
        .lines()
        .find(|l| l.contains("ts.md"))
        .expect("rule in the text output");
    assert!(rule_line.contains("path_glob_match"), "{text}");
    assert!(text.contains("[Project, include]"), "{text}");
    assert!(!text.contains("nested/CLAUDE.md"), "{text}");
}

/// Every object key with an underscore between lowercase words, anywhere in `v`.
fn snake_case_keys(v: &Value) -> Vec<String> {
    let mut out = Vec::new();
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                if k.contains('_') && k.chars().all(|c| c.is_ascii_lowercase() || c == '_') {
                    out.push(k.clone());
                }
                out.extend(snake_case_keys(x));
            }
        }
        Value::Array(a) => a.iter().for_each(|x| out.extend(snake_case_keys(x))),
        _ => {}
    }
    out
}

#[test]
fn json_shape_skills_plugin_namespaces_and_warnings() {
    let f = fixture();
    let v = f.context_json(&["--no-hooks"]);
    for key in [
        "memory",
        "rules",
        "skills",
        "commands",
        "agents",
        "skillListing",
        "warnings",
        "claudeConfig",
        "mcpServers",
    ] {
        assert!(v.get(key).is_some(), "missing `{key}` in {v:#}");
    }
    // One key style in every `--json` output: camelCase, as Claude Code's CLI prints.
    let snake = snake_case_keys(&v);
    assert!(snake.is_empty(), "snake_case keys: {snake:?}");
    let skills = names(&v, "skills");
    assert!(skills.contains(&"greet".to_string()), "{skills:?}");
    assert!(skills.contains(&"kit:lint".to_string()), "{skills:?}");
    assert_eq!(names(&v, "commands"), vec!["kit:ship".to_string()]);
    assert!(
        names(&v, "agents").contains(&"kit:reviewer".to_string()),
        "{v:#}"
    );
    let lint = v["skills"]
        .as_array()
        .expect("skills")
        .iter()
        .find(|s| s["name"] == json!("kit:lint"))
        .expect("kit:lint");
    assert_eq!(lint["source"], json!({"scope": "plugin", "plugin": "kit"}));
    let listing = v["skillListing"].as_str().expect("listing");
    assert!(
        listing
            .lines()
            .any(|l| l == "- greet: Greets people by name"),
        "{listing}"
    );
    assert!(
        listing.lines().any(|l| l == "- kit:lint: Lints the code"),
        "{listing}"
    );
    assert!(
        listing.lines().any(|l| l == "- kit:ship: Ships it"),
        "{listing}"
    );
    // The agent without a description is skipped with a warning naming its file.
    let nodesc = f.rel(".claude/agents/nodesc.md");
    assert!(!names(&v, "agents").contains(&"nodesc".to_string()));
    let warnings = v["warnings"].as_array().expect("warnings");
    assert!(
        warnings.iter().any(|w| w["file"] == json!(nodesc)),
        "{warnings:#?}"
    );

    // Text output: the same listing, namespaced names, the warning.
    let out = f.context(&["--no-hooks"]);
    let text = stdout(&out);
    assert!(text.contains("  - kit:lint: Lints the code"), "{text}");
    assert!(text.contains("kit:reviewer"), "{text}");
    assert!(text.contains("/kit:ship [command, plugin kit]"), "{text}");
    assert!(text.contains(&nodesc), "{text}");
}

#[test]
fn imports_of_files_the_rules_deny_reading_stay_out_of_context() {
    let f = fixture();
    let secret = "sk-live-8c1f0e9d3b";
    write(&f.app.join(".env"), &format!("API_KEY={secret}\n"));
    write(
        &f.app.join("CLAUDE.md"),
        "app memory\nSee @notes.md for details.\nEnvironment: @.env\n",
    );
    write(
        &f.app.join(".claude/settings.json"),
        r#"{"permissions":{"deny":["Read(./.env)"]}}"#,
    );
    let env = f.rel(".env");
    let claude = f.rel("CLAUDE.md");

    let out = f.context(&["--json", "--no-hooks"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(!text.contains(secret), "{text}");
    let v: Value = serde_json::from_str(&text).expect("context JSON");
    let loaded = memory(&v);
    assert!(loaded.iter().all(|(p, _)| *p != env), "{loaded:?}");
    // The import beside it is unaffected.
    assert!(
        loaded.iter().any(|(p, _)| *p == f.rel("notes.md")),
        "{loaded:?}"
    );
    let warnings = v["warnings"].as_array().expect("warnings");
    let w = warnings
        .iter()
        .find(|w| {
            w["file"] == json!(claude) && w["message"].as_str().is_some_and(|m| m.contains(&env))
        })
        .unwrap_or_else(|| panic!("no warning about the skipped import: {warnings:?}"));
    assert_eq!(w["line"], json!(3), "{w}");
    assert!(
        w["message"]
            .as_str()
            .is_some_and(|m| m.contains("Read(./.env)")),
        "{w}"
    );

    let out = f.context(&["--no-hooks"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(!text.contains(secret), "{text}");
    assert!(
        text.contains(&format!("{claude}:3: import @.env skipped")),
        "{text}"
    );

    // An ask rule does not keep a file out: only a deny does. A `.env` stays out without
    // any rule (`a_repositorys_links_to_credentials_and_its_env_imports_stay_out_of_context`).
    write(
        &f.app.join(".claude/settings.json"),
        r#"{"permissions":{"ask":["Read(./notes.md)"]}}"#,
    );
    let v = f.context_json(&["--no-hooks"]);
    assert!(
        memory(&v).iter().any(|(p, _)| *p == f.rel("notes.md")),
        "{v}"
    );
}

#[test]
fn unusable_directory_exits_2() {
    let f = fixture();
    let missing = f.base.join("no-such-dir").display().to_string();
    let out = f.warden(&["context", "--cwd", &missing]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("not a directory"), "{}", stderr(&out));
    let out = f.warden(&["skill", "show", "greet", "--cwd", &missing]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

#[test]
fn skill_show_substitutes_arguments_and_injects_allowed_output() {
    let f = fixture();
    let out = f.skill_show("greet", &["Ada Lovelace", "Bob"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("Hello \"Ada Lovelace\" Bob, first is Ada Lovelace."),
        "{text}"
    );
    assert!(text.contains("Said: injected-output"), "{text}");
    assert!(!text.contains("!`"), "{text}");
    assert!(
        text.starts_with(&format!(
            "Base directory for this skill: {}",
            f.rel(".claude/skills/greet")
        )),
        "{text}"
    );

    // A plugin skill by its namespaced name, with the plugin root substituted.
    let out = f.skill_show("kit:lint", &["everything"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains(&format!("Lint {} with everything.", f.kit.display())),
        "{text}"
    );

    let out = f.skill_show("nope", &[]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

#[test]
fn allow_rule_runs_the_command_in_the_session_directory() {
    let f = fixture();
    // Without the allow rule the same command is refused: the rule is what lets it run.
    let settings = f.app.join(".claude/settings.json");
    let with_rule = std::fs::read_to_string(&settings).expect("settings");
    std::fs::write(&settings, r#"{"permissions": {"allow": []}}"#).expect("write settings");
    let out = f.skill_show("make", &[]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(!f.app.join("allowed.txt").exists());

    std::fs::write(&settings, with_rule).expect("restore settings");
    let out = f.skill_show("make", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(f.app.join("allowed.txt").is_file(), "{}", stderr(&out));
}

#[test]
fn deny_rule_aborts_and_the_command_never_runs() {
    let f = fixture();
    let out = f.skill_show("destroy", &[]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let err = stderr(&out);
    assert!(err.contains("Bash(touch denied.txt)"), "{err}");
    assert!(err.contains("permission check failed"), "{err}");
    assert!(!f.app.join("denied.txt").exists(), "denied command ran");
    assert!(stdout(&out).is_empty(), "{}", stdout(&out));
}

#[test]
fn ask_is_refused_without_running_and_allowed_tools_pre_approve() {
    let f = fixture();
    let out = f.skill_show("unruled", &[]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(stderr(&out).contains("needs approval"), "{}", stderr(&out));
    assert!(!f.app.join("asked-dir").exists(), "unapproved command ran");

    // The same kind of command, pre-approved by the skill's own `allowed-tools`.
    let out = f.skill_show("preapproved", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(f.app.join("preapproved-dir").is_dir());

    // --no-exec leaves the command as written and runs nothing.
    let out = f.warden(&[
        "skill",
        "show",
        "unruled",
        "--no-exec",
        "--cwd",
        &f.app.display().to_string(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("Run: !`mkdir asked-dir`"));
    assert!(!f.app.join("asked-dir").exists());
}

#[test]
fn instructions_loaded_hook_fires_once_per_loaded_file() {
    let f = fixture();
    let v = f.context_json(&["--touch", "nested/a.rs", "--touch", "src/a/b.ts"]);
    let expected = memory(&v);
    assert_eq!(expected.len(), 8, "{expected:?}");
    let log = std::fs::read_to_string(&f.hook_log).expect("hook log written");
    let events: Vec<Value> = serde_json::Deserializer::from_str(&log)
        .into_iter::<Value>()
        .collect::<Result<_, _>>()
        .expect("hook inputs are JSON");
    let got: Vec<(String, String)> = events
        .iter()
        .map(|e| {
            assert_eq!(e["hook_event_name"], json!("InstructionsLoaded"), "{e}");
            (
                e["file_path"].as_str().expect("file_path").to_string(),
                e["load_reason"].as_str().expect("load_reason").to_string(),
            )
        })
        .collect();
    assert_eq!(got, expected);
    let session_id = &events[0]["session_id"];
    assert!(session_id.as_str().is_some_and(|s| s.len() == 36));
    assert!(events.iter().all(|e| &e["session_id"] == session_id));
    assert!(
        events
            .iter()
            .all(|e| e["cwd"] == json!(f.app.display().to_string()))
    );
    assert_eq!(events[0]["memory_type"], json!("User"));
    let include = events
        .iter()
        .find(|e| e["load_reason"] == json!("include"))
        .expect("include event");
    assert_eq!(include["parent_file_path"], json!(f.rel("CLAUDE.md")));
    let glob = events
        .iter()
        .find(|e| e["load_reason"] == json!("path_glob_match"))
        .expect("path_glob_match event");
    assert_eq!(glob["globs"], json!(["src/{a,b}/*.{ts,tsx}"]));
    assert_eq!(glob["trigger_file_path"], json!(f.rel("src/a/b.ts")));
    let hooks = v["instructionsLoadedHooks"]
        .as_array()
        .expect("hook report");
    assert_eq!(hooks.len(), 8);
    assert!(
        hooks.iter().all(|h| h["handlers"] == json!(1)),
        "{hooks:#?}"
    );

    // --no-hooks fires nothing.
    std::fs::remove_file(&f.hook_log).expect("remove log");
    f.context_json(&["--no-hooks"]);
    assert!(!f.hook_log.exists());
}

#[test]
fn a_closed_pipe_ends_warden_quietly_instead_of_panicking() {
    // `warden context --json | head -c 0`: the reader is gone before warden writes. It is
    // closed before warden starts: closing it after the spawn races a fast warden on a busy
    // machine, whose output then fits in the pipe and exits 0.
    let t = tempfile::tempdir().expect("tempdir");
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    let out = Command::new(env!("CARGO_BIN_EXE_warden"))
        .args(["context", "--json", "--no-hooks", "--cwd"])
        .arg(t.path())
        .env("WARDEN_HOME", t.path().join("home"))
        .env("WARDEN_NO_CLAUDE_CONFIG", "1")
        .env("WARDEN_MANAGED_SETTINGS_DIR", "")
        .stdout(writer)
        .stderr(std::process::Stdio::piped())
        .output()
        .expect("run warden");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_ne!(out.status.code(), Some(101), "{stderr}");
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(
            out.status.signal(),
            Some(libc_sigpipe()),
            "{:?}",
            out.status
        );
    }
}

#[cfg(unix)]
fn libc_sigpipe() -> i32 {
    13
}

// ---- Claude Code's own user configuration ----------------------------------------------------

/// Claude Code's user directory with memory, a rule, a skill, an agent and settings whose
/// hooks include the bridge's.
fn with_claude_code(f: &Fixture) {
    write(&f.cc.join("CLAUDE.md"), "claude code memory\n");
    write(&f.cc.join("rules/cc-rule.md"), "A Claude Code user rule.\n");
    write(
        &f.cc.join("skills/cc-skill/SKILL.md"),
        "---\ndescription: A Claude Code user skill\n---\nBody.\n",
    );
    write(
        &f.cc.join("agents/cc-agent.md"),
        "---\nname: cc-agent\ndescription: A Claude Code user agent\n---\nAgent.\n",
    );
    let settings = json!({
        "permissions": {"deny": ["Read(./private.txt)"]},
        "hooks": {"PreToolUse": [{"matcher": "*", "hooks": [
            {"type": "command", "command": "warden hook --wasm-only PreToolUse"},
            {"type": "http", "url": "http://127.0.0.1:47017/hook/PreToolUse"}
        ]}]}
    });
    write(&f.cc.join("settings.json"), &settings.to_string());
}

#[test]
fn claude_codes_user_files_show_in_context_and_which_were_read() {
    let f = fixture();
    with_claude_code(&f);
    let v = f.context_json(&["--no-hooks"]);
    let cc_md = f.cc.join("CLAUDE.md").display().to_string();
    let cc_rule = f.cc.join("rules/cc-rule.md").display().to_string();
    let user = f.home.join("CLAUDE.md").display().to_string();
    let paths: Vec<String> = memory(&v).into_iter().map(|(p, _)| p).collect();
    // Claude Code's user memory first, then Warden's own, then the project's.
    assert_eq!(paths[..3], [cc_md.clone(), cc_rule.clone(), user]);
    assert_eq!(v["memory"][0]["memoryType"], json!("User"));
    assert!(names(&v, "skills").contains(&"cc-skill".to_string()));
    assert!(names(&v, "agents").contains(&"cc-agent".to_string()));

    let r = &v["claudeConfig"];
    assert_eq!(r["read"], json!(true), "{r}");
    assert_eq!(r["dir"], json!(f.cc.display().to_string()));
    assert_eq!(
        r["settings"],
        json!(f.cc.join("settings.json").display().to_string())
    );
    assert_eq!(r["memory"], json!([cc_md, cc_rule]));
    assert_eq!(r["skills"], json!(["cc-skill"]));
    assert_eq!(r["agents"], json!(["cc-agent"]));
    let skipped = r["skippedHooks"].as_array().expect("skipped hooks");
    assert_eq!(skipped.len(), 2, "{skipped:?}");
    assert!(
        skipped[0]
            .as_str()
            .is_some_and(|s| s.contains("`warden hook --wasm-only PreToolUse`")),
        "{skipped:?}"
    );

    let text = stdout(&f.context(&["--no-hooks"]));
    for needle in [
        format!(
            "Claude Code user configuration: read from {}",
            f.cc.display()
        ),
        format!("  settings: {}", f.cc.join("settings.json").display()),
        format!("  memory: {}", f.cc.join("CLAUDE.md").display()),
        format!("  directory: {}", f.cc.join("skills").display()),
        "  skipped hook: ".to_string(),
        "/cc-skill [skill, user]".to_string(),
    ] {
        assert!(text.contains(&needle), "{needle} not in\n{text}");
    }
}

#[test]
fn claude_codes_user_files_are_not_read_when_turned_off() {
    let f = fixture();
    with_claude_code(&f);
    let cc_md = f.cc.join("CLAUDE.md").display().to_string();
    let read = |v: &Value| memory(v).iter().any(|(p, _)| *p == cc_md);

    let v = f.context_json_env(&["--no-hooks"], &[("WARDEN_NO_CLAUDE_CONFIG", "1")]);
    assert!(!read(&v));
    assert!(!names(&v, "skills").contains(&"cc-skill".to_string()));
    assert_eq!(v["claudeConfig"]["read"], json!(false));
    assert_eq!(
        v["claudeConfig"]["reason"],
        json!("WARDEN_NO_CLAUDE_CONFIG is set")
    );
    let text = stdout(&f.context_env(&["--no-hooks"], &[("WARDEN_NO_CLAUDE_CONFIG", "1")]));
    assert!(
        text.contains("Claude Code user configuration: not read (WARDEN_NO_CLAUDE_CONFIG is set)"),
        "{text}"
    );

    write(
        &f.home.join("settings.json"),
        r#"{"readClaudeConfig": false}"#,
    );
    let v = f.context_json(&["--no-hooks"]);
    assert!(!read(&v));
    assert_eq!(
        v["claudeConfig"]["reason"],
        json!(format!(
            "\"readClaudeConfig\": false in {}",
            f.home.join("settings.json").display()
        ))
    );
}

/// A repository's memory, rules and skills that are links to the user's credentials, and an
/// `@.env` import with no Read rule anywhere, stay out of what `warden context` gives the
/// model; each skipped file is named in a warning.
#[cfg(unix)]
#[test]
fn a_repositorys_links_to_credentials_and_its_env_imports_stay_out_of_context() {
    use std::os::unix::fs::symlink;
    let f = fixture();
    let secret = "ssh-private-5b7e21c0";
    write(&f.base.join(".ssh/id_rsa"), &format!("{secret}\n"));
    write(&f.base.join(".aws/credentials"), &format!("{secret}\n"));
    write(&f.app.join(".env"), &format!("TOKEN={secret}\n"));
    write(
        &f.app.join("CLAUDE.md"),
        "app memory\nSee @notes.md for details.\nEnvironment: @.env\n",
    );
    std::fs::remove_file(f.app.join("CLAUDE.local.md")).expect("rm");
    let links = [
        ("CLAUDE.local.md", ".ssh/id_rsa"),
        (".claude/rules/aws.md", ".aws/credentials"),
        (".claude/skills/keys/SKILL.md", ".ssh/id_rsa"),
        (".claude/commands/creds.md", ".aws/credentials"),
    ];
    for (at, to) in links {
        let at = f.app.join(at);
        std::fs::create_dir_all(at.parent().expect("parent")).expect("mkdir");
        symlink(f.base.join(to), &at).expect("symlink");
    }
    let out = f.context(&["--json", "--no-hooks"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(!text.contains(secret), "{text}");
    let v: Value = serde_json::from_str(&text).expect("context JSON");
    let loaded = memory(&v);
    assert!(
        loaded.iter().any(|(p, _)| *p == f.rel("notes.md")),
        "{loaded:?}"
    );
    let warnings = v["warnings"].as_array().expect("warnings");
    for (at, _) in links {
        assert!(
            warnings.iter().any(|w| w["file"] == json!(f.rel(at))),
            "no warning names {at}: {warnings:?}"
        );
    }
    let w = warnings
        .iter()
        .find(|w| {
            w["file"] == json!(f.rel("CLAUDE.md"))
                && w["message"].as_str().is_some_and(|m| m.contains("@.env"))
        })
        .unwrap_or_else(|| panic!("no warning about the @.env import: {warnings:?}"));
    assert_eq!(w["line"], json!(3), "{w}");
}
