//! Settings files and the `WARDEN_HOME` layout.
//!
//! Warden reads the same settings files Claude Code does, so a project's `.claude/settings.json`
//! carries over unchanged. `WARDEN_HOME` plays the role of Claude Code's `CLAUDE_CONFIG_DIR`
//! (`~/.claude`): it holds the user settings file, the plugin cache and the compile cache.
//!
//! Scopes, highest precedence first: managed > CLI (`--settings`) > local > project > user.
//! The user scope has two files: Warden's own `$WARDEN_HOME/settings.json` above Claude Code's
//! user `settings.json` (`CLAUDE_CONFIG_DIR` or `~/.claude`, read-only; see [`claude`] for how
//! to turn it off). Merging follows Claude Code: scalars from the highest file that sets them,
//! arrays combined across files (duplicates removed), objects merged key by key. A file that is
//! not valid JSON is reported with its path, line and column and skipped, never fatal.
//!
//! Precedence is not trust. Project and local files come with the repository (a committed
//! `settings.local.json` looks exactly like the user's own), so keys that approve, widen or turn
//! something off count only from the files the user controls ([`Scope::is_user_controlled`]):
//! MCP server approval, `readClaudeConfig`, `hasClaudeMdExternalIncludesApproved`, the
//! `sandbox` keys, and disabling the user's plugins and hooks ([`Settings::for_hooks`],
//! [`Settings::user_plugin_choices`]). [`loosen`] gives the whole rule (a repository may
//! tighten, never loosen) and names what was ignored.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

pub mod claude;
pub mod loosen;
pub mod mcp;

pub use claude::{ClaudeConfig, ClaudeConfigOff, SkippedHook};

/// The settings key that turns hooks off (see [`Settings::for_hooks`] for whose files count).
pub const DISABLE_ALL_HOOKS: &str = "disableAllHooks";
const ALLOWED_HTTP_HOOK_URLS: &str = "allowedHttpHookUrls";

/// Environment variable that relocates Warden's home directory (default `~/.warden`).
pub const HOME_ENV: &str = "WARDEN_HOME";
/// Environment variable that relocates the managed-settings directory
/// (default `/etc/claude-code`, where Claude Code reads it on Linux).
pub const MANAGED_DIR_ENV: &str = "WARDEN_MANAGED_SETTINGS_DIR";
/// Largest settings file accepted (Claude Code caps `--settings` files at 2 MiB).
pub const MAX_SETTINGS_BYTES: u64 = 2 << 20;

/// Where a settings file sits in the precedence order. Variants are declared lowest first, so
/// `Scope::Managed > Scope::User`.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// `$WARDEN_HOME/settings.json`, then Claude Code's user `settings.json` (see [`Origin`]).
    User,
    /// `<cwd>/.claude/settings.json` (starting directory only, no parent walk).
    Project,
    /// `<repo root>/.claude/settings.local.json`. Above project for precedence, but as much
    /// the repository's as the project file for trust (see [`Scope::is_user_controlled`]).
    Local,
    /// Files given with `--settings`.
    Cli,
    /// `managed-settings.json` and `managed-settings.d/*.json`.
    Managed,
}

impl Scope {
    /// Whether a file of this scope is the user's own choice: user, `--settings` and managed
    /// files. Project and local files come with the working tree: `.claude/settings.local.json`
    /// is meant to stay out of version control, but nothing stops a repository from committing
    /// one, so it counts as the repository's for every decision that approves, widens or turns
    /// something off (project MCP servers, plugins and hooks, the sandbox, external imports).
    /// Permission rules from it still apply: a repository's allow rules are already read from
    /// its `settings.json`, and "always allow" answers are saved there.
    pub fn is_user_controlled(self) -> bool {
        matches!(self, Scope::User | Scope::Cli | Scope::Managed)
    }

    /// The lowercase name used in CLI flags and JSON output.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::User => "user",
            Scope::Project => "project",
            Scope::Local => "local",
            Scope::Cli => "cli",
            Scope::Managed => "managed",
        }
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Errors reading settings or the home directory.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The file is not strict JSON.
    #[error(
        "{path}:{line}:{column}: invalid JSON: {message} (the file must be strict JSON: no comments or trailing commas)"
    )]
    Json {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What the parser said.
        message: String,
    },
    /// The file parsed but its top level is not an object.
    #[error("{path}: must be a JSON object at the top level")]
    NotAnObject {
        /// The file.
        path: PathBuf,
    },
    /// The file exceeds its size limit ([`MAX_SETTINGS_BYTES`] for settings files).
    #[error("{path}: the file is {size} bytes; the limit is {limit}")]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// Its size.
        size: u64,
        /// The limit.
        limit: u64,
    },
    /// The path is a directory, FIFO or device rather than a regular file.
    #[error("{path}: not a regular file")]
    NotAFile {
        /// The path.
        path: PathBuf,
    },
    /// No home directory could be determined.
    #[error("cannot find a home directory: set {HOME_ENV}")]
    NoHome,
}

/// Warden's home directory and the paths under it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Home {
    root: PathBuf,
}

impl Home {
    /// Uses `root` as the home directory.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Home { root: root.into() }
    }

    /// `$WARDEN_HOME`, else `~/.warden`.
    pub fn from_env() -> Result<Self, ConfigError> {
        if let Some(v) = std::env::var_os(HOME_ENV).filter(|v| !v.is_empty()) {
            return Ok(Home::new(PathBuf::from(v)));
        }
        let home = warden_vocab::home_dir().ok_or(ConfigError::NoHome)?;
        Ok(Home::new(home.join(".warden")))
    }

    /// The home directory itself.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The user-scope settings file.
    pub fn user_settings(&self) -> PathBuf {
        self.root.join("settings.json")
    }

    /// Root of installed plugins and marketplaces (Claude Code's `~/.claude/plugins`).
    pub fn plugins_dir(&self) -> PathBuf {
        self.root.join("plugins")
    }

    /// Compiled-component cache. Host-owned: never preopened into a guest.
    pub fn cache_dir(&self) -> PathBuf {
        self.root.join("cache")
    }

    /// Warden's state file, its counterpart of Claude Code's `~/.claude.json`: user- and
    /// local-scope MCP servers (`mcpServers`, `projects["<path>"].mcpServers`) live here.
    pub fn state_file(&self) -> PathBuf {
        self.root.join("state.json")
    }
}

/// Whose configuration a settings file is.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// A file Warden reads as its own: its home's `settings.json`, and the project, local,
    /// `--settings` and managed files it shares with Claude Code.
    #[default]
    Warden,
    /// Claude Code's user `settings.json`, read-only, a [`Scope::User`] file below Warden's own.
    ClaudeCode,
}

/// One settings file that was read.
#[derive(Debug, Clone)]
pub struct SettingsFile {
    /// Its scope.
    pub scope: Scope,
    /// Whose file it is: both user files have [`Scope::User`].
    pub origin: Origin,
    /// Where it was read from (`None` for inline `--settings` JSON).
    pub path: Option<PathBuf>,
    /// Its top-level object.
    pub value: Map<String, Value>,
}

impl SettingsFile {
    /// A printable name for the file: its path, or `--settings` for inline JSON.
    pub fn display_name(&self) -> String {
        match &self.path {
            Some(p) => p.display().to_string(),
            None => "--settings".to_string(),
        }
    }

    /// The directory relative paths in this file are resolved against: rule paths such as
    /// `Read(/src/**)` are relative to a project file's project root (the parent of
    /// `.claude/`), and to the directory of a user file (Claude Code anchors them at
    /// `~/.claude/`).
    pub fn base_dir(&self) -> Option<PathBuf> {
        let p = self.path.as_ref()?;
        let dir = p.parent()?;
        if self.scope != Scope::User && dir.file_name().is_some_and(|n| n == ".claude") {
            dir.parent().map(Path::to_path_buf)
        } else {
            Some(dir.to_path_buf())
        }
    }
}

/// What to load.
#[derive(Debug, Clone)]
pub struct LoadOptions {
    /// The session's starting directory.
    pub cwd: PathBuf,
    /// Warden's home.
    pub home: Home,
    /// Directory holding `managed-settings.json` (`None` = no managed settings).
    pub managed_dir: Option<PathBuf>,
    /// `--settings` arguments: a path, or inline JSON starting with `{`.
    pub cli_settings: Vec<String>,
    /// Claude Code's user configuration directory, or why it is not read.
    pub claude_config: ClaudeConfig,
}

impl LoadOptions {
    /// Options for a session in `cwd`, reading the managed directory from
    /// [`MANAGED_DIR_ENV`] or `/etc/claude-code`, and Claude Code's user directory as
    /// [`ClaudeConfig::from_env`] finds it.
    pub fn new(cwd: impl Into<PathBuf>, home: Home) -> Self {
        let managed_dir = match std::env::var_os(MANAGED_DIR_ENV) {
            Some(v) if v.is_empty() => None,
            Some(v) => Some(PathBuf::from(v)),
            None => Some(PathBuf::from("/etc/claude-code")),
        };
        LoadOptions {
            cwd: cwd.into(),
            home,
            managed_dir,
            cli_settings: Vec::new(),
            claude_config: ClaudeConfig::from_env(),
        }
    }
}

/// Every settings file of a session, highest precedence first, plus the files that failed.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    /// Files that loaded, highest precedence first.
    pub files: Vec<SettingsFile>,
    /// Files that exist but could not be used; each was skipped.
    pub errors: Vec<ConfigErrorReport>,
    /// Whether Claude Code's user configuration is read (after the options and the
    /// `readClaudeConfig` setting), and from where.
    pub claude_config: ClaudeConfig,
    /// Hooks of Claude Code's user settings left out because they hand events to Warden.
    pub skipped_hooks: Vec<SkippedHook>,
}

/// A skipped settings file, kept as text so `Settings` stays `Clone`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigErrorReport {
    /// The scope the file would have had.
    pub scope: Scope,
    /// The message, naming the file and position.
    pub message: String,
}

/// The local-settings directory for a session in `cwd`: the git repository root if `cwd` is
/// inside one, else `cwd`.
pub fn local_root(cwd: &Path) -> PathBuf {
    let mut dir = Some(cwd);
    while let Some(d) = dir {
        if d.join(".git").exists() {
            return d.to_path_buf();
        }
        dir = d.parent();
    }
    cwd.to_path_buf()
}

/// Path of the settings file a write at `scope` goes to (`None` for managed and CLI scopes,
/// which Warden never writes).
pub fn settings_path(scope: Scope, cwd: &Path, home: &Home) -> Option<PathBuf> {
    match scope {
        Scope::User => Some(home.user_settings()),
        Scope::Project => Some(cwd.join(".claude").join("settings.json")),
        Scope::Local => Some(local_root(cwd).join(".claude").join("settings.local.json")),
        Scope::Cli | Scope::Managed => None,
    }
}

/// Whether two paths name the same file or directory (equal, or equal once links are resolved).
fn same_path(a: &Path, b: &Path) -> bool {
    a == b
        || matches!(
            (std::fs::canonicalize(a), std::fs::canonicalize(b)),
            (Ok(x), Ok(y)) if x == y
        )
}

/// Reads one settings file. `Ok(None)` when it does not exist.
pub fn read_settings_file(path: &Path) -> Result<Option<Map<String, Value>>, ConfigError> {
    match read_text_limited(path, MAX_SETTINGS_BYTES)? {
        Some(text) => parse_settings(&text, path).map(Some),
        None => Ok(None),
    }
}

/// Reads a text file of at most `limit` bytes. `Ok(None)` when it does not exist.
pub(crate) fn read_text_limited(path: &Path, limit: u64) -> Result<Option<String>, ConfigError> {
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(ConfigError::Io {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    // A FIFO planted in a repository would block the read forever.
    if !meta.is_file() {
        return Err(ConfigError::NotAFile {
            path: path.to_path_buf(),
        });
    }
    if meta.len() > limit {
        return Err(ConfigError::TooLarge {
            path: path.to_path_buf(),
            size: meta.len(),
            limit,
        });
    }
    let io = |source| ConfigError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut buf = Vec::new();
    // The file may grow after the size check; never read more than the limit allows.
    std::io::Read::read_to_end(
        &mut std::io::Read::take(std::fs::File::open(path).map_err(io)?, limit + 1),
        &mut buf,
    )
    .map_err(io)?;
    if buf.len() as u64 > limit {
        return Err(ConfigError::TooLarge {
            path: path.to_path_buf(),
            size: buf.len() as u64,
            limit,
        });
    }
    String::from_utf8(buf)
        .map(Some)
        .map_err(|e| io(std::io::Error::new(std::io::ErrorKind::InvalidData, e)))
}

/// Parses settings text; `path` is used in errors only.
pub fn parse_settings(text: &str, path: &Path) -> Result<Map<String, Value>, ConfigError> {
    let value: Value = serde_json::from_str(text).map_err(|e| ConfigError::Json {
        path: path.to_path_buf(),
        line: e.line(),
        column: e.column(),
        message: strip_position(&e.to_string()),
    })?;
    match value {
        Value::Object(map) => Ok(map),
        _ => Err(ConfigError::NotAnObject {
            path: path.to_path_buf(),
        }),
    }
}

fn strip_position(msg: &str) -> String {
    match msg.rfind(" at line ") {
        Some(i) => msg[..i].to_string(),
        None => msg.to_string(),
    }
}

impl Settings {
    /// Loads every scope for a session described by `opts`.
    pub fn load(opts: &LoadOptions) -> Settings {
        let mut s = Settings::default();
        if let Some(dir) = &opts.managed_dir {
            // managed-settings.json first, then drop-ins alphabetically; later drop-ins win,
            // so they go first in highest-first order.
            let mut managed = vec![dir.join("managed-settings.json")];
            if let Ok(rd) = std::fs::read_dir(dir.join("managed-settings.d")) {
                let mut drop_ins: Vec<PathBuf> = rd
                    .filter_map(Result::ok)
                    .map(|e| e.path())
                    .filter(|p| {
                        p.extension().is_some_and(|x| x == "json")
                            && !p
                                .file_name()
                                .and_then(|n| n.to_str())
                                .is_some_and(|n| n.starts_with('.'))
                    })
                    .collect();
                drop_ins.sort();
                managed.extend(drop_ins);
            }
            for p in managed.iter().rev() {
                s.push_path(Scope::Managed, p);
            }
        }
        for arg in opts.cli_settings.iter().rev() {
            if arg.trim_start().starts_with('{') {
                match parse_settings(arg, Path::new("--settings")) {
                    Ok(value) => s.files.push(SettingsFile {
                        scope: Scope::Cli,
                        origin: Origin::Warden,
                        path: None,
                        value,
                    }),
                    Err(e) => s.errors.push(ConfigErrorReport {
                        scope: Scope::Cli,
                        message: e.to_string(),
                    }),
                }
            } else {
                let p = opts.cwd.join(arg);
                if !p.exists() {
                    s.errors.push(ConfigErrorReport {
                        scope: Scope::Cli,
                        message: format!("{}: settings file not found", p.display()),
                    });
                }
                s.push_path(Scope::Cli, &p);
            }
        }
        for scope in [Scope::Local, Scope::Project, Scope::User] {
            if let Some(p) = settings_path(scope, &opts.cwd, &opts.home) {
                s.push_path(scope, &p);
            }
        }
        s.claude_config = s.resolve_claude_config(opts);
        if let Some(path) = s.claude_config.settings_file()
            // A link to Warden's own file would read it twice, once below itself.
            && !same_path(&path, &opts.home.user_settings())
        {
            let at = s.files.len();
            s.push_path(Scope::User, &path);
            if let Some(f) = s.files.get_mut(at) {
                f.origin = Origin::ClaudeCode;
                s.skipped_hooks = claude::strip_bridge_hooks(&mut f.value, &path);
                // A session started in the home directory finds the same file as its project's
                // `.claude/settings.json`: it counts once, as the user's, without bridge hooks.
                s.files.retain(|g| {
                    g.origin == Origin::ClaudeCode
                        || !matches!(g.scope, Scope::Project | Scope::Local)
                        || !g.path.as_deref().is_some_and(|p| same_path(p, &path))
                });
            }
        }
        s
    }

    /// The options' Claude Code directory unless a file the user controls (Warden's user
    /// settings, `--settings`, managed) says `"readClaudeConfig": false`, or the directory is
    /// Warden's home. A project's own files are not asked: they could drop the user's deny
    /// rules.
    fn resolve_claude_config(&self, opts: &LoadOptions) -> ClaudeConfig {
        let ClaudeConfig::Dir(dir) = &opts.claude_config else {
            return opts.claude_config.clone();
        };
        let setting = self
            .files
            .iter()
            .filter(|f| f.scope.is_user_controlled())
            .find_map(|f| {
                f.value
                    .get(claude::READ_CLAUDE_CONFIG_KEY)
                    .and_then(Value::as_bool)
                    .map(|b| (b, f))
            });
        if let Some((false, f)) = setting {
            return ClaudeConfig::Off(ClaudeConfigOff::Setting(f.display_name()));
        }
        if same_path(dir, opts.home.root()) {
            return ClaudeConfig::Off(ClaudeConfigOff::SameAsHome(dir.clone()));
        }
        opts.claude_config.clone()
    }

    /// Claude Code's user settings file, when it was read.
    pub fn claude_code_file(&self) -> Option<&SettingsFile> {
        self.files.iter().find(|f| f.origin == Origin::ClaudeCode)
    }

    fn push_path(&mut self, scope: Scope, path: &Path) {
        match read_settings_file(path) {
            Ok(Some(value)) => self.files.push(SettingsFile {
                scope,
                origin: Origin::Warden,
                path: Some(path.to_path_buf()),
                value,
            }),
            Ok(None) => {}
            Err(e) => self.errors.push(ConfigErrorReport {
                scope,
                message: e.to_string(),
            }),
        }
    }

    /// Files of the given scope, highest precedence first.
    pub fn scope(&self, scope: Scope) -> impl Iterator<Item = &SettingsFile> {
        self.files.iter().filter(move |f| f.scope == scope)
    }

    /// The value of a scalar key from the highest-precedence file that sets it.
    pub fn scalar(&self, key: &str) -> Option<(&Value, &SettingsFile)> {
        self.files
            .iter()
            .find_map(|f| f.value.get(key).map(|v| (v, f)))
    }

    /// A boolean key (`false` when unset or not a boolean).
    pub fn flag(&self, key: &str) -> bool {
        self.scalar(key)
            .and_then(|(v, _)| v.as_bool())
            .unwrap_or(false)
    }

    /// A boolean key read from the files the user controls only (see
    /// [`Scope::is_user_controlled`]), highest precedence first; `false` when none sets it.
    /// For keys that approve or widen: a repository's own files must not set them.
    pub fn user_flag(&self, key: &str) -> bool {
        self.files
            .iter()
            .filter(|f| f.scope.is_user_controlled())
            .find_map(|f| f.value.get(key).and_then(Value::as_bool))
            .unwrap_or(false)
    }

    /// What the files the user controls say about each plugin in `enabledPlugins`: for each id,
    /// the value of the highest-precedence such file that sets it to a boolean.
    ///
    /// A repository's files (project and local) may enable a plugin, or disable one the user
    /// did not enable, but never disable one of these: the user's guard plugin stays on
    /// whatever a repository's `"enabledPlugins": {"guard@m": false}` says.
    pub fn user_plugin_choices(&self) -> BTreeMap<String, bool> {
        let mut out = BTreeMap::new();
        for f in self.files.iter().filter(|f| f.scope.is_user_controlled()) {
            let Some(Value::Object(ep)) = f.value.get("enabledPlugins") else {
                continue;
            };
            for (id, on) in ep {
                if let Some(on) = on.as_bool() {
                    out.entry(id.clone()).or_insert(on);
                }
            }
        }
        out
    }

    /// Whether a project or local file says `"disableAllHooks": true`. A repository can turn
    /// off only its own hooks: see [`Settings::for_hooks`].
    pub fn project_disables_hooks(&self) -> bool {
        self.files.iter().any(|f| {
            !f.scope.is_user_controlled()
                && f.value.get(DISABLE_ALL_HOOKS) == Some(&Value::Bool(true))
        })
    }

    /// The settings the hooks engine is given, so a repository can tighten but never loosen
    /// what the user set:
    ///
    /// * `disableAllHooks` counts only from files the user controls (managed, `--settings`,
    ///   user). A project or local `true` instead turns off the hooks of the project and local
    ///   files themselves (their `hooks` are left out here) and, in the session, the hooks of
    ///   plugins the user did not enable ([`Settings::user_plugin_choices`]); a project or
    ///   local `false` cannot turn back on hooks the user turned off.
    /// * `httpHookAllowedEnvVars` of project and local files is left out: it would let the
    ///   repository's `http` hooks send the user's environment variables.
    /// * `allowedHttpHookUrls` of project and local files is left out when a file the user
    ///   controls sets it (the repository would add URLs to the user's list); alone, it only
    ///   narrows where `http` hooks may go, and stays.
    pub fn for_hooks(&self) -> Settings {
        let project_off = self.project_disables_hooks();
        let user_urls = self
            .files
            .iter()
            .any(|f| f.scope.is_user_controlled() && f.value.contains_key(ALLOWED_HTTP_HOOK_URLS));
        let mut out = self.clone();
        for f in out
            .files
            .iter_mut()
            .filter(|f| !f.scope.is_user_controlled())
        {
            f.value.remove(DISABLE_ALL_HOOKS);
            f.value.remove("httpHookAllowedEnvVars");
            if user_urls {
                f.value.remove(ALLOWED_HTTP_HOOK_URLS);
            }
            if project_off {
                f.value.remove("hooks");
            }
        }
        out
    }

    /// The whole merged view, following Claude Code's rules (see the crate docs).
    pub fn merged(&self) -> Map<String, Value> {
        let mut out = Map::new();
        // Lowest precedence first so higher files overwrite scalars.
        for f in self.files.iter().rev() {
            merge_into(&mut out, &f.value);
        }
        out
    }
}

pub use warden_vocab::text::json_type_name;

/// Merges `src` over `dst`: scalars replaced, arrays concatenated without duplicates, objects
/// merged key by key.
pub fn merge_into(dst: &mut Map<String, Value>, src: &Map<String, Value>) {
    for (k, v) in src {
        match (dst.get_mut(k), v) {
            (Some(Value::Object(d)), Value::Object(s)) => merge_into(d, s),
            (Some(Value::Array(d)), Value::Array(s)) => {
                for item in s {
                    if !d.contains(item) {
                        d.push(item.clone());
                    }
                }
            }
            _ => {
                dst.insert(k.clone(), v.clone());
            }
        }
    }
}

pub use warden_vocab::text::edit_distance;

/// The closest known name within a small edit distance (case-insensitive), for "did you mean".
pub fn did_you_mean<'a>(unknown: &str, known: &[&'a str]) -> Option<&'a str> {
    let lower = unknown.to_ascii_lowercase();
    known
        .iter()
        .map(|k| (edit_distance(&lower, &k.to_ascii_lowercase()), *k))
        .filter(|(d, k)| *d <= 2.max(k.len() / 4) && *d < k.len())
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(p: &Path, text: &str) {
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(p, text).expect("write");
    }

    #[test]
    fn precedence_and_merge() {
        let t = tempfile::tempdir().expect("tempdir");
        let home = Home::new(t.path().join("home"));
        let cwd = t.path().join("proj");
        std::fs::create_dir_all(cwd.join(".git")).expect("git");
        write(
            &home.user_settings(),
            r#"{"model":"user","permissions":{"allow":["Read"],"deny":["Bash(rm *)"]}}"#,
        );
        write(
            &cwd.join(".claude/settings.json"),
            r#"{"model":"project","permissions":{"allow":["Edit","Read"]}}"#,
        );
        write(
            &cwd.join(".claude/settings.local.json"),
            r#"{"env":{"A":"1"}}"#,
        );
        let managed = t.path().join("managed");
        write(
            &managed.join("managed-settings.json"),
            r#"{"model":"managed-base"}"#,
        );
        write(
            &managed.join("managed-settings.d/10-x.json"),
            r#"{"model":"managed-dropin"}"#,
        );
        let mut opts = LoadOptions::new(&cwd, home);
        opts.claude_config = ClaudeConfig::default();
        opts.managed_dir = Some(managed);
        opts.cli_settings = vec![r#"{"env":{"B":"2"}}"#.into()];
        let s = Settings::load(&opts);
        assert!(s.errors.is_empty(), "{:?}", s.errors);
        let scopes: Vec<Scope> = s.files.iter().map(|f| f.scope).collect();
        assert_eq!(
            scopes,
            [
                Scope::Managed,
                Scope::Managed,
                Scope::Cli,
                Scope::Local,
                Scope::Project,
                Scope::User
            ]
        );
        let m = s.merged();
        assert_eq!(m["model"], "managed-dropin");
        assert_eq!(
            m["permissions"]["allow"],
            serde_json::json!(["Read", "Edit"])
        );
        assert_eq!(m["permissions"]["deny"], serde_json::json!(["Bash(rm *)"]));
        assert_eq!(m["env"], serde_json::json!({"A":"1","B":"2"}));
    }

    #[test]
    fn broken_file_is_reported_with_position_and_skipped() {
        let t = tempfile::tempdir().expect("tempdir");
        let home = Home::new(t.path().join("home"));
        write(&home.user_settings(), "{\n  \"a\": 1,\n}\n");
        let mut opts = LoadOptions::new(t.path(), home);
        opts.claude_config = ClaudeConfig::default();
        opts.managed_dir = None;
        let s = Settings::load(&opts);
        assert!(s.files.is_empty());
        assert_eq!(s.errors.len(), 1);
        assert!(
            s.errors[0].message.contains("settings.json:3:1"),
            "{}",
            s.errors[0].message
        );
    }

    /// A session with Warden's home, Claude Code's directory and a project, in one temporary
    /// directory; no managed settings.
    fn cc_options(t: &Path) -> LoadOptions {
        let mut opts = LoadOptions::new(t.join("proj"), Home::new(t.join("whome")));
        opts.managed_dir = None;
        opts.claude_config = ClaudeConfig::Dir(t.join("cc"));
        opts
    }

    #[test]
    fn claude_code_user_settings_sit_below_wardens_own() {
        let t = tempfile::tempdir().expect("tempdir");
        let opts = cc_options(t.path());
        write(
            &opts.home.user_settings(),
            r#"{"permissions":{"defaultMode":"plan","deny":["Read(./a)"]}}"#,
        );
        write(
            &t.path().join("cc/settings.json"),
            r#"{"permissions":{"defaultMode":"acceptEdits","deny":["Read(./b)"]},"model":"cc"}"#,
        );
        // Not a Claude Code user-scope file: never read.
        write(
            &t.path().join("cc/settings.local.json"),
            r#"{"model":"local"}"#,
        );
        write(
            &t.path().join("proj/.claude/settings.json"),
            r#"{"permissions":{"deny":["Read(./c)"]}}"#,
        );
        let s = Settings::load(&opts);
        assert!(s.errors.is_empty(), "{:?}", s.errors);
        let files: Vec<(Scope, Origin)> = s.files.iter().map(|f| (f.scope, f.origin)).collect();
        assert_eq!(
            files,
            [
                (Scope::Project, Origin::Warden),
                (Scope::User, Origin::Warden),
                (Scope::User, Origin::ClaudeCode)
            ]
        );
        let m = s.merged();
        assert_eq!(m["permissions"]["defaultMode"], "plan");
        assert_eq!(
            m["permissions"]["deny"],
            serde_json::json!(["Read(./b)", "Read(./a)", "Read(./c)"])
        );
        assert_eq!(m["model"], "cc");
        let (_, from) = s.scalar("model").expect("model");
        assert_eq!(from.origin, Origin::ClaudeCode);
        assert_eq!(s.claude_config, ClaudeConfig::Dir(t.path().join("cc")));
        let cc = s.claude_code_file().expect("read");
        assert_eq!(
            cc.path.as_deref(),
            Some(t.path().join("cc/settings.json").as_path())
        );
        // `/path` rules of a user file are anchored at its own directory, as `~/.claude/`.
        assert_eq!(cc.base_dir(), Some(t.path().join("cc")));
    }

    #[test]
    fn a_session_in_the_home_directory_reads_claude_codes_file_once_as_the_users() {
        let t = tempfile::tempdir().expect("tempdir");
        let mut opts = cc_options(t.path());
        // Home directory `t`, Claude Code's directory `t/.claude`, the session started in `t`.
        opts.cwd = t.path().to_path_buf();
        opts.claude_config = ClaudeConfig::Dir(t.path().join(".claude"));
        write(
            &t.path().join(".claude/settings.json"),
            r#"{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"warden hook Stop"}]}]}}"#,
        );
        let s = Settings::load(&opts);
        let files: Vec<(Scope, Origin)> = s.files.iter().map(|f| (f.scope, f.origin)).collect();
        assert_eq!(files, [(Scope::User, Origin::ClaudeCode)]);
        assert_eq!(s.skipped_hooks.len(), 1);
    }

    #[test]
    fn read_claude_config_false_in_a_user_controlled_file_turns_it_off() {
        let t = tempfile::tempdir().expect("tempdir");
        write(&t.path().join("cc/settings.json"), r#"{"model":"cc"}"#);
        let mut opts = cc_options(t.path());
        write(&opts.home.user_settings(), r#"{"readClaudeConfig":false}"#);
        let s = Settings::load(&opts);
        assert!(s.claude_code_file().is_none());
        assert_eq!(
            s.claude_config,
            ClaudeConfig::Off(ClaudeConfigOff::Setting(
                opts.home.user_settings().display().to_string()
            ))
        );
        assert!(
            s.claude_config
                .to_string()
                .starts_with("not read: \"readClaudeConfig\": false in"),
            "{}",
            s.claude_config
        );

        // `--settings` can turn it off as well; a project cannot.
        write(&opts.home.user_settings(), "{}");
        opts.cli_settings = vec![r#"{"readClaudeConfig":false}"#.into()];
        assert!(Settings::load(&opts).claude_code_file().is_none());
        opts.cli_settings.clear();
        write(
            &t.path().join("proj/.claude/settings.json"),
            r#"{"readClaudeConfig":false}"#,
        );
        assert!(Settings::load(&opts).claude_code_file().is_some());
    }

    #[test]
    fn off_options_and_wardens_own_home_read_nothing() {
        let t = tempfile::tempdir().expect("tempdir");
        write(&t.path().join("cc/settings.json"), r#"{"model":"cc"}"#);
        let mut opts = cc_options(t.path());
        opts.claude_config = ClaudeConfig::Off(ClaudeConfigOff::EnvVar);
        let s = Settings::load(&opts);
        assert!(s.files.is_empty());
        assert_eq!(s.claude_config, ClaudeConfig::Off(ClaudeConfigOff::EnvVar));

        // Claude Code's directory being Warden's home is read once, as Warden's.
        let mut opts = cc_options(t.path());
        opts.home = Home::new(t.path().join("cc"));
        let s = Settings::load(&opts);
        assert_eq!(s.files.len(), 1);
        assert_eq!(s.files[0].origin, Origin::Warden);
        assert!(matches!(
            s.claude_config,
            ClaudeConfig::Off(ClaudeConfigOff::SameAsHome(_))
        ));
    }

    #[test]
    fn a_broken_claude_code_file_is_reported_and_bridge_hooks_are_skipped() {
        let t = tempfile::tempdir().expect("tempdir");
        let opts = cc_options(t.path());
        write(&t.path().join("cc/settings.json"), "{,}");
        let s = Settings::load(&opts);
        assert!(s.files.is_empty());
        assert_eq!(s.errors.len(), 1);
        assert_eq!(s.errors[0].scope, Scope::User);
        assert!(
            s.errors[0].message.contains("cc/settings.json"),
            "{:?}",
            s.errors
        );

        write(
            &t.path().join("cc/settings.json"),
            r#"{"hooks":{"PreToolUse":[{"matcher":"*","hooks":[
                {"type":"command","command":"warden hook --wasm-only PreToolUse"}]}]}}"#,
        );
        // The same hook in Warden's own file is the user's choice and stays.
        write(
            &opts.home.user_settings(),
            r#"{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"warden hook Stop"}]}]}}"#,
        );
        let s = Settings::load(&opts);
        assert_eq!(s.skipped_hooks.len(), 1);
        assert_eq!(s.skipped_hooks[0].event, "PreToolUse");
        let cc = s.claude_code_file().expect("read");
        assert_eq!(cc.value["hooks"], serde_json::json!({}));
        assert!(s.files[0].value["hooks"]["Stop"].is_array());
    }
}
