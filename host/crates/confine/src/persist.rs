//! Files that later, unconfined programs run or obey, kept unwritable by the call.
//!
//! A call's writes must not reach the next `git status` (a repository's `config`, `hooks`,
//! `commondir`), the next session (`.claude/`, `.mcp.json`), the next login shell
//! (`~/.bashrc`) or the next `python` (a virtualenv's `*.pth`). Where the command process has
//! a private mount namespace (see [`hide`](crate::hide)), each such path that exists is bound
//! onto itself read-only there: writing it fails with `EROFS`, and as a mount point it cannot
//! be removed, renamed or replaced (`EBUSY`). Each repository directory (`.git`, and the
//! repositories of its submodules and worktrees) is bound onto itself as it is, so it stays
//! writable for git but cannot be moved away and replaced. Where there is no mount namespace,
//! a read-only path is carved read-only out of the Landlock rules instead (see
//! [`plan`](crate::plan)), except inside a repository directory, where that would stop git
//! from writing its index; those are restored after the call (see
//! [`restore`](crate::restore)).
//!
//! A protected path that does not exist when the call starts cannot be bound: whatever the
//! call creates there is removed after it. A repository the call creates (`git init`, a
//! nested `src/.git`, a new submodule) loses its configuration and hooks after the call, and
//! a new `.git` file (a pointer to a repository) is removed.

use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::error::ConfineError;
use crate::hide::{Mount, Target};
use crate::policy::expand;
use crate::restore::Depth;

/// Entries of a repository directory that git obeys or runs: configuration, hooks, the
/// pointers to another repository, and `info/` (`info/attributes`, `info/exclude`, grafts).
pub(crate) const GIT_READ_ONLY: &[&str] = &[
    "config",
    "config.worktree",
    "hooks",
    "info",
    "commondir",
    "gitdir",
];

/// Directories of a repository directory holding other repository directories.
const GIT_NESTED: &[&str] = &["modules", "worktrees"];

/// Most directory entries one search of a project for repositories and virtualenvs visits;
/// the search stops there (breadth first, so the shallow ones are found).
pub(crate) const WALK_LIMIT: usize = 100_000;

/// Deepest nesting of submodule repositories followed.
const NESTING_LIMIT: usize = 8;

/// What a search of a project found.
#[derive(Debug, Default)]
pub(crate) struct Found {
    /// Repository directories: `.git` directories, and the ones below their `modules/` and
    /// `worktrees/`.
    pub git_dirs: Vec<PathBuf>,
    /// `.git` files (pointers to a repository directory elsewhere).
    pub git_files: Vec<PathBuf>,
    /// `site-packages` directories of virtualenvs.
    pub site_packages: Vec<PathBuf>,
    /// Build outputs and caches not searched: directories holding a `CACHEDIR.TAG` (cargo's
    /// `target`, among others) and `node_modules`.
    pub skipped: BTreeSet<PathBuf>,
}

fn is_real_dir(p: &Path) -> bool {
    std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir())
}

/// Repository directories at and below `g` (submodules, worktrees).
fn nested_git_dirs(g: &Path, nesting: usize, out: &mut Vec<PathBuf>) {
    out.push(g.to_path_buf());
    if nesting >= NESTING_LIMIT {
        return;
    }
    for sub in GIT_NESTED {
        collect_repos(&g.join(sub), nesting + 1, out);
    }
}

/// Repository directories below `dir` (a submodule named `a/b` lives in `modules/a/b`).
fn collect_repos(dir: &Path, nesting: usize, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut children: Vec<PathBuf> = rd.filter_map(Result::ok).map(|e| e.path()).collect();
    children.sort();
    for c in children {
        if !is_real_dir(&c) {
            continue;
        }
        if std::fs::symlink_metadata(c.join("HEAD")).is_ok() {
            nested_git_dirs(&c, nesting, out);
        } else if nesting < NESTING_LIMIT {
            collect_repos(&c, nesting + 1, out);
        }
    }
}

/// Searches `root` for repositories and virtualenvs, breadth first, never following
/// symlinks and never descending into a `.git` directory or a virtualenv. Build outputs and
/// caches are not searched either (they can hold far more entries than the sources): with
/// `skip` given, only those in it, so one the call marked as a cache is searched after it.
pub(crate) fn discover(root: &Path, skip: Option<&BTreeSet<PathBuf>>) -> Found {
    let mut found = Found::default();
    let mut budget = WALK_LIMIT;
    let mut queue = std::collections::VecDeque::from([root.to_path_buf()]);
    while let Some(dir) = queue.pop_front() {
        let Some(listing) = crate::listing::of(&dir) else {
            continue;
        };
        if listing.entries > budget {
            return found;
        }
        budget -= listing.entries;
        if listing.git_dir {
            nested_git_dirs(&dir.join(".git"), 0, &mut found.git_dirs);
        } else if listing.git_file {
            found.git_files.push(dir.join(".git"));
        }
        let venv = listing.venv;
        let cache = listing.cache_tag || dir.file_name().is_some_and(|n| n == "node_modules");
        if venv {
            for lib in ["lib", "lib64"] {
                let Ok(rd) = std::fs::read_dir(dir.join(lib)) else {
                    continue;
                };
                for e in rd.filter_map(Result::ok) {
                    let sp = e.path().join("site-packages");
                    if e.file_name().as_bytes().starts_with(b"python") && is_real_dir(&sp) {
                        found.site_packages.push(sp);
                    }
                }
            }
            continue;
        }
        let skip_it = match skip {
            Some(known) => known.contains(&dir),
            None => cache,
        };
        if skip_it {
            found.skipped.insert(dir);
            continue;
        }
        queue.extend(listing.subdirs.iter().map(|n| dir.join(n)));
    }
    found
}

/// The mounts, copies and carve-outs that keep read-only paths unwritable, and what to check
/// after the call.
#[derive(Debug, Default)]
pub(crate) struct Prepared {
    /// Mounts for the command's namespace (when it has one).
    pub targets: Vec<Target>,
    /// Paths to copy before and restore after the call.
    pub protect: Vec<(PathBuf, Depth)>,
    /// Paths to carve read-only out of the Landlock rules (when there is no namespace).
    pub carve: Vec<PathBuf>,
    /// The search to repeat after the call.
    pub after: After,
}

/// Repositories known before the call, to tell the ones the call created.
#[derive(Debug, Default)]
pub(crate) struct After {
    roots: Vec<PathBuf>,
    skipped: BTreeSet<PathBuf>,
    git_dirs: BTreeSet<PathBuf>,
    git_files: BTreeSet<PathBuf>,
}

/// What the caller asked for, with symlinks in grants resolved.
pub(crate) struct Request<'a> {
    /// Read-only paths, and whether to carve them when there is no namespace.
    pub read_only: &'a [(PathBuf, bool)],
    /// Project roots to search for repositories and virtualenvs.
    pub projects: &'a [PathBuf],
    /// Writable grants, resolved.
    pub writable: &'a [PathBuf],
    /// Whether the command process gets a private mount namespace.
    pub mounts: bool,
}

fn resolve(p: &Path) -> Option<PathBuf> {
    crate::realpath::canonicalize(p).ok()
}

impl Request<'_> {
    fn resolve(&self, p: &Path) -> Option<PathBuf> {
        resolve(p)
    }

    /// Where `p` would be with its parent's symlinks resolved (it need not exist).
    fn resolve_parent(&self, p: &Path) -> Option<PathBuf> {
        let (parent, name) = (p.parent()?, p.file_name()?);
        Some(self.resolve(parent)?.join(name))
    }

    fn in_writable(&self, p: &Path) -> bool {
        self.writable.iter().any(|w| p.starts_with(w))
    }

    pub(crate) fn prepare(&self) -> Result<Prepared, ConfineError> {
        let mut out = Prepared::default();
        for (p, carve) in self.read_only {
            self.read_only_path(p, *carve, &mut out)?;
        }
        let mut roots: Vec<PathBuf> = self
            .projects
            .iter()
            .filter_map(|p| self.resolve(p))
            .filter(|p| self.in_writable(p))
            .collect();
        roots.sort();
        roots.dedup();
        for root in &roots {
            let found = discover(root, None);
            out.after.skipped.extend(found.skipped.iter().cloned());
            for g in &found.git_dirs {
                self.git_dir(g, &mut out)?;
                out.after.git_dirs.insert(g.clone());
            }
            for f in &found.git_files {
                if self.mounts
                    && let Some(t) =
                        Target::with(f, Mount::ReadOnly).map_err(|e| ConfineError::path(f, e))?
                {
                    out.targets.push(t);
                } else {
                    out.protect.push((f.clone(), Depth::Whole));
                }
                out.after.git_files.insert(f.clone());
            }
            for sp in &found.site_packages {
                self.read_only_path(&sp.join("*.pth"), false, &mut out)?;
            }
        }
        out.after.roots = roots;
        Ok(out)
    }

    fn git_dir(&self, g: &Path, out: &mut Prepared) -> Result<(), ConfineError> {
        if !self.in_writable(g) {
            return Ok(());
        }
        match Target::with(g, Mount::Pin).map_err(|e| ConfineError::path(g, e))? {
            Some(t) if self.mounts => out.targets.push(t),
            _ => out.protect.push((g.to_path_buf(), Depth::Entry)),
        }
        for name in GIT_READ_ONLY {
            let p = g.join(name);
            let bound = self.mounts
                && match Target::with(&p, Mount::ReadOnly).map_err(|e| ConfineError::path(&p, e))? {
                    Some(t) => {
                        out.targets.push(t);
                        true
                    }
                    None => false,
                };
            if !bound {
                out.protect.push((p, Depth::Whole));
            }
        }
        Ok(())
    }

    fn read_only_path(
        &self,
        p: &Path,
        carve: bool,
        out: &mut Prepared,
    ) -> Result<(), ConfineError> {
        if !p.is_absolute() {
            return Err(ConfineError::Relative(p.to_path_buf()));
        }
        let Some(lexical) = self.resolve_parent(p) else {
            return Ok(());
        };
        let pattern = crate::policy::is_pattern(p);
        if pattern && self.in_writable(&lexical) {
            // New matches are removed after the call; existing ones are bound below.
            out.protect.push((p.to_path_buf(), Depth::Whole));
        }
        for e in expand(p) {
            let Some(parent_resolved) = self.resolve_parent(&e) else {
                continue;
            };
            let meta = std::fs::symlink_metadata(&e);
            if meta.as_ref().is_ok_and(|m| m.file_type().is_symlink()) && !pattern {
                // The link itself must stay; what it points to is protected where it is.
                if self.in_writable(&parent_resolved) {
                    out.protect.push((e.clone(), Depth::Entry));
                }
            }
            let Some(real) = self.resolve(&e) else {
                if !pattern && self.in_writable(&parent_resolved) {
                    out.protect.push((e.clone(), Depth::Whole));
                }
                continue;
            };
            if !self.in_writable(&real) {
                continue;
            }
            let is_dir = is_real_dir(&real);
            if self.mounts
                && let Some(t) = Target::with(&real, Mount::ReadOnly)
                    .map_err(|e| ConfineError::path(&real, e))?
            {
                out.targets.push(t);
                // A writable grant inside stays writable.
                for w in self
                    .writable
                    .iter()
                    .filter(|w| *w != &real && w.starts_with(&real))
                {
                    if let Some(t) =
                        Target::with(w, Mount::Writable).map_err(|e| ConfineError::path(w, e))?
                    {
                        out.targets.push(t);
                    }
                }
                continue;
            }
            if carve {
                out.carve.push(real.clone());
            }
            if !pattern {
                // Carving cannot keep the entries of a directory from being removed or
                // replaced (the rights to do so are inherited from the carved tree above),
                // so its contents are restored after the call, unless a writable grant is
                // inside or it is too large to copy: then only moving it away is undone.
                let whole = !is_dir
                    || (!self.writable.iter().any(|w| w.starts_with(&real))
                        && size_below(&real, WHOLE_DIR_LIMIT));
                out.protect
                    .push((real, if whole { Depth::Whole } else { Depth::Entry }));
            }
        }
        Ok(())
    }
}

/// Largest read-only directory copied whole when carving.
const WHOLE_DIR_LIMIT: u64 = 4 << 20;

/// Whether the files below `dir` hold fewer than `limit` bytes (symlinks not followed).
fn size_below(dir: &Path, limit: u64) -> bool {
    let mut left = limit;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.filter_map(Result::ok) {
            let Ok(m) = e.metadata() else { continue };
            let cost = if m.is_dir() {
                stack.push(e.path());
                256
            } else {
                m.len().max(256)
            };
            let Some(l) = left.checked_sub(cost) else {
                return false;
            };
            left = l;
        }
    }
    true
}

/// Opens a directory with no symlink on the way; `None` when that fails.
fn open_dir(p: &Path) -> Option<std::os::fd::OwnedFd> {
    crate::restore::open_dir_no_symlinks(p).ok()
}

fn remove_at(base: &Path, name: &OsStr) -> std::io::Result<bool> {
    let p = base.join(name);
    match std::fs::symlink_metadata(&p) {
        Ok(m) if m.is_dir() => std::fs::remove_dir_all(&p).map(|()| true),
        Ok(_) => std::fs::remove_file(&p).map(|()| true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
    }
}

impl After {
    /// Takes configuration and hooks out of repositories the call created, and removes
    /// `.git` files it created; returns the paths changed.
    pub(crate) fn check(&self) -> Result<Vec<PathBuf>, ConfineError> {
        let mut changed = Vec::new();
        for root in &self.roots {
            let found = discover(root, Some(&self.skipped));
            for g in found
                .git_dirs
                .iter()
                .filter(|g| !self.git_dirs.contains(*g))
            {
                if neutralise(g).map_err(|e| ConfineError::RestoreFailed {
                    path: g.clone(),
                    reason: e.to_string(),
                })? {
                    changed.push(g.clone());
                }
            }
            for f in found
                .git_files
                .iter()
                .filter(|f| !self.git_files.contains(*f))
            {
                let (Some(dir), Some(name)) = (f.parent(), f.file_name()) else {
                    continue;
                };
                let Some(fd) = open_dir(dir) else { continue };
                let base = PathBuf::from(format!(
                    "/proc/self/fd/{}",
                    std::os::fd::AsRawFd::as_raw_fd(&fd)
                ));
                if remove_at(&base, name).map_err(|e| ConfineError::RestoreFailed {
                    path: f.clone(),
                    reason: e.to_string(),
                })? {
                    changed.push(f.clone());
                }
            }
        }
        Ok(changed)
    }
}

/// Removes what git would obey in a repository directory the call created; a worktree's
/// pointer to its main repository is reset to the only value git writes there.
fn neutralise(g: &Path) -> std::io::Result<bool> {
    let Some(fd) = open_dir(g) else {
        return Ok(false);
    };
    let base = PathBuf::from(format!(
        "/proc/self/fd/{}",
        std::os::fd::AsRawFd::as_raw_fd(&fd)
    ));
    let worktree = g
        .parent()
        .and_then(Path::file_name)
        .is_some_and(|n| n == "worktrees");
    let mut changed = false;
    for name in GIT_READ_ONLY {
        if *name == "commondir" && worktree {
            let p = base.join(name);
            if std::fs::read(&p).ok().as_deref() != Some(b"../..\n".as_slice()) {
                remove_at(&base, OsStr::new(name))?;
                std::fs::write(&p, "../..\n")?;
                changed = true;
            }
            continue;
        }
        changed |= remove_at(&base, OsStr::new(name))?;
    }
    Ok(changed)
}

/// Lines of a configuration file (git's or cargo's) that may hold a credential: a key or
/// section naming a token, password, secret or authorisation header, or a URL with a user
/// and password in it.
fn secret_line(line: &str) -> bool {
    let l = line.to_ascii_lowercase();
    let words = [
        "token",
        "password",
        "passwd",
        "secret",
        "extraheader",
        "authorization",
        "credential-alias",
    ];
    if words.iter().any(|w| l.contains(w)) {
        return true;
    }
    // scheme://user:password@host
    l.match_indices("://").any(|(i, _)| {
        let rest = &l[i + 3..];
        let end = rest.find(['/', ' ', '"', '\'']).unwrap_or(rest.len());
        rest[..end].contains('@')
            && rest[..end]
                .split('@')
                .next()
                .is_some_and(|u| u.contains(':'))
    })
}

/// `text` without the lines that may hold credentials (and the continuation lines of a
/// multi-line value started on one).
pub(crate) fn sanitise(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut skipping_until: Option<&str> = None;
    for line in text.split_inclusive('\n') {
        if let Some(end) = skipping_until {
            if line.contains(end) {
                skipping_until = None;
            }
            continue;
        }
        if secret_line(line) {
            for q in ["\"\"\"", "'''"] {
                if line.matches(q).count() % 2 == 1 {
                    skipping_until = Some(q);
                }
            }
            if line.trim_end().ends_with('\\') {
                skipping_until = Some("\n");
            }
            continue;
        }
        out.push_str(line);
    }
    out
}

/// Largest configuration file copied without its credentials; a larger one is denied.
const SANITISE_LIMIT: u64 = 1 << 20;

/// Copies without credentials of the files that have any.
#[derive(Debug, Default)]
pub(crate) struct Sanitised {
    /// Mounts of the copies over the originals (with a mount namespace).
    pub targets: Vec<Target>,
    /// Originals to deny (without one).
    pub deny: Vec<PathBuf>,
    /// Environment for the command (without one: `GIT_CONFIG_GLOBAL`).
    pub env: Vec<(&'static str, PathBuf)>,
    /// The copies, granted for reading one by one: Landlock looks for a rule on the copy
    /// itself, not on the directory holding it, when it is reached through its mount.
    pub read: Vec<PathBuf>,
}

/// Writes a copy without credentials of each file in `paths` that has any into `scratch`
/// (created by `make_scratch` on first need).
pub(crate) fn sanitised_copies(
    paths: &[PathBuf],
    mounts: bool,
    scratch: &mut Option<PathBuf>,
    make_scratch: impl Fn() -> Result<PathBuf, ConfineError>,
) -> Result<Sanitised, ConfineError> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut out = Sanitised::default();
    for (i, p) in paths.iter().enumerate() {
        let Some(real) = resolve(p) else { continue };
        let Ok(meta) = std::fs::metadata(&real) else {
            continue;
        };
        if !meta.is_file() {
            continue;
        }
        if meta.len() > SANITISE_LIMIT {
            out.deny.push(real);
            continue;
        }
        let bytes = std::fs::read(&real).map_err(|e| ConfineError::path(&real, e))?;
        let text = String::from_utf8_lossy(&bytes);
        let clean = sanitise(&text);
        if clean.as_bytes() == bytes.as_slice() {
            continue;
        }
        let dir = match scratch {
            Some(d) => d.clone(),
            None => scratch.insert(make_scratch()?).clone(),
        };
        let name = p.file_name().unwrap_or(OsStr::new("config"));
        let mut copy_name = std::ffi::OsString::from(format!("{i}-"));
        copy_name.push(name);
        let copy = dir.join(copy_name);
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o444)
            .open(&copy)
            .map_err(|e| ConfineError::path(&copy, e))?;
        std::io::Write::write_all(&mut f, clean.as_bytes())
            .map_err(|e| ConfineError::path(&copy, e))?;
        let source = std::ffi::CString::new(copy.as_os_str().as_bytes())
            .map_err(|_| ConfineError::Relative(copy.clone()))?;
        out.read.push(copy.clone());
        if mounts
            && let Some(t) = Target::with(&real, Mount::Replace(source))
                .map_err(|e| ConfineError::path(&real, e))?
        {
            out.targets.push(t);
            continue;
        }
        if name == ".gitconfig" {
            out.env.push(("GIT_CONFIG_GLOBAL", copy));
        }
        out.deny.push(real);
    }
    Ok(out)
}

/// Every mount for the command, ancestors first: on one path a cover (a denied path) wins;
/// nothing is mounted inside a covered directory.
pub(crate) fn merge(mut all: Vec<Target>) -> Vec<Target> {
    let rank = |t: &Target| match t.mount {
        Mount::Cover => 0,
        Mount::Replace(_) => 1,
        Mount::ReadOnly => 2,
        Mount::Pin => 3,
        Mount::Writable => 4,
    };
    all.sort_by(|a, b| a.path.cmp(&b.path).then(rank(a).cmp(&rank(b))));
    all.dedup_by(|later, earlier| later.path == earlier.path);
    let covered: Vec<PathBuf> = all
        .iter()
        .filter(|t| t.dir && t.mount == Mount::Cover)
        .map(|t| PathBuf::from(OsStr::from_bytes(t.path.as_bytes())))
        .collect();
    all.retain(|t| {
        let p = Path::new(OsStr::from_bytes(t.path.as_bytes()));
        !covered.iter().any(|d| d != p && p.starts_with(d))
    });
    all
}

#[cfg(test)]
mod tests {
    use super::sanitise;

    #[test]
    fn credentials_are_taken_out_of_configuration() {
        let git = "[user]\n\tname = Me\n[http]\n\textraHeader = Authorization: Bearer abc\n\
                   [url \"https://me:ghp_abc@github.com/\"]\n\tinsteadOf = https://github.com/\n\
                   [github]\n\ttoken = abc\n[core]\n\teditor = vi\n";
        let s = sanitise(git);
        assert!(!s.contains("abc"), "{s}");
        assert!(s.contains("name = Me") && s.contains("editor = vi"), "{s}");
        let cargo = "[registry]\ntoken = \"abc\"\n[registries.x]\nindex = \"https://x\"\n\
                     token = \"\"\"\nabc\n\"\"\"\n[build]\njobs = 2\n";
        let s = sanitise(cargo);
        assert!(!s.contains("abc"), "{s}");
        assert!(
            s.contains("jobs = 2") && s.contains("index = \"https://x\""),
            "{s}"
        );
        assert_eq!(sanitise("[build]\njobs = 2\n"), "[build]\njobs = 2\n");
    }
}
