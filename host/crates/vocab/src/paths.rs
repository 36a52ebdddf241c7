//! Lexical path normalisation, in the two meanings the crates need. Neither touches the file
//! system, so neither resolves symlinks: callers that must follow links canonicalise first.

use std::path::{Component, Path, PathBuf};

/// `.` dropped and `..` popping the previous component, never above the first: `/a/../..`
/// is `/`, and a relative path that climbs out of itself (`a/../..`) is empty. For checks of
/// an absolute path against a granted or denied directory, where climbing above the root
/// must not be expressible.
pub fn normalise_clamped(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// `.` dropped and `..` folded into the previous component, but a `..` with nothing left to
/// fold in is kept (`../a/./b/..` is `../a`). For relative paths whose meaning depends on
/// where they are joined later, such as an `@import` in an instructions file.
pub fn normalise_keeping_leading_parents(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clamped_never_climbs_above_the_start() {
        let n = |p: &str| normalise_clamped(Path::new(p));
        assert_eq!(n("/a/./b/../c"), Path::new("/a/c"));
        assert_eq!(n("/a/../../.."), Path::new("/"));
        assert_eq!(n("/../etc"), Path::new("/etc"));
        assert_eq!(n("a/../.."), Path::new(""));
    }

    #[test]
    fn keeping_leading_parents_keeps_what_cannot_fold() {
        let n = |p: &str| normalise_keeping_leading_parents(Path::new(p));
        assert_eq!(n("../a/./b/.."), Path::new("../a"));
        assert_eq!(n("a/../../b"), Path::new("../b"));
        assert_eq!(n("/a/../b"), Path::new("/b"));
    }
}
