//! Parts of a plugin that Warden reads and checks but does not act on yet.
//!
//! Claude Code accepts them, so they are no reason to refuse a plugin, but a user who installs
//! one must not believe it works in full. [`unsupported`] names each part a loaded plugin uses
//! and what the user goes without; install reports each once as a warning and `plugin details`
//! lists them. They stay out of the loader's diagnostics, so `plugin validate --strict` keeps
//! passing plugins that Claude Code's validator passes.

use std::path::PathBuf;

use serde::Serialize;

use crate::loader::{LoadedPlugin, MANIFEST_FILE};

/// One part of a plugin that Warden does not act on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UnsupportedPart {
    /// The key of `plugin.json` (or default folder) it is declared by: `workflows`, `channels`, …
    pub key: &'static str,
    /// Where it is declared: the file or folder that holds it.
    pub file: PathBuf,
    /// What does not happen because of it.
    pub consequence: &'static str,
}

impl std::fmt::Display for UnsupportedPart {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: not supported yet, {}", self.key, self.consequence)
    }
}

/// The parts of `p` Warden does not act on, each once, in a fixed order.
pub fn unsupported(p: &LoadedPlugin) -> Vec<UnsupportedPart> {
    let manifest = p.root.join(MANIFEST_FILE);
    // The file or folder that declares a part: the default one when it exists, else plugin.json
    // (an inline object or a manifest path).
    let at = |default: &str| -> PathBuf {
        let d = p.root.join(default);
        if d.exists() { d } else { manifest.clone() }
    };
    let mut out = Vec::new();
    let mut add = |used: bool, key: &'static str, file: PathBuf, consequence: &'static str| {
        if used {
            out.push(UnsupportedPart {
                key,
                file,
                consequence,
            });
        }
    };
    add(
        !p.components.workflows.is_empty(),
        "workflows",
        at("workflows"),
        "the workflows will not be available",
    );
    add(
        !p.components.themes.is_empty(),
        "experimental.themes",
        at("themes"),
        "the themes will not be applied",
    );
    add(
        !p.manifest.channels.is_empty(),
        "channels",
        manifest.clone(),
        "the servers' channel messages will not be delivered",
    );
    add(
        !p.manifest.dependencies.is_empty(),
        "dependencies",
        manifest.clone(),
        "the plugins it depends on are not installed with it; install them yourself",
    );
    add(
        p.bin_dir.is_some(),
        "bin",
        at("bin"),
        "its programs will not be put on the Bash tool's PATH",
    );
    out
}
