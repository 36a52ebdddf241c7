//! Write-protected paths and git in a confined project.
#![cfg(target_os = "linux")]

mod common;

use std::process::Command;

use common::{fixture, stdout};

fn git_init(dir: &std::path::Path, home: &std::path::Path) {
    let st = Command::new("git")
        .args(["init", "-q"])
        .current_dir(dir)
        .env("HOME", home)
        .status()
        .unwrap();
    assert!(st.success());
}

#[test]
fn git_status_and_commit_work_confined() {
    let f = fixture();
    git_init(&f.project, &f.home);
    let status = f.run(&["git", "status", "--porcelain"]);
    assert!(status.status.success(), "{status:?}");
    assert!(stdout(&status).contains("README.md"));
    let commit = f.sh("git add README.md src && git commit -q -m first && git log --oneline");
    assert!(commit.status.success(), "{commit:?}");
    assert!(stdout(&commit).contains("first"), "{commit:?}");
    // The commit is really in the repository.
    let log = Command::new("git")
        .args(["log", "--format=%s %an"])
        .current_dir(&f.project)
        .output()
        .unwrap();
    assert_eq!(stdout(&log), "first Test\n");
}

#[test]
fn protected_paths_are_restored_after_a_carved_call() {
    let f = fixture();
    git_init(&f.project, &f.home);
    std::fs::create_dir_all(f.project.join(".claude")).unwrap();
    std::fs::write(f.project.join(".claude/settings.json"), "{}\n").unwrap();
    let config = std::fs::read(f.project.join(".git/config")).unwrap();
    let hooks: Vec<_> = std::fs::read_dir(f.project.join(".git/hooks"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();

    // Carved (no mount namespace), a repository's configuration cannot be made read-only
    // without stopping git from writing its index, so it is restored after the call.
    let c = f.confinement().hide_with_mounts(false);
    let (out, restored) = f.run_with(
        &c,
        &[
            "sh",
            "-c",
            "echo '[core]\n\tfsmonitor = evil' >> .git/config; \
             printf '#!/bin/sh\\nevil\\n' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit; \
             git config alias.st '!evil'; \
             echo '{\"mcpServers\":{}}' > .mcp.json; \
             echo '{\"hooks\":1}' > .claude/settings.json; \
             echo '{}' > .claude/settings.local.json; \
             cat .git/config",
        ],
    );
    // Inside the call the changes to the repository happened.
    assert!(stdout(&out).contains("evil"), "{out:?}");
    // After it, nothing of them is left.
    assert_eq!(
        std::fs::read(f.project.join(".git/config")).unwrap(),
        config
    );
    assert!(!f.project.join(".git/hooks/pre-commit").exists());
    let mut now: Vec<_> = std::fs::read_dir(f.project.join(".git/hooks"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    let mut before = hooks.clone();
    now.sort();
    before.sort();
    assert_eq!(now, before);
    assert!(!f.project.join(".mcp.json").exists());
    assert!(!f.project.join(".claude/settings.local.json").exists());
    assert_eq!(
        std::fs::read_to_string(f.project.join(".claude/settings.json")).unwrap(),
        "{}\n"
    );
    let names: Vec<String> = restored
        .iter()
        .map(|p| p.strip_prefix(&f.project).unwrap().display().to_string())
        .collect();
    for want in [".git/config", ".git/hooks", ".mcp.json"] {
        assert!(
            names.iter().any(|n| n == want),
            "{want} not reported in {names:?}"
        );
    }

    // A call that leaves them alone reports nothing.
    let (_, quiet) = f.run_with(&c, &["git", "status"]);
    assert!(quiet.is_empty(), "{quiet:?}");
}

#[test]
fn a_symlinked_settings_directory_made_by_the_call_is_removed() {
    let f = fixture();
    let (out, restored) = f.run_with(
        &f.confinement(),
        &["sh", "-c", "mkdir src/evil && echo '{\"hooks\":1}' > src/evil/settings.json && ln -s src/evil .claude && cat .claude/settings.json"],
    );
    assert!(stdout(&out).contains("hooks"), "{out:?}");
    assert!(
        std::fs::symlink_metadata(f.project.join(".claude")).is_err(),
        "the .claude symlink survived"
    );
    assert!(!restored.is_empty());
}

#[test]
fn a_git_file_pointing_elsewhere_is_kept() {
    let f = fixture();
    std::fs::write(
        f.project.join(".git"),
        "gitdir: /somewhere/.git/worktrees/p\n",
    )
    .unwrap();
    // Carved, the file is restored after the call; with a mount namespace it is read-only.
    let mut variants = vec![(false, f.confinement().hide_with_mounts(false))];
    if warden_confine::hides_with_mounts() {
        variants.push((true, f.confinement()));
    }
    for (mounts, c) in variants {
        let (out, restored) = f.run_with(
            &c,
            &[
                "sh",
                "-c",
                "mkdir -p src/evil && printf 'gitdir: src/evil\\n' > .git",
            ],
        );
        assert_eq!(
            std::fs::read_to_string(f.project.join(".git")).unwrap(),
            "gitdir: /somewhere/.git/worktrees/p\n"
        );
        if mounts {
            assert!(!out.status.success(), "{out:?}");
        } else {
            assert!(restored.iter().any(|p| p.ends_with(".git")), "{restored:?}");
        }
    }
}

#[test]
fn a_repository_made_by_the_call_loses_its_config_and_hooks() {
    let f = fixture();
    // Without denied files the project root is granted whole, so `git init` can fill `.git`.
    std::fs::remove_file(f.project.join(".env")).unwrap();
    std::fs::remove_file(f.project.join(".env.local")).unwrap();
    let (out, _) = f.run_with(
        &f.confinement(),
        &["sh", "-c", "git init -q && git config core.fsmonitor evil"],
    );
    assert!(out.status.success(), "{out:?}");
    assert!(f.project.join(".git/HEAD").exists());
    assert!(!f.project.join(".git/config").exists());
    assert!(!f.project.join(".git/hooks").exists());
}
