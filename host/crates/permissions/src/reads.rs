//! Which words of a command name files it reads: per-program argument shapes, independent of
//! rules. The engine checks these words against `Read` rules and the working directories.
//!
//! Every program whose arguments are paths is covered, not only the recognised file readers
//! of spec 2.4: a program Warden knows nothing more about has every non-option word taken as
//! a file it may open, so an unfamiliar argument shape errs towards checking a word that is
//! not a path rather than missing one that is. Programs whose first operand is a pattern,
//! script or filter (`grep`, `rg`, `sed`, `awk`, `jq`) skip it only when no option supplies
//! one, and the files options name (`grep -f F`, `jq --rawfile n F`, `awk -f F`) are reads.

use crate::bash::{self, NON_PATH_ARGS, READ_ONLY};

/// Programs outside the read-only set that print or use the content of the files their
/// arguments name; an allow rule may approve them, so their reads meet `Read` rules too.
pub const OTHER_READERS: &[&str] = &[
    "sed",
    "awk",
    "gawk",
    "mawk",
    "nawk",
    "xxd",
    "base64",
    "base32",
    "basenc",
    "strings",
    "hexdump",
    "hd",
    "tac",
    "rev",
    "less",
    "more",
    "most",
    "bat",
    "batcat",
    "paste",
    "join",
    "uniq",
    "fold",
    "fmt",
    "expand",
    "unexpand",
    "iconv",
    "zcat",
    "bzcat",
    "xzcat",
    "zstdcat",
    "lzcat",
    "zless",
    "zmore",
    "zgrep",
    "cmp",
    "pr",
    "look",
    "shuf",
    "tsort",
    "sum",
    "b2sum",
    "sha224sum",
    "sha384sum",
    "md5",
    "shasum",
    "source",
    ".",
    "split",
    "csplit",
    "vim",
    "view",
    "vi",
    "nano",
    "emacs",
    "yq",
    "xmllint",
    "csvlook",
    "mlr",
    "gojq",
    "jaq",
];

/// Read-only programs whose arguments are strings, not paths, beyond [`NON_PATH_ARGS`].
const STRING_ARGS: &[&str] = &["basename", "dirname", "tr"];

/// Whether `program` (a basename) takes paths as arguments and reads or inspects what they
/// name: the read-only set (but for programs whose arguments are never paths) and
/// [`OTHER_READERS`].
pub fn reads_paths(program: &str) -> bool {
    (READ_ONLY.contains(&program) || OTHER_READERS.contains(&program))
        && !NON_PATH_ARGS.contains(&program)
        && !STRING_ARGS.contains(&program)
}

/// How one program's arguments are laid out.
struct Shape {
    /// Short options whose value is the next word (or the rest of the word).
    short_values: &'static str,
    /// Long options whose value may be the next word.
    long_values: &'static [&'static str],
    /// The first operand is a pattern, script or filter, not a file.
    first_is_code: bool,
    /// Short options that supply that code, so the first operand is a file after all.
    short_code: &'static str,
    /// Long options that supply it.
    long_code: &'static [&'static str],
    /// Short options whose value is a file read.
    short_files: &'static str,
    /// Long options whose value is a file read.
    long_files: &'static [&'static str],
}

const DEFAULT: Shape = Shape {
    short_values: "",
    long_values: &[],
    first_is_code: false,
    short_code: "",
    long_code: &[],
    short_files: "",
    long_files: &["files0-from", "random-source", "from-file", "to-file"],
};

fn shape(program: &str) -> Shape {
    match program {
        "grep" | "egrep" | "fgrep" | "zgrep" => Shape {
            short_values: "ABCmdDef",
            long_values: &[
                "regexp",
                "file",
                "max-count",
                "context",
                "after-context",
                "before-context",
                "include",
                "exclude",
                "exclude-dir",
                "exclude-from",
                "label",
                "binary-files",
                "devices",
                "directories",
                "group-separator",
            ],
            first_is_code: true,
            short_code: "ef",
            long_code: &["regexp", "file"],
            short_files: "f",
            long_files: &["file", "exclude-from"],
        },
        "rg" => Shape {
            short_values: "ABCmefgtTrMjEd",
            long_values: &[
                "regexp",
                "file",
                "max-count",
                "context",
                "after-context",
                "before-context",
                "glob",
                "iglob",
                "type",
                "type-not",
                "type-add",
                "replace",
                "max-columns",
                "threads",
                "encoding",
                "max-depth",
                "ignore-file",
                "pre",
                "pre-glob",
                "sort",
                "sortr",
                "color",
                "colors",
                "field-match-separator",
                "path-separator",
                "max-filesize",
                "dfa-size-limit",
                "regex-size-limit",
                "engine",
            ],
            first_is_code: true,
            short_code: "ef",
            long_code: &["regexp", "file"],
            short_files: "f",
            long_files: &["file", "ignore-file"],
        },
        "sed" => Shape {
            short_values: "eflS",
            long_values: &["expression", "file", "line-length"],
            first_is_code: true,
            short_code: "ef",
            long_code: &["expression", "file"],
            short_files: "f",
            long_files: &["file"],
        },
        "awk" | "gawk" | "mawk" | "nawk" => Shape {
            short_values: "fvFiWE",
            long_values: &[
                "file",
                "assign",
                "field-separator",
                "include",
                "exec",
                "load",
            ],
            first_is_code: true,
            short_code: "fE",
            long_code: &["file", "exec"],
            short_files: "fiE",
            long_files: &["file", "include", "exec"],
        },
        "jq" | "gojq" | "jaq" | "yq" => Shape {
            short_values: "fL",
            long_values: &["from-file", "indent", "library-path"],
            first_is_code: true,
            short_code: "f",
            long_code: &["from-file"],
            short_files: "f",
            long_files: &["from-file"],
        },
        "head" | "tail" => Shape {
            short_values: "nc",
            long_values: &[
                "lines",
                "bytes",
                "sleep-interval",
                "pid",
                "max-unchanged-stats",
            ],
            ..DEFAULT
        },
        "cut" => Shape {
            short_values: "bcdf",
            long_values: &[
                "bytes",
                "characters",
                "delimiter",
                "fields",
                "output-delimiter",
            ],
            ..DEFAULT
        },
        "sort" => Shape {
            short_values: "ktSTo",
            long_values: &[
                "key",
                "field-separator",
                "buffer-size",
                "temporary-directory",
                "parallel",
                "batch-size",
            ],
            ..DEFAULT
        },
        "uniq" => Shape {
            short_values: "fsw",
            long_values: &["skip-fields", "skip-chars", "check-chars", "group"],
            ..DEFAULT
        },
        "column" => Shape {
            short_values: "csoNOERHWrT",
            long_values: &[
                "separator",
                "output-separator",
                "table-columns",
                "output-width",
            ],
            ..DEFAULT
        },
        "nl" => Shape {
            short_values: "bdfhilnsvw",
            ..DEFAULT
        },
        "od" => Shape {
            short_values: "AjNtS",
            ..DEFAULT
        },
        "hexdump" | "hd" => Shape {
            short_values: "efns",
            short_files: "f",
            ..DEFAULT
        },
        "xxd" => Shape {
            short_values: "cglosn",
            ..DEFAULT
        },
        "base64" | "base32" | "basenc" | "fold" | "fmt" => Shape {
            short_values: "wpg",
            long_values: &["wrap", "width", "goal", "prefix"],
            ..DEFAULT
        },
        "diff" => Shape {
            short_values: "CUIFSWxX",
            long_values: &[
                "context",
                "unified",
                "ignore-matching-lines",
                "label",
                "width",
                "exclude",
                "exclude-from",
                "starting-file",
                "show-function-line",
                "tabsize",
                "line-format",
                "horizon-lines",
            ],
            long_files: &["from-file", "to-file", "exclude-from"],
            short_files: "X",
            ..DEFAULT
        },
        "du" | "wc" => Shape {
            short_values: "BdtX",
            long_values: &[
                "block-size",
                "max-depth",
                "threshold",
                "exclude",
                "time-style",
            ],
            short_files: "X",
            long_files: &["files0-from", "exclude-from"],
            ..DEFAULT
        },
        "ls" => Shape {
            short_values: "ITw",
            long_values: &[
                "ignore",
                "hide",
                "tabsize",
                "width",
                "block-size",
                "format",
                "sort",
                "time",
                "time-style",
                "quoting-style",
                "indicator-style",
            ],
            ..DEFAULT
        },
        "tree" => Shape {
            short_values: "LPIo",
            long_values: &["filelimit", "timefmt", "charset", "sort"],
            long_files: &["fromfile"],
            ..DEFAULT
        },
        "stat" => Shape {
            short_values: "c",
            long_values: &["format", "printf"],
            ..DEFAULT
        },
        _ => DEFAULT,
    }
}

/// The words of `words` (a command after its wrappers, the program first) that name files
/// the program reads or inspects. Empty for a program whose arguments are not paths.
///
/// `find` reads the paths before its expression (and a `-files0-from` list); other programs
/// follow their [`Shape`]: options are skipped with their values, the values of options that
/// name files are kept, and a leading pattern or script is skipped only when no option gave
/// one. After `--` every word is an operand.
pub fn read_args(words: &[String]) -> Vec<&str> {
    let Some(program) = words.first().map(|p| bash::basename(p)) else {
        return Vec::new();
    };
    if !reads_paths(program) {
        return Vec::new();
    }
    let args = &words[1..];
    if program == "find" {
        return find_paths(args);
    }
    if program == "jq" || program == "gojq" || program == "jaq" || program == "yq" {
        return jq_files(args);
    }
    let s = shape(program);
    let mut out: Vec<&str> = Vec::new();
    let mut operands: Vec<&str> = Vec::new();
    let mut code_given = false;
    let mut after = false;
    let mut i = 0;
    while let Some(a) = args.get(i) {
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
            let is = |list: &[&str]| !name.is_empty() && list.iter().any(|l| l.starts_with(name));
            let value = match value {
                Some(v) => Some(v),
                None if is(s.long_values) => {
                    i += 1;
                    args.get(i - 1).map(String::as_str)
                }
                None => None,
            };
            if is(s.long_code) {
                code_given = true;
            }
            if let Some(v) = value
                && is(s.long_files)
            {
                out.push(v);
            }
            continue;
        }
        // A short cluster: flags up to the first option that takes a value, which is the
        // rest of the word or else the next word.
        for (k, c) in a.char_indices().skip(1) {
            if !s.short_values.contains(c) {
                continue;
            }
            let rest = &a[k + c.len_utf8()..];
            let value = if rest.is_empty() {
                i += 1;
                args.get(i - 1).map(String::as_str)
            } else {
                Some(rest)
            };
            if s.short_code.contains(c) {
                code_given = true;
            }
            if let Some(v) = value
                && s.short_files.contains(c)
            {
                out.push(v);
            }
            break;
        }
    }
    let skip = usize::from(s.first_is_code && !code_given);
    let awk = matches!(program, "awk" | "gawk" | "mawk" | "nawk");
    out.extend(
        operands
            .into_iter()
            .skip(skip)
            // `awk '…' n=1 file`: an operand assignment sets a variable, it is not a file.
            .filter(|o| !(awk && bash::is_assignment(o))),
    );
    out
}

/// `find [-H|-L|-P] [-D opts] [-Olevel] PATH… EXPRESSION`: the paths, and a `-files0-from`
/// list.
fn find_paths(args: &[String]) -> Vec<&str> {
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(a) = args.get(i) {
        match a.as_str() {
            "-H" | "-L" | "-P" => i += 1,
            "-D" => i += 2,
            o if o.starts_with("-O") => i += 1,
            _ => break,
        }
    }
    let mut in_expression = false;
    while let Some(a) = args.get(i) {
        i += 1;
        if a == "-files0-from" {
            if let Some(v) = args.get(i) {
                out.push(v.as_str());
            }
            i += 1;
            in_expression = true;
            continue;
        }
        if in_expression || a.starts_with('-') || matches!(a.as_str(), "(" | ")" | "!" | ",") {
            in_expression = true;
            continue;
        }
        out.push(a.as_str());
    }
    out
}

/// `jq [options] FILTER [FILE…]`: the files, the filter file of `-f`/`--from-file`, and the
/// files `--rawfile`/`--slurpfile` load. After `--args`/`--jsonargs` operands are values.
fn jq_files(args: &[String]) -> Vec<&str> {
    let mut out = Vec::new();
    let mut operands = Vec::new();
    let mut filter_file = false;
    let mut values_follow = false;
    let mut i = 0;
    while let Some(a) = args.get(i) {
        i += 1;
        match a.as_str() {
            "--rawfile" | "--slurpfile" => {
                if let Some(f) = args.get(i + 1) {
                    out.push(f.as_str());
                }
                i += 2;
            }
            "--arg" | "--argjson" => i += 2,
            "--indent" | "-L" | "--library-path" => i += 1,
            "-f" | "--from-file" => {
                filter_file = true;
                if let Some(f) = args.get(i) {
                    out.push(f.as_str());
                }
                i += 1;
            }
            "--args" | "--jsonargs" => values_follow = true,
            o if o.starts_with('-') && o.len() > 1 => {}
            o => {
                if !values_follow || operands.is_empty() {
                    operands.push(o);
                }
            }
        }
    }
    out.extend(operands.into_iter().skip(usize::from(!filter_file)));
    out
}

/// The words bash's brace expansion makes of `word` (`.{env,x}` → `.env`, `.x`;
/// `f{1..3}` → `f1`, `f2`, `f3`), or `None` past `limit` words. Quotes are already removed,
/// so a quoted brace is expanded too: that only adds names to check.
pub fn brace_expand(word: &str, limit: usize) -> Option<Vec<String>> {
    let mut out = Vec::new();
    expand_into(word, limit, &mut out)?;
    Some(out)
}

fn expand_into(word: &str, limit: usize, out: &mut Vec<String>) -> Option<()> {
    let b = word.as_bytes();
    // The first `{` whose matching `}` holds a top-level `,` or a `..` range.
    let mut start = 0;
    while let Some(open) = word[start..].find('{').map(|i| i + start) {
        let mut depth = 0usize;
        let mut commas = Vec::new();
        let mut close = None;
        for (i, &c) in b.iter().enumerate().skip(open) {
            match c {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        close = Some(i);
                        break;
                    }
                }
                b',' if depth == 1 => commas.push(i),
                _ => {}
            }
        }
        let Some(close) = close else { break };
        let (pre, body, post) = (&word[..open], &word[open + 1..close], &word[close + 1..]);
        let parts: Vec<String> = if !commas.is_empty() {
            let mut parts = Vec::new();
            let mut from = open + 1;
            for &c in &commas {
                parts.push(word[from..c].to_string());
                from = c + 1;
            }
            parts.push(word[from..close].to_string());
            parts
        } else if let Some((a, z)) = body.split_once("..") {
            match (
                a.parse::<i64>(),
                z.split("..").next().unwrap_or(z).parse::<i64>(),
            ) {
                (Ok(a), Ok(z)) => {
                    if a.abs_diff(z) as usize >= limit {
                        return None;
                    }
                    let (lo, hi) = (a.min(z), a.max(z));
                    (lo..=hi).map(|n| n.to_string()).collect()
                }
                _ => match (a.chars().next(), z.chars().next()) {
                    (Some(x), Some(y)) if a.len() == 1 && z.len() == 1 => {
                        let (lo, hi) = (x.min(y), x.max(y));
                        (lo..=hi).map(|c| c.to_string()).collect()
                    }
                    _ => {
                        start = open + 1;
                        continue;
                    }
                },
            }
        } else {
            start = open + 1;
            continue;
        };
        for part in parts {
            expand_into(&format!("{pre}{part}{post}"), limit, out)?;
            if out.len() > limit {
                return None;
            }
        }
        return Some(());
    }
    out.push(word.to_string());
    (out.len() <= limit).then_some(())
}

/// What a reading git command may print of file content, for the engine's history check.
#[derive(Debug, PartialEq, Eq)]
pub enum GitContent<'a> {
    /// Only names, hashes, refs and commit metadata.
    None,
    /// Content, limited to these pathspecs (the words after `--`).
    Limited(Vec<&'a str>),
    /// Content of any file the repository's history or working tree holds.
    Any,
}

/// Options of `log`-like commands that print no file content: formats, selections of
/// commits, and summaries that name files without showing them. Anything else (`-p`, `-U3`,
/// `--word-diff`, `-L`, `-S`/`-G` pickaxes, which answer whether a text occurs, an option
/// Warden does not know) counts as printing content.
const NO_CONTENT_OPTIONS: &[&str] = &[
    "--oneline",
    "--graph",
    "--stat",
    "--shortstat",
    "--numstat",
    "--name-only",
    "--name-status",
    "--summary",
    "--compact-summary",
    "--dirstat",
    "--raw",
    "--all",
    "--branches",
    "--tags",
    "--remotes",
    "--reverse",
    "--first-parent",
    "--merges",
    "--no-merges",
    "--abbrev-commit",
    "--no-abbrev-commit",
    "--abbrev",
    "--decorate",
    "--no-decorate",
    "--date",
    "--relative-date",
    "--format",
    "--pretty",
    "--since",
    "--until",
    "--after",
    "--before",
    "--author",
    "--committer",
    "--grep",
    "--all-match",
    "--invert-grep",
    "-i",
    "--regexp-ignore-case",
    "-E",
    "-F",
    "--extended-regexp",
    "--fixed-strings",
    "-n",
    "--max-count",
    "--skip",
    "--topo-order",
    "--date-order",
    "--author-date-order",
    "--left-right",
    "--cherry-pick",
    "--cherry-mark",
    "--cherry",
    "--boundary",
    "--no-walk",
    "--follow",
    "--no-color",
    "--color",
    "--no-renames",
    "--find-renames",
    "--full-history",
    "--simplify-by-decoration",
    "--ancestry-path",
    "--not",
    "--no-patch",
    "-s",
    "--log-size",
    "--mailmap",
    "--no-mailmap",
    "--use-mailmap",
    "--parents",
    "--children",
    "--walk-reflogs",
    "-g",
    "--encoding",
    "--no-notes",
    "--diff-filter",
    "--relative",
    "--no-relative",
    "-z",
    "--exclude",
    "--glob",
    "--quiet",
    "-q",
    "--no-ext-diff",
    "--no-textconv",
    "--ignore-missing",
    "--cached",
    "--staged",
    "--merge-base",
    "-R",
    "--exit-code",
    "--no-prefix",
    "--full-index",
    "--show-signature",
    "--count",
];

/// Options that make a diff name files instead of showing them.
const NAMES_ONLY: &[&str] = &[
    "--stat",
    "--shortstat",
    "--numstat",
    "--name-only",
    "--name-status",
    "--summary",
    "--compact-summary",
    "--dirstat",
    "--raw",
    "--quiet",
    "--no-patch",
    "-s",
];

fn option_in(a: &str, list: &[&str]) -> bool {
    let name = a.split('=').next().unwrap_or(a);
    // `-n5`, `-5`: a count.
    if name.len() > 1 && name.starts_with('-') && name[1..].chars().all(|c| c.is_ascii_digit()) {
        return true;
    }
    if let Some(n) = name.strip_prefix("-n")
        && !name.starts_with("--")
        && !n.is_empty()
        && n.chars().all(|c| c.is_ascii_digit())
    {
        return true;
    }
    list.contains(&name)
}

/// Whether `words` (`git …`, globals allowed) may print file content, and if so whether
/// pathspecs limit it. Subcommands that are not read-only are `None` here: the read-only
/// check and the rules decide them.
pub fn git_content(words: &[String]) -> GitContent<'_> {
    let start = git_sub_index(words);
    let Some(sub) = start.and_then(|i| words.get(i)) else {
        return GitContent::None;
    };
    let mut rest: &[String] = start.map_or(&[], |i| &words[i + 1..]);
    if sub == "stash" || sub == "reflog" {
        match rest.first().map(String::as_str) {
            Some("show" | "list") => rest = &rest[1..],
            None if sub == "reflog" => return GitContent::None,
            _ if sub == "reflog" => {}
            _ => return GitContent::None,
        }
    }
    let dashdash = rest.iter().position(|a| a == "--");
    let (opts, specs) = match dashdash {
        Some(i) => (&rest[..i], Some(&rest[i + 1..])),
        None => (rest, None),
    };
    let options = || opts.iter().filter(|a| a.starts_with('-') && a.len() > 1);
    let plain = || options().all(|a| option_in(a, NO_CONTENT_OPTIONS));
    let names_only = || options().any(|a| option_in(a, NAMES_ONLY));
    let content = match sub.as_str() {
        "log" | "whatchanged" | "reflog" | "stash" => !plain(),
        "diff" => !(plain() && names_only()),
        // A named object may be a blob, printed whole; only `HEAD` and its ancestors are
        // known to be commits. `REV:path` names one file, whose path is checked as a read.
        "show" => {
            let objects: Vec<&String> = opts.iter().filter(|a| !a.starts_with('-')).collect();
            let head = |a: &str| {
                a.strip_prefix("HEAD").is_some_and(|r| {
                    r.chars()
                        .all(|c| matches!(c, '~' | '^') || c.is_ascii_digit())
                })
            };
            !((!objects.is_empty() && objects.iter().all(|a| names_one_file(a)))
                || (plain() && names_only() && objects.iter().all(|a| head(a))))
        }
        "grep" => true,
        "cat-file" => {
            !(options().all(|a| matches!(a.as_str(), "-t" | "-s" | "-e" | "-p"))
                && opts.iter().filter(|a| !a.starts_with('-')).all(|a| {
                    names_one_file(a) || matches!(a.as_str(), "blob" | "tree" | "commit" | "tag")
                })
                || options().all(|a| matches!(a.as_str(), "-t" | "-s" | "-e")))
        }
        // `blame FILE` shows FILE (its path is checked as a read); these options read others.
        "blame" | "annotate" => {
            return if options().any(|a| {
                a.starts_with("--contents")
                    || a.starts_with("--ignore-revs-file")
                    || a.starts_with("-S")
            }) {
                GitContent::Any
            } else {
                GitContent::None
            };
        }
        _ => false,
    };
    if !content {
        return GitContent::None;
    }
    match specs {
        Some(s) if !s.is_empty() && sub != "cat-file" => {
            GitContent::Limited(s.iter().map(String::as_str).collect())
        }
        _ => GitContent::Any,
    }
}

/// `REV:path` or `:path`: one file of a commit or of the index (a tree there only lists
/// names).
fn names_one_file(a: &str) -> bool {
    a.split_once(':').is_some_and(|(_, path)| !path.is_empty())
}

/// Index of the subcommand in `git [globals] SUB …`.
fn git_sub_index(words: &[String]) -> Option<usize> {
    if words.first().map(|p| bash::basename(p)) != Some("git") {
        return None;
    }
    let mut i = 1;
    while let Some(a) = words.get(i) {
        if matches!(
            a.as_str(),
            "-C" | "-c"
                | "--git-dir"
                | "--work-tree"
                | "--namespace"
                | "--config-env"
                | "--super-prefix"
        ) {
            i += 2;
        } else if a.starts_with('-') {
            i += 1;
        } else {
            return Some(i);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Vec<String> {
        s.split(' ').map(str::to_string).collect()
    }

    #[test]
    fn files_by_shape() {
        for (cmd, want) in [
            ("cat a b", vec!["a", "b"]),
            ("jq . .env", vec![".env"]),
            ("jq -r .env x.json", vec!["x.json"]),
            ("jq -n --rawfile k .env $k", vec![".env"]),
            ("jq -f prog.jq data", vec!["prog.jq", "data"]),
            ("jq -n --args .x a b", vec![]),
            ("grep -e API .env", vec![".env"]),
            ("grep -ie API .env", vec![".env"]),
            ("grep -A 2 .env x", vec!["x"]),
            ("grep --regexp=API .env", vec![".env"]),
            ("grep -f .env x", vec![".env", "x"]),
            ("grep -r .env src", vec!["src"]),
            ("rg -g *.rs foo src", vec!["src"]),
            ("sed --expression=p .env", vec![".env"]),
            ("sed -n p .env", vec![".env"]),
            ("awk {print} n=1 .env", vec![".env"]),
            ("awk -f prog.awk .env", vec!["prog.awk", ".env"]),
            ("find . -name .env", vec!["."]),
            ("find -L src docs -type f", vec!["src", "docs"]),
            ("cut -d / -f 1 x", vec!["x"]),
            ("head -n 5 -- -x", vec!["-x"]),
            ("sort --random-source=.env x", vec![".env", "x"]),
            ("xxd -l 16 .env", vec![".env"]),
            ("base64 -w0 .env", vec![".env"]),
            ("tr / _", vec![]),
            ("echo .env", vec![]),
            ("/usr/bin/cat .env", vec![".env"]),
        ] {
            assert_eq!(read_args(&v(cmd)), want, "{cmd}");
        }
    }

    #[test]
    fn braces_expand_as_bash_does() {
        let e = |w: &str| brace_expand(w, 64);
        assert_eq!(e(".{env,x}"), Some(vec![".env".into(), ".x".into()]));
        assert_eq!(
            e("a{b,{c,d}}e"),
            Some(vec!["abe".into(), "ace".into(), "ade".into()])
        );
        assert_eq!(
            e("f{1..3}"),
            Some(vec!["f1".into(), "f2".into(), "f3".into()])
        );
        assert_eq!(e(".{e..e}nv"), Some(vec![".env".into()]));
        assert_eq!(e("{x}"), Some(vec!["{x}".into()]));
        assert_eq!(e("plain"), Some(vec!["plain".into()]));
        assert_eq!(e("{1..100000}"), None);
    }

    #[test]
    fn git_content_by_form() {
        use GitContent::{Any, Limited, None};
        for (cmd, want) in [
            ("git log --oneline", None),
            ("git log -n 5 --stat", None),
            ("git log -5 --format=%H", None),
            ("git status", None),
            ("git log -p", Any),
            ("git log --patch", Any),
            ("git log -U1", Any),
            ("git log -S secret", Any),
            ("git log -L 1,5:x", Any),
            ("git --no-pager log -p", Any),
            ("git log -p -- src", Limited(vec!["src"])),
            ("git diff", Any),
            ("git diff --stat", None),
            ("git diff --stat -p", Any),
            ("git show", Any),
            ("git show --stat", None),
            ("git show --stat HEAD~2", None),
            ("git show --stat abc123", Any),
            ("git show HEAD:README.md", None),
            ("git show HEAD:README.md HEAD", Any),
            ("git cat-file -p HEAD:README.md", None),
            ("git cat-file blob :src/a.rs", None),
            ("git cat-file --batch", Any),
            ("git grep foo", Any),
            ("git grep foo -- src", Limited(vec!["src"])),
            ("git cat-file -p abc123", Any),
            ("git cat-file -t abc123", None),
            ("git blame README.md", None),
            ("git blame --contents .env README.md", Any),
            ("git stash show", None),
            ("git stash show -p", Any),
            ("git reflog show -p", Any),
            ("git reflog", None),
        ] {
            assert_eq!(git_content(&v(cmd)), want, "{cmd}");
        }
    }
}
