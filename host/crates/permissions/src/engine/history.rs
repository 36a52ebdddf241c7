//! Git commands that print file content from a repository's history or index: `git log -p`
//! (and `--patch`, `-U`, `-S`/`-G`, `-L`, …), `git show`, `git diff`, `git grep`,
//! `git cat-file -p`, `git blame --contents`, `git stash show -p`, `git reflog -p`.
//!
//! The text of such a command does not say which files it prints: a commit in the history
//! may hold a file a `Read` rule denies (a `.env` committed once and removed since), and
//! Warden does not read the history to find out. So when some `Read` deny or ask rule could
//! match a file of the repository, these commands are not approved automatically: neither by
//! the read-only set nor by an allow rule with a wildcard (`Bash(git log *)`); a rule naming
//! the whole command, a bare `Bash` allow, a hook or the user still can. A command limited
//! by pathspecs (the words after `--`) that no such rule can match inside, as
//! `git log -p -- src/main.rs` under `Read(./.env)`, runs as before; a pathspec naming a denied
//! path is denied outright (see `bash::git_read_paths`).
//!
//! A rule counts when its literal part (`/proj/.env` of `Read(./.env)`, `/proj` of
//! `Read(.env)`, which matches at any depth) lies inside the repository or contains it. The
//! repository is the nearest directory holding `.git` above the command's directory, found
//! with one `lstat` per level; when there is none, every rule counts. Listing names
//! (`git log --stat`, `git diff --name-only`, `git show --stat HEAD`) prints no content and
//! is not affected.

use std::path::{Path, PathBuf};

use super::Permissions;
use crate::bash;
use crate::paths;
use crate::reads::{self, GitContent};
use crate::rules::{RuleSet, Spec};

impl Permissions {
    /// Whether `words` (a `git` command run in `cwd`) may print the content of a file a
    /// `Read` deny or ask rule covers.
    pub(super) fn history_may_hold_denied(&self, words: &[String], cwd: &Path) -> bool {
        let content = reads::git_content(words);
        if content == GitContent::None {
            return false;
        }
        // `git -C DIR` works in DIR; `--git-dir`/`--work-tree` name a repository anywhere.
        let elsewhere = words
            .iter()
            .any(|w| w.starts_with("--git-dir") || w.starts_with("--work-tree"));
        let cwd = &bash::git_dir_option(words)
            .map_or_else(|| cwd.to_path_buf(), |d| paths::resolve(d, cwd, &self.home));
        let root = if elsewhere {
            None
        } else {
            repository_root(cwd)
        };
        let prefixes: Vec<PathBuf> = [&self.deny, &self.ask]
            .into_iter()
            .flat_map(read_rule_prefixes)
            .filter(|l| root.as_ref().is_none_or(|r| comparable(l, r)))
            .collect();
        if prefixes.is_empty() {
            return false;
        }
        match content {
            GitContent::Limited(specs) => !specs.iter().all(|s| {
                // Pathspecs are globs unless literal, and `:(…)` magic changes their meaning.
                !s.is_empty() && !s.starts_with(':') && !s.contains(['*', '?', '[', '\\']) && {
                    let p = paths::resolve(s, cwd, &self.home);
                    prefixes.iter().all(|l| !comparable(l, &p))
                }
            }),
            _ => true,
        }
    }
}

/// The literal leading directories of every `Read` rule's globs in `set`.
fn read_rule_prefixes(set: &RuleSet) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for r in &set.rules {
        if let Spec::Path { edit: false, globs } = &r.spec {
            for g in globs {
                // A relative glob has no anchor to compare: it may match anywhere.
                let lit = paths::literal_prefix(g).map_or_else(|| PathBuf::from("/"), |(l, _)| l);
                out.push(paths::normalise(&lit));
            }
        }
    }
    out
}

/// One path lies inside the other (or they are the same).
fn comparable(a: &Path, b: &Path) -> bool {
    a.starts_with(b) || b.starts_with(a)
}

/// The nearest directory at or above `cwd` holding `.git` (a directory, or a file pointing
/// elsewhere for worktrees and submodules).
fn repository_root(cwd: &Path) -> Option<PathBuf> {
    if !cwd.is_absolute() {
        return None;
    }
    cwd.ancestors()
        .find(|d| std::fs::symlink_metadata(d.join(".git")).is_ok())
        .map(Path::to_path_buf)
}
