//! Write-protected paths: a copy before the call, put back after it.
//!
//! Landlock cannot keep `.git/config` unchanged while git works in `.git`: creating
//! `index.lock` there needs the right to create and remove entries in `.git`, and that right
//! also lets a process replace `config` (rename over it) or add a file to `.git/hooks` (it is
//! inherited by every directory below). So a protected path is copied when the process
//! starts and restored once every process of the call has ended; nothing the call did to it
//! outlives the call, which is what matters for files that later, unconfined programs obey.
//!
//! Restoring works inside the directory that held the path when it was copied, through a
//! descriptor kept open since then, and only once the path leads to that same directory
//! without symlinks; so a call (or a concurrent one) that swaps a directory for a symlink
//! cannot make the restore delete or write anything elsewhere. A directory the call moved
//! away and replaced (or swapped for a symlink) is put back: the replacement is moved aside
//! under a `.replaced-by-call-…` name, and the original, found through the descriptor
//! wherever it now is on the same file system, is renamed back into place. An original that
//! was deleted, or moved to another file system, cannot be put back: the protected paths in
//! it are restored into the directory now at its name (rebuilt first when a snapshot holds
//! it whole), and a directory kept only as itself (`.git`) is an error.

use std::collections::BTreeMap;
use std::ffi::{CString, OsStr, OsString};
use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::error::ConfineError;
use crate::policy::{is_pattern, wildcard_match};

#[derive(Debug, PartialEq, Eq)]
enum Node {
    Absent,
    File {
        data: Vec<u8>,
        mode: u32,
    },
    Link(PathBuf),
    Dir {
        mode: u32,
        entries: BTreeMap<OsString, Node>,
    },
    /// A directory protected as an entry: only its identity is kept.
    DirId {
        dev: u64,
        ino: u64,
    },
    /// A socket, fifo or device: kept as is, not restorable.
    Other,
}

/// How much of a protected path is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Depth {
    /// A file's content, or a directory's whole tree.
    Whole,
    /// A file's content, but of a directory only which directory it is (`.git`: a file there
    /// is a pointer to the repository, a directory is the repository itself, far too large to
    /// copy).
    Entry,
}

/// The directory holding a protected path, held open since the copy.
#[derive(Debug)]
struct Parent {
    fd: OwnedFd,
    dev: u64,
    ino: u64,
}

/// One protected path (or pattern) as it was before the call.
#[derive(Debug)]
pub(crate) struct Snapshot {
    /// As the caller gave it (reported back).
    path: PathBuf,
    /// The parent directory with symlinks resolved, or as given when it did not exist.
    parent_path: PathBuf,
    parent: Option<Parent>,
    /// The file (device, inode) that stood where the parent should be, if one did (`.git` as
    /// a file, for `.git/config`): not something the call made, and restored, if changed, by
    /// a snapshot of its own.
    parent_file: Option<(u64, u64)>,
    /// The last component: a name or a pattern.
    name: OsString,
    depth: Depth,
    matches: Vec<(OsString, Node)>,
    /// The directories among `matches` kept only as themselves, held open to put them back.
    dirs: Vec<(OsString, Parent)>,
    limit: u64,
}

/// Opens a directory with no symlink anywhere on the way (openat2 `RESOLVE_NO_SYMLINKS`,
/// Linux 5.6, older than any kernel this crate accepts).
pub(crate) fn open_dir_no_symlinks(path: &Path) -> std::io::Result<OwnedFd> {
    let c = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
    // SAFETY: open_how is plain integers; all-zero is its documented default.
    let mut how: libc::open_how = unsafe { std::mem::zeroed() };
    how.flags = (libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC) as u64;
    how.resolve = libc::RESOLVE_NO_SYMLINKS;
    // SAFETY: `c` is NUL-terminated and `how` a valid open_how of the size passed.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            libc::AT_FDCWD,
            c.as_ptr(),
            &how as *const libc::open_how,
            std::mem::size_of::<libc::open_how>(),
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    let fd = i32::try_from(fd).map_err(|_| std::io::Error::from(std::io::ErrorKind::Other))?;
    // SAFETY: `fd` was just returned by openat2 and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn identity(fd: &OwnedFd) -> std::io::Result<(u64, u64)> {
    let m = std::fs::metadata(proc_path(fd))?;
    Ok((m.dev(), m.ino()))
}

/// A path that names exactly the directory behind `fd`, whatever happened to its name.
fn proc_path(fd: &OwnedFd) -> PathBuf {
    PathBuf::from(format!("/proc/self/fd/{}", fd.as_raw_fd()))
}

/// Deepest directory nesting kept; deeper is treated like too many bytes, so a tree built to
/// exhaust the stack is never walked recursively here.
const MAX_NESTING: usize = 64;

fn read_node(
    path: &Path,
    depth: Depth,
    budget: &mut u64,
    limit: u64,
    named: &Path,
) -> Result<Node, ConfineError> {
    read_nested(path, depth, budget, limit, named, 0)
}

fn read_nested(
    path: &Path,
    depth: Depth,
    budget: &mut u64,
    limit: u64,
    named: &Path,
    nesting: usize,
) -> Result<Node, ConfineError> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Node::Absent),
        Err(e) => return Err(ConfineError::path(named, e)),
    };
    let too_large = || ConfineError::ProtectedTooLarge {
        path: named.to_path_buf(),
        limit,
    };
    let ft = meta.file_type();
    let mode = meta.permissions().mode() & 0o7777;
    if ft.is_symlink() {
        let target = std::fs::read_link(path).map_err(|e| ConfineError::path(named, e))?;
        return Ok(Node::Link(target));
    }
    if ft.is_file() {
        *budget = budget.checked_sub(meta.len()).ok_or_else(too_large)?;
        let data = std::fs::read(path).map_err(|e| ConfineError::path(named, e))?;
        return Ok(Node::File { data, mode });
    }
    if ft.is_dir() && depth == Depth::Entry {
        return Ok(Node::DirId {
            dev: meta.dev(),
            ino: meta.ino(),
        });
    }
    if ft.is_dir() {
        if nesting >= MAX_NESTING {
            return Err(too_large());
        }
        let mut entries = BTreeMap::new();
        for e in std::fs::read_dir(path).map_err(|e| ConfineError::path(named, e))? {
            let e = e.map_err(|e| ConfineError::path(named, e))?;
            *budget = budget.checked_sub(256).ok_or_else(too_large)?;
            let child = read_nested(&e.path(), Depth::Whole, budget, limit, named, nesting + 1)?;
            entries.insert(e.file_name(), child);
        }
        return Ok(Node::Dir { mode, entries });
    }
    Ok(Node::Other)
}

/// Names in `dir` matching `pattern` (a plain name matches itself, present or not).
fn names(dir: &Path, pattern: &OsStr) -> Vec<OsString> {
    if !is_pattern(Path::new(pattern)) {
        return vec![pattern.to_os_string()];
    }
    let mut out: Vec<OsString> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .map(|e| e.file_name())
        .filter(|n| wildcard_match(pattern.as_bytes(), n.as_bytes()))
        .collect();
    out.sort();
    out
}

/// Copies every protected path; `limit` bounds the bytes kept in all.
pub(crate) fn take(paths: &[(PathBuf, Depth)], limit: u64) -> Result<Vec<Snapshot>, ConfineError> {
    let mut budget = limit;
    let mut out = Vec::new();
    for (p, depth) in paths {
        if !p.is_absolute() {
            return Err(ConfineError::Relative(p.clone()));
        }
        let (Some(parent_given), Some(name)) = (p.parent(), p.file_name()) else {
            return Err(ConfineError::Relative(p.clone()));
        };
        let mut parent_file = None;
        let (parent_path, parent) = match crate::realpath::canonicalize(parent_given) {
            Ok(real) => match open_dir_no_symlinks(&real) {
                Ok(fd) => {
                    let (dev, ino) = identity(&fd).map_err(|e| ConfineError::path(&real, e))?;
                    (real, Some(Parent { fd, dev, ino }))
                }
                Err(e) if e.raw_os_error() == Some(libc::ENOTDIR) => {
                    parent_file = std::fs::symlink_metadata(&real)
                        .ok()
                        .map(|m| (m.dev(), m.ino()));
                    (real, None)
                }
                Err(e) => return Err(ConfineError::path(&real, e)),
            },
            Err(_) => (parent_given.to_path_buf(), None),
        };
        let mut matches = Vec::new();
        let mut dirs = Vec::new();
        if let Some(par) = &parent {
            let base = proc_path(&par.fd);
            for n in names(&base, name) {
                let node = read_node(&base.join(&n), *depth, &mut budget, limit, p)?;
                if let Node::DirId { dev, ino } = node
                    && let Ok(fd) = open_dir_no_symlinks(&parent_path.join(&n))
                    && identity(&fd).ok() == Some((dev, ino))
                {
                    dirs.push((n.clone(), Parent { fd, dev, ino }));
                }
                matches.push((n, node));
            }
        }
        out.push(Snapshot {
            path: p.clone(),
            parent_path,
            parent,
            parent_file,
            name: name.to_os_string(),
            depth: *depth,
            matches,
            dirs,
            limit,
        });
    }
    Ok(out)
}

/// A fresh name next to `name` for a replacement moved out of the way.
fn aside_name(name: &OsStr) -> OsString {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let mut out = name.to_os_string();
    out.push(format!(
        ".replaced-by-call-{}-{}-{nanos:x}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    out
}

fn remove(path: &Path) -> std::io::Result<()> {
    // remove_dir_all never follows symlinks inside the tree it removes.
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => std::fs::remove_dir_all(path),
        Ok(_) => std::fs::remove_file(path),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

fn create(path: &Path, node: &Node) -> std::io::Result<()> {
    match node {
        Node::Absent | Node::Other | Node::DirId { .. } => Ok(()),
        Node::File { data, mode } => {
            // create_new never follows a symlink planted at `path`.
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(*mode)
                .open(path)?;
            f.write_all(data)?;
            f.set_permissions(std::fs::Permissions::from_mode(*mode))
        }
        Node::Link(target) => std::os::unix::fs::symlink(target, path),
        Node::Dir { mode, entries } => {
            std::fs::DirBuilder::new().mode(0o700).create(path)?;
            for (name, child) in entries {
                create(&path.join(name), child)?;
            }
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(*mode))
        }
    }
}

impl Snapshot {
    /// The protected path (or pattern) as the caller gave it.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    fn fail(&self, reason: impl Into<String>) -> ConfineError {
        ConfineError::RestoreFailed {
            path: self.path.clone(),
            reason: reason.into(),
        }
    }

    /// Puts the path back as it was; returns whether anything had changed.
    pub(crate) fn restore(&self) -> Result<bool, ConfineError> {
        let Some(par) = &self.parent else {
            return self.clear_new_parent();
        };
        // The path must lead, without symlinks, to the directory copied from: if it was
        // replaced, the original goes back first.
        let now = open_dir_no_symlinks(&self.parent_path)
            .and_then(|fd| identity(&fd))
            .ok();
        let mut changed = false;
        let mut adopted = None;
        if now != Some((par.dev, par.ino)) {
            changed = true;
            if !self.put_back(&self.parent_path, par)? {
                // The original is gone (deleted, or copied away): restore into the directory
                // now at its path, which a shallower snapshot may already have rebuilt, or
                // into a fresh one.
                let fd = match open_dir_no_symlinks(&self.parent_path) {
                    Ok(fd) => fd,
                    Err(_) => {
                        remove(&self.parent_path).map_err(|e| self.fail(e.to_string()))?;
                        std::fs::DirBuilder::new()
                            .mode(0o755)
                            .create(&self.parent_path)
                            .map_err(|e| self.fail(e.to_string()))?;
                        open_dir_no_symlinks(&self.parent_path)
                            .map_err(|e| self.fail(e.to_string()))?
                    }
                };
                adopted = Some(fd);
            }
        }
        let base = proc_path(adopted.as_ref().unwrap_or(&par.fd));
        for (n, node) in &self.matches {
            let p = base.join(n);
            let mut budget = self.limit;
            let current = read_node(&p, self.depth, &mut budget, self.limit, &self.path).ok();
            if *node == Node::Other || current.as_ref() == Some(node) {
                continue;
            }
            if let Node::DirId { .. } = node {
                let Some((_, orig)) = self.dirs.iter().find(|(m, _)| m == n) else {
                    return Err(self.fail(format!(
                        "{} was replaced, and the original was not held open to put it back",
                        self.parent_path.join(n).display()
                    )));
                };
                if !self.put_back(&self.parent_path.join(n), orig)? {
                    return Err(self.fail(format!(
                        "{} was replaced, and the original was deleted (the replacement was moved aside)",
                        self.parent_path.join(n).display()
                    )));
                }
                changed = true;
                continue;
            }
            if self.depth == Depth::Entry
                && *node == Node::Absent
                && matches!(current, Some(Node::DirId { .. }))
            {
                // A directory created by the call (`git init`): its protected contents are
                // covered by their own entries.
                continue;
            }
            changed = true;
            remove(&p).map_err(|e| self.fail(e.to_string()))?;
            create(&p, node).map_err(|e| self.fail(e.to_string()))?;
        }
        // A pattern also covers names that did not exist before: remove new matches.
        for n in names(&base, &self.name) {
            if !self.matches.iter().any(|(m, _)| *m == n) {
                changed = true;
                remove(&base.join(&n)).map_err(|e| self.fail(e.to_string()))?;
            }
        }
        Ok(changed)
    }

    /// Puts the directory `orig` back at `at` (which held it when copied): whatever is at
    /// `at` now is moved aside, then `orig` is renamed back from wherever it is. Returns
    /// false, leaving `at` as it is, when the original no longer exists anywhere this can
    /// reach (deleted, or moved to another file system).
    fn put_back(&self, at: &Path, orig: &Parent) -> Result<bool, ConfineError> {
        let fail = |why: String| self.fail(format!("{} was replaced: {why}", at.display()));
        let (Some(above), Some(name)) = (at.parent(), at.file_name()) else {
            return Err(fail("it has no parent directory".into()));
        };
        let above_fd = open_dir_no_symlinks(above)
            .map_err(|e| fail(format!("cannot open {}: {e}", above.display())))?;
        let base = proc_path(&above_fd);
        let now = std::fs::read_link(proc_path(&orig.fd))
            .map_err(|e| fail(format!("cannot find the original: {e}")))?;
        let deleted = now.as_os_str().as_bytes().ends_with(b" (deleted)");
        let same = std::fs::symlink_metadata(&now)
            .is_ok_and(|m| m.is_dir() && m.dev() == orig.dev && m.ino() == orig.ino);
        if deleted || !same {
            return Ok(false);
        }
        match std::fs::symlink_metadata(base.join(name)) {
            Ok(_) => {
                let aside = aside_name(name);
                std::fs::rename(base.join(name), base.join(&aside))
                    .map_err(|e| fail(format!("cannot move the replacement aside: {e}")))?;
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(fail(e.to_string())),
        }
        std::fs::rename(&now, base.join(name)).map_err(|e| {
            fail(format!(
                "cannot move the original back from {}: {e} (the replacement was moved aside)",
                now.display()
            ))
        })?;
        Ok(true)
    }

    /// The parent did not exist before the call: whatever the call put there under a
    /// protected name goes, and a symlink in the parent's place goes whole.
    fn clear_new_parent(&self) -> Result<bool, ConfineError> {
        match std::fs::symlink_metadata(&self.parent_path) {
            Err(_) => Ok(false),
            Ok(m) if m.is_dir() => {
                let fd = open_dir_no_symlinks(&self.parent_path)
                    .map_err(|e| self.fail(format!("{}: {e}", self.parent_path.display())))?;
                let base = proc_path(&fd);
                let mut changed = false;
                for n in names(&base, &self.name) {
                    let p = base.join(&n);
                    let is_dir = std::fs::symlink_metadata(&p).is_ok_and(|m| m.is_dir());
                    if std::fs::symlink_metadata(&p).is_err()
                        || (self.depth == Depth::Entry && is_dir)
                    {
                        continue;
                    }
                    changed = true;
                    remove(&p).map_err(|e| self.fail(e.to_string()))?;
                }
                Ok(changed)
            }
            // A file stood there before (`.git` as a pointer): its own snapshot restores it.
            Ok(_) if self.parent_file.is_some() => Ok(false),
            Ok(_) => {
                remove(&self.parent_path).map_err(|e| self.fail(e.to_string()))?;
                Ok(true)
            }
        }
    }
}
