//! The plugin cache: placing a staged tree at `cache/<marketplace>/<plugin>/<version>/`,
//! orphan markers and stale staging directories.

use std::path::{Path, PathBuf};

use crate::digest::{ORPHAN_MARKER, tree_digest};
use crate::error::{PluginError, io};
use crate::names::{child_dir, resolves_below};
use crate::store::InstalledPlugins;
use crate::util::swap_into_place;

/// Moves the staged tree `staged` into the cache under `base` and returns where it now is.
///
/// The directory is `<version>`, or `<version>-<digest12>` when `<version>` legitimately holds
/// other contents (the same version fetched earlier with different files, still recorded by an
/// installation or orphaned). An existing directory is re-hashed before it is reused: one that
/// no longer hashes to `digest` was modified after install and is replaced. `<version>` is
/// replaced only when every installation that records it recorded `digest` (so it is a repair
/// of exactly that tree); otherwise it stays as it is for whoever uses it, and the suffixed
/// directory, which by its name can only hold this tree, is used instead.
///
/// `marketplace`, `plugin` and `version` must be safe names ([`crate::names`]) and every
/// directory on the way from `plugins_root` (`cache`, …) must be a real directory, checked by
/// resolved path.
pub(super) fn place_in_cache(
    installed: &InstalledPlugins,
    plugins_root: &Path,
    [marketplace, plugin, version]: [&str; 3],
    digest: &str,
    staged: &Path,
    staging: &Path,
) -> Result<PathBuf, PluginError> {
    let cache_root = plugins_root.join("cache");
    child_dir(plugins_root, &["cache", marketplace, plugin, version], true)?;
    // Recorded paths stay as the home spells them (they are compared with earlier records).
    let base = cache_root.join(marketplace).join(plugin);
    let plain = base.join(version);
    let claims: Vec<Option<&str>> = installed
        .plugins
        .values()
        .flatten()
        .filter(|r| r.install_path == plain)
        .map(|r| r.warden.as_ref().map(|w| w.sha256.as_str()))
        .collect();
    let plain_is_ours = !claims.is_empty() && claims.iter().all(|c| *c == Some(digest));
    let dir = match cache_state(&plain, digest) {
        CacheState::Absent | CacheState::Intact => plain,
        CacheState::Differs if plain_is_ours => plain,
        CacheState::Differs => {
            let suffixed = format!("{version}-{}", digest.get(..12).unwrap_or(digest));
            child_dir(
                plugins_root,
                &["cache", marketplace, plugin, &suffixed],
                true,
            )?;
            base.join(suffixed)
        }
    };
    match cache_state(&dir, digest) {
        CacheState::Intact => {
            let _ = std::fs::remove_file(dir.join(ORPHAN_MARKER));
        }
        CacheState::Absent => {
            std::fs::rename(staged, &dir).map_err(io(&dir))?;
        }
        CacheState::Differs => {
            swap_into_place(staged, &dir, &staging.join("replaced")).map_err(io(&dir))?
        }
    }
    Ok(dir)
}

/// What a cache directory holds compared with the tree about to be installed.
enum CacheState {
    /// Nothing there.
    Absent,
    /// The same tree.
    Intact,
    /// Other contents, or contents that cannot be read.
    Differs,
}

fn cache_state(dir: &Path, digest: &str) -> CacheState {
    if std::fs::symlink_metadata(dir).is_err() {
        CacheState::Absent
    } else if dir.is_dir() && tree_digest(dir).ok().as_deref() == Some(digest) {
        CacheState::Intact
    } else {
        CacheState::Differs
    }
}

/// Marks a cache directory as orphaned; a recorded path that does not resolve into the cache
/// (an edited `installed_plugins.json`) is left alone.
pub(super) fn mark_orphan(cache_root: &Path, dir: &Path) {
    if dir.is_dir() && !dir.is_symlink() && resolves_below(cache_root, dir) {
        let ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis())
            .unwrap_or(0);
        let _ = std::fs::write(dir.join(ORPHAN_MARKER), ms.to_string());
    }
}

/// The file in a scratch directory that its command holds locked while it runs.
const LOCK_FILE: &str = ".lock";

/// A scratch directory under `plugins/.tmp/` for one command (a staging copy, a clone), on the
/// cache's filesystem so what is built in it can be renamed into place. It is locked for as
/// long as it lives: the lock dies with the process however it ends, so the next command can
/// tell a directory left by a killed one from one a running command is using.
pub(super) struct Scratch {
    dir: tempfile::TempDir,
    _lock: std::fs::File,
}

impl Scratch {
    /// Sweeps what killed commands left in `tmp_root`, then makes a new locked directory.
    pub(super) fn new(tmp_root: &Path, prefix: &str) -> Result<Self, PluginError> {
        std::fs::create_dir_all(tmp_root).map_err(io(tmp_root))?;
        sweep_stale(tmp_root);
        let dir = tempfile::Builder::new()
            .prefix(prefix)
            .tempdir_in(tmp_root)
            .map_err(io(tmp_root))?;
        // Locked under another name and then renamed, so a sweep never finds the lock file
        // before it is held.
        let new_lock = dir.path().join(".lock-new");
        let lock = std::fs::File::create(&new_lock).map_err(io(&new_lock))?;
        lock.lock().map_err(io(&new_lock))?;
        let lock_path = dir.path().join(LOCK_FILE);
        std::fs::rename(&new_lock, &lock_path).map_err(io(&lock_path))?;
        Ok(Scratch { dir, _lock: lock })
    }

    /// The directory.
    pub(super) fn path(&self) -> &Path {
        self.dir.path()
    }
}

/// Removes scratch directories whose command is gone: those whose lock nobody holds, and,
/// without a lock file (a command killed before it made one), those older than 10 minutes.
fn sweep_stale(tmp_root: &Path) {
    let Ok(rd) = std::fs::read_dir(tmp_root) else {
        return;
    };
    for e in rd.flatten() {
        let path = e.path();
        let abandoned = match std::fs::File::open(path.join(LOCK_FILE)) {
            Ok(f) => f.try_lock().is_ok(),
            Err(_) => e
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.elapsed().ok())
                .is_some_and(|d| d.as_secs() > 600),
        };
        if abandoned {
            let _ = std::fs::remove_dir_all(&path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sweep_removes_what_killed_commands_left_and_keeps_live_scratch_directories() {
        let root = tempfile::tempdir().expect("tempdir");
        let tmp = root.path().join(".tmp");
        let live = Scratch::new(&tmp, "stage-").expect("scratch");
        // Left by a killed command: its lock file is there, nobody holds it.
        let dead = tmp.join("stage-dead");
        std::fs::create_dir_all(dead.join("plugin")).expect("mkdir");
        std::fs::write(dead.join(LOCK_FILE), "").expect("lock file");
        // Without a lock file and young: possibly a command between mkdir and its lock.
        let young = tmp.join("stage-young");
        std::fs::create_dir_all(&young).expect("mkdir");

        let next = Scratch::new(&tmp, "stage-").expect("scratch");
        assert!(live.path().is_dir());
        assert!(next.path().is_dir());
        assert!(!dead.exists());
        assert!(young.is_dir());
        let held = live.path().to_path_buf();
        drop(live);
        assert!(!held.exists());
    }

    #[test]
    fn swap_into_place_replaces_a_directory_and_keeps_the_old_one_aside() {
        let root = tempfile::tempdir().expect("tempdir");
        let (new, dest, aside) = (
            root.path().join("new"),
            root.path().join("dest"),
            root.path().join("aside"),
        );
        std::fs::create_dir_all(&new).expect("mkdir");
        std::fs::write(new.join("v"), "2").expect("write");
        swap_into_place(&new, &dest, &aside).expect("first");
        assert_eq!(std::fs::read_to_string(dest.join("v")).expect("read"), "2");
        std::fs::create_dir_all(&new).expect("mkdir");
        std::fs::write(new.join("v"), "3").expect("write");
        swap_into_place(&new, &dest, &aside).expect("swap");
        assert_eq!(std::fs::read_to_string(dest.join("v")).expect("read"), "3");
        let old = if new.exists() { &new } else { &aside };
        assert_eq!(std::fs::read_to_string(old.join("v")).expect("read"), "2");
    }
}
