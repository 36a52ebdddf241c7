//! Bash facts: what the rules, the read-only list and `acceptEdits` say about each simple
//! command of a command line, its redirects and its file arguments.

use std::path::Path;

use super::program::{Analysed, file_args};
use super::spelling::Spellings;
use super::{Auto, Facts, Guard, Permissions};
use crate::bash;
use crate::paths;
use crate::reads;
use crate::rules::{FormKeys, Hit, RuleKind, first};
use crate::shell::{Redirect, SimpleCommand};

/// How many words one argument's brace expansion may make before it counts as unknown.
const MAX_EXPANSION: usize = 256;

/// How many directory entries expanding one glob argument may visit before it counts as
/// unknown.
const GLOB_ENTRIES: usize = 10_000;

impl Permissions {
    pub(super) fn bash_facts(&self, command: &str, cwd: &Path, f: &mut Facts) {
        match &*self.parse_cache.get(command) {
            Ok(analysed) => self.commands_facts(analysed, cwd, f),
            Err(e) => {
                // Deny and ask rules still see the text; nothing can approve it but the
                // user, a hook or a bare `Bash` allow.
                let text = command.trim();
                self.command_rules(text, f);
                // A shell runs the lines and list elements before a syntax error, so deny and
                // ask also see each piece between control operators, as best the text shows.
                for piece in text.split(['\n', ';', '&', '|']) {
                    let piece = piece.split_whitespace().collect::<Vec<_>>().join(" ");
                    if !piece.is_empty() && piece != text {
                        self.command_rules(&piece, f);
                    }
                }
                if f.allow.is_none() {
                    f.guard = Some(Guard::Opaque(e.to_string()));
                }
            }
        }
    }

    /// Deny and ask rules for one command form; returns the form's rule keys, for the allow
    /// list.
    pub(super) fn command_rules(&self, form: &str, f: &mut Facts) -> FormKeys<'_> {
        let keys = self.commands.keys(form);
        f.deny(
            self.commands
                .first(&self.deny, RuleKind::Deny, &keys, form, false),
        );
        f.ask(
            self.commands
                .first(&self.ask, RuleKind::Ask, &keys, form, false),
        );
        keys
    }

    pub(super) fn commands_facts(&self, analysed: &Analysed, start_cwd: &Path, f: &mut Facts) {
        let parsed = &analysed.parsed;
        let mut cwd = start_cwd.to_path_buf();
        let mut cd_elsewhere = false;
        let mut all_covered = true;
        let mut needs_edit_mode = false;
        let mut allow_hit: Hit = None;
        let tool_allow = f.allow;
        let has_git = analysed.has_git;
        for (cmd, prep) in parsed.commands.iter().zip(&analysed.prepared) {
            let stripped = &cmd.words[prep.off..];
            let allow_form = &prep.allow_form;
            let raw_form = &prep.raw_form;
            let mut allow_keys = None;
            for (n, form) in prep.forms.iter().enumerate() {
                let keys = self.command_rules(form, f);
                if n == 0 {
                    // `forms[0]` is the allow form; its keys serve the allow list below.
                    allow_keys = Some(keys);
                }
            }
            let allow_keys = allow_keys.unwrap_or_else(|| self.commands.keys(&prep.allow_form));

            let program = stripped.first().map(|p| bash::basename(p)).unwrap_or("");
            // The files a program reads, whatever program it is (the recognised readers of
            // spec 2.4 and every other one taking paths): `Read` deny and ask rules apply to
            // them, and one outside the working directories (that no `Read` allow rule
            // covers) is approved only by a rule naming the whole command, as Claude Code
            // asks about a read-only command's paths outside them.
            let mut outside = false;
            for a in reads::read_args(stripped) {
                // Braces and unquoted globs name other files than the word shows (`.{env,}`,
                // `.e*`): each file they expand to is checked, as bash would pass it.
                let globbed = stripped
                    .iter()
                    .position(|w| std::ptr::eq(w.as_str(), a))
                    .map_or_else(
                        || a.contains(['*', '?', '[']),
                        |i| cmd.globbed.get(prep.off + i).copied().unwrap_or(false),
                    );
                let Some(words) = reads::brace_expand(a, MAX_EXPANSION) else {
                    outside = true;
                    continue;
                };
                for w in &words {
                    let mut names = Vec::new();
                    if globbed && w.contains(['*', '?', '[']) {
                        match paths::expand_glob(&paths::join(w, &cwd, &self.home), GLOB_ENTRIES) {
                            Some(found) => names.extend(
                                found
                                    .iter()
                                    .map(|p| self.spellings(paths::normalise(p), p, false)),
                            ),
                            None => outside = true,
                        }
                    }
                    if names.is_empty() {
                        names.push(self.arg_spellings(w, &cwd));
                    }
                    for n in &names {
                        f.deny(n.any_hit(|p| self.deny.read_path(p)));
                        f.ask(n.any_hit(|p| self.ask.read_path(p)));
                        outside |= !n.all(|p| self.inside(p))
                            && n.all_hit(|p| self.allow.read_path(p)).is_none();
                    }
                }
                outside |= a.contains(['$', '`']);
            }
            // `git show REV:path` and friends print a file's committed content.
            let mut history = false;
            if program == "git" {
                for a in bash::git_read_paths(stripped) {
                    let names = self.arg_spellings(&a, &cwd);
                    f.deny(names.any_hit(|p| self.deny.read_path(p)));
                    f.ask(names.any_hit(|p| self.ask.read_path(p)));
                }
                history = self.history_may_hold_denied(stripped, &cwd);
            }
            // Files written by name (`tee`, `sed -i`, `perl -i`, `install`, a target
            // directory option) are edits, like a redirect's target.
            for a in bash::written_files(stripped) {
                let names = self.arg_spellings(a, &cwd);
                f.deny(names.any_hit(|q| first(self.deny.edit_path(q), self.deny.read_path(q))));
                f.ask(names.any_hit(|q| self.ask.edit_path(q)));
                if let Some(q) = names.find(paths::is_protected) {
                    f.guard = Some(Guard::Protected(q.to_path_buf()));
                }
            }
            if matches!(program, "rm" | "rmdir")
                && let Some(why) = self.critical_removal(stripped, cmd, &cwd)
            {
                f.guard = Some(Guard::Critical(why));
            }

            // Coverage for allow: a rule, the read-only set, or acceptEdits.
            let exact_only = prep.exact_only || outside || history;
            let safe_env = prep.safe_env;
            let rule = if safe_env {
                let by_raw = if raw_form == allow_form {
                    None
                } else {
                    self.commands
                        .command(&self.allow, RuleKind::Allow, raw_form, exact_only)
                };
                let by_allow = self.commands.first(
                    &self.allow,
                    RuleKind::Allow,
                    &allow_keys,
                    allow_form,
                    exact_only,
                );
                first(by_allow, by_raw)
            } else {
                None
            };
            let mut covered = rule.is_some();
            if rule.is_some() && allow_hit.is_none() {
                allow_hit = rule;
            }
            if !covered && safe_env && !exact_only && !prep.dynamic_program && !prep.fed_by_xargs {
                if self.read_only(stripped, cmd, &cwd, cd_elsewhere && has_git) {
                    covered = true;
                } else if self.accept_edits_command(stripped, cmd, &cwd, f) {
                    covered = true;
                    needs_edit_mode = true;
                }
            }
            if program == "cd" {
                match stripped.get(1) {
                    Some(t) if !cmd.dynamic => {
                        let next = paths::resolve(t, &cwd, &self.home);
                        if next != cwd {
                            cd_elsewhere = true;
                        }
                        cwd = next;
                    }
                    _ => cd_elsewhere = true,
                }
            }
            for r in &cmd.redirects {
                match self.redirect_cover(r, &cwd, f) {
                    Cover::Rule(h) => {
                        if allow_hit.is_none() {
                            allow_hit = h;
                        }
                    }
                    Cover::Edit => needs_edit_mode = true,
                    Cover::Free => {}
                    Cover::None => all_covered = false,
                }
            }
            all_covered &= covered;
        }
        for r in &parsed.orphan_redirects {
            match self.redirect_cover(r, &cwd, f) {
                Cover::Rule(h) => allow_hit = first(allow_hit, h),
                Cover::Edit => needs_edit_mode = true,
                Cover::Free => {}
                Cover::None => all_covered = false,
            }
        }
        if tool_allow.is_some() {
            return;
        }
        if all_covered {
            if needs_edit_mode {
                f.auto = Some(Auto::Edit);
            } else if let Some(h) = allow_hit {
                f.allow = Some(h);
            } else {
                f.auto = Some(Auto::ReadOnly);
            }
        }
    }

    fn read_only(
        &self,
        words: &[String],
        cmd: &SimpleCommand,
        cwd: &Path,
        cd_then_git: bool,
    ) -> bool {
        let Some(p) = words.first() else { return false };
        if p.contains('/') || !bash::read_only_flags_ok(words) {
            return false;
        }
        if p == "git" {
            // `cd elsewhere && git …` and `git -C dir` act on another repository.
            return !cd_then_git
                && bash::git_dir_option(words).is_none()
                && !cmd.dynamic
                && self.inside(cwd);
        }
        if bash::NON_PATH_ARGS.contains(&p.as_str()) {
            return true;
        }
        if cmd.dynamic {
            return false;
        }
        let args = reads::read_args(words);
        if args.is_empty() {
            return self.inside(cwd);
        }
        args.iter().all(|a| {
            let names = self.arg_spellings(a, cwd);
            names.all(|p| self.inside(p)) && names.any_hit(|p| self.deny.read_path(p)).is_none()
        })
    }

    fn accept_edits_command(
        &self,
        words: &[String],
        cmd: &SimpleCommand,
        cwd: &Path,
        f: &mut Facts,
    ) -> bool {
        let Some(p) = words.first() else { return false };
        if !bash::ACCEPT_EDITS_COMMANDS.contains(&p.as_str())
            || cmd.dynamic
            || cmd.globbed.iter().any(|g| *g)
        {
            return false;
        }
        let mut args = if p == "sed" {
            // Only a script that cannot run programs or open other files is an edit.
            match bash::sed_call(words) {
                Some(call) => call.files,
                None => return false,
            }
        } else {
            file_args(words, cmd)
        };
        args.extend(bash::target_dirs(words));
        if args.is_empty() {
            return false;
        }
        let mut ok = true;
        for a in args {
            // `rm link` and `mv link` act on the link itself, but `cp x link`, `touch link`
            // and `sed -i` reach the target; checking both is the safe reading for all.
            // A `sed` without `-i` only reads; `written_files` covers the in-place one.
            let names = self.arg_spellings(a, cwd);
            if p != "sed" {
                f.deny(names.any_hit(|q| first(self.deny.edit_path(q), self.deny.read_path(q))));
                f.ask(names.any_hit(|q| self.ask.edit_path(q)));
                if let Some(q) = names.find(paths::is_protected) {
                    f.guard = Some(Guard::Protected(q.to_path_buf()));
                    ok = false;
                }
            }
            ok &= names.all(|q| self.inside(q));
        }
        ok
    }

    fn redirect_cover(&self, r: &Redirect, cwd: &Path, f: &mut Facts) -> Cover {
        if matches!(
            r.target.as_str(),
            "/dev/null" | "/dev/stdout" | "/dev/stderr" | "/dev/tty"
        ) {
            return Cover::Free;
        }
        // A target the parser could not pin down (an expansion) names no real file, so it
        // is checked as written only.
        let names = if r.unknown {
            Spellings::lexical(paths::resolve(&r.target, cwd, &self.home))
        } else {
            self.arg_spellings(&r.target, cwd)
        };
        if r.write {
            f.deny(names.any_hit(|p| first(self.deny.edit_path(p), self.deny.read_path(p))));
            f.ask(names.any_hit(|p| self.ask.edit_path(p)));
            if r.unknown {
                return Cover::None;
            }
            if let Some(p) = names.find(paths::is_protected) {
                f.guard = Some(Guard::Protected(p.to_path_buf()));
                return Cover::None;
            }
            match names.all_hit(|p| self.allow.edit_path(p)) {
                Some(h) => Cover::Rule(Some(h)),
                None if names.all(|p| self.inside(p)) => Cover::Edit,
                None => Cover::None,
            }
        } else {
            f.deny(names.any_hit(|p| self.deny.read_path(p)));
            f.ask(names.any_hit(|p| self.ask.read_path(p)));
            if r.unknown {
                return Cover::None;
            }
            match names.all_hit(|p| self.allow.read_path(p)) {
                Some(h) => Cover::Rule(Some(h)),
                None if names.all(|p| self.inside(p)) => Cover::Free,
                None => Cover::None,
            }
        }
    }

    /// `rm`/`rmdir` of a critical path (spec 2.6): root, top-level dirs, home, the working
    /// directory and its parents, globs directly under an additional directory, globs under
    /// `"$VAR"/`.
    fn critical_removal(
        &self,
        words: &[String],
        cmd: &SimpleCommand,
        cwd: &Path,
    ) -> Option<String> {
        let off = cmd.words.len() - words.len();
        for (i, a) in words.iter().enumerate().skip(1) {
            if a.starts_with('-') {
                continue;
            }
            let globbed = cmd.globbed.get(off + i).copied().unwrap_or(false);
            let raw = cmd.raw_words.get(off + i).map(String::as_str).unwrap_or("");
            if globbed && (raw.starts_with('$') || raw.starts_with("\"$")) {
                return Some(format!("removing a glob under a variable ({raw})"));
            }
            let target = if globbed {
                let head: String = a
                    .split('/')
                    .take_while(|s| !s.contains(['*', '?', '[']))
                    .collect::<Vec<_>>()
                    .join("/");
                let head = if head.is_empty() && a.starts_with('/') {
                    "/".to_string()
                } else {
                    head
                };
                let dir =
                    paths::resolve(if head.is_empty() { "." } else { &head }, cwd, &self.home);
                if self.extra_dirs.contains(&dir) {
                    return Some(format!(
                        "removing a glob under additional directory {}",
                        dir.display()
                    ));
                }
                dir
            } else {
                paths::resolve(a, cwd, &self.home)
            };
            let depth = target.components().count();
            if depth <= 2
                || target == self.home
                || self
                    .work_dirs
                    .first()
                    .is_some_and(|w| w.starts_with(&target))
            {
                return Some(format!("removing critical path {}", target.display()));
            }
        }
        None
    }
}

enum Cover {
    Rule(Hit),
    Edit,
    Free,
    None,
}
