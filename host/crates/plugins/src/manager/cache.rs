//! The plugin cache: placing a staged tree at `cache/<marketplace>/<plugin>/<version>/`,
//! orphan markers and stale staging directories.

use std::path::{Path, PathBuf};

use crate::digest::{ORPHAN_MARKER, tree_digest};
use crate::error::{PluginError, io};
use crate::names::{child_dir, resolves_below};
use crate::store::InstalledPlugins;

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
        CacheState::Differs => replace_dir(staged, &dir, &staging.join("replaced"))?,
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

/// Replaces `dest` with `staged`: `dest` is first moved aside to `trash` (inside the staging
/// directory, so on the same filesystem and removed with it) and moved back if `staged` cannot
/// be renamed into place, so a failure leaves the previous directory where it was.
fn replace_dir(staged: &Path, dest: &Path, trash: &Path) -> Result<(), PluginError> {
    std::fs::rename(dest, trash).map_err(io(dest))?;
    if let Err(source) = std::fs::rename(staged, dest) {
        let _ = std::fs::rename(trash, dest);
        return Err(PluginError::Io {
            path: dest.to_path_buf(),
            source,
        });
    }
    Ok(())
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

/// Removes staging directories left by killed installs (older than 10 minutes).
pub(super) fn sweep_stale(tmp_root: &Path) {
    let Ok(rd) = std::fs::read_dir(tmp_root) else {
        return;
    };
    for e in rd.flatten() {
        let old = e
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|d| d.as_secs() > 600);
        if old {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}
