//! What the search for repositories and virtualenvs needs to know of one directory, kept
//! between calls while the directory is unchanged.
//!
//! Every confined call searches its project twice (see [`persist`](crate::persist)): before,
//! to protect the repositories there, and after, to find the ones the call created. Reading
//! every directory of a project of a few hundred directories costs milliseconds each time;
//! checking that a directory is unchanged costs one `statx`. A directory's change time
//! moves whenever an entry is created, removed or renamed in it, and cannot be set back by
//! a process (`utimes` sets it to the current time; only changing the clock, which a
//! confined call cannot do, would), so a listing is reused while the directory's device,
//! inode, modification and change times are the ones it was read at.
//!
//! Timestamps come from a clock that advances in ticks (a few milliseconds), so an entry
//! created in the same tick as the listing was read would leave the change time as it was.
//! A listing read less than [`RACY`] after its directory last changed is therefore never
//! reused (as git treats a file changed in the same second as its index as "racily clean").

use std::collections::HashMap;
use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

/// How long after a directory's last change its listing must have been read to be reused.
const RACY: Duration = Duration::from_millis(50);

/// Most directories remembered; past it the memory starts again empty.
const MAX_DIRS: usize = 200_000;

/// The entries of one directory that the search looks at.
#[derive(Debug, Default)]
pub(crate) struct Listing {
    /// Every entry, counted against the search's limit.
    pub entries: usize,
    /// Whether `.git` is a directory here, or a file.
    pub git_dir: bool,
    pub git_file: bool,
    /// A `pyvenv.cfg` file: the directory is a virtualenv.
    pub venv: bool,
    /// A `CACHEDIR.TAG` file: a build output or cache.
    pub cache_tag: bool,
    /// Subdirectories (not symlinks), by name, sorted.
    pub subdirs: Vec<OsString>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
struct Stamp {
    dev: u64,
    ino: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

fn stamp(dir: &Path) -> Option<Stamp> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::symlink_metadata(dir).ok()?;
    m.is_dir().then(|| Stamp {
        dev: m.dev(),
        ino: m.ino(),
        mtime: (m.mtime(), m.mtime_nsec()),
        ctime: (m.ctime(), m.ctime_nsec()),
    })
}

/// Listings kept, by directory, with the stamp they were read at.
type Memory = Mutex<HashMap<PathBuf, (Stamp, Arc<Listing>)>>;

fn remembered() -> &'static Memory {
    static MEMORY: std::sync::OnceLock<Memory> = std::sync::OnceLock::new();
    MEMORY.get_or_init(|| Mutex::new(HashMap::new()))
}

/// Whether a listing read at `read_at` of a directory last changed at `st` can be trusted to
/// show every change made after it.
fn settled(st: &Stamp, read_at: SystemTime) -> bool {
    let changed = |(s, ns): (i64, i64)| {
        u64::try_from(s).ok().and_then(|s| {
            SystemTime::UNIX_EPOCH.checked_add(Duration::new(s, u32::try_from(ns).ok()?))
        })
    };
    [st.mtime, st.ctime].into_iter().all(|t| {
        changed(t)
            .and_then(|t| t.checked_add(RACY))
            .is_some_and(|t| t < read_at)
    })
}

fn read(dir: &Path) -> Option<Listing> {
    let rd = std::fs::read_dir(dir).ok()?;
    let mut l = Listing::default();
    for e in rd.filter_map(Result::ok) {
        l.entries += 1;
        let Ok(ft) = e.file_type() else { continue };
        let name = e.file_name();
        match name.as_bytes() {
            b".git" if ft.is_dir() => l.git_dir = true,
            b".git" if ft.is_file() => l.git_file = true,
            b".git" => {}
            b"pyvenv.cfg" if ft.is_file() => l.venv = true,
            b"CACHEDIR.TAG" if ft.is_file() => l.cache_tag = true,
            _ if ft.is_dir() => l.subdirs.push(name),
            _ => {}
        }
    }
    l.subdirs.sort();
    Some(l)
}

/// The listing of `dir`, reused when it is unchanged since it was read; `None` when it
/// cannot be read (gone, not a directory, not readable).
pub(crate) fn of(dir: &Path) -> Option<Arc<Listing>> {
    let before = stamp(dir)?;
    if let Ok(memory) = remembered().lock()
        && let Some((st, l)) = memory.get(dir)
        && *st == before
    {
        return Some(Arc::clone(l));
    }
    let read_at = SystemTime::now();
    let listing = Arc::new(read(dir)?);
    // Changed while being read, or too recently to tell a later change: not kept.
    if stamp(dir) == Some(before)
        && settled(&before, read_at)
        && let Ok(mut memory) = remembered().lock()
    {
        if memory.len() >= MAX_DIRS {
            memory.clear();
        }
        memory.insert(dir.to_path_buf(), (before, Arc::clone(&listing)));
    }
    Some(listing)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lets a directory's last change become old enough for its listing to be kept.
    fn settle() {
        std::thread::sleep(RACY * 2);
    }

    #[test]
    fn a_new_entry_is_seen_after_the_listing_was_kept() {
        let tmp = tempfile::tempdir().expect("temp");
        let d = tmp.path().join("p");
        std::fs::create_dir(&d).expect("dir");
        settle();
        let first = of(&d).expect("listing");
        assert!(!first.git_dir);
        // Kept: the same listing comes back.
        assert!(Arc::ptr_eq(&first, &of(&d).expect("listing")));
        std::fs::create_dir(d.join(".git")).expect("git");
        assert!(
            of(&d).expect("listing").git_dir,
            "a stale listing was reused"
        );
    }

    #[test]
    fn setting_the_modification_time_back_does_not_hide_a_change() {
        let tmp = tempfile::tempdir().expect("temp");
        let d = tmp.path().join("p");
        std::fs::create_dir(&d).expect("dir");
        settle();
        let m = std::fs::metadata(&d).expect("meta");
        let mtime = m.modified().expect("mtime");
        assert!(!of(&d).expect("listing").git_dir);
        std::fs::create_dir(d.join(".git")).expect("git");
        std::fs::File::open(&d)
            .and_then(|f| f.set_modified(mtime))
            .expect("set mtime back");
        assert!(of(&d).expect("listing").git_dir);
    }

    #[test]
    fn a_listing_read_right_after_a_change_is_not_kept() {
        let tmp = tempfile::tempdir().expect("temp");
        let d = tmp.path().join("p");
        std::fs::create_dir(&d).expect("dir");
        let first = of(&d).expect("listing");
        assert!(!Arc::ptr_eq(&first, &of(&d).expect("listing")));
    }
}
