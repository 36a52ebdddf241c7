//! The `plugin marketplace` verbs: add, list, update, remove.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use warden_config::Scope;

use super::PluginManager;
use super::cache::{Scratch, mark_orphan};
use super::report::{MarketplaceListItem, MarketplaceOutput};
use crate::error::{PluginError, io};
use crate::fault;
use crate::git;
use crate::marketplace::{
    MARKETPLACE_FILE, Marketplace, is_reserved_name, load_marketplace, looks_like_owner_repo,
};
use crate::names::{child_dir, resolves_below};
use crate::namespace::split_plugin_id;
use crate::store::{KnownMarketplace, MarketplaceSource, edit_settings};
use crate::util::now_iso;
use crate::util::{has_parent_segment, swap_into_place};

impl PluginManager {
    /// `marketplace add <source>`: a directory, a git URL (`https://…`, `ssh://…`, `git://…`,
    /// `file://…`, `git@host:path`, optional `#ref`) or `owner/repo[@ref]`. Declares it in the
    /// scope's `extraKnownMarketplaces` and records it in `known_marketplaces.json`. Re-adding
    /// a name from the same source refreshes it; from another source it is refused
    /// ([`PluginError::MarketplaceSourceChanged`]) unless `replace`.
    pub fn marketplace_add(
        &self,
        source: &str,
        scope: Scope,
    ) -> Result<MarketplaceOutput, PluginError> {
        self.marketplace_add_with(source, scope, false)
    }

    /// [`PluginManager::marketplace_add`]; `replace` lets a known name point at a new source.
    pub fn marketplace_add_with(
        &self,
        source: &str,
        scope: Scope,
        replace: bool,
    ) -> Result<MarketplaceOutput, PluginError> {
        let settings = self.settings_file(scope)?;
        let src = self.parse_marketplace_source(source)?;
        let mut known = self.store.known()?;
        // Checked before a clone replaces `marketplaces/<name>`, and again with the name read.
        let check_source = |name: &str| match known.get(name) {
            Some(k) if !replace && !same_source(&k.source, &src) => {
                Err(PluginError::MarketplaceSourceChanged {
                    name: name.to_string(),
                    old: describe_source(&k.source),
                    new: describe_source(&src),
                })
            }
            _ => Ok(()),
        };
        let (name, location) = match &src {
            MarketplaceSource::Directory { path } => {
                let dir = PathBuf::from(path);
                let m = self.read_catalog(&dir)?;
                self.check_reserved(&m.name, &src)?;
                check_source(&m.name)?;
                (m.name, dir)
            }
            _ => self.clone_marketplace(&src, None, &check_source)?,
        };
        let mut warnings = Vec::new();
        if is_reserved_name(&name) && !is_official(&src) {
            warnings.push(format!(
                "marketplace name `{name}` is reserved for github.com/anthropics; it was added because --allow-reserved-name was given and the source is local ({})",
                describe_source(&src)
            ));
        }
        let previous = known.get(&name).cloned();
        let mut extra = previous
            .as_ref()
            .filter(|k| same_source(&k.source, &src))
            .map(|k| k.extra.clone())
            .unwrap_or_default();
        if !warnings.is_empty() {
            extra.insert(ALLOW_RESERVED_KEY.into(), Value::Bool(true));
        }
        known.insert(
            name.clone(),
            KnownMarketplace {
                source: src.clone(),
                install_location: location.clone(),
                last_updated: now_iso(),
                auto_update: None,
                extra,
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
        let mut message =
            format!("✔ Successfully added marketplace: {name} (declared in {scope} settings)");
        if let Some(p) = previous.filter(|p| !same_source(&p.source, &src)) {
            message.push_str(&format!(
                "\n  It pointed at {} before and now points at {}; installed plugins from it update from the new source.",
                describe_source(&p.source),
                describe_source(&src)
            ));
        }
        Ok(MarketplaceOutput {
            command: "marketplace-add",
            outcome: "ok",
            message,
            marketplace: name,
            scope: Some(scope),
            install_location: Some(location),
            uninstalled: Vec::new(),
            warnings,
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

    /// The error for a marketplace name that is not known, listing the known ones.
    pub(super) fn unknown_marketplace(
        &self,
        name: &str,
        known: &std::collections::BTreeMap<String, KnownMarketplace>,
    ) -> PluginError {
        PluginError::UnknownMarketplace {
            name: name.to_string(),
            known: known.keys().cloned().collect(),
        }
    }

    /// Claude Code's check: a reserved name only from github.com/anthropics. With
    /// [`PluginManager::allow_reserved_names`], a local source (a directory or a `file://`
    /// clone) may also use one; a remote source never may.
    fn check_reserved(&self, name: &str, src: &MarketplaceSource) -> Result<(), PluginError> {
        if is_reserved_name(name)
            && !is_official(src)
            && !(self.allow_reserved_names && is_local(src))
        {
            return Err(PluginError::ReservedName {
                name: name.to_string(),
                local: is_local(src),
            });
        }
        Ok(())
    }

    pub(super) fn read_catalog(&self, dir: &Path) -> Result<Marketplace, PluginError> {
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
        check_name: &dyn Fn(&str) -> Result<(), PluginError>,
    ) -> Result<(String, PathBuf), PluginError> {
        let url = src
            .git_url()
            .ok_or_else(|| PluginError::BadSource(format!("{src:?}")))?;
        let (git_ref, sub) = match src {
            MarketplaceSource::Github { git_ref, path, .. }
            | MarketplaceSource::Git { git_ref, path, .. } => (git_ref.clone(), path.clone()),
            MarketplaceSource::Directory { .. } => (None, None),
        };
        let tmp = Scratch::new(&self.store.tmp_dir(), "mkt-")?;
        let repo = tmp.path().join("repo");
        let pb = self.progress().spinner(format!("Cloning {url}"));
        let res = git::clone(&url, &repo, git_ref.as_deref(), None, None);
        pb.finish_and_clear();
        res?;
        if expect_name.is_some() {
            fault::point("marketplace-update.cloned");
        }
        let catalog_dir = match &sub {
            Some(p) if Path::new(p).is_absolute() || has_parent_segment(p) => {
                return Err(PluginError::BadSource(format!(
                    "{url}: path `{p}` must be relative to the repository, without `..`"
                )));
            }
            Some(p) => repo.join(p),
            None => repo.clone(),
        };
        if !catalog_dir.is_dir() || !resolves_below_or_at(&repo, &catalog_dir) {
            return Err(PluginError::BadSource(format!(
                "{url}: path `{}` is not a directory inside the repository",
                sub.as_deref().unwrap_or("")
            )));
        }
        let m = self.read_catalog(&catalog_dir)?;
        self.check_reserved(&m.name, src)?;
        check_name(&m.name)?;
        if let Some(e) = expect_name
            && e != m.name
        {
            return Err(PluginError::InvalidMarketplace {
                path: catalog_dir.join(MARKETPLACE_FILE),
                details: format!("name changed from `{e}` to `{}`", m.name),
            });
        }
        // The name is checked by the catalog parser; `child_dir` also makes sure that what gets
        // replaced below is the directory of that name in `marketplaces/`, by resolved path.
        child_dir(&self.store.root, &["marketplaces", &m.name], true)?;
        let dest = self.store.marketplaces_dir().join(&m.name);
        swap_into_place(&repo, &dest, &tmp.path().join("old")).map_err(io(&dest))?;
        if expect_name.is_some() {
            fault::point("marketplace-update.swapped");
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
            Some(n) => return Err(self.unknown_marketplace(n, &known)),
            None => known.keys().cloned().collect(),
        };
        let mut out = Vec::new();
        for n in names {
            let Some(k) = known.get(&n).cloned() else {
                continue;
            };
            // A local reserved-name marketplace admitted by `add --allow-reserved-name` stays
            // admitted; the check still runs for every other source.
            let admitted = k.extra.get(ALLOW_RESERVED_KEY) == Some(&Value::Bool(true));
            let this = self
                .clone()
                .allow_reserved_names(self.allow_reserved_names || admitted);
            let loc = match &k.source {
                MarketplaceSource::Directory { .. } => {
                    self.read_catalog(&k.install_location)?;
                    k.install_location.clone()
                }
                src => this.clone_marketplace(src, Some(&n), &|_| Ok(()))?.1,
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
                warnings: Vec::new(),
            });
        }
        self.store.write_known(&known)?;
        fault::point("marketplace-update.written");
        Ok(out)
    }

    /// `marketplace remove <name>`: removes the declaration from the scope's settings; when no
    /// user/project/local settings file declares it any more, forgets it. Plugins installed from
    /// it are uninstalled only when `uninstall_plugins`; otherwise the removal is refused
    /// ([`PluginError::MarketplaceInUse`]) and nothing changes.
    pub fn marketplace_remove(
        &self,
        name: &str,
        scope: Scope,
        uninstall_plugins: bool,
    ) -> Result<MarketplaceOutput, PluginError> {
        let mut known = self.store.known()?;
        let settings = self.settings_file(scope)?;
        let declared_here = warden_config::read_settings_file(&settings)?.is_some_and(|m| {
            m.get("extraKnownMarketplaces")
                .and_then(|e| e.get(name))
                .is_some()
        });
        if !known.contains_key(name) && !declared_here {
            return Err(self.unknown_marketplace(name, &known));
        }
        let declared_elsewhere = [Scope::User, Scope::Project, Scope::Local]
            .iter()
            .filter(|s| **s != scope)
            .filter_map(|s| self.settings_file(*s).ok())
            .any(|p| declares(&p, name));
        if !declared_elsewhere && !uninstall_plugins {
            let plugins: Vec<String> = self
                .store
                .installed()?
                .plugins
                .keys()
                .filter(|id| split_plugin_id(id).1 == Some(name))
                .cloned()
                .collect();
            if !plugins.is_empty() {
                return Err(PluginError::MarketplaceInUse {
                    name: name.to_string(),
                    plugins,
                });
            }
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
            .any(|p| declares(&p, name));
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
                mark_orphan(&self.store.cache_dir(), &p);
            }
            // Only a clone Warden made is deleted, and only as `marketplaces/<name>` resolved:
            // an unsafe name (from a state file another tool wrote) is forgotten, not followed.
            if let Some(k) = known.remove(name)
                && !matches!(k.source, MarketplaceSource::Directory { .. })
                && let Ok(dir) = child_dir(&self.store.root, &["marketplaces", name], false)
                && dir.is_dir()
            {
                let _ = std::fs::remove_dir_all(dir);
            }
            self.store.write_known(&known)?;
            uninstalled = ids;
        }
        let mut message = format!("✔ Successfully removed marketplace: {name}");
        if !uninstalled.is_empty() {
            message.push_str(&format!(
                "\nAlso uninstalled {} plugin{} from this marketplace:",
                uninstalled.len(),
                if uninstalled.len() == 1 { "" } else { "s" }
            ));
            for id in &uninstalled {
                message.push_str(&format!("\n  {id}"));
            }
        }
        Ok(MarketplaceOutput {
            command: "marketplace-remove",
            outcome: "ok",
            message,
            marketplace: name.to_string(),
            scope: Some(scope),
            install_location: None,
            uninstalled,
            warnings: Vec::new(),
        })
    }
}

/// Whether `path` is `root` or below it, both resolved.
fn resolves_below_or_at(root: &Path, path: &Path) -> bool {
    root.canonicalize()
        .is_ok_and(|r| path.canonicalize().is_ok_and(|p| p == r))
        || resolves_below(root, path)
}

/// The `known_marketplaces.json` key that records an `add --allow-reserved-name`.
const ALLOW_RESERVED_KEY: &str = "wardenAllowReservedName";

/// Whether a settings file declares marketplace `name` in `extraKnownMarketplaces`.
fn declares(settings: &Path, name: &str) -> bool {
    warden_config::read_settings_file(settings)
        .ok()
        .flatten()
        .is_some_and(|m| {
            m.get("extraKnownMarketplaces")
                .and_then(|e| e.get(name))
                .is_some()
        })
}

/// A source on github.com/anthropics, the only one Claude Code accepts a reserved name from.
fn is_official(src: &MarketplaceSource) -> bool {
    match src {
        MarketplaceSource::Github { repo, .. } => {
            repo.to_ascii_lowercase().starts_with("anthropics/")
        }
        MarketplaceSource::Git { url, .. } => {
            let u = url.to_ascii_lowercase();
            u.contains("github.com/anthropics/") || u.contains("github.com:anthropics/")
        }
        MarketplaceSource::Directory { .. } => false,
    }
}

/// A source on this machine: a directory or a `file://` repository.
fn is_local(src: &MarketplaceSource) -> bool {
    match src {
        MarketplaceSource::Directory { .. } => true,
        MarketplaceSource::Git { url, .. } => url.to_ascii_lowercase().starts_with("file://"),
        MarketplaceSource::Github { .. } => false,
    }
}

/// Whether two sources name the same catalog (the ref and sub-path included).
fn same_source(a: &MarketplaceSource, b: &MarketplaceSource) -> bool {
    fn norm(u: &str) -> &str {
        let u = u.trim_end_matches('/');
        u.strip_suffix(".git").unwrap_or(u)
    }
    match (a, b) {
        (
            MarketplaceSource::Git {
                url: ua,
                git_ref: ra,
                path: pa,
            },
            MarketplaceSource::Git {
                url: ub,
                git_ref: rb,
                path: pb,
            },
        ) => norm(ua) == norm(ub) && ra == rb && pa == pb,
        (
            MarketplaceSource::Github {
                repo: ua,
                git_ref: ra,
                path: pa,
            },
            MarketplaceSource::Github {
                repo: ub,
                git_ref: rb,
                path: pb,
            },
        ) => ua.eq_ignore_ascii_case(ub) && ra == rb && pa == pb,
        _ => a == b,
    }
}

/// A source as a person reads it: `dir:/path`, `github:owner/repo`, the git URL.
pub(crate) fn describe_source(src: &MarketplaceSource) -> String {
    match src {
        MarketplaceSource::Directory { path } => format!("directory {path}"),
        MarketplaceSource::Github { repo, git_ref, .. } => match git_ref {
            Some(r) => format!("github {repo}@{r}"),
            None => format!("github {repo}"),
        },
        MarketplaceSource::Git { url, git_ref, .. } => match git_ref {
            Some(r) => format!("{url}#{r}"),
            None => url.clone(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manager(allow: bool) -> PluginManager {
        let home = warden_config::Home::new(std::env::temp_dir().join("warden-reserved-test"));
        PluginManager::new(home, std::env::temp_dir()).allow_reserved_names(allow)
    }

    #[test]
    fn a_reserved_name_needs_anthropics_or_a_local_source_and_the_flag() {
        let remote = [
            MarketplaceSource::Github {
                repo: "someone/claude-code".into(),
                git_ref: None,
                path: None,
            },
            MarketplaceSource::Git {
                url: "https://example.com/claude-code.git".into(),
                git_ref: None,
                path: None,
            },
        ];
        let local = [
            MarketplaceSource::Directory {
                path: "/src/claude-code".into(),
            },
            MarketplaceSource::Git {
                url: "file:///src/claude-code".into(),
                git_ref: None,
                path: None,
            },
        ];
        for allow in [false, true] {
            for src in &remote {
                assert!(
                    matches!(
                        manager(allow).check_reserved("claude-code-plugins", src),
                        Err(PluginError::ReservedName { local: false, .. })
                    ),
                    "{src:?} allow={allow}"
                );
            }
            for src in &local {
                assert_eq!(
                    manager(allow)
                        .check_reserved("claude-code-plugins", src)
                        .is_ok(),
                    allow,
                    "{src:?}"
                );
            }
        }
        let official = MarketplaceSource::Github {
            repo: "anthropics/claude-code".into(),
            git_ref: None,
            path: None,
        };
        assert!(
            manager(false)
                .check_reserved("claude-code-plugins", &official)
                .is_ok()
        );
        assert!(
            manager(false)
                .check_reserved("my-tools", &remote[0])
                .is_ok()
        );
    }

    #[test]
    fn same_source_ignores_a_trailing_git_suffix_only() {
        let a = MarketplaceSource::Git {
            url: "https://h/x.git".into(),
            git_ref: None,
            path: None,
        };
        let b = MarketplaceSource::Git {
            url: "https://h/x".into(),
            git_ref: None,
            path: None,
        };
        let c = MarketplaceSource::Git {
            url: "https://h/y".into(),
            git_ref: None,
            path: None,
        };
        assert!(same_source(&a, &b));
        assert!(!same_source(&a, &c));
    }
}
