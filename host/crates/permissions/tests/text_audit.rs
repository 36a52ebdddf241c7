//! Commands that look read-only (or like plain edits) but run programs, read denied files
//! without naming them, or write protected files, judged by the text-level engine
//! (`Permissions::decide("Bash", …)`).
//!
//! | test | proves |
//! |---|---|
//! | `git_options_that_run_programs_are_not_read_only` | `git grep -O`/`--open-files-in-pager` (also abbreviated), `-c alias.*`/`core.pager`/`core.fsmonitor`/`diff.external`, `-p`, `--ext-diff`, `--textconv`, `--upload-pack`, `--exec` are never auto-allowed |
//! | `git_alias_is_judged_as_what_it_expands_to` | `git -c alias.p=push p origin` hits `Bash(git push *)` |
//! | `xargs_runs_its_program_with_piped_words` | `echo push origin main \| xargs git` hits `Bash(git push *)`; `xargs git` is never auto-allowed |
//! | `env_split_string_is_code` | `env -S 'git push …'` hits `Bash(git push *)` and is never auto-allowed |
//! | `find_actions_that_run_or_write_are_not_read_only` | `find -exec/-execdir/-ok/-okdir/-delete/-fprint*/-fls` ask (held before these fixes; kept as a guard) |
//! | `shell_code_on_stdin_is_judged_as_code` | `echo 'git push …' \| sh` (and `bash`) hits the deny rule; `\| python3` asks |
//! | `dash_dash_is_not_the_shell_code` | `bash -c -- 'git push …'` is judged on the code, not on `--`, as a Bash command and through `check_exec` |
//! | `sed_and_awk_that_run_or_write_are_not_auto_allowed` | `sed` `e`/`w`/`r`/`s///e`/`s///w` and `awk` `system(`/`getline`/redirection ask, even in `acceptEdits` |
//! | `sort_output_and_helpers_are_not_read_only` | `sort -o`, `-uo`, `--outp=`, `--compress-program=`, `tree -o`/`-R`, `date -us`/`--se=` ask; `date -Iseconds` still runs |
//! | `pagers_and_man_ask` | `less`, `more`, `man`, `git -p` ask (held before these fixes; kept as a guard) |
//! | `git_reads_of_denied_paths_are_denied` | `git show HEAD:.env`, `git cat-file -p HEAD:.env`, `git log -p -- .env` deny under `Read(./.env)`; `git grep --no-index` asks |
//! | `rm_flag_spellings_hit_rm_rf_rule` | `rm -r -f`, `-fr`, `--recursive --force`, `-Rf`, `-rfv` hit `Bash(rm -rf *)`, also behind `sudo`, `find -exec`, `bash -c`; `rm -r`/`rm -f` alone do not |
//! | `in_place_writers_of_protected_paths_are_not_auto_allowed` | `sed -i`, `perl -i`, `cp --target-directory=`, `cp -tDIR`, `install`, `tee` on `.git/config`, `.git/hooks`, `.claude/settings*.json`, `.mcp.json` ask in `acceptEdits` |
//! | `writers_of_denied_paths_are_denied` | `tee .env` and `cp --target-directory=secrets x` hit `Read` deny rules |
//! | `spaced_double_parentheses_are_subshells` | `( ( rm -rf x ) )` (two subshells to bash, arithmetic to the parser alone) is never auto-allowed |
//! | `ordinary_commands_keep_running` | the fixes do not stop plain reads and edits from being auto-allowed (git commands printing content, limited by a pathspec the deny rules cannot match inside) |

use std::path::PathBuf;

use serde_json::json;
use warden_config::{Scope, Settings, SettingsFile};
use warden_permissions::{Decision, Mode, Options, Permissions};

use Decision::{Allow, Ask, Deny};

const DENY: &[&str] = &[
    "Read(./.env)",
    "Read(./secrets/**)",
    "Bash(git push *)",
    "Bash(rm -rf *)",
];

fn engine(allow: &[&str], mode: Mode) -> Permissions {
    let v = json!({"permissions": {"allow": allow, "deny": DENY}});
    let f = SettingsFile {
        scope: Scope::Project,
        origin: Default::default(),
        path: Some(PathBuf::from("/work/proj/.claude/settings.json")),
        value: v.as_object().cloned().unwrap_or_default(),
    };
    let o = Options {
        cwd: "/work/proj".into(),
        home: "/home/u".into(),
        mode: Some(mode),
        trusted: true,
        ..Options::default()
    };
    let settings = Settings {
        files: vec![f],
        errors: Vec::new(),
        ..Default::default()
    };
    match Permissions::from_settings(&settings, &o) {
        Ok(p) => p,
        Err(e) => panic!("engine: {e}"),
    }
}

fn bash(p: &Permissions, cmd: &str) -> Decision {
    p.decide("Bash", &json!({ "command": cmd }), None).decision
}

/// Neither auto-allowed in the default mode nor in `acceptEdits`.
fn never_auto(cmds: &[&str]) {
    for mode in [Mode::Default, Mode::AcceptEdits] {
        let p = engine(&[], mode);
        for cmd in cmds {
            assert_ne!(bash(&p, cmd), Allow, "{cmd} in {mode:?}");
        }
    }
}

fn denied(cmds: &[&str]) {
    for mode in [Mode::Default, Mode::AcceptEdits] {
        let p = engine(&[], mode);
        for cmd in cmds {
            assert_eq!(bash(&p, cmd), Deny, "{cmd} in {mode:?}");
        }
    }
}

#[test]
fn git_options_that_run_programs_are_not_read_only() {
    never_auto(&[
        "git grep -O'sh -c id' x",
        "git grep -Ovim x",
        "git grep -iOvim x",
        "git grep --open-files-in-pager=vim x",
        "git grep --open-files-in-pager x",
        "git grep --open-f=vim x",
        "git -c alias.l=!id l",
        "git -c core.pager=id log",
        "git -c core.fsmonitor=id status",
        "git -c diff.external=id diff",
        "git -p log",
        "git --paginate log",
        "git log -p --ext-diff",
        "git show --ext-diff HEAD",
        "git show --textconv HEAD",
        "git cat-file --textconv HEAD:x",
        "git log --upload-pack=id",
        "git log --exec=id",
        "git log --outp=x",
    ]);
}

#[test]
fn git_alias_is_judged_as_what_it_expands_to() {
    denied(&[
        "git -c alias.p=push p origin main",
        "git -c alias.p='push --force' p origin main",
        "git -calias.p=push p origin main",
    ]);
    never_auto(&["git -c alias.s=status s"]);
}

#[test]
fn xargs_runs_its_program_with_piped_words() {
    denied(&[
        "echo push origin main | xargs git",
        "printf 'push origin main' | xargs git",
    ]);
    never_auto(&["xargs git", "cat list | xargs git", "xargs cat"]);
}

#[test]
fn env_split_string_is_code() {
    denied(&[
        "env -S 'git push origin main'",
        "env -S'git push origin main'",
        "env --split-string='git push origin main'",
    ]);
    never_auto(&["env -S 'ls'"]);
}

#[test]
fn find_actions_that_run_or_write_are_not_read_only() {
    never_auto(&[
        "find . -exec id ;",
        "find . -execdir id ;",
        "find . -ok id ;",
        "find . -okdir id ;",
        "find . -delete",
        "find . -fprint out",
        "find . -fprint0 out",
        "find . -fprintf out %p",
        "find . -fls out",
    ]);
}

#[test]
fn shell_code_on_stdin_is_judged_as_code() {
    denied(&[
        "echo 'git push origin main' | sh",
        "echo 'git push origin main' | bash",
        "printf 'git push origin main' | bash -s",
        "echo 'rm -rf x' | /bin/sh",
    ]);
    never_auto(&[
        "echo 'ls' | sh",
        "echo 'import os' | python3",
        "echo ls | bash -s",
    ]);
}

#[test]
fn dash_dash_is_not_the_shell_code() {
    denied(&[
        "bash -c -- 'git push origin main'",
        "bash -c 'git push origin main'",
        "sh -ec -- 'rm -rf x'",
    ]);
    never_auto(&["bash -c -- 'ls'"]);
    // A guest running a program with an argv is judged the same way.
    let p = engine(&[], Mode::Default);
    let argv: Vec<String> = ["bash", "-c", "--", "git push origin main"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(
        p.check_exec(&argv, std::path::Path::new("/work/proj"))
            .decision,
        Deny
    );
}

#[test]
fn sed_and_awk_that_run_or_write_are_not_auto_allowed() {
    never_auto(&[
        "sed 'e id' x",
        "sed '1e id' x",
        "sed 's/x/id/e' x",
        "sed 's/x/y/w out' x",
        "sed 'w out' x",
        "sed -n 'r /etc/passwd' x",
        "sed '1R /etc/passwd' x",
        "sed -f script.sed x",
        "sed --expression='e id' x",
        "sed 's/[/]/p;/e' x",
        "sed -e s/x/y/ -e 'w .git/config' x",
        "sed '/x/{e id\n}' x",
        "sed 'y/a/b/;e id' x",
        "awk 'BEGIN{system(\"id\")}'",
        "awk '{getline l < \"/etc/shadow\"}' x",
        "awk '{print > \"out\"}' x",
        "awk '{print | \"sh\"}' x",
    ]);
}

#[test]
fn sort_output_and_helpers_are_not_read_only() {
    never_auto(&[
        "sort -o out in",
        "sort -uo out in",
        "sort --outp=out in",
        "sort --output=out in",
        "sort --compress-program=sh in",
        "tree -ao out",
        "tree -R -H . x",
        "date -s 2020-01-01",
        "date -us 2020-01-01",
        "date --se=2020-01-01",
    ]);
    let p = engine(&[], Mode::Default);
    assert_eq!(bash(&p, "date -Iseconds"), Allow);
    assert_eq!(bash(&p, "date -u"), Allow);
}

#[test]
fn pagers_and_man_ask() {
    never_auto(&[
        "less x",
        "more x",
        "man ls",
        "git -p status",
        "git --paginate show",
    ]);
}

#[test]
fn git_reads_of_denied_paths_are_denied() {
    denied(&[
        "git show HEAD:.env",
        "git show HEAD:./.env",
        "git show :.env",
        "git cat-file -p HEAD:.env",
        "git cat-file blob HEAD:secrets/key",
        "git log -p -- .env",
        "git diff HEAD~1 -- secrets/key",
        "git blame .env",
    ]);
    never_auto(&["git grep --no-index foo", "git grep --no-index foo /etc"]);
}

#[test]
fn rm_flag_spellings_hit_rm_rf_rule() {
    denied(&[
        "rm -rf x",
        "rm -r -f x",
        "rm -f -r x",
        "rm -fr x",
        "rm --recursive --force x",
        "rm --force --recursive x",
        "rm -Rf x",
        "rm -rfv x",
        "rm -r --force x",
        "rm -r -f -- x",
        "sudo rm -r -f x",
        "find . -exec rm -r -f {} +",
        "bash -c 'rm -fr x'",
    ]);
    let p = engine(&[], Mode::Default);
    assert_eq!(bash(&p, "rm -r x"), Ask, "a recursive rm without force");
    assert_eq!(bash(&p, "rm -f x"), Ask, "a forced rm without recursion");
}

#[test]
fn in_place_writers_of_protected_paths_are_not_auto_allowed() {
    let p = engine(&[], Mode::AcceptEdits);
    for cmd in [
        "sed -i s/x/y/ .claude/settings.json",
        "sed -i s/x/y/ .claude/settings.local.json",
        "sed -i s/x/y/ .git/config",
        "sed -i s/x/y/ .git/hooks/pre-commit",
        "sed -i s/x/y/ .mcp.json",
        "sed -i.bak s/x/y/ .git/config",
        "sed -ni s/x/y/p .git/config",
        "sed --in-place s/x/y/ .git/config",
        "sed -e s/x/y/ -i .git/config",
        "cp --target-directory=.git/hooks x",
        "cp -t.git/hooks x",
        "mv --target-directory=.git/hooks x",
        "perl -i -pe s/x/y/ .git/config",
        "install x .git/hooks/pre-commit",
        "tee .git/config",
        "tee -a .claude/settings.json",
    ] {
        assert_ne!(bash(&p, cmd), Allow, "{cmd}");
    }
}

#[test]
fn writers_of_denied_paths_are_denied() {
    denied(&[
        "tee .env",
        "echo x | tee -a .env",
        "sed -i s/x/y/ .env",
        "perl -i -pe s/x/y/ .env",
        "install x .env",
        "cp --target-directory=secrets/d x",
    ]);
}

#[test]
fn ordinary_commands_keep_running() {
    let p = engine(&[], Mode::Default);
    for cmd in [
        "git log --oneline",
        "git show HEAD:README.md",
        "git grep foo -- src",
        "git diff HEAD~1 -- src",
        "git diff --stat HEAD~1",
        "find . -name x",
        "sort -u in",
        "sort -k 2 in",
        "echo hi",
    ] {
        assert_eq!(bash(&p, cmd), Allow, "{cmd}");
    }
    let e = engine(&[], Mode::AcceptEdits);
    for cmd in [
        "sed -i s/x/y/ src/main.rs",
        "sed -i -e s/x/y/g -e 5d src/main.rs",
        "sed -n 1,5p src/main.rs",
        "cp -t dst x",
        "cp --target-directory=dst x",
        "rm -r build",
    ] {
        assert_eq!(bash(&e, cmd), Allow, "{cmd}");
    }
    // Allow rules still approve what they name.
    let a = engine(&["Bash(xargs git log *)", "Bash(git log *)"], Mode::Default);
    assert_eq!(bash(&a, "xargs git log --oneline"), Allow);
}

#[test]
fn spaced_double_parentheses_are_subshells() {
    never_auto(&[
        "( ( rm -rf x ) )",
        "( ( ( git push origin main ) ) )",
        "( (cat .env) )",
    ]);
}
