//! The engine's plain data: the permission mode, the kinds of file access, session options,
//! startup warnings and construction errors. Nothing here knows about rules.

use std::fmt;
use std::path::PathBuf;

/// Permission mode (spec 2.6).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize,
)]
pub enum Mode {
    /// Reads run; everything else asks.
    #[default]
    #[serde(rename = "default")]
    Default,
    /// File edits and filesystem commands inside the working directories also run.
    #[serde(rename = "acceptEdits")]
    AcceptEdits,
    /// Read-only planning.
    #[serde(rename = "plan")]
    Plan,
    /// Anything that would ask is denied.
    #[serde(rename = "dontAsk")]
    DontAsk,
    /// Everything runs except deny rules, ask rules and the never-auto-approved list.
    #[serde(rename = "bypassPermissions")]
    BypassPermissions,
}

impl Mode {
    /// Parses a settings/CLI mode name (`manual` is an alias of `default`). `auto` is not
    /// supported by Warden and is reported as unknown.
    pub fn parse(s: &str) -> Option<Mode> {
        Some(match s {
            "default" | "manual" => Mode::Default,
            "acceptEdits" => Mode::AcceptEdits,
            "plan" => Mode::Plan,
            "dontAsk" => Mode::DontAsk,
            "bypassPermissions" => Mode::BypassPermissions,
            _ => return None,
        })
    }

    /// The name hooks and settings use.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Default => "default",
            Mode::AcceptEdits => "acceptEdits",
            Mode::Plan => "plan",
            Mode::DontAsk => "dontAsk",
            Mode::BypassPermissions => "bypassPermissions",
        }
    }
}

/// Kind of file access for [`crate::Permissions::check_path`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Access {
    /// Reading.
    Read,
    /// Creating, modifying or deleting.
    Write,
}

/// A startup warning about a settings entry (spec 2.8).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// The settings file (or flag) the entry came from.
    pub source: String,
    /// What is wrong and what to do.
    pub message: String,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.source, self.message)
    }
}

/// Errors building a [`crate::Permissions`].
#[derive(Debug, thiserror::Error)]
pub enum PermissionsError {
    /// Bypass mode was requested on the command line but a settings file disables it.
    #[error(
        "bypassPermissions mode is disabled by {file} (permissions.disableBypassPermissionsMode); start without --dangerously-skip-permissions or pick another --permission-mode"
    )]
    BypassDisabled {
        /// The file that disables it.
        file: String,
    },
    /// [`crate::Permissions::denied_paths`] was given a relative root.
    #[error("cannot list the paths denied below {root}: roots must be absolute")]
    RelativeRoot {
        /// The root as given.
        root: PathBuf,
    },
    /// Listing the paths a rule denies would search too many directory entries.
    #[error(
        "listing the paths denied by {rule} would search more than {limit} directory entries below {dir}; anchor the rule to a path (for example Read(./.env) instead of Read(.env)) so its paths are named rather than searched for"
    )]
    DeniedPathsSearchTooLarge {
        /// The rule as written.
        rule: String,
        /// Where the search started.
        dir: PathBuf,
        /// The number of entries allowed.
        limit: usize,
    },
    /// A directory could not be listed while looking for the paths a rule denies.
    #[error("cannot list {dir} to find the paths denied by {rule}: {source}")]
    DeniedPathsUnreadable {
        /// The rule as written.
        rule: String,
        /// The directory.
        dir: PathBuf,
        /// Why it could not be listed.
        source: std::io::Error,
    },
}

/// Session facts that are not in settings files.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The original working directory (absolute).
    pub cwd: PathBuf,
    /// The user's home directory, for `~/` rules and critical-path checks.
    pub home: PathBuf,
    /// Mode from the command line; overrides `permissions.defaultMode`.
    pub mode: Option<Mode>,
    /// `--allowedTools` rules.
    pub allowed_tools: Vec<String>,
    /// `--disallowedTools` rules.
    pub disallowed_tools: Vec<String>,
    /// `--add-dir` directories.
    pub add_dirs: Vec<PathBuf>,
    /// Whether the workspace is trusted; project `allow` and `additionalDirectories` wait for it.
    pub trusted: bool,
}
