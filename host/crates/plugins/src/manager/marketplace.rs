//! The `plugin marketplace` verbs: add, list, update, remove.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use warden_config::Scope;

use super::PluginManager;
use super::cache::mark_orphan;
use super::report::{MarketplaceListItem, MarketplaceOutput};
use crate::error::{PluginError, io};
use crate::git;
use crate::marketplace::{
    MARKETPLACE_FILE, Marketplace, is_reserved_name, load_marketplace, looks_like_owner_repo,
};
use crate::names::{child_dir, resolves_below};
use crate::namespace::split_plugin_id;
use crate::store::{KnownMarketplace, MarketplaceSource, edit_settings};
use crate::util::has_parent_segment;
use crate::util::now_iso;

impl PluginManager {
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
}

/// Whether `path` is `root` or below it, both resolved.
fn resolves_below_or_at(root: &Path, path: &Path) -> bool {
    root.canonicalize()
        .is_ok_and(|r| path.canonicalize().is_ok_and(|p| p == r))
        || resolves_below(root, path)
}
