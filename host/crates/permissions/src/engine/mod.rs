//! The permission engine: the compiled state of a session ([`Permissions`]) and how the facts
//! gathered about one call become a [`Ruling`].
//!
//! Each part of the engine lives in a child module and depends only on the modules listed
//! before it (and on this one), so dependencies between files point one way:
//!
//! | module | owns |
//! |---|---|
//! | `types` | mode, access kinds, options, warnings, errors |
//! | `program` | program facts of a parsed command line, independent of rules |
//! | `spelling` | the names a file goes by after symlinks, and rule hits over them |
//! | `cache` | parsed command lines by text, recent symlink resolutions by path |
//! | this module | the compiled state, the facts of one call, and the final ruling |
//! | `compile` | settings and flags → compiled rules ([`Permissions::from_settings`]) |
//! | `files` | symlink resolution and the facts of file accesses |
//! | `history` | git commands that print file content from history, held back while a `Read` deny or ask rule could match a file of the repository |
//! | `bash_facts` | the facts of a Bash command line: rules per command, the files each command reads, read-only and edit coverage, redirects, critical removals |
//! | `decide` | text-level decisions for tool calls ([`Permissions::decide`]) |
//! | `check` | capability-level checks ([`Permissions::check_path`], [`Permissions::check_exec`], [`Permissions::check_url`]); writes to protected paths need an allow rule naming them |
//! | `denied` | the existing paths deny rules take away below some roots, for confining a process by path ([`Permissions::denied_paths`]) |

use std::path::{Path, PathBuf};

use crate::decision::{Decision, Ruling};
use crate::paths;
use crate::rules::{self, CommandIndex, Hit, RuleSet, first};

mod bash_facts;
mod cache;
mod check;
mod compile;
mod decide;
mod denied;
mod files;
mod history;
mod program;
mod spelling;
pub(crate) mod types;

use cache::{LinkCache, ParseCache};
pub use denied::DeniedPaths;
use types::{Mode, PermissionsError, Warning};

#[derive(Debug, Clone)]
struct Source {
    name: String,
}

/// Compiled permission state for a session. Construct once; every check is read-only.
#[derive(Debug)]
pub struct Permissions {
    mode: Mode,
    cwd: PathBuf,
    home: PathBuf,
    work_dirs: Vec<PathBuf>,
    extra_dirs: Vec<PathBuf>,
    deny: RuleSet,
    ask: RuleSet,
    allow: RuleSet,
    commands: CommandIndex,
    sources: Vec<Source>,
    warnings: Vec<Warning>,
    bypass_disabled: bool,
    parse_cache: ParseCache,
    /// `(configured, resolved)` forms of the working directories and home, deepest first;
    /// see [`Permissions::real_anchors`].
    real_anchors: std::sync::OnceLock<Vec<(PathBuf, PathBuf)>>,
    link_cache: LinkCache,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Auto {
    None,
    /// Runs without asking in every mode.
    ReadOnly,
    /// Runs without asking in `acceptEdits`.
    Edit,
}

#[derive(Debug, Clone)]
enum Guard {
    /// Removal of a critical path: never auto-approved.
    Critical(String),
    /// Write to a protected path: only bypass approves.
    Protected(PathBuf),
    /// Needs the user by nature.
    Interactive,
    /// Command the engine could not analyse: allow rules cannot approve it.
    Opaque(String),
}

#[derive(Debug, Default)]
struct Facts {
    deny: Hit,
    ask: Hit,
    allow: Hit,
    guard: Option<Guard>,
    auto: Option<Auto>,
}

impl Facts {
    fn deny(&mut self, h: Hit) {
        self.deny = first(self.deny, h);
    }
    fn ask(&mut self, h: Hit) {
        self.ask = first(self.ask, h);
    }
}

impl Permissions {
    /// Startup warnings (spec 2.8), each naming the settings file it came from.
    pub fn warnings(&self) -> &[Warning] {
        &self.warnings
    }

    /// The active mode.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Switches mode (for example on the user's request); bypass is refused when disabled.
    pub fn set_mode(&mut self, mode: Mode) -> Result<(), PermissionsError> {
        if mode == Mode::BypassPermissions && self.bypass_disabled {
            return Err(PermissionsError::BypassDisabled {
                file: "settings".into(),
            });
        }
        self.mode = mode;
        Ok(())
    }

    /// The launch directory followed by additional directories.
    pub fn working_dirs(&self) -> &[PathBuf] {
        &self.work_dirs
    }

    /// Whether a bare-name deny rule removes `tool` from the model's tool list
    /// (`EndConversation` is never removed).
    pub fn is_tool_removed(&self, tool: &str) -> bool {
        let tool = rules::canonical_tool(tool);
        tool != "EndConversation" && self.deny.tool_level(tool).is_some()
    }

    fn inside(&self, p: &Path) -> bool {
        self.work_dirs.iter().any(|d| paths::is_within(p, d))
    }

    fn finish(&self, f: Facts, hook: Option<Decision>) -> Ruling {
        let dont_ask = self.mode == Mode::DontAsk;
        if let Some(i) = f.deny {
            return self.ruled(Decision::Deny, &self.deny, i, "denied by a deny rule");
        }
        if let Some(i) = f.ask {
            return if dont_ask {
                self.ruled(
                    Decision::Deny,
                    &self.ask,
                    i,
                    "an ask rule matches and dontAsk mode denies prompts",
                )
            } else {
                self.ruled(Decision::Ask, &self.ask, i, "an ask rule matches")
            };
        }
        if hook == Some(Decision::Ask) {
            return self.prompt("a PreToolUse hook asked for confirmation");
        }
        match &f.guard {
            Some(Guard::Critical(why)) => {
                return self.prompt(&format!("{why}: never approved automatically"));
            }
            Some(Guard::Interactive) => return self.prompt("this tool always needs the user"),
            Some(Guard::Protected(p)) if self.mode != Mode::BypassPermissions => {
                return self.prompt(&format!(
                    "{} is a protected path; writes to it are never approved automatically",
                    p.display()
                ));
            }
            _ => {}
        }
        if self.mode == Mode::BypassPermissions {
            return self.plain(Decision::Allow, "bypassPermissions mode");
        }
        if hook == Some(Decision::Allow) {
            return self.plain(Decision::Allow, "approved by a PreToolUse hook");
        }
        if let Some(Guard::Opaque(why)) = &f.guard {
            return self.prompt(&format!("cannot analyse this command ({why})"));
        }
        if let Some(i) = f.allow {
            return self.ruled(Decision::Allow, &self.allow, i, "allowed by an allow rule");
        }
        match f.auto {
            Some(Auto::ReadOnly) => {
                return self.plain(Decision::Allow, "read-only inside the working directories");
            }
            Some(Auto::Edit) if self.mode == Mode::AcceptEdits => {
                return self.plain(
                    Decision::Allow,
                    "acceptEdits mode: edit inside the working directories",
                );
            }
            _ => {}
        }
        match self.mode {
            Mode::Plan => self.plain(Decision::Ask, "plan mode: only reads run without asking"),
            _ => self.prompt("no rule allows this"),
        }
    }

    fn prompt(&self, reason: &str) -> Ruling {
        if self.mode == Mode::DontAsk {
            self.plain(
                Decision::Deny,
                &format!("{reason}; dontAsk mode denies anything that would prompt"),
            )
        } else {
            self.plain(Decision::Ask, reason)
        }
    }

    fn plain(&self, decision: Decision, reason: &str) -> Ruling {
        Ruling {
            decision,
            reason: reason.to_string(),
            rule: None,
            source: None,
        }
    }

    fn ruled(&self, decision: Decision, set: &RuleSet, i: usize, reason: &str) -> Ruling {
        let r = &set.rules[i];
        Ruling {
            decision,
            reason: format!("{reason}: {}", r.text),
            rule: Some(r.text.clone()),
            source: self.sources.get(r.source).map(|s| s.name.clone()),
        }
    }
}
