//! `.claude-plugin/marketplace.json`: the catalog model, plugin sources and its schema checks.
//!
//! Problems with one entry (a missing source directory, a `.md` source, an unknown source type)
//! are diagnostics for that entry; the other entries still load. Extra keys are never rejected.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::diag::Diagnostic;
use crate::limits::MAX_MARKETPLACE_BYTES;
use crate::names::check_path_name;
use crate::util::{did_you_mean, has_parent_segment, is_kebab, locate_key, read_limited};
use warden_config::json_type_name;

/// Relative path of the catalog inside a marketplace directory.
pub const MARKETPLACE_FILE: &str = ".claude-plugin/marketplace.json";

/// Marketplace names Claude Code reserves for `github.com/anthropics/*`.
pub const RESERVED_NAMES: &[&str] = &[
    "claude-code-marketplace",
    "claude-code-plugins",
    "claude-plugins-official",
    "claude-plugins-community",
    "claude-community",
    "anthropic-marketplace",
    "anthropic-plugins",
    "agent-skills",
    "anthropic-agent-skills",
    "knowledge-work-plugins",
    "life-sciences",
    "claude-for-legal",
    "claude-for-financial-services",
    "financial-services-plugins",
    "first-party-plugins",
    "healthcare",
];

const TOP_KEYS: &[&str] = &[
    "$schema",
    "name",
    "owner",
    "plugins",
    "description",
    "version",
    "metadata",
    "allowCrossMarketplaceDependenciesOn",
    "renames",
];

/// Whether `name` is reserved (exact, or an impersonation such as `official-claude-plugins`).
pub fn is_reserved_name(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    RESERVED_NAMES.contains(&n.as_str())
        || (n.contains("anthropic") && (n.contains("plugin") || n.contains("marketplace")))
        || (n.contains("claude") && n.contains("official"))
}

/// Where a plugin's files come from (marketplace entry `source`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "source", rename_all = "kebab-case")]
pub enum PluginSource {
    /// A path inside the marketplace, relative to its root (`""` = the root itself).
    #[serde(rename = "relative")]
    Relative {
        /// Normalised relative path, without `./`.
        path: String,
    },
    /// `github`: cloned from `https://github.com/<repo>.git`.
    Github {
        /// `owner/repo`.
        repo: String,
        /// Branch or tag.
        #[serde(rename = "ref", skip_serializing_if = "Option::is_none")]
        git_ref: Option<String>,
        /// Commit pin (wins over `ref`).
        #[serde(skip_serializing_if = "Option::is_none")]
        sha: Option<String>,
    },
    /// `url`: any git URL.
    Url {
        /// The git URL.
        url: String,
        /// Branch or tag.
        #[serde(rename = "ref", skip_serializing_if = "Option::is_none")]
        git_ref: Option<String>,
        /// Commit pin.
        #[serde(skip_serializing_if = "Option::is_none")]
        sha: Option<String>,
    },
    /// `git-subdir`: one folder of a git repository (sparse checkout).
    GitSubdir {
        /// The git URL (or `owner/repo`).
        url: String,
        /// Folder inside the repository.
        path: String,
        /// Branch or tag.
        #[serde(rename = "ref", skip_serializing_if = "Option::is_none")]
        git_ref: Option<String>,
        /// Commit pin.
        #[serde(skip_serializing_if = "Option::is_none")]
        sha: Option<String>,
    },
    /// `oci`: an artifact in an OCI registry (`warden plugin publish`), pulled and verified by
    /// [`warden_distribution`]; `ref` is `HOST[:PORT]/REPO:TAG`, resolved again by `update`
    /// unless `digest` pins the manifest.
    Oci {
        /// `HOST[:PORT]/REPO[:TAG]`.
        #[serde(rename = "ref")]
        reference: String,
        /// `sha256:<hex>` of the manifest.
        #[serde(skip_serializing_if = "Option::is_none")]
        digest: Option<String>,
    },
    /// `npm`, `archive`, `command`: recognised but not installable by Warden yet.
    Unsupported {
        /// The source type.
        kind: String,
    },
}

impl PluginSource {
    /// The git URL to clone, for git-backed sources.
    pub fn git_url(&self) -> Option<String> {
        match self {
            PluginSource::Github { repo, .. } => Some(github_url(repo)),
            PluginSource::Url { url, .. } => Some(url.clone()),
            PluginSource::GitSubdir { url, .. } => Some(if looks_like_owner_repo(url) {
                github_url(url)
            } else {
                url.clone()
            }),
            _ => None,
        }
    }

    /// `(ref, sha)` for git-backed sources.
    pub fn git_pin(&self) -> (Option<&str>, Option<&str>) {
        match self {
            PluginSource::Github { git_ref, sha, .. }
            | PluginSource::Url { git_ref, sha, .. }
            | PluginSource::GitSubdir { git_ref, sha, .. } => (git_ref.as_deref(), sha.as_deref()),
            _ => (None, None),
        }
    }
}

/// `https://github.com/<owner/repo>.git`.
pub fn github_url(repo: &str) -> String {
    format!("https://github.com/{}.git", repo.trim_end_matches(".git"))
}

/// `owner/repo` (no scheme, exactly one slash, no spaces).
pub fn looks_like_owner_repo(s: &str) -> bool {
    let mut parts = s.split('/');
    let (Some(o), Some(r), None) = (parts.next(), parts.next(), parts.next()) else {
        return false;
    };
    let ok = |p: &str| {
        !p.is_empty()
            && p != "."
            && p != ".."
            && p.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    };
    ok(o) && ok(r) && !s.contains(':')
}

/// One plugin entry of a marketplace.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MarketplaceEntry {
    /// Entry name: the `name` in `name@marketplace`.
    pub name: String,
    /// Where its files come from.
    pub source: PluginSource,
    /// `strict` (default true).
    pub strict: bool,
    /// Entry version (plugin.json `version` wins).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Description.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Warden extension: expected sha256 of the plugin tree (see [`crate::digest`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    /// The whole entry object (plugin.json fields for the strict merge live here).
    pub raw: Map<String, Value>,
}

/// Owner of a marketplace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Owner {
    /// Name.
    pub name: String,
    /// E-mail.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
}

/// A parsed marketplace.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Marketplace {
    /// Marketplace name (the part after `@`).
    pub name: String,
    /// Owner (required by the schema; `None` when missing, with an error diagnostic).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub owner: Option<Owner>,
    /// Description (top level or `metadata.description`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Root directory (the one holding `.claude-plugin/`).
    pub root: PathBuf,
    /// The valid entries.
    pub plugins: Vec<MarketplaceEntry>,
    /// `renames`: old name → new name (or removed).
    pub renames: BTreeMap<String, Option<String>>,
    /// Entries that name a plugin but cannot be used (a source folder that does not exist,
    /// a bad source, …): entry name → the error, as `validate` reports it.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub unusable: BTreeMap<String, String>,
}

impl Marketplace {
    /// The entry called `name`.
    pub fn entry(&self, name: &str) -> Option<&MarketplaceEntry> {
        self.plugins.iter().find(|e| e.name == name)
    }

    /// Absolute directory of a relative-source entry.
    pub fn entry_dir(&self, e: &MarketplaceEntry) -> Option<PathBuf> {
        match &e.source {
            PluginSource::Relative { path } if path.is_empty() => Some(self.root.clone()),
            PluginSource::Relative { path } => Some(self.root.join(path)),
            _ => None,
        }
    }
}

/// Reads `<dir>/.claude-plugin/marketplace.json`. `None` when it is missing or unusable
/// (the diagnostics say why).
pub fn load_marketplace(dir: &Path, diags: &mut Vec<Diagnostic>) -> Option<Marketplace> {
    let file = dir.join(MARKETPLACE_FILE);
    let text = match read_limited(&file, MAX_MARKETPLACE_BYTES) {
        Ok(t) => t,
        Err(e) => {
            diags.push(Diagnostic::error(
                &file,
                format!(
                    "cannot read marketplace file: {e}; a marketplace needs {MARKETPLACE_FILE}"
                ),
            ));
            return None;
        }
    };
    let root = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    parse_marketplace(&text, &file, &root, diags)
}

/// Parses marketplace text; `root` resolves relative sources.
pub fn parse_marketplace(
    text: &str,
    file: &Path,
    root: &Path,
    diags: &mut Vec<Diagnostic>,
) -> Option<Marketplace> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let pos = |k: &str| locate_key(text, k);
    let value: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            diags.push(
                Diagnostic::error(file, format!("invalid JSON: {}", strip_pos(&e.to_string())))
                    .at(Some((e.line(), e.column()))),
            );
            return None;
        }
    };
    let Value::Object(top) = value else {
        diags.push(Diagnostic::error(
            file,
            "a marketplace file must be a JSON object with `name`, `owner` and `plugins`",
        ));
        return None;
    };
    let start = diags.len();
    for k in top.keys() {
        if !TOP_KEYS.contains(&k.as_str()) {
            let hint = did_you_mean(k, TOP_KEYS)
                .map(|s| format!(" (did you mean `{s}`?)"))
                .unwrap_or_default();
            diags.push(
                Diagnostic::warning(file, format!("unknown key `{k}` is ignored{hint}")).at(pos(k)),
            );
        }
    }
    let name = match top.get("name") {
        Some(Value::String(n)) if n.contains(char::is_whitespace) => {
            diags.push(
                Diagnostic::error(
                    file,
                    format!("name: Marketplace name cannot contain spaces (`{n}`); use kebab-case"),
                )
                .at(pos("name")),
            );
            None
        }
        Some(Value::String(n)) if check_path_name(n).is_err() => {
            let reason = check_path_name(n).err().unwrap_or_default();
            diags.push(
                Diagnostic::error(
                    file,
                    format!("field \"name\": marketplace name `{n}` {reason}; it names a directory, so use kebab-case"),
                )
                .at(pos("name")),
            );
            None
        }
        Some(Value::String(n)) => {
            if !is_kebab(n) {
                diags.push(
                    Diagnostic::warning(file, format!("marketplace name `{n}` is not kebab-case"))
                        .at(pos("name")),
                );
            }
            if is_reserved_name(n) {
                diags.push(Diagnostic::warning(file, format!("marketplace name `{n}` is reserved for github.com/anthropics; adding it from elsewhere is refused unless reserved names are allowed")).at(pos("name")));
            }
            Some(n.clone())
        }
        Some(other) => {
            diags.push(
                Diagnostic::error(
                    file,
                    format!("name: expected a string, found {}", json_type_name(other)),
                )
                .at(pos("name")),
            );
            None
        }
        None => {
            diags.push(Diagnostic::error(
                file,
                "name: required; add \"name\": \"my-marketplace\"",
            ));
            None
        }
    };
    let owner = match top.get("owner") {
        Some(Value::Object(o)) => match o.get("name").and_then(Value::as_str) {
            Some(n) => Some(Owner {
                name: n.to_string(),
                email: o.get("email").and_then(Value::as_str).map(str::to_string),
            }),
            None => {
                diags.push(Diagnostic::error(file, "owner.name: required string").at(pos("owner")));
                None
            }
        },
        Some(other) => {
            diags.push(
                Diagnostic::error(
                    file,
                    format!(
                        "owner: Invalid input: expected object, received {}",
                        json_type_name(other)
                    ),
                )
                .at(pos("owner")),
            );
            None
        }
        None => {
            diags.push(Diagnostic::error(file, "owner: Invalid input: expected object, received undefined; add \"owner\": {\"name\": \"...\"}"));
            None
        }
    };
    let meta = top.get("metadata").and_then(Value::as_object);
    let description = top
        .get("description")
        .or_else(|| meta.and_then(|m| m.get("description")))
        .and_then(Value::as_str)
        .map(str::to_string);
    let plugin_root = meta
        .and_then(|m| m.get("pluginRoot"))
        .and_then(Value::as_str)
        .map(|s| s.trim_start_matches("./").trim_end_matches('/').to_string());
    let mut renames = BTreeMap::new();
    match top.get("renames") {
        None => {}
        Some(Value::Object(r)) => {
            for (k, v) in r {
                match v {
                    Value::String(s) => {
                        renames.insert(k.clone(), Some(s.clone()));
                    }
                    Value::Null => {
                        renames.insert(k.clone(), None);
                    }
                    other => diags.push(
                        Diagnostic::error(
                            file,
                            format!(
                                "renames.{k}: expected a string or null, found {}",
                                json_type_name(other)
                            ),
                        )
                        .at(pos(k)),
                    ),
                }
            }
            for k in renames.keys() {
                let mut seen = BTreeSet::new();
                let mut cur = k.clone();
                while let Some(Some(next)) = renames.get(&cur) {
                    if !seen.insert(cur.clone()) {
                        diags.push(
                            Diagnostic::error(
                                file,
                                format!("renames: the chain starting at `{k}` has a cycle"),
                            )
                            .at(pos("renames")),
                        );
                        break;
                    }
                    cur = next.clone();
                }
            }
        }
        Some(other) => diags.push(
            Diagnostic::error(
                file,
                format!(
                    "renames: expected an object, found {}",
                    json_type_name(other)
                ),
            )
            .at(pos("renames")),
        ),
    }
    let mut plugins = Vec::new();
    let mut unusable = BTreeMap::new();
    match top.get("plugins") {
        Some(Value::Array(items)) => {
            let mut seen = BTreeSet::new();
            for (i, item) in items.iter().enumerate() {
                let before = diags.len();
                let parsed = parse_entry(i, item, file, text, root, plugin_root.as_deref(), diags);
                if parsed.is_none()
                    && let Some(n) = item.get("name").and_then(Value::as_str)
                    && let Some(d) = diags[before..].iter().find(|d| d.is_error())
                {
                    let prefix = format!("plugins[{i}] ({n}): ");
                    let reason = d.message.strip_prefix(&prefix).unwrap_or(&d.message);
                    unusable.insert(n.to_string(), reason.to_string());
                }
                if let Some(e) = parsed {
                    if !seen.insert(e.name.clone()) {
                        let at = find_value(text, &format!("name\": \"{}", e.name), 1);
                        diags.push(Diagnostic::error(file, format!("plugins[{i}]: duplicate plugin name `{}`; entry names must be unique", e.name)).at(at));
                        continue;
                    }
                    plugins.push(e);
                }
            }
        }
        Some(other) => diags.push(
            Diagnostic::error(
                file,
                format!(
                    "plugins: expected an array, found {}",
                    json_type_name(other)
                ),
            )
            .at(pos("plugins")),
        ),
        None => {
            let hint = if top.contains_key("agents") {
                " (this file holds `agents`: it is not a marketplace)"
            } else {
                ""
            };
            diags.push(Diagnostic::error(
                file,
                format!("plugins: required array of plugin entries is missing{hint}"),
            ));
        }
    }
    let fatal = diags[start..]
        .iter()
        .any(|d| d.is_error() && !d.message.starts_with("plugins["));
    let name = name?;
    if fatal {
        return None;
    }
    Some(Marketplace {
        name,
        owner,
        description,
        root: root.to_path_buf(),
        plugins,
        renames,
        unusable,
    })
}

fn strip_pos(msg: &str) -> String {
    match msg.rfind(" at line ") {
        Some(i) => msg[..i].to_string(),
        None => msg.to_string(),
    }
}

fn is_hex(s: &str, len: usize) -> bool {
    s.len() == len && s.chars().all(|c| c.is_ascii_hexdigit())
}

fn parse_entry(
    i: usize,
    item: &Value,
    file: &Path,
    text: &str,
    root: &Path,
    plugin_root: Option<&str>,
    diags: &mut Vec<Diagnostic>,
) -> Option<MarketplaceEntry> {
    let Value::Object(o) = item else {
        diags.push(Diagnostic::error(
            file,
            format!(
                "plugins[{i}]: expected an object, found {}",
                json_type_name(item)
            ),
        ));
        return None;
    };
    let Some(name) = o
        .get("name")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
    else {
        diags.push(Diagnostic::error(
            file,
            format!("plugins[{i}]: `name` is required"),
        ));
        return None;
    };
    let pos = find_value(text, &format!("name\": \"{name}"), 0);
    let err = |diags: &mut Vec<Diagnostic>, msg: String| {
        diags.push(Diagnostic::error(file, format!("plugins[{i}] ({name}): {msg}")).at(pos))
    };
    if let Err(reason) = check_path_name(name) {
        err(
            diags,
            format!(
                "field \"name\": `{name}` {reason}; an entry name names a directory, so use kebab-case"
            ),
        );
        return None;
    }
    let source = match o.get("source") {
        None => {
            err(diags, "`source` is required".into());
            return None;
        }
        Some(Value::String(s)) => {
            if has_parent_segment(s) {
                err(
                    diags,
                    format!(
                        "source `{s}` contains `..`; relative sources must stay inside the marketplace"
                    ),
                );
                return None;
            }
            let trimmed = s.trim_start_matches("./").trim_end_matches('/');
            let rel =
                if matches!(s.as_str(), "." | "./" | "./.") || trimmed == "." || trimmed.is_empty()
                {
                    String::new()
                } else if s.starts_with("./") {
                    // `metadata.pluginRoot` applies to bare names only.
                    trimmed.to_string()
                } else {
                    match plugin_root {
                        Some(pr) if !pr.is_empty() && pr != "." => format!("{pr}/{trimmed}"),
                        _ => trimmed.to_string(),
                    }
                };
            let dir = if rel.is_empty() {
                root.to_path_buf()
            } else {
                root.join(&rel)
            };
            if dir.is_file() || rel.ends_with(".md") {
                err(
                    diags,
                    format!("source `{s}` is a file; a plugin source must be a directory"),
                );
                return None;
            }
            if !dir.is_dir() {
                err(
                    diags,
                    format!(
                        "source directory {} does not exist (a git submodule that was not checked out?)",
                        dir.display()
                    ),
                );
                return None;
            }
            match dir.canonicalize() {
                Ok(c) if !c.starts_with(root) => {
                    err(
                        diags,
                        format!(
                            "source `{s}` resolves to {}, outside the marketplace",
                            c.display()
                        ),
                    );
                    return None;
                }
                _ => {}
            }
            PluginSource::Relative { path: rel }
        }
        Some(Value::Object(src)) => {
            let s = |k: &str| src.get(k).and_then(Value::as_str).map(str::to_string);
            let sha = s("sha");
            if let Some(sha) = &sha
                && !is_hex(sha, 40)
            {
                err(
                    diags,
                    format!("source.sha `{sha}` must be a full 40-character commit hash"),
                );
                return None;
            }
            let git_ref = s("ref");
            match s("source").as_deref() {
                Some("github") => match s("repo") {
                    Some(repo) if looks_like_owner_repo(&repo) => {
                        PluginSource::Github { repo, git_ref, sha }
                    }
                    _ => {
                        err(diags, "github source needs `repo` as \"owner/repo\"".into());
                        return None;
                    }
                },
                Some("url") => match s("url") {
                    Some(url) if !url.is_empty() => PluginSource::Url { url, git_ref, sha },
                    _ => {
                        err(diags, "url source needs a git `url`".into());
                        return None;
                    }
                },
                Some("git-subdir") => match (s("url"), s("path")) {
                    (Some(url), Some(path)) if !has_parent_segment(&path) => {
                        PluginSource::GitSubdir {
                            url,
                            path: path
                                .trim_start_matches("./")
                                .trim_end_matches('/')
                                .to_string(),
                            git_ref,
                            sha,
                        }
                    }
                    _ => {
                        err(
                            diags,
                            "git-subdir source needs `url` and a `path` without `..`".into(),
                        );
                        return None;
                    }
                },
                Some("oci") => {
                    let digest = s("digest");
                    if let Some(d) = &digest
                        && !d.strip_prefix("sha256:").is_some_and(|h| is_hex(h, 64))
                    {
                        err(
                            diags,
                            format!("oci source.digest `{d}` must be sha256: and 64 hex digits"),
                        );
                        return None;
                    }
                    match git_ref {
                        Some(reference) => {
                            match warden_distribution::ArtifactRef::parse(&reference) {
                                Ok(_) => PluginSource::Oci { reference, digest },
                                Err(e) => {
                                    err(diags, format!("oci source.ref {e}"));
                                    return None;
                                }
                            }
                        }
                        None => {
                            err(diags, "oci source needs `ref` as \"HOST/REPO:TAG\"".into());
                            return None;
                        }
                    }
                }
                Some(k @ ("npm" | "archive" | "command")) => {
                    if k == "archive" && s("sha256").is_some_and(|h| !is_hex(&h, 64)) {
                        err(
                            diags,
                            "archive source.sha256 must be 64 hex characters".into(),
                        );
                        return None;
                    }
                    PluginSource::Unsupported {
                        kind: k.to_string(),
                    }
                }
                Some(other) => {
                    err(
                        diags,
                        format!(
                            "unknown source type `{other}`; use github, url, git-subdir, oci, npm, archive or command"
                        ),
                    );
                    return None;
                }
                None => {
                    err(diags, "source object needs a `source` type".into());
                    return None;
                }
            }
        }
        Some(other) => {
            err(
                diags,
                format!(
                    "`source` must be a relative path or a source object, found {}",
                    json_type_name(other)
                ),
            );
            return None;
        }
    };
    let strict = match o.get("strict") {
        None => true,
        Some(Value::Bool(b)) => *b,
        Some(other) => {
            err(
                diags,
                format!(
                    "`strict` must be a boolean, found {}",
                    json_type_name(other)
                ),
            );
            return None;
        }
    };
    let sha256 = match o.get("sha256") {
        None => None,
        Some(Value::String(h)) if is_hex(h, 64) => Some(h.to_ascii_lowercase()),
        Some(other) => {
            err(
                diags,
                format!(
                    "`sha256` must be 64 hex characters (the plugin tree digest), found {other}"
                ),
            );
            return None;
        }
    };
    Some(MarketplaceEntry {
        name: name.to_string(),
        source,
        strict,
        version: o.get("version").and_then(Value::as_str).map(str::to_string),
        description: o
            .get("description")
            .and_then(Value::as_str)
            .map(str::to_string),
        sha256,
        raw: o.clone(),
    })
}

/// Position of the `nth` (0-based) occurrence of `"<needle>"`, written with or without a space
/// after the colon.
fn find_value(text: &str, needle: &str, nth: usize) -> Option<(usize, usize)> {
    for n in [needle.to_string(), needle.replace("\": \"", "\":\"")] {
        let pat = format!("\"{n}\"");
        if let Some((i, _)) = text.match_indices(&pat).nth(nth) {
            return Some(crate::util::line_col(text, i));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owner_repo() {
        assert!(looks_like_owner_repo("anthropics/skills"));
        assert!(!looks_like_owner_repo("https://x/y"));
        assert!(!looks_like_owner_repo("./a/b"));
        assert!(is_reserved_name("claude-plugins-official"));
        assert!(is_reserved_name("official-claude-plugins"));
        assert!(!is_reserved_name("demo-mkt"));
    }
}
