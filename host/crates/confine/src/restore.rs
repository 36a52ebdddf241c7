//! Write-protected paths: a copy before the call, put back after it.
//!
//! Landlock cannot keep `.git/config` unchanged while git works in `.git`: creating
//! `index.lock` there needs the right to create and remove entries in `.git`, and that right
//! also lets a process replace `config` (rename over it) or add a file to `.git/hooks` (it is
//! inherited by every directory below). So a protected path is copied when the process
//! starts and restored once every process of the call has ended; nothing the call did to it
//! outlives the call, which is what matters for files that later, unconfined programs obey.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::error::ConfineError;
use crate::policy::{expand, is_pattern};

#[derive(Debug, PartialEq, Eq)]
enum Node {
    Absent,
    File {
        data: Vec<u8>,
        mode: u32,
    },
    Link(PathBuf),
    Dir {
        mode: u32,
        entries: BTreeMap<OsString, Node>,
    },
    /// A socket, fifo or device: kept as is, not restorable.
    Other,
}

/// One protected path (or pattern) as it was before the call.
#[derive(Debug)]
pub(crate) struct Snapshot {
    path: PathBuf,
    /// For a pattern: the matches that existed, each with its content.
    matches: Vec<(PathBuf, Node)>,
    /// `(dev, ino)` of every directory above, to notice one being swapped for another.
    ancestors: Vec<(PathBuf, u64, u64)>,
    limit: u64,
}

fn read_node(
    path: &Path,
    budget: &mut u64,
    limit: u64,
    named: &Path,
) -> Result<Node, ConfineError> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Node::Absent),
        Err(e) => return Err(ConfineError::path(path, e)),
    };
    let too_large = || ConfineError::ProtectedTooLarge {
        path: named.to_path_buf(),
        limit,
    };
    let ft = meta.file_type();
    let mode = meta.permissions().mode() & 0o7777;
    if ft.is_symlink() {
        return Ok(Node::Link(
            std::fs::read_link(path).map_err(|e| ConfineError::path(path, e))?,
        ));
    }
    if ft.is_file() {
        *budget = budget.checked_sub(meta.len()).ok_or_else(too_large)?;
        let data = std::fs::read(path).map_err(|e| ConfineError::path(path, e))?;
        return Ok(Node::File { data, mode });
    }
    if ft.is_dir() {
        let mut entries = BTreeMap::new();
        for e in std::fs::read_dir(path).map_err(|e| ConfineError::path(path, e))? {
            let e = e.map_err(|e| ConfineError::path(path, e))?;
            *budget = budget.checked_sub(256).ok_or_else(too_large)?;
            entries.insert(e.file_name(), read_node(&e.path(), budget, limit, named)?);
        }
        return Ok(Node::Dir { mode, entries });
    }
    Ok(Node::Other)
}

fn ancestors(path: &Path) -> Vec<(PathBuf, u64, u64)> {
    path.ancestors()
        .skip(1)
        .filter_map(|a| {
            std::fs::symlink_metadata(a)
                .ok()
                .map(|m| (a.to_path_buf(), m.dev(), m.ino()))
        })
        .collect()
}

/// Copies every protected path; `limit` bounds the bytes kept in all.
pub(crate) fn take(paths: &[PathBuf], limit: u64) -> Result<Vec<Snapshot>, ConfineError> {
    let mut budget = limit;
    let mut out = Vec::new();
    for p in paths {
        if !p.is_absolute() {
            return Err(ConfineError::Relative(p.clone()));
        }
        let mut matches = Vec::new();
        for m in expand(p) {
            let node = read_node(&m, &mut budget, limit, p)?;
            matches.push((m, node));
        }
        out.push(Snapshot {
            path: p.clone(),
            ancestors: ancestors(p),
            matches,
            limit,
        });
    }
    Ok(out)
}

fn remove(path: &Path) -> std::io::Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => std::fs::remove_dir_all(path),
        Ok(_) => std::fs::remove_file(path),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

fn create(path: &Path, node: &Node) -> std::io::Result<()> {
    match node {
        Node::Absent | Node::Other => Ok(()),
        Node::File { data, mode } => {
            // create_new never follows a symlink planted at `path`.
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(*mode)
                .open(path)?;
            f.write_all(data)?;
            f.set_permissions(std::fs::Permissions::from_mode(*mode))
        }
        Node::Link(target) => std::os::unix::fs::symlink(target, path),
        Node::Dir { mode, entries } => {
            std::fs::DirBuilder::new().mode(0o700).create(path)?;
            for (name, child) in entries {
                create(&path.join(name), child)?;
            }
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(*mode))
        }
    }
}

/// Whether `path` still holds what `node` recorded.
fn unchanged(path: &Path, node: &Node, limit: u64) -> bool {
    // Bounded, so a huge file written by the call is not read whole just to differ.
    let mut budget = limit;
    read_node(path, &mut budget, limit, path).is_ok_and(|now| now == *node)
}

impl Snapshot {
    /// Puts the path back as it was; returns whether anything had changed.
    pub(crate) fn restore(&self) -> Result<bool, ConfineError> {
        let fail = |reason: String| ConfineError::RestoreFailed {
            path: self.path.clone(),
            reason,
        };
        for (dir, dev, ino) in &self.ancestors {
            let same = std::fs::symlink_metadata(dir)
                .is_ok_and(|m| m.is_dir() && m.dev() == *dev && m.ino() == *ino);
            if !same {
                return Err(fail(format!("{} was replaced", dir.display())));
            }
        }
        let mut changed = false;
        for (p, node) in &self.matches {
            if *node == Node::Other || unchanged(p, node, self.limit) {
                continue;
            }
            changed = true;
            remove(p).map_err(|e| fail(e.to_string()))?;
            create(p, node).map_err(|e| fail(e.to_string()))?;
        }
        // A pattern also covers names that did not exist before: remove new matches.
        if is_pattern(&self.path) {
            for now in expand(&self.path) {
                if !self.matches.iter().any(|(p, _)| *p == now) {
                    changed = true;
                    remove(&now).map_err(|e| fail(e.to_string()))?;
                }
            }
        }
        Ok(changed)
    }
}

impl Snapshot {
    /// The protected path (or pattern) as the caller gave it.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }
}
