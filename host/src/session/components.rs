//! The components a session has loaded, shared by its hooks and its tools: each (file or
//! embedded bytes, world, grant) is compiled, import-checked and pre-linked once per process.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::runtime::{Capability, Grant, LoadedComponent, Runtime, World};

/// Where a component's bytes come from.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Origin {
    File(PathBuf),
    Embedded(&'static str),
}

/// Loaded components by origin, world and grant.
#[derive(Default)]
pub struct Components {
    loaded: Mutex<HashMap<(Origin, World, Grant), Arc<LoadedComponent>>>,
}

impl std::fmt::Debug for Components {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.loaded.lock().map(|m| m.len()).unwrap_or(0);
        f.debug_struct("Components").field("loaded", &n).finish()
    }
}

impl Components {
    fn get_or_load(
        &self,
        key: (Origin, World, Grant),
        load: impl FnOnce() -> Result<LoadedComponent, String>,
    ) -> Result<Arc<LoadedComponent>, String> {
        if let Some(c) = self
            .loaded
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&key)
        {
            return Ok(c.clone());
        }
        let c = Arc::new(load()?);
        self.loaded
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(key, c.clone());
        Ok(c)
    }

    /// A component file of a plugin. When `grant` gives any capability, the file must hash to
    /// `approved_digest`, the digest the user approved the grant for: a file changed since
    /// (tampered with, or replaced by hand) never runs with the grant.
    pub fn file(
        &self,
        rt: &Runtime,
        path: &Path,
        world: World,
        grant: &Grant,
        approved_digest: Option<&str>,
    ) -> Result<Arc<LoadedComponent>, String> {
        let key = (Origin::File(path.to_path_buf()), world, grant.clone());
        self.get_or_load(key, || {
            let c = rt
                .load_file(path, world, grant)
                .map_err(|e| e.to_string())?;
            check_digest(&c, grant, approved_digest)?;
            Ok(c)
        })
    }

    /// A component embedded in this binary (the built-in tools): its bytes are part of the
    /// program, so there is nothing to pin.
    pub fn embedded(
        &self,
        rt: &Runtime,
        name: &'static str,
        wasm: &'static [u8],
        world: World,
        grant: &Grant,
    ) -> Result<Arc<LoadedComponent>, String> {
        let key = (Origin::Embedded(name), world, grant.clone());
        self.get_or_load(key, || {
            rt.load(name, wasm, world, grant).map_err(|e| e.to_string())
        })
    }
}

fn check_digest(c: &LoadedComponent, grant: &Grant, approved: Option<&str>) -> Result<(), String> {
    let granted = Capability::ALL.into_iter().any(|cap| grant.allows(cap));
    if !granted {
        return Ok(());
    }
    match approved {
        Some(d) if d.eq_ignore_ascii_case(c.digest()) => Ok(()),
        Some(d) => Err(format!(
            "{}: the file changed since its capabilities were granted (approved sha256 {d}, now {}); it was not run. \
             Run `warden plugin verify` to see what changed, and `warden plugin install <plugin>` to restore it",
            c.name(),
            c.digest()
        )),
        None => Err(format!(
            "{}: its grant records no digest for this component, so Warden cannot tell whether the file is the one approved; \
             it was not run. Approve it again with `warden plugin grant <plugin>`",
            c.name()
        )),
    }
}
