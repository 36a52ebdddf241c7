//! What to tell the user when a confined program was refused reading a path that only the
//! readable list keeps from it: a toolchain or tool directory outside the defaults
//! ([`SYSTEM_READABLE`], [`HOME_READABLE`]), such as `/srv/toolchain/bin/cc` or
//! `~/.local/share/foo`. Such a path is nobody's secret and no plugin's business, so the fix
//! is the user's `sandbox.readablePaths` setting, which opens it to every program; the hint
//! gives the exact JSON to add.
//!
//! Paths where the readable list is not the reason, or where opening them would be wrong, get
//! no hint: credential stores ([`HOME_DENIED`]), the home's `.config`, Claude Code's and
//! Warden's directories, other users' homes, temporary, runtime, device and mount trees, and
//! the system trees that are readable already (a refusal there comes from a deny rule).

use std::path::{Component, Path, PathBuf};

use crate::{HOME_DENIED, HOME_READABLE, SYSTEM_READABLE};

/// Top-level directories whose contents are not toolchains: per-user, temporary, runtime,
/// device or removable trees.
const NOT_TOOLCHAINS: &[&str] = &[
    "home",
    "root",
    "tmp",
    "var",
    "run",
    "proc",
    "sys",
    "dev",
    "mnt",
    "media",
    "boot",
    "lost+found",
];

/// Directories under the home that hold configuration or an agent's state, never a toolchain.
const HOME_PRIVATE: &[&str] = &[".config", ".claude", ".warden", ".local/state"];

/// Components that start an install prefix's contents (`<prefix>/bin/cc`): the prefix is what
/// to make readable.
const PREFIX_PARTS: &[&str] = &["bin", "sbin", "lib", "lib64", "libexec", "share", "include"];

/// The directory to add to `sandbox.readablePaths` so that programs may read `path`, as the
/// setting spells it (`~/…` under `home`), or `None` when the setting is not the fix (see the
/// module docs).
pub fn readable_dir(path: &Path, home: Option<&Path>) -> Option<String> {
    if !path.is_absolute()
        || path
            .components()
            .any(|c| matches!(c, Component::ParentDir | Component::CurDir))
        || SYSTEM_READABLE.iter().any(|s| path.starts_with(s))
    {
        return None;
    }
    if let Some(home) = home.filter(|h| h.is_absolute() && *h != Path::new("/"))
        && let Ok(rel) = path.strip_prefix(home)
    {
        let covered = |list: &[&str]| list.iter().any(|d| rel.starts_with(d));
        if covered(HOME_DENIED) || covered(HOME_PRIVATE) || covered(HOME_READABLE) {
            return None;
        }
        let parts: Vec<&str> = rel.iter().filter_map(|p| p.to_str()).collect();
        // A tool's directory: `~/.local/share/<a>`, `~/.local/<a>`, `~/.<a>`, each only when
        // the refused path lies below it (a file directly in the home is the user's own).
        let depth = match parts.as_slice() {
            [".local", "share", _, _, ..] => 3,
            [".local", _, _, ..] => 2,
            [first, _, ..] if first.starts_with('.') => 1,
            _ => return None,
        };
        return Some(format!("~/{}", parts[..depth].join("/")));
    }
    let parts: Vec<&str> = path.iter().skip(1).filter_map(|p| p.to_str()).collect();
    match parts.first() {
        None => return None,
        Some(top) if NOT_TOOLCHAINS.contains(top) => return None,
        Some(_) => {}
    }
    let dir: PathBuf = match parts.iter().position(|p| PREFIX_PARTS.contains(p)) {
        Some(i) if i > 0 => std::iter::once("/")
            .chain(parts[..i].iter().copied())
            .collect(),
        _ if path.is_dir() => path.to_path_buf(),
        _ => path.parent()?.to_path_buf(),
    };
    if dir == Path::new("/") {
        return None;
    }
    Some(dir.display().to_string())
}

/// The hint for a read of `path` refused because it is outside the readable list: the setting
/// and the JSON to put in the user's settings, or `None` (see [`readable_dir`]).
pub fn readable_paths_hint(path: &Path, home: Option<&Path>) -> Option<String> {
    let dir = readable_dir(path, home)?;
    Some(format!(
        "to let programs read it, add it to `sandbox.readablePaths` in your user settings (settings.json in Warden's home): {{\"sandbox\": {{\"readablePaths\": [{}]}}}}",
        json_string(&dir)
    ))
}

/// What programs print when the kernel refused them a path.
const REFUSED: &[&str] = &["Permission denied", "permission denied", "EACCES"];

/// A line for each existing path a failed program's `stderr` says it was refused, where
/// [`readable_paths_hint`] has a hint: `warden: the sandbox refused reading <path>; <hint>`.
/// A path that does not exist was being created, which the setting would not allow.
pub fn refusal_hints(stderr: &str, home: Option<&Path>) -> Vec<String> {
    let mut seen = std::collections::BTreeSet::new();
    let mut out = Vec::new();
    for line in stderr
        .lines()
        .filter(|l| REFUSED.iter().any(|r| l.contains(r)))
    {
        for word in line.split(|c: char| c.is_whitespace() || matches!(c, '\'' | '"' | '`')) {
            let word = word
                .trim_start_matches(['(', '['])
                .trim_end_matches([':', ',', ';', '.', ')', ']']);
            let path = Path::new(word);
            if !word.starts_with('/')
                || path.symlink_metadata().is_err()
                || !seen.insert(path.to_path_buf())
            {
                continue;
            }
            if let Some(hint) = readable_paths_hint(path, home) {
                out.push(format!(
                    "warden: the sandbox refused reading {}; {hint}",
                    path.display()
                ));
            }
        }
    }
    out
}

/// `s` as a JSON string literal.
fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toolchain_paths_outside_the_defaults_get_their_directory() {
        let home = Some(Path::new("/home/u"));
        let dir = |p: &str| readable_dir(Path::new(p), home);
        assert_eq!(
            dir("/srv/toolchain/bin/cc").as_deref(),
            Some("/srv/toolchain")
        );
        assert_eq!(
            dir("/toolchains/zig/lib/std/std.zig").as_deref(),
            Some("/toolchains/zig")
        );
        assert_eq!(
            dir("/home/u/.local/share/foo/bin/x").as_deref(),
            Some("~/.local/share/foo")
        );
        assert_eq!(
            dir("/home/u/.local/share/foo/x").as_deref(),
            Some("~/.local/share/foo")
        );
        assert_eq!(dir("/home/u/.local/opt/x").as_deref(), Some("~/.local/opt"));
        assert_eq!(
            dir("/home/u/.sdkman/candidates/java").as_deref(),
            Some("~/.sdkman")
        );
    }

    #[test]
    fn secrets_private_and_readable_trees_get_none() {
        let home = Some(Path::new("/home/u"));
        for p in [
            "/home/u/.ssh/id_rsa",
            "/home/u/.aws/credentials",
            "/home/u/.config/app/token",
            "/home/u/.claude/settings.json",
            "/home/u/.local/share/keyrings/login.keyring",
            "/home/u/.cargo/bin/cargo",
            "/home/u/notes.txt",
            "/home/u/Documents/a/b",
            "/home/other/.local/share/foo/x",
            "/tmp/x/y",
            "/opt/x y",
            "/usr/local/bin/x",
            "/etc/shadow",
            "relative/bin/x",
            "/srv/../etc/x",
        ] {
            assert_eq!(readable_dir(Path::new(p), home), None, "{p}");
        }
    }

    #[test]
    fn refusals_in_stderr_name_existing_paths_once() {
        let t = tempfile::tempdir().expect("tempdir");
        let home = t.path().join("home");
        let tool = home.join(".local/share/foo/x");
        std::fs::create_dir_all(tool.parent().expect("parent")).expect("mkdir");
        std::fs::write(&tool, "x").expect("write");
        let stderr = format!(
            "cat: {0}: Permission denied\nsh: '{0}': Permission denied\ncat: {1}: Permission denied\nok\n",
            tool.display(),
            home.join(".local/share/foo/new").display()
        );
        assert_eq!(
            refusal_hints(&stderr, Some(&home)),
            [format!(
                "warden: the sandbox refused reading {}; to let programs read it, add it to `sandbox.readablePaths` in your user settings (settings.json in Warden's home): {{\"sandbox\": {{\"readablePaths\": [\"~/.local/share/foo\"]}}}}",
                tool.display()
            )]
        );
        assert!(refusal_hints("cat: x: No such file or directory\n", Some(&home)).is_empty());
    }

    #[test]
    fn the_hint_is_the_json_to_add() {
        assert_eq!(
            readable_paths_hint(Path::new("/srv/tc \"x\"/bin/cc"), None).as_deref(),
            Some(
                "to let programs read it, add it to `sandbox.readablePaths` in your user settings (settings.json in Warden's home): {\"sandbox\": {\"readablePaths\": [\"/srv/tc \\\"x\\\"\"]}}"
            )
        );
    }
}
