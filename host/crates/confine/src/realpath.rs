//! Resolving a path as the kernel sees it, cheaply.
//!
//! Every call resolves each of its grants and denials (dozens of paths) before the process
//! starts. `std::fs::canonicalize` (glibc's `realpath`) issues one `readlink` per component,
//! each a new walk from the root; opening the path once with `O_PATH` and reading the
//! descriptor's name back from `/proc/self/fd` walks it once, whatever its depth, and a
//! missing path fails at the first lookup.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::ffi::{CString, OsString};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

thread_local! {
    /// Answers given during one call's preparation (see [`Memo`]), by path.
    static MEMO: RefCell<Option<HashMap<PathBuf, Result<PathBuf, i32>>>> =
        const { RefCell::new(None) };
}

/// While it lives, [`canonicalize`] on this thread answers a path it resolved before from
/// memory: one call's preparation resolves the project, the devices and the home several
/// times over (for the rules, the read-only paths, the copies), and they are one instant's
/// answers. Made at the start of a preparation and dropped at its end, so no answer outlives
/// the call it was made for.
pub(crate) struct Memo(());

impl Memo {
    pub(crate) fn start() -> Memo {
        MEMO.with(|m| *m.borrow_mut() = Some(HashMap::new()));
        Memo(())
    }
}

impl Drop for Memo {
    fn drop(&mut self) {
        MEMO.with(|m| *m.borrow_mut() = None);
    }
}

/// The path with every symlink resolved, as [`std::fs::canonicalize`] gives it (and with the
/// same errors for a missing path), from memory while a [`Memo`] lives.
pub(crate) fn canonicalize(path: &Path) -> io::Result<PathBuf> {
    let known = MEMO.with(|m| m.borrow().as_ref().and_then(|m| m.get(path).cloned()));
    if let Some(r) = known {
        return r.map_err(io::Error::from_raw_os_error);
    }
    let r = resolve_now(path);
    MEMO.with(|m| {
        if let Some(m) = m.borrow_mut().as_mut()
            && let Some(kept) = match &r {
                Ok(p) => Some(Ok(p.clone())),
                Err(e) => e.raw_os_error().map(Err),
            }
        {
            m.insert(path.to_path_buf(), kept);
        }
    });
    r
}

/// [`canonicalize`] without memory. Falls back to [`std::fs::canonicalize`] where `/proc` is
/// not mounted or the name read back is not a plain absolute path (a deleted entry, a
/// pseudo-file).
fn resolve_now(path: &Path) -> io::Result<PathBuf> {
    let c = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: `c` is NUL-terminated; O_PATH opens the entry (following symlinks, as
    // canonicalize does) without reading anything.
    let fd = unsafe { libc::open(c.as_ptr(), libc::O_PATH | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` was just returned by open(2) and is owned by nobody else.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    match std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd())) {
        Ok(p) if p.is_absolute() && !p.as_os_str().as_bytes().ends_with(b" (deleted)") => Ok(p),
        _ => std::fs::canonicalize(path),
    }
}

/// Fewest paths sharing a parent for the parent to be listed rather than each path opened.
const LIST_FROM: usize = 4;

/// Which of many paths sharing a parent exist, told by one listing of the parent: the home
/// directory alone is named by some fifty toolchain, start-up and secret paths, most of which
/// do not exist, and one `getdents` costs less than fifty failed `open`s. Made fresh for each
/// call, so nothing is remembered from one call to the next.
#[derive(Debug, Default)]
pub(crate) struct Presence {
    shared: HashMap<PathBuf, usize>,
    listings: HashMap<PathBuf, Option<HashSet<OsString>>>,
}

impl Presence {
    /// For `paths` (their parents are counted; only parents named often are listed).
    pub(crate) fn of<'a>(paths: impl IntoIterator<Item = &'a Path>) -> Presence {
        let mut shared: HashMap<PathBuf, usize> = HashMap::new();
        for p in paths {
            if let Some(parent) = p.parent() {
                *shared.entry(parent.to_path_buf()).or_default() += 1;
            }
        }
        Presence {
            shared,
            listings: HashMap::new(),
        }
    }

    /// Whether `p` is certainly missing: its parent, listed, has no entry of its name, in any
    /// case (a case-folding directory opens `.ENV` as `.env`). `false` when that is not known:
    /// the parent is named by few paths or cannot be listed, or the name is not ASCII (its
    /// folding is the file system's).
    pub(crate) fn absent(&mut self, p: &Path) -> bool {
        let (Some(parent), Some(name)) = (p.parent(), p.file_name()) else {
            return false;
        };
        let Some(name) = name.to_str().filter(|n| n.is_ascii()) else {
            return false;
        };
        if self.shared.get(parent).copied().unwrap_or(0) < LIST_FROM {
            return false;
        }
        let names = self
            .listings
            .entry(parent.to_path_buf())
            .or_insert_with(|| {
                std::fs::read_dir(parent)
                    .ok()?
                    .map(|e| e.map(|e| e.file_name().to_ascii_lowercase()))
                    .collect::<Result<HashSet<OsString>, _>>()
                    .ok()
            });
        names
            .as_ref()
            .is_some_and(|n| !n.contains(std::ffi::OsStr::new(&name.to_ascii_lowercase())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_memo_answers_from_memory_only_while_it_lives() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir(root.join("a")).unwrap();
        let link = root.join("link");
        std::os::unix::fs::symlink(root.join("a"), &link).unwrap();
        {
            let _memo = Memo::start();
            assert_eq!(canonicalize(&link).unwrap(), root.join("a"));
            std::fs::remove_file(&link).unwrap();
            // The same instant's answer.
            assert_eq!(canonicalize(&link).unwrap(), root.join("a"));
            let missing = canonicalize(&root.join("missing")).unwrap_err();
            assert_eq!(missing.raw_os_error(), Some(libc::ENOENT));
            assert_eq!(
                canonicalize(&root.join("missing"))
                    .unwrap_err()
                    .raw_os_error(),
                Some(libc::ENOENT)
            );
        }
        // Gone with the memo.
        assert!(canonicalize(&link).is_err());
    }

    #[test]
    fn presence_is_told_by_one_listing_of_a_shared_parent() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join("here"), "x").unwrap();
        std::fs::create_dir(root.join("sub")).unwrap();
        std::os::unix::fs::symlink("missing", root.join("dangling")).unwrap();
        let names = [
            "here",
            "sub",
            "dangling",
            "gone",
            "also-gone",
            "HERE",
            "h\u{e9}re",
        ];
        let paths: Vec<PathBuf> = names.iter().map(|n| root.join(n)).collect();
        let mut p = Presence::of(paths.iter().map(PathBuf::as_path));
        let absent: Vec<&str> = names
            .iter()
            .zip(&paths)
            .filter(|(_, q)| p.absent(q))
            .map(|(n, _)| *n)
            .collect();
        // An entry that exists (even a dangling link) is never called absent, nor one of the
        // same name in another case, nor a name whose folding is not ASCII's.
        assert_eq!(absent, ["gone", "also-gone"]);
        // A parent named by few paths is not listed: nothing is known.
        let mut few = Presence::of([root.join("gone").as_path()]);
        assert!(!few.absent(&root.join("gone")));
        // A parent that cannot be listed tells nothing either.
        let under_file: Vec<PathBuf> = (0..5)
            .map(|i| root.join("here").join(i.to_string()))
            .collect();
        let mut bad = Presence::of(under_file.iter().map(PathBuf::as_path));
        assert!(!bad.absent(&under_file[0]));
    }

    #[test]
    fn agrees_with_the_standard_library() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(root.join("a/b/c")).unwrap();
        std::fs::write(root.join("a/b/c/f"), "x").unwrap();
        std::os::unix::fs::symlink(root.join("a/b"), root.join("link")).unwrap();
        std::os::unix::fs::symlink("b/c/f", root.join("a/rel")).unwrap();
        std::os::unix::fs::symlink(root.join("missing"), root.join("dangling")).unwrap();
        std::os::unix::fs::symlink("loop", root.join("loop")).unwrap();
        for p in [
            root.join("a/b/c/f"),
            root.join("link/c/../c/f"),
            root.join("a/rel"),
            root.join("a/./b//c"),
            root.clone(),
            PathBuf::from("/"),
            PathBuf::from("/proc/self"),
            root.join("missing"),
            root.join("a/b/c/f/under-a-file"),
            root.join("dangling"),
            root.join("loop"),
        ] {
            let ours = canonicalize(&p).map_err(|e| e.raw_os_error());
            let std = std::fs::canonicalize(&p).map_err(|e| e.raw_os_error());
            assert_eq!(ours, std, "{}", p.display());
        }
    }
}
