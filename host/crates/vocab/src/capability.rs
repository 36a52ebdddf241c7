//! Capabilities and grants: what a WASM component or a plugin's processes may reach.
//!
//! Two forms of the same words, one per side of the consent:
//! * [`Capabilities`]: as a plugin requests them and as the user consented to them, with paths
//!   as written (`${CLAUDE_PLUGIN_ROOT}/x`, `~/y`, project-relative);
//! * [`Grant`]: the same capabilities with every path resolved to an absolute one, which is
//!   all a sandbox is ever built from. [`Capabilities::resolve`] is the only way from one to
//!   the other, so every caller expands paths the same way.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// How a network grant for processes is written in [`Capabilities::net`]: the kernel cannot
/// limit a program to hosts, so it is every host.
pub const ANY_NETWORK: &str = "*";

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

impl FsGrant {
    /// Whether this grant covers `path` (absolute) for reading, or for writing if `write`:
    /// the path, normalised lexically, is the granted directory or below it, and writing
    /// needs a read-write grant. Symlinks are the resolver's business: the runtime checks the
    /// path it is about to open, after resolving it.
    pub fn allows(&self, path: &Path, write: bool) -> bool {
        (!write || self.write)
            && crate::paths::normalise_clamped(path)
                .starts_with(crate::paths::normalise_clamped(&self.path))
    }
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

    /// The set of granted capabilities as a small key (the runtime caches linkers per set).
    pub fn capability_set(&self) -> u8 {
        Capability::ALL
            .into_iter()
            .filter(|c| self.allows(*c))
            .fold(0, |acc, c| acc | c.bit())
    }
}

/// Access to one filesystem path. `write` implies `read`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FsAccess {
    /// Read only.
    Read,
    /// Read and write.
    Write,
}

/// One filesystem capability: a path (may start with `${CLAUDE_PLUGIN_ROOT}`,
/// `${CLAUDE_PLUGIN_DATA}`, `${CLAUDE_PROJECT_DIR}` or `~`, else absolute or project-relative)
/// and the access level.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct FsCapability {
    /// The path.
    pub path: String,
    /// The access level.
    pub access: FsAccess,
}

/// What one WASM component may do outside its sandbox.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Capabilities {
    /// Filesystem paths.
    #[serde(default)]
    pub fs: Vec<FsCapability>,
    /// Network origins, `http(s)://host[:port]`.
    #[serde(default)]
    pub net: Vec<String>,
    /// Environment variable names.
    #[serde(default)]
    pub env: Vec<String>,
    /// Executable names.
    #[serde(default)]
    pub exec: Vec<String>,
}

impl Capabilities {
    /// Whether nothing is requested.
    pub fn is_empty(&self) -> bool {
        self.fs.is_empty() && self.net.is_empty() && self.env.is_empty() && self.exec.is_empty()
    }

    /// Whether `self` allows everything in `other`.
    pub fn covers(&self, other: &Capabilities) -> bool {
        other.minus(self).is_empty()
    }

    /// What `self` asks for that `granted` does not allow.
    pub fn minus(&self, granted: &Capabilities) -> Capabilities {
        let fs = self
            .fs
            .iter()
            .filter(|c| {
                !granted
                    .fs
                    .iter()
                    .any(|g| g.path == c.path && g.access >= c.access)
            })
            .cloned()
            .collect();
        let diff = |a: &[String], b: &[String]| {
            a.iter()
                .filter(|x| !b.contains(x))
                .cloned()
                .collect::<Vec<_>>()
        };
        Capabilities {
            fs,
            net: diff(&self.net, &granted.net),
            env: diff(&self.env, &granted.env),
            exec: diff(&self.exec, &granted.exec),
        }
    }
}

impl fmt::Display for Capabilities {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_empty() {
            return f.write_str("(no capabilities)");
        }
        let mut parts = Vec::new();
        for c in &self.fs {
            parts.push(format!(
                "fs {} {}",
                match c.access {
                    FsAccess::Read => "read",
                    FsAccess::Write => "read+write",
                },
                c.path
            ));
        }
        parts.extend(self.net.iter().map(|n| {
            if n == ANY_NETWORK {
                "network (every host)".to_string()
            } else {
                format!("net {n}")
            }
        }));
        parts.extend(self.env.iter().map(|n| format!("env {n}")));
        parts.extend(self.exec.iter().map(|n| format!("exec {n}")));
        f.write_str(&parts.join(", "))
    }
}

/// The directories a requested path may be written relative to (see [`Capabilities::resolve`]).
#[derive(Debug, Clone, Copy)]
pub struct GrantRoots<'a> {
    /// `${CLAUDE_PLUGIN_ROOT}`.
    pub plugin_root: &'a Path,
    /// `${CLAUDE_PLUGIN_DATA}`.
    pub data_dir: &'a Path,
    /// `${CLAUDE_PROJECT_DIR}`, and what a relative path is relative to.
    pub project: &'a Path,
    /// What `~/` stands for; `None` when there is no home, and then `~/x` is taken as the
    /// project-relative path `~/x`.
    pub home: Option<&'a Path>,
}

impl Capabilities {
    /// The grant a sandbox is built from: each `fs` path with `${CLAUDE_PLUGIN_ROOT}`,
    /// `${CLAUDE_PLUGIN_DATA}` and `${CLAUDE_PROJECT_DIR}` substituted, a leading `~/` taken
    /// from the home directory, and any other relative path joined to the project.
    pub fn resolve(&self, roots: &GrantRoots<'_>) -> Grant {
        let expand = |p: &str| -> PathBuf {
            let p = p
                .replace(
                    "${CLAUDE_PLUGIN_ROOT}",
                    &roots.plugin_root.display().to_string(),
                )
                .replace(
                    "${CLAUDE_PLUGIN_DATA}",
                    &roots.data_dir.display().to_string(),
                )
                .replace(
                    "${CLAUDE_PROJECT_DIR}",
                    &roots.project.display().to_string(),
                );
            match (p.strip_prefix("~/"), roots.home) {
                (Some(rest), Some(h)) => h.join(rest),
                _ => roots.project.join(p),
            }
        };
        Grant {
            fs: self
                .fs
                .iter()
                .map(|f| FsGrant {
                    path: expand(&f.path),
                    write: matches!(f.access, FsAccess::Write),
                })
                .collect(),
            net: self.net.clone(),
            env: self.env.clone(),
            exec: self.exec.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minus_and_covers() {
        let req = Capabilities {
            fs: vec![FsCapability {
                path: "/a".into(),
                access: FsAccess::Write,
            }],
            net: vec!["https://x.dev".into()],
            env: vec!["HOME".into()],
            exec: vec![],
        };
        let mut g = req.clone();
        assert!(g.covers(&req));
        g.fs[0].access = FsAccess::Read;
        let d = req.minus(&g);
        assert_eq!(d.fs.len(), 1);
        assert!(d.net.is_empty());
        assert!(!g.covers(&req));
    }

    #[test]
    fn resolve_expands_every_root() {
        let fs = |path: &str, access| FsCapability {
            path: path.into(),
            access,
        };
        let caps = Capabilities {
            fs: vec![
                fs("${CLAUDE_PLUGIN_ROOT}/bin", FsAccess::Read),
                fs("${CLAUDE_PLUGIN_DATA}", FsAccess::Write),
                fs("${CLAUDE_PROJECT_DIR}/src", FsAccess::Read),
                fs("~/.cache", FsAccess::Write),
                fs("docs", FsAccess::Read),
                fs("/etc/hosts", FsAccess::Read),
            ],
            net: vec!["https://x.dev".into()],
            env: vec!["LANG".into()],
            exec: vec!["git".into()],
        };
        let roots = GrantRoots {
            plugin_root: Path::new("/p"),
            data_dir: Path::new("/d"),
            project: Path::new("/w"),
            home: Some(Path::new("/h")),
        };
        let g = caps.resolve(&roots);
        let got: Vec<(PathBuf, bool)> = g.fs.iter().map(|f| (f.path.clone(), f.write)).collect();
        let want = [
            ("/p/bin", false),
            ("/d", true),
            ("/w/src", false),
            ("/h/.cache", true),
            ("/w/docs", false),
            ("/etc/hosts", false),
        ]
        .map(|(p, w)| (PathBuf::from(p), w));
        assert_eq!(got, want);
        assert_eq!(
            (&g.net, &g.env, &g.exec),
            (&caps.net, &caps.env, &caps.exec)
        );
        let homeless = caps.resolve(&GrantRoots {
            home: None,
            ..roots
        });
        assert_eq!(homeless.fs[3].path, Path::new("/w/~/.cache"));
    }
}
