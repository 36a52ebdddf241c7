//! The install pipeline: fetch into staging, load, hash, ask for consent, place in the cache,
//! commit; and its inverse, uninstall.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use warden_config::Scope;

use super::PluginManager;
use super::cache::{Scratch, mark_orphan, place_in_cache};
use super::copy::{CopyLimits, copy_tree};
use super::report::{ConsentRequired, InstallOutcome, InstallReport, UninstallOutput};
use crate::capability::{CapabilityRequest, Grant, format_diff};
use crate::diag::Diagnostic;
use crate::digest::tree_digest;
use crate::error::{PluginError, io};
use crate::fault;
use crate::git;
use crate::loader::{LoadContext, MANIFEST_FILE, load_plugin_with};
use crate::marketplace::{MARKETPLACE_FILE, Marketplace, MarketplaceEntry, PluginSource};
use crate::names::{check_path_name, child_dir};
use crate::namespace::{data_dir_name, plugin_id, split_plugin_id};
use crate::store::{InstallRecord, MarketplaceSource, WardenRecord, edit_settings};
use crate::util::now_iso;
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

impl PluginManager {
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

    pub(super) fn installed_scope(
        &self,
        id: &str,
        scope: Option<Scope>,
    ) -> Result<Scope, PluginError> {
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
        // A settings file this install would write is checked before anything is fetched.
        if !is_update {
            enabled_value(&settings, "")?;
        }
        let known = self.store.known()?;
        let not_found = || PluginError::NotFound {
            plugin: name.to_string(),
            marketplace: mkt_name.to_string(),
        };
        let k = known
            .get(mkt_name)
            .ok_or_else(|| self.unknown_marketplace(mkt_name, &known))?;
        let m = self.read_catalog(&k.install_location)?;
        let entry = match m.entry(name) {
            Some(e) => e.clone(),
            None => {
                return Err(match m.unusable.get(name) {
                    Some(reason) => PluginError::Unusable {
                        plugin: name.to_string(),
                        marketplace: mkt_name.to_string(),
                        root: m.root.clone(),
                        reason: reason.clone(),
                    },
                    None => not_found(),
                });
            }
        };
        let id = plugin_id(name, mkt_name);
        // Both become cache directories; the catalog parser already refuses unsafe names, this
        // also covers state files written by other tools.
        for (field, value) in [("name", &m.name), ("plugins[].name", &entry.name)] {
            check_path_name(value).map_err(|reason| PluginError::InvalidName {
                file: m.root.join(MARKETPLACE_FILE),
                field: field.into(),
                name: value.clone(),
                reason,
            })?;
        }
        check_path_name(mkt_name).map_err(|reason| PluginError::InvalidName {
            file: self.store.known_path(),
            field: mkt_name.into(),
            name: mkt_name.into(),
            reason,
        })?;

        // A signed index that the policy makes count is checked before anything is fetched.
        let index = self.index_before_fetch(mkt_name, &m, &entry)?;
        let staging = Scratch::new(&self.store.tmp_dir(), "stage-")?;
        let plugin_dir = staging.path().join("plugin");
        let limits = self.copy_limits()?;
        let (git_sha, copy_warnings, pulled) =
            self.fetch(&id, &m, &entry, staging.path(), &plugin_dir, limits)?;
        fault::point(if is_update {
            "update.fetched"
        } else {
            "install.fetched"
        });
        let digest = tree_digest(&plugin_dir).map_err(io(&plugin_dir))?;
        // The staged copy must be what the signed index lists, before any of it is read.
        if let Some(ix) = &index
            && ix.expected != digest
        {
            return Err(PluginError::IndexSignature {
                plugin: id,
                reason: format!(
                    "its files hash to {digest}, but the index of marketplace `{}` signed by {} lists {}: the plugin was changed after the index was signed",
                    ix.marketplace, ix.signature.key_id, ix.expected
                ),
            });
        }

        // Where warnings may name the staging copy, which is moved away below.
        let staged_paths: Vec<PathBuf> = std::iter::once(plugin_dir.clone())
            .chain(plugin_dir.canonicalize().ok())
            .collect();
        let mfile = m.root.join(MARKETPLACE_FILE);
        let loaded = load_plugin_with(
            &plugin_dir,
            &LoadContext {
                entry: Some(&entry),
                marketplace_file: Some(&mfile),
                at_source: false,
            },
        )?;
        self.check_components(&id, k, &m, &entry, &loaded, &staged_paths)?;
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
            .or_else(|| {
                pulled.as_ref().map(|(_, p)| {
                    let hex = p.manifest_digest.trim_start_matches("sha256:");
                    format!("oci-{}", &hex[..hex.len().min(12)])
                })
            })
            .unwrap_or_else(|| "unknown".to_string());
        if let Err(reason) = check_path_name(&version) {
            let from_entry = entry.version.as_deref() == Some(version.as_str());
            let file = if loaded.manifest.version.is_some() && !from_entry {
                match m.entry_dir(&entry) {
                    Some(d) => d.join(MANIFEST_FILE),
                    None => PathBuf::from(format!("{id}: {MANIFEST_FILE}")),
                }
            } else {
                m.root.join(MARKETPLACE_FILE)
            };
            return Err(PluginError::InvalidName {
                file,
                field: "version".into(),
                name: version,
                reason,
            });
        }

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
        let mut warnings: Vec<Diagnostic> = copy_warnings;
        warnings.extend(loaded.diagnostics.iter().cloned());
        warnings.extend(
            crate::unsupported::unsupported(&loaded)
                .into_iter()
                .map(|u| Diagnostic::warning(&u.file, u.to_string())),
        );

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
            let warnings = relocate(warnings, &staged_paths, &prev.install_path);
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
        // Grants count only while some installation of the plugin is recorded: one left by an
        // install or uninstall that was killed before it finished was not confirmed by a
        // recorded installation, so it is asked for again.
        let recorded = installed.plugins.get(&id).is_some_and(|r| !r.is_empty());
        let prev_grant = previous
            .as_ref()
            .and_then(|p| p.warden.as_ref())
            .and_then(|w| grants.get(&id, &w.sha256))
            .or_else(|| grants.latest(&id))
            .filter(|_| recorded)
            .cloned();
        let exact = grants.get(&id, &digest).filter(|_| recorded).cloned();
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
            component_digests: super::component_digests(&loaded)?,
            granted_at: now_iso(),
        };

        let final_dir = place_in_cache(
            &installed,
            &self.store.root,
            [mkt_name, name, version.as_str()],
            &digest,
            &plugin_dir,
            staging.path(),
        )?;
        fault::point(if is_update {
            "update.cached"
        } else {
            "install.cached"
        });

        // The installed registry is written last: it is the commit point, and what each step
        // before it leaves behind means nothing while no installation records it (an
        // `enabledPlugins` key of a plugin that is not installed, an unrecorded cache copy, a
        // grant that is not counted, see above).
        let enabled_before = if is_update {
            None
        } else {
            let enable = entry
                .raw
                .get("defaultEnabled")
                .and_then(Value::as_bool)
                .or(loaded.manifest.default_enabled)
                .unwrap_or(true);
            let before = set_enabled_key(&settings, &id, Some(Value::Bool(enable)))?;
            fault::point("install.settings-written");
            Some(before)
        };
        let committed = self.commit_install(
            &id,
            &mut installed,
            &mut grants,
            grant,
            InstallRecord {
                scope,
                install_path: final_dir.clone(),
                version: version.clone(),
                installed_at: previous
                    .as_ref()
                    .map(|p| p.installed_at.clone())
                    .unwrap_or_else(now_iso),
                last_updated: now_iso(),
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
                    match &pulled {
                        Some((reference, p)) => {
                            x.insert(
                                super::oci::OCI_RECORD_KEY.into(),
                                super::oci::record_value(reference, p),
                            );
                        }
                        None => {
                            x.remove(super::oci::OCI_RECORD_KEY);
                        }
                    }
                    match &index {
                        Some(ix) => {
                            x.insert(
                                super::signed_index::INDEX_RECORD_KEY.into(),
                                ix.record_value(),
                            );
                        }
                        None => {
                            x.remove(super::signed_index::INDEX_RECORD_KEY);
                        }
                    }
                    x
                },
            },
            is_update,
        );
        if let Err(e) = committed {
            // Put back what this scope said before, so a failed install leaves no trace there.
            if let Some(before) = enabled_before {
                let _ = set_enabled_key(&settings, &id, before);
            }
            return Err(e);
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
            mark_orphan(&self.store.cache_dir(), &prev.install_path);
            if is_update {
                fault::point("update.old-version-released");
            }
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
        let message = match &pulled {
            Some((reference, p)) => format!(
                "{message}\n  from {reference} (manifest {}), {}",
                p.manifest_digest,
                match &p.signature {
                    Some(s) => format!("signed by trusted key {}", s.key_id),
                    None => "unsigned".to_string(),
                }
            ),
            None => message,
        };
        let message = match &index {
            Some(ix) => format!(
                "{message}\n  listed in the signed index of marketplace {}, signed by trusted key {}",
                ix.marketplace, ix.signature.key_id
            ),
            None => message,
        };
        let warnings = relocate(warnings, &staged_paths, &final_dir);
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

    /// Refuses a plugin whose Warden part cannot run: a declared component whose file is missing
    /// or not a valid WebAssembly component, or a `warden.toml` that failed its checks.
    /// Installed anyway, its guards would drop out without a word, and building in the cache
    /// copy afterwards would change the tree its digest pins. Problems name the source's files.
    fn check_components(
        &self,
        id: &str,
        known: &crate::store::KnownMarketplace,
        m: &Marketplace,
        entry: &MarketplaceEntry,
        loaded: &crate::loader::LoadedPlugin,
        staged: &[PathBuf],
    ) -> Result<(), PluginError> {
        let mut problems: Vec<Diagnostic> = Vec::new();
        match &loaded.warden {
            Some(w) => {
                for c in w.components.values() {
                    if let Err(reason) = crate::warden::check_component_file(&c.path) {
                        problems.push(Diagnostic::error(
                            &c.path,
                            format!("component `{}` {reason}", c.name),
                        ));
                    }
                }
            }
            None if loaded.warden_declared => {
                let toml = loaded.root.join(crate::warden::WARDEN_TOML);
                let errors = loaded.diagnostics.iter().filter(|d| d.is_error());
                let own: Vec<Diagnostic> = errors
                    .clone()
                    .filter(|d| d.file == toml || d.message.contains("`warden."))
                    .cloned()
                    .collect();
                problems = if own.is_empty() {
                    errors.cloned().collect()
                } else {
                    own
                };
                let hint = format!("; {}", crate::warden::REBUILD_HINT);
                for d in &mut problems {
                    d.message = d.message.replace(&hint, "");
                }
            }
            None => {}
        }
        if problems.is_empty() {
            return Ok(());
        }
        let local_dir = match known.source {
            MarketplaceSource::Directory { .. } => m.entry_dir(entry),
            _ => None,
        };
        let (shown_as, advice) = match &local_dir {
            Some(dir) => (
                dir.clone(),
                format!(
                    "Build it in the plugin's source before installing (`warden build {}` when warden.toml gives a `build`, or the plugin's own build), then install again",
                    dir.display()
                ),
            ),
            None => {
                let from = entry
                    .source
                    .git_url()
                    .unwrap_or_else(|| m.root.display().to_string());
                (
                    PathBuf::from(format!("{from}:")),
                    format!(
                        "The plugin's source ({from}) does not hold a usable built component: it has to be built there (`warden build` in a checkout) and the .wasm file published with the plugin, or installed from a local directory marketplace where it was built"
                    ),
                )
            }
        };
        let problems = relocate(problems, staged, &shown_as)
            .iter()
            .map(|d| {
                let at = match (d.line, d.column) {
                    (Some(l), Some(c)) => format!(":{l}:{c}"),
                    (Some(l), None) => format!(":{l}"),
                    _ => String::new(),
                };
                format!("{}{at}: {}", d.file.display(), d.message)
            })
            .collect::<Vec<_>>()
            .join("; ");
        Err(PluginError::ComponentsUnusable {
            plugin: id.to_string(),
            problems,
            advice,
        })
    }

    /// Writes the grant, then the installation record: the commit point of install and update.
    fn commit_install(
        &self,
        id: &str,
        installed: &mut crate::store::InstalledPlugins,
        grants: &mut crate::store::Grants,
        grant: Grant,
        record: InstallRecord,
        is_update: bool,
    ) -> Result<(), PluginError> {
        grants.put(grant);
        self.store.write_grants(grants)?;
        fault::point(if is_update {
            "update.grants-written"
        } else {
            "install.grants-written"
        });
        let scope = record.scope;
        let recs = installed.plugins.entry(id.to_string()).or_default();
        recs.retain(|r| !self.record_here(r, scope));
        recs.push(record);
        self.store.write_installed(installed)?;
        fault::point(if is_update {
            "update.registry-written"
        } else {
            "install.registry-written"
        });
        Ok(())
    }

    /// Fetches an entry's files into `dest` (inside `staging`); returns the git commit, if any,
    /// and what was pulled, for a registry source.
    #[allow(clippy::type_complexity)]
    fn fetch(
        &self,
        id: &str,
        m: &Marketplace,
        entry: &MarketplaceEntry,
        staging: &Path,
        dest: &Path,
        limits: CopyLimits,
    ) -> Result<
        (
            Option<String>,
            Vec<Diagnostic>,
            Option<(String, warden_distribution::Pulled)>,
        ),
        PluginError,
    > {
        if let PluginSource::Oci { reference, digest } = &entry.source {
            let pulled = self.fetch_oci(reference, digest.as_deref(), &m.name, dest)?;
            return Ok((None, Vec::new(), Some((reference.clone(), pulled))));
        }
        let (sha, warnings) = self.fetch_files(id, m, entry, staging, dest, limits)?;
        Ok((sha, warnings, None))
    }

    /// [`Self::fetch`] for directory and git sources. The marketplace's signed index files are
    /// left out of the copy ([`super::signed_index::strip_index_files`]).
    pub(super) fn fetch_files(
        &self,
        id: &str,
        m: &Marketplace,
        entry: &MarketplaceEntry,
        staging: &Path,
        dest: &Path,
        limits: CopyLimits,
    ) -> Result<(Option<String>, Vec<Diagnostic>), PluginError> {
        match &entry.source {
            PluginSource::Relative { .. } => {
                let src = m.entry_dir(entry).ok_or_else(|| PluginError::NotFound {
                    plugin: entry.name.clone(),
                    marketplace: m.name.clone(),
                })?;
                let warnings = copy_tree(&src, &m.root, dest, limits, self.progress())?;
                super::signed_index::strip_index_files(dest)?;
                let head = git::head(&m.root)
                    .ok()
                    .filter(|_| m.root.join(".git").exists());
                Ok((head, warnings))
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
                let warnings = copy_tree(&src_dir, &repo, dest, limits, self.progress())?;
                super::signed_index::strip_index_files(dest)?;
                Ok((Some(head), warnings))
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
        let id = match self.resolve_installed(spec) {
            Ok(id) => id,
            Err(e @ PluginError::NotInstalled { .. }) => {
                return match self.interrupted_uninstall(spec)? {
                    Some(id) => self.finish_uninstall(&id, scope.unwrap_or(Scope::User), keep_data),
                    None => Err(e),
                };
            }
            Err(e) => return Err(e),
        };
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
        // Every file written below is read first, so a corrupt one stops the uninstall before
        // its commit point instead of half way through.
        let settings = self.settings_file(scope)?;
        enabled_value(&settings, "")?;
        self.store.grants()?;
        // The commit point comes first here: once no installation records the plugin, what is
        // left of it below (a settings key, a grant that no longer counts, data) is inert, and
        // running `uninstall` again removes it.
        self.store.write_installed(&installed)?;
        fault::point("uninstall.registry-written");
        set_enabled_key(&settings, &id, None)?;
        fault::point("uninstall.settings-written");
        if !installed
            .plugins
            .values()
            .flatten()
            .any(|r| r.install_path == rec.install_path)
        {
            mark_orphan(&self.store.cache_dir(), &rec.install_path);
        }
        fault::point("uninstall.cache-released");
        if last {
            self.remove_leftovers(&id, keep_data)?;
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

    /// The plugin id of an uninstall that was killed after its commit point: no installation is
    /// recorded, but its grants are still there (they are removed last).
    fn interrupted_uninstall(&self, spec: &str) -> Result<Option<String>, PluginError> {
        let installed = self.store.installed()?;
        let grants = self.store.grants()?;
        let mut hits = grants.grants.keys().filter(|id| {
            !installed.plugins.contains_key(*id)
                && (id.as_str() == spec || split_plugin_id(id).0 == spec)
        });
        Ok(match (hits.next(), hits.next()) {
            (Some(id), None) => Some(id.clone()),
            _ => None,
        })
    }

    /// Finishes an interrupted uninstall of `id` in `scope`.
    fn finish_uninstall(
        &self,
        id: &str,
        scope: Scope,
        keep_data: bool,
    ) -> Result<UninstallOutput, PluginError> {
        set_enabled_key(&self.settings_file(scope)?, id, None)?;
        self.remove_leftovers(id, keep_data)?;
        Ok(UninstallOutput {
            command: "uninstall",
            outcome: "ok",
            message: format!(
                "✔ Successfully uninstalled plugin: {id} (scope: {scope}); an earlier uninstall had been interrupted, and what it left is now removed"
            ),
            plugin: id.to_string(),
            plugin_id: id.to_string(),
            scope,
            kept_data: keep_data,
        })
    }

    /// After the last installation of `id` is gone: its data directory (unless `keep_data`),
    /// then its grants, last, since they mark an uninstall that has not finished.
    fn remove_leftovers(&self, id: &str, keep_data: bool) -> Result<(), PluginError> {
        // Deleted only as `data/<name>` resolved: a `data` that is a symlink is not followed.
        if !keep_data
            && let Ok(dir) = child_dir(&self.store.root, &["data", &data_dir_name(id)], false)
        {
            let _ = std::fs::remove_dir_all(dir);
        }
        fault::point("uninstall.data-removed");
        let mut g = self.store.grants()?;
        if g.grants.remove(id).is_some() {
            self.store.write_grants(&g)?;
        }
        Ok(())
    }
}

/// Sets (`Some`) or removes (`None`) `enabledPlugins[id]` in a settings file, and returns what
/// it was. A file that would not change is not written (nor created).
pub(super) fn set_enabled_key(
    settings: &Path,
    id: &str,
    value: Option<Value>,
) -> Result<Option<Value>, PluginError> {
    let before = enabled_value(settings, id)?;
    if before == value {
        return Ok(before);
    }
    edit_settings(settings, |m| {
        let ep = m.entry("enabledPlugins").or_insert_with(|| json!({}));
        if let Some(o) = ep.as_object_mut() {
            match &value {
                Some(v) => {
                    o.insert(id.to_string(), v.clone());
                }
                None => {
                    o.remove(id);
                }
            }
        }
    })?;
    Ok(before)
}

/// `enabledPlugins[id]` of a settings file. A file that cannot be read or parsed, or whose
/// `enabledPlugins` is not an object, is an error naming it and the position, so no command
/// writes over what the user wrote there.
pub(super) fn enabled_value(settings: &Path, id: &str) -> Result<Option<Value>, PluginError> {
    let map = warden_config::read_settings_file(settings)?.unwrap_or_default();
    match map.get("enabledPlugins") {
        None => Ok(None),
        Some(Value::Object(o)) => Ok(o.get(id).cloned()),
        Some(other) => {
            let at = std::fs::read_to_string(settings)
                .ok()
                .and_then(|t| crate::util::locate_key(&t, "enabledPlugins"))
                .map(|(l, c)| format!("{l}:{c}: "))
                .unwrap_or_default();
            Err(PluginError::State {
                path: settings.to_path_buf(),
                message: format!(
                    "{at}`enabledPlugins` is {}, not an object of plugin ids to true or false; fix the file, nothing was changed",
                    warden_config::json_type_name(other)
                ),
            })
        }
    }
}

/// The warnings found in the staging copy, about the installed copy: paths under `staged`
/// now name `installed` (the staging directory is deleted), and each problem is listed once.
fn relocate(warnings: Vec<Diagnostic>, staged: &[PathBuf], installed: &Path) -> Vec<Diagnostic> {
    let to = installed.to_string_lossy().to_string();
    let mut out: Vec<Diagnostic> = Vec::with_capacity(warnings.len());
    for mut d in warnings {
        for s in staged {
            if let Ok(rest) = d.file.strip_prefix(s) {
                d.file = installed.join(rest);
            }
            let from = s.to_string_lossy().to_string();
            if !from.is_empty() {
                d.message = d.message.replace(&from, &to);
            }
        }
        if !out.contains(&d) {
            out.push(d);
        }
    }
    out
}
