//! Each call's private temporary directory, kept for the process's next call once emptied.
//!
//! A directory made and removed per call is not free: on ext4 (the usual `/tmp` when it is
//! not a tmpfs) each `mkdir` searches the inode table past the inodes deleted in the last
//! seconds, so a burst of calls (a hook on every tool call) makes every later `mkdir`
//! slower. A finished call's directory is emptied instead, its extended attributes removed,
//! its mode and times reset, and handed to the next call of this process with the same
//! parent; at most [`KEPT`] are kept (the oldest removed first), and those left when the
//! process exits are removed then. A directory that cannot be emptied, or is no longer the one handed out (another
//! owner, a symlink, another inode), is never handed out again.
//!
//! The next call sees an empty directory it owns with mode 0700, as a fresh one. What no
//! reset reaches is the inode's own flags (`chattr` flags an owner may set, such as
//! `nodump`), which carry no file content.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::error::ConfineError;

/// Most emptied directories kept per process (one per call running at the same time).
const KEPT: usize = 8;

/// A directory handed out: where it is and which inode it was.
#[derive(Debug)]
pub(crate) struct TempDir {
    pub path: PathBuf,
    parent: PathBuf,
    dev: u64,
    ino: u64,
}

static KEPT_DIRS: Mutex<Vec<TempDir>> = Mutex::new(Vec::new());

/// A directory for a call: an emptied one of an earlier call below `parent`, else a new one.
pub(crate) fn take(parent: &Path) -> Result<TempDir, ConfineError> {
    let reused = KEPT_DIRS.lock().ok().and_then(|mut kept| {
        let i = kept.iter().position(|d| d.parent == parent)?;
        Some(kept.swap_remove(i))
    });
    if let Some(d) = reused
        && same(&d)
    {
        return Ok(d);
    }
    let path = crate::make_temp(parent)?;
    let meta = std::fs::symlink_metadata(&path).map_err(|e| ConfineError::path(&path, e))?;
    Ok(TempDir {
        path,
        parent: parent.to_path_buf(),
        dev: meta.dev(),
        ino: meta.ino(),
    })
}

/// Whether `d` is still the directory handed out, owned by this process's user.
fn same(d: &TempDir) -> bool {
    // SAFETY: geteuid has no failure mode.
    let uid = unsafe { libc::geteuid() };
    std::fs::symlink_metadata(&d.path).is_ok_and(|m| {
        m.file_type().is_dir() && m.dev() == d.dev && m.ino() == d.ino && m.uid() == uid
    })
}

/// Takes back a finished call's directory: empties and resets it and keeps it for the next
/// call, or removes it. Call it only once every process of the call has ended.
pub(crate) fn give_back(d: TempDir) -> std::io::Result<()> {
    if same(&d)
        && reset(&d.path).is_ok()
        && let Ok(mut kept) = KEPT_DIRS.lock()
    {
        remove_kept_at_exit();
        // The oldest goes first: its parent may be one no call uses any more.
        if kept.len() >= KEPT {
            let oldest = kept.remove(0);
            let _ = std::fs::remove_dir_all(&oldest.path);
        }
        kept.push(d);
        return Ok(());
    }
    match std::fs::remove_dir_all(&d.path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

/// Empties `dir` and puts its mode, times and extended attributes back as a new
/// directory's.
fn reset(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    // Searchable again first: the call may have closed its own directory.
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let path = entry.path();
        if entry.file_type()?.is_dir() {
            std::fs::remove_dir_all(&path)?;
        } else {
            std::fs::remove_file(&path)?;
        }
    }
    let c = CString::new(dir.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
    clear_xattrs(&c)?;
    let now = [libc::timespec {
        tv_sec: 0,
        tv_nsec: libc::UTIME_NOW,
    }; 2];
    // SAFETY: `c` is NUL-terminated and `now` holds the two timespecs utimensat(2) reads.
    if unsafe { libc::utimensat(libc::AT_FDCWD, c.as_ptr(), now.as_ptr(), 0) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Removes every extended attribute of `dir` a process could set (`user.*`, ACLs).
fn clear_xattrs(dir: &CString) -> std::io::Result<()> {
    let mut names = vec![0u8; 4096];
    // SAFETY: `dir` is NUL-terminated; llistxattr(2) writes at most `names.len()` bytes.
    let n = unsafe { libc::llistxattr(dir.as_ptr(), names.as_mut_ptr().cast(), names.len()) };
    if n < 0 {
        let e = std::io::Error::last_os_error();
        // A file system without extended attributes has none to clear.
        return match e.raw_os_error() {
            Some(libc::ENOTSUP) => Ok(()),
            _ => Err(e),
        };
    }
    let n = usize::try_from(n).unwrap_or(0);
    for name in names[..n].split(|b| *b == 0).filter(|s| !s.is_empty()) {
        let Ok(cname) = CString::new(name) else {
            continue;
        };
        // SAFETY: both strings are NUL-terminated.
        if unsafe { libc::lremovexattr(dir.as_ptr(), cname.as_ptr()) } != 0 {
            let e = std::io::Error::last_os_error();
            // `security.*` attributes (SELinux labels) are the system's, not the call's.
            if !name.starts_with(b"security.") {
                return Err(e);
            }
        }
    }
    Ok(())
}

extern "C" fn remove_kept() {
    let dirs = match KEPT_DIRS.lock() {
        Ok(mut kept) => std::mem::take(&mut *kept),
        Err(_) => return,
    };
    for d in dirs {
        let _ = std::fs::remove_dir_all(&d.path);
    }
}

/// Registers (once) the removal of the kept directories when the process exits.
fn remove_kept_at_exit() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // SAFETY: `remove_kept` is a plain function with no arguments, valid for the
        // process's life; atexit(2) only records it.
        unsafe {
            libc::atexit(remove_kept);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kept_directory_comes_back_empty_and_reset() {
        use std::os::unix::fs::PermissionsExt;
        let parent = tempfile::tempdir().unwrap();
        let first = take(parent.path()).unwrap();
        let path = first.path.clone();
        std::fs::create_dir_all(path.join("a/b")).unwrap();
        std::fs::write(path.join("a/b/secret"), "x").unwrap();
        std::fs::write(path.join("note"), "x").unwrap();
        std::os::unix::fs::symlink("/etc/passwd", path.join("link")).unwrap();
        let c = CString::new(path.as_os_str().as_bytes()).unwrap();
        // SAFETY: NUL-terminated strings and a 3-byte value.
        let set = unsafe {
            libc::lsetxattr(
                c.as_ptr(),
                c"user.msg".as_ptr(),
                b"hi".as_ptr().cast(),
                2,
                0,
            )
        };
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o000)).unwrap();
        give_back(first).unwrap();

        let second = take(parent.path()).unwrap();
        assert_eq!(
            second.path, path,
            "the emptied directory is handed out again"
        );
        assert_eq!(std::fs::read_dir(&path).unwrap().count(), 0);
        let meta = std::fs::symlink_metadata(&path).unwrap();
        assert_eq!(meta.mode() & 0o7777, 0o700);
        if set == 0 {
            let mut buf = [0u8; 64];
            // SAFETY: NUL-terminated name, a buffer of its length.
            let n = unsafe {
                libc::lgetxattr(
                    c.as_ptr(),
                    c"user.msg".as_ptr(),
                    buf.as_mut_ptr().cast(),
                    64,
                )
            };
            assert!(n < 0, "the extended attribute is gone");
        }
        // The link was removed, not followed.
        assert!(Path::new("/etc/passwd").exists());

        // Replaced while kept: a new directory is made instead.
        give_back(second).unwrap();
        std::fs::remove_dir(&path).unwrap();
        std::os::unix::fs::symlink(parent.path(), &path).unwrap();
        let third = take(parent.path()).unwrap();
        assert_ne!(third.path, path);
        std::fs::remove_file(&path).unwrap();
        give_back(third).unwrap();
    }
}
