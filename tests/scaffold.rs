//! A plugin made by `warden new` builds and runs away from the Warden checkout: the release
//! binary is copied into an empty directory, and from there a new Rust, Python, JavaScript and
//! C plugin is created, built, validated, added as its own marketplace, installed and called,
//! as the generated README says. No generated file may name the checkout, and the first call
//! of an installed component compiles nothing: `warden build` and the install compiled it.
//!
//! The toolchains are the pinned ones of `support/toolchains.rs`, installed once per target
//! directory; Rust guests share its cargo target directory, so their dependencies build once.

#[path = "support/toolchains.rs"]
mod toolchains;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Instant;

use toolchains::peers;

/// One plugin per language, hooks and tools both covered.
const CASES: [(&str, &str); 4] = [
    ("rust", "tool"),
    ("python", "hook"),
    ("js", "tool"),
    ("c", "hook"),
];

/// An empty directory holding nothing but a copy of the release binary, and a Warden home.
struct Outside {
    _dir: tempfile::TempDir,
    root: PathBuf,
    bin: PathBuf,
    home: PathBuf,
}

impl Outside {
    fn new() -> Outside {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().canonicalize().expect("canonical tempdir");
        let bin = root.join("bin/warden");
        std::fs::create_dir_all(bin.parent().expect("bin/")).expect("mkdir bin");
        std::fs::copy(env!("CARGO_BIN_EXE_warden"), &bin).expect("copy the warden binary");
        let home = root.join("home");
        Outside {
            _dir: dir,
            root,
            bin,
            home,
        }
    }

    fn warden(&self, cwd: &Path, args: &[&str], stdin: Option<&str>) -> Output {
        let mut cmd = Command::new(&self.bin);
        cmd.args(args)
            .current_dir(cwd)
            .env("WARDEN_HOME", &self.home)
            .env("WARDEN_NO_CLAUDE_CONFIG", "1")
            // Nothing may lead back to the checkout at run time either.
            .env_remove("CARGO_MANIFEST_DIR")
            .stdin(if stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in toolchains::env() {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("run the copied warden");
        if let Some(input) = stdin {
            use std::io::Write;
            child
                .stdin
                .take()
                .expect("stdin")
                .write_all(input.as_bytes())
                .expect("write stdin");
        }
        child.wait_with_output().expect("wait for warden")
    }

    fn ok(&self, cwd: &Path, args: &[&str]) -> String {
        let out = self.warden(cwd, args, None);
        assert!(
            out.status.success(),
            "warden {args:?} in {}: {}",
            cwd.display(),
            peers::text(&out)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

/// Every file under `dir` that names `needle`, outside what the build itself writes.
fn files_naming(dir: &Path, needle: &str, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read_dir").flatten() {
        let path = entry.path();
        let name = entry.file_name();
        if matches!(name.to_str(), Some("wasm" | "target" | "node_modules")) {
            continue;
        }
        if path.is_dir() {
            files_naming(&path, needle, out);
        } else if std::fs::read(&path)
            .map(|b| String::from_utf8_lossy(&b).contains(needle))
            .unwrap_or(false)
        {
            out.push(path);
        }
    }
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(bytes))
}

/// The compiled entry of the component whose wasm hashes to `digest`, with its identity.
fn compiled_entry(home: &Path, digest: &str) -> Option<(PathBuf, std::fs::Metadata)> {
    let cache = home.join("cache");
    std::fs::read_dir(&cache).ok()?.flatten().find_map(|e| {
        let name = e.file_name().to_string_lossy().into_owned();
        (name.starts_with(digest) && name.ends_with(".cwasm"))
            .then(|| (e.path(), e.metadata().expect("metadata")))
    })
}

#[test]
fn a_new_plugin_in_each_language_builds_installs_and_runs_outside_the_checkout() {
    let outside = Outside::new();
    let checkout = toolchains::repo().to_string_lossy().into_owned();
    for (lang, kind) in CASES {
        let name = format!("new-{lang}-{kind}");
        let made = outside.ok(&outside.root, &["new", kind, "--lang", lang, &name]);
        let dir = outside.root.join(&name);
        assert!(made.contains(".claude-plugin/marketplace.json"), "{made}");
        let mut naming = Vec::new();
        files_naming(&dir, &checkout, &mut naming);
        assert!(
            naming.is_empty(),
            "{name}: generated files name the checkout {checkout}: {naming:?}"
        );

        let built = outside.ok(&dir, &["build"]);
        assert!(built.contains(&format!("built {name} ({lang})")), "{built}");
        // A tool is offered under the name its describe() gives (`count`), not its
        // component's, with the plugin's prefix.
        let tool = format!("mcp__plugin_{name}_warden__count");
        if kind == "tool" {
            assert!(
                built.contains(&format!("tool {name} is offered as {tool}")),
                "{built}"
            );
        }
        assert!(
            built.contains(&format!("compiled {name} for its first call")),
            "{built}"
        );
        outside.ok(&dir, &["plugin", "validate", "."]);

        // The README's install: the directory is a marketplace of this one plugin.
        outside.ok(&dir, &["plugin", "marketplace", "add", "."]);
        let id = format!("{name}@{name}");
        let installed = outside.ok(&dir, &["plugin", "install", &id, "--yes"]);
        assert!(installed.contains("Successfully installed"), "{installed}");
        let wasm = std::fs::read(dir.join(format!("wasm/{name}.wasm"))).expect("built wasm");
        let digest = sha256_hex(&wasm);
        let (entry, before) = compiled_entry(&outside.home, &digest)
            .unwrap_or_else(|| panic!("{name}: nothing compiled for its first call"));
        if kind == "tool" {
            assert!(
                installed.contains(&format!("Tool {name}: {tool}")),
                "{installed}"
            );
            // Its description is recorded by digest, so no session runs it to list it.
            let recorded = outside.home.join(format!("cache/tools/{digest}.json"));
            let recorded: serde_json::Value = serde_json::from_slice(
                &std::fs::read(&recorded)
                    .unwrap_or_else(|e| panic!("{name}: {}: {e}", recorded.display())),
            )
            .expect("recorded description");
            assert_eq!(recorded["name"], "count", "{name}: {recorded}");
        }

        let started = Instant::now();
        match kind {
            "hook" => {
                let event = |command: &str| {
                    serde_json::json!({
                        "hook_event_name": "PreToolUse",
                        "tool_name": "Bash",
                        "tool_input": { "command": command },
                        "cwd": dir,
                        "session_id": "s",
                        "transcript_path": dir.join("t.jsonl"),
                    })
                    .to_string()
                };
                let out = outside.warden(&dir, &["hook", "PreToolUse"], Some(&event("sudo ls")));
                let first = started.elapsed();
                let text = peers::text(&out);
                assert!(
                    text.contains("\"permissionDecision\":\"ask\"")
                        && text.contains("runs as root"),
                    "{name}: sudo was not asked about: {text}"
                );
                let out = outside.warden(&dir, &["hook", "PreToolUse"], Some(&event("rm -rf /")));
                let text = peers::text(&out);
                assert!(
                    text.contains("\"permissionDecision\":\"deny\""),
                    "{name}: rm -rf / was not denied: {text}"
                );
                eprintln!("{name}: first hook call after install {first:?}");
            }
            _ => {
                let out = outside.warden(
                    &dir,
                    &[
                        "tool",
                        &tool,
                        "--input",
                        r#"{"text":"one two\nthree\n"}"#,
                        "--yes",
                    ],
                    None,
                );
                let text = peers::text(&out);
                assert!(
                    out.status.success() && text.contains("2 lines, 3 words"),
                    "{name}: {tool}: {text}"
                );
                eprintln!(
                    "{name}: first tool call after install {:?}",
                    started.elapsed()
                );
            }
        }
        // The call mapped what the build and the install compiled: the entry is the very file
        // written then, not one a compile at the call replaced.
        let (_, after) = compiled_entry(&outside.home, &digest).expect("entry");
        assert_eq!(
            (before.len(), before.modified().ok()),
            (after.len(), after.modified().ok()),
            "{name}: {} was compiled again at the first call",
            entry.display()
        );
    }
}
