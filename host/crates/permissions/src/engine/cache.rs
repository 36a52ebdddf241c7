//! The decision caches: parsed and analysed command lines by text, and recent symlink
//! resolutions by path. Both are bounded and start over when full.

use std::path::Path;

use super::program::Analysed;
use super::spelling::Target;
use crate::fxhash::FxHashMap;
use crate::shell;

/// Symlink resolutions made in the last [`LinkCache::TTL`], by path as handed to the kernel.
///
/// Looking a path up costs a system call per component, which dwarfs the rule matching
/// itself, and a burst of tool calls tends to name the same files (a `Read` then an `Edit`,
/// a compound command repeating its arguments). An answer reused within the window is the
/// answer a check made that much earlier would have given; since any check already precedes
/// the access it guards by at least that long (the tool still has to start), the window adds
/// no race that was not there. [`Permissions::check_path`], whose caller opens the file right
/// after asking, always looks afresh.
#[derive(Debug, Default)]
pub(super) struct LinkCache(
    // Keyed by the path's bytes: hashing a `Path` parses its components, which costs more
    // here than the lookup it serves.
    std::sync::Mutex<FxHashMap<std::ffi::OsString, (std::time::Instant, Target)>>,
);

impl LinkCache {
    const TTL: std::time::Duration = std::time::Duration::from_millis(1);
    const CAPACITY: usize = 1024;

    pub(super) fn get(&self, raw: &Path) -> Option<Target> {
        let map = self.0.lock().ok()?;
        let (at, target) = map.get(raw.as_os_str())?;
        (at.elapsed() <= Self::TTL).then(|| target.clone())
    }

    pub(super) fn put(&self, raw: &Path, target: &Target) {
        if let Ok(mut map) = self.0.lock() {
            if map.len() >= Self::CAPACITY {
                // Entries go stale within milliseconds anyway; starting over keeps it bounded.
                map.clear();
            }
            map.insert(
                raw.as_os_str().to_owned(),
                (std::time::Instant::now(), target.clone()),
            );
        }
    }
}

/// A parse result shared between decisions.
pub(super) type CachedParse = std::sync::Arc<Result<Analysed, shell::ShellError>>;

/// Parsed command lines by text. An agent repeats the same commands (`cargo test`,
/// `git status`) many times per session, and parsing dominates the cost of a Bash decision.
#[derive(Debug, Default)]
pub(super) struct ParseCache(std::sync::Mutex<FxHashMap<Box<str>, CachedParse>>);

impl ParseCache {
    const CAPACITY: usize = 4096;

    pub(super) fn get(&self, text: &str) -> CachedParse {
        if let Ok(map) = self.0.lock()
            && let Some(hit) = map.get(text)
        {
            return hit.clone();
        }
        // Parse outside the lock so one slow command does not stall other threads' hits.
        let parsed = std::sync::Arc::new(shell::parse(text).map(Analysed::new));
        if let Ok(mut map) = self.0.lock() {
            if map.len() >= Self::CAPACITY {
                // Crude but bounded: a full cache starts over rather than tracking recency.
                map.clear();
            }
            map.insert(text.into(), parsed.clone());
        }
        parsed
    }
}
