//! Changing the server configuration: what `warden mcp add`, `remove` and `approve` write.
//!
//! Each scope has one place ([`Place`]): local servers in `state.json` →
//! `projects["<cwd>"].mcpServers`, project servers in `<cwd>/.mcp.json`, user servers in
//! `state.json` → `mcpServers`, the places [`McpServers::load`](super::McpServers::load) reads.
//! A file is read whole, changed in memory and written to a temporary file next to it that is
//! then renamed over it, so a reader sees the old file or the new one and never half of either.
//! Other keys keep their order and values; the file is written as two-space indented JSON,
//! as Claude Code writes `.mcp.json` and `~/.claude.json`.
//!
//! A `.mcp.json` that is a symbolic link is neither read nor written here: it may point out of
//! the project (at the user's state file, say), and a command that edits "the project's server
//! list" must not change another file.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::{
    APPROVED_KEY, DISABLED_KEY, MAX_STATE_BYTES, McpScope, PROJECT_FILE, check_entry,
    definition_digest, project_keys,
};
use crate::{ConfigError, Home, MAX_SETTINGS_BYTES, json_type_name};

/// Errors changing the configuration. Each names the file, the server or the input, and why.
#[derive(Debug, thiserror::Error)]
pub enum EditError {
    /// A server name that tools cannot be named after.
    #[error(
        "invalid server name `{name}`: {reason}; names may contain only letters, digits, `-` and `_`"
    )]
    Name {
        /// The name as given.
        name: String,
        /// What is wrong with it.
        reason: String,
    },
    /// Unusable command-line input: a header, a variable, a URL, a transport.
    #[error("{0}")]
    Input(String),
    /// The new entry fails [`check_entry`].
    #[error("MCP server `{name}`: {field}: {message}")]
    Entry {
        /// The server.
        name: String,
        /// The field, as in [`EntryProblem::field`](super::EntryProblem::field).
        field: String,
        /// What is wrong.
        message: String,
    },
    /// A file could not be read or parsed.
    #[error(transparent)]
    File(#[from] ConfigError),
    /// A file parsed but does not hold servers where it should.
    #[error("{path}: {message}")]
    Shape {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// `.mcp.json` is a symbolic link.
    #[error(
        "{path} is a symbolic link; Warden neither reads nor writes a project's server list through a link, which may lead out of the project (replace the link with a file)"
    )]
    Symlink {
        /// The link.
        path: PathBuf,
    },
    /// The name is taken in that scope.
    #[error(
        "MCP server `{name}` already exists in {scope} scope ({place}); remove it first with `warden mcp remove {name} --scope {scope}`"
    )]
    Exists {
        /// The server.
        name: String,
        /// The scope.
        scope: McpScope,
        /// [`Place::describe`].
        place: String,
    },
    /// No server of that name where it was looked for.
    #[error("no MCP server `{name}` in {looked}")]
    NotFound {
        /// The server.
        name: String,
        /// Where it was looked for.
        looked: String,
    },
    /// `remove` without a scope, and the name is in several.
    #[error(
        "MCP server `{name}` exists in several scopes:\n{list}\nRemove it from one with:\n{commands}"
    )]
    Ambiguous {
        /// The server.
        name: String,
        /// One line per scope and place.
        list: String,
        /// One command line per scope.
        commands: String,
    },
    /// Plugin servers are changed with the plugin.
    #[error(
        "plugin servers come with their plugin; use `warden plugin disable` or `uninstall` instead"
    )]
    PluginScope,
    /// Writing failed.
    #[error("cannot write {path}: {source}")]
    Write {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
}

/// Checks a name given for a new server, as Claude Code does: letters, digits, `-` and `_`, so
/// the name is its tool-name prefix unchanged (`mcp__<name>__<tool>`).
pub fn validate_name(name: &str) -> Result<(), EditError> {
    let bad = |reason: String| EditError::Name {
        name: name.to_string(),
        reason,
    };
    if name.is_empty() {
        return Err(bad("it is empty".to_string()));
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '-' || *c == '_'))
    {
        return Err(bad(format!("{c:?} is not allowed")));
    }
    Ok(())
}

/// Parses `--header "Name: value"`. The name must be an HTTP token; the value may not hold a
/// line break or other control character (it would end the header and start another).
pub fn parse_header(s: &str) -> Result<(String, String), EditError> {
    let bad = |why: &str| {
        EditError::Input(format!(
            "invalid header `{s}`: {why}; write it as \"Name: value\""
        ))
    };
    let Some((name, value)) = s.split_once(':') else {
        return Err(bad("no `:`"));
    };
    let name = name.trim();
    if name.is_empty() {
        return Err(bad("the name is empty"));
    }
    let tchar = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
    if let Some(c) = name.chars().find(|c| !tchar(*c)) {
        return Err(bad(&format!("{c:?} is not allowed in a header name")));
    }
    let value = value.trim();
    if value.chars().any(|c| c.is_control() && c != '\t') {
        return Err(bad("the value holds a line break or control character"));
    }
    Ok((name.to_string(), value.to_string()))
}

/// Parses `--env KEY=value`. The key must be a shell variable name.
pub fn parse_env(s: &str) -> Result<(String, String), EditError> {
    let bad = |why: &str| {
        EditError::Input(format!(
            "invalid environment variable `{s}`: {why}; write it as KEY=value"
        ))
    };
    let Some((key, value)) = s.split_once('=') else {
        return Err(bad("no `=`"));
    };
    let mut chars = key.chars();
    let first_ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    if !first_ok || !chars.all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(bad(
            "the name must be letters, digits and `_`, not starting with a digit",
        ));
    }
    if value.contains('\0') {
        return Err(bad("the value holds a NUL byte"));
    }
    Ok((key.to_string(), value.to_string()))
}

fn no_duplicates(what: &str, pairs: &[(String, String)], fold_case: bool) -> Result<(), EditError> {
    for (i, (k, _)) in pairs.iter().enumerate() {
        let same = |o: &String| {
            if fold_case {
                o.eq_ignore_ascii_case(k)
            } else {
                o == k
            }
        };
        if pairs[..i].iter().any(|(o, _)| same(o)) {
            return Err(EditError::Input(format!("{what} `{k}` is given twice")));
        }
    }
    Ok(())
}

/// A stdio server entry, as `claude mcp add NAME -- CMD ARGS…` writes it.
pub fn stdio_entry(
    command: &str,
    args: &[String],
    env: &[(String, String)],
) -> Result<Value, EditError> {
    no_duplicates("environment variable", env, false)?;
    let mut o = Map::new();
    o.insert("type".into(), "stdio".into());
    o.insert("command".into(), command.into());
    o.insert(
        "args".into(),
        Value::Array(args.iter().map(|a| Value::String(a.clone())).collect()),
    );
    if !env.is_empty() {
        o.insert(
            "env".into(),
            Value::Object(
                env.iter()
                    .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                    .collect(),
            ),
        );
    }
    Ok(Value::Object(o))
}

/// An `http` or `sse` server entry, as `claude mcp add --transport http NAME URL` writes it.
pub fn remote_entry(
    transport: &str,
    url: &str,
    headers: &[(String, String)],
) -> Result<Value, EditError> {
    if !matches!(transport, "http" | "sse") {
        return Err(EditError::Input(format!(
            "unknown transport `{transport}`; use stdio, http or sse"
        )));
    }
    if url.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(EditError::Input(format!(
            "invalid URL `{url}`: it holds a space or control character"
        )));
    }
    no_duplicates("header", headers, true)?;
    let mut o = Map::new();
    o.insert("type".into(), transport.into());
    o.insert("url".into(), url.into());
    if !headers.is_empty() {
        o.insert(
            "headers".into(),
            Value::Object(
                headers
                    .iter()
                    .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                    .collect(),
            ),
        );
    }
    Ok(Value::Object(o))
}

/// Where one scope's servers are kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    /// The scope.
    pub scope: McpScope,
    /// The file.
    pub path: PathBuf,
    /// For the local scope, the key under `projects`.
    pub project_key: Option<String>,
}

impl Place {
    /// The file, and for `state.json` the key path inside it:
    /// `/home/u/.warden/state.json → projects["/src/app"].mcpServers`.
    pub fn describe(&self) -> String {
        match (&self.scope, &self.project_key) {
            (McpScope::Local, Some(k)) => {
                format!("{} → projects[\"{k}\"].mcpServers", self.path.display())
            }
            (McpScope::User, _) => format!("{} → mcpServers", self.path.display()),
            _ => self.path.display().to_string(),
        }
    }
}

/// One file, read for a change.
struct Doc {
    place: Place,
    top: Map<String, Value>,
}

/// Refuses a `.mcp.json` that is a link (see the module docs).
fn no_link(path: &Path) -> Result<(), EditError> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => Err(EditError::Symlink {
            path: path.to_path_buf(),
        }),
        _ => Ok(()),
    }
}

fn read_object(path: &Path, limit: u64) -> Result<Map<String, Value>, EditError> {
    let Some(text) = crate::read_text_limited(path, limit)? else {
        return Ok(Map::new());
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    if text.trim().is_empty() {
        return Ok(Map::new());
    }
    Ok(crate::parse_settings(text, path)?)
}

/// The key `projects` holds (or will hold) the project in `cwd` under: the one already there,
/// else the canonical path.
fn project_key(state: &Map<String, Value>, cwd: &Path) -> String {
    let keys = project_keys(cwd);
    let existing = match state.get("projects") {
        Some(Value::Object(p)) => keys.iter().find(|k| p.contains_key(*k)).cloned(),
        _ => None,
    };
    existing.unwrap_or_else(|| keys.last().cloned().unwrap_or_default())
}

impl Doc {
    fn open(scope: McpScope, cwd: &Path, home: &Home) -> Result<Doc, EditError> {
        let (path, top) = match scope {
            McpScope::Plugin => return Err(EditError::PluginScope),
            McpScope::Project => {
                let path = cwd.join(PROJECT_FILE);
                no_link(&path)?;
                let top = read_object(&path, MAX_SETTINGS_BYTES)?;
                (path, top)
            }
            McpScope::Local | McpScope::User => {
                let path = home.state_file();
                let top = read_object(&path, MAX_STATE_BYTES)?;
                (path, top)
            }
        };
        let project_key = (scope == McpScope::Local).then(|| project_key(&top, cwd));
        Ok(Doc {
            place: Place {
                scope,
                path,
                project_key,
            },
            top,
        })
    }

    fn shape(&self, message: String) -> EditError {
        EditError::Shape {
            path: self.place.path.clone(),
            message,
        }
    }

    /// This project's object under `projects`, made when `create`.
    fn project_mut(&mut self, create: bool) -> Result<Option<&mut Map<String, Value>>, EditError> {
        let key = self.place.project_key.clone().unwrap_or_default();
        let path = self.place.path.clone();
        let shape = |message: String| EditError::Shape {
            path: path.clone(),
            message,
        };
        if !self.top.contains_key("projects") {
            if !create {
                return Ok(None);
            }
            self.top
                .insert("projects".into(), Value::Object(Map::new()));
        }
        if let Some(other) = self.top.get("projects").filter(|v| !v.is_object()) {
            return Err(shape(format!(
                "`projects` must be an object keyed by project path, found {}",
                json_type_name(other)
            )));
        }
        let Some(Value::Object(projects)) = self.top.get_mut("projects") else {
            return Err(shape("`projects` is missing".to_string()));
        };
        if !projects.contains_key(&key) {
            if !create {
                return Ok(None);
            }
            projects.insert(key.clone(), Value::Object(Map::new()));
        }
        match projects.get_mut(&key) {
            Some(Value::Object(p)) => Ok(Some(p)),
            other => Err(shape(format!(
                "`projects[\"{key}\"]` must be an object, found {}",
                other.map_or("nothing", |v| json_type_name(v))
            ))),
        }
    }

    /// The object holding this scope's servers, made when `create`.
    fn servers_mut(&mut self, create: bool) -> Result<Option<&mut Map<String, Value>>, EditError> {
        let flat = self.place.scope == McpScope::Project
            && !self.top.contains_key("mcpServers")
            && self.top.keys().any(|k| k != "$schema");
        if flat {
            // A flat `.mcp.json` keeps its servers at the top level; it stays flat.
            return Ok(Some(&mut self.top));
        }
        let where_ = match self.place.scope {
            McpScope::Local => format!(
                "`projects[\"{}\"].mcpServers`",
                self.place.project_key.as_deref().unwrap_or("")
            ),
            _ => "`mcpServers`".to_string(),
        };
        let path = self.place.path.clone();
        let holder = if self.place.scope == McpScope::Local {
            match self.project_mut(create)? {
                Some(p) => p,
                None => return Ok(None),
            }
        } else {
            &mut self.top
        };
        if !holder.contains_key("mcpServers") {
            if !create {
                return Ok(None);
            }
            holder.insert("mcpServers".into(), Value::Object(Map::new()));
        }
        match holder.get_mut("mcpServers") {
            Some(Value::Object(m)) => Ok(Some(m)),
            other => {
                let found = other.map_or("nothing", |v| json_type_name(v));
                Err(EditError::Shape {
                    path,
                    message: format!("{where_} must be an object of servers, found {found}"),
                })
            }
        }
    }

    fn save(&self) -> Result<(), EditError> {
        let mut text = serde_json::to_string_pretty(&self.top)
            .map_err(|e| self.shape(format!("cannot serialise: {e}")))?;
        text.push('\n');
        if self.place.scope == McpScope::Project {
            no_link(&self.place.path)?;
            write_atomic(&self.place.path, text.as_bytes(), 0o644, true)
        } else {
            // The state file holds header tokens and environment values: only the user may
            // read it, whatever its mode was.
            write_atomic(&self.place.path, text.as_bytes(), 0o600, false)
        }
    }
}

/// [`warden_vocab::fs::write_atomic_mode`], its error naming `path`.
fn write_atomic(path: &Path, bytes: &[u8], mode: u32, keep_mode: bool) -> Result<(), EditError> {
    warden_vocab::fs::write_atomic_mode(path, bytes, mode, keep_mode).map_err(|source| {
        EditError::Write {
            path: path.to_path_buf(),
            source,
        }
    })
}

/// Where `scope`'s servers are kept for a session in `cwd`.
pub fn place(scope: McpScope, cwd: &Path, home: &Home) -> Result<Place, EditError> {
    Ok(Doc::open(scope, cwd, home)?.place)
}

/// Adds server `name` with `entry` to `scope`, refusing a name already there, a name tools
/// cannot be named after, and an entry [`check_entry`] finds an error in. Returns where it was
/// written.
pub fn add(
    cwd: &Path,
    home: &Home,
    scope: McpScope,
    name: &str,
    entry: Value,
) -> Result<Place, EditError> {
    validate_name(name)?;
    if let Some(p) = check_entry(name, &entry).into_iter().find(|p| p.error) {
        return Err(EditError::Entry {
            name: name.to_string(),
            field: p.field,
            message: p.message,
        });
    }
    let mut doc = Doc::open(scope, cwd, home)?;
    let place = doc.place.describe();
    let Some(servers) = doc.servers_mut(true)? else {
        return Err(doc.shape("no place for servers".to_string()));
    };
    if servers.contains_key(name) {
        return Err(EditError::Exists {
            name: name.to_string(),
            scope,
            place,
        });
    }
    servers.insert(name.to_string(), entry);
    doc.save()?;
    Ok(doc.place)
}

/// A server found by name in one scope.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    /// Where.
    pub place: Place,
    /// The raw entry.
    pub entry: Value,
}

/// Every scope (local, project, user: precedence order) that configures `name`.
pub fn find(cwd: &Path, home: &Home, name: &str) -> Result<Vec<Found>, EditError> {
    let mut out = Vec::new();
    for scope in [McpScope::Local, McpScope::Project, McpScope::User] {
        let mut doc = Doc::open(scope, cwd, home)?;
        if let Some(entry) = doc.servers_mut(false)?.and_then(|s| s.get(name).cloned()) {
            out.push(Found {
                place: doc.place,
                entry,
            });
        }
    }
    Ok(out)
}

/// Removes server `name` from `scope`, or, without one, from the only scope that has it (a
/// name in several scopes is [`EditError::Ambiguous`], as in Claude Code). Returns where it
/// was removed from.
pub fn remove(
    cwd: &Path,
    home: &Home,
    scope: Option<McpScope>,
    name: &str,
) -> Result<Place, EditError> {
    let scope = match scope {
        Some(s) => s,
        None => {
            let found = find(cwd, home, name)?;
            match found.as_slice() {
                [] => {
                    let looked = [McpScope::Local, McpScope::Project, McpScope::User]
                        .into_iter()
                        .map(|s| {
                            place(s, cwd, home)
                                .map(|p| format!("{s} ({})", p.describe()))
                                .unwrap_or_else(|_| s.to_string())
                        })
                        .collect::<Vec<_>>()
                        .join(", ");
                    return Err(EditError::NotFound {
                        name: name.to_string(),
                        looked,
                    });
                }
                [one] => one.place.scope,
                many => {
                    return Err(EditError::Ambiguous {
                        name: name.to_string(),
                        list: many
                            .iter()
                            .map(|f| format!("  - {} ({})", f.place.scope, f.place.describe()))
                            .collect::<Vec<_>>()
                            .join("\n"),
                        commands: many
                            .iter()
                            .map(|f| {
                                format!("  warden mcp remove {name} --scope {}", f.place.scope)
                            })
                            .collect::<Vec<_>>()
                            .join("\n"),
                    });
                }
            }
        }
    };
    let mut doc = Doc::open(scope, cwd, home)?;
    let looked = format!("{scope} scope ({})", doc.place.describe());
    let removed = doc
        .servers_mut(false)?
        .and_then(|s| s.shift_remove(name))
        .is_some();
    if !removed {
        return Err(EditError::NotFound {
            name: name.to_string(),
            looked,
        });
    }
    doc.save()?;
    Ok(doc.place)
}

/// What [`approve`] recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    /// The `.mcp.json` the server is defined in.
    pub mcp_json: PathBuf,
    /// The file the choice went to (`state.json`).
    pub state: PathBuf,
    /// The project's key under `projects`.
    pub project_key: String,
    /// The digest the approval is pinned to (`None` for a denial).
    pub digest: Option<String>,
}

/// Records the user's choice for project server `name` in `state.json` →
/// `projects["<cwd>"]`: approved, pinned to [`definition_digest`] of its entry in `.mcp.json`
/// as it is now; or, with `approve` false, listed in `disabledMcpjsonServers`. Never writes
/// into the project. Approving a name `.mcp.json` does not define is [`EditError::NotFound`].
pub fn approve(cwd: &Path, home: &Home, name: &str, approve: bool) -> Result<Choice, EditError> {
    let mcp_json = cwd.join(PROJECT_FILE);
    no_link(&mcp_json)?;
    let servers = super::read_servers_file(&mcp_json)
        .map_err(|e| match e {
            super::McpConfigError::File(f) => EditError::File(f),
            other => EditError::Input(other.to_string()),
        })?
        .unwrap_or_default();
    let digest = match servers.get(name) {
        Some(entry) => Some(definition_digest(name, entry)),
        None if approve => {
            let names: Vec<&str> = servers.keys().map(String::as_str).collect();
            return Err(EditError::NotFound {
                name: name.to_string(),
                looked: format!(
                    "{} (only a project's servers need approval; it defines {})",
                    mcp_json.display(),
                    if names.is_empty() {
                        "none".to_string()
                    } else {
                        names.join(", ")
                    }
                ),
            });
        }
        None => None,
    };
    let mut doc = Doc::open(McpScope::Local, cwd, home)?;
    let key = doc.place.project_key.clone().unwrap_or_default();
    let path = doc.place.path.clone();
    let Some(project) = doc.project_mut(true)? else {
        return Err(doc.shape("no place for the project".to_string()));
    };
    let shape = |message: String| EditError::Shape {
        path: path.clone(),
        message,
    };
    if !matches!(project.get(APPROVED_KEY), None | Some(Value::Object(_))) {
        return Err(shape(format!(
            "`projects[\"{key}\"].{APPROVED_KEY}` must be an object of server names and digests"
        )));
    }
    if !matches!(project.get(DISABLED_KEY), None | Some(Value::Array(_))) {
        return Err(shape(format!(
            "`projects[\"{key}\"].{DISABLED_KEY}` must be an array of server names"
        )));
    }
    let approved = project
        .entry(APPROVED_KEY)
        .or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(m) = approved {
        match (&digest, approve) {
            (Some(d), true) => {
                m.insert(name.to_string(), Value::String(d.clone()));
            }
            _ => {
                m.shift_remove(name);
            }
        }
    }
    let disabled = project
        .entry(DISABLED_KEY)
        .or_insert_with(|| Value::Array(Vec::new()));
    if let Value::Array(a) = disabled {
        a.retain(|v| v.as_str() != Some(name));
        if !approve {
            a.push(Value::String(name.to_string()));
        }
    }
    // Lists left empty say nothing; the file keeps only what was chosen.
    for k in [APPROVED_KEY, DISABLED_KEY] {
        let empty = match project.get(k) {
            Some(Value::Object(m)) => m.is_empty(),
            Some(Value::Array(a)) => a.is_empty(),
            _ => false,
        };
        if empty {
            project.shift_remove(k);
        }
    }
    doc.save()?;
    Ok(Choice {
        mcp_json,
        state: doc.place.path,
        project_key: key,
        digest: digest.filter(|_| approve),
    })
}
