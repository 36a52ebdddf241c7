//! Names that become path segments under `$WARDEN_HOME/plugins/`, and the directories they name.
//!
//! A marketplace's `name` becomes `marketplaces/<name>` and `cache/<name>/`, an entry's `name`
//! `cache/<marketplace>/<name>/`, a version `cache/<marketplace>/<plugin>/<version>/`, and a
//! WASM component's name keys its grant. All of these come from files an attacker may write (a
//! marketplace someone added, a plugin it lists), so each is checked where it is read with
//! [`check_path_name`]: the safe alphabet is `[A-Za-z0-9._+-]`, starting with a letter or digit,
//! not ending in `.`, at most [`MAX_NAME_LEN`] bytes, and not a Windows device name (`CON`,
//! `nul.txt`, …). Every published name seen (all kebab-case) passes, and so do versions such as
//! `1.2.3+build`, `2.0.0-rc.1` or `2024.01.01`; `..`, `/`, `\`, absolute paths, NUL, spaces,
//! `@` (it separates `plugin@marketplace`) and `:` are refused.
//!
//! Skill, agent and command names never become paths: they are read from directory and file
//! names already inside the plugin, or from frontmatter used only as display and invocation
//! names, where Claude Code accepts spaces and `/`; they are not checked here.
//!
//! A valid name is not enough when the directory it names already exists: [`child_dir`] also
//! checks, by resolved path, that every directory on the way from the state root is a real
//! directory and not a symlink, so `marketplaces/<name>` is always a direct child of
//! `marketplaces/` on disk and never somewhere a planted link points to.

use std::path::{Path, PathBuf};

/// Longest accepted name, in bytes.
pub const MAX_NAME_LEN: usize = 128;

/// Device names Windows reserves in every directory, with or without an extension.
const WINDOWS_DEVICES: &[&str] = &[
    "con", "prn", "aux", "nul", "com0", "com1", "com2", "com3", "com4", "com5", "com6", "com7",
    "com8", "com9", "lpt0", "lpt1", "lpt2", "lpt3", "lpt4", "lpt5", "lpt6", "lpt7", "lpt8", "lpt9",
    "conin$", "conout$",
];

/// Checks that `name` is safe as one path segment; the error says why not, for a message that
/// also names the file and field it came from.
pub fn check_path_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("must not be empty".into());
    }
    if name.len() > MAX_NAME_LEN {
        return Err(format!(
            "is {} bytes long; at most {MAX_NAME_LEN} are allowed",
            name.len()
        ));
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '+' | '-')))
    {
        let shown = if c.is_control() {
            format!("{:?}", c)
        } else {
            format!("`{c}`")
        };
        return Err(format!(
            "contains {shown}; use only letters, digits, `.`, `_`, `+` and `-` (kebab-case is recommended)"
        ));
    }
    if !name.starts_with(|c: char| c.is_ascii_alphanumeric()) {
        return Err("must start with a letter or digit".into());
    }
    if name.ends_with('.') {
        return Err("must not end with `.`".into());
    }
    let stem = name.split('.').next().unwrap_or(name).to_ascii_lowercase();
    if WINDOWS_DEVICES.contains(&stem.as_str()) {
        return Err(format!(
            "is the reserved Windows device name `{stem}`; choose another name"
        ));
    }
    Ok(())
}

/// Why a directory under the state root cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum UnsafePath {
    /// The name is not a safe path segment.
    #[error("name `{name}` {reason}")]
    Name {
        /// The name.
        name: String,
        /// Why it is refused.
        reason: String,
    },
    /// A directory on the way is a symlink or not a directory.
    #[error(
        "{} is a symlink or not a directory; Warden only writes through real directories under {}. Remove it",
        path.display(),
        root.display()
    )]
    NotADirectory {
        /// The offending path.
        path: PathBuf,
        /// The state root.
        root: PathBuf,
    },
    /// The resolved path is not below the resolved root.
    #[error("{} resolves outside {}", path.display(), root.display())]
    Outside {
        /// The path.
        path: PathBuf,
        /// The state root.
        root: PathBuf,
    },
    /// A filesystem call failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

/// `root/segments[0]/…/segments[n-1]`, where `root` is resolved (so a symlinked Warden home
/// still works) and every segment is a [`check_path_name`] name.
///
/// Every directory between `root` and the last segment must be a real directory; with `create`
/// missing ones are created, without it the path is returned as it would be. The last segment
/// may be absent, a file or a directory, but not a symlink. The result is therefore exactly where
/// its name says on disk, and renaming onto it or deleting it touches nothing else.
pub fn child_dir(root: &Path, segments: &[&str], create: bool) -> Result<PathBuf, UnsafePath> {
    for s in segments {
        check_path_name(s).map_err(|reason| UnsafePath::Name {
            name: (*s).to_string(),
            reason,
        })?;
    }
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| UnsafePath::Io { path, source }
    };
    if create {
        std::fs::create_dir_all(root).map_err(io(root))?;
    }
    let real_root = match root.canonicalize() {
        Ok(r) => r,
        Err(e) if !create && e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(segments.iter().fold(root.to_path_buf(), |p, s| p.join(s)));
        }
        Err(e) => return Err(io(root)(e)),
    };
    let mut p = real_root.clone();
    let mut exists = true;
    for (i, s) in segments.iter().enumerate() {
        p.push(s);
        if !exists {
            continue;
        }
        let last = i + 1 == segments.len();
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() || (!last && !m.is_dir()) => {
                return Err(UnsafePath::NotADirectory {
                    path: p,
                    root: real_root,
                });
            }
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                if create && !last {
                    std::fs::create_dir(&p).map_err(io(&p))?;
                } else {
                    exists = false;
                }
            }
            Err(e) => return Err(io(&p)(e)),
        }
    }
    if let Some(parent) = p.parent()
        && exists
        && parent.exists()
    {
        let rp = parent.canonicalize().map_err(io(parent))?;
        if !rp.starts_with(&real_root) {
            return Err(UnsafePath::Outside {
                path: p,
                root: real_root,
            });
        }
    }
    Ok(p)
}

/// Whether `path` resolves to a location strictly below `root` (both resolved).
pub fn resolves_below(root: &Path, path: &Path) -> bool {
    match (root.canonicalize(), path.canonicalize()) {
        (Ok(r), Ok(p)) => p != r && p.starts_with(&r),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn safe_and_unsafe_names() {
        for ok in [
            "my-plugin",
            "1.2.3+build",
            "2024.01.01",
            "2.0.0-rc.1",
            "v1.5.5",
            "a_b",
            "Console",
            "con-tool",
            "nullable",
        ] {
            assert!(check_path_name(ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            ".",
            "..",
            "../../../victim",
            "/abs",
            "a/b",
            "a\\b",
            "a\0b",
            "-rf",
            ".hidden",
            "name.",
            "CON",
            "nul",
            "aux.json",
            "Lpt1",
            "a b",
            "p@m",
            "c:",
        ] {
            assert!(check_path_name(bad).is_err(), "{bad:?}");
        }
        assert!(check_path_name(&"a".repeat(MAX_NAME_LEN)).is_ok());
        assert!(check_path_name(&"a".repeat(MAX_NAME_LEN + 1)).is_err());
    }

    #[cfg(unix)]
    #[test]
    fn symlinked_components_are_refused() {
        let t = tempfile::tempdir().expect("tmp");
        let root = t.path().join("root");
        let victim = t.path().join("victim");
        std::fs::create_dir_all(&root).expect("mkdir");
        std::fs::create_dir_all(&victim).expect("mkdir");
        std::os::unix::fs::symlink(&victim, root.join("link")).expect("ln");
        assert!(matches!(
            child_dir(&root, &["link"], false),
            Err(UnsafePath::NotADirectory { .. })
        ));
        assert!(matches!(
            child_dir(&root, &["link", "x"], true),
            Err(UnsafePath::NotADirectory { .. })
        ));
        assert!(!victim.join("x").exists());
        let p = child_dir(&root, &["a", "b"], true).expect("ok");
        assert_eq!(p, root.canonicalize().expect("c").join("a/b"));
        assert!(root.join("a").is_dir() && !root.join("a/b").exists());
        assert!(matches!(
            child_dir(&root, &[".."], true),
            Err(UnsafePath::Name { .. })
        ));
    }
}
