//! The process's loaded components, shared by everything that runs them.
//!
//! Hook runners and tool runners used to keep a map each (and sometimes a runtime each); a
//! component used by both was then compiled, import-checked and pre-linked twice. One
//! [`ComponentCache`] over one `Arc<Runtime>` loads each component once per world and grant,
//! on first use, from any thread.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::{DigestPin, Grant, LoadedComponent, Runtime, RuntimeError, World, check_pin};

/// Loaded components, keyed by what they were loaded from (the file, revalidated by its
/// identity on every lookup, or the bytes' digest), world and grant. Cheap to share behind
/// an `Arc`; all methods take `&self`.
pub struct ComponentCache {
    runtime: Arc<Runtime>,
    files: Mutex<HashMap<FileKey, (FileStamp, Arc<LoadedComponent>)>>,
    bytes: Mutex<HashMap<(String, World, Grant), Arc<LoadedComponent>>>,
}

/// A file entry: the file, world and grant it was loaded for.
type FileKey = (PathBuf, World, Grant);

/// Enough of a file's metadata to notice that it was replaced or rewritten.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FileStamp {
    dev: u64,
    ino: u64,
    size: u64,
    mtime_ns: i128,
    ctime_ns: i128,
}

impl FileStamp {
    fn of(path: &Path) -> Option<FileStamp> {
        let meta = std::fs::metadata(path).ok()?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            Some(FileStamp {
                dev: meta.dev(),
                ino: meta.ino(),
                size: meta.size(),
                mtime_ns: i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec()),
                ctime_ns: i128::from(meta.ctime()) * 1_000_000_000 + i128::from(meta.ctime_nsec()),
            })
        }
        // Without change times a stamp proves nothing: never reuse, always reload.
        #[cfg(not(unix))]
        {
            let _ = meta;
            None
        }
    }
}

impl std::fmt::Debug for ComponentCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let files = self.files.lock().map_or(0, |m| m.len());
        let bytes = self.bytes.lock().map_or(0, |m| m.len());
        f.debug_struct("ComponentCache")
            .field("files", &files)
            .field("bytes", &bytes)
            .finish_non_exhaustive()
    }
}

impl ComponentCache {
    /// A cache loading through `runtime`.
    pub fn new(runtime: Arc<Runtime>) -> Self {
        ComponentCache {
            runtime,
            files: Mutex::new(HashMap::new()),
            bytes: Mutex::new(HashMap::new()),
        }
    }

    /// The runtime the components run in.
    pub fn runtime(&self) -> &Arc<Runtime> {
        &self.runtime
    }

    /// The component in the file at `path`, loaded on first use and again whenever the file
    /// changed. `pin` is checked on every lookup, also for a component already loaded.
    pub fn file(
        &self,
        path: &Path,
        world: World,
        grant: &Grant,
        pin: DigestPin<'_>,
    ) -> Result<Arc<LoadedComponent>, RuntimeError> {
        // Stamped before loading: a change during the load makes the next lookup reload.
        let stamp = FileStamp::of(path);
        let key = (path.to_path_buf(), world, grant.clone());
        let hit = self
            .files
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&key)
            .filter(|(s, _)| stamp.is_some_and(|now| now == *s))
            .map(|(_, c)| c.clone());
        if let Some(c) = hit {
            check_pin(c.name(), c.digest(), grant, pin)?;
            return Ok(c);
        }
        let c = Arc::new(self.runtime.load_file(path, world, grant, pin)?);
        if let Some(stamp) = stamp {
            self.files
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(key, (stamp, c.clone()));
        }
        Ok(c)
    }

    /// The component `wasm` (named `name` in errors), loaded on first use. With a
    /// [`DigestPin::Sha256`] the bytes are hashed only on the first load: later lookups with the
    /// same pin get the component whose digest was verified to be that pin.
    pub fn bytes(
        &self,
        name: &str,
        wasm: &[u8],
        world: World,
        grant: &Grant,
        pin: DigestPin<'_>,
    ) -> Result<Arc<LoadedComponent>, RuntimeError> {
        let digest = match pin {
            DigestPin::Sha256(d) => d.to_ascii_lowercase(),
            DigestPin::None | DigestPin::Unchecked => crate::sha256_hex(wasm),
        };
        let key = (digest, world, grant.clone());
        if let Some(c) = self
            .bytes
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&key)
        {
            check_pin(c.name(), c.digest(), grant, pin)?;
            return Ok(c.clone());
        }
        let c = Arc::new(self.runtime.load(name, wasm, world, grant, pin)?);
        // Keyed by the digest the bytes really have, so a wrong pin never names an entry.
        let key = (c.digest().to_string(), world, grant.clone());
        self.bytes
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(key, c.clone());
        Ok(c)
    }

    /// How many components are loaded.
    pub fn len(&self) -> usize {
        let files = self.files.lock().unwrap_or_else(|p| p.into_inner()).len();
        files + self.bytes.lock().unwrap_or_else(|p| p.into_inner()).len()
    }

    /// Whether nothing is loaded yet.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
