//! The error of the plugin verbs and of the state files they read and write.

use std::path::{Path, PathBuf};

use warden_config::Scope;

use crate::git::GitError;
use crate::loader::LoadError;

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
        "Marketplace \"{name}\" is not known ({}). Add it with `warden plugin marketplace add <dir | git URL | owner/repo>`.",
        if known.is_empty() { "no marketplaces have been added".to_string() } else { format!("known: {}", known.join(", ")) }
    )]
    UnknownMarketplace {
        /// The name asked for.
        name: String,
        /// The marketplaces that are known.
        known: Vec<String>,
    },
    /// The marketplace lists the plugin, but its entry cannot be used.
    #[error(
        "Plugin \"{plugin}\" in marketplace \"{marketplace}\" cannot be installed: {reason}. Run `warden plugin validate {}` for the marketplace's other problems.",
        root.display()
    )]
    Unusable {
        /// Plugin name.
        plugin: String,
        /// Marketplace name.
        marketplace: String,
        /// Marketplace directory.
        root: PathBuf,
        /// Why (what `validate` reports for the entry).
        reason: String,
    },
    /// `marketplace add` of a known name whose source differs.
    #[error(
        "Marketplace \"{name}\" is already added from {old}; not re-pointing it at {new}. Pass --replace to point it at the new source (installed plugins then update from there), or remove it first."
    )]
    MarketplaceSourceChanged {
        /// Name.
        name: String,
        /// The recorded source.
        old: String,
        /// The source given now.
        new: String,
    },
    /// `marketplace remove` while plugins from it are installed.
    #[error(
        "Marketplace \"{name}\" has installed plugins: {}. Uninstall them first, or pass --uninstall-plugins to remove the marketplace and uninstall them.",
        plugins.join(", ")
    )]
    MarketplaceInUse {
        /// Name.
        name: String,
        /// Installed plugin ids from it.
        plugins: Vec<String>,
    },
    /// `enable` of an enabled plugin, `disable` of a disabled one (Claude Code's wording).
    #[error("Plugin \"{plugin}\" is already {}", if *enabled { "enabled" } else { "disabled" })]
    AlreadyInState {
        /// Plugin id.
        plugin: String,
        /// The state it is in.
        enabled: bool,
    },
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
        "marketplace name `{name}` is reserved for github.com/anthropics; {}",
        if *local {
            "for a local copy (a directory or a file:// clone), pass --allow-reserved-name to add it anyway"
        } else {
            "a remote source may use it only from github.com/anthropics; rename the marketplace"
        }
    )]
    ReservedName {
        /// The name.
        name: String,
        /// Whether the source is local (a directory or `file://`), where it can be allowed.
        local: bool,
    },
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
    /// A git or directory marketplace's signed index refuses the plugin: missing where a
    /// signature is required, signed by a key not trusted here, changed after signing,
    /// malformed, or listing another digest than the fetched files have.
    #[error("plugin \"{plugin}\" refused: {reason}; nothing was installed")]
    IndexSignature {
        /// Plugin id.
        plugin: String,
        /// Why.
        reason: String,
    },
    /// A component declared in `warden.toml` (or the `warden` key) cannot run: its file is
    /// missing or is not a valid WebAssembly component, or the section failed its checks.
    /// Installing anyway would drop the plugin's guards without a word.
    #[error("plugin \"{plugin}\" cannot be installed: {problems}. {advice}; nothing was installed")]
    ComponentsUnusable {
        /// Plugin id.
        plugin: String,
        /// Each problem, naming the file (in the source when it is a directory).
        problems: String,
        /// What to do: build the component in the plugin's source, then install again.
        advice: String,
    },
    /// The source type cannot be installed by Warden.
    #[error(
        "plugin \"{plugin}\" uses a `{kind}` source, which Warden cannot install yet; use a github, url, git-subdir, oci or relative source"
    )]
    UnsupportedSource {
        /// Plugin id.
        plugin: String,
        /// Source type.
        kind: String,
    },
    /// Publishing, pulling or verifying an OCI artifact failed (its reason names the
    /// reference, blob or key).
    #[error("{0}")]
    Distribution(#[from] warden_distribution::DistError),
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
    /// A name that becomes a path is unsafe (see [`crate::names`]).
    #[error("{}: field \"{field}\": `{name}` cannot be used as a directory name: it {reason}", file.display())]
    InvalidName {
        /// The file the name was read from.
        file: PathBuf,
        /// The field holding it.
        field: String,
        /// The name.
        name: String,
        /// Why it is refused.
        reason: String,
    },
    /// A directory under `$WARDEN_HOME/plugins/` cannot be used safely.
    #[error(transparent)]
    UnsafePath(#[from] crate::names::UnsafePath),
    /// Copying a plugin went over one of its budgets (see [`crate::manager::CopyLimits`]).
    #[error(
        "{}: {what} exceeds the copy budget of {limit}; nothing was installed. If the plugin is legitimate, raise `plugins.copyLimits.{key}` in your user settings",
        path.display()
    )]
    CopyBudget {
        /// Where the budget ran out.
        path: PathBuf,
        /// What ran over (`the plugin's total size`, …).
        what: String,
        /// The limit, with its unit.
        limit: String,
        /// The setting that raises it.
        key: &'static str,
    },
    /// A `plugins.copyLimits` setting is invalid.
    #[error("{}: field \"plugins.copyLimits.{key}\": {message}", file.display())]
    BadCopyLimit {
        /// The settings file.
        file: PathBuf,
        /// The key.
        key: String,
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

pub(crate) fn io(path: &Path) -> impl FnOnce(std::io::Error) -> PluginError + '_ {
    move |source| PluginError::Io {
        path: path.to_path_buf(),
        source,
    }
}
