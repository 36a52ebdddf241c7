//! The `plugin` and `plugin marketplace` verbs over `$WARDEN_HOME/plugins/`.
//!
//! [`PluginManager`] is what the CLI calls: one method per verb, each returning a `Serialize`
//! struct (for `--json`) that also implements `Display` (the human text).
//!
//! | CLI | method |
//! |---|---|
//! | `warden plugin marketplace add <dir\|git URL\|owner/repo> [-s]` | [`PluginManager::marketplace_add`] |
//! | `warden plugin marketplace list` | [`PluginManager::marketplace_list`] |
//! | `warden plugin marketplace remove <name> [-s] [--uninstall-plugins]` | [`PluginManager::marketplace_remove`] |
//! | `warden plugin marketplace update [name]` | [`PluginManager::marketplace_update`] |
//! | `warden plugin install <p>[@m] [-s] [--yes]` | [`PluginManager::install_with_consent`] |
//! | `warden plugin update <p> [-s] [--yes]` | [`PluginManager::update_with_consent`] |
//! | `warden plugin uninstall <p> [-s] [--keep-data]` | [`PluginManager::uninstall`] |
//! | `warden plugin enable/disable <p> [-s]` | [`PluginManager::enable`] / [`PluginManager::disable`] |
//! | `warden plugin list [--available]` | [`PluginManager::list`] |
//! | `warden plugin details <p>` | [`PluginManager::details`] |
//! | `warden plugin verify` | [`PluginManager::verify`] |
//! | `warden plugin grant <p>` | [`PluginManager::grant`] |
//! | `warden plugin validate <dir>` | [`crate::validate()`] |
//!
//! The runtime uses [`PluginManager::active_plugins`], [`PluginManager::load_active`] and
//! [`PluginManager::grant_for`].
//!
//! **Atomicity.** Install and update fetch and copy into a staging directory under
//! `plugins/.tmp/` (same filesystem as the cache), hash it, check it, then `rename` it into
//! `cache/<marketplace>/<plugin>/<version>/`. The same version with different contents goes to
//! `<version>-<digest12>`, so a directory another installation records is never overwritten
//! with other contents. An existing directory is re-hashed before it is reused: one modified
//! since it was installed (what `verify` reports as tampered) is replaced by the staged copy,
//! moved aside first and moved back if the rename fails. So `install` of an installed plugin and
//! `update` both repair a tampered cache copy; `update` answers `up-to-date` only when the
//! source and the cache copy both match the recorded digest. A directory is replaced by an
//! atomic exchange (`renameat2`), so a kill never leaves the path empty.
//!
//! The commit point is the atomic rewrite of `installed_plugins.json`, written after the cache
//! copy, the `enabledPlugins` key and the grant; a failure or kill before it leaves the previous
//! version recorded, on disk and granted, and what was written before it is inert (a grant
//! counts only for a plugin some installation records). Uninstall commits first and then
//! removes the settings key, the data and, last, the grants, so `uninstall` run again after a
//! kill finds the leftover grant and finishes. Each command's staging directory holds a lock
//! while it runs; the next command removes those whose lock nobody holds. The crash points
//! tested are listed in [`crate::fault::POINTS`].
//!
//! **Consent.** A request beyond the stored grants is granted only as [`Consent`] says. The CLI
//! shows the request of a [`InstallOutcome::NeedsConsent`] and calls again with
//! [`Consent::AcceptDigest`] of that outcome's digest; the source is fetched again for that
//! call, and a copy that hashes differently is refused (another `NeedsConsent`), so the grant
//! stored is always for the tree whose request the user saw.
//!
//! Differences from Claude Code, by design: directory-marketplace plugins are also run from the
//! cache copy (Claude Code reads them from the source folder), so the recorded digest always
//! describes what runs; `npm`, `archive` and `command` sources are recognised but refused.

mod cache;
mod copy;
mod details;
mod install;
mod marketplace;
mod oci;
mod report;
mod signed_index;

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::Value;
use warden_config::{Home, Scope};

use crate::capability::{Capabilities, CapabilityRequest, Grant};
use crate::digest::{file_sha256, tree_digest};
use crate::error::io;
use crate::fault;
use crate::loader::{LoadContext, LoadedPlugin, load_plugin_with};
use crate::marketplace::{MarketplaceEntry, PluginSource, load_marketplace};
use crate::namespace::{data_dir_name, legacy_data_dir_name, plugin_id, split_plugin_id};
use crate::progress::Progress;
use crate::store::{InstallRecord, Store, enabled_plugins_in};
use crate::util::now_iso;
use crate::warden::PROCESSES_GRANT_KEY;
use install::{enabled_value, set_enabled_key};

pub use crate::error::PluginError;
pub use copy::{COPY_DELAY_ENV, CopyLimits};
pub use details::{
    ComponentDetails, HookDetails, OciDetails, PluginDetails, ServerDetails, SignedIndexDetails,
};
pub use install::{Consent, InstallOptions};
pub use oci::{OCI_MARKETPLACE, OCI_RECORD_KEY, oci_record};
pub use report::*;
pub use signed_index::{
    INDEX_FILE, INDEX_RECORD_KEY, INDEX_SIGNATURE_FILE, SignedIndexReport, SignedPlugin,
    index_record,
};

/// The plugin verbs, for one home directory and working directory.
#[derive(Debug, Clone)]
pub struct PluginManager {
    home: Home,
    cwd: PathBuf,
    store: Store,
    quiet: bool,
    allow_reserved_names: bool,
    copy_limits: Option<CopyLimits>,
    user_choices: BTreeMap<String, bool>,
    insecure_registries: bool,
}

impl PluginManager {
    /// A manager over `home` for a session in `cwd`.
    pub fn new(home: Home, cwd: impl Into<PathBuf>) -> Self {
        let store = Store {
            root: home.plugins_dir(),
        };
        PluginManager {
            home,
            cwd: cwd.into(),
            store,
            quiet: false,
            allow_reserved_names: false,
            copy_limits: None,
            user_choices: BTreeMap::new(),
            insecure_registries: false,
        }
    }

    /// What the files the user controls say in `enabledPlugins` beyond the user settings file
    /// this manager reads itself (managed, `--settings`, Claude Code's user file): a session
    /// passes [`warden_config::Settings::user_plugin_choices`], so a plugin enabled there is
    /// never turned off by a repository's files (see [`PluginManager::is_enabled`]).
    pub fn with_user_choices(mut self, choices: BTreeMap<String, bool>) -> Self {
        self.user_choices = choices;
        self
    }

    /// Hides progress bars (the CLI passes true under `--json` or without a TTY).
    pub fn quiet(mut self, quiet: bool) -> Self {
        self.quiet = quiet;
        self
    }

    /// Allows reserved marketplace names (e.g. `claude-plugins-official`) from any source.
    /// Off by default: Claude Code accepts them only from github.com/anthropics.
    pub fn allow_reserved_names(mut self, allow: bool) -> Self {
        self.allow_reserved_names = allow;
        self
    }

    /// Allows plain HTTP to registries that are not on the loopback interface (`--insecure`;
    /// loopback registries are always reached over plain HTTP).
    pub fn insecure_registries(mut self, insecure: bool) -> Self {
        self.insecure_registries = insecure;
        self
    }

    /// Uses these copy budgets instead of the user settings' `plugins.copyLimits`.
    pub fn with_copy_limits(mut self, limits: CopyLimits) -> Self {
        self.copy_limits = Some(limits);
        self
    }

    /// The copy budgets: as set with [`PluginManager::with_copy_limits`], else the user
    /// settings' `plugins.copyLimits` over the defaults. Only the user's own file counts: a
    /// project's settings come with the repository and could raise them.
    pub fn copy_limits(&self) -> Result<CopyLimits, PluginError> {
        if let Some(l) = self.copy_limits {
            return Ok(l);
        }
        let Some(file) = warden_config::settings_path(Scope::User, &self.cwd, &self.home) else {
            return Ok(CopyLimits::default());
        };
        match warden_config::read_settings_file(&file)? {
            Some(m) => CopyLimits::from_settings(&m, &file),
            None => Ok(CopyLimits::default()),
        }
    }

    /// The state files.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// `${CLAUDE_PLUGIN_DATA}` for a plugin id: `plugins/data/<name>`, Claude Code's
    /// `<id with [^A-Za-z0-9_-] → ->`, made unique where that is lossy
    /// ([`data_dir_name`](crate::namespace::data_dir_name)).
    pub fn data_dir(&self, plugin_id: &str) -> PathBuf {
        self.store.data_dir().join(data_dir_name(plugin_id))
    }

    /// [`PluginManager::data_dir`], after moving the directory an earlier version named with
    /// the lossy flattening alone to it, when that directory can only be this plugin's: no
    /// other installed plugin flattens to its name, and the new one does not exist yet.
    fn adopt_data_dir<'a>(
        &self,
        plugin_id: &str,
        mut installed: impl Iterator<Item = &'a String>,
    ) -> PathBuf {
        let dir = self.data_dir(plugin_id);
        let name = legacy_data_dir_name(plugin_id);
        let legacy = self.store.data_dir().join(&name);
        if legacy != dir
            && std::fs::symlink_metadata(&dir).is_err()
            && std::fs::symlink_metadata(&legacy).is_ok_and(|m| m.is_dir())
            && !installed.any(|other| other != plugin_id && legacy_data_dir_name(other) == name)
        {
            // Another session may have moved it first: either way the directory ends up at
            // `dir`.
            let _ = std::fs::rename(&legacy, &dir);
        }
        dir
    }

    fn progress(&self) -> Progress {
        Progress { quiet: self.quiet }
    }

    fn settings_file(&self, scope: Scope) -> Result<PathBuf, PluginError> {
        warden_config::settings_path(scope, &self.cwd, &self.home)
            .ok_or(PluginError::ReadOnlyScope(scope))
    }

    fn project_path(&self, scope: Scope) -> Option<PathBuf> {
        match scope {
            Scope::Project => Some(self.cwd.clone()),
            Scope::Local => Some(warden_config::local_root(&self.cwd)),
            _ => None,
        }
    }

    fn record_here(&self, r: &InstallRecord, scope: Scope) -> bool {
        r.scope == scope && r.project_path == self.project_path(scope)
    }

    /// Resolves `plugin[@marketplace]` against the known marketplaces.
    fn resolve(&self, spec: &str) -> Result<(String, String), PluginError> {
        if let (n, Some(m)) = split_plugin_id(spec) {
            return Ok((n.to_string(), m.to_string()));
        }
        let known = self.store.known()?;
        let mut hits = Vec::new();
        for (mname, k) in &known {
            let mut d = Vec::new();
            if let Some(m) = load_marketplace(&k.install_location, &mut d)
                && (m.entry(spec).is_some() || m.unusable.contains_key(spec))
            {
                hits.push(mname.clone());
            }
        }
        match hits.len() {
            0 => Err(PluginError::NotFoundAnywhere(spec.to_string())),
            1 => Ok((spec.to_string(), hits.remove(0))),
            _ => Err(PluginError::Ambiguous {
                plugin: spec.to_string(),
                marketplaces: hits,
            }),
        }
    }

    /// Resolves an installed plugin: a full id, an entry name, or a `plugin.json` name.
    fn resolve_installed(&self, spec: &str) -> Result<String, PluginError> {
        let installed = self.store.installed()?;
        if installed.plugins.contains_key(spec) {
            return Ok(spec.to_string());
        }
        let hits: Vec<&String> = installed
            .plugins
            .keys()
            .filter(|id| split_plugin_id(id).0 == spec)
            .collect();
        match hits.as_slice() {
            [one] => Ok((*one).clone()),
            [] => {
                // A plugin.json name that differs from the entry name.
                for (id, recs) in &installed.plugins {
                    if let Some(r) = recs.first()
                        && let Ok(p) = crate::loader::load_plugin(&r.install_path)
                        && p.name == spec
                    {
                        return Ok(id.clone());
                    }
                }
                Err(PluginError::NotInstalled {
                    plugin: spec.to_string(),
                    scope: None,
                })
            }
            many => Err(PluginError::Ambiguous {
                plugin: spec.to_string(),
                marketplaces: many
                    .iter()
                    .filter_map(|id| split_plugin_id(id).1.map(str::to_string))
                    .collect(),
            }),
        }
    }

    /// `enable <plugin>`: writes `enabledPlugins[id] = true` in the scope's settings file
    /// (default: the scope of the installation for this directory).
    pub fn enable(&self, spec: &str, scope: Option<Scope>) -> Result<EnableOutput, PluginError> {
        self.set_enabled(spec, scope, true)
    }

    /// `disable <plugin>`: writes `enabledPlugins[id] = false`.
    pub fn disable(&self, spec: &str, scope: Option<Scope>) -> Result<EnableOutput, PluginError> {
        self.set_enabled(spec, scope, false)
    }

    fn set_enabled(
        &self,
        spec: &str,
        scope: Option<Scope>,
        on: bool,
    ) -> Result<EnableOutput, PluginError> {
        let id = self.resolve_installed(spec)?;
        let scope = match scope {
            Some(s) => s,
            None => self.installed_scope(&id, None).unwrap_or(Scope::User),
        };
        let settings = self.settings_file(scope)?;
        self.check_settings()?;
        // The value this scope sets, else the plugin's effective state here.
        let current = enabled_value(&settings, &id)?
            .and_then(|v| v.as_bool())
            .unwrap_or_else(|| self.is_enabled(&id, true));
        if current == on {
            return Err(PluginError::AlreadyInState {
                plugin: id,
                enabled: on,
            });
        }
        set_enabled_key(&settings, &id, Some(Value::Bool(on)))?;
        let verb = if on { "enabled" } else { "disabled" };
        Ok(EnableOutput {
            command: if on { "enable" } else { "disable" },
            outcome: "ok",
            message: format!("✔ Successfully {verb} plugin: {id} (scope: {scope})"),
            plugin: id.clone(),
            plugin_id: id,
            scope,
            enabled: on,
        })
    }

    /// Effective enablement of `id` for this directory. The user's choice (the
    /// [user choices](PluginManager::with_user_choices), else the user settings file) of
    /// `true` stands: a repository's files (project, and local, which a repository can commit)
    /// cannot turn off a plugin the user enabled, such as their guard. Otherwise local >
    /// project > the user's explicit values, else `default` (marketplace/plugin
    /// `defaultEnabled`, else true): a repository may enable a plugin, or disable one the user
    /// did not enable.
    pub fn is_enabled(&self, id: &str, default: bool) -> bool {
        let value = |s: Scope| {
            self.settings_file(s)
                .ok()
                .and_then(|p| enabled_plugins_in(&p).get(id).and_then(Value::as_bool))
        };
        let user = self
            .user_choices
            .get(id)
            .copied()
            .or_else(|| value(Scope::User));
        if user == Some(true) {
            return true;
        }
        [Scope::Local, Scope::Project]
            .into_iter()
            .find_map(value)
            .or(user)
            .unwrap_or(default)
    }

    /// Reads the settings files whose `enabledPlugins` decide what is enabled here, so a
    /// corrupt one is an error naming it rather than a silent "enabled by default".
    pub(super) fn check_settings(&self) -> Result<(), PluginError> {
        for s in [Scope::Local, Scope::Project, Scope::User] {
            if let Ok(p) = self.settings_file(s) {
                enabled_value(&p, "")?;
            }
        }
        Ok(())
    }

    /// `list [--available]`.
    pub fn list(&self, available: bool) -> Result<ListOutput, PluginError> {
        let installed = self.store.installed()?;
        self.check_settings()?;
        let mut items = Vec::new();
        for (id, recs) in &installed.plugins {
            for r in recs {
                items.push(PluginListItem {
                    id: id.clone(),
                    version: r.version.clone(),
                    scope: r.scope,
                    enabled: self.is_enabled(id, true),
                    install_path: r.install_path.clone(),
                    installed_at: r.installed_at.clone(),
                    last_updated: r.last_updated.clone(),
                    project_path: r.project_path.clone(),
                    sha256: r.warden.as_ref().map(|w| w.sha256.clone()),
                });
            }
        }
        let mut avail = Vec::new();
        if available {
            for (mname, k) in self.store.known()? {
                let mut d = Vec::new();
                let Some(m) = load_marketplace(&k.install_location, &mut d) else {
                    continue;
                };
                for e in m.plugins {
                    let pid = plugin_id(&e.name, &mname);
                    if !installed.plugins.contains_key(&pid) {
                        avail.push(AvailablePlugin {
                            plugin_id: pid,
                            name: e.name,
                            marketplace_name: mname.clone(),
                            description: e.description,
                            version: e.version,
                            source: Some(e.source),
                            unavailable: None,
                        });
                    }
                }
                // Listed but unusable: shown with the reason, so `install` is not a surprise.
                for (name, reason) in m.unusable {
                    let pid = plugin_id(&name, &mname);
                    if !installed.plugins.contains_key(&pid) {
                        avail.push(AvailablePlugin {
                            plugin_id: pid,
                            name,
                            marketplace_name: mname.clone(),
                            description: None,
                            version: None,
                            source: None,
                            unavailable: Some(reason),
                        });
                    }
                }
            }
        }
        Ok(ListOutput {
            installed: items,
            available: avail,
        })
    }

    /// `verify`: re-hashes every installed cache copy and compares it with the recorded digest.
    /// Installations pulled from a registry, or from a marketplace under its signed index,
    /// also have their recorded signature checked again, offline, under today's trust policy
    /// (as does an unsigned installation where a signature is now required).
    pub fn verify(&self) -> Result<VerifyOutput, PluginError> {
        let installed = self.store.installed()?;
        let policy = self.trust_policy()?;
        let mut out = Vec::new();
        for (id, recs) in &installed.plugins {
            for r in recs {
                let expected = r.warden.as_ref().map(|w| w.sha256.clone());
                let (status, actual) = if !r.install_path.is_dir() {
                    (VerifyStatus::Missing, None)
                } else {
                    let actual = tree_digest(&r.install_path).ok();
                    match &expected {
                        None => (VerifyStatus::Unrecorded, actual),
                        Some(e) if actual.as_ref() == Some(e) => (VerifyStatus::Ok, actual),
                        Some(_) => (VerifyStatus::Tampered, actual),
                    }
                };
                let (plugin, marketplace) = split_plugin_id(id);
                let (signer, signature_problem) = match oci::recheck(&policy, r, marketplace)
                    .or_else(|| signed_index::recheck(&policy, r, plugin, marketplace))
                {
                    Some(Ok(s)) => (s, None),
                    Some(Err(why)) => (None, Some(why)),
                    None => (None, None),
                };
                out.push(VerifyItem {
                    plugin_id: id.clone(),
                    scope: r.scope,
                    install_path: r.install_path.clone(),
                    status,
                    expected,
                    actual,
                    signer,
                    signature_problem,
                });
            }
        }
        Ok(VerifyOutput {
            ok: out.iter().all(|i| {
                matches!(i.status, VerifyStatus::Ok | VerifyStatus::Unrecorded)
                    && i.signature_problem.is_none()
            }),
            plugins: out,
        })
    }

    /// The capability request of an installed plugin (for the CLI to print before `grant`).
    pub fn capability_request(&self, spec: &str) -> Result<CapabilityRequest, PluginError> {
        self.installed_request(spec).map(|(req, _, _)| req)
    }

    /// The request of an installed plugin, the loaded plugin and its installation.
    fn installed_request(
        &self,
        spec: &str,
    ) -> Result<(CapabilityRequest, LoadedPlugin, InstallRecord), PluginError> {
        let id = self.resolve_installed(spec)?;
        let installed = self.store.installed()?;
        let rec = installed
            .plugins
            .get(&id)
            .and_then(|r| r.first())
            .cloned()
            .ok_or(PluginError::NotInstalled {
                plugin: id.clone(),
                scope: None,
            })?;
        let entry = record_entry(&rec, &id);
        let loaded = load_plugin_with(
            &rec.install_path,
            &LoadContext {
                entry: entry.as_ref(),
                marketplace_file: None,
                at_source: false,
            },
        )?;
        let digest = rec
            .warden
            .as_ref()
            .map(|w| w.sha256.clone())
            .unwrap_or_default();
        let req = CapabilityRequest {
            plugin_id: id,
            digest,
            components: loaded
                .warden
                .as_ref()
                .map(|w| w.requests())
                .unwrap_or_default(),
        };
        Ok((req, loaded, rec))
    }

    /// `grant <plugin>`: grants an installed plugin everything it requests, for its recorded
    /// digest. A cache copy modified since install is refused: the grant would otherwise record
    /// the modified components under the digest of the tree that was approved.
    pub fn grant(&self, spec: &str) -> Result<Grant, PluginError> {
        let (req, loaded, rec) = self.installed_request(spec)?;
        if tree_digest(&rec.install_path).ok().as_deref() != Some(req.digest.as_str()) {
            return Err(PluginError::State {
                path: rec.install_path,
                message: format!(
                    "does not match the digest recorded at install ({}); run `warden plugin verify`, and reinstall {} before granting it anything",
                    if req.digest.is_empty() {
                        "none"
                    } else {
                        &req.digest
                    },
                    req.plugin_id
                ),
            });
        }
        let mut grants = self.store.grants()?;
        let mut components = req.components;
        // What the user granted the plugin's programs one by one (`grant --write …`) for this
        // very version stays: granting the request adds to it.
        if let Some(extra) = grants
            .get(&req.plugin_id, &req.digest)
            .and_then(|g| g.component(PROCESSES_GRANT_KEY))
        {
            let entry = components
                .entry(PROCESSES_GRANT_KEY.to_string())
                .or_default();
            merge_caps(entry, extra);
        }
        let g = Grant {
            plugin_id: req.plugin_id.clone(),
            digest: req.digest.clone(),
            components,
            component_digests: component_digests(&loaded)?,
            granted_at: now_iso(),
        };
        grants.put(g.clone());
        fault::point("grant.checked");
        self.store.write_grants(&grants)?;
        fault::point("grant.written");
        Ok(g)
    }

    /// `grant <plugin> --write PATH | --read PATH | --network`: adds to what the plugin's
    /// programs (command hooks, stdio MCP servers) may do, for its recorded digest, whether or
    /// not it asked. Like [`grant`](Self::grant), a cache copy modified since install is
    /// refused; an update to other bytes starts again from what that version asks for.
    pub fn grant_processes(&self, spec: &str, add: &Capabilities) -> Result<Grant, PluginError> {
        let (req, loaded, rec) = self.installed_request(spec)?;
        if tree_digest(&rec.install_path).ok().as_deref() != Some(req.digest.as_str()) {
            return Err(PluginError::State {
                path: rec.install_path,
                message: format!(
                    "does not match the digest recorded at install; run `warden plugin verify`, and reinstall {} before granting it anything",
                    req.plugin_id
                ),
            });
        }
        let mut grants = self.store.grants()?;
        let mut g = match grants.get(&req.plugin_id, &req.digest) {
            Some(g) => g.clone(),
            None => Grant {
                plugin_id: req.plugin_id.clone(),
                digest: req.digest.clone(),
                components: BTreeMap::new(),
                component_digests: component_digests(&loaded)?,
                granted_at: now_iso(),
            },
        };
        let entry = g
            .components
            .entry(PROCESSES_GRANT_KEY.to_string())
            .or_default();
        merge_caps(entry, add);
        g.granted_at = now_iso();
        grants.put(g.clone());
        fault::point("grant.checked");
        self.store.write_grants(&grants)?;
        fault::point("grant.written");
        Ok(g)
    }

    /// The grant for a plugin version (`None`: nothing granted, run none of its components).
    pub fn grant_for(&self, plugin_id: &str, digest: &str) -> Option<Grant> {
        self.store.grants().ok()?.get(plugin_id, digest).cloned()
    }

    /// Installed plugins enabled for this directory, one installation each (local, then project,
    /// then user).
    pub fn active_plugins(&self) -> Result<Vec<ActivePlugin>, PluginError> {
        let installed = self.store.installed()?;
        let mut out = Vec::new();
        for (id, recs) in &installed.plugins {
            let Some(r) = [Scope::Local, Scope::Project, Scope::User]
                .iter()
                .find_map(|s| recs.iter().find(|r| self.record_here(r, *s)))
            else {
                continue;
            };
            let entry = record_entry(r, id);
            let default = entry
                .as_ref()
                .and_then(|e| e.raw.get("defaultEnabled"))
                .and_then(Value::as_bool)
                .unwrap_or(true);
            if !self.is_enabled(id, default) {
                continue;
            }
            out.push(ActivePlugin {
                plugin_id: id.clone(),
                scope: r.scope,
                install_path: r.install_path.clone(),
                data_dir: self.adopt_data_dir(id, installed.plugins.keys()),
                version: r.version.clone(),
                sha256: r.warden.as_ref().map(|w| w.sha256.clone()),
                entry,
            });
        }
        Ok(out)
    }

    /// Loads every active plugin (with its recorded marketplace entry); failures are returned
    /// next to the successes so one broken plugin never hides the others.
    pub fn load_active(&self) -> Result<Vec<ActiveLoad>, PluginError> {
        Ok(self
            .active_plugins()?
            .into_iter()
            .map(|a| {
                let r = load_plugin_with(
                    &a.install_path,
                    &LoadContext {
                        entry: a.entry.as_ref(),
                        marketplace_file: None,
                        at_source: false,
                    },
                );
                (a, r)
            })
            .collect())
    }
}

/// The sha256 of each declared WASM component's file, recorded in its grant.
fn component_digests(loaded: &LoadedPlugin) -> Result<BTreeMap<String, String>, PluginError> {
    let mut out = BTreeMap::new();
    for (name, c) in loaded.warden.iter().flat_map(|w| &w.components) {
        out.insert(name.clone(), file_sha256(&c.path).map_err(io(&c.path))?);
    }
    Ok(out)
}

fn record_entry(r: &InstallRecord, id: &str) -> Option<MarketplaceEntry> {
    let raw = r.extra.get("wardenEntry")?.as_object()?.clone();
    let name = split_plugin_id(id).0.to_string();
    Some(MarketplaceEntry {
        name,
        source: PluginSource::Relative {
            path: String::new(),
        },
        strict: raw.get("strict").and_then(Value::as_bool).unwrap_or(true),
        version: raw
            .get("version")
            .and_then(Value::as_str)
            .map(str::to_string),
        description: raw
            .get("description")
            .and_then(Value::as_str)
            .map(str::to_string),
        sha256: None,
        raw,
    })
}

/// Adds what `add` grants to `into`, keeping one entry per path at the higher access.
fn merge_caps(into: &mut Capabilities, add: &Capabilities) {
    for f in &add.fs {
        match into.fs.iter_mut().find(|g| g.path == f.path) {
            Some(g) => g.access = g.access.max(f.access),
            None => into.fs.push(f.clone()),
        }
    }
    for (have, more) in [
        (&mut into.net, &add.net),
        (&mut into.env, &add.env),
        (&mut into.exec, &add.exec),
    ] {
        for x in more {
            if !have.contains(x) {
                have.push(x.clone());
            }
        }
    }
}
