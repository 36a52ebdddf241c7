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
}

impl Analysed {
    pub(super) fn new(parsed: ParsedCommand) -> Self {
        let has_git = parsed.commands.iter().any(|c| {
            bash::strip_wrappers(&c.words)
                .first()
                .is_some_and(|p| bash::basename(p) == "git")
        });
        let prepared = parsed.commands.iter().map(Prepared::new).collect();
        Analysed {
            parsed,
            prepared,
            has_git,
        }
    }
}

impl Prepared {
    fn new(cmd: &SimpleCommand) -> Self {
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
                    push(bash::strip_wrappers(&stripped[i..]).join(" "));
                }
            }
        }
        Prepared {
            off,
            allow_form,
            raw_form,
            forms,
            exact_only: bash::is_exec_wrapper(stripped),
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
