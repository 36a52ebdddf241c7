//! Capability requests and grants: the types the host builds each WASM sandbox from.
//!
//! A plugin's `warden.components.<name>.capabilities` is a *request*. At install the user sees
//! the request and consents; what they consented to is a [`Grant`], stored per plugin id and
//! tree digest in `$WARDEN_HOME/plugins/grants.json`. The runtime only ever builds a sandbox
//! from a grant ([`crate::PluginManager::grant_for`]), never from the request.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

/// Access to one filesystem path. `write` implies `read`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FsAccess {
    /// Read only.
    Read,
    /// Read and write.
    Write,
}

/// One filesystem capability: a path (may start with `${CLAUDE_PLUGIN_ROOT}`,
/// `${CLAUDE_PLUGIN_DATA}`, `${CLAUDE_PROJECT_DIR}` or `~`, else absolute or project-relative)
/// and the access level.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct FsCapability {
    /// The path.
    pub path: String,
    /// The access level.
    pub access: FsAccess,
}

/// What one WASM component may do outside its sandbox.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Capabilities {
    /// Filesystem paths.
    #[serde(default)]
    pub fs: Vec<FsCapability>,
    /// Network origins, `http(s)://host[:port]`.
    #[serde(default)]
    pub net: Vec<String>,
    /// Environment variable names.
    #[serde(default)]
    pub env: Vec<String>,
    /// Executable names.
    #[serde(default)]
    pub exec: Vec<String>,
}

impl Capabilities {
    /// Whether nothing is requested.
    pub fn is_empty(&self) -> bool {
        self.fs.is_empty() && self.net.is_empty() && self.env.is_empty() && self.exec.is_empty()
    }

    /// Whether `self` allows everything in `other`.
    pub fn covers(&self, other: &Capabilities) -> bool {
        other.minus(self).is_empty()
    }

    /// What `self` asks for that `granted` does not allow.
    pub fn minus(&self, granted: &Capabilities) -> Capabilities {
        let fs = self
            .fs
            .iter()
            .filter(|c| {
                !granted
                    .fs
                    .iter()
                    .any(|g| g.path == c.path && g.access >= c.access)
            })
            .cloned()
            .collect();
        let diff = |a: &[String], b: &[String]| {
            a.iter()
                .filter(|x| !b.contains(x))
                .cloned()
                .collect::<Vec<_>>()
        };
        Capabilities {
            fs,
            net: diff(&self.net, &granted.net),
            env: diff(&self.env, &granted.env),
            exec: diff(&self.exec, &granted.exec),
        }
    }
}

impl fmt::Display for Capabilities {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_empty() {
            return f.write_str("(no capabilities)");
        }
        let mut parts = Vec::new();
        for c in &self.fs {
            parts.push(format!(
                "fs {} {}",
                match c.access {
                    FsAccess::Read => "read",
                    FsAccess::Write => "read+write",
                },
                c.path
            ));
        }
        parts.extend(self.net.iter().map(|n| {
            if n == crate::warden::ANY_NETWORK {
                "network (every host)".to_string()
            } else {
                format!("net {n}")
            }
        }));
        parts.extend(self.env.iter().map(|n| format!("env {n}")));
        parts.extend(self.exec.iter().map(|n| format!("exec {n}")));
        f.write_str(&parts.join(", "))
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minus_and_covers() {
        let req = Capabilities {
            fs: vec![FsCapability {
                path: "/a".into(),
                access: FsAccess::Write,
            }],
            net: vec!["https://x.dev".into()],
            env: vec!["HOME".into()],
            exec: vec![],
        };
        let mut g = req.clone();
        assert!(g.covers(&req));
        g.fs[0].access = FsAccess::Read;
        let d = req.minus(&g);
        assert_eq!(d.fs.len(), 1);
        assert!(d.net.is_empty());
        assert!(!g.covers(&req));
    }
}
