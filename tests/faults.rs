//! Crashes, full disks and corrupt state files, driven through the real binary.
//!
//! * Every named fault point (`warden_plugins::fault::POINTS`): the command is run with
//!   `WARDEN_TEST_FAULT` naming the point, must die there by SIGABRT, and the next runs must
//!   see a consistent state: `plugin list` and `plugin details` agree with the disk, the hook of
//!   the recorded version runs, and the same command run again succeeds.
//! * A full disk: a small tmpfs mounted as `WARDEN_HOME` in a new user and mount namespace.
//! * Corrupt state and settings files: an error naming the file and position, and the file
//!   left byte for byte as it was.
//!
//! Every test gets its own `WARDEN_HOME` and marketplace directories, and managed settings are
//! off (`WARDEN_MANAGED_SETTINGS_DIR=`), so nothing outside the temp dirs is read or written.

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};
use tempfile::TempDir;
use warden_plugins::fault::{FAULT_ENV, FAULT_MESSAGE, POINTS};

const WARDEN: &str = env!("CARGO_BIN_EXE_warden");
const ID: &str = "hooked@m";

/// A temp dir with its canonical path (the binary sees `getcwd()`, which resolves symlinks).
fn tempdir() -> (TempDir, PathBuf) {
    let t = tempfile::tempdir().expect("tempdir");
    let p = t.path().canonicalize().expect("canonical tempdir");
    (t, p)
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn show(o: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status,
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

fn git(dir: &Path, args: &[&str]) {
    let o = Command::new("git")
        .args(["-c", "user.name=Warden Tests"])
        .args(["-c", "user.email=tests@warden.invalid"])
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
}

/// The plugin `hooked` at `version`: a command hook whose script (a file of the installed
/// copy) says which version it is, so the test can tell which copy runs.
fn write_plugin(dir: &Path, version: &str) {
    write(
        &dir.join(".claude-plugin/plugin.json"),
        &json!({ "name": "hooked", "version": version, "description": "Says its version." })
            .to_string(),
    );
    write(
        &dir.join("hooks/hooks.json"),
        &json!({ "hooks": { "PreToolUse": [{ "matcher": "Bash", "hooks": [{
            "type": "command",
            "command": "sh \"${CLAUDE_PLUGIN_ROOT}/hook.sh\""
        }]}]}})
        .to_string(),
    );
    write(
        &dir.join("hook.sh"),
        &format!(
            "cat >/dev/null\nprintf '%s\\n' '{}'\n",
            json!({ "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": format!("hooked {version}")
            }})
        ),
    );
}

/// A marketplace `m` in `dir` listing `hooked` at `version`.
fn write_marketplace(dir: &Path, version: &str) {
    write(
        &dir.join(".claude-plugin/marketplace.json"),
        &json!({
            "name": "m",
            "owner": { "name": "Tests" },
            "plugins": [{ "name": "hooked", "source": "./hooked" }]
        })
        .to_string(),
    );
    write_plugin(&dir.join("hooked"), version);
}

/// One `WARDEN_HOME`, a project directory and a marketplace directory.
struct Env {
    _dir: TempDir,
    home: PathBuf,
    proj: PathBuf,
    mkt: PathBuf,
}

impl Env {
    fn new() -> Self {
        let (dir, root) = tempdir();
        let (home, proj, mkt) = (root.join("home"), root.join("proj"), root.join("mkt"));
        for d in [&home, &proj, &mkt] {
            std::fs::create_dir_all(d).expect("mkdir");
        }
        Env {
            _dir: dir,
            home,
            proj,
            mkt,
        }
    }

    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(WARDEN);
        c.args(args)
            .current_dir(&self.proj)
            .env("WARDEN_HOME", &self.home)
            .env("WARDEN_NO_CLAUDE_CONFIG", "1")
            .env("WARDEN_MANAGED_SETTINGS_DIR", "")
            .env_remove("CLAUDE_PROJECT_DIR")
            .env_remove(FAULT_ENV)
            .stdin(Stdio::null());
        c
    }

    fn run(&self, args: &[&str]) -> Output {
        self.cmd(args).output().expect("run warden")
    }

    fn ok(&self, args: &[&str]) -> String {
        let o = self.run(args);
        assert!(o.status.success(), "warden {args:?}: {}", show(&o));
        stdout(&o)
    }

    fn fails(&self, args: &[&str]) -> String {
        let o = self.run(args);
        assert_eq!(o.status.code(), Some(1), "warden {args:?}: {}", show(&o));
        stderr(&o)
    }

    /// Runs `args` with the fault point `point` armed and asserts the process died there.
    fn crash_at(&self, point: &str, args: &[&str]) {
        let o = self
            .cmd(args)
            .env(FAULT_ENV, point)
            .output()
            .expect("run warden");
        assert_eq!(
            o.status.signal(),
            Some(SIGABRT),
            "warden {args:?} with {FAULT_ENV}={point} did not abort: {}",
            show(&o)
        );
        assert!(
            stderr(&o).contains(&format!("{FAULT_MESSAGE}{point}")),
            "warden {args:?} aborted, but not at {point}: {}",
            show(&o)
        );
    }

    fn plugins(&self) -> PathBuf {
        self.home.join("plugins")
    }

    /// `plugin list --json`: the installed versions of `hooked@m`.
    fn listed(&self) -> Vec<Value> {
        let out = self.ok(&["plugin", "list", "--json"]);
        let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
        v.as_array()
            .expect("an array")
            .iter()
            .filter(|p| p["id"] == ID)
            .cloned()
            .collect()
    }

    /// What the hook of `hooked` says for a Bash call, if it runs.
    fn hook_says(&self) -> Option<String> {
        let input = json!({
            "session_id": "00000000-1111-4222-8333-444444444444",
            "transcript_path": "/dev/null",
            "cwd": self.proj,
            "permission_mode": "default",
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_input": { "command": "ls" },
            "tool_use_id": "toolu_1",
        });
        let mut child = self
            .cmd(&["hook", "PreToolUse"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn warden hook");
        std::io::Write::write_all(
            &mut child.stdin.take().expect("stdin"),
            input.to_string().as_bytes(),
        )
        .expect("write stdin");
        let o = child.wait_with_output().expect("warden hook");
        assert!(o.status.success(), "warden hook: {}", show(&o));
        let text = stdout(&o);
        let at = text.find("hooked ")?;
        Some(
            text[at..]
                .chars()
                .take_while(|c| *c != '"')
                .collect::<String>(),
        )
    }

    /// Every state file there is parses, and nothing is left in the scratch directory.
    fn assert_files_whole(&self) {
        for f in [
            self.plugins().join("installed_plugins.json"),
            self.plugins().join("grants.json"),
            self.plugins().join("known_marketplaces.json"),
            self.home.join("settings.json"),
        ] {
            if let Ok(text) = std::fs::read_to_string(&f) {
                serde_json::from_str::<Value>(&text)
                    .unwrap_or_else(|e| panic!("{}: {e}: {text}", f.display()));
            }
        }
    }

    fn assert_no_scratch_left(&self) {
        let left: Vec<_> = std::fs::read_dir(self.plugins().join(".tmp"))
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .collect();
        assert!(left.is_empty(), "left in plugins/.tmp: {left:?}");
    }

    /// The grants recorded for `hooked@m`.
    fn grants(&self) -> Vec<Value> {
        std::fs::read_to_string(self.plugins().join("grants.json"))
            .ok()
            .and_then(|t| serde_json::from_str::<Value>(&t).ok())
            .and_then(|v| v["grants"][ID].as_array().cloned())
            .unwrap_or_default()
    }

    fn enabled_key(&self) -> Option<Value> {
        std::fs::read_to_string(self.home.join("settings.json"))
            .ok()
            .and_then(|t| serde_json::from_str::<Value>(&t).ok())
            .and_then(|v| v["enabledPlugins"].get(ID).cloned())
    }

    /// The installation is consistent: either `version` is recorded, on disk, verified, its
    /// grant is stored, `details` shows it and its hook runs; or (`None`) nothing of it shows.
    fn assert_state(&self, version: Option<&str>, context: &str) {
        self.assert_files_whole();
        let listed = self.listed();
        match version {
            Some(v) => {
                assert_eq!(listed.len(), 1, "{context}: {listed:?}");
                assert_eq!(listed[0]["version"], v, "{context}");
                let path = PathBuf::from(listed[0]["installPath"].as_str().expect("path"));
                assert!(path.join("hook.sh").is_file(), "{context}: {path:?}");
                self.ok(&["plugin", "verify"]);
                let d: Value = serde_json::from_str(&self.ok(&["plugin", "details", ID, "--json"]))
                    .expect("details JSON");
                assert_eq!(d["version"], v, "{context}: {d}");
                let sha = listed[0]["sha256"].as_str().expect("sha256");
                assert!(
                    self.grants().iter().any(|g| g["digest"] == sha),
                    "{context}: no grant for {sha}: {:?}",
                    self.grants()
                );
                assert_eq!(
                    self.hook_says().as_deref(),
                    Some(format!("hooked {v}").as_str()),
                    "{context}"
                );
            }
            None => {
                assert!(listed.is_empty(), "{context}: {listed:?}");
                let err = self.fails(&["plugin", "details", ID]);
                assert!(err.contains("not installed"), "{context}: {err}");
                assert_eq!(self.hook_says(), None, "{context}");
            }
        }
    }
}

/// What `std::process::abort` raises.
const SIGABRT: i32 = 6;

/// The points of one command, checked to exist so a renamed group cannot test nothing.
fn points(prefix: &str) -> Vec<&'static str> {
    let p: Vec<&'static str> = POINTS
        .iter()
        .copied()
        .filter(|p| p.starts_with(&format!("{prefix}.")))
        .collect();
    assert!(!p.is_empty(), "no fault points for {prefix}");
    p
}

const GROUPS: &[&str] = &[
    "install",
    "update",
    "uninstall",
    "grant",
    "marketplace-update",
];

#[test]
fn every_fault_point_belongs_to_a_tested_command() {
    for p in POINTS {
        assert!(
            GROUPS.iter().any(|g| p.starts_with(&format!("{g}."))),
            "fault point {p} is not covered by a test here"
        );
    }
}

/// A home with marketplace `m` (hooked 1.0.0) added.
fn with_marketplace() -> Env {
    let env = Env::new();
    write_marketplace(&env.mkt, "1.0.0");
    env.ok(&[
        "plugin",
        "marketplace",
        "add",
        env.mkt.to_str().expect("utf-8"),
    ]);
    env
}

#[test]
fn install_killed_at_each_point_is_all_or_nothing() {
    for point in points("install") {
        let env = with_marketplace();
        env.crash_at(point, &["plugin", "install", ID]);
        let committed = point == "install.registry-written";
        env.assert_state(committed.then_some("1.0.0"), point);

        let out = env.ok(&["plugin", "install", ID]);
        assert!(out.contains("Successfully installed"), "{point}: {out}");
        env.assert_state(Some("1.0.0"), point);
        assert_eq!(env.enabled_key(), Some(json!(true)), "{point}");
        env.assert_no_scratch_left();
    }
}

#[test]
fn update_killed_at_each_point_keeps_a_working_version() {
    for point in points("update") {
        let env = with_marketplace();
        env.ok(&["plugin", "install", ID]);
        let v1 = env.listed()[0]["installPath"]
            .as_str()
            .expect("path")
            .to_string();
        write_plugin(&env.mkt.join("hooked"), "2.0.0");

        env.crash_at(point, &["plugin", "update", ID]);
        let committed = matches!(
            point,
            "update.registry-written" | "update.old-version-released"
        );
        env.assert_state(Some(if committed { "2.0.0" } else { "1.0.0" }), point);
        if !committed {
            assert!(Path::new(&v1).join("hook.sh").is_file(), "{point}");
        }

        env.ok(&["plugin", "update", ID]);
        env.assert_state(Some("2.0.0"), point);
        env.assert_no_scratch_left();
    }
}

#[test]
fn uninstall_killed_at_each_point_is_gone_and_finishes_when_run_again() {
    for point in points("uninstall") {
        let env = with_marketplace();
        env.ok(&["plugin", "install", ID]);
        let data = env.plugins().join("data/hooked-m");
        write(&data.join("state.txt"), "kept by the plugin");

        env.crash_at(point, &["plugin", "uninstall", ID]);
        env.assert_state(None, point);

        let out = env.ok(&["plugin", "uninstall", ID]);
        assert!(out.contains("Successfully uninstalled"), "{point}: {out}");
        assert!(env.grants().is_empty(), "{point}: {:?}", env.grants());
        assert_eq!(env.enabled_key(), None, "{point}");
        assert!(!data.exists(), "{point}");
        let err = env.fails(&["plugin", "uninstall", ID]);
        assert!(err.contains("not installed"), "{point}: {err}");

        env.ok(&["plugin", "install", ID]);
        env.assert_state(Some("1.0.0"), point);
    }
}

#[test]
fn grant_killed_at_each_point_leaves_the_grant_there_or_not() {
    for point in points("grant") {
        let env = with_marketplace();
        env.ok(&["plugin", "install", ID]);
        // A lost grant, which is what `grant` is for.
        std::fs::remove_file(env.plugins().join("grants.json")).expect("rm grants");

        env.crash_at(point, &["plugin", "grant", ID, "--yes"]);
        env.assert_files_whole();
        let grants = env.grants();
        assert_eq!(
            grants.len(),
            usize::from(point == "grant.written"),
            "{point}"
        );
        assert_eq!(env.listed().len(), 1, "{point}");

        env.ok(&["plugin", "grant", ID, "--yes"]);
        env.assert_state(Some("1.0.0"), point);
    }
}

#[test]
fn marketplace_update_killed_at_each_point_keeps_a_readable_catalog() {
    for point in points("marketplace-update") {
        let env = Env::new();
        write_marketplace(&env.mkt, "1.0.0");
        git(&env.mkt, &["init", "--quiet"]);
        git(&env.mkt, &["add", "-A"]);
        git(&env.mkt, &["commit", "--quiet", "-m", "v1"]);
        let url = format!("file://{}", env.mkt.display());
        env.ok(&["plugin", "marketplace", "add", &url]);
        env.ok(&["plugin", "install", ID]);
        write_plugin(&env.mkt.join("hooked"), "2.0.0");
        git(&env.mkt, &["commit", "--quiet", "-am", "v2"]);

        env.crash_at(point, &["plugin", "marketplace", "update", "m"]);
        env.assert_state(Some("1.0.0"), point);
        let list: Value =
            serde_json::from_str(&env.ok(&["plugin", "marketplace", "list", "--json"]))
                .expect("marketplace list JSON");
        let loc = PathBuf::from(
            list[0]["installLocation"]
                .as_str()
                .unwrap_or_else(|| panic!("{point}: {list}")),
        );
        assert!(
            loc.join(".claude-plugin/marketplace.json").is_file(),
            "{point}: the catalog is gone from {loc:?}"
        );
        // The catalog can still be installed from: the old clone, or the new one once it was
        // swapped in.
        env.ok(&["plugin", "install", ID]);
        let fresh = point != "marketplace-update.cloned";
        env.assert_state(Some(if fresh { "2.0.0" } else { "1.0.0" }), point);

        env.ok(&["plugin", "marketplace", "update", "m"]);
        env.ok(&["plugin", "update", ID]);
        env.assert_state(Some("2.0.0"), point);
        env.assert_no_scratch_left();
    }
}

// ------------------------------------------------------------------ full disk

/// How a command inside the namespace ended: its exit code and output.
struct Ran {
    code: i32,
    out: String,
    err: String,
}

/// Runs `script` with `sh` in a new mount namespace where `$H` (the Warden home) is a tmpfs
/// of `size`, and returns what each `run NAME warden …` line in it did. The namespace is a
/// new user namespace where that is allowed, else (as root) only a new mount namespace, so
/// nothing is mounted on the machine itself and the mount ends with the script.
fn in_small_filesystem(
    env: &Env,
    size: &str,
    script: &str,
    out: &Path,
    names: &[&str],
) -> std::collections::BTreeMap<String, Ran> {
    let prelude = format!(
        r#"set -u
mount -t tmpfs -o size={size},mode=0700 warden-test "$H" || {{ echo "mount -t tmpfs failed" >&2; exit 97; }}
run() {{ n=$1; shift; "$@" >"$OUT/$n.out" 2>"$OUT/$n.err"; echo $? >"$OUT/$n.rc"; }}
"#
    );
    let full = format!("{prelude}{script}");
    let attempts: [&[&str]; 2] = [
        &[
            "--user",
            "--map-root-user",
            "--mount",
            "--propagation",
            "private",
        ],
        &["--mount", "--propagation", "private"],
    ];
    let mut why = Vec::new();
    for flags in attempts {
        let o = Command::new("unshare")
            .args(flags)
            .args(["sh", "-c", &full])
            .env("H", &env.home)
            .env("OUT", out)
            .env("W", WARDEN)
            .env("WARDEN_HOME", &env.home)
            .env("WARDEN_NO_CLAUDE_CONFIG", "1")
            .env("WARDEN_MANAGED_SETTINGS_DIR", "")
            .env_remove("CLAUDE_PROJECT_DIR")
            .env_remove(FAULT_ENV)
            .current_dir(&env.proj)
            .stdin(Stdio::null())
            .output();
        match o {
            Ok(o) if o.status.success() => {
                return names
                    .iter()
                    .map(|n| {
                        let read = |ext: &str| {
                            std::fs::read_to_string(out.join(format!("{n}.{ext}")))
                                .unwrap_or_else(|e| panic!("{n}.{ext}: {e}: {}", show(&o)))
                        };
                        let ran = Ran {
                            code: read("rc").trim().parse().expect("exit code"),
                            out: read("out"),
                            err: read("err"),
                        };
                        (n.to_string(), ran)
                    })
                    .collect();
            }
            Ok(o) => why.push(format!("unshare {}: {}", flags.join(" "), show(&o))),
            Err(e) => why.push(format!("unshare {}: {e}", flags.join(" "))),
        }
    }
    panic!(
        "the full-disk test needs a small filesystem and could not mount one (it needs `unshare` from util-linux and either unprivileged user namespaces or root):\n{}",
        why.join("\n")
    );
}

#[test]
fn an_install_that_fills_the_disk_fails_clearly_and_leaves_nothing() {
    let env = Env::new();
    write_marketplace(&env.mkt, "1.0.0");
    // `big` needs more room than the filesystem has left once `hooked` is installed.
    let mkt_json = json!({
        "name": "m",
        "owner": { "name": "Tests" },
        "plugins": [
            { "name": "hooked", "source": "./hooked" },
            { "name": "big", "source": "./big" }
        ]
    });
    write(
        &env.mkt.join(".claude-plugin/marketplace.json"),
        &mkt_json.to_string(),
    );
    write(
        &env.mkt.join("big/.claude-plugin/plugin.json"),
        &json!({ "name": "big", "version": "1.0.0" }).to_string(),
    );
    std::fs::write(env.mkt.join("big/blob.bin"), vec![7u8; 3 << 20]).expect("blob");

    let mkt = env.mkt.to_str().expect("utf-8");
    let script = format!(
        r#"run add "$W" plugin marketplace add '{mkt}'
run install "$W" plugin install {ID}
head -c 2500000 /dev/zero > "$H/filler"
cp "$H/plugins/installed_plugins.json" "$OUT/installed.before"
cp "$H/plugins/grants.json" "$OUT/grants.before"
cp "$H/settings.json" "$OUT/settings.before"
run big "$W" plugin install big@m
run list "$W" plugin list --json
ls -A "$H/plugins/.tmp" > "$OUT/tmp.ls" 2>&1
ls -A "$H/plugins/cache/m" > "$OUT/cache.ls" 2>&1
run verify "$W" plugin verify
cp "$H/plugins/installed_plugins.json" "$OUT/installed.after"
cp "$H/plugins/grants.json" "$OUT/grants.after"
cp "$H/settings.json" "$OUT/settings.after"
rm "$H/filler"
run again "$W" plugin install big@m
run list2 "$W" plugin list --json
"#
    );
    let (_k, copy) = tempdir();
    let r = in_small_filesystem(
        &env,
        "4m",
        &script,
        &copy,
        &["add", "install", "big", "list", "verify", "again", "list2"],
    );
    for n in ["add", "install", "list", "verify", "again", "list2"] {
        assert_eq!(r[n].code, 0, "{n}: {}\n{}", r[n].out, r[n].err);
    }
    let big = &r["big"];
    assert_eq!(big.code, 1, "{}\n{}", big.out, big.err);
    assert!(
        big.err.contains("No space left on device"),
        "no ENOSPC: {}",
        big.err
    );
    assert!(
        big.err
            .contains(env.home.join("plugins").to_str().expect("utf-8")),
        "the error does not name the path that could not be written: {}",
        big.err
    );

    let listed: Value = serde_json::from_str(&r["list"].out).expect("list JSON");
    let ids: Vec<&str> = listed
        .as_array()
        .expect("array")
        .iter()
        .filter_map(|p| p["id"].as_str())
        .collect();
    assert_eq!(ids, vec![ID]);
    let tmp_ls = std::fs::read_to_string(copy.join("tmp.ls")).expect("tmp.ls");
    assert!(tmp_ls.trim().is_empty(), "left in plugins/.tmp: {tmp_ls}");
    let cache_ls = std::fs::read_to_string(copy.join("cache.ls")).expect("cache.ls");
    assert_eq!(cache_ls.trim(), "hooked", "cache/m holds: {cache_ls}");
    for f in ["installed", "grants", "settings"] {
        let before = std::fs::read(copy.join(format!("{f}.before"))).expect("before");
        let after = std::fs::read(copy.join(format!("{f}.after"))).expect("after");
        assert_eq!(before, after, "{f} changed by the failed install");
    }

    let listed: Value = serde_json::from_str(&r["list2"].out).expect("list JSON");
    assert_eq!(listed.as_array().expect("array").len(), 2, "{listed}");
}

// ------------------------------------------------------------------ corrupt files

#[test]
fn corrupt_state_and_settings_files_are_named_and_never_overwritten() {
    // (file under the home, contents, the position the error must name)
    let cases: &[(&str, &str, &str)] = &[
        (
            "plugins/installed_plugins.json",
            "{\"version\": 2, \"plugins\": {",
            "1:27",
        ),
        (
            "plugins/installed_plugins.json",
            "{\n  \"version\": 2,\n  \"plugins\": [1, 2]\n}\n",
            "3:13",
        ),
        ("plugins/installed_plugins.json", "not json", "1:2"),
        (
            "plugins/grants.json",
            "{\"version\": 1, \"grants\": {\"a\": 5}}",
            "1:32",
        ),
        ("plugins/grants.json", "{\"version\": 1,\n \"gra", "2:5"),
        (
            "plugins/known_marketplaces.json",
            "{\"m\": {\"source\": 3}}",
            "1:18",
        ),
        ("settings.json", "{\n  \"enabledPlugins\": {\n", "3:0"),
        ("settings.json", "{\"enabledPlugins\": [true]}", "1:2"),
    ];
    for (file, text, pos) in cases {
        let env = with_marketplace();
        env.ok(&["plugin", "install", ID]);
        let path = env.home.join(file);
        let original = std::fs::read(&path).expect("the file exists after an install");
        std::fs::write(&path, text).expect("corrupt");
        let reading: &[&[&str]] = &[
            &["plugin", "list"],
            &["plugin", "details", ID],
            &["plugin", "install", ID],
            &["plugin", "update", ID],
            &["plugin", "grant", ID, "--yes"],
            &["plugin", "disable", ID],
            &["plugin", "uninstall", ID],
            &["plugin", "marketplace", "list"],
            &["plugin", "marketplace", "update"],
        ];
        // The commands that read the file (`update` of an up-to-date plugin changes nothing
        // and reads neither grants nor settings).
        let reads_it = |args: &[&str]| -> bool {
            match *file {
                "plugins/known_marketplaces.json" => {
                    matches!(args[1], "install" | "update" | "marketplace")
                }
                _ if args[1] == "marketplace" => false,
                "plugins/grants.json" => {
                    matches!(args[1], "details" | "install" | "grant" | "uninstall")
                }
                "settings.json" => args[1] != "update" && args[1] != "grant",
                _ => true,
            }
        };
        for args in reading.iter().filter(|a| reads_it(a)) {
            let o = env.run(args);
            assert_eq!(
                o.status.code(),
                Some(1),
                "{file} = {text:?}: warden {args:?} did not fail: {}",
                show(&o)
            );
            let err = stderr(&o);
            assert!(
                err.contains(path.to_str().expect("utf-8")),
                "{file}: warden {args:?} does not name the file: {err}"
            );
            assert!(
                err.contains(pos),
                "{file}: warden {args:?} does not name the position {pos}: {err}"
            );
            assert_eq!(
                std::fs::read_to_string(&path).expect("read back"),
                *text,
                "{file}: warden {args:?} changed it"
            );
        }
        // No command got half way before it stopped: with the file repaired, the plugin is
        // installed as before.
        std::fs::write(&path, original).expect("repair");
        env.assert_state(Some("1.0.0"), file);
        assert_eq!(env.enabled_key(), Some(json!(true)), "{file}");
    }
}
