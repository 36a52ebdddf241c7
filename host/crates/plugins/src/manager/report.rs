//! What the verbs return: `Serialize` structs for `--json` whose `Display` is the human text.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

use serde::Serialize;
use warden_config::Scope;

use crate::capability::{Capabilities, CapabilityRequest};
use crate::diag::Diagnostic;
use crate::loader::{LoadError, LoadedPlugin};
use crate::marketplace::{MarketplaceEntry, PluginSource};
use crate::store::MarketplaceSource;

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
    /// Source (absent for an unusable entry).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<PluginSource>,
    /// Why the entry cannot be installed (its source folder does not exist, …), if it cannot.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unavailable: Option<String>,
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
    /// Warnings (a reserved name admitted from a local source).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
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
    /// For a plugin pulled from a registry or installed under a marketplace's signed index: the
    /// key id whose recorded signature still verifies and is still trusted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signer: Option<String>,
    /// For a plugin pulled from a registry or from a marketplace: why its recorded signature no
    /// longer passes the trust policy (unsigned where one is now required, a key no longer trusted, a signature
    /// that does not verify).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signature_problem: Option<String>,
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
                match &a.unavailable {
                    Some(reason) => writeln!(f, "  {} (unavailable: {reason})", a.plugin_id)?,
                    None => writeln!(
                        f,
                        "  {}{}",
                        a.plugin_id,
                        a.description
                            .as_deref()
                            .map(|d| format!(" — {d}"))
                            .unwrap_or_default()
                    )?,
                }
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
            let sig = match (&p.signer, &p.signature_problem) {
                (_, Some(why)) => format!("; ✘ signature: {why}"),
                (Some(k), None) => format!("; signed by {k}"),
                (None, None) => String::new(),
            };
            writeln!(f, "{} ({}): {s}{sig}", p.plugin_id, p.scope)?;
        }
        write!(
            f,
            "{}",
            if self.ok {
                "All installed plugins match their recorded digests."
            } else if self.plugins.iter().any(|p| p.signature_problem.is_some())
                && self
                    .plugins
                    .iter()
                    .all(|p| matches!(p.status, VerifyStatus::Ok | VerifyStatus::Unrecorded))
            {
                "Some installed plugins fail the signature policy: trust their signer's key (`warden key trust`), or uninstall them."
            } else {
                "Some installed plugins do not match: `warden plugin install <plugin> --scope <scope>` restores each from its marketplace (`warden plugin update <plugin>` does too)."
            }
        )
    }
}
