//! File accesses: the names a path goes by once symlinks are resolved (spec 2.4), and the
//! facts Read and Edit rules, protected paths and the working directories give about them.

use std::path::{Path, PathBuf};

use super::spelling::{Spellings, Target};
use super::types::Access;
use super::{Auto, Facts, Guard, Permissions};
use crate::paths;
use crate::rules::first;

/// What a file tool does to its path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum FileOp {
    /// `Read` rules.
    Read,
    /// `Edit` rules; a `Read` deny also blocks it.
    Write,
    /// `Edit` rules only: a `Read` deny does not cover NotebookEdit (2.4).
    Notebook,
}

impl From<Access> for FileOp {
    fn from(a: Access) -> FileOp {
        match a {
            Access::Read => FileOp::Read,
            Access::Write => FileOp::Write,
        }
    }
}

impl Permissions {
    /// The names `lexical` goes by: itself and, if symlinks send it elsewhere, its target.
    ///
    /// `raw` is the same path before lexical normalisation, as the program will hand it to
    /// the kernel: a Bash argument keeps its `..`, which climbs from a link's target. Only
    /// file checks call this, so URL and MCP decisions never touch the filesystem; the cost
    /// is one `symlink_metadata` per path component up to the first missing one, a link is
    /// read only when one is actually found (see [`paths::real_path`]), and unless `fresh`
    /// a resolution from the last millisecond is reused (see [`LinkCache`]).
    pub(super) fn spellings(&self, lexical: PathBuf, raw: &Path, fresh: bool) -> Spellings {
        if !raw.is_absolute() {
            // Without an absolute working directory there is nothing meaningful to resolve
            // against; rules see the path as written, as before.
            return Spellings::lexical(lexical);
        }
        let target = match (!fresh).then(|| self.link_cache.get(raw)).flatten() {
            Some(t) => t,
            None => {
                let t = self.target(&lexical, raw);
                self.link_cache.put(raw, &t);
                t
            }
        };
        Spellings { lexical, target }
    }

    /// Resolves `raw` on the filesystem and names its target, if that is not `lexical`.
    fn target(&self, lexical: &Path, raw: &Path) -> Target {
        let anchors = self.real_anchors();
        let start = anchors
            .iter()
            .find(|(lex, _)| raw.starts_with(lex))
            .map(|(lex, real)| (lex.as_path(), real.as_path()));
        let Some(real) = paths::real_path(raw, start) else {
            return Target::Unknown;
        };
        // The deepest resolved anchor containing the target gives it back its configured
        // name, so `./` rules keep matching in a project reached through a linked path, and a
        // file named by the project's resolved path still meets the rules written for it.
        let renamed = anchors
            .iter()
            .filter(|(lex, r)| lex != r && real.path.starts_with(r))
            .max_by_key(|(_, r)| r.components().count())
            .and_then(|(lex, r)| {
                let rest = real.path.strip_prefix(r).ok()?;
                Some(if rest.as_os_str().is_empty() {
                    lex.clone()
                } else {
                    lex.join(rest)
                })
            });
        if real.path == lexical {
            return match renamed {
                Some(n) if n != lexical => Target::Elsewhere(vec![n]),
                _ => Target::Same,
            };
        }
        // The configured name is kept even when it is the written path: it is a name of the
        // target, so an allow matching the written path also matches the target.
        let mut names = vec![real.path];
        if let Some(n) = renamed
            && !names.contains(&n)
        {
            names.push(n);
        }
        Target::Elsewhere(names)
    }

    /// The resolved forms of the working directories and home, looked up once on the first
    /// file check: they are fixed for the session, and knowing them lets a path below one be
    /// resolved from there (fewer lookups) and renamed back to its configured form.
    /// Directories that do not exist yet are left out, so paths below them are resolved from
    /// the root each time.
    fn real_anchors(&self) -> &[(PathBuf, PathBuf)] {
        self.real_anchors.get_or_init(|| {
            let home = paths::normalise(&self.home);
            let mut out: Vec<(PathBuf, PathBuf)> = Vec::new();
            for d in self.work_dirs.iter().chain([&home]) {
                if !d.is_absolute() || out.iter().any(|(l, _)| l == d) {
                    continue;
                }
                if let Some(r) = paths::real_path(d, None)
                    && r.exists
                {
                    out.push((d.clone(), r.path));
                }
            }
            // Deepest first, so a path in a project under home starts from the project.
            out.sort_by_key(|(l, _)| std::cmp::Reverse(l.components().count()));
            out
        })
    }

    /// Names of a Bash file argument `a` relative to the command's `cwd`.
    pub(super) fn arg_spellings(&self, a: &str, cwd: &Path) -> Spellings {
        let raw = paths::join(a, cwd, &self.home);
        self.spellings(paths::normalise(&raw), &raw, false)
    }

    pub(super) fn path_facts(&self, op: FileOp, names: &Spellings, f: &mut Facts) {
        match op {
            FileOp::Read => {
                f.deny(names.any_hit(|p| self.deny.read_path(p)));
                f.ask(names.any_hit(|p| self.ask.read_path(p)));
                f.allow = first(f.allow, names.all_hit(|p| self.allow.read_path(p)));
                f.auto = Some(if names.all(|p| self.inside(p)) {
                    Auto::ReadOnly
                } else {
                    Auto::None
                });
            }
            FileOp::Write | FileOp::Notebook => {
                let read_deny = op == FileOp::Write;
                f.deny(names.any_hit(|p| {
                    let edit = self.deny.edit_path(p);
                    if read_deny {
                        first(edit, self.deny.read_path(p))
                    } else {
                        edit
                    }
                }));
                f.ask(names.any_hit(|p| self.ask.edit_path(p)));
                if let Some(p) = names.find(paths::is_protected) {
                    f.guard = Some(Guard::Protected(p.to_path_buf()));
                }
                f.allow = first(f.allow, names.all_hit(|p| self.allow.edit_path(p)));
                f.auto = Some(if names.all(|p| self.inside(p)) {
                    Auto::Edit
                } else {
                    Auto::None
                });
            }
        }
    }
}
