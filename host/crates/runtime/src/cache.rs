//! The on-disk cache of compiled components.
//!
//! Compiling a component costs ~10,000× a call, so each one is compiled once per wasm digest
//! and engine configuration, then loaded with `mmap`. An entry is named by the sha256 of the
//! wasm bytes and a hash of the engine's compatibility fingerprint, and carries a sidecar with
//! the sha256 of the compiled bytes: loading native code is only safe if it is exactly what
//! this host wrote, so an entry whose bytes do not match, or that the engine rejects, is
//! recompiled and replaced rather than trusted.
//!
//! Hashing every artifact on every start would dominate a one-event process (`warden hook`),
//! so the sidecar also records the file's identity when it was written: device, inode, size
//! and change time. The change time cannot be set by an ordinary write, so an entry whose
//! identity still matches is the file this host wrote and is mapped without rehashing; any
//! other entry is hashed in full before it is used. The same identity check lets a component
//! file that has not changed reuse its recorded digest without being read.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use wasmtime::component::Component;
use wasmtime::{Engine, Precompiled};

use super::RuntimeError;
use warden_vocab::fs::{create_private_dir, write_atomic};

/// How a component was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheOutcome {
    /// Loaded from a valid cache entry.
    Hit,
    /// Compiled (no entry, or the cache is disabled).
    Compiled,
    /// An entry existed but was corrupt or foreign; compiled and replaced.
    Replaced,
}

/// A directory of compiled components, owned by the host. It must never be reachable by a
/// guest: its files are trusted native code.
#[derive(Debug, Clone)]
pub struct CompileCache {
    dir: Option<PathBuf>,
    engine_key: String,
}

struct Sha256Hasher(Sha256);

impl Hasher for Sha256Hasher {
    fn finish(&self) -> u64 {
        0
    }

    fn write(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }
}

/// sha256 of `bytes`, as lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

impl CompileCache {
    /// A cache in `dir` (`None` disables it) for components compiled by `engine`.
    pub fn new(dir: Option<PathBuf>, engine: &Engine) -> Self {
        let mut h = Sha256Hasher(Sha256::new());
        engine.precompile_compatibility_hash().hash(&mut h);
        let engine_key = hex::encode(&h.0.finalize()[..8]);
        CompileCache { dir, engine_key }
    }

    /// The cache directory, if enabled.
    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    fn entry(&self, digest: &str) -> Option<(PathBuf, PathBuf)> {
        let dir = self.dir.as_ref()?;
        let stem = format!("{digest}-{}", self.engine_key);
        Some((
            dir.join(format!("{stem}.cwasm")),
            dir.join(format!("{stem}.sha256")),
        ))
    }

    /// The component in the file at `path`: its digest and compiled form come from the cache
    /// when the file is unchanged since they were recorded; otherwise it is read, hashed and
    /// loaded as [`load`](Self::load) does.
    pub fn load_path(
        &self,
        engine: &Engine,
        path: &Path,
        name: &str,
    ) -> Result<(Component, CacheOutcome, String), RuntimeError> {
        let read = || {
            std::fs::read(path).map_err(|source| RuntimeError::Read {
                path: path.to_path_buf(),
                source,
            })
        };
        let Some(dir) = &self.dir else {
            let wasm = read()?;
            let digest = sha256_hex(&wasm);
            return Ok((
                compile(engine, &wasm, name)?,
                CacheOutcome::Compiled,
                digest,
            ));
        };
        let index = dir.join("paths").join(format!(
            "{}.json",
            sha256_hex(path.as_os_str().as_encoded_bytes())
        ));
        let meta = std::fs::metadata(path).map_err(|source| RuntimeError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let recorded = read_sidecar(&index).filter(|r| r.identity == Identity::of(&meta));
        if let Some(digest) = recorded.map(|r| r.sha256)
            && let Some((artifact, sidecar)) = self.entry(&digest)
            && let Some(c) = self.try_load(engine, &artifact, &sidecar)
        {
            return Ok((c, CacheOutcome::Hit, digest));
        }
        let wasm = read()?;
        let digest = sha256_hex(&wasm);
        let (component, outcome) = self.load(engine, &wasm, &digest, name)?;
        let _ = create_private_dir(index.parent().unwrap_or(dir))
            .and_then(|()| write_sidecar(&index, &digest, &meta));
        Ok((component, outcome, digest))
    }

    /// The digest recorded for the file at `path` (absolute) when it was last loaded or
    /// precompiled, if the file is still the one recorded (same identity); `None` otherwise or
    /// without a cache. Reads nothing of the file itself.
    pub fn recorded_digest(&self, path: &Path) -> Option<String> {
        let dir = self.dir.as_ref()?;
        let index = dir.join("paths").join(format!(
            "{}.json",
            sha256_hex(path.as_os_str().as_encoded_bytes())
        ));
        let meta = std::fs::metadata(path).ok()?;
        read_sidecar(&index)
            .filter(|r| r.identity == Identity::of(&meta))
            .map(|r| r.sha256)
    }

    /// The component for `wasm` (whose sha256 is `digest`), from the cache or compiled.
    pub fn load(
        &self,
        engine: &Engine,
        wasm: &[u8],
        digest: &str,
        name: &str,
    ) -> Result<(Component, CacheOutcome), RuntimeError> {
        let Some((artifact, sidecar)) = self.entry(digest) else {
            return Ok((compile(engine, wasm, name)?, CacheOutcome::Compiled));
        };
        let mut outcome = CacheOutcome::Compiled;
        if artifact.exists() {
            match self.try_load(engine, &artifact, &sidecar) {
                Some(c) => return Ok((c, CacheOutcome::Hit)),
                None => outcome = CacheOutcome::Replaced,
            }
        }
        let component = compile(engine, wasm, name)?;
        // A cache that cannot be written only costs a recompile next time.
        let _ = self.store(&component, &artifact, &sidecar);
        Ok((component, outcome))
    }

    fn try_load(&self, engine: &Engine, artifact: &Path, sidecar: &Path) -> Option<Component> {
        let recorded = read_sidecar(sidecar)?;
        let meta = std::fs::metadata(artifact).ok()?;
        if recorded.identity == Identity::of(&meta) {
            if Engine::detect_precompiled_file(artifact).ok()? != Some(Precompiled::Component) {
                return None;
            }
            // SAFETY: the file is the one this host wrote (same device, inode, size and change
            // time as recorded right after writing it; see the module docs) for an engine with
            // the same compatibility hash (part of its name), and `deserialize_file` re-checks
            // the engine configuration and version.
            return unsafe { Component::deserialize_file(engine, artifact) }.ok();
        }
        let bytes = std::fs::read(artifact).ok()?;
        if sha256_hex(&bytes) != recorded.sha256 {
            return None;
        }
        if Engine::detect_precompiled(&bytes) != Some(Precompiled::Component) {
            return None;
        }
        // SAFETY: the bytes are exactly what this host serialized (checked against the sidecar
        // digest just above) for an engine with the same compatibility hash (part of the name),
        // and `deserialize` re-checks the engine configuration and version.
        let component = unsafe { Component::deserialize(engine, &bytes) }.ok()?;
        // Verified in full: record the file's current identity so the next start skips the hash.
        let _ = write_sidecar(sidecar, &recorded.sha256, &meta);
        Some(component)
    }

    fn store(&self, component: &Component, artifact: &Path, sidecar: &Path) -> std::io::Result<()> {
        let dir = artifact.parent().unwrap_or(Path::new("."));
        create_private_dir(dir)?;
        let bytes = component.serialize().map_err(std::io::Error::other)?;
        write_atomic(artifact, &bytes)?;
        let meta = std::fs::metadata(artifact)?;
        write_sidecar(sidecar, &sha256_hex(&bytes), &meta)
    }
}

/// Who a file is: enough to tell that it is still the very file that was recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Identity {
    dev: u64,
    ino: u64,
    size: u64,
    ctime_ns: i128,
    mtime_ns: i128,
}

impl Identity {
    #[cfg(unix)]
    fn of(meta: &std::fs::Metadata) -> Identity {
        use std::os::unix::fs::MetadataExt;
        Identity {
            dev: meta.dev(),
            ino: meta.ino(),
            size: meta.size(),
            ctime_ns: i128::from(meta.ctime()) * 1_000_000_000 + i128::from(meta.ctime_nsec()),
            mtime_ns: i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec()),
        }
    }

    /// Without inode numbers and change times there is no cheap identity: never match, so
    /// every entry is hashed.
    #[cfg(not(unix))]
    fn of(_meta: &std::fs::Metadata) -> Identity {
        Identity {
            dev: u64::MAX,
            ..Identity::default()
        }
    }
}

struct Sidecar {
    sha256: String,
    identity: Identity,
}

/// Reads `sha256 dev ino size ctime_ns mtime_ns`; a sidecar with only a digest (or anything
/// unparsable after it) has no identity and forces a full check.
fn read_sidecar(path: &Path) -> Option<Sidecar> {
    let text = std::fs::read_to_string(path).ok()?;
    let mut parts = text.split_whitespace();
    let sha256 = parts.next()?.to_string();
    let mut nums = parts.map(str::parse::<i128>);
    let mut next = || nums.next().and_then(Result::ok);
    let identity = match (next(), next(), next(), next(), next()) {
        (Some(dev), Some(ino), Some(size), Some(ctime_ns), Some(mtime_ns)) => Identity {
            dev: u64::try_from(dev).ok()?,
            ino: u64::try_from(ino).ok()?,
            size: u64::try_from(size).ok()?,
            ctime_ns,
            mtime_ns,
        },
        _ => Identity {
            dev: u64::MAX,
            ino: u64::MAX,
            ..Identity::default()
        },
    };
    Some(Sidecar { sha256, identity })
}

fn write_sidecar(path: &Path, sha256: &str, meta: &std::fs::Metadata) -> std::io::Result<()> {
    let id = Identity::of(meta);
    let text = format!(
        "{sha256} {} {} {} {} {}\n",
        id.dev, id.ino, id.size, id.ctime_ns, id.mtime_ns
    );
    write_atomic(path, text.as_bytes())
}

fn compile(engine: &Engine, wasm: &[u8], name: &str) -> Result<Component, RuntimeError> {
    Component::new(engine, wasm).map_err(|e| RuntimeError::Compile {
        component: name.to_string(),
        message: format!("{e:#}"),
    })
}
