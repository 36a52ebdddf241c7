//! `warden plugin …` driven through the real binary: validation, directory and git
//! marketplaces, install/list/enable/disable/verify/uninstall, capability consent, and an
//! installed plugin's WASM hook answering `warden hook`.
//!
//! Every test gets its own `WARDEN_HOME` and project directories, and managed settings are off
//! (`WARDEN_MANAGED_SETTINGS_DIR=`), so nothing outside the temp dirs is read or written.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};
use tempfile::TempDir;

#[path = "support/toolchains.rs"]
mod toolchains;

const WARDEN: &str = env!("CARGO_BIN_EXE_warden");

/// The repository checkout (parent of `host/`).
fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("host/ has a parent")
        .to_path_buf()
}

/// A temp dir with its canonical path (the binary sees `getcwd()`, which resolves symlinks).
fn tempdir() -> (TempDir, PathBuf) {
    let t = tempfile::tempdir().expect("tempdir");
    let p = t.path().canonicalize().expect("canonical tempdir");
    (t, p)
}

/// One `WARDEN_HOME` and the commands run against it.
struct Home {
    _dir: TempDir,
    path: PathBuf,
}

impl Home {
    fn new() -> Self {
        let (dir, path) = tempdir();
        Home { _dir: dir, path }
    }

    fn cmd(&self, cwd: &Path, args: &[&str]) -> Command {
        let mut c = Command::new(WARDEN);
        c.args(args)
            .current_dir(cwd)
            .env("WARDEN_HOME", &self.path)
            .env("WARDEN_NO_CLAUDE_CONFIG", "1")
            .env("WARDEN_MANAGED_SETTINGS_DIR", "")
            .env_remove("CLAUDE_PROJECT_DIR")
            .stdin(Stdio::null());
        c
    }

    /// Runs `warden <args>` in `cwd` with stdin closed (not a terminal).
    fn run(&self, cwd: &Path, args: &[&str]) -> Output {
        self.cmd(cwd, args).output().expect("run warden")
    }

    /// Runs and asserts exit 0.
    fn ok(&self, cwd: &Path, args: &[&str]) -> String {
        let o = self.run(cwd, args);
        assert!(o.status.success(), "warden {args:?} failed: {}", show(&o));
        stdout(&o)
    }

    /// Runs and asserts exit 1.
    fn fails(&self, cwd: &Path, args: &[&str]) -> Output {
        let o = self.run(cwd, args);
        assert_eq!(o.status.code(), Some(1), "warden {args:?}: {}", show(&o));
        o
    }

    /// Runs with `--json` output expected on stdout and parses it.
    fn json(&self, cwd: &Path, args: &[&str]) -> Value {
        let out = self.ok(cwd, args);
        serde_json::from_str(&out)
            .unwrap_or_else(|e| panic!("warden {args:?}: not JSON ({e}): {out}"))
    }

    fn installed(&self, cwd: &Path) -> Vec<Value> {
        match self.json(cwd, &["plugin", "list", "--json"]) {
            Value::Array(a) => a,
            other => panic!("plugin list --json is not an array: {other}"),
        }
    }
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn show(o: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        stdout(o),
        stderr(o)
    )
}

fn write(path: &Path, text: &str) {
    if let Some(p) = path.parent() {
        std::fs::create_dir_all(p).expect("mkdir");
    }
    std::fs::write(path, text).expect("write");
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).expect("valid JSON")
}

/// Copies a tree, skipping `target` build directories.
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read_dir") {
        let e = e.expect("dir entry");
        let name = e.file_name();
        let ft = e.file_type().expect("file type");
        if ft.is_dir() {
            if name != "target" {
                copy_tree(&e.path(), &to.join(&name));
            }
        } else if ft.is_file() {
            std::fs::copy(e.path(), to.join(&name)).expect("copy");
        }
    }
}

/// A copy of the repository's `plugins/` (the `warden-examples` marketplace) in `dir/plugins`.
fn example_marketplace(dir: &Path) -> PathBuf {
    let src = repo_root().join("plugins");
    assert!(
        src.join("protect-secrets/wasm/protect_secrets.wasm")
            .is_file(),
        "the protect-secrets component is built by host/build.rs"
    );
    let dest = dir.join("plugins");
    copy_tree(&src, &dest);
    dest
}

fn git(dir: &Path, args: &[&str]) -> String {
    let o = Command::new("git")
        .args([
            "-c",
            "user.name=Warden Tests",
            "-c",
            "user.email=tests@warden.invalid",
        ])
        .args([
            "-c",
            "commit.gpgsign=false",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run git");
    assert!(o.status.success(), "git {args:?}: {}", show(&o));
    stdout(&o).trim().to_string()
}

/// A plugin whose one WASM component asks to run `git` (the file only has to be a valid
/// component, here the empty one: consent is decided before anything is compiled).
fn write_exec_plugin(dir: &Path, name: &str) {
    write(
        &dir.join(".claude-plugin/plugin.json"),
        &json!({
            "name": name,
            "version": "1.0.0",
            "description": "Asks to run git.",
            "warden": {
                "components": {
                    "runner": {
                        "path": "wasm/runner.wasm",
                        "world": "hook",
                        "capabilities": { "exec": ["git"] }
                    }
                },
                "hooks": {
                    "PreToolUse": [{ "matcher": "Bash", "hooks": [{ "type": "wasm", "component": "runner" }] }]
                }
            }
        })
        .to_string(),
    );
    write(&dir.join("wasm/runner.wasm"), "\0asm\x0d\0\x01\0");
}

// ------------------------------------------------------------------ validate

#[test]
fn validate_reports_errors_with_locations_and_exit_codes() {
    let home = Home::new();
    let (_t, dir) = tempdir();
    let root = repo_root();

    // The example plugin and the example marketplace are valid.
    let out = home.ok(&root, &["plugin", "validate", "plugins/protect-secrets"]);
    assert!(out.contains("✔ Validation passed for plugin"), "{out}");
    let out = home.ok(&root, &["plugin", "validate", "plugins"]);
    assert!(out.contains("✔ Validation passed for marketplace"), "{out}");
    let v = home.json(
        &root,
        &["plugin", "validate", "plugins", "--json", "--strict"],
    );
    assert_eq!(v["kind"], "marketplace");
    assert_eq!(v["hasErrors"], false);
    assert_eq!(v["warningCount"], 0, "{v}");

    // A wrong type on a known field: an error at plugin.json line 4, exit 1.
    let broken = dir.join("broken");
    write(
        &broken.join(".claude-plugin/plugin.json"),
        "{\n  \"name\": \"broken\",\n  \"version\": \"1.0.0\",\n  \"keywords\": \"security\"\n}\n",
    );
    let o = home.fails(&dir, &["plugin", "validate", "broken"]);
    let out = stdout(&o);
    assert!(out.contains("plugin.json:4"), "{out}");
    assert!(out.contains("keywords"), "{out}");
    assert!(out.contains("✘ Validation failed for plugin"), "{out}");

    let o = home.fails(&dir, &["plugin", "validate", "broken", "--json"]);
    let v: Value = serde_json::from_slice(&o.stdout).expect("validate --json");
    assert_eq!(v["kind"], "plugin");
    assert_eq!(v["hasErrors"], true);
    assert_eq!(v["errorCount"], 1);
    let d = &v["diagnostics"][0];
    assert_eq!(d["severity"], "error");
    assert_eq!(d["line"], 4);
    assert!(
        d["file"]
            .as_str()
            .is_some_and(|f| f.ends_with(".claude-plugin/plugin.json")),
        "{d}"
    );
    assert!(
        d["message"]
            .as_str()
            .is_some_and(|m| m.contains("keywords")),
        "{d}"
    );

    // A misspelt key is only a warning; --strict makes it fail.
    let typo = dir.join("typo");
    write(
        &typo.join(".claude-plugin/plugin.json"),
        "{\n  \"name\": \"typo\",\n  \"descripton\": \"x\"\n}\n",
    );
    let out = home.ok(&dir, &["plugin", "validate", "typo"]);
    assert!(
        out.contains("plugin.json:3") && out.contains("did you mean `description`"),
        "{out}"
    );
    let o = home.fails(&dir, &["plugin", "validate", "typo", "--strict"]);
    assert!(stdout(&o).contains("✘ Validation failed"), "{}", show(&o));

    // warden.toml: a syntax error at its line and column, a component that escapes the
    // plugin root, and the deprecated key named with its fix.
    let w = dir.join("wt");
    write(
        &w.join(".claude-plugin/plugin.json"),
        "{\n  \"name\": \"wt\"\n}\n",
    );
    write(
        &w.join("warden.toml"),
        "[components.g]\npath = \"g.wasm\"\nworld = = \"hook\"\n",
    );
    let out = stdout(&home.fails(&dir, &["plugin", "validate", "wt"]));
    assert!(
        out.contains("warden.toml:3:9") && out.contains("invalid TOML"),
        "{out}"
    );
    write(
        &w.join("warden.toml"),
        "[components.g]\npath = \"../g.wasm\"\nworld = \"hook\"\n",
    );
    let out = stdout(&home.fails(&dir, &["plugin", "validate", "wt"]));
    assert!(
        out.contains("warden.toml:2:1") && out.contains("without `..`"),
        "{out}"
    );
    std::fs::remove_file(w.join("warden.toml")).expect("rm");
    write(
        &w.join(".claude-plugin/plugin.json"),
        "{\n  \"name\": \"wt\",\n  \"warden\": {}\n}\n",
    );
    let out = home.ok(&dir, &["plugin", "validate", "wt"]);
    assert!(
        out.contains("plugin.json:3") && out.contains("move it to warden.toml"),
        "{out}"
    );

    // A path that does not exist.
    let o = home.fails(&dir, &["plugin", "validate", "nope"]);
    assert!(stderr(&o).contains("Path does not exist"), "{}", show(&o));
}

// ------------------------------------------------------------------ directory marketplace

#[test]
fn example_marketplace_install_list_toggle_verify_uninstall() {
    let home = Home::new();
    let (_w, work) = tempdir();
    let mkt = example_marketplace(&work);
    let (_p, project) = tempdir();

    let out = home.ok(&work, &["plugin", "marketplace", "add", "./plugins"]);
    assert_eq!(
        out.trim(),
        "✔ Successfully added marketplace: warden-examples (declared in user settings)"
    );
    let list = home.json(&work, &["plugin", "marketplace", "list", "--json"]);
    assert_eq!(list[0]["name"], "warden-examples", "{list}");
    assert_eq!(list[0]["source"]["source"], "directory");
    assert_eq!(list[0]["installLocation"], json!(mkt));
    let user = read_json(&home.path.join("settings.json"));
    assert_eq!(
        user["extraKnownMarketplaces"]["warden-examples"]["source"]["path"],
        json!(mkt)
    );

    // Unknown plugin: Claude Code's wording, exit 1.
    let o = home.fails(&project, &["plugin", "install", "nosuch@warden-examples"]);
    assert!(
        stderr(&o).contains(
            "✘ Failed to install plugin \"nosuch@warden-examples\": Plugin \"nosuch\" not found in marketplace \"warden-examples\""
        ),
        "{}",
        show(&o)
    );

    let out = home.ok(
        &project,
        &[
            "plugin",
            "install",
            "protect-secrets@warden-examples",
            "--scope",
            "project",
        ],
    );
    assert!(
        out.starts_with(
            "✔ Successfully installed plugin: protect-secrets@warden-examples (scope: project)"
        ),
        "{out}"
    );
    let settings = project.join(".claude/settings.json");
    assert_eq!(
        read_json(&settings)["enabledPlugins"]["protect-secrets@warden-examples"],
        true
    );

    let items = home.installed(&project);
    assert_eq!(items.len(), 1, "{items:?}");
    let item = &items[0];
    assert_eq!(item["id"], "protect-secrets@warden-examples");
    assert_eq!(item["version"], "0.1.0");
    assert_eq!(item["scope"], "project");
    assert_eq!(item["enabled"], true);
    assert_eq!(item["projectPath"], json!(project));
    let install_path = PathBuf::from(item["installPath"].as_str().expect("installPath"));
    assert!(
        install_path.starts_with(
            home.path
                .join("plugins/cache/warden-examples/protect-secrets")
        )
    );
    assert!(install_path.join("wasm/protect_secrets.wasm").is_file());

    // --available lists the marketplace's other plugins, not the installed one.
    let all = home.json(&project, &["plugin", "list", "--json", "--available"]);
    let avail: Vec<&str> = all["available"]
        .as_array()
        .expect("available")
        .iter()
        .filter_map(|a| a["pluginId"].as_str())
        .collect();
    assert!(!avail.contains(&"protect-secrets@warden-examples"), "{all}");

    // disable / enable flip enabledPlugins in the project's settings (the install's scope).
    let out = home.ok(&project, &["plugin", "disable", "protect-secrets"]);
    assert_eq!(
        out.trim(),
        "✔ Successfully disabled plugin: protect-secrets@warden-examples (scope: project)"
    );
    assert_eq!(
        read_json(&settings)["enabledPlugins"]["protect-secrets@warden-examples"],
        false
    );
    assert_eq!(home.installed(&project)[0]["enabled"], false);
    let v = home.json(
        &project,
        &[
            "plugin",
            "enable",
            "protect-secrets@warden-examples",
            "--json",
        ],
    );
    assert_eq!(v["command"], "enable");
    assert_eq!(v["enabled"], true);
    assert_eq!(
        read_json(&settings)["enabledPlugins"]["protect-secrets@warden-examples"],
        true
    );
    assert_eq!(home.installed(&project)[0]["enabled"], true);

    // verify: clean, then a modified file in the cache copy is caught.
    let out = home.ok(&project, &["plugin", "verify"]);
    assert!(
        out.contains("protect-secrets@warden-examples (project): ✔ ok"),
        "{out}"
    );
    assert_eq!(
        home.json(&project, &["plugin", "verify", "--json"])["ok"],
        true
    );
    let manifest = install_path.join(".claude-plugin/plugin.json");
    let mut text = std::fs::read_to_string(&manifest).expect("cached manifest");
    text.push('\n');
    std::fs::write(&manifest, text).expect("tamper");
    let o = home.fails(&project, &["plugin", "verify"]);
    assert!(stdout(&o).contains("✘ TAMPERED"), "{}", show(&o));
    assert!(
        stderr(&o).contains("To restore protect-secrets@warden-examples"),
        "{}",
        show(&o)
    );
    let o = home.fails(&project, &["plugin", "verify", "--json"]);
    let v: Value = serde_json::from_slice(&o.stdout).expect("verify --json");
    assert_eq!(v["ok"], false);
    assert_eq!(v["plugins"][0]["status"], "tampered");

    // uninstall removes the installation and its enabledPlugins key.
    let v = home.json(
        &project,
        &["plugin", "uninstall", "protect-secrets", "--json"],
    );
    assert_eq!(v["command"], "uninstall");
    assert_eq!(v["outcome"], "ok");
    assert_eq!(v["pluginId"], "protect-secrets@warden-examples");
    assert_eq!(v["keptData"], false);
    assert!(home.installed(&project).is_empty());
    let s = read_json(&settings);
    assert!(
        s["enabledPlugins"]
            .get("protect-secrets@warden-examples")
            .is_none(),
        "{s}"
    );
    let o = home.fails(&project, &["plugin", "uninstall", "protect-secrets"]);
    assert!(stderr(&o).contains("is not installed"), "{}", show(&o));

    let out = home.ok(
        &work,
        &["plugin", "marketplace", "remove", "warden-examples"],
    );
    assert_eq!(
        out.trim(),
        "✔ Successfully removed marketplace: warden-examples"
    );
    assert!(
        home.json(&work, &["plugin", "marketplace", "list", "--json"])
            .as_array()
            .is_some_and(Vec::is_empty)
    );
}

#[test]
fn marketplace_add_errors_say_what_to_do() {
    let home = Home::new();
    let (_w, work) = tempdir();
    let o = home.fails(&work, &["plugin", "marketplace", "add", "./missing"]);
    assert!(
        stderr(&o).contains("✘ Path does not exist:"),
        "{}",
        show(&o)
    );

    let bad = work.join("bad");
    write(
        &bad.join(".claude-plugin/marketplace.json"),
        r#"{"name": "has spaces", "plugins": []}"#,
    );
    let o = home.fails(&work, &["plugin", "marketplace", "add", "./bad", "--json"]);
    assert!(
        stderr(&o).contains("✘ Failed to add marketplace: Failed to parse marketplace file at"),
        "{}",
        show(&o)
    );
    let v: Value = serde_json::from_slice(&o.stdout).expect("error JSON on stdout");
    assert_eq!(v["command"], "marketplace-add");
    assert_eq!(v["outcome"], "error");

    let o = home.fails(&work, &["plugin", "install", "anything"]);
    assert!(
        stderr(&o).contains("warden plugin marketplace add"),
        "{}",
        show(&o)
    );
}

/// A marketplace is someone else's repository: a `name` that climbs out of the Warden home is
/// refused by `add`, and `remove` of such a name (recorded by another tool) deletes nothing.
#[test]
fn a_marketplace_name_cannot_reach_outside_the_warden_home() {
    let home = Home::new();
    let (_w, work) = tempdir();
    let victim = work.join("victim");
    write(&victim.join("precious.txt"), "keep me");
    let escaping = format!(
        "../../../{}/victim",
        work.file_name()
            .and_then(|n| n.to_str())
            .expect("utf8 name")
    );
    // The path the old code replaced really is the victim.
    assert_eq!(
        home.path
            .join("plugins/marketplaces")
            .join(&escaping)
            .components()
            .filter(|c| matches!(c, std::path::Component::ParentDir))
            .count(),
        3
    );
    let src = work.join("src");
    write(
        &src.join(".claude-plugin/marketplace.json"),
        &json!({"name": escaping, "owner": {"name": "x"}, "plugins": []}).to_string(),
    );
    git(&src, &["init", "-q"]);
    git(&src, &["add", "-A"]);
    git(&src, &["commit", "-q", "-m", "evil"]);
    let bare = work.join("mkt.git");
    git(
        &work,
        &["clone", "-q", "--bare", "src", bare.to_str().expect("utf8")],
    );
    let url = format!("file://{}", bare.display());
    let o = home.fails(&work, &["plugin", "marketplace", "add", &url]);
    let err = stderr(&o);
    assert!(
        err.contains(".claude-plugin/marketplace.json") && err.contains("field \"name\""),
        "{}",
        show(&o)
    );
    assert_eq!(
        std::fs::read_to_string(victim.join("precious.txt"))
            .ok()
            .as_deref(),
        Some("keep me")
    );

    write(
        &home.path.join("plugins/known_marketplaces.json"),
        &json!({ &escaping: {
            "source": {"source": "git", "url": url},
            "installLocation": home.path.join("plugins/marketplaces").join(&escaping),
            "lastUpdated": "2026-01-01T00:00:00.000Z"
        }})
        .to_string(),
    );
    home.ok(&work, &["plugin", "marketplace", "remove", &escaping]);
    assert_eq!(
        std::fs::read_to_string(victim.join("precious.txt"))
            .ok()
            .as_deref(),
        Some("keep me"),
        "remove deleted a directory outside the Warden home"
    );
}

// ------------------------------------------------------------------ git marketplace

#[test]
fn git_marketplace_over_file_url_installs_and_updates() {
    let home = Home::new();
    let (_r, repo) = tempdir();
    let (_p, project) = tempdir();
    write(
        &repo.join(".claude-plugin/marketplace.json"),
        &json!({
            "name": "git-mkt",
            "owner": { "name": "Tests" },
            "plugins": [{ "name": "hello", "source": "./hello", "description": "Says hello." }]
        })
        .to_string(),
    );
    let manifest = |v: &str| {
        json!({ "name": "hello", "version": v, "description": "Says hello." }).to_string()
    };
    write(
        &repo.join("hello/.claude-plugin/plugin.json"),
        &manifest("1.0.0"),
    );
    write(
        &repo.join("hello/skills/greet/SKILL.md"),
        "---\nname: greet\ndescription: Greets the user.\n---\nSay hello.\n",
    );
    git(&repo, &["init", "-q"]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "hello 1.0.0"]);
    let first = git(&repo, &["rev-parse", "HEAD"]);
    let url = format!("file://{}", repo.display());

    let v = home.json(&project, &["plugin", "marketplace", "add", &url, "--json"]);
    assert_eq!(v["command"], "marketplace-add");
    assert_eq!(v["marketplace"], "git-mkt");
    let clone = PathBuf::from(v["installLocation"].as_str().expect("installLocation"));
    assert_eq!(clone, home.path.join("plugins/marketplaces/git-mkt"));
    assert!(clone.join(".claude-plugin/marketplace.json").is_file());
    let list = home.json(&project, &["plugin", "marketplace", "list", "--json"]);
    assert_eq!(list[0]["url"], json!(url), "{list}");

    let v = home.json(&project, &["plugin", "install", "hello", "--json"]);
    assert_eq!(v["outcome"], "ok", "{v}");
    assert_eq!(v["pluginId"], "hello@git-mkt");
    assert_eq!(v["scope"], "user");
    assert_eq!(v["version"], "1.0.0");
    assert_eq!(v["gitCommitSha"], json!(first));
    assert!(
        PathBuf::from(v["installPath"].as_str().expect("path"))
            .join("skills/greet/SKILL.md")
            .is_file()
    );
    assert_eq!(
        read_json(&home.path.join("settings.json"))["enabledPlugins"]["hello@git-mkt"],
        true
    );

    // A new commit upstream: update re-clones the marketplace and installs 1.1.0.
    let out = home.ok(&project, &["plugin", "update", "hello"]);
    assert!(
        out.contains("already at the latest version (1.0.0)"),
        "{out}"
    );
    write(
        &repo.join("hello/.claude-plugin/plugin.json"),
        &manifest("1.1.0"),
    );
    git(&repo, &["commit", "-q", "-am", "hello 1.1.0"]);
    let out = home.ok(&project, &["plugin", "update", "hello"]);
    assert!(
        out.starts_with("✔ Successfully updated plugin: hello@git-mkt to 1.1.0 (scope: user)"),
        "{out}"
    );
    let items = home.installed(&project);
    assert_eq!(items[0]["version"], "1.1.0");
    assert_eq!(
        home.json(&project, &["plugin", "verify", "--json"])["ok"],
        true
    );

    // Removing the marketplace from its only scope is refused while its plugins are
    // installed; --uninstall-plugins removes it and says what it uninstalled.
    let o = home.fails(&project, &["plugin", "marketplace", "remove", "git-mkt"]);
    assert!(
        stderr(&o).contains("has installed plugins: hello@git-mkt")
            && stderr(&o).contains("--uninstall-plugins"),
        "{}",
        show(&o)
    );
    assert_eq!(home.installed(&project).len(), 1);
    let out = home.ok(
        &project,
        &[
            "plugin",
            "marketplace",
            "remove",
            "git-mkt",
            "--uninstall-plugins",
        ],
    );
    assert!(
        out.contains("Also uninstalled 1 plugin from this marketplace:\n  hello@git-mkt"),
        "{out}"
    );
    assert!(home.installed(&project).is_empty());
    assert!(home.installed(&project).is_empty());
}

// ------------------------------------------------------------------ consent

#[test]
fn capability_consent_needs_yes_or_matching_grants() {
    let home = Home::new();
    let (_w, work) = tempdir();
    let (_p, project) = tempdir();
    write(
        &work.join("mkt/.claude-plugin/marketplace.json"),
        &json!({
            "name": "consent-mkt",
            "owner": { "name": "Tests" },
            "plugins": [{ "name": "shell-out", "source": "./shell-out" }]
        })
        .to_string(),
    );
    write_exec_plugin(&work.join("mkt/shell-out"), "shell-out");
    home.ok(&work, &["plugin", "marketplace", "add", "./mkt"]);
    let id = "shell-out@consent-mkt";

    // Not a terminal, no flags: refused, with the flags that would grant it.
    let o = home.fails(&project, &["plugin", "install", id]);
    let err = stderr(&o);
    assert!(err.contains("needs consent"), "{err}");
    assert!(err.contains("exec") && err.contains("git"), "{err}");
    assert!(
        err.contains("--yes") && err.contains("--grant exec:git"),
        "{err}"
    );
    assert!(err.contains("Nothing was installed"), "{err}");
    assert!(home.installed(&project).is_empty());

    // --json: the request on stdout, then the error object.
    let o = home.fails(&project, &["plugin", "install", id, "--json"]);
    let out = stdout(&o);
    let mut lines = out.lines();
    let req: Value =
        serde_json::from_str(lines.next().expect("request line")).expect("request JSON");
    assert_eq!(req["outcome"], "needs-consent");
    assert_eq!(
        req["request"]["components"]["runner"]["exec"],
        json!(["git"])
    );
    let e: Value = serde_json::from_str(lines.next().expect("error line")).expect("error JSON");
    assert_eq!(e["outcome"], "error");

    // Grants that do not cover the request: refused, naming what is missing.
    let o = home.fails(
        &project,
        &[
            "plugin",
            "install",
            id,
            "--grant",
            "env:HOME",
            "--grant",
            "exec:curl",
        ],
    );
    let err = stderr(&o);
    assert!(err.contains("requests more than --grant allows"), "{err}");
    assert!(err.contains("--grant exec:git"), "{err}");
    assert!(home.installed(&project).is_empty());

    // A malformed --grant.
    let o = home.fails(&project, &["plugin", "install", id, "--grant", "git"]);
    assert!(stderr(&o).contains("is not understood"), "{}", show(&o));

    // The exact grant: installed, and the grant is recorded for the component.
    let out = home.ok(&project, &["plugin", "install", id, "--grant", "exec:git"]);
    assert!(
        out.starts_with("✔ Successfully installed plugin: shell-out@consent-mkt (scope: user)"),
        "{out}"
    );
    assert!(out.contains("runner: exec git"), "{out}");
    let grants = read_json(&home.path.join("plugins/grants.json"));
    assert!(
        grants.to_string().contains("\"exec\":[\"git\"]"),
        "{grants}"
    );
    home.ok(&project, &["plugin", "uninstall", id]);
    assert!(home.installed(&project).is_empty());

    // --yes accepts everything.
    let v = home.json(&project, &["plugin", "install", id, "--yes", "--json"]);
    assert_eq!(v["outcome"], "ok");
    assert_eq!(v["capabilities"]["runner"]["exec"], json!(["git"]));
    assert_eq!(home.installed(&project).len(), 1);

    // `grant` re-grants an installed plugin: nothing to ask while the grant stands; after the
    // grants file is lost it needs consent like an install.
    home.ok(&project, &["plugin", "grant", id]);
    std::fs::remove_file(home.path.join("plugins/grants.json")).expect("remove grants");
    let o = home.fails(&project, &["plugin", "grant", id]);
    assert!(stderr(&o).contains("Nothing was granted"), "{}", show(&o));
    let out = home.ok(&project, &["plugin", "grant", id, "--grant", "exec:git"]);
    assert!(out.contains("runner: exec git"), "{out}");
    assert!(
        read_json(&home.path.join("plugins/grants.json"))
            .to_string()
            .contains("\"exec\":[\"git\"]")
    );

    // An update that asks for more needs consent again; --grant must then cover the new part.
    write(
        &work.join("mkt/shell-out/.claude-plugin/plugin.json"),
        &read_json(&work.join("mkt/shell-out/.claude-plugin/plugin.json"))
            .to_string()
            .replace("\"1.0.0\"", "\"1.1.0\"")
            .replace(
                "\"exec\":[\"git\"]",
                "\"exec\":[\"git\"],\"env\":[\"HOME\"]",
            ),
    );
    let o = home.fails(&project, &["plugin", "update", id]);
    let err = stderr(&o);
    assert!(
        err.contains("--grant env:HOME") && !err.contains("--grant exec:git"),
        "{err}"
    );
    assert_eq!(home.installed(&project)[0]["version"], "1.0.0");
    let out = home.ok(&project, &["plugin", "update", id, "--grant", "env:HOME"]);
    assert!(
        out.starts_with("✔ Successfully updated plugin: shell-out@consent-mkt to 1.1.0"),
        "{out}"
    );
}

// ------------------------------------------------------------------ end to end

#[test]
fn installed_protect_secrets_denies_reading_env_through_warden_hook() {
    let home = Home::new();
    let (_w, work) = tempdir();
    example_marketplace(&work);
    let (_p, project) = tempdir();
    home.ok(&work, &["plugin", "marketplace", "add", "./plugins"]);
    home.ok(
        &project,
        &[
            "plugin",
            "install",
            "protect-secrets@warden-examples",
            "--scope",
            "project",
        ],
    );
    // Install compiled the component ahead of its first use.
    let compiled = std::fs::read_dir(home.path.join("cache"))
        .expect("compile cache")
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "cwasm"))
        .count();
    assert_eq!(compiled, 1);

    let input = json!({
        "session_id": "00000000-1111-4222-8333-444444444444",
        "transcript_path": "/dev/null",
        "cwd": project,
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": "Read",
        "tool_input": { "file_path": ".env" },
        "tool_use_id": "toolu_1",
    });
    let hook = |cwd: &Path| {
        let mut child = home
            .cmd(cwd, &["hook", "PreToolUse"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn warden hook");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(input.to_string().as_bytes())
            .expect("write stdin");
        child.wait_with_output().expect("warden hook")
    };
    let o = hook(&project);
    assert!(o.status.success(), "{}", show(&o));
    let v: Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("hook output not JSON ({e}): {}", show(&o)));
    assert_eq!(
        v["hookSpecificOutput"]["hookEventName"], "PreToolUse",
        "{v}"
    );
    assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "deny", "{v}");

    // Disabled, the plugin's hook no longer runs.
    home.ok(&project, &["plugin", "disable", "protect-secrets"]);
    let o = hook(&project);
    assert!(o.status.success(), "{}", show(&o));
    assert!(!stdout(&o).contains("\"deny\""), "{}", show(&o));
}

/// `warden plugin update` killed with SIGKILL in the middle of copying the new version: the
/// previous version stays installed, verified and loadable, the state files stay valid JSON,
/// and the next update succeeds.
#[test]
fn update_killed_midway_keeps_the_previous_version() {
    let home = Home::new();
    let (_t, root) = tempdir();
    let mkt = root.join("mkt");
    let proj = root.join("proj");
    std::fs::create_dir_all(&proj).expect("mkdir");
    write(
        &mkt.join(".claude-plugin/marketplace.json"),
        &json!({"name": "m", "owner": {"name": "t"}, "plugins": [{"name": "big", "source": "./big"}]}).to_string(),
    );
    let manifest = |v: &str| json!({"name": "big", "version": v}).to_string();
    write(
        &mkt.join("big/.claude-plugin/plugin.json"),
        &manifest("1.0.0"),
    );
    write(
        &mkt.join("big/skills/review/SKILL.md"),
        "---\nname: review\ndescription: Review code\n---\nReview.\n",
    );
    home.ok(
        &proj,
        &["plugin", "marketplace", "add", mkt.to_str().expect("utf-8")],
    );
    home.ok(&proj, &["plugin", "install", "big@m"]);
    let v1 = home.installed(&proj);
    let v1_path = PathBuf::from(v1[0]["installPath"].as_str().expect("installPath"));

    // Version 2 has many files; the copy is slowed down so the kill lands in the middle of it.
    write(
        &mkt.join("big/.claude-plugin/plugin.json"),
        &manifest("2.0.0"),
    );
    for i in 0..40 {
        write(
            &mkt.join(format!("big/data/f{i:02}.txt")),
            &format!("file {i}"),
        );
    }
    let mut child = home
        .cmd(&proj, &["plugin", "update", "big@m"])
        .env(warden_plugins::COPY_DELAY_ENV, "100")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn warden");
    let staging = home.path.join("plugins/.tmp");
    let mut copying = false;
    for _ in 0..400 {
        let copied = std::fs::read_dir(&staging)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| std::fs::read_dir(e.path().join("plugin/data")).ok())
            .map(|rd| rd.count())
            .max()
            .unwrap_or(0);
        if copied >= 3 {
            copying = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(25));
    }
    child.kill().expect("SIGKILL");
    child.wait().expect("wait");
    assert!(copying, "the update never reached the copy");

    read_json(&home.path.join("plugins/installed_plugins.json"));
    read_json(&home.path.join("plugins/known_marketplaces.json"));
    let after = home.installed(&proj);
    assert_eq!(after[0]["version"], "1.0.0");
    assert!(v1_path.join("skills/review/SKILL.md").is_file());
    home.ok(&proj, &["plugin", "verify"]);

    home.ok(&proj, &["plugin", "update", "big@m"]);
    let v2 = home.installed(&proj);
    assert_eq!(v2[0]["version"], "2.0.0");
    let v2_path = PathBuf::from(v2[0]["installPath"].as_str().expect("installPath"));
    assert_eq!(
        std::fs::read_dir(v2_path.join("data"))
            .expect("data")
            .count(),
        40
    );
}

#[test]
fn install_and_context_list_a_plugins_mcp_servers() {
    let home = Home::new();
    let (_w, work) = tempdir();
    let (_p, project) = tempdir();
    write(
        &work.join("mkt/.claude-plugin/marketplace.json"),
        &json!({
            "name": "mcp-mkt",
            "owner": { "name": "Tests" },
            "plugins": [{ "name": "with-mcp", "source": "./with-mcp" }]
        })
        .to_string(),
    );
    write(
        &work.join("mkt/with-mcp/.claude-plugin/plugin.json"),
        r#"{"name":"with-mcp","version":"1.0.0"}"#,
    );
    write(
        &work.join("mkt/with-mcp/.mcp.json"),
        &json!({"mcpServers": {
            "docs": {"type": "http", "url": "https://docs.example.test/mcp"},
            "local": {"command": "${CLAUDE_PLUGIN_ROOT}/bin/server", "args": ["--stdio"]}
        }})
        .to_string(),
    );
    home.ok(&work, &["plugin", "marketplace", "add", "./mkt"]);

    let out = home.ok(&project, &["plugin", "install", "with-mcp@mcp-mkt"]);
    assert!(out.contains("MCP servers (2)"), "{out}");
    assert!(
        out.contains("plugin:with-mcp:docs") && out.contains("https://docs.example.test/mcp"),
        "{out}"
    );
    assert!(out.contains("mcp__plugin_with-mcp_local__*"), "{out}");

    let v = home.json(
        &project,
        &["plugin", "install", "with-mcp@mcp-mkt", "--json"],
    );
    let servers = v["mcpServers"].as_array().expect("mcpServers");
    assert_eq!(servers.len(), 2, "{v}");
    assert!(
        servers
            .iter()
            .any(|s| s["transport"] == "http" && s["tools"] == "mcp__plugin_with-mcp_docs__*"),
        "{v}"
    );

    let v = home.json(&project, &["context", "--json"]);
    let listed = v["mcpServers"].as_array().expect("mcpServers");
    let names: Vec<&str> = listed.iter().filter_map(|s| s["name"].as_str()).collect();
    assert!(
        names.contains(&"plugin:with-mcp:docs") && names.contains(&"plugin:with-mcp:local"),
        "{v}"
    );
    let out = home.ok(&project, &["context"]);
    assert!(out.contains("MCP servers (2):"), "{out}");
}

#[test]
fn validate_reports_a_broken_mcp_entry() {
    let home = Home::new();
    let (_w, work) = tempdir();
    write(
        &work.join("p/.claude-plugin/plugin.json"),
        r#"{"name":"p"}"#,
    );
    write(
        &work.join("p/.mcp.json"),
        r#"{"mcpServers":{"x":{"type":"htp","url":5}}}"#,
    );
    let o = home.fails(&work, &["plugin", "validate", "./p"]);
    let text = show(&o);
    assert!(
        text.contains("htp") && text.contains("did you mean"),
        "{text}"
    );
    assert!(text.contains("url"), "{text}");
}

// ------------------------------------------------------------------ a new user's first steps

/// A marketplace in `dir` named `name` with one plugin `hello` (a skill and a command hook
/// whose script exists) and, when `ghost`, an entry whose source folder is missing.
fn small_marketplace(dir: &Path, name: &str, ghost: bool) {
    let mut plugins =
        vec![json!({ "name": "hello", "source": "./hello", "description": "Says hello." })];
    if ghost {
        plugins.push(
            json!({ "name": "ghost", "source": "./ghost", "description": "Not checked out." }),
        );
    }
    write(
        &dir.join(".claude-plugin/marketplace.json"),
        &json!({ "name": name, "owner": { "name": "Tests" }, "plugins": plugins }).to_string(),
    );
    write(
        &dir.join("hello/.claude-plugin/plugin.json"),
        &json!({ "name": "hello", "version": "1.0.0", "description": "Says hello." }).to_string(),
    );
    write(
        &dir.join("hello/skills/greet/SKILL.md"),
        "---\nname: greet\ndescription: Greets the user.\n---\nSay hello.\n",
    );
}

#[test]
fn a_reserved_marketplace_name_is_allowed_from_a_local_copy_with_a_flag() {
    let home = Home::new();
    let (_w, work) = tempdir();
    let local = work.join("official");
    small_marketplace(&local, "claude-code-plugins", false);

    // Refused by default, and the error names the way in.
    let o = home.fails(&work, &["plugin", "marketplace", "add", "./official"]);
    assert!(
        stderr(&o).contains("reserved") && stderr(&o).contains("--allow-reserved-name"),
        "{}",
        show(&o)
    );
    // With the flag: added, with a warning that says why.
    let o = home.run(
        &work,
        &[
            "plugin",
            "marketplace",
            "add",
            "./official",
            "--allow-reserved-name",
        ],
    );
    assert!(o.status.success(), "{}", show(&o));
    assert!(
        stdout(&o).contains("Successfully added marketplace: claude-code-plugins"),
        "{}",
        show(&o)
    );
    let err = stderr(&o);
    assert!(
        err.contains("warning:") && err.contains("reserved") && err.contains("local"),
        "{}",
        show(&o)
    );
    home.ok(&work, &["plugin", "install", "hello@claude-code-plugins"]);

    // A file:// clone is local too, and stays admitted on update.
    let repo = work.join("repo");
    small_marketplace(&repo, "claude-plugins-official", false);
    git(&repo, &["init", "-q"]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "catalog"]);
    let url = format!("file://{}", repo.display());
    home.fails(&work, &["plugin", "marketplace", "add", &url]);
    home.ok(
        &work,
        &[
            "plugin",
            "marketplace",
            "add",
            &url,
            "--allow-reserved-name",
        ],
    );
    home.ok(
        &work,
        &["plugin", "marketplace", "update", "claude-plugins-official"],
    );

    // The flag is documented.
    let help = home.ok(&work, &["plugin", "marketplace", "add", "--help"]);
    assert!(help.contains("--allow-reserved-name"), "{help}");
    assert!(help.contains("github.com/anthropics"), "{help}");
}

/// `warden … | head -1`: the reader is gone before warden writes (closed before the spawn, so a
/// fast warden cannot finish first). Warden must end quietly, not panic with exit 101.
fn into_closed_pipe(home: &Home, cwd: &Path, args: &[&str]) {
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    let o = home
        .cmd(cwd, args)
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .expect("run warden");
    let err = stderr(&o);
    assert!(!err.contains("panicked"), "warden {args:?}: {err}");
    assert_ne!(o.status.code(), Some(101), "warden {args:?}: {err}");
}

#[test]
fn listing_into_a_closed_pipe_ends_quietly() {
    let home = Home::new();
    let (_w, work) = tempdir();
    small_marketplace(&work.join("mkt"), "small", false);
    home.ok(&work, &["plugin", "marketplace", "add", "./mkt"]);
    into_closed_pipe(&home, &work, &["plugin", "list", "--available"]);
    into_closed_pipe(&home, &work, &["plugin", "marketplace", "list"]);
    into_closed_pipe(&home, &work, &["skill", "list"]);
    into_closed_pipe(&home, &work, &["context"]);
}

#[test]
fn install_names_a_missing_marketplace_and_an_unusable_entry() {
    let home = Home::new();
    let (_w, work) = tempdir();
    small_marketplace(&work.join("mkt"), "small", true);

    let o = home.fails(&work, &["plugin", "install", "x@nosuch-mkt"]);
    assert!(
        stderr(&o)
            .contains("Marketplace \"nosuch-mkt\" is not known (no marketplaces have been added)")
            && stderr(&o).contains("warden plugin marketplace add"),
        "{}",
        show(&o)
    );
    home.ok(&work, &["plugin", "marketplace", "add", "./mkt"]);
    let o = home.fails(&work, &["plugin", "install", "x@nosuch-mkt"]);
    assert!(
        stderr(&o).contains("Marketplace \"nosuch-mkt\" is not known (known: small)"),
        "{}",
        show(&o)
    );

    // The entry whose folder is missing is listed as unavailable, with the cause.
    let out = home.ok(&work, &["plugin", "list", "--available"]);
    assert!(out.contains("hello@small — Says hello."), "{out}");
    assert!(
        out.contains("ghost@small (unavailable: source directory")
            && out.contains("does not exist"),
        "{out}"
    );
    let v = home.json(&work, &["plugin", "list", "--available", "--json"]);
    let ghost = v["available"]
        .as_array()
        .expect("available")
        .iter()
        .find(|a| a["pluginId"] == "ghost@small")
        .cloned()
        .expect("ghost listed");
    assert!(
        ghost["unavailable"]
            .as_str()
            .is_some_and(|r| r.contains("does not exist")),
        "{ghost}"
    );
    // And install says the cause, by full id or by bare name.
    for spec in ["ghost@small", "ghost"] {
        let o = home.fails(&work, &["plugin", "install", spec]);
        let err = stderr(&o);
        assert!(
            err.contains("cannot be installed: source directory") && err.contains("does not exist"),
            "{}",
            show(&o)
        );
        assert!(!err.contains("not found"), "{}", show(&o));
    }
}

#[test]
fn install_warnings_name_the_installed_copy_once() {
    let home = Home::new();
    let (_w, work) = tempdir();
    let mkt = work.join("mkt");
    small_marketplace(&mkt, "small", false);
    // A hooks file with a warning (an unknown event) and a file copy warning-free.
    write(
        &mkt.join("hello/hooks/hooks.json"),
        &json!({ "hooks": { "NotAnEvent": [{ "hooks": [{ "type": "command", "command": "true" }] }] } })
            .to_string(),
    );
    home.ok(&work, &["plugin", "marketplace", "add", "./mkt"]);
    let o = home.run(&work, &["plugin", "install", "hello@small"]);
    assert!(o.status.success(), "{}", show(&o));
    let err = stderr(&o);
    let warnings: Vec<&str> = err.lines().filter(|l| l.starts_with("warning:")).collect();
    assert!(!warnings.is_empty(), "{}", show(&o));
    assert!(!err.contains(".tmp/stage-"), "{}", show(&o));
    let cache = home.path.join("plugins/cache/small/hello/1.0.0");
    assert!(
        warnings
            .iter()
            .all(|w| w.contains(&cache.join("hooks/hooks.json").display().to_string())),
        "{}",
        show(&o)
    );
    let mut unique = warnings.clone();
    unique.dedup();
    assert_eq!(unique.len(), warnings.len(), "{}", show(&o));
}

#[test]
fn check_summarises_configuration_warnings() {
    let home = Home::new();
    let (_p, project) = tempdir();
    // Two settings problems: an unknown permission mode and a rule that cannot be parsed.
    write(
        &project.join(".claude/settings.json"),
        &json!({ "permissions": { "allow": ["Bash(git push"], "deny": ["Read("] } }).to_string(),
    );
    let args = [
        "check",
        "--tool",
        "Read",
        "--input",
        r#"{"file_path":"a.txt"}"#,
    ];
    let o = home.run(&project, &args);
    assert!(o.status.success(), "{}", show(&o));
    let err = stderr(&o);
    assert!(
        err.contains("configuration warning") && err.contains("warden context"),
        "{}",
        show(&o)
    );
    assert_eq!(err.lines().count(), 1, "{}", show(&o));
    // `tool` prints the result only, not the configuration's warnings.
    write(&project.join("a.txt"), "hello\n");
    let o = home.run(
        &project,
        &["tool", "Read", "--input", r#"{"file_path":"a.txt"}"#],
    );
    assert!(o.status.success(), "{}", show(&o));
    assert!(!stderr(&o).contains("warning"), "{}", show(&o));
    let mut verbose = args.to_vec();
    verbose.push("--verbose");
    let o = home.run(&project, &verbose);
    assert!(
        stderr(&o)
            .lines()
            .filter(|l| l.starts_with("warning:"))
            .count()
            >= 1,
        "{}",
        show(&o)
    );
}

#[test]
fn marketplace_remove_re_add_and_toggles_say_what_happens() {
    let home = Home::new();
    let (_w, work) = tempdir();
    small_marketplace(&work.join("mkt"), "small", false);
    small_marketplace(&work.join("other"), "small", false);
    home.ok(&work, &["plugin", "marketplace", "add", "./mkt"]);
    home.ok(&work, &["plugin", "install", "hello@small"]);

    // Re-adding the same folder is fine; another folder under the same name is refused.
    home.ok(&work, &["plugin", "marketplace", "add", "./mkt"]);
    let o = home.fails(&work, &["plugin", "marketplace", "add", "./other"]);
    assert!(
        stderr(&o).contains("is already added from directory") && stderr(&o).contains("--replace"),
        "{}",
        show(&o)
    );
    let list = home.json(&work, &["plugin", "marketplace", "list", "--json"]);
    assert_eq!(list[0]["path"], json!(work.join("mkt")), "{list}");
    let out = home.ok(
        &work,
        &["plugin", "marketplace", "add", "./other", "--replace"],
    );
    assert!(out.contains("now points at directory"), "{out}");
    let list = home.json(&work, &["plugin", "marketplace", "list", "--json"]);
    assert_eq!(list[0]["path"], json!(work.join("other")), "{list}");

    // Disabling twice, enabling twice: the second says so and fails, as in Claude Code.
    home.ok(&work, &["plugin", "disable", "hello"]);
    let o = home.fails(&work, &["plugin", "disable", "hello"]);
    assert_eq!(
        stderr(&o).trim(),
        "✘ Failed to disable plugin \"hello\": Plugin \"hello@small\" is already disabled"
    );
    let o = home.fails(&work, &["plugin", "disable", "hello@small", "--json"]);
    let v: Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(v["outcome"], "failed");
    assert_eq!(v["failureCode"], "already_in_goal_state");
    assert_eq!(v["alreadyInGoalState"], true);
    home.ok(&work, &["plugin", "enable", "hello"]);
    let o = home.fails(&work, &["plugin", "enable", "hello"]);
    assert!(stderr(&o).contains("is already enabled"), "{}", show(&o));

    // Remove is refused while the plugin is installed, and changes nothing.
    let o = home.fails(&work, &["plugin", "marketplace", "remove", "small"]);
    assert!(
        stderr(&o).contains("has installed plugins: hello@small"),
        "{}",
        show(&o)
    );
    assert_eq!(home.installed(&work).len(), 1);
    assert_eq!(
        home.json(&work, &["plugin", "marketplace", "list", "--json"])
            .as_array()
            .map(Vec::len),
        Some(1)
    );
    let v = home.json(
        &work,
        &[
            "plugin",
            "marketplace",
            "remove",
            "small",
            "--uninstall-plugins",
            "--json",
        ],
    );
    assert_eq!(v["uninstalled"], json!(["hello@small"]));
    assert!(home.installed(&work).is_empty());
}

#[test]
fn validate_flags_a_missing_hook_script_and_a_name_with_spaces() {
    let home = Home::new();
    let (_w, work) = tempdir();
    let p = work.join("p");
    write(
        &p.join(".claude-plugin/plugin.json"),
        &json!({ "name": "p", "version": "1.0.0", "description": "x" }).to_string(),
    );
    write(&p.join("scripts/present.sh"), "#!/bin/sh\n");
    write(
        &p.join("hooks/hooks.json"),
        "{\n  \"hooks\": {\n    \"PreToolUse\": [{\n      \"matcher\": \"Bash\",\n      \"hooks\": [\n        { \"type\": \"command\", \"command\": \"\\\"${CLAUDE_PLUGIN_ROOT}/scripts/present.sh\\\"\" },\n        { \"type\": \"command\", \"command\": \"python3 \\\"${CLAUDE_PLUGIN_ROOT}/scripts/missing.py\\\" --x\" }\n      ]\n    }]\n  }\n}\n",
    );
    let out = home.ok(&work, &["plugin", "validate", "p"]);
    assert!(
        out.contains("hooks.json:7") && out.contains("scripts/missing.py, which does not exist"),
        "{out}"
    );
    assert!(!out.contains("present.sh, which"), "{out}");
    let o = home.fails(&work, &["plugin", "validate", "p", "--strict"]);
    assert!(stdout(&o).contains("missing.py"), "{}", show(&o));

    write(
        &p.join(".claude-plugin/plugin.json"),
        &json!({ "name": "my plugin", "version": "1.0.0" }).to_string(),
    );
    let o = home.fails(&work, &["plugin", "validate", "p"]);
    assert!(
        stdout(&o).contains("Plugin name cannot contain spaces"),
        "{}",
        show(&o)
    );
}

#[test]
fn json_keys_are_camel_case() {
    let home = Home::new();
    let (_w, work) = tempdir();
    small_marketplace(&work.join("mkt"), "small", false);
    let v = home.json(&work, &["plugin", "validate", "mkt", "--json"]);
    for k in ["hasErrors", "errorCount", "warningCount", "diagnostics"] {
        assert!(v.get(k).is_some(), "missing {k}: {v}");
    }
    home.ok(&work, &["plugin", "marketplace", "add", "./mkt"]);
    home.ok(&work, &["plugin", "install", "hello"]);
    let skills = home.json(&work, &["skill", "list", "--json"]);
    let greet = skills
        .as_array()
        .expect("array")
        .iter()
        .find(|s| s["name"] == "hello:greet")
        .cloned()
        .expect("hello:greet");
    for k in ["userInvocable", "disableModelInvocation"] {
        assert!(greet.get(k).is_some(), "missing {k}: {greet}");
    }
    let v = home.json(&work, &["context", "--json", "--no-hooks"]);
    for k in ["skillListing", "claudeConfig", "mcpServers"] {
        assert!(v.get(k).is_some(), "missing {k}: {v}");
    }
    let shown = home.json(&work, &["skill", "show", "hello:greet", "--json"]);
    assert!(shown.get("allowedTools").is_some(), "{shown}");
}

#[test]
fn install_draws_no_progress_when_piped() {
    let home = Home::new();
    let (_w, work) = tempdir();
    small_marketplace(&work.join("mkt"), "small", false);
    home.ok(&work, &["plugin", "marketplace", "add", "./mkt"]);
    // Slow copies, so a bar would have time to draw.
    let o = home
        .cmd(&work, &["plugin", "install", "hello"])
        .env(warden_plugins_copy_delay(), "50")
        .output()
        .expect("run");
    assert!(o.status.success(), "{}", show(&o));
    let err = stderr(&o);
    assert!(
        !err.contains('\r') && !err.contains("\x1b[") && !err.contains("Copying"),
        "{err:?}"
    );
    assert_eq!(
        stdout(&o).trim(),
        "✔ Successfully installed plugin: hello@small (scope: user)"
    );
}

/// On a terminal (util-linux `script` provides one) install draws its labelled bar; with stdout
/// redirected, even with stderr still on the terminal, it draws nothing.
#[test]
fn install_draws_a_bar_only_when_stdout_and_stderr_are_terminals() {
    if Command::new("script").arg("--version").output().is_err() {
        eprintln!("skipped: util-linux `script` is not installed");
        return;
    }
    let home = Home::new();
    let (_w, work) = tempdir();
    small_marketplace(&work.join("mkt"), "small", false);
    home.ok(&work, &["plugin", "marketplace", "add", "./mkt"]);
    let on_terminal = |shell: &str| -> String {
        let o = Command::new("script")
            .args(["-qec", shell, "/dev/null"])
            .current_dir(&work)
            .env("WARDEN_HOME", &home.path)
            .env("WARDEN_NO_CLAUDE_CONFIG", "1")
            .env("WARDEN_MANAGED_SETTINGS_DIR", "")
            .env(warden_plugins_copy_delay(), "50")
            .env_remove("CLAUDE_PROJECT_DIR")
            .env_remove("NO_COLOR")
            .stdin(Stdio::null())
            .output()
            .expect("run script");
        assert!(o.status.success(), "{}", show(&o));
        stdout(&o)
    };
    let w = WARDEN;
    let both = on_terminal(&format!("{w} plugin install hello@small"));
    assert!(both.contains("Copying hello"), "{both:?}");
    home.ok(&work, &["plugin", "uninstall", "hello"]);
    let out = work.join("out.txt");
    let piped = on_terminal(&format!(
        "{w} plugin install hello@small > {}",
        out.display()
    ));
    assert!(!piped.contains("Copying"), "{piped:?}");
    let written = std::fs::read_to_string(&out).expect("stdout file");
    assert!(
        written.contains("Successfully installed plugin: hello@small"),
        "{written}"
    );
}

/// The variable that slows copies down (`warden_plugins::COPY_DELAY_ENV`).
fn warden_plugins_copy_delay() -> &'static str {
    "WARDEN_PLUGINS_COPY_DELAY_MS"
}

#[test]
fn details_shows_an_installed_plugin() {
    let home = Home::new();
    let (_w, work) = tempdir();
    example_marketplace(&work);
    home.ok(&work, &["plugin", "marketplace", "add", "./plugins"]);
    home.ok(&work, &["plugin", "install", "protect-secrets", "--yes"]);

    let out = home.ok(&work, &["plugin", "details", "protect-secrets"]);
    for part in [
        "protect-secrets@warden-examples",
        "Status: enabled (scope: user)",
        "Install path:",
        "Digest:",
        "WASM components (1)",
        "sha256:",
        "requested:",
        "granted:",
        "Hooks (",
        "PreToolUse",
        "Skills (",
        "MCP servers (",
    ] {
        assert!(out.contains(part), "missing {part:?} in:\n{out}");
    }
    let v = home.json(
        &work,
        &[
            "plugin",
            "info",
            "protect-secrets@warden-examples",
            "--json",
        ],
    );
    for k in [
        "pluginId",
        "version",
        "scope",
        "enabled",
        "installPath",
        "sha256",
        "components",
        "hooks",
        "skills",
        "agents",
        "commands",
        "mcpServers",
    ] {
        assert!(v.get(k).is_some(), "missing {k}: {v:#}");
    }
    let c = &v["components"][0];
    for k in ["name", "path", "world", "sha256", "requested", "granted"] {
        assert!(c.get(k).is_some(), "missing components[0].{k}: {v:#}");
    }
    assert!(
        v["hooks"].as_array().is_some_and(|h| h
            .iter()
            .any(|h| h["event"] == "PreToolUse" && h["type"] == "wasm")),
        "{v:#}"
    );
    let o = home.fails(&work, &["plugin", "details", "nosuch"]);
    assert!(stderr(&o).contains("is not installed"), "{}", show(&o));
}

#[test]
fn every_plugin_verb_that_takes_input_shows_examples() {
    let home = Home::new();
    let (_w, work) = tempdir();
    for verb in [
        &["plugin", "validate"][..],
        &["plugin", "install"],
        &["plugin", "uninstall"],
        &["plugin", "enable"],
        &["plugin", "disable"],
        &["plugin", "update"],
        &["plugin", "list"],
        &["plugin", "details"],
        &["plugin", "grant"],
        &["plugin", "marketplace", "add"],
        &["plugin", "marketplace", "remove"],
        &["plugin", "marketplace", "update"],
    ] {
        let mut args = verb.to_vec();
        args.push("--help");
        let out = home.ok(&work, &args);
        assert!(
            out.contains("Examples:\n  warden plugin"),
            "{verb:?}:\n{out}"
        );
    }
}

// ------------------------------------------------------------------ install checks

/// Whether `home` records no installation of `id`, keeps no cache copy of it and enables it
/// nowhere: what a refused install must leave.
fn assert_not_installed(home: &Home, cwd: &Path, id: &str, cache: &Path) {
    assert!(
        home.installed(cwd).iter().all(|i| i["id"] != id),
        "{id} recorded: {:?}",
        home.installed(cwd)
    );
    assert!(!cache.exists(), "{} left behind", cache.display());
    let settings = home.path.join("settings.json");
    if settings.exists() {
        let s = read_json(&settings);
        assert!(s["enabledPlugins"].get(id).is_none(), "{s}");
    }
    let grants = home.path.join("plugins/grants.json");
    if grants.exists() {
        let g = read_json(&grants);
        assert!(g["grants"].get(id).is_none(), "{g}");
    }
}

#[test]
fn install_refuses_a_plugin_whose_component_is_missing_or_broken_until_it_is_built() {
    let home = Home::new();
    let (_w, work) = tempdir();
    let mkt = example_marketplace(&work);
    // The example marketplace lists only what the build builds; url-guard (C) is listed here.
    let listing = mkt.join(".claude-plugin/marketplace.json");
    let mut m = read_json(&listing);
    m["plugins"]
        .as_array_mut()
        .expect("plugins")
        .push(json!({"name": "url-guard", "source": "./url-guard"}));
    std::fs::write(&listing, m.to_string()).expect("write marketplace.json");
    let source = mkt.join("url-guard");
    let wasm = source.join("wasm/url_guard.wasm");
    // Never committed, but another test binary may have built it in the checkout.
    if source.join("wasm").exists() {
        std::fs::remove_dir_all(source.join("wasm")).expect("rm wasm/");
    }
    home.ok(&work, &["plugin", "marketplace", "add", "./plugins"]);
    let id = "url-guard@warden-examples";
    let cache = home.path.join("plugins/cache/warden-examples/url-guard");

    // Not built: refused, naming the source's file and how to build it there.
    let o = home.fails(&work, &["plugin", "install", id, "--yes"]);
    let err = stderr(&o);
    assert!(
        err.contains(&format!("{} does not exist", wasm.display())),
        "{}",
        show(&o)
    );
    assert!(
        err.contains(&format!("`warden build {}`", source.display())),
        "{}",
        show(&o)
    );
    assert!(err.contains("nothing was installed"), "{}", show(&o));
    assert!(!stdout(&o).contains("Successfully"), "{}", show(&o));
    // No command that would write into the installed copy is suggested.
    assert!(!err.contains("plugins/cache"), "{}", show(&o));
    assert_not_installed(&home, &work, id, &cache);
    // --json says the same, with exit 1.
    let o = home.fails(&work, &["plugin", "install", id, "--yes", "--json"]);
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("does not exist")
            || stderr(&o).contains("does not exist"),
        "{}",
        show(&o)
    );
    assert_not_installed(&home, &work, id, &cache);

    // A core module, a truncated component and bytes that only start like WebAssembly.
    let valid_start = b"\0asm\x0d\0\x01\0";
    let mut truncated = valid_start.to_vec();
    truncated.extend_from_slice(&[0x01, 0x40, 0x00]);
    for (bytes, says) in [
        (&b"\0asm\x01\0\0\0"[..], "a core WebAssembly module"),
        (&truncated[..], "is not a valid WebAssembly component"),
        (&b"#!/bin/sh\nexit 0\n"[..], "is not WebAssembly"),
    ] {
        std::fs::create_dir_all(wasm.parent().expect("wasm/")).expect("mkdir");
        std::fs::write(&wasm, bytes).expect("write");
        let o = home.fails(&work, &["plugin", "install", id, "--yes"]);
        let err = stderr(&o);
        assert!(
            err.contains(&wasm.display().to_string()) && err.contains(says),
            "{says}: {}",
            show(&o)
        );
        assert_not_installed(&home, &work, id, &cache);
    }

    // Built in the source as the error says: installs, and verify passes.
    std::fs::remove_file(&wasm).expect("rm");
    let clang = toolchains::clang();
    let o = home
        .cmd(&work, &["build", source.to_str().expect("utf-8")])
        .env("WARDEN_CLANG", clang)
        .output()
        .expect("run warden build");
    assert!(o.status.success(), "warden build: {}", show(&o));
    let out = home.ok(&work, &["plugin", "install", id, "--yes"]);
    assert!(
        out.starts_with(&format!("✔ Successfully installed plugin: {id}")),
        "{out}"
    );
    let out = home.ok(&work, &["plugin", "verify"]);
    assert!(out.contains(&format!("{id} (user): ✔ ok")), "{out}");
    let v = home.json(&work, &["plugin", "details", id, "--json"]);
    assert_eq!(v["components"][0]["name"], "guard", "{v:#}");

    // Building in the installed copy is refused: it would break the digest verify checks.
    let installed = v["installPath"].as_str().expect("installPath");
    let o = home.fails(&work, &["build", installed]);
    assert!(
        stderr(&o).contains("is an installed copy of a plugin"),
        "{}",
        show(&o)
    );
    assert!(
        stderr(&o).contains("warden build <source dir>"),
        "{}",
        show(&o)
    );
    let out = home.ok(&work, &["plugin", "verify"]);
    assert!(out.contains(&format!("{id} (user): ✔ ok")), "{out}");
}

#[test]
fn parts_warden_does_not_act_on_are_named_once_at_install_and_in_details() {
    let home = Home::new();
    let (_w, work) = tempdir();
    let mkt = work.join("mkt");
    small_marketplace(&mkt, "small", false);
    let plugin = mkt.join("hello");
    let mut manifest = read_json(&plugin.join(".claude-plugin/plugin.json"));
    manifest["lspServers"] = json!({
        "rust": { "command": "rust-analyzer", "extensionToLanguage": { ".rs": "rust" } }
    });
    manifest["experimental"] = json!({
        "monitors": [{ "name": "log", "command": "tail -F log.txt", "description": "the log" }]
    });
    write(
        &plugin.join(".claude-plugin/plugin.json"),
        &manifest.to_string(),
    );
    write(
        &plugin.join("output-styles/terse.md"),
        "# Terse\n\nShort answers.\n",
    );
    write(&plugin.join("workflows/nightly.md"), "# Nightly\n");
    home.ok(&work, &["plugin", "marketplace", "add", "./mkt"]);
    let o = home.run(&work, &["plugin", "install", "hello@small"]);
    assert!(o.status.success(), "{}", show(&o));
    let err = stderr(&o);
    let lines = ["workflows: not supported yet, the workflows will not be available"];
    for l in lines {
        assert_eq!(err.matches(l).count(), 1, "{l}: {}", show(&o));
        assert!(
            err.lines()
                .any(|x| x.starts_with("warning: ") && x.ends_with(l)),
            "{}",
            show(&o)
        );
    }
    // Language servers, monitors and output styles are used (see tests/lsp.rs,
    // tests/monitors.rs, tests/main_prompt.rs): they are not among the parts left out.
    assert_eq!(err.matches("not supported yet").count(), 1, "{}", show(&o));
    assert!(!err.contains("lspServers"), "{}", show(&o));
    assert!(!err.contains("monitors"), "{}", show(&o));
    assert!(!err.contains("outputStyles"), "{}", show(&o));

    let out = home.ok(&work, &["plugin", "details", "hello"]);
    assert!(
        out.contains("language servers: plugin:hello:rust (.rs rust)"),
        "{out}"
    );
    for l in lines {
        assert_eq!(
            out.matches(&format!("warning: {l}")).count(),
            1,
            "{l}:\n{out}"
        );
    }
    let v = home.json(&work, &["plugin", "details", "hello", "--json"]);
    let keys: Vec<&str> = v["unsupported"]
        .as_array()
        .expect("unsupported")
        .iter()
        .filter_map(|u| u["key"].as_str())
        .collect();
    assert_eq!(keys, ["workflows"], "{v:#}");

    // A plugin that uses none of them hears nothing about them.
    let o = home.run(&work, &["plugin", "uninstall", "hello"]);
    assert!(o.status.success(), "{}", show(&o));
    let (_w2, work2) = tempdir();
    small_marketplace(&work2.join("mkt"), "plain", false);
    home.ok(&work2, &["plugin", "marketplace", "add", "./mkt"]);
    let o = home.run(&work2, &["plugin", "install", "hello@plain"]);
    assert!(o.status.success(), "{}", show(&o));
    assert!(!stderr(&o).contains("not supported"), "{}", show(&o));
    let v = home.json(&work2, &["plugin", "details", "hello@plain", "--json"]);
    assert_eq!(v["unsupported"], json!([]), "{v:#}");
}

/// A marketplace at `dir` whose one entry, sourced at the marketplace root, is `strict: false`
/// and lists no components, while the plugin.json beside it declares skills, commands and one
/// of two agents; `entry_extra` is merged into the entry.
fn strict_false_marketplace(dir: &Path, entry_extra: Value) {
    let mut entry = json!({
        "name": "kit", "source": "./", "strict": false,
        "description": "A kit of review helpers.", "version": "2.0.0"
    });
    if let (Some(e), Value::Object(extra)) = (entry.as_object_mut(), entry_extra) {
        e.extend(extra);
    }
    write(
        &dir.join(".claude-plugin/marketplace.json"),
        &json!({ "name": "kits", "owner": { "name": "Tests" }, "plugins": [entry] }).to_string(),
    );
    write(
        &dir.join(".claude-plugin/plugin.json"),
        &json!({
            "name": "kit", "version": "2.0.0", "description": "A kit of review helpers.",
            "skills": ["./skills/"], "commands": ["./commands/"], "agents": ["./agents/reviewer.md"],
            "mcpServers": {}
        })
        .to_string(),
    );
    write(
        &dir.join("skills/review/SKILL.md"),
        "---\nname: review\ndescription: Reviews a change.\n---\nReview it.\n",
    );
    write(
        &dir.join("commands/plan.md"),
        "---\ndescription: Plans a change.\n---\nPlan it.\n",
    );
    write(
        &dir.join("agents/reviewer.md"),
        "---\nname: reviewer\ndescription: Reviews code.\n---\nReview.\n",
    );
    write(
        &dir.join("agents/unlisted.md"),
        "---\nname: unlisted\ndescription: Not listed in plugin.json.\n---\nNo.\n",
    );
}

#[test]
fn a_strict_false_entry_without_components_loads_the_components_of_plugin_json() {
    let home = Home::new();
    let (_w, work) = tempdir();
    let mkt = work.join("kits");
    strict_false_marketplace(&mkt, json!({}));

    let o = home.run(&work, &["plugin", "validate", "./kits"]);
    assert!(o.status.success(), "{}", show(&o));
    home.ok(&work, &["plugin", "marketplace", "add", "./kits"]);
    let out = home.ok(&work, &["plugin", "install", "kit@kits"]);
    assert!(
        out.starts_with("✔ Successfully installed plugin: kit@kits"),
        "{out}"
    );
    let v = home.json(&work, &["plugin", "details", "kit", "--json"]);
    assert_eq!(v["version"], "2.0.0", "{v:#}");
    assert_eq!(v["skills"], json!(["kit:review"]), "{v:#}");
    assert_eq!(v["commands"], json!(["kit:plan"]), "{v:#}");
    // plugin.json's `agents` replaces the default folder, so the unlisted agent stays out.
    assert_eq!(v["agents"], json!(["kit:reviewer"]), "{v:#}");

    // An entry that declares components as well is the conflict Claude Code reports.
    let (_w2, work2) = tempdir();
    let mkt2 = work2.join("kits");
    strict_false_marketplace(&mkt2, json!({ "skills": ["./skills/review"] }));
    let o = home.fails(&work2, &["plugin", "validate", "./kits"]);
    assert!(
        stdout(&o).contains("conflicting manifests")
            || stderr(&o).contains("conflicting manifests"),
        "{}",
        show(&o)
    );
}

#[test]
fn user_config_values_are_set_by_enable_and_reach_hooks_and_servers_but_not_from_a_repository() {
    let home = Home::new();
    let (_w, work) = tempdir();
    let (_p, project) = tempdir();
    write(
        &work.join("mkt/.claude-plugin/marketplace.json"),
        &json!({"name": "cfg-mkt", "owner": {"name": "Tests"},
            "plugins": [{"name": "cfg", "source": "./cfg"}]})
        .to_string(),
    );
    write(
        &work.join("mkt/cfg/.claude-plugin/plugin.json"),
        &json!({"name": "cfg", "version": "1.0.0", "userConfig": {
            "api_url": {"type": "string", "title": "API", "description": "Where", "required": true},
            "token": {"type": "string", "title": "Token", "description": "Secret",
                "sensitive": true, "required": true},
            "level": {"type": "number", "title": "Level", "description": "How much",
                "default": 3, "min": 1, "max": 9}
        }})
        .to_string(),
    );
    write(
        &work.join("mkt/cfg/hooks/hooks.json"),
        &json!({"hooks": {"UserPromptSubmit": [{"hooks": [
            {"type": "command",
             "command": "echo \"url=$CLAUDE_PLUGIN_OPTION_API_URL token=$CLAUDE_PLUGIN_OPTION_TOKEN level=$CLAUDE_PLUGIN_OPTION_LEVEL\""},
            {"type": "command", "command": "/bin/echo", "args": ["exec=${user_config.api_url}"]}
        ]}]}})
        .to_string(),
    );
    write(
        &work.join("mkt/cfg/.mcp.json"),
        &json!({"mcpServers": {"api": {"type": "http", "url": "https://${user_config.api_url}/mcp"}}})
            .to_string(),
    );
    home.ok(&work, &["plugin", "marketplace", "add", "./mkt"]);
    home.ok(&project, &["plugin", "install", "cfg@cfg-mkt", "--yes"]);
    home.ok(&project, &["plugin", "disable", "cfg"]);

    // Required options without a value: named, and the plugin stays off.
    let o = home.fails(&project, &["plugin", "enable", "cfg"]);
    assert!(stderr(&o).contains("api_url, token"), "{}", show(&o));
    let o = home.fails(
        &project,
        &["plugin", "enable", "cfg", "--config", "level=12"],
    );
    assert!(stderr(&o).contains("level"), "{}", show(&o));

    let o = home.run(
        &project,
        &[
            "plugin",
            "enable",
            "cfg",
            "--config",
            "api_url=good.example",
            "--config",
            "token=s3cr3t-value",
        ],
    );
    assert!(o.status.success(), "{}", show(&o));
    assert!(
        !show(&o).contains("s3cr3t"),
        "a sensitive value was printed: {}",
        show(&o)
    );
    let settings = std::fs::read_to_string(home.path.join("settings.json")).expect("settings");
    assert!(!settings.contains("s3cr3t"), "{settings}");
    assert!(settings.contains("good.example"), "{settings}");
    let secrets = home.path.join("plugin-secrets.json");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&secrets)
        .expect("private file")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    // Values for a plugin already on are stored without a failure.
    home.ok(
        &project,
        &["plugin", "enable", "cfg", "--config", "level=5"],
    );

    // A repository cannot set them: its settings' pluginConfigs are not read.
    write(
        &project.join(".claude/settings.json"),
        &json!({"pluginConfigs": {"cfg@cfg-mkt": {"options": {
            "api_url": "evil.example", "token": "stolen", "level": 9}}}})
        .to_string(),
    );
    let mut c = home.cmd(&project, &["hook", "UserPromptSubmit"]);
    c.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = c.spawn().expect("warden hook");
    use std::io::Write as _;
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(
            json!({"hook_event_name": "UserPromptSubmit", "prompt": "hi",
                "cwd": project.display().to_string(), "session_id": "s"})
            .to_string()
            .as_bytes(),
        )
        .expect("write");
    let o = child.wait_with_output().expect("hook");
    let out = show(&o);
    assert!(
        out.contains("url=good.example token=s3cr3t-value level=5"),
        "{out}"
    );
    assert!(out.contains("exec=good.example"), "{out}");
    assert!(!out.contains("evil") && !out.contains("stolen"), "{out}");

    // `warden context` shows a server's config as written: no value is printed there.
    let v = home.json(&project, &["context", "--json"]);
    let text = v["mcpServers"].to_string();
    assert!(
        text.contains("https://${user_config.api_url}/mcp"),
        "{text}"
    );
}
