//! `.claude-plugin/plugin.json`: the typed manifest and its schema checks.
//!
//! Only `name` is required. Unknown top-level keys are ignored with a warning that suggests the
//! closest known key; a known key with the wrong type fails the load (except `metadata` and
//! `experimental`, which only warn), as Claude Code documents.
//!
//! Choices where Claude Code's docs are silent:
//! * `commands` given as an object map `{"name": {"source": "./x.md", ...}}` (an older shape not in
//!   the current schema) is accepted: each `source` is read as a path, with a warning.
//! * `author` may be a string (treated as `{"name": ...}`), `repository` a string or an object.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::diag::Diagnostic;
use crate::util::{did_you_mean, has_parent_segment, is_kebab, locate_key};
use warden_config::json_type_name;

/// Every top-level key of `plugin.json` Warden knows (Claude Code's plus `warden`).
pub const KNOWN_KEYS: &[&str] = &[
    "$schema",
    "name",
    "displayName",
    "version",
    "description",
    "author",
    "homepage",
    "repository",
    "license",
    "keywords",
    "metadata",
    "defaultEnabled",
    "skills",
    "commands",
    "agents",
    "workflows",
    "hooks",
    "mcpServers",
    "lspServers",
    "outputStyles",
    "experimental",
    "themes",
    "monitors",
    "userConfig",
    "channels",
    "dependencies",
    "settings",
    // What the plugin reaches and its privacy policy: Claude Code's validator asks for both
    // from a plugin with HTTP hooks or remote servers.
    "network",
    "privacyPolicyUrl",
    "warden",
];

/// Keys that declare components (used for the `strict: false` conflict check).
pub const COMPONENT_KEYS: &[&str] = &[
    "skills",
    "commands",
    "agents",
    "workflows",
    "hooks",
    "mcpServers",
    "lspServers",
    "outputStyles",
    "experimental",
    "themes",
    "monitors",
];

/// `author`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Author {
    /// Name.
    pub name: String,
    /// E-mail.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
    /// URL.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}

/// A component field: paths (a string or an array, normalised to a list) or an inline value.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum ComponentSpec {
    /// Relative paths (`./…`), each a file or a directory.
    Paths(Vec<String>),
    /// An inline object (hooks, mcpServers, lspServers) or array (monitors).
    Inline(Value),
}

/// One `userConfig` option.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UserConfigOption {
    /// `string` | `number` | `boolean` | `directory` | `file`.
    #[serde(rename = "type")]
    pub kind: String,
    /// Title shown when prompting.
    pub title: String,
    /// Description shown when prompting.
    pub description: String,
    /// Stored outside settings files when true.
    #[serde(default)]
    pub sensitive: bool,
    /// Must be given at enable.
    #[serde(default)]
    pub required: bool,
    /// Default value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default: Option<Value>,
    /// String arrays allowed.
    #[serde(default)]
    pub multiple: bool,
    /// Minimum (numbers).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min: Option<f64>,
    /// Maximum (numbers).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max: Option<f64>,
}

/// One `dependencies` item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Dependency {
    /// Plugin name.
    pub name: String,
    /// npm-style semver range.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Marketplace (default: the same one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub marketplace: Option<String>,
}

/// One `channels` item.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Channel {
    /// Key of the plugin's `mcpServers`.
    pub server: String,
    /// Channel-specific user config.
    #[serde(rename = "userConfig", skip_serializing_if = "Option::is_none")]
    pub user_config: Option<Value>,
}

/// A parsed `plugin.json` (or the plugin-definition part of a marketplace entry).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PluginManifest {
    /// Namespace prefix of every component.
    pub name: String,
    /// UI name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
    /// Version; pins updates and names the cache directory.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Description.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Author.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub author: Option<Author>,
    /// Homepage.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub homepage: Option<String>,
    /// Repository (string or `{type, url}`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repository: Option<Value>,
    /// License.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub license: Option<String>,
    /// Keywords.
    pub keywords: Vec<String>,
    /// Enabled when installed (default true).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default_enabled: Option<bool>,
    /// Extra skill paths (added to the default `skills/` scan).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skills: Option<Vec<String>>,
    /// Command paths (replace `commands/`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commands: Option<Vec<String>>,
    /// Agent paths (replace `agents/`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agents: Option<Vec<String>>,
    /// Workflow paths (replace `workflows/`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workflows: Option<Vec<String>>,
    /// Output-style paths (replace `output-styles/`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_styles: Option<Vec<String>>,
    /// Hooks: paths or inline.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hooks: Option<ComponentSpec>,
    /// MCP servers: paths or inline.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mcp_servers: Option<ComponentSpec>,
    /// LSP servers: paths or inline.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lsp_servers: Option<ComponentSpec>,
    /// Themes (`experimental.themes`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub themes: Option<Vec<String>>,
    /// Monitors (`experimental.monitors`): paths or an inline array.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub monitors: Option<ComponentSpec>,
    /// `userConfig` options by key.
    pub user_config: BTreeMap<String, UserConfigOption>,
    /// Channels.
    pub channels: Vec<Channel>,
    /// Dependencies.
    pub dependencies: Vec<Dependency>,
    /// `settings` object (overridden by a root `settings.json`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub settings: Option<Map<String, Value>>,
    /// The raw `warden` key (see [`crate::warden`] for the typed form).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warden: Option<Value>,
}

impl PluginManifest {
    /// A manifest with only a name (plugins without `plugin.json`).
    pub fn named(name: impl Into<String>) -> Self {
        PluginManifest {
            name: name.into(),
            ..Default::default()
        }
    }
}

/// Whether a manifest map declares any component field.
pub fn declares_components(map: &Map<String, Value>) -> bool {
    COMPONENT_KEYS.iter().any(|k| map.contains_key(*k))
}

/// Where the fields being parsed come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ManifestSource {
    /// `plugin.json`: unknown keys warn, `name` required.
    PluginJson,
    /// A marketplace entry: extra keys are normal and silent.
    MarketplaceEntry,
}

/// Parses manifest fields from `map`. Errors that fail the load are pushed as error diagnostics
/// and make the result `None`; everything else is a warning.
pub(crate) fn parse_manifest(
    map: &Map<String, Value>,
    file: &Path,
    text: Option<&str>,
    source: ManifestSource,
    diags: &mut Vec<Diagnostic>,
) -> Option<PluginManifest> {
    let pos = |k: &str| text.and_then(|t| locate_key(t, k));
    let start = diags.len();
    let fatal = |diags: &mut Vec<Diagnostic>, key: &str, msg: String| {
        diags.push(Diagnostic::error(file, msg).at(pos(key)));
    };
    let mut m = PluginManifest::default();

    if source == ManifestSource::PluginJson {
        for k in map.keys() {
            if !KNOWN_KEYS.contains(&k.as_str()) {
                let hint = did_you_mean(k, KNOWN_KEYS)
                    .map(|s| format!(" (did you mean `{s}`?)"))
                    .unwrap_or_default();
                diags.push(
                    Diagnostic::warning(file, format!("unknown key `{k}` is ignored{hint}"))
                        .at(pos(k)),
                );
            }
        }
    }
    match map.get("name") {
        Some(Value::String(s)) if !s.trim().is_empty() => {
            if s.contains(char::is_whitespace) {
                // Claude Code 2.1.332 refuses such a plugin: "Plugin name cannot contain spaces".
                diags.push(
                    Diagnostic::error(
                        file,
                        format!("name: Plugin name cannot contain spaces (`{s}`); use kebab-case, e.g. `{}`",
                            s.split_whitespace().collect::<Vec<_>>().join("-").to_lowercase()),
                    )
                    .at(pos("name")),
                );
            } else if !is_kebab(s) {
                diags.push(
                    Diagnostic::warning(file, format!("name `{s}` is not kebab-case (lowercase letters, digits and hyphens); claude.ai sync rejects such names"))
                        .at(pos("name")),
                );
            }
            m.name = s.clone();
        }
        Some(Value::String(_)) | None => {
            fatal(
                diags,
                "name",
                "`name` is required: add \"name\": \"my-plugin\" (kebab-case)".into(),
            );
        }
        Some(other) => fatal(
            diags,
            "name",
            format!("`name` must be a string, found {}", json_type_name(other)),
        ),
    }
    let string = |diags: &mut Vec<Diagnostic>, key: &str| -> Option<String> {
        match map.get(key) {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(other) => {
                fatal(
                    diags,
                    key,
                    format!("`{key}` must be a string, found {}", json_type_name(other)),
                );
                None
            }
        }
    };
    m.display_name = string(diags, "displayName");
    m.version = string(diags, "version");
    m.description = string(diags, "description");
    m.homepage = string(diags, "homepage");
    m.license = string(diags, "license");
    if let Some(v) = &m.version
        && !is_semver(v)
    {
        diags.push(
            Diagnostic::warning(
                file,
                format!("version `{v}` is not semantic versioning (MAJOR.MINOR.PATCH)"),
            )
            .at(pos("version")),
        );
    }
    match map.get("author") {
        None | Some(Value::Null) => {}
        Some(Value::String(s)) => {
            m.author = Some(Author {
                name: s.clone(),
                ..Default::default()
            })
        }
        Some(Value::Object(a)) => match a.get("name") {
            Some(Value::String(n)) => {
                m.author = Some(Author {
                    name: n.clone(),
                    email: a.get("email").and_then(Value::as_str).map(str::to_string),
                    url: a.get("url").and_then(Value::as_str).map(str::to_string),
                })
            }
            _ => fatal(
                diags,
                "author",
                "`author.name` is required and must be a string".into(),
            ),
        },
        Some(other) => fatal(
            diags,
            "author",
            format!(
                "`author` must be an object {{name, email?, url?}}, found {}",
                json_type_name(other)
            ),
        ),
    }
    match map.get("repository") {
        None | Some(Value::Null) => {}
        Some(v @ (Value::String(_) | Value::Object(_))) => m.repository = Some(v.clone()),
        Some(other) => fatal(
            diags,
            "repository",
            format!(
                "`repository` must be a string, found {}",
                json_type_name(other)
            ),
        ),
    }
    match map.get("keywords") {
        None | Some(Value::Null) => {}
        Some(Value::Array(a)) if a.iter().all(Value::is_string) => {
            m.keywords = a
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        }
        Some(other) => fatal(
            diags,
            "keywords",
            format!(
                "`keywords` must be an array of strings, found {}",
                json_type_name(other)
            ),
        ),
    }
    match map.get("metadata") {
        None | Some(Value::Object(_)) => {}
        Some(other) => diags.push(
            Diagnostic::warning(
                file,
                format!(
                    "`metadata` should be an object, found {}; it is ignored",
                    json_type_name(other)
                ),
            )
            .at(pos("metadata")),
        ),
    }
    match map.get("defaultEnabled") {
        None | Some(Value::Null) => {}
        Some(Value::Bool(b)) => m.default_enabled = Some(*b),
        Some(other) => fatal(
            diags,
            "defaultEnabled",
            format!(
                "`defaultEnabled` must be a boolean, found {}",
                json_type_name(other)
            ),
        ),
    }
    let paths = |diags: &mut Vec<Diagnostic>,
                 key: &str,
                 v: &Value,
                 allow_dot: bool|
     -> Option<Vec<String>> {
        let items: Vec<&Value> = match v {
            Value::String(_) => vec![v],
            Value::Array(a) => a.iter().collect(),
            Value::Object(o) if key == "commands" => {
                diags.push(
                    Diagnostic::warning(file, "`commands` as an object map is not in the current schema; each entry's `source` is read as a path. Use an array of paths instead")
                        .at(pos(key)),
                );
                let mut out = Vec::new();
                for (name, e) in o {
                    match e.get("source").and_then(Value::as_str) {
                        Some(s) => out.push(Value::String(s.to_string())),
                        None => fatal(
                            diags,
                            key,
                            format!("`commands.{name}` needs a `source` path"),
                        ),
                    }
                }
                return Some(
                    out.iter()
                        .filter_map(Value::as_str)
                        .filter_map(|s| check_rel_path(key, s, false, file, pos(key), diags))
                        .collect(),
                );
            }
            other => {
                fatal(
                    diags,
                    key,
                    format!(
                        "`{key}` must be a path string or an array of path strings, found {}",
                        json_type_name(other)
                    ),
                );
                return None;
            }
        };
        let mut out = Vec::new();
        for it in items {
            match it.as_str() {
                Some(s) => {
                    if let Some(p) = check_rel_path(key, s, allow_dot, file, pos(key), diags) {
                        out.push(p)
                    }
                }
                None => fatal(
                    diags,
                    key,
                    format!(
                        "items of `{key}` must be path strings, found {}",
                        json_type_name(it)
                    ),
                ),
            }
        }
        Some(out)
    };
    let path_or_inline = |diags: &mut Vec<Diagnostic>,
                          key: &str,
                          v: &Value,
                          inline_array: bool|
     -> Option<ComponentSpec> {
        match v {
            Value::Object(_) => Some(ComponentSpec::Inline(v.clone())),
            Value::Array(a) if inline_array && a.iter().any(Value::is_object) => {
                Some(ComponentSpec::Inline(v.clone()))
            }
            _ => paths(diags, key, v, false).map(ComponentSpec::Paths),
        }
    };
    let mut list =
        |key: &str, skills: bool| map.get(key).and_then(|v| paths(diags, key, v, skills));
    m.skills = list("skills", true);
    m.commands = list("commands", false);
    m.agents = list("agents", false);
    m.workflows = list("workflows", false);
    m.output_styles = list("outputStyles", false);
    let mut spec = |key: &str| {
        map.get(key)
            .and_then(|v| path_or_inline(diags, key, v, false))
    };
    m.hooks = spec("hooks");
    m.mcp_servers = spec("mcpServers");
    m.lsp_servers = spec("lspServers");
    match map.get("experimental") {
        None => {}
        Some(Value::Object(x)) => {
            if let Some(v) = x.get("themes") {
                m.themes = paths(diags, "experimental.themes", v, false);
            }
            if let Some(v) = x.get("monitors") {
                m.monitors = path_or_inline(diags, "experimental.monitors", v, true);
            }
        }
        Some(other) => diags.push(
            Diagnostic::warning(
                file,
                format!(
                    "`experimental` should be an object, found {}; it is ignored",
                    json_type_name(other)
                ),
            )
            .at(pos("experimental")),
        ),
    }
    for key in ["themes", "monitors"] {
        if let Some(v) = map.get(key) {
            diags.push(
                Diagnostic::warning(
                    file,
                    format!("top-level `{key}` is deprecated: move it under `experimental.{key}`"),
                )
                .at(pos(key)),
            );
            if key == "themes" && m.themes.is_none() {
                m.themes = paths(diags, key, v, false);
            } else if key == "monitors" && m.monitors.is_none() {
                m.monitors = path_or_inline(diags, key, v, true);
            }
        }
    }
    if let Some(v) = map.get("userConfig") {
        m.user_config = parse_user_config(v, file, &pos, diags);
    }
    match map.get("channels") {
        None => {}
        Some(Value::Array(a)) => {
            for c in a {
                match c.get("server").and_then(Value::as_str) {
                    Some(s) => m.channels.push(Channel { server: s.to_string(), user_config: c.get("userConfig").cloned() }),
                    None => fatal(diags, "channels", "each `channels` item needs a `server` string naming one of the plugin's mcpServers".into()),
                }
            }
        }
        Some(other) => fatal(
            diags,
            "channels",
            format!(
                "`channels` must be an array of {{server, userConfig?}}, found {}",
                json_type_name(other)
            ),
        ),
    }
    match map.get("dependencies") {
        None => {}
        Some(Value::Array(a)) => {
            for d in a {
                match d {
                    Value::String(s) => m.dependencies.push(Dependency {
                        name: s.clone(),
                        version: None,
                        marketplace: None,
                    }),
                    Value::Object(o) => match o.get("name").and_then(Value::as_str) {
                        Some(n) => m.dependencies.push(Dependency {
                            name: n.to_string(),
                            version: o.get("version").and_then(Value::as_str).map(str::to_string),
                            marketplace: o
                                .get("marketplace")
                                .and_then(Value::as_str)
                                .map(str::to_string),
                        }),
                        None => fatal(
                            diags,
                            "dependencies",
                            "a `dependencies` object needs a `name` string".into(),
                        ),
                    },
                    other => fatal(
                        diags,
                        "dependencies",
                        format!(
                            "`dependencies` items must be strings or {{name, version?, marketplace?}}, found {}",
                            json_type_name(other)
                        ),
                    ),
                }
            }
        }
        Some(other) => fatal(
            diags,
            "dependencies",
            format!(
                "`dependencies` must be an array, found {}",
                json_type_name(other)
            ),
        ),
    }
    match map.get("settings") {
        None => {}
        Some(Value::Object(o)) => m.settings = Some(o.clone()),
        Some(other) => fatal(
            diags,
            "settings",
            format!(
                "`settings` must be an object, found {}",
                json_type_name(other)
            ),
        ),
    }
    m.warden = map.get("warden").cloned();
    if diags[start..].iter().any(Diagnostic::is_error) {
        None
    } else {
        Some(m)
    }
}

/// Checks one component path: relative, starting with `./` (`skills` also accepts `.`), no `..`.
/// Returns it without the leading `./` and trailing `/` (`""` = the plugin root).
pub(crate) fn check_rel_path(
    key: &str,
    s: &str,
    allow_dot: bool,
    file: &Path,
    pos: Option<(usize, usize)>,
    diags: &mut Vec<Diagnostic>,
) -> Option<String> {
    if has_parent_segment(s) {
        diags.push(Diagnostic::error(file, format!("`{key}` path `{s}` contains `..`; component paths must stay inside the plugin root")).at(pos));
        return None;
    }
    if s.starts_with('/') || s.starts_with('\\') || (s.len() > 1 && s.as_bytes()[1] == b':') {
        diags.push(Diagnostic::error(file, format!("`{key}` path `{s}` is absolute; use a path relative to the plugin root starting with `./`")).at(pos));
        return None;
    }
    let is_dot = matches!(s, "." | "./" | "./.");
    if !(s.starts_with("./") || (allow_dot && is_dot)) {
        diags.push(
            Diagnostic::error(
                file,
                format!("`{key}` path `{s}` must start with `./` (write `./{s}`)"),
            )
            .at(pos),
        );
    }
    let t = s.trim_start_matches("./").trim_end_matches('/');
    Some(if is_dot || t == "." {
        String::new()
    } else {
        t.to_string()
    })
}

fn parse_user_config(
    v: &Value,
    file: &Path,
    pos: &dyn Fn(&str) -> Option<(usize, usize)>,
    diags: &mut Vec<Diagnostic>,
) -> BTreeMap<String, UserConfigOption> {
    let mut out = BTreeMap::new();
    let Value::Object(o) = v else {
        diags.push(
            Diagnostic::error(
                file,
                format!(
                    "`userConfig` must be an object of options, found {}",
                    json_type_name(v)
                ),
            )
            .at(pos("userConfig")),
        );
        return out;
    };
    const KEYS: &[&str] = &[
        "type",
        "title",
        "description",
        "sensitive",
        "required",
        "default",
        "multiple",
        "min",
        "max",
    ];
    for (key, opt) in o {
        let ident = key
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !ident {
            diags.push(
                Diagnostic::error(
                    file,
                    format!("userConfig key `{key}` must be an identifier (letters, digits, `_`)"),
                )
                .at(pos(key)),
            );
            continue;
        }
        let Value::Object(opt) = opt else {
            diags.push(
                Diagnostic::error(
                    file,
                    format!(
                        "userConfig `{key}` must be an object, found {}",
                        json_type_name(opt)
                    ),
                )
                .at(pos(key)),
            );
            continue;
        };
        let mut bad = false;
        for k in opt.keys() {
            if !KEYS.contains(&k.as_str()) {
                let hint = did_you_mean(k, KEYS)
                    .map(|s| format!(" (did you mean `{s}`?)"))
                    .unwrap_or_default();
                diags.push(
                    Diagnostic::error(
                        file,
                        format!(
                            "userConfig `{key}` has unknown field `{k}`{hint}; allowed: {}",
                            KEYS.join(", ")
                        ),
                    )
                    .at(pos(k)),
                );
                bad = true;
            }
        }
        let s = |k: &str| opt.get(k).and_then(Value::as_str).map(str::to_string);
        let kind = s("type");
        if !matches!(
            kind.as_deref(),
            Some("string" | "number" | "boolean" | "directory" | "file")
        ) {
            diags.push(Diagnostic::error(file, format!("userConfig `{key}` needs `type`: one of string, number, boolean, directory, file")).at(pos(key)));
            bad = true;
        }
        for req in ["title", "description"] {
            if s(req).is_none() {
                diags.push(
                    Diagnostic::error(file, format!("userConfig `{key}` needs a `{req}` string"))
                        .at(pos(key)),
                );
                bad = true;
            }
        }
        if bad {
            continue;
        }
        out.insert(
            key.clone(),
            UserConfigOption {
                kind: kind.unwrap_or_default(),
                title: s("title").unwrap_or_default(),
                description: s("description").unwrap_or_default(),
                sensitive: opt
                    .get("sensitive")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
                required: opt
                    .get("required")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
                default: opt.get("default").cloned(),
                multiple: opt
                    .get("multiple")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
                min: opt.get("min").and_then(Value::as_f64),
                max: opt.get("max").and_then(Value::as_f64),
            },
        );
    }
    out
}

/// Loose semver check: `MAJOR.MINOR.PATCH` with optional `-pre` and `+build`.
pub fn is_semver(v: &str) -> bool {
    let core = v.split(['-', '+']).next().unwrap_or("");
    let parts: Vec<&str> = core.split('.').collect();
    parts.len() == 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
}
