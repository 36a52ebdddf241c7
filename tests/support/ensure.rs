//! Committed generated files checked against their generator, in rust-analyzer's
//! `ensure_file_contents` style: the test regenerates them, and on any difference writes the
//! fresh files into the checkout and fails naming each one, so the fix is to re-run and
//! commit what changed.

#![allow(dead_code)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Fails (after rewriting them) unless the files under `committed` are exactly those under
/// `fresh`, byte for byte: a stale file is rewritten, a missing one added, an extra one removed.
/// `regen` is the command that regenerates them, for the message.
pub fn ensure_tree(fresh: &Path, committed: &Path, regen: &str) {
    let (want, have) = (files(fresh), files(committed));
    let mut stale = Vec::new();
    for rel in want.union(&have) {
        let (new, old) = (fresh.join(rel), committed.join(rel));
        match (std::fs::read(&new).ok(), std::fs::read(&old).ok()) {
            (Some(n), Some(o)) if n == o => {}
            (Some(n), _) => {
                if let Some(parent) = old.parent() {
                    std::fs::create_dir_all(parent)
                        .expect("create the directory of a generated file");
                }
                std::fs::write(&old, n).expect("write a generated file");
                stale.push(old);
            }
            (None, _) => {
                std::fs::remove_file(&old).expect("remove a file the generator no longer makes");
                stale.push(old);
            }
        }
    }
    fail_if_stale(&stale, regen);
}

/// Fails (after rewriting it) unless `file` holds exactly `contents`.
pub fn ensure_file(file: &Path, contents: &[u8], regen: &str) {
    if std::fs::read(file).ok().as_deref() == Some(contents) {
        return;
    }
    std::fs::write(file, contents).expect("write a generated file");
    fail_if_stale(&[file.to_path_buf()], regen);
}

fn fail_if_stale(stale: &[PathBuf], regen: &str) {
    if stale.is_empty() {
        return;
    }
    let list: Vec<String> = stale.iter().map(|p| format!("  {}", p.display())).collect();
    panic!(
        "generated files were stale and have been rewritten (the generator is `{regen}`):\n{}\n\
         re-run the test and commit them",
        list.join("\n")
    );
}

/// Paths of the regular files under `dir`, relative to it, skipping Python's caches.
fn files(dir: &Path) -> BTreeSet<PathBuf> {
    fn walk(base: &Path, dir: &Path, out: &mut BTreeSet<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let path = e.path();
            if e.file_name() == "__pycache__" {
                continue;
            }
            if path.is_dir() {
                walk(base, &path, out);
            } else if let Ok(rel) = path.strip_prefix(base) {
                out.insert(rel.to_path_buf());
            }
        }
    }
    let mut out = BTreeSet::new();
    walk(dir, dir, &mut out);
    out
}
