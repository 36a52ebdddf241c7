//! Deterministic sha256 digest of a plugin tree.
//!
//! Entries are visited in byte order of their `/`-separated relative paths. Each contributes one
//! record to a single sha256 stream:
//! * directory: `d <path>\n`
//! * file: `f <mode> <path> <sha256 of contents>\n`, where `<mode>` is `755` when any execute
//!   bit is set and `644` otherwise (so umask differences do not change the digest);
//! * symlink: `l <path> <link target>\n` (the link is not followed).
//!
//! `.git/` directories and the root `.orphaned_at` marker are excluded. The digest is lowercase
//! hex; a marketplace entry's `"sha256"` is compared with it.

use std::io::Read;
use std::path::Path;

use sha2::{Digest, Sha256};

/// Marker file Claude Code writes into an orphaned cache version.
pub const ORPHAN_MARKER: &str = ".orphaned_at";

/// Computes the digest of the tree at `root`.
pub fn tree_digest(root: &Path) -> std::io::Result<String> {
    let mut entries = Vec::new();
    walk(root, "", &mut entries)?;
    entries.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    let mut h = Sha256::new();
    for (rel, kind) in entries {
        let full = root.join(&rel);
        match kind {
            Kind::Dir => h.update(format!("d {rel}\n")),
            Kind::Link => {
                let t = std::fs::read_link(&full)?;
                h.update(format!("l {rel} {}\n", t.to_string_lossy()));
            }
            Kind::File => {
                let meta = std::fs::metadata(&full)?;
                let mode = if is_exec(&meta) { "755" } else { "644" };
                h.update(format!("f {mode} {rel} {}\n", file_sha256(&full)?));
            }
        }
    }
    Ok(hex::encode(h.finalize()))
}

/// The sha256 (lowercase hex) of one file's bytes. Opened without blocking, so a FIFO planted
/// in a tree is an error instead of a hang.
pub fn file_sha256(path: &Path) -> std::io::Result<String> {
    let mut f = crate::util::open_regular(path, false)?.ok_or_else(|| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file (a FIFO, socket or device?)",
        )
    })?;
    let mut fh = Sha256::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        fh.update(&buf[..n]);
    }
    Ok(hex::encode(fh.finalize()))
}

enum Kind {
    Dir,
    File,
    Link,
}

fn walk(dir: &Path, prefix: &str, out: &mut Vec<(String, Kind)>) -> std::io::Result<()> {
    for e in std::fs::read_dir(dir)? {
        let e = e?;
        let name = e.file_name().to_string_lossy().to_string();
        if name == ".git" || (prefix.is_empty() && name == ORPHAN_MARKER) {
            continue;
        }
        let rel = if prefix.is_empty() {
            name.clone()
        } else {
            format!("{prefix}/{name}")
        };
        let ft = e.file_type()?;
        if ft.is_symlink() {
            out.push((rel, Kind::Link));
        } else if ft.is_dir() {
            walk(&e.path(), &rel, out)?;
            out.push((rel, Kind::Dir));
        } else {
            out.push((rel, Kind::File));
        }
    }
    Ok(())
}

#[cfg(unix)]
pub(crate) fn is_exec(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt;
    meta.permissions().mode() & 0o111 != 0
}

#[cfg(not(unix))]
pub(crate) fn is_exec(_meta: &std::fs::Metadata) -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_and_sensitive() {
        let t = tempfile::tempdir().expect("tmp");
        std::fs::create_dir_all(t.path().join("a/b")).expect("mkdir");
        std::fs::write(t.path().join("a/b/x.txt"), "x").expect("w");
        std::fs::write(t.path().join("y"), "y").expect("w");
        let d1 = tree_digest(t.path()).expect("d");
        assert_eq!(d1, tree_digest(t.path()).expect("d"));
        std::fs::write(t.path().join(ORPHAN_MARKER), "1").expect("w");
        assert_eq!(d1, tree_digest(t.path()).expect("d"));
        std::fs::write(t.path().join("y"), "z").expect("w");
        assert_ne!(d1, tree_digest(t.path()).expect("d"));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::write(t.path().join("y"), "y").expect("w");
            assert_eq!(d1, tree_digest(t.path()).expect("d"));
            std::fs::set_permissions(t.path().join("y"), std::fs::Permissions::from_mode(0o755))
                .expect("chmod");
            assert_ne!(d1, tree_digest(t.path()).expect("d"));
        }
    }
}
