//! Host bindings for each released version of the `warden:plugin` WIT package, and how a
//! component is matched to one.
//!
//! Every version gets a `since_vX_Y` module generated from its frozen folder under `wit/`
//! (Zed's extension host does the same): the newest is [`latest`], and the capability
//! providers implement its host traits. When a new version is released, its folder and module
//! are added, `latest` moves to it, and the old module's host traits are implemented by
//! converting to the new types and delegating, so guests built against the old SDK keep
//! running unchanged. [`WitVersion::of`] reads which version a component was built against
//! from its imports, before anything is linked.

use wasmtime::Engine;
use wasmtime::component::Component;

/// Bindings for `warden:plugin@0.1.0` (`wit/v0.1`).
pub mod since_v0_1 {
    /// The oldest `warden:plugin` release these bindings serve (major, minor, patch).
    pub const MIN_VERSION: (u64, u64, u64) = (0, 1, 0);
    /// The newest: every 0.1 patch release, since before 1.0 only a minor release breaks.
    pub const MAX_VERSION: (u64, u64, u64) = (0, 1, u64::MAX);

    /// The `hook` world.
    // Generated code; the WIT files carry the documentation.
    #[allow(missing_docs)]
    pub mod hook {
        wasmtime::component::bindgen!({
            path: "../../../wit/v0.1",
            world: "warden:plugin/hook",
            imports: { default: async | trappable },
            exports: { default: async },
        });
    }

    /// The `tool` world; shares the interface bindings of [`hook`].
    #[allow(missing_docs)]
    pub mod tool {
        wasmtime::component::bindgen!({
            path: "../../../wit/v0.1",
            world: "warden:plugin/tool",
            imports: { default: async | trappable },
            exports: { default: async },
            with: {
                "warden:plugin/types": super::hook::warden::plugin::types,
                "warden:plugin/log": super::hook::warden::plugin::log,
                "warden:plugin/fs": super::hook::warden::plugin::fs,
                "warden:plugin/exec": super::hook::warden::plugin::exec,
                "warden:plugin/http": super::hook::warden::plugin::http,
                "warden:plugin/env": super::hook::warden::plugin::env,
            },
        });
    }

    pub use hook::warden::plugin::{env, exec, fs, http, log, types};

    use warden_vocab::{HookDecision as Decision, HookResult};

    /// The version-neutral form of this version's `hook-result`.
    pub(crate) fn hook_result(r: types::HookResult) -> HookResult {
        use types::Decision as D;
        HookResult {
            decision: match r.decision {
                D::None => Decision::None,
                D::Allow => Decision::Allow,
                D::Deny => Decision::Deny,
                D::Ask => Decision::Ask,
                D::Defer => Decision::Defer,
                D::Block => Decision::Block,
            },
            reason: r.reason,
            additional_context: r.additional_context,
            updated_input: r.updated_input,
            system_message: r.system_message,
            continue_: r.continue_,
            stop_reason: r.stop_reason,
            suppress_output: r.suppress_output,
        }
    }
}

pub use since_v0_1 as latest;

/// The WIT package whose versions are dispatched on.
pub const PACKAGE: &str = "warden:plugin";

/// A `warden:plugin` version this host has bindings for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum WitVersion {
    /// `warden:plugin@0.1.x` ([`since_v0_1`]).
    V0_1,
}

impl WitVersion {
    /// Every supported version, oldest first; the last is [`latest`].
    pub const ALL: [WitVersion; 1] = [WitVersion::V0_1];

    /// The newest version.
    pub const LATEST: WitVersion = WitVersion::V0_1;

    /// How the version appears in errors (`0.1.x`: any patch release of 0.1 is compatible).
    pub fn name(self) -> &'static str {
        match self {
            WitVersion::V0_1 => "0.1.x",
        }
    }

    /// The version a `warden:plugin` semver string belongs to. Before 1.0 a minor release
    /// is a breaking one, so `0.1.7` is 0.1 but `0.2.0` is a different version.
    pub fn parse(version: &str) -> Option<WitVersion> {
        let mut parts = version.split(['.', '-', '+']);
        let mut number = || parts.next()?.parse::<u64>().ok();
        let v = (number()?, number()?, number()?);
        (since_v0_1::MIN_VERSION..=since_v0_1::MAX_VERSION)
            .contains(&v)
            .then_some(WitVersion::V0_1)
    }

    /// The supported versions, for error messages (`0.1.x`).
    pub fn supported() -> String {
        WitVersion::ALL
            .iter()
            .map(|v| v.name())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The version `component` was built against, read from the versions in its
    /// `warden:plugin/...@x.y.z` imports and exports. A component naming no `warden:plugin`
    /// interface at all is taken to be of the latest version (the world's own exports carry
    /// no version); the linker then checks that it really implements the world.
    ///
    /// Errors with the first version this host has no bindings for.
    pub fn of(component: &Component, engine: &Engine) -> Result<WitVersion, UnknownWitVersion> {
        let ty = component.component_type();
        let imports = ty.imports(engine).map(|(n, _)| n.to_string());
        let exports = ty.exports(engine).map(|(n, _)| n.to_string());
        let mut found = None;
        for name in imports.chain(exports) {
            let Some(rest) = name.strip_prefix(PACKAGE) else {
                continue;
            };
            let Some((_, version)) = rest.split_once('@') else {
                continue;
            };
            match WitVersion::parse(version) {
                Some(v) => found = Some(found.map_or(v, |f: WitVersion| f.max(v))),
                None => {
                    return Err(UnknownWitVersion {
                        interface: name.clone(),
                        version: version.to_string(),
                    });
                }
            }
        }
        Ok(found.unwrap_or(WitVersion::LATEST))
    }
}

/// A component names a `warden:plugin` version this host has no bindings for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{interface} names warden:plugin version {version}, which this host does not serve")]
pub struct UnknownWitVersion {
    /// The import or export naming it (`warden:plugin/fs@9.0.0`).
    pub interface: String,
    /// The version it names.
    pub version: String,
}

#[cfg(test)]
mod tests {
    use super::WitVersion;

    /// A released version's files never change: `wit/frozen.sha256` holds their digests, and
    /// every folder under `wit/` is released (listed whole), one per supported version.
    #[test]
    fn released_wit_is_frozen() {
        use sha2::{Digest, Sha256};
        use std::collections::BTreeMap;
        let wit = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../wit");
        let list = std::fs::read_to_string(wit.join("frozen.sha256")).expect("wit/frozen.sha256");
        let mut listed = BTreeMap::new();
        for (n, line) in list.lines().enumerate() {
            if line.starts_with('#') || line.trim().is_empty() {
                continue;
            }
            let (digest, file) = line
                .split_once("  ")
                .unwrap_or_else(|| panic!("wit/frozen.sha256:{}: not `DIGEST  FILE`", n + 1));
            listed.insert(file.to_string(), digest.to_string());
        }
        let mut found = BTreeMap::new();
        let mut folders = Vec::new();
        for dir in std::fs::read_dir(&wit).expect("wit/").flatten() {
            if !dir.path().is_dir() {
                continue;
            }
            let folder = dir.file_name().to_string_lossy().into_owned();
            folders.push(folder.clone());
            for f in std::fs::read_dir(dir.path())
                .expect("version folder")
                .flatten()
            {
                let bytes = std::fs::read(f.path()).expect("wit file");
                let digest: String = Sha256::digest(&bytes)
                    .iter()
                    .map(|b| format!("{b:02x}"))
                    .collect();
                found.insert(
                    format!("{folder}/{}", f.file_name().to_string_lossy()),
                    digest,
                );
            }
        }
        for (file, digest) in &listed {
            match found.get(file) {
                Some(d) if d == digest => {}
                Some(_) => panic!(
                    "wit/{file} changed, but its version is released and frozen: put the change in a new version folder"
                ),
                None => panic!("wit/{file} is gone, but its version is released and frozen"),
            }
        }
        for file in found.keys() {
            assert!(
                listed.contains_key(file),
                "wit/{file} is not in wit/frozen.sha256: a released version gains no files, and a new version is listed when it is released"
            );
        }
        folders.sort();
        let supported: Vec<String> = WitVersion::ALL
            .iter()
            .map(|v| format!("v{}", v.name().trim_end_matches(".x")))
            .collect();
        assert_eq!(
            folders, supported,
            "every folder under wit/ has a bindings module (WitVersion::ALL)"
        );
    }

    #[test]
    fn versions() {
        let table = [
            ("0.1.0", Some(WitVersion::V0_1)),
            ("0.1.9", Some(WitVersion::V0_1)),
            ("0.1.0-rc.1", Some(WitVersion::V0_1)),
            ("0.2.0", None),
            ("9.0.0", None),
            ("1.1.0", None),
            ("0.1", None),
            ("x.1.0", None),
            ("", None),
        ];
        for (version, want) in table {
            assert_eq!(WitVersion::parse(version), want, "{version}");
        }
    }
}
