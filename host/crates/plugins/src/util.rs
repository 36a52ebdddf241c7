//! Small helpers shared by the modules: JSON positions, edit distance, timestamps, atomic writes.

use std::path::Path;

/// 1-based (line, column) of the first `"key"` followed by `:` in `text`.
pub(crate) fn locate_key(text: &str, key: &str) -> Option<(usize, usize)> {
    find_key(text, key, 0).map(|at| line_col(text, at))
}

/// Byte offset of the first `"key"` followed by `:` at or after byte `from`.
fn find_key(text: &str, key: &str, mut from: usize) -> Option<usize> {
    let needle = format!("\"{key}\"");
    while let Some(i) = text.get(from..)?.find(&needle) {
        let at = from + i;
        let rest = text[at + needle.len()..].trim_start();
        if rest.starts_with(':') {
            return Some(at);
        }
        from = at + needle.len();
    }
    None
}

/// 1-based (line, column) of the last key of `path`, each key searched after the one before it
/// (`["mcpServers", "db", "url"]` finds the `url` of server `db`, not an earlier `url`).
pub(crate) fn locate_key_path(text: &str, path: &[&str]) -> Option<(usize, usize)> {
    let mut at = None;
    for key in path {
        let from = at.map_or(0, |a: usize| a + 1);
        at = Some(find_key(text, key, from)?);
    }
    at.map(|a| line_col(text, a))
}

/// The text a value was parsed from, so diagnostics can point at a key in it.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Src<'a> {
    /// The value did not come from a file of its own (a marketplace entry).
    None,
    /// JSON source.
    Json(&'a str),
    /// TOML source (`warden.toml`).
    Toml(&'a str),
}

impl<'a> Src<'a> {
    /// JSON source when there is text.
    pub(crate) fn json(text: Option<&'a str>) -> Self {
        text.map_or(Src::None, Src::Json)
    }

    /// 1-based (line, column) of the first place `key` is written as a key.
    pub(crate) fn pos(self, key: &str) -> Option<(usize, usize)> {
        match self {
            Src::None => None,
            Src::Json(t) => locate_key(t, key),
            Src::Toml(t) => locate_toml_key(t, key),
        }
    }

    /// "a table" or "an object", as the file's format calls a map.
    pub(crate) fn a_map(self) -> &'static str {
        match self {
            Src::Toml(_) => "a table",
            _ => "an object",
        }
    }

    /// The type name of `v` in the words of the file's format: a TOML author writes tables,
    /// not objects.
    pub(crate) fn type_name(self, v: &serde_json::Value) -> &'static str {
        match (self, v) {
            (Src::Toml(_), serde_json::Value::Object(_)) => "table",
            (Src::Toml(_), serde_json::Value::Number(n)) if n.is_f64() => "float",
            (Src::Toml(_), serde_json::Value::Number(_)) => "integer",
            _ => warden_config::json_type_name(v),
        }
    }
}

/// 1-based (line, column) of the first TOML key `key`: bare or quoted, in a table header
/// (`[a.key]`, `[[key]]`), a dotted key (`key.x = …`) or before `=` (also inside an inline
/// table), but not inside a value.
pub(crate) fn locate_toml_key(text: &str, key: &str) -> Option<(usize, usize)> {
    let quoted = format!("\"{key}\"");
    let mut line_start = 0;
    for line in text.split_inclusive('\n') {
        let code = line.split('#').next().unwrap_or("");
        for needle in [key, quoted.as_str()] {
            // An empty key (`"" = 1`) is only ever written quoted; searching for the empty
            // bare needle would match at every offset without advancing.
            if needle.is_empty() {
                continue;
            }
            let mut from = 0;
            while let Some(i) = code[from..].find(needle) {
                let at = from + i;
                let before = code[..at].trim_end().chars().next_back();
                let after = code[at + needle.len()..].trim_start().chars().next();
                let bare_edge = needle != key
                    || !code[..at]
                        .chars()
                        .next_back()
                        .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
                if bare_edge
                    && matches!(before, None | Some('[' | '.' | '{' | ','))
                    && matches!(after, Some('=' | '.' | ']'))
                {
                    return Some(line_col(text, line_start + at));
                }
                from = at + needle.len();
            }
        }
        line_start += line.len();
    }
    None
}

/// 1-based (line, column) of byte offset `at`; the column counts characters.
pub(crate) fn line_col(text: &str, at: usize) -> (usize, usize) {
    let before = &text[..at.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before
        .rsplit('\n')
        .next()
        .map(|s| s.chars().count())
        .unwrap_or(0)
        + 1;
    (line, col)
}

pub(crate) use warden_config::did_you_mean;

/// Whether `s` is kebab-case (`[a-z0-9]+(-[a-z0-9]+)*`).
pub(crate) fn is_kebab(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with('-')
        && !s.ends_with('-')
        && !s.contains("--")
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

/// The current UTC time as `2026-11-29T12:42:21.876Z`.
pub(crate) fn now_iso() -> String {
    let d = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let secs = d.as_secs() as i64;
    let ms = d.subsec_millis();
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Civil-from-days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = if month <= 2 { y + 1 } else { y };
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{ms:03}Z",
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60
    )
}

pub(crate) use warden_vocab::fs::write_atomic;

/// Moves the directory `new` to `dest`, replacing whatever directory is there, such that a
/// crash at any instant leaves either the old or the new directory at `dest`, never none. The
/// old directory ends up at `new`'s path (on Linux, by an atomic exchange) or at `aside`
/// (elsewhere: two renames, the second undone if it fails), both of which the caller places
/// in a scratch directory it removes.
pub(crate) fn swap_into_place(new: &Path, dest: &Path, aside: &Path) -> std::io::Result<()> {
    if std::fs::symlink_metadata(dest).is_err() {
        return std::fs::rename(new, dest);
    }
    #[cfg(target_os = "linux")]
    match exchange(new, dest) {
        Ok(()) => return Ok(()),
        // A filesystem without RENAME_EXCHANGE (some network and FUSE filesystems).
        Err(e) if matches!(e.raw_os_error(), Some(libc::EINVAL | libc::ENOSYS)) => {}
        Err(e) => return Err(e),
    }
    std::fs::rename(dest, aside)?;
    if let Err(e) = std::fs::rename(new, dest) {
        let _ = std::fs::rename(aside, dest);
        return Err(e);
    }
    Ok(())
}

/// `renameat2(a, b, RENAME_EXCHANGE)`: both paths must exist; they trade places atomically.
#[cfg(target_os = "linux")]
fn exchange(a: &Path, b: &Path) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c = |p: &Path| {
        std::ffi::CString::new(p.as_os_str().as_bytes())
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))
    };
    let (ca, cb) = (c(a)?, c(b)?);
    // SAFETY: both pointers are NUL-terminated strings that outlive the call; the call reads
    // them and changes nothing in this process's memory.
    let rc = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            ca.as_ptr(),
            libc::AT_FDCWD,
            cb.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Pretty JSON with a trailing newline.
pub(crate) fn to_json_bytes(v: &impl serde::Serialize) -> Vec<u8> {
    let mut out = serde_json::to_vec_pretty(v).unwrap_or_default();
    out.push(b'\n');
    out
}

/// Whether a relative path string escapes upwards (`..` segments).
pub(crate) fn has_parent_segment(s: &str) -> bool {
    s.split(['/', '\\']).any(|seg| seg == "..")
}

/// Replaces characters outside `[A-Za-z0-9_-]` by `replacement`.
pub(crate) fn sanitize(s: &str, replacement: char) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                replacement
            }
        })
        .collect()
}

/// Opens `path` for reading without blocking on a FIFO (and, unless `follow`, without following
/// a final symlink); `None` when what was opened is not a regular file.
pub(crate) fn open_regular(path: &Path, follow: bool) -> std::io::Result<Option<std::fs::File>> {
    let mut o = std::fs::OpenOptions::new();
    o.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        let nofollow = if follow { 0 } else { libc::O_NOFOLLOW };
        o.custom_flags(libc::O_NONBLOCK | nofollow);
    }
    #[cfg(not(unix))]
    let _ = follow;
    let f = o.open(path)?;
    Ok(f.metadata()?.is_file().then_some(f))
}

/// A file that could not be read within its size limit.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ReadLimitError {
    /// Reading failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// Not a regular file.
    #[error("not a regular file (a FIFO, socket or device?)")]
    NotAFile,
    /// Over the limit.
    #[error(
        "the file is {size} bytes, over the limit of {limit} bytes for this kind of file; it is not read"
    )]
    TooLarge {
        /// Its size (at least).
        size: u64,
        /// The limit.
        limit: u64,
    },
    /// Not UTF-8.
    #[error("the file is not valid UTF-8")]
    NotUtf8,
}

/// Reads a text file of at most `limit` bytes. The size is checked on the open handle before
/// reading, and no more than `limit + 1` bytes are ever read, so neither a huge file nor one
/// growing while it is read can make the process allocate more.
pub(crate) fn read_limited(path: &Path, limit: u64) -> Result<String, ReadLimitError> {
    use std::io::Read;
    let f = open_regular(path, true)?.ok_or(ReadLimitError::NotAFile)?;
    let size = f.metadata()?.len();
    if size > limit {
        return Err(ReadLimitError::TooLarge { size, limit });
    }
    let mut buf = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    f.take(limit + 1).read_to_end(&mut buf)?;
    if buf.len() as u64 > limit {
        return Err(ReadLimitError::TooLarge {
            size: buf.len() as u64,
            limit,
        });
    }
    String::from_utf8(buf).map_err(|_| ReadLimitError::NotUtf8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances_and_suggestions() {
        assert_eq!(warden_config::edit_distance("kitten", "sitting"), 3);
        assert_eq!(
            did_you_mean("descripton", &["description", "name"]),
            Some("description")
        );
        assert_eq!(
            did_you_mean("mcpServer", &["mcpServers", "commands"]),
            Some("mcpServers")
        );
        assert_eq!(did_you_mean("category", &["name", "hooks"]), None);
    }

    #[test]
    fn toml_positions() {
        let t = "[components.guard]\npath = \"world\" # world = 1\nhello_world = 2\n\n[[hooks.PreToolUse]]\nhooks = [{ type = \"wasm\", component = \"guard\" }]\n";
        assert_eq!(locate_toml_key(t, "guard"), Some((1, 13)));
        assert_eq!(locate_toml_key(t, "path"), Some((2, 1)));
        assert_eq!(locate_toml_key(t, "world"), None);
        assert_eq!(locate_toml_key(t, "hooks"), Some((5, 3)));
        assert_eq!(locate_toml_key(t, "component"), Some((6, 27)));
    }

    #[test]
    fn empty_toml_key_is_found_quoted_and_terminates() {
        assert_eq!(locate_toml_key("a = 1\n\"\" = 2\n", ""), Some((2, 1)));
        assert_eq!(locate_toml_key("a = 1\n", ""), None);
    }

    #[test]
    fn positions() {
        let t = "{\n  \"name\": 1,\n  \"x\": \"name\"\n}";
        assert_eq!(locate_key(t, "name"), Some((2, 3)));
        assert_eq!(locate_key(t, "x"), Some((3, 3)));
        let m = "{\"url\": 1, \"mcpServers\": {\"a\": {\"url\": 5},\n \"b\": {\"url\": 6}}}";
        assert_eq!(
            locate_key_path(m, &["mcpServers", "b", "url"]),
            Some((2, 8))
        );
        assert_eq!(
            locate_key_path(m, &["mcpServers", "a", "url"]),
            Some((1, 33))
        );
        assert_eq!(locate_key_path(m, &["mcpServers", "c"]), None);
        assert_eq!(locate_key_path(m, &[]), None);
        assert!(now_iso().ends_with('Z'));
        assert!(is_kebab("a-b1") && !is_kebab("A b") && !is_kebab("a--b"));
    }
}
