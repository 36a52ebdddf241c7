//! Reads and writes of confined processes.
#![cfg(target_os = "linux")]

mod common;

use common::{SECRET, assert_no_secret, fixture, stdout};

#[test]
fn cat_reads_the_project_and_nothing_secret() {
    let f = fixture();
    let ok = f.run(&["cat", "README.md"]);
    assert!(ok.status.success(), "{ok:?}");
    assert_eq!(stdout(&ok), "readme text\n");
    let gitconfig = f.run(&["cat", f.home.join(".gitconfig").to_str().unwrap()]);
    assert!(gitconfig.status.success(), "{gitconfig:?}");

    for secret in [
        f.project.join(".env"),
        f.project.join(".env.local"),
        f.outside.join("hostname"),
        f.home.join(".ssh/id_ed25519"),
        f.home.join(".aws/credentials"),
        f.home.join(".cargo/credentials.toml"),
    ] {
        let out = f.run(&["cat", secret.to_str().unwrap()]);
        assert!(!out.status.success(), "{} was readable", secret.display());
        assert_no_secret(&out, &secret.display().to_string());
        // The same file is readable unconfined: the refusal is the confinement's.
        let plain = f
            .command(&["cat", secret.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(stdout(&plain).contains(SECRET));
    }
}

#[test]
fn indirect_reads_of_a_denied_file_fail() {
    let f = fixture();
    for argv in [
        &["sed", "-n", "r .env", "README.md"][..],
        &["sh", "-c", "cat .en*"],
        &["sh", "-c", "while read l; do echo \"$l\"; done < .env"],
        &["find", ".", "-type", "f", "-exec", "cat", "{}", ";"],
        &["cp", ".env", "src/copy"],
        &["sh", "-c", "cat src/copy"],
    ] {
        let out = f.run(argv);
        assert_no_secret(&out, &format!("{argv:?}"));
    }
    // find did read the files it may read.
    let found = f.run(&["find", ".", "-type", "f", "-exec", "cat", "{}", ";"]);
    assert!(stdout(&found).contains("readme text"), "{found:?}");
}

#[test]
fn python_cannot_open_a_denied_file() {
    let f = fixture();
    let Ok(probe) = std::process::Command::new("python3")
        .args(["-c", "import sys; print(sys.base_prefix)"])
        .output()
    else {
        eprintln!("python3 not installed; nothing to check");
        return;
    };
    let prefix = String::from_utf8_lossy(&probe.stdout).trim().to_string();
    let c = f.confinement().read(&prefix);
    let python = format!("{prefix}/bin/python3");
    let (ok, _) = f.run_with(&c, &[&python, "-c", "print(open('README.md').read())"]);
    assert!(stdout(&ok).contains("readme text"), "{ok:?}");
    let (out, _) = f.run_with(&c, &[&python, "-c", "print(open('.env').read())"]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("PermissionError"),
        "{out:?}"
    );
    assert_no_secret(&out, "python3");
}

#[test]
fn hard_and_symbolic_links_do_not_expose_a_denied_file() {
    // Carved (where user namespaces are unavailable); tests/hide.rs has the covered case.
    let f = fixture();
    let carved = f.confinement().hide_with_mounts(false);
    let run = |argv: &[&str]| f.run_with(&carved, argv).0;
    // Into a granted directory: Landlock refuses (the file would gain rights).
    let cross = run(&["ln", ".env", "src/leak"]);
    assert!(!cross.status.success(), "{cross:?}");
    assert!(!f.project.join("src/leak").exists());
    // Into the same directory: allowed, and just as unreadable, now and in a later call.
    let same = run(&["sh", "-c", "ln .env leak && ln -s .env sym; cat leak sym"]);
    assert_no_secret(&same, "same-directory links");
    assert!(f.project.join("leak").exists(), "{same:?}");
    for name in ["leak", "sym"] {
        let later = run(&["cat", name]);
        assert!(!later.status.success(), "{name}: {later:?}");
        assert_no_secret(&later, name);
    }
    // A symlink made earlier, unconfined, to a file outside: the carve-out grants the link,
    // never what it points at.
    std::os::unix::fs::symlink(f.outside.join("hostname"), f.project.join("outlink")).unwrap();
    std::os::unix::fs::symlink(f.home.join(".ssh"), f.project.join("sshlink")).unwrap();
    for name in ["outlink", "sshlink/id_ed25519"] {
        let out = run(&["cat", name]);
        assert!(!out.status.success(), "{name}: {out:?}");
        assert_no_secret(&out, name);
    }
    // Moving the link into a granted directory is refused like linking.
    let mv = run(&["mv", "leak", "src/leak2"]);
    assert_no_secret(&run(&["cat", "src/leak2"]), "moved link");
    assert!(!f.project.join("src/leak2").exists() || !mv.status.success());
}

#[test]
fn writes_outside_the_project_fail() {
    let f = fixture();
    std::fs::write(f.project.join("a"), "a\n").unwrap();
    for (argv, made) in [
        (&["sh", "-c", "echo x | tee ../x"][..], "x"),
        (&["touch", "../y"], "y"),
        (&["mkdir", "../d"], "d"),
        (&["cp", "a", "../b"], "b"),
        (
            &["sh", "-c", "echo x > ../outside/hostname"],
            "outside/hostname",
        ),
        (&["sh", "-c", "echo x >> \"$HOME/.bashrc\""], "home/.bashrc"),
        (&["rm", "-f", "../outside/hostname"], ""),
    ] {
        let out = f.run(argv);
        assert!(!out.status.success(), "{argv:?} succeeded");
        if made == "outside/hostname" {
            assert!(
                std::fs::read_to_string(f.root.join(made))
                    .unwrap()
                    .contains(SECRET)
            );
        } else if !made.is_empty() {
            assert!(!f.root.join(made).exists(), "{argv:?} created {made}");
        }
    }
    assert!(f.outside.join("hostname").exists());
    // truncate(2) on a read-only file (Landlock ABI 3).
    let t = f.run(&[
        "truncate",
        "-s",
        "0",
        f.home.join(".gitconfig").to_str().unwrap(),
    ]);
    assert!(!t.status.success());
    assert!(std::fs::metadata(f.home.join(".gitconfig")).unwrap().len() > 0);
}

#[test]
fn writes_inside_the_project_and_the_private_temp_work() {
    let f = fixture();
    let out = f.sh(
        "echo more >> README.md && echo new > src/new.rs && mkdir -p src/sub/dir && \
         echo deep > src/sub/dir/f && cat src/new.rs src/sub/dir/f && \
         echo t > \"$TMPDIR/scratch\" && cat \"$TMPDIR/scratch\" && echo \"$TMPDIR\"",
    );
    assert!(out.status.success(), "{out:?}");
    let text = stdout(&out);
    assert!(text.starts_with("new\ndeep\nt\n"), "{text}");
    assert_eq!(
        std::fs::read_to_string(f.project.join("README.md")).unwrap(),
        "readme text\nmore\n"
    );
    // The private temp dir lived under the configured parent and is emptied after the call
    // (kept for this process's next call, removed when it exits).
    let tmpdir = text.lines().nth(3).unwrap();
    assert!(tmpdir.starts_with(f.temp.to_str().unwrap()), "{tmpdir}");
    let left: Vec<_> = std::fs::read_dir(tmpdir)
        .map(|d| d.flatten().map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "{left:?}");
    // The next call gets it empty, whatever the last one left in it.
    let again = f.sh("ls -A \"$TMPDIR\"; echo \"$TMPDIR\"");
    assert!(again.status.success(), "{again:?}");
    assert_eq!(stdout(&again), format!("{tmpdir}\n"));
    // The parent itself is not writable.
    let other = f.run(&["touch", f.temp.join("other").to_str().unwrap()]);
    assert!(!other.status.success());
}

#[test]
fn a_new_file_in_a_carved_directory_is_not_usable_in_the_same_call() {
    // Without hiding by mounts (user namespaces unavailable), the project root holds `.env`,
    // so it is granted entry by entry: entries created there later get only the root's own
    // rights (create, remove, list), not reading or writing.
    let f = fixture();
    let carved = f.confinement().hide_with_mounts(false);
    let sh = |script: &str| f.run_with(&carved, &["sh", "-c", script]).0;
    let out = sh("echo hi > fresh.txt");
    assert!(!out.status.success());
    let read = f.run_with(&carved, &["cat", "fresh.txt"]).0;
    assert_eq!(stdout(&read), "", "{read:?}");
    // The next call sees the entry and grants it like any other.
    let next = sh("echo hi > fresh.txt && cat fresh.txt");
    assert_eq!(stdout(&next), "hi\n", "{next:?}");
    // A project without denied files is granted whole.
    std::fs::remove_file(f.project.join(".env")).unwrap();
    std::fs::remove_file(f.project.join(".env.local")).unwrap();
    let whole = sh("echo hi > other.txt && cat other.txt");
    assert_eq!(stdout(&whole), "hi\n", "{whole:?}");
}

#[test]
fn credentials_stay_denied_when_the_project_is_the_home_directory() {
    let f = fixture();
    let c = warden_confine::Confinement::for_project(&f.home, Some(&f.home))
        .private_temp_in(Some(f.temp.clone()));
    let mut cmd = f.command(&[
        "sh",
        "-c",
        "cat .ssh/id_ed25519 .aws/credentials; echo ok > notes",
    ]);
    cmd.current_dir(&f.home);
    let guard = c.confine(&mut cmd).unwrap();
    let out = cmd.output().unwrap();
    guard.finish().unwrap();
    assert_no_secret(&out, "home as project");
    assert_eq!(
        std::fs::read_to_string(f.home.join("notes")).unwrap_or_default(),
        "",
        "home is carved around the readable toolchains, so a new file there is not writable"
    );
    let gitconfig = f.home.join(".gitconfig");
    let script = format!("echo more >> {}", gitconfig.display());
    let edit = f.run_with(&c, &["sh", "-c", &script]).0;
    assert!(
        !edit.status.success(),
        "toolchain configuration stayed read-only: {edit:?}"
    );
    assert!(
        String::from_utf8_lossy(&edit.stderr).contains("Permission denied"),
        "{edit:?}"
    );
    assert!(!std::fs::read_to_string(gitconfig).unwrap().contains("more"));
}
