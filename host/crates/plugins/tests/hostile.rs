//! Hostile marketplaces and plugins: names that escape the Warden home, symlink DAGs, FIFOs,
//! copy budgets, oversized manifests, planted symlinks in the cache, and the per-component
//! digests recorded in grants.
//!
//! A marketplace arrives from elsewhere as a git repository, so the hostile ones are built here
//! as local bare repositories cloned over `file://`. Each test puts a `victim` directory next to
//! `WARDEN_HOME` and checks that it survives.

mod common;

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use common::*;
use serde_json::json;
use sha2::{Digest, Sha256};
use warden_config::Scope;
use warden_plugins::{InstallOptions, InstallOutcome, PluginError};

fn user() -> InstallOptions {
    InstallOptions {
        scope: Scope::User,
        accept_capabilities: true,
    }
}

fn installed(o: InstallOutcome) -> warden_plugins::InstallReport {
    match o {
        InstallOutcome::Installed(r) => r,
        InstallOutcome::NeedsConsent(c) => panic!("unexpected consent request: {}", c.message),
    }
}

/// Commits the tree at `work` and returns the `file://` URL of a bare clone of it.
fn bare_repo(env: &Env, work: &Path, name: &str) -> String {
    git_init_commit(work);
    let bare = env.path(&format!("remotes/{name}.git"));
    std::fs::create_dir_all(bare.parent().expect("parent")).expect("mkdir");
    git(
        env.tmp.path(),
        &[
            "clone",
            "-q",
            "--bare",
            work.to_str().expect("utf8"),
            bare.to_str().expect("utf8"),
        ],
    );
    file_url(&bare)
}

/// A `victim` directory next to the home, with one file in it.
fn victim(env: &Env) -> PathBuf {
    let v = env.path("victim");
    write_tree(&v, &[("precious.txt", "keep me")]);
    v
}

fn assert_victim_intact(v: &Path) {
    assert_eq!(
        std::fs::read_to_string(v.join("precious.txt"))
            .ok()
            .as_deref(),
        Some("keep me"),
        "the victim directory was touched"
    );
    let n = std::fs::read_dir(v).expect("victim").count();
    assert_eq!(n, 1, "something was written into the victim directory");
}

/// Leftover staging directories or clones under `plugins/.tmp`.
fn staging_leftovers(env: &Env) -> usize {
    std::fs::read_dir(env.home.join("plugins/.tmp"))
        .map(|rd| rd.count())
        .unwrap_or(0)
}

#[test]
fn marketplace_name_that_escapes_the_home_is_refused_naming_file_and_field() {
    for absolute in [false, true] {
        let env = Env::new();
        let v = victim(&env);
        let name = if absolute {
            v.to_str().expect("utf8").to_string()
        } else {
            "../../../victim".to_string()
        };
        let name = name.as_str();
        let work = env.path("work");
        write_tree(
            &work,
            &[(
                ".claude-plugin/marketplace.json",
                &marketplace_json(name, json!([])),
            )],
        );
        let url = bare_repo(&env, &work, "mkt");
        let err = env
            .manager()
            .marketplace_add(&url, Scope::User)
            .expect_err("an escaping name is refused");
        let msg = err.to_string();
        assert!(
            msg.contains(".claude-plugin/marketplace.json") && msg.contains("field \"name\""),
            "{msg}"
        );
        assert_victim_intact(&v);
        assert!(
            !env.home.join("plugins/known_marketplaces.json").exists(),
            "nothing was recorded"
        );
        assert_eq!(staging_leftovers(&env), 0, "the clone was cleaned up");
    }
}

#[test]
fn marketplace_remove_never_deletes_outside_the_marketplaces_directory() {
    let env = Env::new();
    let v = victim(&env);
    // State written by another tool (or an older Warden) that recorded an escaping name.
    let escaping = env.home.join("plugins/marketplaces/../../../victim");
    write_tree(
        &env.home,
        &[(
            "plugins/known_marketplaces.json",
            &json!({"../../../victim": {
                "source": {"source": "git", "url": "file:///nowhere.git"},
                "installLocation": escaping,
                "lastUpdated": "2026-01-01T00:00:00.000Z"
            }})
            .to_string(),
        )],
    );
    let out = env
        .manager()
        .marketplace_remove("../../../victim", Scope::User, true)
        .expect("an unsafe name is forgotten");
    assert_eq!(out.marketplace, "../../../victim");
    assert_victim_intact(&v);
    let known = read_json(&env.home.join("plugins/known_marketplaces.json"));
    assert!(known.get("../../../victim").is_none(), "forgotten: {known}");
}

#[cfg(unix)]
#[test]
fn a_planted_symlink_in_the_marketplaces_directory_is_not_followed() {
    let env = Env::new();
    let v = victim(&env);
    let work = env.path("work");
    write_tree(
        &work,
        &[(
            ".claude-plugin/marketplace.json",
            &marketplace_json("good", json!([])),
        )],
    );
    let url = bare_repo(&env, &work, "mkt");
    std::fs::create_dir_all(env.home.join("plugins/marketplaces")).expect("mkdir");
    std::os::unix::fs::symlink(&v, env.home.join("plugins/marketplaces/good")).expect("ln");
    let err = env
        .manager()
        .marketplace_add(&url, Scope::User)
        .expect_err("a symlinked destination is refused");
    assert!(matches!(err, PluginError::UnsafePath(_)), "{err}");
    assert!(err.to_string().contains("symlink"), "{err}");
    assert_victim_intact(&v);
}

#[cfg(unix)]
#[test]
fn a_planted_symlink_in_the_cache_is_not_followed() {
    let env = Env::new();
    let v = victim(&env);
    let work = env.path("work");
    write_tree(
        &work,
        &[(
            ".claude-plugin/marketplace.json",
            &marketplace_json("m", json!([{"name": "p", "source": "./p"}])),
        )],
    );
    simple_plugin(&work.join("p"), "p", Some("1.0.0"));
    let url = bare_repo(&env, &work, "mkt");
    let m = env.manager();
    m.marketplace_add(&url, Scope::User).expect("add");
    std::fs::create_dir_all(env.home.join("plugins/cache")).expect("mkdir");
    std::os::unix::fs::symlink(&v, env.home.join("plugins/cache/m")).expect("ln");
    let err = m
        .install("p@m", &user())
        .expect_err("a symlinked cache directory is refused");
    assert!(matches!(err, PluginError::UnsafePath(_)), "{err}");
    assert_victim_intact(&v);
    assert_eq!(staging_leftovers(&env), 0);
}

#[test]
fn entry_names_and_versions_that_are_not_safe_names_are_refused() {
    let env = Env::new();
    let v = victim(&env);
    let work = env.path("work");
    write_tree(
        &work,
        &[(
            ".claude-plugin/marketplace.json",
            &marketplace_json(
                "m",
                json!([
                    {"name": "../../../../victim", "source": "./a"},
                    {"name": "badver", "source": "./b"},
                    {"name": "build", "source": "./c"},
                    {"name": "dated", "source": "./d"},
                    {"name": "entryver", "source": "./e", "version": "CON"}
                ]),
            ),
        )],
    );
    simple_plugin(&work.join("a"), "a", Some("1.0.0"));
    simple_plugin(&work.join("b"), "badver", Some("../../../../../victim"));
    simple_plugin(&work.join("c"), "build", Some("1.2.3+build"));
    simple_plugin(&work.join("d"), "dated", Some("2024.01.01"));
    simple_plugin(&work.join("e"), "entryver", None);
    let url = bare_repo(&env, &work, "mkt");
    let m = env.manager();
    m.marketplace_add(&url, Scope::User).expect("add");

    let mut d = Vec::new();
    let cat = warden_plugins::load_marketplace(&env.home.join("plugins/marketplaces/m"), &mut d)
        .expect("catalog");
    assert!(cat.entry("../../../../victim").is_none());
    assert!(
        d.iter().any(|x| x.is_error()
            && x.message.contains("plugins[0]")
            && x.message.contains("field \"name\"")),
        "{d:?}"
    );
    assert!(m.install("../../../../victim@m", &user()).is_err());

    let err = m
        .install("badver@m", &user())
        .expect_err("escaping version");
    match &err {
        PluginError::InvalidName { file, field, .. } => {
            assert!(file.ends_with("b/.claude-plugin/plugin.json"), "{err}");
            assert_eq!(field, "version");
        }
        other => panic!("wrong error: {other}"),
    }
    let err = m.install("entryver@m", &user()).expect_err("device name");
    assert!(
        err.to_string().contains("marketplace.json") && err.to_string().contains("device"),
        "{err}"
    );

    for (id, version) in [("build@m", "1.2.3+build"), ("dated@m", "2024.01.01")] {
        let r = installed(m.install(id, &user()).expect("legitimate version installs"));
        assert_eq!(r.version, version);
        assert!(r.install_path.ends_with(version));
    }
    assert_victim_intact(&v);
    assert_eq!(staging_leftovers(&env), 0);
}

#[cfg(unix)]
#[test]
fn a_symlink_dag_is_copied_once_per_directory() {
    use std::os::unix::fs::symlink;
    let env = Env::new();
    let work = env.path("work");
    write_tree(
        &work,
        &[(
            ".claude-plugin/marketplace.json",
            &marketplace_json("m", json!([{"name": "p", "source": "./p"}])),
        )],
    );
    simple_plugin(&work.join("p"), "p", Some("1.0.0"));
    // dN/{a,b} -> ../d(N+1): 2^30 paths through 31 directories.
    let levels = 30;
    for n in 0..levels {
        let d = work.join(format!("dag/d{n}"));
        std::fs::create_dir_all(&d).expect("mkdir");
        symlink(format!("../d{}", n + 1), d.join("a")).expect("ln");
        symlink(format!("../d{}", n + 1), d.join("b")).expect("ln");
    }
    write_tree(&work, &[(&format!("dag/d{levels}/leaf.txt"), "leaf")]);
    symlink("../dag/d0", work.join("p/deep")).expect("ln");
    let url = bare_repo(&env, &work, "mkt");
    let m = env.manager();
    m.marketplace_add(&url, Scope::User).expect("add");

    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let r = m.install("p@m", &user()).map(installed);
        let _ = tx.send(r.map(|r| r.install_path));
    });
    let path = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("install finishes instead of expanding the DAG")
        .expect("install");
    let mut entries = 0;
    let mut stack = vec![path.clone()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("read").flatten() {
            entries += 1;
            if e.file_type().expect("type").is_dir() {
                stack.push(e.path());
            }
        }
    }
    assert!(entries < 200, "{entries} entries: the DAG was expanded");
    // Every path through the DAG still reaches the leaf.
    let via_b = path.join(format!("deep/{}leaf.txt", "b/".repeat(levels)));
    assert_eq!(std::fs::read_to_string(via_b).expect("leaf via b"), "leaf");
    assert!(
        std::fs::symlink_metadata(path.join("deep/b"))
            .expect("b")
            .file_type()
            .is_symlink()
    );
}

#[cfg(unix)]
#[test]
fn a_fifo_in_a_plugin_is_skipped_with_a_warning_instead_of_hanging() {
    let env = Env::new();
    let mkt = env.path("mkt");
    write_tree(
        &mkt,
        &[(
            ".claude-plugin/marketplace.json",
            &marketplace_json("m", json!([{"name": "p", "source": "./p"}])),
        )],
    );
    simple_plugin(&mkt.join("p"), "p", Some("1.0.0"));
    let fifo = mkt.join("p/pipe");
    let st = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo");
    assert!(st.success());
    let m = env.manager();
    m.marketplace_add(mkt.to_str().expect("utf8"), Scope::User)
        .expect("add");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(m.install("p@m", &user()).map(installed));
    });
    let r = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("install does not hang on the FIFO")
        .expect("install");
    assert!(std::fs::symlink_metadata(r.install_path.join("pipe")).is_err());
    let w = r
        .warnings
        .iter()
        .find(|d| d.file.ends_with("p/pipe"))
        .expect("a warning names the FIFO");
    assert!(w.message.contains("FIFO"), "{}", w.message);
}

/// A plugin with `files` files of `size` bytes each.
fn plugin_with_files(root: &Path, version: &str, files: usize, size: usize) {
    simple_plugin(root, "p", Some(version));
    let body = "x".repeat(size);
    for i in 0..files {
        write_tree(root, &[(&format!("data/f{i}.txt"), &body)]);
    }
}

#[test]
fn copy_budgets_come_from_user_settings_and_a_failure_leaves_the_previous_install() {
    let env = Env::new();
    let v = victim(&env);
    let work = env.path("work");
    write_tree(
        &work,
        &[(
            ".claude-plugin/marketplace.json",
            &marketplace_json("m", json!([{"name": "p", "source": "./p"}])),
        )],
    );
    plugin_with_files(&work.join("p"), "1.0.0", 2, 10);
    let url = bare_repo(&env, &work, "mkt");
    let m = env.manager();
    m.marketplace_add(&url, Scope::User).expect("add");
    let v1 = installed(m.install("p@m", &user()).expect("v1"));

    // Version 2 is bigger in each dimension; each budget, set in user settings, refuses it.
    std::fs::remove_dir_all(work.join("p")).expect("rm");
    plugin_with_files(&work.join("p"), "2.0.0", 30, 1000);
    write_tree(&work, &[("p/a/b/c/d/e/f/g/h.txt", "deep")]);
    git_init_commit(&work);
    git(
        &work,
        &[
            "push",
            "-q",
            env.path("remotes/mkt.git").to_str().expect("utf8"),
            "HEAD:refs/heads/main",
            "--force",
        ],
    );
    for (key, value) in [
        ("maxFiles", 20),
        ("maxFileBytes", 500),
        ("maxTotalBytes", 20_000),
        ("maxDepth", 4),
    ] {
        write_tree(
            &env.home,
            &[(
                "settings.json",
                &json!({"plugins": {"copyLimits": {key: value}}}).to_string(),
            )],
        );
        let err = m
            .update("p@m", Some(Scope::User), true)
            .expect_err("over budget");
        assert!(
            matches!(&err, PluginError::CopyBudget { key: k, .. } if *k == key),
            "{key}: {err}"
        );
        assert!(err.to_string().contains(key), "{err}");
        assert_eq!(staging_leftovers(&env), 0, "{key}: staging removed");
        let list = m.list(false).expect("list");
        assert_eq!(
            list.installed[0].version, "1.0.0",
            "{key}: v1 still recorded"
        );
        assert!(
            v1.install_path.join("data/f1.txt").is_file(),
            "{key}: v1 intact"
        );
    }
    assert_victim_intact(&v);

    // Within the budgets the update goes through.
    write_tree(
        &env.home,
        &[(
            "settings.json",
            &json!({"plugins": {"copyLimits": {"maxFiles": 100}}}).to_string(),
        )],
    );
    let v2 = installed(m.update("p@m", Some(Scope::User), true).expect("v2"));
    assert_eq!(v2.version, "2.0.0");

    // A bad setting is an error naming the file and the field.
    write_tree(
        &env.home,
        &[(
            "settings.json",
            r#"{"plugins": {"copyLimits": {"maxFiles": -1}}}"#,
        )],
    );
    let err = m.copy_limits().expect_err("bad setting");
    let msg = err.to_string();
    assert!(
        msg.contains("settings.json") && msg.contains("plugins.copyLimits.maxFiles"),
        "{msg}"
    );
}

#[test]
fn oversized_manifests_are_refused_before_they_are_read() {
    let env = Env::new();
    let plugin = env.path("big");
    simple_plugin(&plugin, "big", Some("1.0.0"));
    let pad = "x".repeat(2 << 20);
    write_tree(
        &plugin,
        &[(
            ".claude-plugin/plugin.json",
            &json!({"name": "big", "description": pad}).to_string(),
        )],
    );
    let err = warden_plugins::load_plugin(&plugin).expect_err("too large");
    let msg = err.to_string();
    assert!(
        msg.contains("plugin.json")
            && msg.contains(&warden_plugins::limits::MAX_MANIFEST_BYTES.to_string()),
        "{msg}"
    );

    let mkt = env.path("mkt");
    let pad = "y".repeat(9 << 20);
    write_tree(
        &mkt,
        &[(
            ".claude-plugin/marketplace.json",
            &json!({"name": "m", "owner": {"name": "o"}, "description": pad, "plugins": []})
                .to_string(),
        )],
    );
    let err = env
        .manager()
        .marketplace_add(mkt.to_str().expect("utf8"), Scope::User)
        .expect_err("too large");
    let msg = err.to_string();
    assert!(
        msg.contains("marketplace.json")
            && msg.contains(&warden_plugins::limits::MAX_MARKETPLACE_BYTES.to_string()),
        "{msg}"
    );

    let hooks = env.path("hooky");
    simple_plugin(&hooks, "hooky", Some("1.0.0"));
    let big_hooks = format!(
        r#"{{"description": "{}", "hooks": {{}}}}"#,
        "z".repeat(2 << 20)
    );
    write_tree(&hooks, &[("hooks/hooks.json", &big_hooks)]);
    let report = warden_plugins::validate(&hooks);
    assert!(
        report
            .diagnostics
            .iter()
            .any(|d| d.file.ends_with("hooks/hooks.json") && d.message.contains("limit")),
        "{report:?}"
    );
}

fn warden_plugin(root: &Path) {
    let m = json!({"name": "guard", "version": "1.0.0", "warden": {
        "components": {"g": {"path": "wasm/g.wasm", "world": "hook", "capabilities": {"env": ["HOME"]}}},
        "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "wasm", "component": "g"}]}]}}});
    write_tree(
        root,
        &[
            (".claude-plugin/plugin.json", &m.to_string()),
            ("wasm/g.wasm", EMPTY_COMPONENT),
        ],
    );
}

#[test]
fn grants_record_the_digest_of_each_component_file() {
    let env = Env::new();
    let mkt = env.path("mkt");
    write_tree(
        &mkt,
        &[(
            ".claude-plugin/marketplace.json",
            &marketplace_json("m", json!([{"name": "guard", "source": "./guard"}])),
        )],
    );
    warden_plugin(&mkt.join("guard"));
    let m = env.manager();
    m.marketplace_add(mkt.to_str().expect("utf8"), Scope::User)
        .expect("add");
    let r = installed(m.install("guard@m", &user()).expect("install"));
    let wasm = std::fs::read(r.install_path.join("wasm/g.wasm")).expect("wasm");
    let expected = hex::encode(Sha256::digest(&wasm));
    let g = m.grant_for("guard@m", &r.sha256).expect("grant");
    assert_eq!(g.component_digest("g"), Some(expected.as_str()));
    assert_eq!(g.component_digest("other"), None);
    let stored = read_json(&env.home.join("plugins/grants.json"));
    assert_eq!(
        stored["grants"]["guard@m"][0]["componentDigests"]["g"],
        json!(expected)
    );

    // `grant` records them too, and refuses a tampered copy.
    let g2 = m.grant("guard@m").expect("grant verb");
    assert_eq!(g2.component_digest("g"), Some(expected.as_str()));
    std::fs::write(r.install_path.join("wasm/g.wasm"), "\0asm-evil").expect("tamper");
    let err = m
        .grant("guard@m")
        .expect_err("tampered copy is not granted");
    assert!(err.to_string().contains("verify"), "{err}");
    let g3 = m.grant_for("guard@m", &r.sha256).expect("grant");
    assert_eq!(g3.component_digest("g"), Some(expected.as_str()));

    // A grant written before component digests existed still parses.
    let mut old = stored.clone();
    if let Some(o) = old["grants"]["guard@m"][0].as_object_mut() {
        o.remove("componentDigests");
    }
    std::fs::write(env.home.join("plugins/grants.json"), old.to_string()).expect("write");
    let g4 = m.grant_for("guard@m", &r.sha256).expect("old grant parses");
    assert_eq!(g4.component_digest("g"), None);
    assert!(g4.component("g").is_some());
}

#[test]
fn unsafe_component_names_are_refused() {
    let env = Env::new();
    let p = env.path("p");
    let m = json!({"name": "p", "warden": {
        "components": {"../evil": {"path": "wasm/g.wasm", "world": "hook"}}}});
    write_tree(
        &p,
        &[
            (".claude-plugin/plugin.json", &m.to_string()),
            ("wasm/g.wasm", "\0asm"),
        ],
    );
    let report = warden_plugins::validate(&p);
    assert!(
        report.diagnostics.iter().any(|d| d.is_error()
            && d.message.contains("../evil")
            && d.message.contains("field \"warden.components\"")),
        "{report:?}"
    );
}

#[cfg(unix)]
#[test]
fn a_symlink_loop_in_a_component_folder_is_walked_once() {
    let env = Env::new();
    let p = env.path("p");
    simple_plugin(&p, "p", Some("1.0.0"));
    std::os::unix::fs::symlink(".", p.join("commands/again")).expect("ln");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(warden_plugins::load_plugin(&p).map(|l| l.commands.len()));
    });
    let n = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("loading terminates")
        .expect("loads");
    assert_eq!(n, 1, "the one command, found once");
}

#[cfg(unix)]
#[test]
fn uninstall_does_not_delete_through_a_symlinked_data_directory() {
    let env = Env::new();
    let mkt = env.path("mkt");
    write_tree(
        &mkt,
        &[(
            ".claude-plugin/marketplace.json",
            &marketplace_json("m", json!([{"name": "p", "source": "./p"}])),
        )],
    );
    simple_plugin(&mkt.join("p"), "p", Some("1.0.0"));
    let m = env.manager();
    m.marketplace_add(mkt.to_str().expect("utf8"), Scope::User)
        .expect("add");
    installed(m.install("p@m", &user()).expect("install"));
    let v = env.path("victim");
    write_tree(&v, &[("p-m/precious.txt", "keep me")]);
    let _ = std::fs::remove_dir_all(env.home.join("plugins/data"));
    std::os::unix::fs::symlink(&v, env.home.join("plugins/data")).expect("ln");
    m.uninstall("p@m", None, false).expect("uninstall");
    assert_eq!(
        std::fs::read_to_string(v.join("p-m/precious.txt"))
            .ok()
            .as_deref(),
        Some("keep me")
    );
}
