//! Command-word normalisation for Bash rules (spec 2.3) and `check_exec`.

/// Programs that run another program but are never stripped; a prefix allow rule never
/// approves them (spec 2.3).
pub const EXEC_WRAPPERS: &[&str] = &["watch", "setsid", "ionice", "flock"];

/// Leading assignments that do not change what a command can do; any other assignment
/// prevents an allow rule from matching (spec 2.3).
pub const SAFE_ENV_VARS: &[&str] = &[
    "BLOCKSIZE",
    "BLOCK_SIZE",
    "CGO_ENABLED",
    "CHARSET",
    "CI",
    "COLORTERM",
    "DEBUG",
    "FORCE_COLOR",
    "GCC_COLORS",
    "GO111MODULE",
    "GOARCH",
    "GOEXPERIMENT",
    "GOOS",
    "GREP_COLOR",
    "GREP_COLORS",
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_COLLATE",
    "LC_CTYPE",
    "LC_MESSAGES",
    "LC_NUMERIC",
    "LC_TIME",
    "LSCOLORS",
    "LS_COLORS",
    "NODE_ENV",
    "NO_COLOR",
    "PYTEST_DISABLE_PLUGIN_AUTOLOAD",
    "PYTHONDONTWRITEBYTECODE",
    "PYTHONUNBUFFERED",
    "RUST_BACKTRACE",
    "RUST_LOG",
    "TERM",
    "TIME_STYLE",
    "TZ",
];

/// Strips the fixed wrapper list (`timeout time nice nohup stdbuf command builtin noglob`,
/// bare `xargs`; spec 2.3) from the front of `words` and returns what remains.
pub fn strip_wrappers(words: &[String]) -> &[String] {
    let mut w = words;
    loop {
        let Some(first) = w.first() else { return w };
        let next = match first.as_str() {
            "timeout" => skip_opts(w, 1, &["-s", "-k", "--signal", "--kill-after"]).map(|i| i + 1),
            "time" => skip_opts(w, 1, &[]),
            "nice" => skip_opts(w, 1, &["-n", "--adjustment"]),
            "stdbuf" => skip_opts(w, 1, &["-i", "-o", "-e", "--input", "--output", "--error"]),
            "nohup" | "builtin" | "noglob" => Some(1),
            // `command -v x` and `xargs -n1 x` are not wrappers.
            "command" | "xargs" => (!w.get(1).is_some_and(|a| a.starts_with('-'))).then_some(1),
            _ => None,
        };
        match next {
            Some(n) if n < w.len() => w = &w[n..],
            _ => return w,
        }
    }
}

/// Index of the first non-option word after `start`; options in `with_arg` take a value when
/// written separately.
fn skip_opts(w: &[String], start: usize, with_arg: &[&str]) -> Option<usize> {
    let mut i = start;
    while let Some(a) = w.get(i) {
        if a == "--" {
            return Some(i + 1);
        }
        if !a.starts_with('-') || a == "-" {
            return Some(i);
        }
        i += if with_arg.contains(&a.as_str()) { 2 } else { 1 };
    }
    Some(i)
}

/// `env [-i] [-u NAME] [NAME=value]... program ...` → the program's words.
pub fn strip_env(words: &[String]) -> Option<&[String]> {
    if words.first().map(String::as_str) != Some("env") {
        return None;
    }
    let mut i = 1;
    while let Some(a) = words.get(i) {
        if a == "-u" || a == "--unset" || a == "-C" || a == "--chdir" {
            i += 2;
        } else if a == "-S" || a.starts_with("--split-string") || a.starts_with("-S") {
            // The string is re-split into words by env itself; too ambiguous to look through.
            return None;
        } else if a.starts_with('-') || is_assignment(a) {
            i += 1;
        } else {
            break;
        }
    }
    (i < words.len()).then(|| &words[i..])
}

/// `NAME=value`.
pub fn is_assignment(w: &str) -> bool {
    match w.split_once('=') {
        Some((n, _)) => {
            !n.is_empty()
                && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !n.starts_with(|c: char| c.is_ascii_digit())
        }
        None => false,
    }
}

/// Git's global options that may precede the subcommand.
///
/// Warden is stricter than Claude Code here: Claude Code documents that `Bash(git push *)`
/// does not match `git -C . push` or `git -c push.default=current push`. Warden removes these
/// options before matching deny and ask rules (and in `check_exec`), so a global option cannot
/// be used to step around a rule about a git subcommand.
pub fn strip_git_globals(words: &[String]) -> Option<Vec<String>> {
    if words.first().map(String::as_str) != Some("git") {
        return None;
    }
    let mut i = 1;
    let mut changed = false;
    while let Some(a) = words.get(i) {
        let takes_value = matches!(
            a.as_str(),
            "-C" | "-c"
                | "--git-dir"
                | "--work-tree"
                | "--namespace"
                | "--config-env"
                | "--super-prefix"
                | "--exec-path-value"
        );
        let flag = matches!(
            a.as_str(),
            "--no-pager"
                | "-p"
                | "--paginate"
                | "-P"
                | "--bare"
                | "--no-replace-objects"
                | "--literal-pathspecs"
                | "--glob-pathspecs"
                | "--noglob-pathspecs"
                | "--icase-pathspecs"
                | "--no-optional-locks"
                | "--no-lazy-fetch"
                | "--no-advice"
                | "--exec-path"
        ) || [
            "--git-dir=",
            "--work-tree=",
            "--namespace=",
            "--config-env=",
            "--exec-path=",
            "--super-prefix=",
            "--list-cmds=",
        ]
        .iter()
        .any(|p| a.starts_with(p))
            || (a.starts_with("-C") && a.len() > 2)
            || (a.starts_with("-c") && a.len() > 2);
        if takes_value {
            i += 2;
        } else if flag {
            i += 1;
        } else {
            break;
        }
        changed = true;
    }
    if !changed {
        return None;
    }
    let mut out = vec!["git".to_string()];
    out.extend(words.iter().skip(i).cloned());
    Some(out)
}

/// The directory a `git -C dir` would run in, if given.
pub fn git_dir_option(words: &[String]) -> Option<&str> {
    let pos = words.iter().position(|w| w == "-C")?;
    words.get(pos + 1).map(String::as_str)
}

/// Whether the command runs another command in a way no prefix rule may approve.
pub fn is_exec_wrapper(words: &[String]) -> bool {
    let Some(p) = words.first() else { return false };
    let p = basename(p);
    EXEC_WRAPPERS.contains(&p)
        || (p == "find"
            && words.iter().any(|w| {
                matches!(
                    w.as_str(),
                    "-exec" | "-execdir" | "-ok" | "-okdir" | "-delete"
                )
            }))
}

/// Programs that run the command given in their arguments; deny/ask rules are also tried on
/// each possible inner command so `watch rm x` still hits `Bash(rm *)`.
pub fn runs_inner_command(words: &[String]) -> bool {
    let Some(p) = words.first() else { return false };
    let p = basename(p);
    EXEC_WRAPPERS.contains(&p)
        || matches!(
            p,
            "find"
                | "xargs"
                | "sudo"
                | "doas"
                | "nice"
                | "timeout"
                | "env"
                | "chroot"
                | "unshare"
                | "nsenter"
                | "strace"
                | "ltrace"
                | "exec"
                | "eval"
        )
}

/// `/usr/bin/git` → `git`.
pub fn basename(p: &str) -> &str {
    p.rsplit('/').next().unwrap_or(p)
}

/// Read-only commands that run without prompting (spec 2.3), beyond `git`.
pub const READ_ONLY: &[&str] = &[
    "ls",
    "cat",
    "echo",
    "pwd",
    "head",
    "tail",
    "grep",
    "egrep",
    "fgrep",
    "rg",
    "find",
    "wc",
    "which",
    "diff",
    "stat",
    "du",
    "df",
    "cd",
    "printf",
    "true",
    "false",
    "sort",
    "cut",
    "tr",
    "basename",
    "dirname",
    "realpath",
    "readlink",
    "file",
    "tree",
    "date",
    "whoami",
    "uname",
    "id",
    "hostname",
    "type",
    "test",
    "[",
    "nl",
    "od",
    "md5sum",
    "sha1sum",
    "sha256sum",
    "sha512sum",
    "cksum",
    "comm",
    "column",
    "jq",
];

/// Read-only commands whose arguments are not file names.
pub const NON_PATH_ARGS: &[&str] = &[
    "echo", "printf", "true", "false", "pwd", "date", "whoami", "uname", "id", "hostname", "which",
    "type", "test", "[",
];

/// Whether this command (wrappers already stripped) only reads.
pub fn read_only_flags_ok(words: &[String]) -> bool {
    let Some(p) = words.first() else { return false };
    let args = &words[1..];
    let has = |fs: &[&str]| {
        args.iter().any(|a| {
            fs.iter()
                .any(|f| a == f || (f.starts_with("--") && a.starts_with(&format!("{f}="))))
        })
    };
    match p.as_str() {
        "find" => !has(&[
            "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf",
            "-fls",
        ]),
        "sort" => !has(&["-o", "--output"]) && !args.iter().any(|a| a.starts_with("-o")),
        "tree" => !has(&["-o"]),
        "file" => {
            !has(&["-m", "-f", "--magic-file", "--files-from"])
                && !args.iter().any(|a| {
                    a.starts_with('-')
                        && !a.starts_with("--")
                        && (a.contains('m') || a.contains('f'))
                })
        }
        "rg" => !has(&["--pre", "--pre-glob"]),
        "date" => !has(&["-s", "--set"]),
        "hostname" => args.iter().all(|a| a.starts_with('-')),
        "git" => git_read_only(args),
        _ => READ_ONLY.contains(&p.as_str()),
    }
}

fn git_read_only(args: &[String]) -> bool {
    let Some(sub) = args.first() else {
        return false;
    };
    let rest = &args[1..];
    let only = |allowed: &[&str]| rest.iter().all(|a| allowed.contains(&a.as_str()));
    match sub.as_str() {
        "status" | "log" | "show" | "blame" | "ls-files" | "ls-tree" | "rev-parse" | "describe"
        | "shortlog" | "grep" | "cat-file" | "show-ref" | "merge-base" | "name-rev"
        | "rev-list" | "whatchanged" | "count-objects" => {
            !rest.iter().any(|a| a.starts_with("--output") || a == "-o")
        }
        "diff" => !rest
            .iter()
            .any(|a| a.starts_with("--output") || a == "--ext-diff"),
        "branch" => only(&[
            "-a",
            "-r",
            "-l",
            "--list",
            "-v",
            "-vv",
            "--all",
            "--remotes",
            "--show-current",
            "--merged",
            "--no-merged",
        ]),
        "tag" => rest.is_empty() || only(&["-l", "--list"]),
        "remote" => rest.is_empty() || only(&["-v", "--verbose"]),
        "stash" => rest.first().is_some_and(|a| a == "list" || a == "show"),
        "config" => rest.first().is_some_and(|a| {
            matches!(
                a.as_str(),
                "--get" | "--list" | "-l" | "--get-all" | "--get-regexp"
            )
        }),
        "reflog" => rest.is_empty() || rest.first().is_some_and(|a| a == "show"),
        _ => false,
    }
}

/// Filesystem commands `acceptEdits` approves inside the working directories.
pub const ACCEPT_EDITS_COMMANDS: &[&str] = &["mkdir", "touch", "mv", "cp", "rm", "rmdir", "sed"];

/// Recognised Bash file readers whose file arguments are checked against `Read` rules (2.4).
pub const FILE_READERS: &[&str] = &["cat", "head", "tail", "sed"];

/// Interpreters whose `-c`/`-e` argument is shell code.
pub const SHELLS: &[&str] = &["bash", "sh", "zsh", "dash", "ksh"];

/// Interpreters whose `-c`/`-e` argument is code Warden cannot analyse.
pub fn is_code_interpreter(p: &str) -> Option<&'static str> {
    if p == "python" || p.starts_with("python3") || p.starts_with("python2") {
        return Some("-c");
    }
    match p {
        "node" | "nodejs" | "deno" | "bun" => Some("-e"),
        "perl" | "ruby" => Some("-e"),
        "php" => Some("-r"),
        _ => None,
    }
}

/// For `bash -c CODE` (also `-lc`, `-ec`, …): the code.
pub fn shell_code(words: &[String]) -> Option<&str> {
    let p = basename(words.first()?);
    if !SHELLS.contains(&p) {
        return None;
    }
    let mut i = 1;
    while let Some(a) = words.get(i) {
        if a.starts_with('-') && !a.starts_with("--") && a.contains('c') {
            return words.get(i + 1).map(String::as_str);
        }
        if a.starts_with('-') || a.starts_with('+') {
            i += if a == "-o" || a == "+o" { 2 } else { 1 };
            continue;
        }
        return None;
    }
    None
}

/// For `python -c CODE` style invocations: whether code is passed inline.
pub fn has_inline_code(words: &[String]) -> bool {
    let Some(p) = words.first() else { return false };
    let Some(flag) = is_code_interpreter(basename(p)) else {
        return false;
    };
    words[1..].iter().any(|a| {
        a == flag
            || (a.starts_with(flag) && a.len() > 2 && !a.starts_with("--"))
            || a == "--eval"
            || a == "--print"
            || a == "-p"
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Vec<String> {
        s.split(' ').map(str::to_string).collect()
    }

    #[test]
    fn wrappers_are_stripped() {
        for (input, want) in [
            ("timeout 5 rm -rf x", "rm -rf x"),
            ("timeout -s KILL 5 rm x", "rm x"),
            ("time rm x", "rm x"),
            ("nice -n 10 rm x", "rm x"),
            ("nohup rm x", "rm x"),
            ("stdbuf -oL rm x", "rm x"),
            ("command rm x", "rm x"),
            ("builtin cd x", "cd x"),
            ("noglob rm x", "rm x"),
            ("xargs rm", "rm"),
            ("nohup nice timeout 1 rm x", "rm x"),
        ] {
            assert_eq!(strip_wrappers(&v(input)).join(" "), want, "{input}");
        }
    }

    #[test]
    fn non_wrapper_forms_are_kept() {
        for input in [
            "command -v rm",
            "xargs -n1 rm",
            "nocorrect rm x",
            "watch rm x",
            "direnv exec . rm",
        ] {
            assert_eq!(strip_wrappers(&v(input)).join(" "), input);
        }
    }

    #[test]
    fn git_globals_are_removed() {
        for input in [
            "git -C . push origin",
            "git -c push.default=current push origin",
            "git --git-dir=.git --work-tree=. push origin",
            "git --no-pager -C x push origin",
        ] {
            assert_eq!(
                strip_git_globals(&v(input)).expect("changed").join(" "),
                "git push origin",
                "{input}"
            );
        }
        assert!(strip_git_globals(&v("git push")).is_none());
    }

    #[test]
    fn env_is_looked_through() {
        assert_eq!(
            strip_env(&v("env -i A=1 B=2 rm x")).map(|w| w.join(" ")),
            Some("rm x".into())
        );
        assert!(strip_env(&v("env")).is_none());
    }

    #[test]
    fn exec_wrappers_and_find_exec() {
        assert!(is_exec_wrapper(&v("watch ls")));
        assert!(is_exec_wrapper(&v("find . -delete")));
        assert!(is_exec_wrapper(&v("find . -exec rm {} ;")));
        assert!(!is_exec_wrapper(&v("find . -name x")));
    }

    #[test]
    fn read_only_git() {
        assert!(read_only_flags_ok(&v("git status")));
        assert!(read_only_flags_ok(&v("git log --oneline")));
        assert!(!read_only_flags_ok(&v("git push")));
        assert!(!read_only_flags_ok(&v("git branch -D main")));
        assert!(!read_only_flags_ok(&v("find . -delete")));
        assert!(!read_only_flags_ok(&v("file -m magic x")));
        assert!(!read_only_flags_ok(&v("sort -o out in")));
    }

    #[test]
    fn interpreters() {
        assert_eq!(shell_code(&v("bash -c ls")), Some("ls"));
        assert_eq!(shell_code(&v("/bin/sh -ec ls")), Some("ls"));
        assert_eq!(shell_code(&v("bash script.sh")), None);
        assert!(has_inline_code(&v("python3 -c print(1)")));
        assert!(has_inline_code(&v("node -e 1")));
        assert!(!has_inline_code(&v("python3 script.py")));
    }
}
