//! The user's home directory, looked up one way everywhere.

use std::path::PathBuf;

/// `$HOME`, unless it is unset or empty. An empty `HOME` is treated as no home, so `~` never
/// expands to a relative path. Callers that need an absolute home filter for that themselves.
pub fn home_dir() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
}
