//! Resolving a path as the kernel sees it, cheaply.
//!
//! Every call resolves each of its grants and denials (dozens of paths) before the process
//! starts. `std::fs::canonicalize` (glibc's `realpath`) issues one `readlink` per component,
//! each a new walk from the root; opening the path once with `O_PATH` and reading the
//! descriptor's name back from `/proc/self/fd` walks it once, whatever its depth, and a
//! missing path fails at the first lookup.

use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::CString;
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
