//! Path rule anchoring (spec 2.4) and lexical path handling.

use std::path::{Component, Path, PathBuf};

/// Where relative parts of a path rule are anchored.
#[derive(Debug, Clone)]
pub struct Anchors<'a> {
    /// The original working directory (`path` and `./path`).
    pub cwd: &'a Path,
    /// The user's home (`~/path`).
    pub home: &'a Path,
    /// The settings source's root (`/path`).
    pub source_root: &'a Path,
}

/// Translates one path-rule specifier into absolute gitignore-style globs.
///
/// `any_depth_dirs` selects the deny/ask reading of single-segment directory patterns
/// (`src/**` matches `src` at any depth) instead of the allow reading (`<cwd>/src/**` only).
pub fn rule_globs(spec: &str, anchors: &Anchors<'_>, any_depth_dirs: bool) -> Vec<String> {
    let spec = spec.trim().replace('\\', "/");
    // A drive path is absolute: give it the `//` anchor.
    let spec = windows_to_posix(&spec)
        .map(|w| format!("/{w}"))
        .unwrap_or(spec);
    let (base, rel): (String, &str) = if let Some(rest) = spec.strip_prefix("//") {
        (String::new(), rest)
    } else if spec == "~" {
        (escaped(anchors.home), "")
    } else if let Some(rest) = spec.strip_prefix("~/") {
        (escaped(anchors.home), rest)
    } else if let Some(rest) = spec.strip_prefix('/') {
        (escaped(anchors.source_root), rest)
    } else {
        (
            escaped(anchors.cwd),
            spec.strip_prefix("./").unwrap_or(&spec),
        )
    };
    let base = base.trim_end_matches('/').to_string();
    let rel = rel.trim_end_matches('/');
    if rel.is_empty() {
        return vec![root_fix(base.clone()), root_fix(format!("{base}/**"))];
    }
    let anchored_in_text =
        spec.starts_with('/') || spec.starts_with("~/") || spec.starts_with("./");
    let segments: Vec<&str> = rel.split('/').collect();
    let body = if !anchored_in_text && !rel.contains('/') {
        // A bare name matches at any depth below its anchor, as in .gitignore.
        format!("{base}/**/{rel}")
    } else if !anchored_in_text
        && any_depth_dirs
        && segments.len() == 2
        && segments[1] == "**"
        && !segments[0].contains("**")
    {
        format!("{base}/**/{rel}")
    } else {
        format!("{base}/{rel}")
    };
    let mut out = vec![root_fix(body.clone())];
    if !body.ends_with("/**") {
        // Matching a directory covers everything inside it.
        out.push(root_fix(format!("{body}/**")));
    }
    out
}

fn root_fix(s: String) -> String {
    if s.is_empty() { "/".to_string() } else { s }
}

fn escaped(p: &Path) -> String {
    globset::escape(&p.to_string_lossy())
}

/// `C:/Users/a` → `/c/Users/a`, so Windows-style rules match POSIX paths.
fn windows_to_posix(s: &str) -> Option<String> {
    let b = s.as_bytes();
    if b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':' && (b.len() == 2 || b[2] == b'/')
    {
        Some(format!(
            "/{}{}",
            (b[0] as char).to_ascii_lowercase(),
            &s[2..]
        ))
    } else {
        None
    }
}

/// Resolves `p` against `cwd` (and `~` against `home`) and removes `.`/`..` lexically,
/// without touching the filesystem.
pub fn resolve(p: &str, cwd: &Path, home: &Path) -> PathBuf {
    let joined = if p == "~" {
        home.to_path_buf()
    } else if let Some(rest) = p.strip_prefix("~/") {
        home.join(rest)
    } else if let Some(w) = windows_to_posix(&p.replace('\\', "/")) {
        PathBuf::from(w)
    } else {
        cwd.join(p)
    };
    normalise(&joined)
}

/// Removes `.` and `..` components lexically.
pub fn normalise(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    if out.as_os_str().is_empty() {
        PathBuf::from("/")
    } else {
        out
    }
}

/// Directory names under which writes are never auto-approved (spec 2.6).
const PROTECTED_DIRS: &[&str] = &[
    ".git",
    ".vscode",
    ".idea",
    ".husky",
    ".cargo",
    ".devcontainer",
    ".yarn",
    ".mvn",
    ".claude",
];

/// File names that are never auto-approved for writing (spec 2.6).
const PROTECTED_FILES: &[&str] = &[
    ".gitconfig",
    ".gitmodules",
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".zlogout",
    ".profile",
    ".envrc",
    ".npmrc",
    ".yarnrc",
    ".yarnrc.yml",
    ".pnp.cjs",
    ".pnp.loader.mjs",
    ".pnpmfile.cjs",
    "bunfig.toml",
    ".bunfig.toml",
    ".bazelrc",
    ".bazelversion",
    ".bazeliskrc",
    ".pre-commit-config.yaml",
    "lefthook.yml",
    "lefthook.yaml",
    ".lefthook.yml",
    ".lefthook.yaml",
    "lefthook-local.yml",
    "gradle-wrapper.properties",
    "maven-wrapper.properties",
    ".devcontainer.json",
    ".ripgreprc",
    "pyrightconfig.json",
    ".mcp.json",
    ".claude.json",
];

/// Whether writing `p` touches a protected directory or file.
pub fn is_protected(p: &Path) -> bool {
    let names: Vec<&str> = p
        .components()
        .filter_map(|c| c.as_os_str().to_str())
        .collect();
    for (i, n) in names.iter().enumerate() {
        if *n == ".claude" && names.get(i + 1) == Some(&"worktrees") {
            return false;
        }
        if PROTECTED_DIRS.contains(n) && i + 1 < names.len() {
            return true;
        }
        if *n == ".config" && names.get(i + 1) == Some(&"git") {
            return true;
        }
    }
    names
        .last()
        .is_some_and(|n| PROTECTED_FILES.contains(n) || PROTECTED_DIRS.contains(n))
}

/// Whether `p` is `dir` or below it.
pub fn is_within(p: &Path, dir: &Path) -> bool {
    p.starts_with(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn anchors() -> (PathBuf, PathBuf, PathBuf) {
        (
            PathBuf::from("/work/proj"),
            PathBuf::from("/home/u"),
            PathBuf::from("/src/root"),
        )
    }

    fn globs(spec: &str, deny: bool) -> Vec<String> {
        let (cwd, home, root) = anchors();
        rule_globs(
            spec,
            &Anchors {
                cwd: &cwd,
                home: &home,
                source_root: &root,
            },
            deny,
        )
    }

    #[test]
    fn anchors_follow_the_table() {
        assert_eq!(globs("//etc/passwd", false)[0], "/etc/passwd");
        assert_eq!(globs("~/.ssh/**", false)[0], "/home/u/.ssh/**");
        assert_eq!(globs("/src/**", false)[0], "/src/root/src/**");
        assert_eq!(globs("./docs/*.md", false)[0], "/work/proj/docs/*.md");
        assert_eq!(globs("docs/*.md", false)[0], "/work/proj/docs/*.md");
    }

    #[test]
    fn bare_names_match_at_any_depth() {
        assert_eq!(globs(".env", false)[0], "/work/proj/**/.env");
    }

    #[test]
    fn single_segment_dirs_depend_on_rule_kind() {
        assert_eq!(globs("src/**", false)[0], "/work/proj/src/**");
        assert_eq!(globs("src/**", true)[0], "/work/proj/**/src/**");
        assert_eq!(globs("a/b/**", true)[0], "/work/proj/a/b/**");
    }

    #[test]
    fn windows_paths_become_posix() {
        assert_eq!(globs("C:/Users/a/**", false)[0], "/c/Users/a/**");
        assert_eq!(
            resolve(r"C:\Users\a", Path::new("/x"), Path::new("/h")),
            PathBuf::from("/c/Users/a")
        );
    }

    #[test]
    fn resolution_is_lexical() {
        let r = resolve("../x/./y", Path::new("/a/b"), Path::new("/h"));
        assert_eq!(r, PathBuf::from("/a/x/y"));
        assert_eq!(
            resolve("~/f", Path::new("/a"), Path::new("/h")),
            PathBuf::from("/h/f")
        );
    }

    #[test]
    fn protected_paths() {
        assert!(is_protected(Path::new("/p/.git/config")));
        assert!(is_protected(Path::new("/p/.claude/settings.json")));
        assert!(!is_protected(Path::new("/p/.claude/worktrees/x/file")));
        assert!(is_protected(Path::new("/home/u/.bashrc")));
        assert!(is_protected(Path::new("/home/u/.config/git/config")));
        assert!(!is_protected(Path::new("/p/src/main.rs")));
    }
}
