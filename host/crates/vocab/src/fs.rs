//! The two file operations every layer writes its state with, done one way: a file replaced
//! atomically, and a directory only its user may read.

use std::io::Write as _;
use std::path::Path;

/// Writes `bytes` to `path` atomically with permission bits `0o600`: see [`write_atomic_mode`].
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_atomic_mode(path, bytes, 0o600, false)
}

/// Writes `bytes` to `path` through a new file in the same directory (created if missing),
/// synced and renamed over it, so a reader sees the old content or the new, never a part.
/// The new file has permission bits `mode`, or with `keep_mode` those of the file it replaces
/// when there is one. The temporary file is removed when anything fails.
pub fn write_atomic_mode(
    path: &Path,
    bytes: &[u8],
    mode: u32,
    keep_mode: bool,
) -> std::io::Result<()> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(
        ".{name}.{}-{}.tmp",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    #[cfg(unix)]
    let mode = {
        use std::os::unix::fs::PermissionsExt as _;
        match std::fs::metadata(path) {
            Ok(m) if keep_mode => m.permissions().mode() & 0o7777,
            _ => mode,
        }
    };
    #[cfg(not(unix))]
    let _ = (mode, keep_mode);
    let mut opts = std::fs::OpenOptions::new();
    // `create_new` refuses a file or link already at the temporary name.
    opts.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        opts.mode(mode);
    }
    let result = (|| {
        let mut f = opts.open(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Creates `dir` and any missing parents with permission bits `0o700`, and sets `dir`'s own
/// bits to `0o700` when it already existed: the directory is readable by its user alone
/// whoever made it first.
pub fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    let mut b = std::fs::DirBuilder::new();
    b.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut b, 0o700);
    b.create(dir)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt as _;

    fn mode(p: &Path) -> u32 {
        std::fs::metadata(p).expect("stat").permissions().mode() & 0o7777
    }

    #[test]
    fn write_atomic_replaces_and_leaves_no_temporary() {
        let d = tempfile::tempdir().expect("tempdir");
        let p = d.path().join("sub/state.json");
        write_atomic(&p, b"one").expect("first write");
        write_atomic(&p, b"two").expect("second write");
        assert_eq!(std::fs::read(&p).expect("read"), b"two");
        assert_eq!(mode(&p), 0o600);
        let names: Vec<_> = std::fs::read_dir(p.parent().expect("parent"))
            .expect("list")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(names, ["state.json"]);
    }

    #[test]
    fn write_atomic_mode_keeps_the_replaced_files_bits() {
        let d = tempfile::tempdir().expect("tempdir");
        let p = d.path().join("f");
        write_atomic_mode(&p, b"a", 0o640, true).expect("new file");
        assert_eq!(mode(&p), 0o640);
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o604)).expect("chmod");
        write_atomic_mode(&p, b"b", 0o600, true).expect("kept");
        assert_eq!(mode(&p), 0o604);
        write_atomic_mode(&p, b"c", 0o600, false).expect("reset");
        assert_eq!(mode(&p), 0o600);
    }

    #[test]
    fn private_dir_is_private_even_when_it_existed() {
        let d = tempfile::tempdir().expect("tempdir");
        let p = d.path().join("a/b");
        create_private_dir(&p).expect("create");
        assert_eq!(mode(&p), 0o700);
        assert_eq!(mode(&d.path().join("a")), 0o700);
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        create_private_dir(&p).expect("again");
        assert_eq!(mode(&p), 0o700);
    }
}
