//! Marketplaces and install: files in Claude Code's shapes, scopes, enable/disable, update,
//! uninstall, verify, digests, capability grants, git sources (file:// and git daemon),
//! git-subdir, and crash safety.

mod common;

use std::path::Path;

use common::*;
use serde_json::json;
use warden_config::Scope;
use warden_plugins::{Consent, InstallOptions, InstallOutcome, PluginError, VerifyStatus};

fn dir_marketplace(env: &Env, name: &str, entries: serde_json::Value) -> std::path::PathBuf {
    let mkt = env.path("mkt");
    write_tree(
        &mkt,
        &[(
            ".claude-plugin/marketplace.json",
            &marketplace_json(name, entries),
        )],
    );
    mkt
}

fn user() -> InstallOptions {
    InstallOptions {
        scope: Scope::User,
        accept_capabilities: false,
    }
}

fn installed(o: InstallOutcome) -> warden_plugins::InstallReport {
    match o {
        InstallOutcome::Installed(r) => r,
        InstallOutcome::NeedsConsent(c) => panic!("unexpected consent request: {}", c.message),
    }
}

#[test]
fn directory_marketplace_full_lifecycle_in_claude_code_shapes() {
    let env = Env::new();
    let mkt = dir_marketplace(
        &env,
        "demo-mkt",
        json!([{"name": "valid-plugin", "source": "./plugins/valid-plugin"}, {"name": "nover", "source": "./plugins/nover"}]),
    );
    simple_plugin(
        &mkt.join("plugins/valid-plugin"),
        "valid-plugin",
        Some("1.0.0"),
    );
    simple_plugin(&mkt.join("plugins/nover"), "nover", None);
    // Other keys of the settings file survive every write.
    write_tree(
        &env.home,
        &[(
            "settings.json",
            r#"{"model": "opus", "permissions": {"allow": ["Read"]}}"#,
        )],
    );
    let m = env.manager();

    let add = m
        .marketplace_add(mkt.to_str().expect("utf8"), Scope::User)
        .expect("add");
    assert_eq!(
        add.message,
        "✔ Successfully added marketplace: demo-mkt (declared in user settings)"
    );
    let known = read_json(&env.home.join("plugins/known_marketplaces.json"));
    let canon = mkt.canonicalize().expect("canon");
    assert_eq!(
        known["demo-mkt"]["source"],
        json!({"source": "directory", "path": canon.to_str()})
    );
    assert_eq!(known["demo-mkt"]["installLocation"], json!(canon.to_str()));
    assert!(
        known["demo-mkt"]["lastUpdated"]
            .as_str()
            .is_some_and(|s| s.ends_with('Z'))
    );

    let r = installed(
        m.install("valid-plugin@demo-mkt", &user())
            .expect("install"),
    );
    assert_eq!(
        r.message,
        "✔ Successfully installed plugin: valid-plugin@demo-mkt (scope: user)"
    );
    let json_line = serde_json::to_value(&r).expect("ser");
    assert_eq!(json_line["command"], "install");
    assert_eq!(json_line["outcome"], "ok");
    assert_eq!(json_line["pluginId"], "valid-plugin@demo-mkt");
    let cache = env.home.join("plugins/cache/demo-mkt/valid-plugin/1.0.0");
    assert_eq!(r.install_path, cache);
    assert!(cache.join("skills/review/SKILL.md").is_file());
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(cache.join("h.sh"))
                .expect("meta")
                .permissions()
                .mode()
                & 0o111,
            0o111,
            "exec bit kept"
        );
    }

    let ip = read_json(&env.home.join("plugins/installed_plugins.json"));
    assert_eq!(ip["version"], 2);
    let rec = &ip["plugins"]["valid-plugin@demo-mkt"][0];
    assert_eq!(rec["scope"], "user");
    assert_eq!(rec["version"], "1.0.0");
    assert_eq!(rec["installPath"], json!(cache.to_str()));
    assert!(rec["installedAt"].is_string() && rec["lastUpdated"].is_string());
    assert_eq!(rec["warden"]["sha256"].as_str().map(str::len), Some(64));
    assert!(rec.get("projectPath").is_none());

    let settings = read_json(&env.home.join("settings.json"));
    assert_eq!(settings["model"], "opus");
    assert_eq!(settings["permissions"]["allow"], json!(["Read"]));
    assert_eq!(
        settings["extraKnownMarketplaces"]["demo-mkt"],
        json!({"source": {"source": "directory", "path": canon.to_str()}})
    );
    assert_eq!(settings["enabledPlugins"]["valid-plugin@demo-mkt"], true);

    // Project scope install of the same plugin, in the project's settings file.
    let p = installed(
        m.install(
            "valid-plugin@demo-mkt",
            &InstallOptions {
                scope: Scope::Project,
                accept_capabilities: false,
            },
        )
        .expect("install project"),
    );
    assert_eq!(p.install_path, cache, "same version shares the cache dir");
    let ip = read_json(&env.home.join("plugins/installed_plugins.json"));
    assert_eq!(
        ip["plugins"]["valid-plugin@demo-mkt"][1]["scope"],
        "project"
    );
    assert_eq!(
        ip["plugins"]["valid-plugin@demo-mkt"][1]["projectPath"],
        json!(env.project.to_str())
    );
    assert_eq!(
        read_json(&env.project.join(".claude/settings.json")),
        json!({"enabledPlugins": {"valid-plugin@demo-mkt": true}})
    );

    // No version anywhere → "unknown".
    let n = installed(m.install("nover", &user()).expect("install by bare name"));
    assert_eq!(n.version, "unknown");
    assert!(
        env.home
            .join("plugins/cache/demo-mkt/nover/unknown")
            .is_dir()
    );

    // list, disable, enable.
    let list = m.list(true).expect("list");
    assert_eq!(list.installed.len(), 3);
    assert!(list.installed.iter().all(|i| i.enabled));
    let d = m
        .disable("valid-plugin@demo-mkt", Some(Scope::User))
        .expect("disable");
    assert_eq!(serde_json::to_value(&d).expect("ser")["enabled"], false);
    assert_eq!(
        read_json(&env.home.join("settings.json"))["enabledPlugins"]["valid-plugin@demo-mkt"],
        false
    );
    // The project scope still says true and beats user.
    assert!(m.is_enabled("valid-plugin@demo-mkt", true));
    m.disable("valid-plugin", Some(Scope::Project))
        .expect("disable project");
    assert!(!m.is_enabled("valid-plugin@demo-mkt", true));
    assert!(
        m.active_plugins()
            .expect("active")
            .iter()
            .all(|a| a.plugin_id != "valid-plugin@demo-mkt")
    );
    m.enable("valid-plugin@demo-mkt", Some(Scope::Project))
        .expect("enable");
    assert!(m.is_enabled("valid-plugin@demo-mkt", true));

    // The runtime view: active plugins load from the cache with their components.
    let loaded = m.load_active().expect("load");
    let (a, l) = loaded
        .iter()
        .find(|(a, _)| a.plugin_id == "valid-plugin@demo-mkt")
        .expect("active");
    let l = l.as_ref().expect("loads");
    assert_eq!(a.scope, Scope::Project);
    assert_eq!(l.skill_name(&l.skills[0], None), "valid-plugin:review");
    // `valid-plugin-demo-mkt` is also what `valid@plugin-demo-mkt` flattens to: the name is
    // made unique.
    assert_eq!(
        a.data_dir,
        env.home
            .join("plugins/data")
            .join(warden_plugins::namespace::data_dir_name(
                "valid-plugin@demo-mkt"
            ))
    );
    assert!(
        a.data_dir
            .to_string_lossy()
            .contains("/plugins/data/valid-plugin-demo-mkt."),
        "{}",
        a.data_dir.display()
    );

    // verify is clean.
    assert!(m.verify().expect("verify").ok);

    // Uninstall (user scope): record and enabledPlugins key gone; cache still used by project.
    let u = m
        .uninstall("valid-plugin@demo-mkt", Some(Scope::User), false)
        .expect("uninstall");
    assert_eq!(serde_json::to_value(&u).expect("ser")["keptData"], false);
    assert!(
        read_json(&env.home.join("settings.json"))["enabledPlugins"]
            .get("valid-plugin@demo-mkt")
            .is_none()
    );
    assert!(
        !cache.join(".orphaned_at").exists(),
        "still used by the project install"
    );
    m.uninstall("valid-plugin@demo-mkt", None, false)
        .expect("uninstall project");
    assert!(cache.join(".orphaned_at").is_file());
    let ip = read_json(&env.home.join("plugins/installed_plugins.json"));
    assert!(ip["plugins"].get("valid-plugin@demo-mkt").is_none());
    assert!(matches!(
        m.uninstall("valid-plugin@demo-mkt", None, false),
        Err(PluginError::NotInstalled { .. })
    ));

    // Removing the marketplace from its last scope is refused while plugins from it are
    // installed, and uninstalls them when asked to.
    match m.marketplace_remove("demo-mkt", Scope::User, false) {
        Err(PluginError::MarketplaceInUse { plugins, .. }) => {
            assert_eq!(plugins, vec!["nover@demo-mkt".to_string()])
        }
        other => panic!("expected MarketplaceInUse, got {other:?}"),
    }
    assert_eq!(m.marketplace_list().expect("list").len(), 1);
    let rm = m
        .marketplace_remove("demo-mkt", Scope::User, true)
        .expect("remove");
    assert_eq!(rm.uninstalled, vec!["nover@demo-mkt".to_string()]);
    assert!(
        read_json(&env.home.join("plugins/known_marketplaces.json"))
            .get("demo-mkt")
            .is_none()
    );
    assert!(m.marketplace_list().expect("list").is_empty());
}

#[test]
fn errors_use_claude_code_wording() {
    let env = Env::new();
    let mkt = dir_marketplace(&env, "mkt2", json!([]));
    let m = env.manager();
    m.marketplace_add(mkt.to_str().expect("utf8"), Scope::User)
        .expect("add");
    let e = m.install("nosuch@mkt2", &user()).expect_err("missing");
    assert_eq!(
        e.to_string(),
        "Plugin \"nosuch\" not found in marketplace \"mkt2\". Your local copy may be out of date — try `warden plugin marketplace update mkt2`."
    );
    // An unknown marketplace is named as such, not as a plugin missing from it.
    let e = m.install("x@nomkt", &user()).expect_err("missing mkt");
    assert!(
        e.to_string()
            .starts_with("Marketplace \"nomkt\" is not known"),
        "{e}"
    );
    let e = m
        .marketplace_add(env.path("nonexist").to_str().expect("utf8"), Scope::User)
        .expect_err("no path");
    assert_eq!(
        e.to_string(),
        format!("Path does not exist: {}", env.path("nonexist").display())
    );
    let bad = env.path("bad");
    write_tree(
        &bad,
        &[(
            ".claude-plugin/marketplace.json",
            r#"{"name": "bad name", "plugins": []}"#,
        )],
    );
    let e = m
        .marketplace_add(bad.to_str().expect("utf8"), Scope::User)
        .expect_err("bad");
    let s = e.to_string();
    assert!(
        s.starts_with("Failed to parse marketplace file at")
            && s.contains("Marketplace name cannot contain spaces")
            && s.contains("owner: Invalid input: expected object, received undefined"),
        "{s}"
    );
    // Reserved names are refused from a directory unless allowed.
    let res = env.path("res");
    write_tree(
        &res,
        &[(
            ".claude-plugin/marketplace.json",
            &marketplace_json("claude-plugins-official", json!([])),
        )],
    );
    assert!(matches!(
        m.marketplace_add(res.to_str().expect("utf8"), Scope::User),
        Err(PluginError::ReservedName { local: true, .. })
    ));
    env.manager()
        .allow_reserved_names(true)
        .marketplace_add(res.to_str().expect("utf8"), Scope::User)
        .expect("allowed");
}

#[test]
fn digest_pin_mismatch_refuses_and_match_installs() {
    let env = Env::new();
    let mkt = env.path("mkt");
    simple_plugin(&mkt.join("p"), "p", Some("1.0.0"));
    let good = warden_plugins::digest::tree_digest(&mkt.join("p")).expect("digest");
    write_tree(
        &mkt,
        &[(
            ".claude-plugin/marketplace.json",
            &marketplace_json(
                "m",
                json!([{"name": "p", "source": "./p", "sha256": "0".repeat(64)}]),
            ),
        )],
    );
    let m = env.manager();
    m.marketplace_add(mkt.to_str().expect("utf8"), Scope::User)
        .expect("add");
    let e = m.install("p@m", &user()).expect_err("mismatch");
    assert!(matches!(e, PluginError::DigestMismatch { .. }), "{e}");
    assert!(e.to_string().contains(&good));
    assert!(
        !env.home.join("plugins/cache/m/p").exists(),
        "nothing left in the cache"
    );
    assert!(!env.home.join("plugins/installed_plugins.json").exists());
    write_tree(
        &mkt,
        &[(
            ".claude-plugin/marketplace.json",
            &marketplace_json(
                "m",
                json!([{"name": "p", "source": "./p", "sha256": good.to_uppercase()}]),
            ),
        )],
    );
    let r = installed(m.install("p@m", &user()).expect("install"));
    assert_eq!(r.sha256, good);
}

#[test]
fn verify_reports_tampering_per_plugin() {
    let env = Env::new();
    let mkt = dir_marketplace(
        &env,
        "m",
        json!([{"name": "a", "source": "./a"}, {"name": "b", "source": "./b"}]),
    );
    simple_plugin(&mkt.join("a"), "a", Some("1.0.0"));
    simple_plugin(&mkt.join("b"), "b", Some("1.0.0"));
    let m = env.manager();
    m.marketplace_add(mkt.to_str().expect("utf8"), Scope::User)
        .expect("add");
    let a = installed(m.install("a@m", &user()).expect("a"));
    installed(m.install("b@m", &user()).expect("b"));
    std::fs::write(a.install_path.join("commands/deploy.md"), "rm -rf /").expect("tamper");
    let v = m.verify().expect("verify");
    assert!(!v.ok);
    let by: std::collections::BTreeMap<_, _> = v
        .plugins
        .iter()
        .map(|p| (p.plugin_id.as_str(), p.status))
        .collect();
    assert_eq!(by["a@m"], VerifyStatus::Tampered);
    assert_eq!(by["b@m"], VerifyStatus::Ok);
    assert!(v.to_string().contains("TAMPERED"));
}

/// A plugin whose component and hook are declared in `warden.toml`.
fn warden_plugin(root: &Path, version: &str, net: &[&str]) {
    let m = json!({"name": "guard", "version": version});
    let net: Vec<String> = net.iter().map(|n| format!("{n:?}")).collect();
    let toml = format!(
        "[components.g]\npath = \"wasm/g.wasm\"\nworld = \"hook\"\ncapabilities = {{ net = [{}], env = [\"HOME\"] }}\n\n\
         [[hooks.PreToolUse]]\nmatcher = \"Bash\"\nhooks = [{{ type = \"wasm\", component = \"g\", onFailure = \"block\" }}]\n",
        net.join(", ")
    );
    write_tree(
        root,
        &[
            (".claude-plugin/plugin.json", &m.to_string()),
            ("warden.toml", &toml),
            ("wasm/g.wasm", EMPTY_COMPONENT),
        ],
    );
}

#[test]
fn capability_consent_grants_and_update_asks_again_for_more() {
    let env = Env::new();
    let mkt = dir_marketplace(&env, "m", json!([{"name": "guard", "source": "./guard"}]));
    warden_plugin(&mkt.join("guard"), "1.0.0", &["https://api.example.com"]);
    let m = env.manager();
    m.marketplace_add(mkt.to_str().expect("utf8"), Scope::User)
        .expect("add");

    let InstallOutcome::NeedsConsent(c) = m.install("guard@m", &user()).expect("install") else {
        panic!("consent expected")
    };
    assert!(
        c.message.starts_with(
            "needs consent: guard@m 1.0.0 requests g: +net https://api.example.com, env HOME"
        ),
        "{}",
        c.message
    );
    assert!(
        !env.home.join("plugins/installed_plugins.json").exists(),
        "nothing installed before consent"
    );
    assert!(m.grant_for("guard@m", &c.sha256).is_none());

    let r = installed(
        m.install(
            "guard@m",
            &InstallOptions {
                scope: Scope::User,
                accept_capabilities: true,
            },
        )
        .expect("install"),
    );
    let g = m.grant_for("guard@m", &r.sha256).expect("grant stored");
    assert_eq!(
        g.component("g").expect("g").net,
        vec!["https://api.example.com".to_string()]
    );
    let grants = read_json(&env.home.join("plugins/grants.json"));
    assert_eq!(grants["grants"]["guard@m"][0]["digest"], json!(r.sha256));
    // The component declared in warden.toml is pinned by its own digest.
    use sha2::Digest as _;
    assert_eq!(
        grants["grants"]["guard@m"][0]["componentDigests"]["g"],
        json!(hex::encode(sha2::Sha256::digest(EMPTY_COMPONENT)))
    );
    assert!(
        r.install_path.join("warden.toml").is_file(),
        "warden.toml copied"
    );
    let l = m.load_active().expect("load");
    let lp = l[0].1.as_ref().expect("loaded");
    assert!(
        lp.wasm_component("g")
            .is_some_and(|p| p.starts_with(&r.install_path))
    );

    // An update asking for the same capabilities carries the grant forward.
    warden_plugin(&mkt.join("guard"), "1.1.0", &["https://api.example.com"]);
    let u = installed(m.update("guard@m", None, false).expect("update"));
    assert_eq!(u.previous_version.as_deref(), Some("1.0.0"));
    assert!(m.grant_for("guard@m", &u.sha256).is_some());
    assert!(
        r.install_path.join(".orphaned_at").is_file(),
        "old version orphaned"
    );

    // An update asking for more asks again, leaving 1.1.0 installed.
    warden_plugin(
        &mkt.join("guard"),
        "2.0.0",
        &["https://api.example.com", "https://evil.example"],
    );
    let InstallOutcome::NeedsConsent(c) = m.update("guard", None, false).expect("update") else {
        panic!("consent expected")
    };
    assert_eq!(c.diff["g"].net, vec!["https://evil.example".to_string()]);
    assert!(
        c.message.contains("+net https://evil.example"),
        "{}",
        c.message
    );
    assert_eq!(m.list(false).expect("list").installed[0].version, "1.1.0");
    let u2 = installed(m.update("guard", None, true).expect("update"));
    assert_eq!(u2.version, "2.0.0");
    // Same version again: up to date.
    let same = installed(m.update("guard", None, false).expect("update"));
    assert_eq!(same.outcome, "up-to-date");
}

#[test]
fn git_sources_over_file_url_and_git_daemon_and_git_subdir() {
    let env = Env::new();
    // A plugin repository and a monorepo with the plugin in a subfolder.
    let repos = env.path("repos");
    let solo = repos.join("solo.git");
    simple_plugin(&solo, "solo", None);
    let solo_sha = git_init_commit(&solo);
    let mono = repos.join("mono.git");
    simple_plugin(&mono.join("plugins/sub"), "sub", Some("0.3.0"));
    write_tree(&mono, &[("other/big.txt", "not part of the plugin")]);
    git_init_commit(&mono);
    git(&mono, &["tag", "v1"]);
    let daemon = Daemon::start(&repos);

    // The marketplace itself is a git repository served over file://.
    let mkt_repo = env.path("mktrepo");
    write_tree(
        &mkt_repo,
        &[(
            ".claude-plugin/marketplace.json",
            &marketplace_json(
                "gitmkt",
                json!([
                    {"name": "solo", "source": {"source": "url", "url": file_url(&solo), "sha": solo_sha}},
                    {"name": "solo-daemon", "source": {"source": "url", "url": daemon.url("solo.git")}},
                    {"name": "sub", "source": {"source": "git-subdir", "url": daemon.url("mono.git"), "path": "plugins/sub", "ref": "v1"}},
                    {"name": "sub-file", "source": {"source": "git-subdir", "url": file_url(&mono), "path": "./plugins/sub"}},
                    {"name": "local", "source": "./local"}
                ]),
            ),
        )],
    );
    simple_plugin(&mkt_repo.join("local"), "local", None);
    let mkt_sha = git_init_commit(&mkt_repo);
    let m = env.manager();
    let add = m
        .marketplace_add(&file_url(&mkt_repo), Scope::User)
        .expect("add git marketplace");
    assert_eq!(
        add.install_location.as_deref(),
        Some(env.home.join("plugins/marketplaces/gitmkt").as_path())
    );
    let known = read_json(&env.home.join("plugins/known_marketplaces.json"));
    assert_eq!(
        known["gitmkt"]["source"],
        json!({"source": "git", "url": file_url(&mkt_repo)})
    );

    let s = installed(m.install("solo@gitmkt", &user()).expect("file://"));
    assert_eq!(s.version, solo_sha[..12]);
    assert_eq!(s.git_commit_sha.as_deref(), Some(solo_sha.as_str()));
    assert!(
        !s.install_path.join(".git").exists(),
        "no .git in the cache"
    );
    let rec =
        &read_json(&env.home.join("plugins/installed_plugins.json"))["plugins"]["solo@gitmkt"][0];
    assert_eq!(rec["gitCommitSha"], json!(solo_sha));

    let d = installed(
        m.install("solo-daemon@gitmkt", &user())
            .expect("git daemon"),
    );
    assert!(d.install_path.join("skills/review/SKILL.md").is_file());

    let sub = installed(m.install("sub@gitmkt", &user()).expect("git-subdir"));
    assert_eq!(sub.version, "0.3.0");
    assert!(
        sub.install_path
            .join(".claude-plugin/plugin.json")
            .is_file()
    );
    assert!(!sub.install_path.join("other").exists() && !sub.install_path.join("plugins").exists());
    installed(
        m.install("sub-file@gitmkt", &user())
            .expect("git-subdir file://"),
    );

    // A relative source in a git marketplace is versioned by the marketplace commit.
    let l = installed(
        m.install("local@gitmkt", &user())
            .expect("relative in git mkt"),
    );
    assert_eq!(l.version, mkt_sha[..12]);

    // Marketplace update re-clones; a new commit shows up.
    simple_plugin(&mkt_repo.join("local"), "local", Some("9.0.0"));
    git_init_commit(&mkt_repo);
    m.marketplace_update(Some("gitmkt")).expect("update mkt");
    let u = installed(m.update("local@gitmkt", None, false).expect("update"));
    assert_eq!(u.version, "9.0.0");

    // An unreachable git source fails cleanly, leaving the previous install in place.
    let bad = env.path("mkt-bad");
    write_tree(
        &bad,
        &[(
            ".claude-plugin/marketplace.json",
            &marketplace_json(
                "badgit",
                json!([{"name": "x", "source": {"source": "url", "url": daemon.url("missing.git")}}]),
            ),
        )],
    );
    m.marketplace_add(bad.to_str().expect("utf8"), Scope::User)
        .expect("add");
    let e = m.install("x@badgit", &user()).expect_err("clone fails");
    assert!(matches!(e, PluginError::Git(_)), "{e}");
    assert!(m.verify().expect("verify").ok);
}

#[test]
fn same_version_with_new_contents_never_overwrites_the_cache() {
    let env = Env::new();
    let mkt = dir_marketplace(&env, "m", json!([{"name": "p", "source": "./p"}]));
    simple_plugin(&mkt.join("p"), "p", Some("1.0.0"));
    let m = env.manager();
    m.marketplace_add(mkt.to_str().expect("utf8"), Scope::User)
        .expect("add");
    let a = installed(m.install("p@m", &user()).expect("install"));
    write_tree(&mkt.join("p"), &[("commands/new.md", "new")]);
    let b = installed(m.update("p@m", None, false).expect("update"));
    assert_ne!(a.install_path, b.install_path);
    assert!(
        b.install_path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("1.0.0-"))
    );
    assert!(!a.install_path.join("commands/new.md").exists());
}

#[cfg(unix)]
#[test]
fn copy_keeps_internal_links_dereferences_marketplace_links_and_drops_outside_links() {
    use std::os::unix::fs::symlink;
    let env = Env::new();
    let mkt = dir_marketplace(&env, "m", json!([{"name": "p", "source": "./p"}]));
    simple_plugin(&mkt.join("p"), "p", Some("1.0.0"));
    write_tree(
        &mkt,
        &[(
            "shared/SKILL.md",
            "---\nname: shared\ndescription: s\n---\n",
        )],
    );
    write_tree(&env.path("outside"), &[("secret.txt", "secret")]);
    symlink("../review/SKILL.md", mkt.join("p/skills/review/ALIAS.md")).expect("ln");
    std::fs::create_dir_all(mkt.join("p/skills/shared")).expect("mkdir");
    symlink(
        mkt.join("shared/SKILL.md"),
        mkt.join("p/skills/shared/SKILL.md"),
    )
    .expect("ln");
    symlink(env.path("outside/secret.txt"), mkt.join("p/secret.txt")).expect("ln");
    let m = env.manager();
    m.marketplace_add(mkt.to_str().expect("utf8"), Scope::User)
        .expect("add");
    let r = installed(m.install("p@m", &user()).expect("install"));
    let c = &r.install_path;
    assert!(
        std::fs::symlink_metadata(c.join("skills/review/ALIAS.md"))
            .expect("kept")
            .file_type()
            .is_symlink()
    );
    let shared = std::fs::symlink_metadata(c.join("skills/shared/SKILL.md")).expect("copied");
    assert!(shared.is_file(), "marketplace link dereferenced");
    assert!(!c.join("secret.txt").exists(), "outside link dropped");
}

// ------------------------------------------------------------------ repair of a tampered cache

fn status_of(m: &warden_plugins::PluginManager, id: &str) -> VerifyStatus {
    m.verify()
        .expect("verify")
        .plugins
        .iter()
        .find(|p| p.plugin_id == id)
        .map(|p| p.status)
        .expect("plugin verified")
}

const DEPLOY: &str = "---\ndescription: Deploy\n---\nDeploy $ARGUMENTS\n";

#[test]
fn install_of_the_same_version_repairs_a_tampered_cache_copy() {
    let env = Env::new();
    let mkt = dir_marketplace(&env, "m", json!([{"name": "p", "source": "./p"}]));
    simple_plugin(&mkt.join("p"), "p", Some("1.0.0"));
    let m = env.manager();
    m.marketplace_add(mkt.to_str().expect("utf8"), Scope::User)
        .expect("add");
    let a = installed(m.install("p@m", &user()).expect("install"));
    let deploy = a.install_path.join("commands/deploy.md");
    std::fs::write(&deploy, "rm -rf /").expect("tamper");
    std::fs::write(a.install_path.join("extra.sh"), "curl evil").expect("plant");
    assert_eq!(status_of(&m, "p@m"), VerifyStatus::Tampered);
    let hint = m.verify().expect("verify").to_string();
    assert!(
        hint.contains("`warden plugin install <plugin> --scope <scope>`"),
        "{hint}"
    );

    // The same version again: the modified directory is replaced in place.
    let r = installed(m.install("p@m", &user()).expect("reinstall"));
    assert!(r.repaired, "{}", r.message);
    assert!(r.message.contains("repaired"), "{}", r.message);
    assert_eq!(r.install_path, a.install_path);
    assert_eq!(r.sha256, a.sha256);
    assert_eq!(std::fs::read_to_string(&deploy).expect("deploy"), DEPLOY);
    assert!(!a.install_path.join("extra.sh").exists());
    assert_eq!(status_of(&m, "p@m"), VerifyStatus::Ok);
    assert!(
        std::fs::read_dir(env.home.join("plugins/.tmp"))
            .expect("tmp")
            .next()
            .is_none(),
        "the replaced copy goes with the staging directory"
    );

    // An intact copy is reused as it is and is not reported as repaired.
    let again = installed(m.install("p@m", &user()).expect("reinstall"));
    assert!(!again.repaired);
    assert_eq!(again.install_path, a.install_path);

    // Uninstall + install restores it too.
    std::fs::write(&deploy, "rm -rf /").expect("tamper");
    m.uninstall("p@m", None, false).expect("uninstall");
    let b = installed(m.install("p@m", &user()).expect("install"));
    assert_eq!(b.sha256, a.sha256);
    assert_eq!(
        std::fs::read_to_string(b.install_path.join("commands/deploy.md")).expect("deploy"),
        DEPLOY
    );
    assert_eq!(status_of(&m, "p@m"), VerifyStatus::Ok);
}

#[test]
fn update_repairs_a_tampered_cache_copy_instead_of_answering_up_to_date() {
    let env = Env::new();
    let mkt = dir_marketplace(&env, "m", json!([{"name": "p", "source": "./p"}]));
    simple_plugin(&mkt.join("p"), "p", Some("1.0.0"));
    let m = env.manager();
    m.marketplace_add(mkt.to_str().expect("utf8"), Scope::User)
        .expect("add");
    installed(m.install("p@m", &user()).expect("install"));
    // The same version with new contents lands in the digest-suffixed directory; that is the
    // one tampered with here, so both kinds of cache directory are covered.
    write_tree(&mkt.join("p"), &[("commands/new.md", "new")]);
    let a = installed(m.update("p@m", None, false).expect("update"));
    assert!(
        a.install_path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("1.0.0-"))
    );
    let new = a.install_path.join("commands/new.md");
    std::fs::remove_file(&new).expect("tamper");
    assert_eq!(status_of(&m, "p@m"), VerifyStatus::Tampered);

    let r = installed(m.update("p@m", None, false).expect("update"));
    assert_eq!(r.outcome, "ok");
    assert!(r.repaired, "{}", r.message);
    assert_eq!(r.install_path, a.install_path);
    assert_eq!(std::fs::read_to_string(&new).expect("restored"), "new");
    assert_eq!(status_of(&m, "p@m"), VerifyStatus::Ok);
    let json_line = serde_json::to_value(&r).expect("ser");
    assert_eq!(json_line["repaired"], true);

    // Now it is up to date, and says so.
    let same = installed(m.update("p@m", None, false).expect("update"));
    assert_eq!(same.outcome, "up-to-date");
    assert!(
        serde_json::to_value(&same)
            .expect("ser")
            .get("repaired")
            .is_none()
    );

    // A removed cache copy is restored the same way.
    std::fs::remove_dir_all(&a.install_path).expect("rm");
    assert_eq!(status_of(&m, "p@m"), VerifyStatus::Missing);
    let r = installed(m.update("p@m", None, false).expect("update"));
    assert!(r.repaired);
    assert_eq!(status_of(&m, "p@m"), VerifyStatus::Ok);
}

#[test]
fn repair_never_overwrites_a_directory_another_installation_records_with_other_contents() {
    let env = Env::new();
    let mkt = dir_marketplace(&env, "m", json!([{"name": "p", "source": "./p"}]));
    simple_plugin(&mkt.join("p"), "p", Some("1.0.0"));
    let m = env.manager();
    m.marketplace_add(mkt.to_str().expect("utf8"), Scope::User)
        .expect("add");
    let project = installed(
        m.install(
            "p@m",
            &InstallOptions {
                scope: Scope::Project,
                accept_capabilities: false,
            },
        )
        .expect("project"),
    );
    // The project's copy is modified, and the source changes without a version bump: the user
    // install must not put its tree into the directory the project's record describes.
    let deploy = project.install_path.join("commands/deploy.md");
    std::fs::write(&deploy, "tampered").expect("tamper");
    write_tree(&mkt.join("p"), &[("commands/new.md", "new")]);
    let user_install = installed(m.install("p@m", &user()).expect("user"));
    assert_ne!(user_install.install_path, project.install_path);
    assert!(!user_install.repaired);
    assert_eq!(
        std::fs::read_to_string(&deploy).expect("deploy"),
        "tampered"
    );
    assert!(!project.install_path.join("commands/new.md").exists());
}

#[test]
fn consent_to_a_digest_that_no_longer_matches_is_refused_and_installs_nothing() {
    let env = Env::new();
    let mkt = dir_marketplace(&env, "m", json!([{"name": "guard", "source": "./guard"}]));
    warden_plugin(&mkt.join("guard"), "1.0.0", &["https://api.example.com"]);
    let m = env.manager();
    m.marketplace_add(mkt.to_str().expect("utf8"), Scope::User)
        .expect("add");
    let InstallOutcome::NeedsConsent(shown) = m.install("guard@m", &user()).expect("install")
    else {
        panic!("consent expected")
    };
    assert!(shown.approved_sha256.is_none());

    // The source changes between the question and the answer (same version, more access).
    warden_plugin(
        &mkt.join("guard"),
        "1.0.0",
        &["https://api.example.com", "https://evil.example"],
    );
    let approved = Consent::AcceptDigest(shown.sha256.clone());
    let InstallOutcome::NeedsConsent(c) = m
        .install_with_consent("guard@m", Scope::User, &approved)
        .expect("install")
    else {
        panic!("a changed copy must not be installed on the old approval")
    };
    assert_ne!(c.sha256, shown.sha256);
    assert_eq!(c.approved_sha256.as_deref(), Some(shown.sha256.as_str()));
    assert!(
        c.message.contains("changed after its request was approved"),
        "{}",
        c.message
    );
    assert!(
        c.message.contains("net https://evil.example"),
        "{}",
        c.message
    );
    assert!(!env.home.join("plugins/installed_plugins.json").exists());
    assert!(!env.home.join("plugins/grants.json").exists());
    assert!(!env.home.join("plugins/cache/m/guard").exists());
    let json_line = serde_json::to_value(&c).expect("ser");
    assert_eq!(json_line["outcome"], "needs-consent");
    assert_eq!(json_line["approvedSha256"], json!(shown.sha256));

    // Approving what is there now installs exactly that, with that grant.
    let r = installed(
        m.install_with_consent(
            "guard@m",
            Scope::User,
            &Consent::AcceptDigest(c.sha256.clone()),
        )
        .expect("install"),
    );
    assert_eq!(r.sha256, c.sha256);
    let g = m.grant_for("guard@m", &r.sha256).expect("grant");
    assert_eq!(g.component("g").expect("g").net.len(), 2);

    // An update approved for one tree refuses another, even one that asks for nothing new.
    warden_plugin(
        &mkt.join("guard"),
        "1.1.0",
        &[
            "https://api.example.com",
            "https://evil.example",
            "https://more.example",
        ],
    );
    let InstallOutcome::NeedsConsent(u) = m
        .update_with_consent("guard", None, &Consent::Ask)
        .expect("update")
    else {
        panic!("consent expected")
    };
    warden_plugin(&mkt.join("guard"), "1.2.0", &["https://api.example.com"]);
    let InstallOutcome::NeedsConsent(u2) = m
        .update_with_consent("guard", None, &Consent::AcceptDigest(u.sha256.clone()))
        .expect("update")
    else {
        panic!("a changed copy must not be installed on the old approval")
    };
    assert!(u2.diff.is_empty());
    assert!(
        u2.message.contains("nothing beyond its current grant"),
        "{}",
        u2.message
    );
    assert_eq!(m.list(false).expect("list").installed[0].version, "1.0.0");
    assert!(m.grant_for("guard@m", &u.sha256).is_none());
    assert!(m.grant_for("guard@m", &u2.sha256).is_none());
    assert!(!env.home.join("plugins/cache/m/guard/1.1.0").exists());
    assert!(!env.home.join("plugins/cache/m/guard/1.2.0").exists());

    // AcceptAll keeps `--yes` working as before.
    let all = installed(
        m.update_with_consent("guard", None, &Consent::AcceptAll)
            .expect("update"),
    );
    assert_eq!(all.version, "1.2.0");
}

#[test]
fn an_update_whose_component_is_missing_or_invalid_is_refused_and_keeps_the_installed_version() {
    let env = Env::new();
    let mkt = dir_marketplace(&env, "m", json!([{"name": "guard", "source": "./guard"}]));
    let src = mkt.join("guard");
    warden_plugin(&src, "1.0.0", &[]);
    let m = env.manager();
    m.marketplace_add(mkt.to_str().expect("utf8"), Scope::User)
        .expect("add");
    let r = installed(
        m.install(
            "guard@m",
            &InstallOptions {
                scope: Scope::User,
                accept_capabilities: true,
            },
        )
        .expect("install"),
    );
    let registry = env.home.join("plugins/installed_plugins.json");
    let before = std::fs::read(&registry).expect("registry");

    warden_plugin(&src, "2.0.0", &[]);
    let wasm = src.join("wasm/g.wasm");
    for bytes in [None, Some(&b"\0asm\x01\0\0\0"[..])] {
        match bytes {
            None => std::fs::remove_file(&wasm).expect("rm"),
            Some(b) => std::fs::write(&wasm, b).expect("write"),
        }
        let e = m
            .update("guard@m", None, true)
            .expect_err("a missing or invalid component is refused");
        let msg = e.to_string();
        assert!(matches!(e, PluginError::ComponentsUnusable { .. }), "{msg}");
        assert!(msg.contains(&wasm.display().to_string()), "{msg}");
        assert!(msg.contains("nothing was installed"), "{msg}");
        assert_eq!(std::fs::read(&registry).expect("registry"), before);
        assert!(!env.home.join("plugins/cache/m/guard/2.0.0").exists());
        assert!(r.install_path.join("wasm/g.wasm").is_file());
    }
}
