//! The existing paths deny rules take away below some roots, listed when a program starts so
//! it can be confined by the kernel (Landlock), which works on paths rather than patterns.
//!
//! Most rules name their paths outright (`Read(./.env)`, `Edit(./.git/**)`) and cost one
//! `lstat` each. Only a rule with a wildcard before its last component (`Read(.env)`, which
//! matches at any depth, or `Read(**/*.pem)`) makes the directories below its literal part
//! be searched, and that search is bounded: past [`WALK_LIMIT`] entries it fails rather than
//! start a program with denied files it never found.

use std::collections::BTreeSet;
use std::fs::FileType;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use globset::{GlobSet, GlobSetBuilder};

use super::Permissions;
use super::types::PermissionsError;
use crate::paths;
use crate::rules::{self, RuleSet, Spec};

/// How many directory entries one [`Permissions::denied_paths`] call may visit.
const WALK_LIMIT: usize = 200_000;

/// Existing paths that rules take away, found below some roots when a process starts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeniedPaths {
    /// Neither readable nor writable (Read deny rules; with `ask_denies`, Read ask rules too).
    pub read: Vec<PathBuf>,
    /// Readable but not writable (Edit deny rules, and Edit ask rules with `ask_denies`),
    /// minus those already in `read`.
    pub write: Vec<PathBuf>,
}

/// The globs of one kind of rule (Read or Edit), as the engine matches them.
struct Matcher {
    /// The rule globs themselves.
    exact: GlobSet,
    /// `X` for every glob `X/**`: a directory matching `X` has nothing inside it the rules
    /// leave alone, so it is denied as a whole rather than entry by entry. Only the listing
    /// of the directory itself is taken away beyond what the rules say.
    under: GlobSet,
}

impl Matcher {
    fn hits(&self, p: &Path, plain_file: bool) -> bool {
        self.exact.is_match(p) || (!plain_file && self.under.is_match(p))
    }
}

/// Where to look for one glob's matches: `start`, and entries at most `depth` levels below
/// it (`None`: any depth).
#[derive(Debug, Clone)]
struct Walk {
    start: PathBuf,
    depth: Option<usize>,
    /// The rule that asked for it, named when the search is too large.
    rule: String,
    /// The root the walk stays in, for checking that no link leads to `start`.
    root: PathBuf,
}

/// The rules' globs and the walks they need, collected from the deny (and ask) lists.
struct Plan {
    exact: [GlobSetBuilder; 2],
    under: [GlobSetBuilder; 2],
    walks: Vec<Walk>,
}

/// `X` for `X/**`, repeatedly; the glob itself otherwise.
fn strip_recursive(mut g: &str) -> &str {
    while let Some(s) = g.strip_suffix("/**") {
        g = if s.is_empty() { "/" } else { s };
    }
    g
}

impl Plan {
    fn new() -> Self {
        Plan {
            exact: [GlobSetBuilder::new(), GlobSetBuilder::new()],
            under: [GlobSetBuilder::new(), GlobSetBuilder::new()],
            walks: Vec::new(),
        }
    }

    fn add(&mut self, set: &RuleSet, roots: &[PathBuf]) {
        for r in &set.rules {
            let Spec::Path { edit, globs } = &r.spec else {
                continue;
            };
            let k = usize::from(*edit);
            for g in globs {
                // A glob globset rejects never matches in the engine either.
                let Ok(glob) = rules::path_glob(g) else {
                    continue;
                };
                self.exact[k].add(glob);
                let base = strip_recursive(g);
                if base.len() != g.len()
                    && let Ok(glob) = rules::path_glob(base)
                {
                    self.under[k].add(glob);
                }
                let Some((lit, rest)) = paths::literal_prefix(base) else {
                    continue;
                };
                let lit = paths::normalise(&lit);
                let depth = if rest.iter().any(|c| c.contains("**")) {
                    None
                } else {
                    Some(rest.len())
                };
                for root in roots {
                    let walk = if lit.starts_with(root) {
                        (lit.clone(), depth)
                    } else if root.starts_with(&lit) {
                        // The root sits inside what the glob may match: look only there,
                        // with the levels the glob has left below it.
                        let d0 = root.components().count() - lit.components().count();
                        (root.clone(), depth.map(|d| d.saturating_sub(d0)))
                    } else {
                        continue;
                    };
                    self.walks.push(Walk {
                        start: walk.0,
                        depth: walk.1,
                        rule: r.text.clone(),
                        root: root.clone(),
                    });
                }
            }
        }
    }

    /// Drops walks another one already covers: the same start searched at least as deep, or
    /// a start below one searched at any depth.
    fn merged_walks(&mut self) -> Vec<Walk> {
        let deeper = |a: Option<usize>, b: Option<usize>| match (a, b) {
            (None, _) => true,
            (Some(_), None) => false,
            (Some(a), Some(b)) => a >= b,
        };
        let mut walks = std::mem::take(&mut self.walks);
        // Shallower starts first, and the deepest search first among equal starts.
        walks.sort_by(|a, b| {
            a.start
                .cmp(&b.start)
                .then_with(|| match (a.depth, b.depth) {
                    (None, None) => std::cmp::Ordering::Equal,
                    (None, Some(_)) => std::cmp::Ordering::Less,
                    (Some(_), None) => std::cmp::Ordering::Greater,
                    (Some(x), Some(y)) => y.cmp(&x),
                })
        });
        let mut out: Vec<Walk> = Vec::new();
        for w in walks {
            let covered = out.iter().any(|o| {
                (o.start == w.start && deeper(o.depth, w.depth))
                    || (o.depth.is_none() && w.start.starts_with(&o.start))
            });
            if !covered {
                out.push(w);
            }
        }
        out
    }
}

/// The state of one call: what the rules match, what was found, what the search cost.
struct Search {
    read: Matcher,
    write: Matcher,
    found_read: BTreeSet<PathBuf>,
    found_write: BTreeSet<PathBuf>,
    visited: usize,
    limit: usize,
}

impl Search {
    /// Records `p` if the rules take it away; whether they do.
    fn test(&mut self, p: &Path, ft: FileType) -> bool {
        let plain = ft.is_file();
        if self.read.hits(p, plain) {
            self.found_read.insert(p.to_path_buf());
            true
        } else if self.write.hits(p, plain) {
            self.found_write.insert(p.to_path_buf());
            true
        } else {
            false
        }
    }

    fn walk(&mut self, w: &Walk) -> Result<(), PermissionsError> {
        let unreadable = |dir: &Path, e: std::io::Error| PermissionsError::DeniedPathsUnreadable {
            rule: w.rule.clone(),
            dir: dir.to_path_buf(),
            source: e,
        };
        // A link on the way from the root would take a search outside it; a path the rule
        // names outright is still returned, as the program would reach it that way too.
        if w.depth != Some(0)
            && w.start != w.root
            && w.start
                .ancestors()
                .skip(1)
                .take_while(|a| a.starts_with(&w.root) && *a != w.root)
                .any(|a| std::fs::symlink_metadata(a).is_ok_and(|m| m.is_symlink()))
        {
            return Ok(());
        }
        let meta = match std::fs::symlink_metadata(&w.start) {
            Ok(m) => m,
            Err(e) if gone(&e) => return Ok(()),
            Err(e) => return Err(unreadable(&w.start, e)),
        };
        if self.test(&w.start, meta.file_type()) || !meta.is_dir() || w.depth == Some(0) {
            return Ok(());
        }
        let mut stack = vec![(w.start.clone(), w.depth)];
        while let Some((dir, depth)) = stack.pop() {
            let entries = match std::fs::read_dir(&dir) {
                Ok(e) => e,
                Err(e) if gone(&e) => continue,
                Err(e) => return Err(unreadable(&dir, e)),
            };
            for entry in entries {
                let entry = match entry {
                    Ok(e) => e,
                    Err(e) if gone(&e) => continue,
                    Err(e) => return Err(unreadable(&dir, e)),
                };
                self.visited += 1;
                if self.visited > self.limit {
                    return Err(PermissionsError::DeniedPathsSearchTooLarge {
                        rule: w.rule.clone(),
                        dir: w.start.clone(),
                        limit: self.limit,
                    });
                }
                // The entry's own type: a link is never followed.
                let ft = match entry.file_type() {
                    Ok(t) => t,
                    Err(e) if gone(&e) => continue,
                    Err(e) => return Err(unreadable(&dir, e)),
                };
                let p = entry.path();
                if self.test(&p, ft) {
                    continue;
                }
                let below = depth.map(|d| d.saturating_sub(1));
                if ft.is_dir() && below != Some(0) {
                    stack.push((p, below));
                }
            }
        }
        Ok(())
    }
}

/// Errors that mean the entry is not there for the program either: removed meanwhile, a
/// file where a directory was expected, or a directory these credentials may not list
/// (the program, started with the same credentials, cannot list it either).
fn gone(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        ErrorKind::NotFound | ErrorKind::NotADirectory | ErrorKind::PermissionDenied
    )
}

impl Permissions {
    /// Existing paths the deny rules take away below `roots`, for a process about to be
    /// confined by path (the defaults such as `~/.ssh` are the caller's business).
    ///
    /// `roots`: absolute directories the process may reach (the project, granted dirs),
    /// spelled as the working directories are configured, since rules are matched against
    /// paths lexically. Only paths at or below a root are returned (plus literal rule paths
    /// that are inside a root). A directory that is denied is returned itself and not
    /// descended into; so is a directory all of whose contents a rule denies
    /// (`Read(./secrets/**)` gives `secrets`). Symlinks are never followed while walking (a
    /// symlink entry that matches is returned as itself). With `ask_denies`, ask rules count
    /// as deny rules.
    ///
    /// Rules that name their paths cost one `lstat` per path and no directory listing; a
    /// rule with a wildcard before its last component searches below its literal part, at
    /// most as deep as its pattern reaches. A search larger than 200,000 entries in all is an
    /// error naming the rule, as is a directory that cannot be listed for another reason than
    /// permissions: a caller confining the process should then refuse to start it.
    pub fn denied_paths(
        &self,
        roots: &[PathBuf],
        ask_denies: bool,
    ) -> Result<DeniedPaths, PermissionsError> {
        self.denied_paths_counted(roots, ask_denies, WALK_LIMIT)
            .map(|(d, _)| d)
    }

    /// [`Permissions::denied_paths`] with another entry limit, also returning how many
    /// directory entries were visited. For tests of the search's cost; not a stable API.
    #[doc(hidden)]
    pub fn denied_paths_counted(
        &self,
        roots: &[PathBuf],
        ask_denies: bool,
        limit: usize,
    ) -> Result<(DeniedPaths, usize), PermissionsError> {
        let mut norm = Vec::with_capacity(roots.len());
        for r in roots {
            if !r.is_absolute() {
                return Err(PermissionsError::RelativeRoot { root: r.clone() });
            }
            norm.push(paths::normalise(r));
        }
        let mut plan = Plan::new();
        plan.add(&self.deny, &norm);
        if ask_denies {
            plan.add(&self.ask, &norm);
        }
        let walks = plan.merged_walks();
        let [read_exact, write_exact] = plan.exact.map(build);
        let [read_under, write_under] = plan.under.map(build);
        let mut s = Search {
            read: Matcher {
                exact: read_exact,
                under: read_under,
            },
            write: Matcher {
                exact: write_exact,
                under: write_under,
            },
            found_read: BTreeSet::new(),
            found_write: BTreeSet::new(),
            visited: 0,
            limit,
        };
        for w in &walks {
            s.walk(w)?;
        }
        let read: Vec<PathBuf> = s.found_read.into_iter().collect();
        let write = s
            .found_write
            .into_iter()
            .filter(|p| read.binary_search(p).is_err())
            .collect();
        Ok((DeniedPaths { read, write }, s.visited))
    }
}

fn build(b: GlobSetBuilder) -> GlobSet {
    // Every glob in it compiled on its own; a set of them only fails on size limits, and an
    // empty set then matches nothing, as the engine's own index does.
    b.build().unwrap_or_default()
}
