//! Capability requests and grants: the types the host builds each WASM sandbox from.
//!
//! The words ([`Capabilities`]) are the vocabulary crate's; this module keeps what the plugin
//! store records about them.
//!
//! A plugin's `warden.components.<name>.capabilities` is a *request*. At install the user sees
//! the request and consents; what they consented to is a [`Grant`], stored per plugin id and
//! tree digest in `$WARDEN_HOME/plugins/grants.json`. The runtime only ever builds a sandbox
//! from a grant ([`crate::PluginManager::grant_for`]), never from the request.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

pub use warden_vocab::{Capabilities, FsAccess, FsCapability};

/// The capabilities a plugin asks for, per WASM component name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CapabilityRequest {
    /// `name@marketplace`.
    pub plugin_id: String,
    /// Tree digest (sha256 hex) of the plugin version asking.
    pub digest: String,
    /// Component name → what it asks for.
    pub components: BTreeMap<String, Capabilities>,
}

impl CapabilityRequest {
    /// Whether no component asks for anything (install then needs no consent).
    pub fn is_empty(&self) -> bool {
        self.components.values().all(Capabilities::is_empty)
    }

    /// Per component, what this request asks for beyond `grant` (empty map: nothing new).
    pub fn beyond(&self, grant: Option<&Grant>) -> BTreeMap<String, Capabilities> {
        let none = Capabilities::default();
        self.components
            .iter()
            .filter_map(|(name, caps)| {
                let granted = grant.and_then(|g| g.components.get(name)).unwrap_or(&none);
                let d = caps.minus(granted);
                (!d.is_empty()).then(|| (name.clone(), d))
            })
            .collect()
    }
}

impl fmt::Display for CapabilityRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{} requests:", self.plugin_id)?;
        for (name, caps) in &self.components {
            writeln!(f, "  {}: {caps}", shown_name(name))?;
        }
        Ok(())
    }
}

/// What the user consented to for one plugin version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Grant {
    /// `name@marketplace`.
    pub plugin_id: String,
    /// Tree digest (sha256 hex) the grant applies to.
    pub digest: String,
    /// Component name → granted capabilities.
    pub components: BTreeMap<String, Capabilities>,
    /// Component name → sha256 (lowercase hex) of its `.wasm` file when the grant was given.
    /// The tree digest says which plugin version was approved; this lets the runtime check,
    /// just before linking, that the file it is about to run is the one approved, even when the
    /// cache copy was modified after install. Empty in grants written before it existed.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub component_digests: BTreeMap<String, String>,
    /// When the grant was given (ISO 8601 UTC).
    pub granted_at: String,
}

impl Grant {
    /// The capabilities granted to one component (`None` = the component may not run at all).
    pub fn component(&self, name: &str) -> Option<&Capabilities> {
        self.components.get(name)
    }

    /// The sha256 (lowercase hex) recorded for a component's `.wasm` file; `None` for an unknown
    /// component or a grant recorded before digests were kept (the caller decides whether to
    /// run such a component).
    pub fn component_digest(&self, component: &str) -> Option<&str> {
        self.component_digests.get(component).map(String::as_str)
    }
}

/// How a key of a request or grant is shown: a component's name, or what the processes'
/// entry stands for.
pub fn shown_name(key: &str) -> &str {
    if key == crate::warden::PROCESSES_GRANT_KEY {
        "programs (command hooks, MCP servers)"
    } else {
        key
    }
}

/// Formats a "needs consent" diff: one line per component.
pub fn format_diff(diff: &BTreeMap<String, Capabilities>) -> String {
    diff.iter()
        .map(|(n, c)| format!("{}: +{c}", shown_name(n)))
        .collect::<Vec<_>>()
        .join("; ")
}
