//! The `plugin` and `plugin marketplace` verbs over `$WARDEN_HOME/plugins/`.
//!
//! [`PluginManager`] is what the CLI calls: one method per verb, each returning a `Serialize`
//! struct (for `--json`) that also implements `Display` (the human text).
//!
//! | CLI | method |
//! |---|---|
//! | `warden plugin marketplace add <dir\|git URL\|owner/repo> [-s]` | [`PluginManager::marketplace_add`] |
//! | `warden plugin marketplace list` | [`PluginManager::marketplace_list`] |
//! | `warden plugin marketplace remove <name> [-s]` | [`PluginManager::marketplace_remove`] |
//! | `warden plugin marketplace update [name]` | [`PluginManager::marketplace_update`] |
//! | `warden plugin install <p>[@m] [-s] [--yes]` | [`PluginManager::install_with_consent`] |
//! | `warden plugin update <p> [-s] [--yes]` | [`PluginManager::update_with_consent`] |
//! | `warden plugin uninstall <p> [-s] [--keep-data]` | [`PluginManager::uninstall`] |
//! | `warden plugin enable/disable <p> [-s]` | [`PluginManager::enable`] / [`PluginManager::disable`] |
//! | `warden plugin list [--available]` | [`PluginManager::list`] |
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
//! source and the cache copy both match the recorded digest. The commit point is the atomic
//! rewrite of `installed_plugins.json`; a failure or kill before it leaves the previous version
//! recorded and on disk. Leftover staging directories are swept on the next install.
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

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::{Value, json};
use warden_config::{Home, Scope};

use crate::capability::{Capabilities, CapabilityRequest, Grant, format_diff};
use crate::diag::Diagnostic;
use crate::digest::{ORPHAN_MARKER, tree_digest};
use crate::git::{self, GitError};
use crate::loader::{LoadContext, LoadError, LoadedPlugin, load_plugin_with};
use crate::marketplace::{
    MARKETPLACE_FILE, Marketplace, MarketplaceEntry, PluginSource, is_reserved_name,
    load_marketplace, looks_like_owner_repo,
};
use crate::namespace::{data_dir_name, plugin_id, split_plugin_id};
use crate::progress::Progress;
use crate::store::{
    InstallRecord, InstalledPlugins, KnownMarketplace, MarketplaceSource, Store, WardenRecord,
    edit_settings, enabled_plugins_in,
};
use crate::util::now_iso;

/// Environment variable (milliseconds) that slows the copy into staging down per file. It exists
/// for crash-safety tests that kill an install midway; leave it unset otherwise.
pub const COPY_DELAY_ENV: &str = "WARDEN_PLUGINS_COPY_DELAY_MS";

/// Errors of the plugin verbs. Each names the file or thing concerned and what to do next.
#[derive(Debug, thiserror::Error)]
pub enum PluginError {
    /// No such plugin in the marketplace (Claude Code's wording).
    #[error(
        "Plugin \"{plugin}\" not found in marketplace \"{marketplace}\". Your local copy may be out of date — try `warden plugin marketplace update {marketplace}`."
    )]
    NotFound {
        /// Plugin name.
        plugin: String,
        /// Marketplace name.
        marketplace: String,
    },
    /// No known marketplace has this plugin.
    #[error(
        "Plugin \"{0}\" not found in any known marketplace. Add its marketplace with `warden plugin marketplace add`, or name it as <plugin>@<marketplace>."
    )]
    NotFoundAnywhere(String),
    /// Several marketplaces have a plugin of this name.
    #[error("Plugin \"{plugin}\" exists in several marketplaces ({}); name one: {plugin}@<marketplace>", marketplaces.join(", "))]
    Ambiguous {
        /// Plugin name.
        plugin: String,
        /// Candidates.
        marketplaces: Vec<String>,
    },
    /// Not installed (in that scope).
    #[error("Plugin \"{plugin}\" is not installed{}. Run `warden plugin list` to see installed plugins.", scope.map(|s| format!(" in scope {s}")).unwrap_or_default())]
    NotInstalled {
        /// Plugin id or name.
        plugin: String,
        /// Scope asked for.
        scope: Option<Scope>,
    },
    /// No known marketplace of this name.
    #[error(
        "Marketplace \"{0}\" is not known. Run `warden plugin marketplace list`, or add it with `warden plugin marketplace add`."
    )]
    UnknownMarketplace(String),
    /// A local path given to `marketplace add` does not exist.
    #[error("Path does not exist: {}", .0.display())]
    PathNotFound(PathBuf),
    /// A marketplace source string could not be understood.
    #[error(
        "cannot understand marketplace source `{0}`: give a directory, a git URL with its scheme (https://, ssh://, git://, file://, git@host:path) or owner/repo"
    )]
    BadSource(String),
    /// The marketplace file is invalid.
    #[error("Failed to parse marketplace file at {}: Invalid schema: {details}", path.display())]
    InvalidMarketplace {
        /// The file.
        path: PathBuf,
        /// The errors, joined.
        details: String,
    },
    /// A reserved marketplace name from a source outside github.com/anthropics.
    #[error(
        "marketplace name `{0}` is reserved for github.com/anthropics; rename the marketplace, or allow reserved names explicitly"
    )]
    ReservedName(String),
    /// The plugin failed to load.
    #[error(transparent)]
    Load(#[from] LoadError),
    /// A git command failed.
    #[error(transparent)]
    Git(#[from] GitError),
    /// The installed tree does not match the marketplace's `sha256`.
    #[error(
        "digest mismatch for {plugin}: the marketplace entry pins sha256 {expected} but the fetched tree hashes to {actual}; nothing was installed. Check the marketplace entry or the source"
    )]
    DigestMismatch {
        /// Plugin id.
        plugin: String,
        /// Pinned.
        expected: String,
        /// Computed.
        actual: String,
    },
    /// The source type cannot be installed by Warden.
    #[error(
        "plugin \"{plugin}\" uses a `{kind}` source, which Warden cannot install yet; use a github, url, git-subdir or relative source"
    )]
    UnsupportedSource {
        /// Plugin id.
        plugin: String,
        /// Source type.
        kind: String,
    },
    /// The scope cannot be written.
    #[error("scope `{0}` is read-only; use user, project or local")]
    ReadOnlyScope(Scope),
    /// A settings file could not be read.
    #[error(transparent)]
    Settings(#[from] warden_config::ConfigError),
    /// A state file under `plugins/` is corrupt.
    #[error("{}: {message}", path.display())]
    State {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A filesystem operation failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> PluginError + '_ {
    move |source| PluginError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Options of [`PluginManager::install`] and [`PluginManager::update`].
#[derive(Debug, Clone, Copy)]
pub struct InstallOptions {
    /// Scope (`user`, `project`, `local`).
    pub scope: Scope,
    /// Grant whatever the fetched copy requests without asking ([`Consent::AcceptAll`] when
    /// true, [`Consent::Ask`] when false). A caller that showed the user a request should use
    /// [`PluginManager::install_with_consent`] with [`Consent::AcceptDigest`] instead, so that
    /// what gets installed is what was shown.
    pub accept_capabilities: bool,
}

/// What the caller consents to for the capabilities an install or update requests.
///
/// A request that the existing grants already cover needs no consent whatever this says;
/// `Consent` only decides what happens to a request that goes beyond them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Consent {
    /// Grant nothing new: a request beyond the existing grants returns
    /// [`InstallOutcome::NeedsConsent`] and changes nothing.
    #[default]
    Ask,
    /// Grant whatever the fetched copy requests (`--yes`), sight unseen.
    AcceptAll,
    /// Grant the request that was shown for the tree with this sha256 (the
    /// [`ConsentRequired::sha256`] of an earlier call). The source is fetched again, so when
    /// the new copy hashes differently the call returns [`InstallOutcome::NeedsConsent`] for
    /// the new copy (with [`ConsentRequired::approved_sha256`] set) and installs nothing, even
    /// if the new copy would need no consent: the user approved one tree, not whatever the
    /// source holds by now.
    AcceptDigest(String),
}

impl From<bool> for Consent {
    fn from(accept_capabilities: bool) -> Self {
        if accept_capabilities {
            Consent::AcceptAll
        } else {
            Consent::Ask
        }
    }
}

impl Default for InstallOptions {
    fn default() -> Self {
        InstallOptions {
            scope: Scope::User,
            accept_capabilities: false,
        }
    }
}

/// Output of a successful install or update.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InstallReport {
    /// `install` or `update`.
    pub command: &'static str,
    /// `ok` or `up-to-date`.
    pub outcome: &'static str,
    /// Whether the cache copy of this version had been modified (or deleted) since it was
    /// installed and was restored from the source.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub repaired: bool,
    /// Plugin id.
    pub plugin: String,
    /// Plugin id (Claude Code prints both keys).
    pub plugin_id: String,
    /// Scope.
    pub scope: Scope,
    /// Installed version.
    pub version: String,
    /// Cache directory.
    pub install_path: PathBuf,
    /// Tree digest.
    pub sha256: String,
    /// Commit, for git sources.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub git_commit_sha: Option<String>,
    /// Version replaced by an update.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub previous_version: Option<String>,
    /// Granted capabilities per WASM component.
    pub capabilities: BTreeMap<String, Capabilities>,
    /// Warnings found while loading the plugin.
    pub warnings: Vec<Diagnostic>,
    /// Human message.
    pub message: String,
}

/// The plugin asks for capabilities that were not granted (or the copy fetched is not the one
/// whose request was approved): show the request, then call again with
/// [`Consent::AcceptDigest`] of [`ConsentRequired::sha256`].
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConsentRequired {
    /// `install` or `update`.
    pub command: &'static str,
    /// Always `needs-consent`.
    pub outcome: &'static str,
    /// Plugin id.
    pub plugin_id: String,
    /// Version that asks.
    pub version: String,
    /// Its tree digest: pass it back in [`Consent::AcceptDigest`] once the user has approved.
    pub sha256: String,
    /// The digest the call was made with when it differs from [`ConsentRequired::sha256`]:
    /// the source changed after its request was approved.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub approved_sha256: Option<String>,
    /// Everything it requests.
    pub request: CapabilityRequest,
    /// What it requests beyond the previous grant (everything, on first install).
    pub diff: BTreeMap<String, Capabilities>,
    /// `needs consent: <diff>`.
    pub message: String,
}

/// Result of install/update.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum InstallOutcome {
    /// Installed, updated, or already up to date.
    Installed(InstallReport),
    /// Nothing changed; consent is needed first.
    NeedsConsent(ConsentRequired),
}

impl InstallOutcome {
    /// The report, if installed.
    pub fn installed(&self) -> Option<&InstallReport> {
        match self {
            InstallOutcome::Installed(r) => Some(r),
            InstallOutcome::NeedsConsent(_) => None,
        }
    }
}

/// Output of uninstall.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UninstallOutput {
    /// `uninstall`.
    pub command: &'static str,
    /// `ok`.
    pub outcome: &'static str,
    /// Plugin id.
    pub plugin: String,
    /// Plugin id.
    pub plugin_id: String,
    /// Scope.
    pub scope: Scope,
    /// Whether the data directory was kept.
    pub kept_data: bool,
    /// Human message.
    pub message: String,
}

/// Output of enable/disable.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EnableOutput {
    /// `enable` or `disable`.
    pub command: &'static str,
    /// `ok`.
    pub outcome: &'static str,
    /// Plugin id.
    pub plugin: String,
    /// Plugin id.
    pub plugin_id: String,
    /// Scope written.
    pub scope: Scope,
    /// New state.
    pub enabled: bool,
    /// Human message.
    pub message: String,
}

/// One installed plugin in `list`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PluginListItem {
    /// Plugin id.
    pub id: String,
    /// Version.
    pub version: String,
    /// Scope.
    pub scope: Scope,
    /// Effective enablement for the current directory.
    pub enabled: bool,
    /// Cache directory.
    pub install_path: PathBuf,
    /// First install.
    pub installed_at: String,
    /// Last update.
    pub last_updated: String,
    /// Project, for project/local installs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub project_path: Option<PathBuf>,
    /// Recorded tree digest.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
}

/// A marketplace plugin that is not installed (`list --available`).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AvailablePlugin {
    /// Plugin id.
    pub plugin_id: String,
    /// Entry name.
    pub name: String,
    /// Marketplace.
    pub marketplace_name: String,
    /// Description.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Entry version.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Source.
    pub source: PluginSource,
}

/// Output of `list`.
#[derive(Debug, Clone, Serialize)]
pub struct ListOutput {
    /// Installed plugins (Claude Code's `plugin list --json` is this array).
    pub installed: Vec<PluginListItem>,
    /// Not-installed plugins of known marketplaces (only with `available`).
    pub available: Vec<AvailablePlugin>,
}

/// One marketplace in `marketplace list`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MarketplaceListItem {
    /// Name.
    pub name: String,
    /// Source.
    pub source: MarketplaceSource,
    /// Where its catalog is.
    pub install_location: PathBuf,
    /// GitHub repo.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repo: Option<String>,
    /// Git URL.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Directory path.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Git ref.
    #[serde(rename = "ref", skip_serializing_if = "Option::is_none")]
    pub git_ref: Option<String>,
    /// Last add/update.
    pub last_updated: String,
}

/// Output of marketplace add/update/remove.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MarketplaceOutput {
    /// `marketplace-add`, `marketplace-update` or `marketplace-remove`.
    pub command: &'static str,
    /// `ok`.
    pub outcome: &'static str,
    /// Name.
    pub marketplace: String,
    /// Scope declared in / removed from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scope: Option<Scope>,
    /// Where its catalog is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub install_location: Option<PathBuf>,
    /// Plugins uninstalled because the marketplace is gone from every scope.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub uninstalled: Vec<String>,
    /// Human message.
    pub message: String,
}

/// Integrity status of one installation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum VerifyStatus {
    /// The cache matches the recorded digest.
    Ok,
    /// The cache differs from the recorded digest.
    Tampered,
    /// The cache directory is gone.
    Missing,
    /// No digest recorded (installed by another tool).
    Unrecorded,
}

/// One installation checked by `verify`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VerifyItem {
    /// Plugin id.
    pub plugin_id: String,
    /// Scope.
    pub scope: Scope,
    /// Cache directory.
    pub install_path: PathBuf,
    /// Result.
    pub status: VerifyStatus,
    /// Recorded digest.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected: Option<String>,
    /// Current digest.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub actual: Option<String>,
}

/// Output of `verify`.
#[derive(Debug, Clone, Serialize)]
pub struct VerifyOutput {
    /// Whether every recorded installation matches.
    pub ok: bool,
    /// Per installation.
    pub plugins: Vec<VerifyItem>,
}

/// An installed plugin enabled for the current directory (what the runtime loads).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ActivePlugin {
    /// Plugin id.
    pub plugin_id: String,
    /// Scope of the installation used.
    pub scope: Scope,
    /// Plugin root (`${CLAUDE_PLUGIN_ROOT}`).
    pub install_path: PathBuf,
    /// `${CLAUDE_PLUGIN_DATA}`.
    pub data_dir: PathBuf,
    /// Version.
    pub version: String,
    /// Recorded digest (look the grant up with it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    /// The marketplace entry recorded at install (strict-mode definition).
    #[serde(skip)]
    pub entry: Option<MarketplaceEntry>,
}

/// An active plugin and the result of loading it.
pub type ActiveLoad = (ActivePlugin, Result<LoadedPlugin, LoadError>);

macro_rules! display_message {
    ($($t:ty),*) => {$(
        impl fmt::Display for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.message)
            }
        }
    )*};
}
display_message!(
    InstallReport,
    ConsentRequired,
    UninstallOutput,
    EnableOutput,
    MarketplaceOutput
);

impl fmt::Display for InstallOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InstallOutcome::Installed(r) => {
                write!(f, "{r}")?;
                for (c, caps) in &r.capabilities {
                    write!(f, "\n  {c}: {caps}")?;
                }
                Ok(())
            }
            InstallOutcome::NeedsConsent(c) => {
                write!(f, "{}", c.message)?;
                for (n, caps) in &c.request.components {
                    write!(f, "\n  {n}: {caps}")?;
                }
                Ok(())
            }
        }
    }
}

impl fmt::Display for ListOutput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.installed.is_empty() {
            writeln!(f, "No plugins installed.")?;
        } else {
            writeln!(f, "Installed plugins:")?;
        }
        for p in &self.installed {
            writeln!(
                f,
                "  {} {} ({}, {})",
                p.id,
                p.version,
                p.scope,
                if p.enabled { "enabled" } else { "disabled" }
            )?;
        }
        if !self.available.is_empty() {
            writeln!(f, "Available plugins:")?;
            for a in &self.available {
                writeln!(
                    f,
                    "  {}{}",
                    a.plugin_id,
                    a.description
                        .as_deref()
                        .map(|d| format!(" — {d}"))
                        .unwrap_or_default()
                )?;
            }
        }
        Ok(())
    }
}

impl fmt::Display for MarketplaceListItem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let src = self
            .repo
            .as_deref()
            .or(self.url.as_deref())
            .or(self.path.as_deref())
            .unwrap_or("");
        write!(f, "{} ({src})", self.name)
    }
}

impl fmt::Display for VerifyOutput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for p in &self.plugins {
            let s = match p.status {
                VerifyStatus::Ok => "✔ ok".to_string(),
                VerifyStatus::Tampered => format!(
                    "✘ TAMPERED (recorded {}, now {})",
                    p.expected.as_deref().unwrap_or("?"),
                    p.actual.as_deref().unwrap_or("?")
                ),
                VerifyStatus::Missing => format!("✘ missing: {}", p.install_path.display()),
                VerifyStatus::Unrecorded => "? no digest recorded".to_string(),
            };
            writeln!(f, "{} ({}): {s}", p.plugin_id, p.scope)?;
        }
        write!(
            f,
            "{}",
            if self.ok {
                "All installed plugins match their recorded digests."
            } else {
                "Some installed plugins do not match: `warden plugin install <plugin> --scope <scope>` restores each from its marketplace (`warden plugin update <plugin>` does too)."
            }
        )
    }
}

/// The plugin verbs, for one home directory and working directory.
#[derive(Debug, Clone)]
pub struct PluginManager {
    home: Home,
    cwd: PathBuf,
    store: Store,
    quiet: bool,
    allow_reserved_names: bool,
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
        }
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

    /// The state files.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// `${CLAUDE_PLUGIN_DATA}` for a plugin id: `plugins/data/<id with [^A-Za-z0-9_-] → ->`.
    pub fn data_dir(&self, plugin_id: &str) -> PathBuf {
        self.store.data_dir().join(data_dir_name(plugin_id))
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

    // ---------------------------------------------------------------- marketplaces

    /// `marketplace add <source>`: a directory, a git URL (`https://…`, `ssh://…`, `git://…`,
    /// `file://…`, `git@host:path`, optional `#ref`) or `owner/repo[@ref]`. Declares it in the
    /// scope's `extraKnownMarketplaces` and records it in `known_marketplaces.json`; re-adding a
    /// name replaces it.
    pub fn marketplace_add(
        &self,
        source: &str,
        scope: Scope,
    ) -> Result<MarketplaceOutput, PluginError> {
        let settings = self.settings_file(scope)?;
        let src = self.parse_marketplace_source(source)?;
        let (name, location) = match &src {
            MarketplaceSource::Directory { path } => {
                let dir = PathBuf::from(path);
                let m = self.read_catalog(&dir)?;
                self.check_reserved(&m.name, &src)?;
                (m.name, dir)
            }
            _ => self.clone_marketplace(&src, None)?,
        };
        let mut known = self.store.known()?;
        known.insert(
            name.clone(),
            KnownMarketplace {
                source: src.clone(),
                install_location: location.clone(),
                last_updated: now_iso(),
                auto_update: None,
                extra: Default::default(),
            },
        );
        self.store.write_known(&known)?;
        let src_json = serde_json::to_value(&src).unwrap_or(Value::Null);
        edit_settings(&settings, |m| {
            let ekm = m
                .entry("extraKnownMarketplaces")
                .or_insert_with(|| json!({}));
            if !ekm.is_object() {
                *ekm = json!({});
            }
            if let Some(o) = ekm.as_object_mut() {
                o.insert(name.clone(), json!({ "source": src_json }));
            }
        })?;
        Ok(MarketplaceOutput {
            command: "marketplace-add",
            outcome: "ok",
            message: format!(
                "✔ Successfully added marketplace: {name} (declared in {scope} settings)"
            ),
            marketplace: name,
            scope: Some(scope),
            install_location: Some(location),
            uninstalled: Vec::new(),
        })
    }

    fn parse_marketplace_source(&self, s: &str) -> Result<MarketplaceSource, PluginError> {
        let s = s.trim();
        let is_url = ["https://", "http://", "ssh://", "git://", "file://"]
            .iter()
            .any(|p| s.starts_with(p))
            || (s.starts_with("git@") && s.contains(':'));
        if is_url {
            let (url, r) = match s.split_once('#') {
                Some((u, r)) if !r.is_empty() => (u.to_string(), Some(r.to_string())),
                _ => (s.to_string(), None),
            };
            return Ok(MarketplaceSource::Git {
                url,
                git_ref: r,
                path: None,
            });
        }
        let p = self.cwd.join(s);
        if p.exists() {
            let c = p.canonicalize().map_err(io(&p))?;
            if !c.is_dir() {
                return Err(PluginError::BadSource(s.to_string()));
            }
            return Ok(MarketplaceSource::Directory {
                path: c.to_string_lossy().to_string(),
            });
        }
        let (repo, r) = match s.split_once('@') {
            Some((a, b)) => (a, Some(b.to_string())),
            None => (s, None),
        };
        if looks_like_owner_repo(repo) && !s.starts_with('.') {
            return Ok(MarketplaceSource::Github {
                repo: repo.to_string(),
                git_ref: r,
                path: None,
            });
        }
        Err(PluginError::PathNotFound(p))
    }

    fn check_reserved(&self, name: &str, src: &MarketplaceSource) -> Result<(), PluginError> {
        let official = matches!(src, MarketplaceSource::Github { repo, .. } if repo.to_ascii_lowercase().starts_with("anthropics/"))
            || matches!(src, MarketplaceSource::Git { url, .. } if url.to_ascii_lowercase().contains("github.com/anthropics/") || url.to_ascii_lowercase().contains("github.com:anthropics/"));
        if is_reserved_name(name) && !official && !self.allow_reserved_names {
            return Err(PluginError::ReservedName(name.to_string()));
        }
        Ok(())
    }

    fn read_catalog(&self, dir: &Path) -> Result<Marketplace, PluginError> {
        let mut d = Vec::new();
        let file = dir.join(MARKETPLACE_FILE);
        match load_marketplace(dir, &mut d) {
            Some(m) => Ok(m),
            None => Err(PluginError::InvalidMarketplace {
                path: file,
                details: d
                    .iter()
                    .filter(|x| x.is_error())
                    .map(|x| x.message.clone())
                    .collect::<Vec<_>>()
                    .join(", "),
            }),
        }
    }

    /// Clones a git marketplace into a temp dir, reads its name, then swaps it into
    /// `marketplaces/<name>` (replacing an older clone only after the new one is complete).
    fn clone_marketplace(
        &self,
        src: &MarketplaceSource,
        expect_name: Option<&str>,
    ) -> Result<(String, PathBuf), PluginError> {
        let url = src
            .git_url()
            .ok_or_else(|| PluginError::BadSource(format!("{src:?}")))?;
        let (git_ref, sub) = match src {
            MarketplaceSource::Github { git_ref, path, .. }
            | MarketplaceSource::Git { git_ref, path, .. } => (git_ref.clone(), path.clone()),
            MarketplaceSource::Directory { .. } => (None, None),
        };
        let tmp_root = self.store.tmp_dir();
        std::fs::create_dir_all(&tmp_root).map_err(io(&tmp_root))?;
        let tmp = tempfile::Builder::new()
            .prefix("mkt-")
            .tempdir_in(&tmp_root)
            .map_err(io(&tmp_root))?;
        let repo = tmp.path().join("repo");
        let pb = self.progress().spinner(format!("Cloning {url}"));
        let res = git::clone(&url, &repo, git_ref.as_deref(), None, None);
        pb.finish_and_clear();
        res?;
        let catalog_dir = match &sub {
            Some(p) => repo.join(p),
            None => repo.clone(),
        };
        let m = self.read_catalog(&catalog_dir)?;
        self.check_reserved(&m.name, src)?;
        if let Some(e) = expect_name
            && e != m.name
        {
            return Err(PluginError::InvalidMarketplace {
                path: catalog_dir.join(MARKETPLACE_FILE),
                details: format!("name changed from `{e}` to `{}`", m.name),
            });
        }
        let dest = self.store.marketplaces_dir().join(&m.name);
        std::fs::create_dir_all(self.store.marketplaces_dir()).map_err(io(&dest))?;
        let trash = tmp.path().join("old");
        if dest.exists() {
            std::fs::rename(&dest, &trash).map_err(io(&dest))?;
        }
        if let Err(e) = std::fs::rename(&repo, &dest) {
            let _ = std::fs::rename(&trash, &dest);
            return Err(PluginError::Io {
                path: dest,
                source: e,
            });
        }
        let loc = match &sub {
            Some(p) => dest.join(p),
            None => dest,
        };
        Ok((m.name, loc))
    }

    /// `marketplace list`.
    pub fn marketplace_list(&self) -> Result<Vec<MarketplaceListItem>, PluginError> {
        Ok(self
            .store
            .known()?
            .into_iter()
            .map(|(name, k)| {
                let (repo, url, path, git_ref) = match &k.source {
                    MarketplaceSource::Github { repo, git_ref, .. } => {
                        (Some(repo.clone()), None, None, git_ref.clone())
                    }
                    MarketplaceSource::Git { url, git_ref, .. } => {
                        (None, Some(url.clone()), None, git_ref.clone())
                    }
                    MarketplaceSource::Directory { path } => (None, None, Some(path.clone()), None),
                };
                MarketplaceListItem {
                    name,
                    source: k.source,
                    install_location: k.install_location,
                    repo,
                    url,
                    path,
                    git_ref,
                    last_updated: k.last_updated,
                }
            })
            .collect())
    }

    /// `marketplace update [name]`: re-clones git marketplaces (atomically swapped in) and
    /// refreshes `lastUpdated`; directory marketplaces are read in place.
    pub fn marketplace_update(
        &self,
        name: Option<&str>,
    ) -> Result<Vec<MarketplaceOutput>, PluginError> {
        let mut known = self.store.known()?;
        let names: Vec<String> = match name {
            Some(n) if known.contains_key(n) => vec![n.to_string()],
            Some(n) => return Err(PluginError::UnknownMarketplace(n.to_string())),
            None => known.keys().cloned().collect(),
        };
        let mut out = Vec::new();
        for n in names {
            let Some(k) = known.get(&n).cloned() else {
                continue;
            };
            let loc = match &k.source {
                MarketplaceSource::Directory { .. } => {
                    self.read_catalog(&k.install_location)?;
                    k.install_location.clone()
                }
                src => self.clone_marketplace(src, Some(&n))?.1,
            };
            if let Some(e) = known.get_mut(&n) {
                e.last_updated = now_iso();
                e.install_location = loc.clone();
            }
            out.push(MarketplaceOutput {
                command: "marketplace-update",
                outcome: "ok",
                message: format!("✔ Successfully updated marketplace: {n}"),
                marketplace: n,
                scope: None,
                install_location: Some(loc),
                uninstalled: Vec::new(),
            });
        }
        self.store.write_known(&known)?;
        Ok(out)
    }

    /// `marketplace remove <name>`: removes the declaration from the scope's settings; when no
    /// user/project/local settings file declares it any more, forgets it and uninstalls its plugins.
    pub fn marketplace_remove(
        &self,
        name: &str,
        scope: Scope,
    ) -> Result<MarketplaceOutput, PluginError> {
        let mut known = self.store.known()?;
        let settings = self.settings_file(scope)?;
        let declared_here = warden_config::read_settings_file(&settings)?.is_some_and(|m| {
            m.get("extraKnownMarketplaces")
                .and_then(|e| e.get(name))
                .is_some()
        });
        if !known.contains_key(name) && !declared_here {
            return Err(PluginError::UnknownMarketplace(name.to_string()));
        }
        if declared_here {
            edit_settings(&settings, |m| {
                if let Some(o) = m
                    .get_mut("extraKnownMarketplaces")
                    .and_then(Value::as_object_mut)
                {
                    o.remove(name);
                }
            })?;
        }
        let still = [Scope::User, Scope::Project, Scope::Local]
            .iter()
            .filter_map(|s| self.settings_file(*s).ok())
            .any(|p| {
                warden_config::read_settings_file(&p)
                    .ok()
                    .flatten()
                    .is_some_and(|m| {
                        m.get("extraKnownMarketplaces")
                            .and_then(|e| e.get(name))
                            .is_some()
                    })
            });
        let mut uninstalled = Vec::new();
        if !still {
            let mut installed = self.store.installed()?;
            let ids: Vec<String> = installed
                .plugins
                .keys()
                .filter(|id| split_plugin_id(id).1 == Some(name))
                .cloned()
                .collect();
            let mut orphaned = Vec::new();
            for id in &ids {
                if let Some(recs) = installed.plugins.remove(id) {
                    orphaned.extend(recs.into_iter().map(|r| r.install_path));
                }
            }
            self.store.write_installed(&installed)?;
            for s in [Scope::User, Scope::Project, Scope::Local] {
                if let Ok(p) = self.settings_file(s)
                    && p.exists()
                {
                    edit_settings(&p, |m| {
                        if let Some(o) = m.get_mut("enabledPlugins").and_then(Value::as_object_mut)
                        {
                            o.retain(|k, _| !ids.contains(k));
                        }
                    })?;
                }
            }
            for p in orphaned {
                mark_orphan(&p);
            }
            if let Some(k) = known.remove(name)
                && k.install_location
                    .starts_with(self.store.marketplaces_dir())
            {
                let _ = std::fs::remove_dir_all(self.store.marketplaces_dir().join(name));
            }
            self.store.write_known(&known)?;
            uninstalled = ids;
        }
        Ok(MarketplaceOutput {
            command: "marketplace-remove",
            outcome: "ok",
            message: format!("✔ Successfully removed marketplace: {name}"),
            marketplace: name.to_string(),
            scope: Some(scope),
            install_location: None,
            uninstalled,
        })
    }

    // ---------------------------------------------------------------- plugins

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
                && m.entry(spec).is_some()
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

    /// `install <plugin>[@marketplace]` with [`Consent::AcceptAll`] or [`Consent::Ask`]
    /// (`opts.accept_capabilities`); see [`PluginManager::install_with_consent`].
    pub fn install(
        &self,
        spec: &str,
        opts: &InstallOptions,
    ) -> Result<InstallOutcome, PluginError> {
        self.install_with_consent(spec, opts.scope, &Consent::from(opts.accept_capabilities))
    }

    /// `install <plugin>[@marketplace]`: fetch, stage, check, hash, ask for capabilities,
    /// commit. A request beyond the existing grants that `consent` does not cover returns
    /// [`InstallOutcome::NeedsConsent`] and changes nothing. Installing a plugin that is
    /// already installed in `scope` also repairs its cache copy when that was modified.
    pub fn install_with_consent(
        &self,
        spec: &str,
        scope: Scope,
        consent: &Consent,
    ) -> Result<InstallOutcome, PluginError> {
        let (name, mkt) = self.resolve(spec)?;
        self.install_inner(&name, &mkt, scope, consent, false)
    }

    /// `update <plugin>` with [`Consent::AcceptAll`] or [`Consent::Ask`]
    /// (`accept_capabilities`); see [`PluginManager::update_with_consent`].
    pub fn update(
        &self,
        spec: &str,
        scope: Option<Scope>,
        accept_capabilities: bool,
    ) -> Result<InstallOutcome, PluginError> {
        self.update_with_consent(spec, scope, &Consent::from(accept_capabilities))
    }

    /// `update <plugin>`: refreshes a git marketplace, then installs the entry's current version
    /// into the scope of the existing installation (default: the one for this directory, else
    /// user). Same version and digest, with an intact cache copy ⇒ `up-to-date`; a modified
    /// cache copy of that version is repaired. New capabilities not covered by `consent` ⇒
    /// `NeedsConsent`.
    pub fn update_with_consent(
        &self,
        spec: &str,
        scope: Option<Scope>,
        consent: &Consent,
    ) -> Result<InstallOutcome, PluginError> {
        let id = self.resolve_installed(spec)?;
        let scope = self.installed_scope(&id, scope)?;
        let (name, mkt) = split_plugin_id(&id);
        let mkt = mkt.unwrap_or_default().to_string();
        let known = self.store.known()?;
        if let Some(k) = known.get(&mkt)
            && !matches!(k.source, MarketplaceSource::Directory { .. })
        {
            self.marketplace_update(Some(&mkt))?;
        }
        self.install_inner(name, &mkt, scope, consent, true)
    }

    fn installed_scope(&self, id: &str, scope: Option<Scope>) -> Result<Scope, PluginError> {
        let installed = self.store.installed()?;
        let recs = installed.plugins.get(id).cloned().unwrap_or_default();
        if let Some(s) = scope {
            return if recs.iter().any(|r| self.record_here(r, s)) {
                Ok(s)
            } else {
                Err(PluginError::NotInstalled {
                    plugin: id.to_string(),
                    scope: Some(s),
                })
            };
        }
        for s in [Scope::Local, Scope::Project, Scope::User] {
            if recs.iter().any(|r| self.record_here(r, s)) {
                return Ok(s);
            }
        }
        Err(PluginError::NotInstalled {
            plugin: id.to_string(),
            scope: None,
        })
    }

    fn install_inner(
        &self,
        name: &str,
        mkt_name: &str,
        scope: Scope,
        consent: &Consent,
        is_update: bool,
    ) -> Result<InstallOutcome, PluginError> {
        let command = if is_update { "update" } else { "install" };
        let settings = self.settings_file(scope)?;
        let known = self.store.known()?;
        let not_found = || PluginError::NotFound {
            plugin: name.to_string(),
            marketplace: mkt_name.to_string(),
        };
        let k = known.get(mkt_name).ok_or_else(not_found)?;
        let m = self.read_catalog(&k.install_location)?;
        let entry = m.entry(name).ok_or_else(not_found)?.clone();
        let id = plugin_id(name, mkt_name);

        let tmp_root = self.store.tmp_dir();
        std::fs::create_dir_all(&tmp_root).map_err(io(&tmp_root))?;
        sweep_stale(&tmp_root);
        let staging = tempfile::Builder::new()
            .prefix("stage-")
            .tempdir_in(&tmp_root)
            .map_err(io(&tmp_root))?;
        let plugin_dir = staging.path().join("plugin");
        let git_sha = self.fetch(&id, &m, &entry, staging.path(), &plugin_dir)?;

        let mfile = m.root.join(MARKETPLACE_FILE);
        let loaded = load_plugin_with(
            &plugin_dir,
            &LoadContext {
                entry: Some(&entry),
                marketplace_file: Some(&mfile),
            },
        )?;
        let digest = tree_digest(&plugin_dir).map_err(io(&plugin_dir))?;
        if let Some(expected) = &entry.sha256
            && *expected != digest
        {
            return Err(PluginError::DigestMismatch {
                plugin: id,
                expected: expected.clone(),
                actual: digest,
            });
        }
        let version = loaded
            .manifest
            .version
            .clone()
            .or_else(|| entry.version.clone())
            .or_else(|| git_sha.as_ref().map(|s| s.chars().take(12).collect()))
            .unwrap_or_else(|| "unknown".to_string());

        let mut installed = self.store.installed()?;
        let previous = installed
            .plugins
            .get(&id)
            .and_then(|recs| recs.iter().find(|r| self.record_here(r, scope)).cloned());
        let request = CapabilityRequest {
            plugin_id: id.clone(),
            digest: digest.clone(),
            components: loaded
                .warden
                .as_ref()
                .map(|w| w.requests())
                .unwrap_or_default(),
        };
        let warnings: Vec<Diagnostic> = loaded.diagnostics.clone();

        // The source alone cannot say whether the installation is current: its cache copy may
        // have been modified since (what `verify` reports), and then it has to be restored.
        let same_tree = previous
            .as_ref()
            .and_then(|p| p.warden.as_ref())
            .is_some_and(|w| w.sha256 == digest);
        let prev_intact = same_tree
            && previous.as_ref().is_some_and(|p| {
                p.install_path.is_dir()
                    && tree_digest(&p.install_path).ok().as_deref() == Some(digest.as_str())
            });
        let repairing = same_tree && !prev_intact;

        if is_update
            && prev_intact
            && let Some(prev) = &previous
            && prev.version == version
        {
            return Ok(InstallOutcome::Installed(InstallReport {
                command,
                outcome: "up-to-date",
                repaired: false,
                plugin: id.clone(),
                plugin_id: id.clone(),
                scope,
                version: version.clone(),
                install_path: prev.install_path.clone(),
                sha256: digest,
                git_commit_sha: prev.git_commit_sha.clone(),
                previous_version: None,
                capabilities: request.components,
                warnings,
                message: format!("{id} is already at the latest version ({version})."),
            }));
        }

        // Capabilities: an exact grant, a previous grant that already covers the request, an
        // empty request, or explicit acceptance; otherwise ask. Acceptance of a digest is
        // acceptance of that tree only: the source is fetched anew on every call, so a copy that
        // hashes differently is not what the user saw, whether or not it asks for more.
        let mut grants = self.store.grants()?;
        let prev_grant = previous
            .as_ref()
            .and_then(|p| p.warden.as_ref())
            .and_then(|w| grants.get(&id, &w.sha256))
            .or_else(|| grants.latest(&id))
            .cloned();
        let exact = grants.get(&id, &digest).cloned();
        let diff = request.beyond(exact.as_ref().or(prev_grant.as_ref()));
        let approved_sha256 = match consent {
            Consent::AcceptDigest(d) if !d.eq_ignore_ascii_case(&digest) => Some(d.clone()),
            _ => None,
        };
        let accepted = match consent {
            Consent::Ask => false,
            Consent::AcceptAll => true,
            Consent::AcceptDigest(_) => approved_sha256.is_none(),
        };
        if approved_sha256.is_some() || (!diff.is_empty() && !accepted) {
            let requests = if diff.is_empty() {
                "nothing beyond its current grant".to_string()
            } else {
                format_diff(&diff)
            };
            let message = match &approved_sha256 {
                Some(approved) => format!(
                    "needs consent: {id} {version} changed after its request was approved (sha256 {approved} → {digest}); nothing was changed. This copy requests {requests}"
                ),
                None => format!("needs consent: {id} {version} requests {requests}"),
            };
            return Ok(InstallOutcome::NeedsConsent(ConsentRequired {
                command,
                outcome: "needs-consent",
                plugin_id: id,
                version,
                sha256: digest,
                approved_sha256,
                request,
                diff,
                message,
            }));
        }
        let grant = Grant {
            plugin_id: id.clone(),
            digest: digest.clone(),
            components: request.components.clone(),
            granted_at: now_iso(),
        };

        let base = self
            .store
            .cache_dir()
            .join(safe_segment(mkt_name))
            .join(safe_segment(name));
        let final_dir = place_in_cache(
            &installed,
            &base,
            &safe_segment(&version),
            &digest,
            &plugin_dir,
            staging.path(),
        )?;

        grants.put(grant);
        self.store.write_grants(&grants)?;
        let now = now_iso();
        let record = InstallRecord {
            scope,
            install_path: final_dir.clone(),
            version: version.clone(),
            installed_at: previous
                .as_ref()
                .map(|p| p.installed_at.clone())
                .unwrap_or_else(|| now.clone()),
            last_updated: now,
            project_path: self.project_path(scope),
            git_commit_sha: git_sha.clone(),
            warden: Some(WardenRecord {
                sha256: digest.clone(),
            }),
            extra: {
                let mut x = previous
                    .as_ref()
                    .map(|p| p.extra.clone())
                    .unwrap_or_default();
                x.insert("wardenEntry".into(), Value::Object(entry.raw.clone()));
                x
            },
        };
        let recs = installed.plugins.entry(id.clone()).or_default();
        recs.retain(|r| !self.record_here(r, scope));
        recs.push(record);
        self.store.write_installed(&installed)?; // commit point
        if !is_update {
            let enable = entry
                .raw
                .get("defaultEnabled")
                .and_then(Value::as_bool)
                .or(loaded.manifest.default_enabled)
                .unwrap_or(true);
            edit_settings(&settings, |s| {
                let ep = s.entry("enabledPlugins").or_insert_with(|| json!({}));
                if !ep.is_object() {
                    *ep = json!({});
                }
                if let Some(o) = ep.as_object_mut() {
                    o.insert(id.clone(), Value::Bool(enable));
                }
            })?;
        }
        if let Some(prev) = &previous
            && prev.install_path != final_dir
            && !self
                .store
                .installed()?
                .plugins
                .values()
                .flatten()
                .any(|r| r.install_path == prev.install_path)
        {
            mark_orphan(&prev.install_path);
        }
        let message = if repairing {
            format!(
                "✔ Successfully repaired plugin: {id} {version} (scope: {scope}): its cache copy had been modified or removed and was restored from the source"
            )
        } else if is_update {
            format!("✔ Successfully updated plugin: {id} to {version} (scope: {scope})")
        } else {
            format!("✔ Successfully installed plugin: {id} (scope: {scope})")
        };
        Ok(InstallOutcome::Installed(InstallReport {
            command,
            outcome: "ok",
            repaired: repairing,
            plugin: id.clone(),
            plugin_id: id,
            scope,
            version,
            install_path: final_dir,
            sha256: digest,
            git_commit_sha: git_sha,
            previous_version: previous.map(|p| p.version),
            capabilities: request.components,
            warnings,
            message,
        }))
    }

    /// Fetches an entry's files into `dest` (inside `staging`); returns the git commit, if any.
    fn fetch(
        &self,
        id: &str,
        m: &Marketplace,
        entry: &MarketplaceEntry,
        staging: &Path,
        dest: &Path,
    ) -> Result<Option<String>, PluginError> {
        match &entry.source {
            PluginSource::Relative { .. } => {
                let src = m.entry_dir(entry).ok_or_else(|| PluginError::NotFound {
                    plugin: entry.name.clone(),
                    marketplace: m.name.clone(),
                })?;
                copy_tree(&src, &m.root, dest, self.progress())?;
                Ok(git::head(&m.root)
                    .ok()
                    .filter(|_| m.root.join(".git").exists()))
            }
            PluginSource::Unsupported { kind } => Err(PluginError::UnsupportedSource {
                plugin: id.to_string(),
                kind: kind.clone(),
            }),
            src => {
                let url = src.git_url().unwrap_or_default();
                let (git_ref, sha) = src.git_pin();
                let sub = match src {
                    PluginSource::GitSubdir { path, .. } => Some(path.as_str()),
                    _ => None,
                };
                let repo = staging.join("repo");
                let pb = self.progress().spinner(format!("Cloning {url}"));
                let res = git::clone(&url, &repo, git_ref, sha, sub);
                pb.finish_and_clear();
                let head = res?;
                let src_dir = match sub {
                    Some(p) => repo.join(p),
                    None => repo.clone(),
                };
                if !src_dir.is_dir() {
                    return Err(PluginError::Io {
                        path: src_dir,
                        source: std::io::Error::new(
                            std::io::ErrorKind::NotFound,
                            "path not found in the repository; check the entry's `path`",
                        ),
                    });
                }
                copy_tree(&src_dir, &repo, dest, self.progress())?;
                Ok(Some(head))
            }
        }
    }

    /// `uninstall <plugin>`: removes the installation of `scope` (default: the one for this
    /// directory), its `enabledPlugins` key, marks the cache copy orphaned, and when it was the
    /// last installation deletes the data directory (unless `keep_data`) and the grants.
    pub fn uninstall(
        &self,
        spec: &str,
        scope: Option<Scope>,
        keep_data: bool,
    ) -> Result<UninstallOutput, PluginError> {
        let id = self.resolve_installed(spec)?;
        let scope = self.installed_scope(&id, scope)?;
        let mut installed = self.store.installed()?;
        let recs = installed.plugins.entry(id.clone()).or_default();
        let Some(i) = recs.iter().position(|r| self.record_here(r, scope)) else {
            return Err(PluginError::NotInstalled {
                plugin: id,
                scope: Some(scope),
            });
        };
        let rec = recs.remove(i);
        let last = recs.is_empty();
        if last {
            installed.plugins.remove(&id);
        }
        self.store.write_installed(&installed)?;
        let settings = self.settings_file(scope)?;
        if settings.exists() {
            edit_settings(&settings, |m| {
                if let Some(o) = m.get_mut("enabledPlugins").and_then(Value::as_object_mut) {
                    o.remove(&id);
                }
            })?;
        }
        if !installed
            .plugins
            .values()
            .flatten()
            .any(|r| r.install_path == rec.install_path)
        {
            mark_orphan(&rec.install_path);
        }
        if last {
            if !keep_data {
                let _ = std::fs::remove_dir_all(self.data_dir(&id));
            }
            let mut g = self.store.grants()?;
            if g.grants.remove(&id).is_some() {
                self.store.write_grants(&g)?;
            }
        }
        Ok(UninstallOutput {
            command: "uninstall",
            outcome: "ok",
            message: format!("✔ Successfully uninstalled plugin: {id} (scope: {scope})"),
            plugin: id.clone(),
            plugin_id: id,
            scope,
            kept_data: keep_data && last,
        })
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
        edit_settings(&settings, |m| {
            let ep = m.entry("enabledPlugins").or_insert_with(|| json!({}));
            if !ep.is_object() {
                *ep = json!({});
            }
            if let Some(o) = ep.as_object_mut() {
                o.insert(id.clone(), Value::Bool(on));
            }
        })?;
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

    /// Effective enablement of `id` for this directory: local > project > user explicit values,
    /// else `default` (marketplace/plugin `defaultEnabled`, else true).
    pub fn is_enabled(&self, id: &str, default: bool) -> bool {
        for s in [Scope::Local, Scope::Project, Scope::User] {
            if let Ok(p) = self.settings_file(s)
                && let Some(v) = enabled_plugins_in(&p).get(id).and_then(Value::as_bool)
            {
                return v;
            }
        }
        default
    }

    /// `list [--available]`.
    pub fn list(&self, available: bool) -> Result<ListOutput, PluginError> {
        let installed = self.store.installed()?;
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
                            source: e.source,
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
    pub fn verify(&self) -> Result<VerifyOutput, PluginError> {
        let installed = self.store.installed()?;
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
                out.push(VerifyItem {
                    plugin_id: id.clone(),
                    scope: r.scope,
                    install_path: r.install_path.clone(),
                    status,
                    expected,
                    actual,
                });
            }
        }
        Ok(VerifyOutput {
            ok: out
                .iter()
                .all(|i| matches!(i.status, VerifyStatus::Ok | VerifyStatus::Unrecorded)),
            plugins: out,
        })
    }

    /// The capability request of an installed plugin (for the CLI to print before `grant`).
    pub fn capability_request(&self, spec: &str) -> Result<CapabilityRequest, PluginError> {
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
            },
        )?;
        let digest = rec.warden.map(|w| w.sha256).unwrap_or_default();
        Ok(CapabilityRequest {
            plugin_id: id,
            digest,
            components: loaded.warden.map(|w| w.requests()).unwrap_or_default(),
        })
    }

    /// `grant <plugin>`: grants an installed plugin everything it requests, for its recorded digest.
    pub fn grant(&self, spec: &str) -> Result<Grant, PluginError> {
        let req = self.capability_request(spec)?;
        let g = Grant {
            plugin_id: req.plugin_id.clone(),
            digest: req.digest.clone(),
            components: req.components,
            granted_at: now_iso(),
        };
        let mut grants = self.store.grants()?;
        grants.put(g.clone());
        self.store.write_grants(&grants)?;
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
                data_dir: self.data_dir(id),
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
                    },
                );
                (a, r)
            })
            .collect())
    }
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

/// A path segment safe for the cache (`[A-Za-z0-9._+-]`, others → `-`).
fn safe_segment(s: &str) -> String {
    let t: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '+' | '-') {
                c
            } else {
                '-'
            }
        })
        .collect();
    if t.is_empty() || t == "." || t == ".." {
        "unknown".to_string()
    } else {
        t
    }
}

/// Moves the staged tree `staged` into the cache under `base` and returns where it now is.
///
/// The directory is `<version>`, or `<version>-<digest12>` when `<version>` legitimately holds
/// other contents (the same version fetched earlier with different files, still recorded by an
/// installation or orphaned). An existing directory is re-hashed before it is reused: one that
/// no longer hashes to `digest` was modified after install and is replaced. `<version>` is
/// replaced only when every installation that records it recorded `digest` (so it is a repair
/// of exactly that tree); otherwise it stays as it is for whoever uses it, and the suffixed
/// directory, which by its name can only hold this tree, is used instead.
fn place_in_cache(
    installed: &InstalledPlugins,
    base: &Path,
    version: &str,
    digest: &str,
    staged: &Path,
    staging: &Path,
) -> Result<PathBuf, PluginError> {
    let plain = base.join(version);
    let claims: Vec<Option<&str>> = installed
        .plugins
        .values()
        .flatten()
        .filter(|r| r.install_path == plain)
        .map(|r| r.warden.as_ref().map(|w| w.sha256.as_str()))
        .collect();
    let plain_is_ours = !claims.is_empty() && claims.iter().all(|c| *c == Some(digest));
    let dir = match cache_state(&plain, digest) {
        CacheState::Absent | CacheState::Intact => plain,
        CacheState::Differs if plain_is_ours => plain,
        CacheState::Differs => {
            base.join(format!("{version}-{}", digest.get(..12).unwrap_or(digest)))
        }
    };
    match cache_state(&dir, digest) {
        CacheState::Intact => {
            let _ = std::fs::remove_file(dir.join(ORPHAN_MARKER));
        }
        CacheState::Absent => {
            std::fs::create_dir_all(base).map_err(io(base))?;
            std::fs::rename(staged, &dir).map_err(io(&dir))?;
        }
        CacheState::Differs => replace_dir(staged, &dir, &staging.join("replaced"))?,
    }
    Ok(dir)
}

/// What a cache directory holds compared with the tree about to be installed.
enum CacheState {
    /// Nothing there.
    Absent,
    /// The same tree.
    Intact,
    /// Other contents, or contents that cannot be read.
    Differs,
}

fn cache_state(dir: &Path, digest: &str) -> CacheState {
    if std::fs::symlink_metadata(dir).is_err() {
        CacheState::Absent
    } else if dir.is_dir() && tree_digest(dir).ok().as_deref() == Some(digest) {
        CacheState::Intact
    } else {
        CacheState::Differs
    }
}

/// Replaces `dest` with `staged`: `dest` is first moved aside to `trash` (inside the staging
/// directory, so on the same filesystem and removed with it) and moved back if `staged` cannot
/// be renamed into place, so a failure leaves the previous directory where it was.
fn replace_dir(staged: &Path, dest: &Path, trash: &Path) -> Result<(), PluginError> {
    std::fs::rename(dest, trash).map_err(io(dest))?;
    if let Err(source) = std::fs::rename(staged, dest) {
        let _ = std::fs::rename(trash, dest);
        return Err(PluginError::Io {
            path: dest.to_path_buf(),
            source,
        });
    }
    Ok(())
}

fn mark_orphan(dir: &Path) {
    if dir.is_dir() {
        let ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis())
            .unwrap_or(0);
        let _ = std::fs::write(dir.join(ORPHAN_MARKER), ms.to_string());
    }
}

/// Removes staging directories left by killed installs (older than 10 minutes).
fn sweep_stale(tmp_root: &Path) {
    let Ok(rd) = std::fs::read_dir(tmp_root) else {
        return;
    };
    for e in rd.flatten() {
        let old = e
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|d| d.as_secs() > 600);
        if old {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// Copies a plugin tree with Claude Code's symlink rules: a link whose target is inside the
/// plugin is kept (as a relative link); one pointing elsewhere inside `boundary` (the marketplace
/// or repository) is dereferenced; one pointing outside is skipped. `.git` is not copied; file
/// modes are kept.
fn copy_tree(
    src: &Path,
    boundary: &Path,
    dest: &Path,
    progress: Progress,
) -> Result<(), PluginError> {
    let root = src.canonicalize().map_err(io(src))?;
    let boundary = boundary.canonicalize().map_err(io(boundary))?;
    let total = count_files(&root);
    let pb = progress.bar(
        total,
        format!(
            "Copying {}",
            root.file_name()
                .map(|n| n.to_string_lossy().to_string())
                .unwrap_or_default()
        ),
    );
    let delay = std::env::var(COPY_DELAY_ENV)
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(0);
    let mut cx = CopyCx {
        root: root.clone(),
        boundary,
        pb,
        delay,
        depth: 0,
    };
    let r = cx.copy_dir(&root, dest);
    cx.pb.finish_and_clear();
    r
}

fn count_files(dir: &Path) -> u64 {
    let mut n = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            match e.file_type() {
                Ok(t) if t.is_dir() && e.file_name() != ".git" => stack.push(e.path()),
                Ok(_) => n += 1,
                Err(_) => {}
            }
        }
    }
    n
}

struct CopyCx {
    root: PathBuf,
    boundary: PathBuf,
    pb: indicatif::ProgressBar,
    delay: u64,
    depth: usize,
}

impl CopyCx {
    fn copy_dir(&mut self, src: &Path, dest: &Path) -> Result<(), PluginError> {
        self.depth += 1;
        if self.depth > 64 {
            return Err(PluginError::Io {
                path: src.to_path_buf(),
                source: std::io::Error::other(
                    "directory nesting deeper than 64 levels (a symlink loop?)",
                ),
            });
        }
        std::fs::create_dir_all(dest).map_err(io(dest))?;
        let mut entries: Vec<_> = std::fs::read_dir(src).map_err(io(src))?.flatten().collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let name = e.file_name();
            if name == ".git" {
                continue;
            }
            let from = e.path();
            let to = dest.join(&name);
            let ft = e.file_type().map_err(io(&from))?;
            if ft.is_symlink() {
                let Ok(target) = from.canonicalize() else {
                    continue;
                }; // dangling: skipped
                if target.starts_with(&self.root) {
                    let link_dir = from
                        .parent()
                        .and_then(|p| p.canonicalize().ok())
                        .unwrap_or_else(|| self.root.clone());
                    let rel = relative(&link_dir, &target);
                    symlink(&rel, &to).map_err(io(&to))?;
                } else if target.starts_with(&self.boundary) {
                    if target.is_dir() {
                        self.copy_dir(&target, &to)?;
                    } else {
                        self.copy_file(&target, &to)?;
                    }
                }
            } else if ft.is_dir() {
                self.copy_dir(&from, &to)?;
            } else {
                self.copy_file(&from, &to)?;
            }
        }
        self.depth -= 1;
        Ok(())
    }

    fn copy_file(&mut self, from: &Path, to: &Path) -> Result<(), PluginError> {
        std::fs::copy(from, to).map_err(io(from))?;
        self.pb.inc(1);
        if self.delay > 0 {
            std::thread::sleep(std::time::Duration::from_millis(self.delay));
        }
        Ok(())
    }
}

fn relative(from_dir: &Path, target: &Path) -> PathBuf {
    let f: Vec<_> = from_dir.components().collect();
    let t: Vec<_> = target.components().collect();
    let common = f.iter().zip(&t).take_while(|(a, b)| a == b).count();
    let mut out = PathBuf::new();
    for _ in common..f.len() {
        out.push("..");
    }
    for c in &t[common..] {
        out.push(c.as_os_str());
    }
    out
}

#[cfg(unix)]
fn symlink(target: &Path, link: &Path) -> std::io::Result<()> {
    std::os::unix::fs::symlink(target, link)
}

#[cfg(not(unix))]
fn symlink(target: &Path, link: &Path) -> std::io::Result<()> {
    let _ = (target, link);
    Ok(())
}
