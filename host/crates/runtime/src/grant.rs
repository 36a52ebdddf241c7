//! What a component may reach: the capabilities a user granted to its plugin.

use std::fmt;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// One host capability, as named in grants and in the WIT package.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Capability {
    /// Files: `warden:plugin/fs`.
    Fs,
    /// Outgoing HTTP: `warden:plugin/http`.
    Net,
    /// Running programs: `warden:plugin/exec`.
    Exec,
    /// Environment variables: `warden:plugin/env`.
    Env,
}

impl Capability {
    /// Every capability.
    pub const ALL: [Capability; 4] = [
        Capability::Fs,
        Capability::Net,
        Capability::Exec,
        Capability::Env,
    ];

    /// The grant key (`fs`, `net`, `exec`, `env`).
    pub fn name(self) -> &'static str {
        match self {
            Capability::Fs => "fs",
            Capability::Net => "net",
            Capability::Exec => "exec",
            Capability::Env => "env",
        }
    }

    /// The WIT interface that carries it.
    pub fn interface(self) -> &'static str {
        match self {
            Capability::Fs => "warden:plugin/fs",
            Capability::Net => "warden:plugin/http",
            Capability::Exec => "warden:plugin/exec",
            Capability::Env => "warden:plugin/env",
        }
    }

    /// The capability an imported interface name (`warden:plugin/fs@0.1.0`) needs.
    pub fn for_import(import: &str) -> Option<Capability> {
        let unversioned = import.split('@').next().unwrap_or(import);
        Capability::ALL
            .into_iter()
            .find(|c| c.interface() == unversioned)
    }

    fn bit(self) -> u8 {
        match self {
            Capability::Fs => 1,
            Capability::Net => 2,
            Capability::Exec => 4,
            Capability::Env => 8,
        }
    }
}

impl fmt::Display for Capability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A directory a component may use.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct FsGrant {
    /// The directory (absolute). Everything below it is reachable, nothing above.
    pub path: PathBuf,
    /// Whether the component may create, change and remove files there.
    #[serde(default)]
    pub write: bool,
}

/// Everything a component may reach. The default grants nothing: no files, network,
/// environment or processes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Grant {
    /// Directories.
    #[serde(default)]
    pub fs: Vec<FsGrant>,
    /// URL patterns: `https://host[:port]`, with `*` as a whole host label or port.
    #[serde(default)]
    pub net: Vec<String>,
    /// Environment variable names.
    #[serde(default)]
    pub env: Vec<String>,
    /// Program names (`git`), matched on the resolved program's file name.
    #[serde(default)]
    pub exec: Vec<String>,
}

impl Grant {
    /// Whether the capability was granted at all.
    pub fn allows(&self, cap: Capability) -> bool {
        match cap {
            Capability::Fs => !self.fs.is_empty(),
            Capability::Net => !self.net.is_empty(),
            Capability::Exec => !self.exec.is_empty(),
            Capability::Env => !self.env.is_empty(),
        }
    }

    /// The set of granted capabilities as a small key (linkers are cached per set).
    pub(crate) fn capability_set(&self) -> u8 {
        Capability::ALL
            .into_iter()
            .filter(|c| self.allows(*c))
            .fold(0, |acc, c| acc | c.bit())
    }
}
