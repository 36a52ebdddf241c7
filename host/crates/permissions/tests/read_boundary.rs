//! Reads by Bash commands at the edge of what the rules allow: git commands that print
//! content a `Read` rule may deny from history, read-only programs naming a denied file
//! however it is spelled, and paths outside the working directories.
//!
//! | test | proves |
//! |---|---|
//! | `history_printing_git_is_not_auto_allowed_under_a_read_deny` | `git log -p`, `--patch`, `-U1`, `-S`, `git show`, `git diff`, `git grep`, `git cat-file -p`, `git stash show -p`, `git blame --contents` ask under `Read(./.env)`, also with `Bash(git log *)` and friends allowed |
//! | `rules_that_cannot_match_the_repository_do_not_count` | `Read(~/.ssh/**)` does not hold back `git log -p` in a repository outside the home, but does in one enclosing it |
//! | `history_printing_git_runs_without_read_rules_or_limited_by_pathspec` | the same commands run with no `Read` rule, with a rule that cannot match the repository, or limited by a pathspec no rule can match inside; names-only forms run |
//! | `a_pathspec_naming_a_denied_path_is_denied` | `git log -p -- .env`, `git diff -- ./.env` deny, also with `Bash(git log *)` allowed (held before; kept as a guard) |
//! | `an_exact_rule_still_approves_history_printing_git` | `Bash(git log -p)` approves exactly that command |
//! | `any_read_only_program_naming_a_denied_file_is_denied` | `jq . .env`, `grep -e x .env`, `wc`, `sort`, `xxd`, `base64`, `awk`, `sed --expression=p`, `ls`, `diff` on `.env`, `./.env`, `sub/../.env`, its absolute path, quoted, deny with their allow rules |
//! | `braces_and_globs_naming_a_denied_file_are_denied` | `cat .{env,x}`, `cat .e*`, `cat .e[n]v`, `jq . ./.e*` deny; `cat *` (no dotfiles, as bash) runs; `cat ../*` asks |
//! | `patterns_and_filters_are_not_files` | `jq .env x.json`, `grep .env src`, `find . -name .env` still run |
//! | `read_only_paths_outside_the_working_directories_ask` | `Bash(ls *)` allows `ls src`, asks for `ls /etc/hostname`, `cat ../x`, `head $F`; `additionalDirectories` and `Read` allow rules count as inside; an exact rule approves |

mod common;

use std::path::Path;

use serde_json::{Value, json};
use warden_permissions::{Decision, Mode, Permissions};

use Decision::{Allow, Ask, Deny};

const CWD: &str = "/work/proj";

fn engine(permissions: Value) -> Permissions {
    common::engine_with(
        Path::new(CWD),
        Path::new("/home/u"),
        permissions,
        Mode::Default,
    )
}

fn bash(p: &Permissions, cmd: &str) -> Decision {
    p.decide("Bash", &json!({ "command": cmd }), None).decision
}

const HISTORY: &[&str] = &[
    "git log -p",
    "git log --patch",
    "git log -U1",
    "git log --oneline -p",
    "git log -S API_KEY --oneline",
    "git log -L 1,5:src/main.rs",
    "git --no-pager log -p",
    "git whatchanged -p",
    "git show",
    "git show HEAD~3",
    "git show abc1234",
    "git diff",
    "git diff HEAD~1",
    "git diff --cached",
    "git grep API_KEY",
    "git grep API_KEY HEAD~5",
    "git cat-file -p abc1234",
    "git stash show -p",
    "git reflog show -p",
    "git blame --contents notes.txt README.md",
];

#[test]
fn history_printing_git_is_not_auto_allowed_under_a_read_deny() {
    for rule in ["Read(./.env)", "Read(.env)", "Read(./secrets/**)"] {
        let p = engine(json!({"deny": [rule]}));
        for cmd in HISTORY {
            assert_eq!(bash(&p, cmd), Ask, "{cmd} under {rule}");
        }
        // Prefix rules do not approve them either: the history is not in the text.
        let a = engine(json!({
            "deny": [rule],
            "allow": ["Bash(git log *)", "Bash(git show *)", "Bash(git diff *)",
                      "Bash(git grep *)", "Bash(git cat-file *)", "Bash(git stash *)",
                      "Bash(git whatchanged *)", "Bash(git reflog *)", "Bash(git blame *)",
                      "Bash(git *)"]
        }));
        for cmd in HISTORY {
            assert_eq!(bash(&a, cmd), Ask, "{cmd} under {rule} with prefix rules");
        }
    }
    // An ask rule on reads holds them back the same way.
    let q = engine(json!({"ask": ["Read(./.env)"]}));
    assert_eq!(bash(&q, "git log -p"), Ask);
    // dontAsk turns the prompt into a denial.
    let d = common::engine_with(
        Path::new(CWD),
        Path::new("/home/u"),
        json!({"deny": ["Read(./.env)"]}),
        Mode::DontAsk,
    );
    assert_eq!(bash(&d, "git log -p"), Deny);
}

#[test]
fn history_printing_git_runs_without_read_rules_or_limited_by_pathspec() {
    let none = engine(json!({}));
    // (`git --no-pager …` is never read-only: a global option comes first.)
    for cmd in HISTORY.iter().filter(|c| !c.starts_with("git --")) {
        assert_eq!(bash(&none, cmd), Allow, "{cmd} with no Read rule");
    }
    let p = engine(json!({"deny": ["Read(./.env)"]}));
    for cmd in [
        "git log -p -- src",
        "git log -p -- src/main.rs README.md",
        "git diff HEAD~1 -- src/lib.rs",
        "git show HEAD -- src",
        "git grep API_KEY -- src",
        // Names, hashes and messages only.
        "git log --oneline",
        "git log --stat -n 5",
        "git log --format=%H%x09%s --since=2.weeks",
        "git diff --stat",
        "git diff --name-only HEAD~1",
        "git show --stat",
        "git show --name-status HEAD~2",
        "git cat-file -t abc1234",
        "git blame README.md",
        "git status",
        "git stash show",
    ] {
        assert_eq!(bash(&p, cmd), Allow, "{cmd}");
    }
    // A pathspec that contains the denied file, or is a glob, is no limit.
    for cmd in [
        "git log -p -- .",
        "git log -p -- '*.rs'",
        "git log -p -- ':(top)src'",
        "git diff -- ../proj",
    ] {
        assert_eq!(bash(&p, cmd), Ask, "{cmd}");
    }
    // `Read(.env)` matches at any depth, so only a pathspec outside the project (none here)
    // would be a limit.
    let any_depth = engine(json!({"deny": ["Read(.env)"]}));
    assert_eq!(bash(&any_depth, "git log -p -- src"), Ask);
}

#[test]
fn rules_that_cannot_match_the_repository_do_not_count() {
    let t = common::tree();
    std::fs::create_dir_all(t.proj.join(".git")).expect("mkdir .git");
    let home = t.home();
    let p = common::engine_with(
        &t.proj,
        &home,
        json!({"deny": ["Read(~/.ssh/**)", "Read(//etc/shadow)"]}),
        Mode::Default,
    );
    assert_eq!(bash(&p, "git log -p"), Allow);
    // The repository's own files do count.
    let q = common::engine_with(
        &t.proj,
        &home,
        json!({"deny": ["Read(~/.ssh/**)", "Read(./.env)"]}),
        Mode::Default,
    );
    assert_eq!(bash(&q, "git log -p"), Ask);
    // A repository enclosing the home holds `~/.ssh`.
    let r = common::engine_with(
        &home.join("proj"),
        &home,
        json!({"deny": ["Read(~/.ssh/**)"]}),
        Mode::Default,
    );
    std::fs::create_dir_all(home.join("proj")).expect("mkdir");
    std::fs::create_dir_all(home.join(".git")).expect("mkdir .git");
    assert_eq!(bash(&r, "git log -p"), Ask);
}

#[test]
fn a_pathspec_naming_a_denied_path_is_denied() {
    let p = engine(json!({"deny": ["Read(./.env)"], "allow": ["Bash(git log *)"]}));
    for cmd in [
        "git log -p -- .env",
        "git diff -- ./.env",
        "git log -p -- src/../.env",
        "git show HEAD:.env",
    ] {
        assert_eq!(bash(&p, cmd), Deny, "{cmd}");
    }
}

#[test]
fn an_exact_rule_still_approves_history_printing_git() {
    let p = engine(json!({"deny": ["Read(./.env)"], "allow": ["Bash(git log -p)"]}));
    assert_eq!(bash(&p, "git log -p"), Allow);
    assert_eq!(bash(&p, "git log -p -U5"), Ask);
    let all = engine(json!({"deny": ["Read(./.env)"], "allow": ["Bash"]}));
    assert_eq!(
        bash(&all, "git log -p"),
        Allow,
        "a bare Bash allow approves everything"
    );
}

#[test]
fn any_read_only_program_naming_a_denied_file_is_denied() {
    let allow: Vec<String> = [
        "cat",
        "head",
        "tail",
        "jq",
        "grep",
        "rg",
        "sed",
        "awk",
        "sort",
        "wc",
        "xxd",
        "base64",
        "od",
        "nl",
        "cut",
        "diff",
        "comm",
        "md5sum",
        "sha256sum",
        "ls",
        "stat",
        "file",
        "uniq",
        "strings",
        "tac",
        "column",
    ]
    .iter()
    .map(|p| format!("Bash({p} *)"))
    .collect();
    for (deny, spellings) in [
        (
            "Read(./.env)",
            &[
                ".env",
                "./.env",
                "src/../.env",
                "/work/proj/.env",
                "'.env'",
                "\"./.env\"",
            ][..],
        ),
        (
            "Read(//etc/shadow)",
            &["/etc/shadow", "/etc/../etc/shadow", "../../etc/shadow"][..],
        ),
    ] {
        let p = engine(json!({"deny": [deny], "allow": allow}));
        let none = engine(json!({"deny": [deny]}));
        for f in spellings {
            for cmd in [
                format!("jq . {f}"),
                format!("jq -r .KEY {f}"),
                format!("grep -e KEY {f}"),
                format!("grep -ie KEY {f}"),
                format!("grep --regexp=KEY {f}"),
                format!("grep -A 2 KEY {f}"),
                format!("grep -f {f} README.md"),
                format!("rg -e KEY {f}"),
                format!("sed -n p {f}"),
                format!("sed --expression=p {f}"),
                format!("awk '{{print}}' {f}"),
                format!("awk -F = '{{print $2}}' {f}"),
                format!("sort {f}"),
                format!("sort -k 2 {f}"),
                format!("wc -c {f}"),
                format!("xxd {f}"),
                format!("base64 -w0 {f}"),
                format!("od -c {f}"),
                format!("nl {f}"),
                format!("cut -d = -f 2 {f}"),
                format!("diff {f} README.md"),
                format!("comm {f} README.md"),
                format!("md5sum {f}"),
                format!("uniq {f}"),
                format!("strings {f}"),
                format!("tac {f}"),
                format!("column -t -s = {f}"),
                format!("ls -la {f}"),
                format!("stat {f}"),
                format!("head -n 3 -- {f}"),
                format!("cat README.md | grep KEY {f}"),
                format!("jq -n --rawfile k {f} '$k'"),
                format!("sort --random-source={f} README.md"),
            ] {
                assert_eq!(bash(&p, &cmd), Deny, "{cmd} with its allow rule");
                assert_eq!(bash(&none, &cmd), Deny, "{cmd} with no allow rule");
            }
        }
    }
    // An ask rule on the file asks.
    let q = engine(json!({"ask": ["Read(./.env)"], "allow": allow}));
    assert_eq!(bash(&q, "jq . .env"), Ask);
}

/// Braces and globs are expanded as bash expands them before the program sees its words.
#[test]
fn braces_and_globs_naming_a_denied_file_are_denied() {
    let t = common::tree();
    std::fs::write(t.proj.join(".env"), "KEY=1\n").expect("write");
    std::fs::write(t.proj.join("README.md"), "x\n").expect("write");
    std::fs::create_dir_all(t.proj.join("src")).expect("mkdir");
    std::fs::write(t.proj.join("src/a.rs"), "\n").expect("write");
    let p = common::engine_with(
        &t.proj,
        &t.home(),
        json!({"deny": ["Read(./.env)"], "allow": ["Bash(cat *)", "Bash(jq *)"]}),
        Mode::Default,
    );
    for cmd in [
        "cat .{env,x}",
        "cat .e{n,}v",
        "cat .{e..e}nv",
        "cat .e*",
        "cat .en?",
        "cat .e[n]v",
        "jq . ./.e*",
        "cat src/../.e*",
        "cat ../proj/.e*",
    ] {
        assert_eq!(bash(&p, cmd), Deny, "{cmd}");
    }
    // A glob bash would not let match a dotfile, and globs and braces naming allowed files,
    // still run.
    for cmd in [
        "cat *",
        "cat *.md src/*",
        "cat {README.md,src/a.rs}",
        "cat '.e*'",
    ] {
        assert_eq!(bash(&p, cmd), Allow, "{cmd}");
    }
    // Outside the project through a glob or braces: asked.
    assert_eq!(bash(&p, "cat ../*"), Ask);
    assert_eq!(bash(&p, "cat {README.md,/etc/hostname}"), Ask);
}

#[test]
fn patterns_and_filters_are_not_files() {
    let p = engine(json!({"deny": ["Read(./.env)"]}));
    for cmd in [
        "jq .env package.json",
        "jq -r '.env' package.json",
        "grep -r .env src",
        "grep .env README.md",
        "rg .env src",
        "find . -name .env",
        "echo .env",
        "basename .env",
        "cat README.md",
        "jq . package.json",
    ] {
        assert_eq!(bash(&p, cmd), Allow, "{cmd}");
    }
}

#[test]
fn read_only_paths_outside_the_working_directories_ask() {
    // A repository names no directory outside itself; the user's own settings may.
    let user = warden_config::SettingsFile {
        scope: warden_config::Scope::User,
        origin: Default::default(),
        path: Some("/home/u/.warden/settings.json".into()),
        value: json!({"permissions": {"additionalDirectories": ["/srv/shared"]}})
            .as_object()
            .cloned()
            .unwrap_or_default(),
    };
    let project = warden_config::SettingsFile {
        scope: warden_config::Scope::Project,
        origin: Default::default(),
        path: Some(Path::new(CWD).join(".claude/settings.json")),
        value: json!({"permissions": {
            "allow": ["Bash(ls *)", "Bash(cat *)", "Bash(head *)", "Bash(grep *)", "Bash(cd *)",
                      "Bash(jq *)", "Bash(wc *)", "Read(//opt/docs/**)"],
        }})
        .as_object()
        .cloned()
        .unwrap_or_default(),
    };
    let p = Permissions::from_settings(
        &warden_config::Settings {
            files: vec![project, user],
            ..Default::default()
        },
        &warden_permissions::Options {
            cwd: CWD.into(),
            home: "/home/u".into(),
            trusted: true,
            ..Default::default()
        },
    )
    .expect("builds");
    for cmd in [
        "ls src",
        "ls",
        "ls -la /work/proj/src",
        "ls /srv/shared/x",
        "cat /opt/docs/a.md",
        "grep -r foo src",
        "jq . package.json",
        "wc -l src/main.rs",
    ] {
        assert_eq!(bash(&p, cmd), Allow, "{cmd}");
    }
    for cmd in [
        "ls /etc/hostname",
        "ls -la /etc",
        "cat ../other/x",
        "cat ~/.bashrc",
        "head -n 1 /etc/passwd",
        "grep -r foo /etc",
        "jq . /tmp/x.json",
        "wc -l /opt/other",
        "cd /etc",
        "cat $F",
        "ls src /etc",
        "cat README.md && ls /etc",
    ] {
        assert_eq!(bash(&p, cmd), Ask, "{cmd}");
    }
    // A rule naming the whole command is the user's word for it.
    let exact = engine(json!({"allow": ["Bash(ls /etc/hostname)"]}));
    assert_eq!(bash(&exact, "ls /etc/hostname"), Allow);
}
