//! Capability-level checks: what a WebAssembly guest may touch while a call runs (a file, a
//! program with its argv, a URL), under the same rules as the tools.

use std::path::Path;

use super::Permissions;
use super::decide::host_of;
use super::program::Analysed;
use super::types::Access;
use super::{Facts, Guard};
use crate::bash;
use crate::decision::{Decision, Ruling};
use crate::paths;
use crate::rules::{RuleKind, first};
use crate::shell::{ParsedCommand, SimpleCommand};

impl Permissions {
    /// Checks a filesystem access by a guest. `path` must be absolute.
    /// A `Read` deny also blocks writes.
    ///
    /// As for the file tools, an existing symlink on the way is resolved (spec 2.4): deny
    /// and ask rules apply if they match the path or its target, an allow needs both.
    ///
    /// A write to a protected path (`.git/…`, `.claude/…`, `.mcp.json`, shell profiles; see
    /// spec 2.6) is denied in every mode, `bypassPermissions` included, unless an `Edit`
    /// allow rule that names it matches (`Edit(./.git/config)`, `Edit(./.git/**)`; a rule
    /// merely covering it, such as `Edit(./**)`, does not count). Deny and ask rules still
    /// win over that allow. The text-level [`Permissions::decide`] keeps asking instead, as
    /// Claude Code does: there a person sees the call, while a guest's write happens unseen.
    pub fn check_path(&self, access: Access, path: &Path) -> Ruling {
        let mut f = Facts::default();
        let path = paths::normalise(path);
        let names = self.spellings(path.clone(), &path, true);
        self.path_facts(access.into(), &names, &mut f);
        if let Some(Guard::Protected(p)) = &f.guard {
            match names.all_hit(|n| self.allow.protected_edit_path(n)) {
                Some(i) => {
                    f.guard = None;
                    f.allow = Some(i);
                }
                // A matching deny rule gives the better reason.
                None if f.deny.is_none() => {
                    return self.plain(
                        Decision::Deny,
                        &format!(
                            "{} is a protected path: guests may not write it unless an allow rule names it, such as {}",
                            p.display(),
                            self.edit_rule_for(p)
                        ),
                    );
                }
                None => {}
            }
        }
        self.finish(f, None)
    }

    /// An `Edit` rule naming exactly `p`, anchored the way a settings file would write it.
    fn edit_rule_for(&self, p: &Path) -> String {
        let within = |base: &Path| {
            p.strip_prefix(base)
                .ok()
                .filter(|rest| !rest.as_os_str().is_empty())
        };
        let spec = if let Some(rest) = within(&self.cwd) {
            format!("./{}", rest.display())
        } else if let Some(rest) = within(&self.home) {
            format!("~/{}", rest.display())
        } else {
            format!("/{}", p.display())
        };
        format!("Edit({spec})")
    }

    /// Checks running a program with `argv` (never a shell string) in `cwd`.
    ///
    /// The program is reduced to its basename, wrappers and `env` are looked through, and
    /// shell `-c` code is parsed and checked command by command. Inline code for other
    /// interpreters (`python -c`, `node -e`, …) cannot be analysed and is refused unless an
    /// allow rule matches the whole command.
    pub fn check_exec(&self, argv: &[String], cwd: &Path) -> Ruling {
        let Some(prog) = argv.first() else {
            return self.plain(Decision::Deny, "empty argv");
        };
        let mut words: Vec<String> = Vec::with_capacity(argv.len());
        words.push(bash::basename(prog).to_string());
        words.extend(argv[1..].iter().cloned());
        let mut f = Facts::default();
        f.deny(self.deny.tool_level("Bash"));
        f.ask(self.ask.tool_level("Bash"));
        f.allow = self.allow.tool_level("Bash");
        // Peel wrappers and env until the real program shows.
        loop {
            let stripped = bash::strip_wrappers(&words);
            let stripped = match bash::strip_env(stripped) {
                Some(inner) => inner,
                None => stripped,
            };
            if stripped.len() == words.len() {
                break;
            }
            let mut next: Vec<String> = stripped.to_vec();
            if let Some(p) = next.first_mut() {
                *p = bash::basename(p).to_string();
            }
            words = next;
        }
        let cwd = paths::normalise(cwd);
        if let Some(code) = bash::shell_code(&words) {
            self.bash_facts(code, &cwd, &mut f);
            return self.finish(f, None);
        }
        if bash::has_inline_code(&words) {
            let full = words.join(" ");
            let keys = self.command_rules(&full, &mut f);
            f.allow = first(
                f.allow,
                self.commands
                    .first(&self.allow, RuleKind::Allow, &keys, &full, false),
            );
            if f.deny.is_none() && f.ask.is_none() && f.allow.is_none() {
                return self.plain(Decision::Deny, "inline interpreter code cannot be checked; add an allow rule for this exact command to permit it");
            }
            f.guard = Some(Guard::Opaque("inline interpreter code".into()));
            if f.allow.is_some() {
                f.guard = None;
            }
            return self.finish(f, None);
        }
        let cmd = SimpleCommand {
            raw_words: words.clone(),
            globbed: vec![false; words.len()],
            words,
            ..SimpleCommand::default()
        };
        let parsed = ParsedCommand {
            commands: vec![cmd],
            ..ParsedCommand::default()
        };
        self.commands_facts(&Analysed::new(parsed), &cwd, &mut f);
        self.finish(f, None)
    }

    /// Checks fetching `url` against `WebFetch` rules.
    pub fn check_url(&self, url: &str) -> Ruling {
        let Some(host) = host_of(url) else {
            return self.plain(Decision::Deny, "not an http(s) URL with a host");
        };
        let mut f = Facts::default();
        f.deny(self.deny.tool_level("WebFetch"));
        f.ask(self.ask.tool_level("WebFetch"));
        f.allow = self.allow.tool_level("WebFetch");
        f.deny(self.deny.domain(host));
        f.ask(self.ask.domain(host));
        f.allow = first(f.allow, self.allow.domain(host));
        self.finish(f, None)
    }
}
