//! What confinement costs a program, measured side by side in one run.
//!
//! `cargo bench --workspace --bench exec_cost` prints p50/p99 of, interleaved round by round
//! so load on the machine hits every row alike:
//! 1. `ls` spawned and waited for, unconfined, as any host would run it;
//! 2. the same `ls` confined the way the `exec` capability confines it (Landlock, seccomp,
//!    supervisor, private temp dir, protected-path copies), the ratio to 1 being the cost of
//!    confinement per `exec`;
//! 3. `bash -c ls`, the way a shell-command tool runs it;
//! 4. the Bash tool's `ls` end to end through the session's pipeline in a warm process
//!    (rules, a fresh WebAssembly sandbox, the exec capability, confinement);
//! 5. `warden tool Bash` as a process per call (when the binary is built).

fn main() {
    #[cfg(target_os = "linux")]
    linux::main();
}

#[cfg(target_os = "linux")]
mod linux {
    use std::path::{Path, PathBuf};
    use std::process::{Command, Stdio};
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    use serde_json::json;
    use warden::session::{DenyAsker, Session, SessionOptions, ToolStatus};
    use warden_config::Home;
    use warden_confine::Confinement;

    const ROUNDS: usize = 150;

    fn p(samples: &mut [Duration], q: f64) -> Duration {
        samples.sort();
        samples[((samples.len() as f64 - 1.0) * q).round() as usize]
    }

    fn ms(d: Duration) -> String {
        format!("{:.2} ms", d.as_secs_f64() * 1e3)
    }

    fn timed(f: impl FnOnce()) -> Duration {
        let t = Instant::now();
        f();
        t.elapsed()
    }

    fn project(root: &Path) -> (PathBuf, PathBuf) {
        let proj = root.join("proj");
        let home = root.join("home");
        for d in [proj.join("src"), proj.join(".git"), home.join(".cargo")] {
            std::fs::create_dir_all(d).expect("mkdir");
        }
        for (f, text) in [
            ("README.md", "readme\n"),
            (".env", "SECRET=x\n"),
            ("src/main.rs", "pub fn main() {}\n"),
            (".git/config", "[core]\n"),
        ] {
            std::fs::write(proj.join(f), text).expect("write");
        }
        (proj, home)
    }

    fn warden_binary() -> Option<PathBuf> {
        // target/release/deps/exec_cost-… → target/release/warden
        let exe = std::env::current_exe().ok()?;
        let bin = exe.parent()?.parent()?.join("warden");
        bin.is_file().then_some(bin)
    }

    pub fn main() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = std::fs::canonicalize(tmp.path()).expect("canonical");
        let (proj, home) = project(&root);
        // SAFETY: set before any thread is started.
        unsafe {
            std::env::set_var("WARDEN_MANAGED_SETTINGS_DIR", "");
            std::env::set_var("WARDEN_NO_CLAUDE_CONFIG", "1");
        }
        let warden_home = Home::new(root.join("warden-home"));
        let mut opts = SessionOptions::new(&proj, warden_home.clone());
        opts.user_home = Some(home.clone());
        let session = Arc::new(Session::load(&opts));
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("tokio");
        let bash_tool = || {
            let out = rt
                .block_on(session.call_tool("Bash", json!({"command": "ls"}), &DenyAsker))
                .expect("call");
            match out.status {
                ToolStatus::Ok { content, .. } => {
                    assert!(content.contains("README.md"), "{content}")
                }
                other => panic!("Bash ls: {other:?}"),
            }
        };
        bash_tool(); // compiles the component once, into the cache

        let confinement = Confinement::for_project(&proj, Some(&home));
        let bin = warden_binary();
        let mut rows: Vec<(&str, Vec<Duration>)> = vec![
            ("ls, unconfined", Vec::new()),
            ("ls, confined through the supervisor", Vec::new()),
            ("ls, confined as exec confines it (spawned)", Vec::new()),
            ("bash -c ls", Vec::new()),
            ("Bash tool `ls`, pipeline in a warm process", Vec::new()),
            ("`warden tool Bash` process per call", Vec::new()),
        ];
        for _ in 0..ROUNDS {
            rows[0].1.push(timed(|| {
                let out = Command::new("ls").current_dir(&proj).output().expect("ls");
                assert!(out.status.success());
            }));
            rows[1].1.push(timed(|| {
                let mut cmd = Command::new("ls");
                cmd.current_dir(&proj)
                    .env_clear()
                    .env("PATH", "/usr/bin:/bin");
                let guard = confinement.confine(&mut cmd).expect("confine");
                let out = cmd.output().expect("ls");
                guard.finish().expect("finish");
                assert!(out.status.success(), "{out:?}");
            }));
            rows[2].1.push(timed(|| {
                let mut p = warden_confine::Program::new("ls");
                p.current_dir(&proj)
                    .env("PATH", "/usr/bin:/bin")
                    .stdin(warden_confine::Stdio::Null)
                    .stdout(warden_confine::Stdio::Piped)
                    .stderr(warden_confine::Stdio::Piped);
                let (mut child, guard) = confinement.spawn(&p).expect("spawn");
                let mut listing = String::new();
                if let Some(out) = child.stdout.take() {
                    std::io::Read::read_to_string(&mut std::fs::File::from(out), &mut listing)
                        .expect("read");
                }
                let status = child.wait().expect("wait");
                guard.finish().expect("finish");
                assert!(
                    status.success() && listing.contains("README.md"),
                    "{listing}"
                );
            }));
            rows[3].1.push(timed(|| {
                let out = Command::new("bash")
                    .args(["-c", "ls"])
                    .current_dir(&proj)
                    .output()
                    .expect("bash");
                assert!(out.status.success());
            }));
            rows[4].1.push(timed(bash_tool));
            if let Some(bin) = &bin {
                rows[5].1.push(timed(|| {
                    let out = Command::new(bin)
                        .args(["tool", "Bash", "--input", r#"{"command":"ls"}"#])
                        .current_dir(&proj)
                        .env("WARDEN_HOME", warden_home.root())
                        .env("HOME", &home)
                        .stdin(Stdio::null())
                        .output()
                        .expect("warden");
                    assert!(out.status.success(), "{out:?}");
                }));
            }
        }
        println!("\nexec cost: {ROUNDS} rounds, interleaved\n");
        let mut p50s = Vec::new();
        for (name, samples) in &mut rows {
            if samples.is_empty() {
                println!("  {name:<46} (warden binary not built; `cargo build --release` first)");
                p50s.push(None);
                continue;
            }
            let (p50, p99) = (p(samples, 0.5), p(samples, 0.99));
            println!("  {name:<46} p50 {:>9}   p99 {:>9}", ms(p50), ms(p99));
            p50s.push(Some(p50));
        }
        let ratio = |a: usize, b: usize| match (p50s[a], p50s[b]) {
            (Some(x), Some(y)) => format!("{:.1}×", x.as_secs_f64() / y.as_secs_f64()),
            _ => "n/a".into(),
        };
        println!(
            "\n  confinement per exec (2 vs 1): {}, spawned (3 vs 1): {}; Bash tool vs bash -c ls (5 vs 4): {}; CLI vs bash -c ls (6 vs 4): {}",
            ratio(1, 0),
            ratio(2, 0),
            ratio(4, 3),
            ratio(5, 3)
        );
    }
}
