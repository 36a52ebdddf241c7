//! Denied paths hidden by mounts in a private mount namespace, so the project is granted whole.
#![cfg(target_os = "linux")]

mod common;

use common::{SECRET, assert_no_secret, fixture, stdout};
use warden_confine::Confinement;

fn with_secrets_dir(f: &common::Fixture) -> Confinement {
    std::fs::create_dir_all(f.project.join("secrets")).unwrap();
    std::fs::write(f.project.join("secrets/k"), format!("{SECRET}\n")).unwrap();
    f.confinement().deny(f.project.join("secrets"))
}

fn skip() -> bool {
    if !warden_confine::hides_with_mounts() {
        eprintln!("no private mount namespace here; carving is tested elsewhere");
        return true;
    }
    false
}

const NEW_FILES: &str = "echo x > newfile && cat newfile && mkdir d && echo y > d/f && cat d/f";

#[test]
fn new_files_in_a_root_holding_env_work_in_one_call() {
    if skip() {
        return;
    }
    let f = fixture();
    let c = with_secrets_dir(&f);
    let (out, _) = f.run_with(&c, &["sh", "-c", NEW_FILES]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(stdout(&out), "x\ny\n");
    assert_eq!(
        std::fs::read_to_string(f.project.join("d/f")).unwrap(),
        "y\n"
    );
    // git init in the same root works in one call too.
    let (git, _) = f.run_with(&c, &["sh", "-c", "git init -q && git status --short"]);
    assert!(git.status.success(), "{git:?}");
}

#[test]
fn carving_cannot_use_new_files_in_a_root_holding_env() {
    // The limit hiding by mounts lifts: carved, the root keeps only entry rights.
    let f = fixture();
    let c = with_secrets_dir(&f).hide_with_mounts(false);
    let (out, _) = f.run_with(&c, &["sh", "-c", NEW_FILES]);
    assert!(!out.status.success(), "{out:?}");
}

#[test]
fn hidden_paths_reveal_nothing() {
    if skip() {
        return;
    }
    let f = fixture();
    let c = with_secrets_dir(&f);
    let scripts = [
        "cat .env",
        "cat .env.local",
        "ls -a secrets; cat secrets/k",
        "umount .env; cat .env",
        "umount -l .env; cat .env",
        "umount secrets; ls secrets; cat secrets/k",
        "mount --bind README.md .env; cat .env",
        "cat /proc/$PPID/root$PWD/.env",
        "cat /proc/1/root$PWD/.env",
        "nsenter -t $PPID -m cat .env",
        "unshare -m sh -c 'umount .env; cat .env'",
        "ln .env x; cat x",
        "mv .env y; cat y",
        "rm -f .env",
        "cp .env src/copy; cat src/copy",
        "echo changed > .env",
        "rm -rf secrets",
    ];
    for script in scripts {
        let (out, _) = f.run_with(&c, &["sh", "-c", script]);
        assert_no_secret(&out, script);
    }
    let ls = f.run_with(&c, &["ls", "-a", "secrets"]).0;
    assert!(!stdout(&ls).contains('k'), "{ls:?}");
    for file in [".env", "secrets/k"] {
        let out = f.run_with(&c, &["cat", file]).0;
        assert!(!out.status.success(), "{file}: {out:?}");
    }
    // Python sees a file it may not open.
    let py = f
        .run_with(&c, &["python3", "-c", "print(open('.env').read())"])
        .0;
    assert_no_secret(&py, "python3");
    // Nothing the calls did reached the host's files.
    assert!(
        std::fs::read_to_string(f.project.join(".env"))
            .unwrap()
            .contains(SECRET)
    );
    assert!(
        std::fs::read_to_string(f.project.join("secrets/k"))
            .unwrap()
            .contains(SECRET)
    );
    for made in ["x", "y", "src/copy"] {
        assert!(!f.project.join(made).exists(), "{made}");
    }
}

#[test]
fn a_hard_link_made_earlier_is_hidden_too() {
    if skip() {
        return;
    }
    let f = fixture();
    std::fs::hard_link(f.project.join(".env"), f.project.join("alias")).unwrap();
    let out = f.run(&["cat", "alias"]);
    assert!(!out.status.success(), "{out:?}");
    assert_no_secret(&out, "hard link");
}

#[test]
fn a_working_directory_inside_a_hidden_directory_sees_the_cover() {
    if skip() {
        return;
    }
    let f = fixture();
    let c = with_secrets_dir(&f);
    let mut cmd = f.command(&["sh", "-c", "cat k; cat ./k; ls"]);
    cmd.current_dir(f.project.join("secrets"));
    let guard = c.confine(&mut cmd).unwrap();
    // Either the spawn fails or the command sees the empty cover.
    if let Ok(out) = cmd.output() {
        assert_no_secret(&out, "working directory");
    }
    guard.finish().unwrap();
}

#[test]
fn the_host_mount_table_is_untouched() {
    if skip() {
        return;
    }
    let f = fixture();
    let c = with_secrets_dir(&f);
    let before = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    let (out, _) = f.run_with(&c, &["cat", "/proc/self/mountinfo"]);
    assert!(out.status.success(), "{out:?}");
    let after = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    assert_eq!(before, after);
    let project = f.project.to_str().unwrap();
    assert!(!after.contains(project), "{after}");
    // The call saw its own covers.
    let inside = stdout(&out);
    for covered in [".env", ".env.local", "secrets"] {
        assert!(
            inside.contains(&format!("{project}/{covered} ")),
            "{covered}: {inside}"
        );
    }
}

#[test]
fn the_carving_path_still_denies() {
    let f = fixture();
    let c = with_secrets_dir(&f).hide_with_mounts(false);
    for script in [
        "cat .env",
        "cat secrets/k",
        "cat .env.local",
        "ln .env x; cat x",
    ] {
        let (out, _) = f.run_with(&c, &["sh", "-c", script]);
        assert_no_secret(&out, script);
    }
    let ok = f.run_with(&c, &["cat", "README.md"]).0;
    assert_eq!(stdout(&ok), "readme text\n");
}
