//! The on-disk cache of compiled components.
//!
//! Compiling a component costs ~10,000× a call, so each one is compiled once per wasm digest
//! and engine configuration, then loaded with `mmap`. An entry is named by the sha256 of the
//! wasm bytes and a hash of the engine's compatibility fingerprint, and carries a sidecar with
//! the sha256 of the compiled bytes: loading native code is only safe if it is exactly what
//! this host wrote, so an entry whose bytes do not match, or that the engine rejects, is
//! recompiled and replaced rather than trusted.

use std::hash::{Hash, Hasher};
use std::io::Write;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use wasmtime::component::Component;
use wasmtime::{Engine, Precompiled};

use super::RuntimeError;

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
        let expected = std::fs::read_to_string(sidecar).ok()?;
        let bytes = std::fs::read(artifact).ok()?;
        if sha256_hex(&bytes) != expected.trim() {
            return None;
        }
        if Engine::detect_precompiled(&bytes) != Some(Precompiled::Component) {
            return None;
        }
        // SAFETY: the bytes are exactly what this host serialized (checked against the sidecar
        // digest just above) for an engine with the same compatibility hash (part of the name),
        // and `deserialize` re-checks the engine configuration and version.
        unsafe { Component::deserialize(engine, &bytes) }.ok()
    }

    fn store(&self, component: &Component, artifact: &Path, sidecar: &Path) -> std::io::Result<()> {
        let dir = artifact.parent().unwrap_or(Path::new("."));
        create_private_dir(dir)?;
        let bytes = component.serialize().map_err(std::io::Error::other)?;
        write_atomic(dir, artifact, &bytes)?;
        write_atomic(dir, sidecar, sha256_hex(&bytes).as_bytes())
    }
}

fn compile(engine: &Engine, wasm: &[u8], name: &str) -> Result<Component, RuntimeError> {
    Component::new(engine, wasm).map_err(|e| RuntimeError::Compile {
        component: name.to_string(),
        message: format!("{e:#}"),
    })
}

fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

fn write_atomic(dir: &Path, dest: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut tmp = tempfile_in(dir)?;
    tmp.1.write_all(bytes)?;
    tmp.1.sync_all()?;
    std::fs::rename(&tmp.0, dest)
}

fn tempfile_in(dir: &Path) -> std::io::Result<(PathBuf, std::fs::File)> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let name = format!(
        ".tmp-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    );
    let path = dir.join(name);
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    let f = opts.open(&path)?;
    Ok((path, f))
}
