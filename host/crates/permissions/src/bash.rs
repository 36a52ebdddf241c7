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
        // `-uo FILE` writes as `-o FILE` does, and GNU takes any unambiguous prefix of a
        // long option (`--outp=FILE`); `--compress-program` runs a program.
        "sort" => !args.iter().any(|a| {
            short_cluster_has(a, 'o') || long_prefix_of(a, &["output", "compress-program"])
        }),
        // `-R` with `-H` writes an HTML index into every directory.
        "tree" => !args.iter().any(|a| {
            short_cluster_has(a, 'o') || short_cluster_has(a, 'R') || a.starts_with("--o")
        }),
        "file" => {
            !has(&["-m", "-f", "--magic-file", "--files-from"])
                && !args.iter().any(|a| {
                    a.starts_with('-')
                        && !a.starts_with("--")
                        && (a.contains('m') || a.contains('f'))
                })
        }
        "rg" => !has(&["--pre", "--pre-glob"]),
        // `--se=` is `--set=`; in a cluster, `-us` sets the clock unless an option that
        // takes the rest of the word (`-Iseconds`, `-dsomething`) comes first.
        "date" => !args.iter().any(|a| {
            long_prefix_of(a, &["set"])
                || (a.starts_with('-')
                    && !a.starts_with("--")
                    && a[1..]
                        .chars()
                        .take_while(|c| !"dfrI".contains(*c))
                        .any(|c| c == 's'))
        }),
        "hostname" => args.iter().all(|a| a.starts_with('-')),
        "git" => git_read_only(args),
        _ => READ_ONLY.contains(&p.as_str()),
    }
}

/// A short option cluster (`-uo`) that contains `c`.
fn short_cluster_has(a: &str, c: char) -> bool {
    a.len() > 1 && a.starts_with('-') && !a.starts_with("--") && a[1..].contains(c)
}

/// A long option (`--name` or `--name=value`) whose name is a prefix of one of `names`, as
/// getopt and git accept abbreviations.
fn long_prefix_of(a: &str, names: &[&str]) -> bool {
    let Some(name) = a.strip_prefix("--") else {
        return false;
    };
    let name = name.split('=').next().unwrap_or(name);
    !name.is_empty() && names.iter().any(|n| n.starts_with(name))
}

/// Long options of git's reading subcommands that run a program or write a file; any
/// abbreviation of them counts.
const GIT_RUNNING_OPTIONS: &[&str] = &[
    "output",
    "ext-diff",
    "textconv",
    "open-files-in-pager",
    "upload-pack",
    "receive-pack",
    "exec",
    "no-index",
];

fn git_read_only(args: &[String]) -> bool {
    let Some(sub) = args.first() else {
        return false;
    };
    let rest = &args[1..];
    if rest.iter().any(|a| long_prefix_of(a, GIT_RUNNING_OPTIONS)) {
        return false;
    }
    // `git grep -O[cmd]` opens the matches with a program of the caller's choosing.
    if sub == "grep" && rest.iter().any(|a| short_cluster_has(a, 'O')) {
        return false;
    }
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
            // `bash -c -- CODE`: the `--` ends the options; the code comes after it.
            let next = words.get(i + 1).map(String::as_str);
            return if next == Some("--") {
                words.get(i + 2).map(String::as_str)
            } else {
                next
            };
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

/// `env -S STRING ...`: env splits STRING into words and runs them, so it is code. Returns
/// the command env would run (split string, then the words after it).
pub fn env_split_string(words: &[String]) -> Option<Vec<String>> {
    if words.first().map(|p| basename(p)) != Some("env") {
        return None;
    }
    let mut i = 1;
    while let Some(a) = words.get(i) {
        let value = if a == "-S"
            || a == "--split-string"
            || (long_prefix_of(a, &["split-string"]) && !a.contains('='))
        {
            i += 1;
            words.get(i).map(String::as_str)
        } else if let Some(v) = a.strip_prefix("-S") {
            Some(v)
        } else if a.starts_with("--") && long_prefix_of(a, &["split-string"]) {
            a.split_once('=').map(|(_, v)| v)
        } else if a.starts_with('-') || is_assignment(a) {
            i += if a == "-u" || a == "--unset" || a == "-C" || a == "--chdir" {
                2
            } else {
                1
            };
            continue;
        } else {
            return None;
        };
        let mut out: Vec<String> = value?
            .split_whitespace()
            .map(|w| w.trim_matches(['\'', '"']).to_string())
            .collect();
        out.extend(words.iter().skip(i + 1).cloned());
        return Some(out);
    }
    None
}

/// `git -c alias.NAME=VALUE NAME args`: the command the alias runs, as words (`git VALUE
/// args`, or the shell words of a `!` alias).
pub fn git_alias_expansion(words: &[String]) -> Option<Vec<String>> {
    if words.first().map(|p| basename(p)) != Some("git") {
        return None;
    }
    let mut aliases: Vec<(String, String)> = Vec::new();
    let mut i = 1;
    while let Some(a) = words.get(i) {
        let setting = if a == "-c" {
            i += 1;
            words.get(i).map(String::as_str)
        } else {
            a.strip_prefix("-c")
                .filter(|_| !a.starts_with("--"))
                .or_else(|| a.strip_prefix("--config-env="))
        };
        if let Some(setting) = setting {
            if let Some((k, v)) = setting.split_once('=')
                && k.len() > 6
                && k[..6].eq_ignore_ascii_case("alias.")
            {
                aliases.push((k[6..].to_ascii_lowercase(), v.to_string()));
            }
            i += 1;
            continue;
        }
        if !a.starts_with('-') {
            break;
        }
        i += if matches!(
            a.as_str(),
            "-C" | "--git-dir" | "--work-tree" | "--namespace"
        ) {
            2
        } else {
            1
        };
    }
    let sub = words.get(i)?.to_ascii_lowercase();
    let (_, value) = aliases.iter().rev().find(|(k, _)| *k == sub)?;
    let rest = words.iter().skip(i + 1).cloned();
    let mut out: Vec<String> = match value.strip_prefix('!') {
        Some(code) => code.split_whitespace().map(str::to_string).collect(),
        None => std::iter::once("git".to_string())
            .chain(
                value
                    .split_whitespace()
                    .map(|w| w.trim_matches(['\'', '"']).to_string()),
            )
            .collect(),
    };
    out.extend(rest);
    Some(out)
}

/// `rm` with its recursion and force flags respelled every way a rule may name them
/// (`-rf`, `-fr`, `-r -f`, `-Rf`, `--recursive --force`, …), so `Bash(rm -rf *)` catches
/// `rm -r -f x`. Other flags are dropped; an empty list when neither flag is given.
pub fn rm_flag_forms(words: &[String]) -> Vec<String> {
    if words.first().map(|p| basename(p)) != Some("rm") {
        return Vec::new();
    }
    let (mut r, mut f) = (false, false);
    let mut args: Vec<&str> = Vec::new();
    let mut after = false;
    for a in &words[1..] {
        if after || a == "-" || !a.starts_with('-') {
            args.push(a);
        } else if a == "--" {
            after = true;
        } else if let Some(name) = a.strip_prefix("--") {
            r |= !name.is_empty() && "recursive".starts_with(name);
            f |= !name.is_empty() && "force".starts_with(name);
        } else {
            r |= a.contains(['r', 'R']);
            f |= a.contains('f');
        }
    }
    let rest = args.join(" ");
    let join = |flags: &str| {
        if rest.is_empty() {
            format!("rm {flags}")
        } else {
            format!("rm {flags} {rest}")
        }
    };
    let mut out = Vec::new();
    if r && f {
        for flags in [
            "-rf",
            "-fr",
            "-Rf",
            "-fR",
            "-r -f",
            "-f -r",
            "-R -f",
            "-f -R",
            "--recursive --force",
            "--force --recursive",
            "-r --force",
            "--recursive -f",
        ] {
            out.push(join(flags));
        }
    }
    if r {
        for flags in ["-r", "-R", "--recursive"] {
            out.push(join(flags));
        }
    }
    if f {
        for flags in ["-f", "--force"] {
            out.push(join(flags));
        }
    }
    out
}

/// What a `sed` command line does, when its script is one Warden can read.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct SedCall<'a> {
    /// `-i`/`--in-place`: the files are rewritten.
    pub in_place: bool,
    /// The input files.
    pub files: Vec<&'a str>,
}

/// Reads a `sed` command line. `None` when a script may run a program or touch a file other
/// than the inputs (`e`, `w`, `r`, `R`, `W`, `s///e`, `s///w`, a script file, an unknown
/// option or command).
pub fn sed_call(words: &[String]) -> Option<SedCall<'_>> {
    let mut call = SedCall::default();
    let mut scripts: Vec<&str> = Vec::new();
    let mut operands: Vec<&str> = Vec::new();
    let mut i = 1;
    let mut after = false;
    while let Some(a) = words.get(i) {
        i += 1;
        if after || a == "-" || !a.starts_with('-') {
            operands.push(a);
            continue;
        }
        if a == "--" {
            after = true;
            continue;
        }
        if let Some(long) = a.strip_prefix("--") {
            let (name, value) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (long, None),
            };
            let is = |full: &str| !name.is_empty() && full.starts_with(name);
            if is("in-place") {
                call.in_place = true;
            } else if is("expression") {
                match value {
                    Some(v) => scripts.push(v),
                    None => {
                        scripts.push(words.get(i)?);
                        i += 1;
                    }
                }
            } else if is("line-length") {
                if value.is_none() {
                    i += 1;
                }
            } else if ![
                "quiet",
                "silent",
                "regexp-extended",
                "separate",
                "null-data",
                "zero-terminated",
                "unbuffered",
                "posix",
                "debug",
                "sandbox",
                "follow-symlinks",
            ]
            .iter()
            .any(|f| is(f))
            {
                return None;
            }
            continue;
        }
        for (k, c) in a.char_indices().skip(1) {
            let tail = &a[k + c.len_utf8()..];
            match c {
                'n' | 's' | 'r' | 'E' | 'z' | 'u' => {}
                'i' => {
                    call.in_place = true;
                    break;
                }
                'e' | 'l' => {
                    let v = if tail.is_empty() {
                        i += 1;
                        words.get(i - 1)?.as_str()
                    } else {
                        tail
                    };
                    if c == 'e' {
                        scripts.push(v);
                    }
                    break;
                }
                _ => return None,
            }
        }
    }
    if scripts.is_empty() {
        if operands.is_empty() {
            return None;
        }
        scripts.push(operands.remove(0));
    }
    scripts.iter().all(|s| sed_script_safe(s)).then_some(())?;
    call.files = operands;
    Some(call)
}

/// Whether a sed script uses only commands that read the input and print or edit it.
fn sed_script_safe(script: &str) -> bool {
    let c: Vec<char> = script.chars().collect();
    let mut i = 0;
    let skip_ws = |i: &mut usize| {
        while c.get(*i).is_some_and(|x| x.is_whitespace() || *x == ';') {
            *i += 1;
        }
    };
    loop {
        skip_ws(&mut i);
        let Some(&first) = c.get(i) else { return true };
        if first == '#' {
            while c.get(i).is_some_and(|x| *x != '\n') {
                i += 1;
            }
            continue;
        }
        if !sed_address(&c, &mut i) {
            return false;
        }
        if c.get(i) == Some(&',') {
            i += 1;
            if !sed_address(&c, &mut i) {
                return false;
            }
        }
        while c.get(i).is_some_and(|x| *x == ' ' || *x == '!') {
            i += 1;
        }
        let Some(&cmd) = c.get(i) else { return false };
        i += 1;
        match cmd {
            '{' | '}' | 'p' | 'd' | 'D' | 'n' | 'N' | 'P' | 'g' | 'G' | 'h' | 'H' | 'x' | '='
            | 'l' | 'z' | 'F' => {}
            'q' | 'Q' => {
                while c.get(i).is_some_and(|x| x.is_ascii_digit() || *x == ' ') {
                    i += 1;
                }
            }
            's' | 'y' => {
                let Some(&delim) = c.get(i) else { return false };
                if delim == '\\' || delim == '\n' {
                    return false;
                }
                i += 1;
                if !sed_part(&c, &mut i, delim, cmd == 's') || !sed_part(&c, &mut i, delim, false) {
                    return false;
                }
                if cmd == 's' {
                    while c
                        .get(i)
                        .is_some_and(|x| "gpiImM".contains(*x) || x.is_ascii_digit())
                    {
                        i += 1;
                    }
                }
            }
            _ => return false,
        }
        while c.get(i) == Some(&' ') {
            i += 1;
        }
        match c.get(i) {
            None | Some(';' | '\n' | '}') => {}
            _ => return false,
        }
    }
}

/// An optional sed address at `i`: a line number (with `~step`), `$`, or `/regex/` (flags
/// `I`/`M`). False when it cannot be read.
fn sed_address(c: &[char], i: &mut usize) -> bool {
    match c.get(*i) {
        Some(d) if d.is_ascii_digit() => {
            while c.get(*i).is_some_and(|x| x.is_ascii_digit() || *x == '~') {
                *i += 1;
            }
            true
        }
        Some('$') => {
            *i += 1;
            true
        }
        Some('/') => {
            *i += 1;
            if !sed_part(c, i, '/', true) {
                return false;
            }
            while c.get(*i).is_some_and(|x| *x == 'I' || *x == 'M') {
                *i += 1;
            }
            true
        }
        _ => true,
    }
}

/// Moves past one delimited part of `s`/`y` or an address regex, honouring escapes and (in
/// a regex) bracket expressions, where the delimiter is literal.
fn sed_part(c: &[char], i: &mut usize, delim: char, regex: bool) -> bool {
    while let Some(&x) = c.get(*i) {
        *i += 1;
        if x == '\\' {
            *i += 1;
        } else if x == delim {
            return true;
        } else if regex && x == '[' {
            let start = *i;
            while let Some(&y) = c.get(*i) {
                *i += 1;
                let first = *i - 1 == start || (*i - 1 == start + 1 && c[start] == '^');
                if y == ']' && !first {
                    break;
                }
            }
        }
    }
    false
}

/// Files a command writes that are named in its arguments, for programs other than the
/// `acceptEdits` file commands: `tee FILE`, `sed -i`, `perl -i`, `install`, and the target
/// directory of `cp`/`mv`/`ln`/`install` given as an option.
pub fn written_files(words: &[String]) -> Vec<&str> {
    let Some(p) = words.first().map(|p| basename(p)) else {
        return Vec::new();
    };
    let args = &words[1..];
    let operands = || {
        let mut after = false;
        args.iter()
            .filter(move |a| {
                if after {
                    return true;
                }
                if *a == "--" {
                    after = true;
                    return false;
                }
                !a.starts_with('-') || *a == "-"
            })
            .map(String::as_str)
    };
    let mut out: Vec<&str> = target_dirs(words);
    match p {
        "tee" | "install" => out.extend(operands()),
        "sed" => {
            if let Some(call) = sed_call(words) {
                if call.in_place {
                    out.extend(call.files);
                }
            } else if args.iter().any(|a| {
                (short_cluster_has(a, 'i') && !a.starts_with("-e"))
                    || long_prefix_of(a, &["in-place"])
            }) {
                // A script Warden cannot read on files rewritten in place: every operand.
                out.extend(operands());
            }
        }
        "perl" => {
            let mut in_place = false;
            let mut code_given = false;
            let mut files: Vec<&str> = Vec::new();
            let mut j = 0;
            while let Some(a) = args.get(j) {
                j += 1;
                if a.starts_with('-') && !a.starts_with("--") && a.len() > 1 {
                    let flags = &a[1..];
                    // Options up to the first one that takes the rest of the word.
                    for (k, c) in flags.char_indices() {
                        match c {
                            'i' => {
                                in_place = true;
                                break;
                            }
                            'e' | 'E' => {
                                code_given = true;
                                if k + 1 == flags.len() {
                                    j += 1;
                                }
                                break;
                            }
                            _ => {}
                        }
                    }
                } else if a != "--" {
                    files.push(a);
                }
            }
            if in_place {
                out.extend(files.into_iter().skip(usize::from(!code_given)));
            }
        }
        _ => {}
    }
    out
}

/// `--target-directory=DIR` (or an abbreviation) and `-tDIR` of `cp`, `mv`, `ln` and
/// `install`: the directory written into, which an option hides from the operands.
pub fn target_dirs(words: &[String]) -> Vec<&str> {
    let Some(p) = words.first().map(|p| basename(p)) else {
        return Vec::new();
    };
    if !matches!(p, "cp" | "mv" | "ln" | "install") {
        return Vec::new();
    }
    let mut out = Vec::new();
    for a in &words[1..] {
        if a == "--" {
            break;
        }
        if let Some((name, v)) = a.split_once('=')
            && long_prefix_of(name, &["target-directory"])
        {
            out.push(v);
        } else if !a.starts_with("--")
            && a.starts_with('-')
            && let Some(k) = a.find('t')
            && k + 1 < a.len()
        {
            out.push(&a[k + 1..]);
        }
    }
    out
}

/// Files a reading git subcommand shows the content of: its operands, and the path of a
/// `REV:path` object name (`git show HEAD:.env` reads `.env` as committed).
pub fn git_read_paths(words: &[String]) -> Vec<String> {
    let stripped;
    let words = match strip_git_globals(words) {
        Some(w) => {
            stripped = w;
            &stripped[..]
        }
        None => words,
    };
    let Some(sub) = words.get(1) else {
        return Vec::new();
    };
    if !matches!(
        sub.as_str(),
        "show"
            | "cat-file"
            | "log"
            | "diff"
            | "blame"
            | "grep"
            | "whatchanged"
            | "annotate"
            | "archive"
            | "format-patch"
            | "difftool"
    ) {
        return Vec::new();
    }
    let rest = &words[2..];
    // `git grep PATTERN`: the first operand is the pattern unless given by `-e`/`-f`.
    let mut skip_pattern = sub == "grep"
        && !rest
            .iter()
            .any(|a| a == "-e" || a == "-f" || a.starts_with("--file"));
    let mut out = Vec::new();
    let mut after = false;
    for a in rest {
        if !after && a == "--" {
            after = true;
            continue;
        }
        if !after && a.starts_with('-') {
            continue;
        }
        if skip_pattern {
            skip_pattern = false;
            continue;
        }
        match a.split_once(':') {
            Some((_, path)) if !after && !path.is_empty() => out.push(path.to_string()),
            Some(_) if !after => {}
            _ => out.push(a.clone()),
        }
    }
    out
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
    fn sed_calls_are_read() {
        let w = v("sed -ni.bak -e s/a/b/p -e 1d f g");
        let call = sed_call(&w);
        assert_eq!(
            call,
            Some(SedCall {
                in_place: true,
                files: vec!["f", "g"]
            })
        );
        let w = v("sed --expression=s/a/b/ --in-place f");
        let call = sed_call(&w);
        assert_eq!(call.map(|c| (c.in_place, c.files)), Some((true, vec!["f"])));
        assert_eq!(sed_call(&v("sed 1,5p f")).map(|c| c.in_place), Some(false));
        for unsafe_sed in [
            "sed e f",
            "sed s/a/b/e f",
            "sed s/a/b/gw f",
            "sed 1r/etc/passwd f",
            "sed -f s.sed f",
            "sed --frobnicate s/a/b/ f",
            "sed $!{W f}",
            "sed",
        ] {
            assert_eq!(sed_call(&v(unsafe_sed)), None, "{unsafe_sed}");
        }
    }

    #[test]
    fn written_files_and_target_dirs() {
        assert_eq!(written_files(&v("tee -a a b")), vec!["a", "b"]);
        assert_eq!(written_files(&v("perl -pi -e s/a/b/ f")), vec!["f"]);
        assert_eq!(written_files(&v("perl -pie s/a/b/ f")), vec!["f"]);
        assert!(written_files(&v("perl -pe s/a/b/ f")).is_empty());
        assert_eq!(written_files(&v("cp --target=d x")), vec!["d"]);
        assert_eq!(target_dirs(&v("cp -at.git/hooks x")), vec![".git/hooks"]);
        assert!(target_dirs(&v("cp -t d x")).is_empty());
    }

    #[test]
    fn code_inside_commands() {
        assert_eq!(shell_code(&v("bash -c -- ls")), Some("ls"));
        assert_eq!(
            env_split_string(&v("env -i -Sgit push")).map(|w| w.join(" ")),
            Some("git push".into())
        );
        assert_eq!(
            git_alias_expansion(&v("git -C . -c alias.P=push p origin")).map(|w| w.join(" ")),
            Some("git push origin".into())
        );
        assert_eq!(
            git_alias_expansion(&v("git -c alias.x=!rm x -rf /")).map(|w| w.join(" ")),
            Some("rm -rf /".into())
        );
        assert!(git_alias_expansion(&v("git -c alias.x=push log")).is_none());
        assert!(rm_flag_forms(&v("rm -r --force a b")).contains(&"rm -rf a b".to_string()));
        assert!(rm_flag_forms(&v("rm -i a")).is_empty());
        assert_eq!(
            git_read_paths(&v("git --no-pager show HEAD:a/b :c -- d")),
            vec!["a/b", "c", "d"]
        );
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
