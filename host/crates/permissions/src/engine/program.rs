//! Program facts: what a parsed command line is, worked out once per text and independent of
//! rules, mode and working directory (wrappers stripped, the forms rules see, file arguments).

use crate::bash;
use crate::shell::{ParsedCommand, SimpleCommand};

/// A parsed command line with everything about it that does not depend on rules, mode or
/// working directory worked out once, so cached decisions only do rule lookups.
#[derive(Debug)]
pub(super) struct Analysed {
    pub(super) parsed: ParsedCommand,
    /// One entry per simple command, in order.
    pub(super) prepared: Vec<Prepared>,
    /// Some command runs `git` (after wrappers).
    pub(super) has_git: bool,
}

/// The text forms one simple command is matched under.
#[derive(Debug)]
pub(super) struct Prepared {
    /// How many leading wrapper words `strip_wrappers` removed.
    pub(super) off: usize,
    /// Unquoted words after wrappers, joined by spaces: what allow rules see.
    pub(super) allow_form: String,
    /// The same words as written.
    pub(super) raw_form: String,
    /// Every plausible reading for deny and ask rules, without duplicates; `allow_form` first.
    pub(super) forms: Vec<String>,
    /// An exec wrapper: only a full-command allow rule approves it.
    pub(super) exact_only: bool,
    /// Every leading assignment is on the safe list.
    pub(super) safe_env: bool,
    /// The program name itself is an expansion.
    pub(super) dynamic_program: bool,
    /// Run by a bare `xargs`, which appends words read from stdin: what runs is not what
    /// the text shows, so only an allow rule approves it.
    pub(super) fed_by_xargs: bool,
}

/// How deep code inside code (`bash -c`, `env -S`, piped scripts) is looked into.
const MAX_NESTING: usize = 4;

impl Analysed {
    pub(super) fn new(parsed: ParsedCommand) -> Self {
        Self::nested(parsed, 0)
    }

    fn nested(parsed: ParsedCommand, depth: usize) -> Self {
        let has_git = parsed.commands.iter().any(|c| {
            bash::strip_wrappers(&c.words)
                .first()
                .is_some_and(|p| bash::basename(p) == "git")
        });
        let mut prepared: Vec<Prepared> = parsed
            .commands
            .iter()
            .map(|c| Prepared::new(c, depth))
            .collect();
        // Words `echo`/`printf` print may be piped into a shell (`echo 'git push' | sh`) or
        // into `xargs PROG`; with no pipeline structure kept, any of them may feed any
        // reader of stdin on the line, so deny and ask rules see every pairing.
        let feeds: Vec<String> = parsed.commands.iter().filter_map(printed_words).collect();
        if !feeds.is_empty() {
            for (cmd, prep) in parsed.commands.iter().zip(prepared.iter_mut()) {
                let stripped = &cmd.words[prep.off..];
                let runs: Option<&[String]> = if prep.fed_by_xargs {
                    Some(stripped)
                } else if stripped
                    .first()
                    .is_some_and(|p| bash::basename(p) == "xargs")
                {
                    stripped[1..]
                        .iter()
                        .position(|a| !a.starts_with('-'))
                        .map(|i| &stripped[i + 1..])
                } else {
                    None
                };
                for feed in &feeds {
                    let code = match runs {
                        Some(prog) => format!("{} {feed}", prog.join(" ")),
                        None if reads_code_from_stdin(stripped) => feed.clone(),
                        None => continue,
                    };
                    for form in code_forms(&code, depth + 1) {
                        prep.push(form);
                    }
                }
            }
        }
        Analysed {
            parsed,
            prepared,
            has_git,
        }
    }
}

/// The text `echo`/`printf` prints, as words joined by spaces.
fn printed_words(cmd: &SimpleCommand) -> Option<String> {
    let w = bash::strip_wrappers(&cmd.words);
    let p = bash::basename(w.first()?);
    if p != "echo" && p != "printf" {
        return None;
    }
    let args: Vec<&str> = w[1..]
        .iter()
        .map(String::as_str)
        .skip_while(|a| p == "echo" && matches!(*a, "-n" | "-e" | "-E" | "-ne" | "-en"))
        .collect();
    (!args.is_empty()).then(|| args.join(" "))
}

/// A shell or interpreter with no script operand and no inline code: it runs stdin.
fn reads_code_from_stdin(words: &[String]) -> bool {
    let Some(p) = words.first().map(|p| bash::basename(p)) else {
        return false;
    };
    let interpreter = bash::SHELLS.contains(&p) || bash::is_code_interpreter(p).is_some();
    interpreter
        && bash::shell_code(words).is_none()
        && !bash::has_inline_code(words)
        && words[1..].iter().all(|a| a.starts_with('-'))
}

/// Every form deny and ask rules should see for a piece of shell code run by a command.
fn code_forms(code: &str, depth: usize) -> Vec<String> {
    let code = code.trim();
    if depth > MAX_NESTING {
        return vec![code.to_string()];
    }
    match crate::shell::parse(code) {
        Ok(parsed) => Analysed::nested(parsed, depth)
            .prepared
            .into_iter()
            .flat_map(|p| p.forms)
            .collect(),
        Err(_) => std::iter::once(code.to_string())
            .chain(
                code.split(['\n', ';', '&', '|'])
                    .map(|p| p.split_whitespace().collect::<Vec<_>>().join(" "))
                    .filter(|p| !p.is_empty()),
            )
            .collect(),
    }
}

impl Prepared {
    fn push(&mut self, form: String) {
        if !self.forms.contains(&form) {
            self.forms.push(form);
        }
    }

    fn new(cmd: &SimpleCommand, depth: usize) -> Self {
        let stripped = bash::strip_wrappers(&cmd.words);
        let off = cmd.words.len() - stripped.len();
        let allow_form = stripped.join(" ");
        let raw_form = cmd.raw_words[off..].join(" ");
        let mut forms: Vec<String> = vec![allow_form.clone()];
        let mut push = |s: String| {
            if !forms.contains(&s) {
                forms.push(s);
            }
        };
        push(raw_form.clone());
        push(cmd.words.join(" "));
        if let Some(p) = stripped.first()
            && p.contains('/')
        {
            let mut w = stripped.to_vec();
            w[0] = bash::basename(p).to_string();
            push(w.join(" "));
            if let Some(g) = bash::strip_git_globals(&w) {
                push(g.join(" "));
            }
        }
        if let Some(g) = bash::strip_git_globals(stripped) {
            push(g.join(" "));
        }
        if let Some(inner) = bash::strip_env(stripped) {
            push(bash::strip_wrappers(inner).join(" "));
        }
        if bash::runs_inner_command(stripped) {
            for i in 1..stripped.len() {
                if !stripped[i].starts_with('-') {
                    let inner = bash::strip_wrappers(&stripped[i..]);
                    push(inner.join(" "));
                    for form in bash::rm_flag_forms(inner) {
                        push(form);
                    }
                }
            }
        }
        let mut named = stripped.to_vec();
        if let Some(p) = named.first_mut() {
            *p = bash::basename(p).to_string();
        }
        for form in bash::rm_flag_forms(&named) {
            push(form);
        }
        // Code the command runs: `bash -c CODE`, `env -S 'CODE'`, a git alias set with `-c`.
        let code = bash::shell_code(&named)
            .map(str::to_string)
            .or_else(|| bash::env_split_string(&named).map(|w| w.join(" ")))
            .or_else(|| bash::git_alias_expansion(&named).map(|w| w.join(" ")));
        if let Some(code) = code {
            for form in code_forms(&code, depth + 1) {
                push(form);
            }
        }
        let fed_by_xargs = cmd.words[..off]
            .iter()
            .any(|w| bash::basename(w) == "xargs");
        Prepared {
            off,
            allow_form,
            raw_form,
            forms,
            fed_by_xargs,
            exact_only: bash::is_exec_wrapper(stripped)
                || bash::env_split_string(&named).is_some()
                || bash::git_alias_expansion(&named).is_some(),
            safe_env: cmd
                .assignments
                .iter()
                .all(|(n, _)| bash::SAFE_ENV_VARS.contains(&n.as_str())),
            dynamic_program: cmd.dynamic_in_program(),
        }
    }
}

impl SimpleCommand {
    fn dynamic_in_program(&self) -> bool {
        self.raw_words
            .first()
            .is_some_and(|w| w.contains(['$', '`']))
    }
}

/// Non-option arguments of a command (after its name), excluding dynamic ones.
pub(super) fn file_args<'a>(words: &'a [String], cmd: &SimpleCommand) -> Vec<&'a str> {
    let _ = cmd;
    let mut out = Vec::new();
    let mut after_dashdash = false;
    let program = words.first().map(String::as_str).unwrap_or("");
    // grep/rg/sed take a pattern or script first.
    let mut skip_first = matches!(program, "grep" | "egrep" | "fgrep" | "rg" | "sed");
    for a in words.iter().skip(1) {
        if !after_dashdash && a == "--" {
            after_dashdash = true;
            continue;
        }
        if !after_dashdash && a.starts_with('-') && a.len() > 1 {
            if program == "sed" && (a == "-e" || a == "-f") {
                skip_first = false;
            }
            continue;
        }
        if skip_first {
            skip_first = false;
            continue;
        }
        out.push(a.as_str());
    }
    out
}
