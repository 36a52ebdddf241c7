//! Files under `$WARDEN_HOME/plugins/`, in Claude Code's shapes:
//! `known_marketplaces.json`, `installed_plugins.json` (version 2), plus Warden's `grants.json`,
//! and `enabledPlugins` / `extraKnownMarketplaces` edits in settings files.
//!
//! Every write goes to a temp file in the same directory and is renamed over the old file, so a
//! reader (or a killed process) only ever sees a complete file. Keys Warden does not know are
//! preserved on rewrite.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use warden_config::Scope;

use crate::capability::Grant;
use crate::error::PluginError;
use crate::limits::MAX_STATE_BYTES;
use crate::util::{ReadLimitError, read_limited, to_json_bytes, write_atomic};

/// Where a marketplace catalog comes from (`known_marketplaces.json` `source`,
/// `extraKnownMarketplaces.<name>.source`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "source", rename_all = "lowercase")]
pub enum MarketplaceSource {
    /// A local directory, read in place.
    Directory {
        /// Absolute path.
        path: String,
    },
    /// A GitHub repository, cloned from `https://github.com/<repo>.git`.
    Github {
        /// `owner/repo`.
        repo: String,
        /// Branch or tag.
        #[serde(rename = "ref", default, skip_serializing_if = "Option::is_none")]
        git_ref: Option<String>,
        /// Folder of the repository holding `.claude-plugin/`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        path: Option<String>,
    },
    /// Any git URL.
    Git {
        /// The URL.
        url: String,
        /// Branch or tag.
        #[serde(rename = "ref", default, skip_serializing_if = "Option::is_none")]
        git_ref: Option<String>,
        /// Folder of the repository holding `.claude-plugin/`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        path: Option<String>,
    },
}

impl MarketplaceSource {
    /// The git URL to clone, for git sources.
    pub fn git_url(&self) -> Option<String> {
        match self {
            MarketplaceSource::Github { repo, .. } => Some(crate::marketplace::github_url(repo)),
            MarketplaceSource::Git { url, .. } => Some(url.clone()),
            MarketplaceSource::Directory { .. } => None,
        }
    }
}

/// One entry of `known_marketplaces.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KnownMarketplace {
    /// Where the catalog comes from.
    pub source: MarketplaceSource,
    /// The directory holding `.claude-plugin/marketplace.json`.
    pub install_location: PathBuf,
    /// Last add/update (ISO 8601 UTC).
    pub last_updated: String,
    /// Background auto-update.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auto_update: Option<bool>,
    /// Keys written by other tools, kept as they are.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Warden's own fields in an install record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WardenRecord {
    /// Tree digest of the installed copy (see [`crate::digest`]).
    pub sha256: String,
}

/// One installation of a plugin (an element of `installed_plugins.json` `plugins.<id>`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InstallRecord {
    /// Scope it was installed for.
    pub scope: Scope,
    /// Cache directory.
    pub install_path: PathBuf,
    /// Version (cache key), `unknown` when none could be determined.
    pub version: String,
    /// First install (ISO 8601 UTC).
    pub installed_at: String,
    /// Last install/update.
    pub last_updated: String,
    /// Project directory, for project and local scopes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project_path: Option<PathBuf>,
    /// Commit the plugin was fetched at (git sources).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git_commit_sha: Option<String>,
    /// Warden's integrity data (absent for installs made by Claude Code).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warden: Option<WardenRecord>,
    /// Keys written by other tools, kept as they are.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `installed_plugins.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InstalledPlugins {
    /// Always 2.
    pub version: u32,
    /// Plugin id → installations.
    pub plugins: BTreeMap<String, Vec<InstallRecord>>,
}

impl Default for InstalledPlugins {
    fn default() -> Self {
        InstalledPlugins {
            version: 2,
            plugins: BTreeMap::new(),
        }
    }
}

/// `grants.json`: plugin id → grants, one per tree digest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Grants {
    /// Format version (1).
    pub version: u32,
    /// Plugin id → grants (newest last).
    pub grants: BTreeMap<String, Vec<Grant>>,
}

impl Default for Grants {
    fn default() -> Self {
        Grants {
            version: 1,
            grants: BTreeMap::new(),
        }
    }
}

impl Grants {
    /// The grant for exactly this plugin id and digest.
    pub fn get(&self, plugin_id: &str, digest: &str) -> Option<&Grant> {
        self.grants
            .get(plugin_id)?
            .iter()
            .rev()
            .find(|g| g.digest == digest)
    }

    /// The newest grant for this plugin id, whatever the digest.
    pub fn latest(&self, plugin_id: &str) -> Option<&Grant> {
        self.grants.get(plugin_id)?.last()
    }

    /// Adds or replaces the grant for its digest.
    pub fn put(&mut self, g: Grant) {
        let list = self.grants.entry(g.plugin_id.clone()).or_default();
        list.retain(|x| x.digest != g.digest);
        list.push(g);
    }
}

/// Paths of the state files.
#[derive(Debug, Clone)]
pub struct Store {
    /// `$WARDEN_HOME/plugins`.
    pub root: PathBuf,
}

impl Store {
    /// `known_marketplaces.json`.
    pub fn known_path(&self) -> PathBuf {
        self.root.join("known_marketplaces.json")
    }
    /// `installed_plugins.json`.
    pub fn installed_path(&self) -> PathBuf {
        self.root.join("installed_plugins.json")
    }
    /// `grants.json`.
    pub fn grants_path(&self) -> PathBuf {
        self.root.join("grants.json")
    }
    /// `cache/`.
    pub fn cache_dir(&self) -> PathBuf {
        self.root.join("cache")
    }
    /// `marketplaces/` (clones of git marketplaces).
    pub fn marketplaces_dir(&self) -> PathBuf {
        self.root.join("marketplaces")
    }
    /// `data/`.
    pub fn data_dir(&self) -> PathBuf {
        self.root.join("data")
    }
    /// Scratch space on the same filesystem as the cache (staging, clones).
    pub fn tmp_dir(&self) -> PathBuf {
        self.root.join(".tmp")
    }

    /// Reads `known_marketplaces.json` (empty when missing).
    pub fn known(&self) -> Result<BTreeMap<String, KnownMarketplace>, PluginError> {
        read_json_or_default(&self.known_path())
    }
    /// Writes `known_marketplaces.json`.
    pub fn write_known(&self, v: &BTreeMap<String, KnownMarketplace>) -> Result<(), PluginError> {
        write_json(&self.known_path(), v)
    }
    /// Reads `installed_plugins.json`.
    pub fn installed(&self) -> Result<InstalledPlugins, PluginError> {
        read_json_or_default(&self.installed_path())
    }
    /// Writes `installed_plugins.json` (the commit point of install, update and uninstall).
    pub fn write_installed(&self, v: &InstalledPlugins) -> Result<(), PluginError> {
        write_json(&self.installed_path(), v)
    }
    /// Reads `grants.json`.
    pub fn grants(&self) -> Result<Grants, PluginError> {
        read_json_or_default(&self.grants_path())
    }
    /// Writes `grants.json`.
    pub fn write_grants(&self, v: &Grants) -> Result<(), PluginError> {
        write_json(&self.grants_path(), v)
    }
}

fn read_json_or_default<T: serde::de::DeserializeOwned + Default>(
    path: &Path,
) -> Result<T, PluginError> {
    let text = match read_limited(path, MAX_STATE_BYTES) {
        Ok(t) => t,
        Err(ReadLimitError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(T::default());
        }
        Err(ReadLimitError::Io(source)) => {
            return Err(PluginError::Io {
                path: path.to_path_buf(),
                source,
            });
        }
        Err(e) => {
            return Err(PluginError::State {
                path: path.to_path_buf(),
                message: e.to_string(),
            });
        }
    };
    serde_json::from_str(&text).map_err(|e| PluginError::State {
        path: path.to_path_buf(),
        message: format!("{}:{}: {e}; fix or delete the file", e.line(), e.column()),
    })
}

pub(crate) fn write_json(path: &Path, v: &impl Serialize) -> Result<(), PluginError> {
    write_atomic(path, &to_json_bytes(v)).map_err(|source| PluginError::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// Edits a settings file in place, keeping every other key (and their order). A file that is
/// not valid JSON is never overwritten: the error names it and its position.
pub fn edit_settings(
    path: &Path,
    f: impl FnOnce(&mut Map<String, Value>),
) -> Result<(), PluginError> {
    let mut map = warden_config::read_settings_file(path)?.unwrap_or_default();
    f(&mut map);
    write_json(path, &Value::Object(map))
}

/// `enabledPlugins` of the settings file at `path` (empty when missing or unreadable).
pub fn enabled_plugins_in(path: &Path) -> Map<String, Value> {
    warden_config::read_settings_file(path)
        .ok()
        .flatten()
        .and_then(|m| m.get("enabledPlugins").and_then(Value::as_object).cloned())
        .unwrap_or_default()
}
