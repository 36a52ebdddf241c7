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

/// The text one component of a rule glob stands for, or `None` if it holds a wildcard.
///
/// Undoes what rule globs use to quote literal text: `globset::escape` wraps each
/// metacharacter in a one-character class (`[*]`, `[[]`, `[]]`), and a backslash quotes
/// the character after it.
pub fn literal_component(c: &str) -> Option<String> {
    let mut out = String::with_capacity(c.len());
    let mut chars = c.chars();
    while let Some(ch) = chars.next() {
        match ch {
            '\\' => out.push(chars.next()?),
            '[' => {
                let mut ahead = chars.clone();
                match (ahead.next(), ahead.next()) {
                    // `[!]` and `[^]` would open a negated class, which escaping never writes.
                    (Some(x), Some(']')) if x != '!' && x != '^' => {
                        out.push(x);
                        chars = ahead;
                    }
                    _ => return None,
                }
            }
            '*' | '?' | ']' | '{' | '}' => return None,
            c => out.push(c),
        }
    }
    Some(out)
}

/// Splits an absolute rule glob into the directory its leading literal components name and
/// the components after it, which hold the first wildcard. `None` for a relative glob.
pub fn literal_prefix(glob: &str) -> Option<(PathBuf, Vec<&str>)> {
    let rest = glob.strip_prefix('/')?;
    let mut prefix = PathBuf::from("/");
    let mut parts = rest.split('/').filter(|c| !c.is_empty());
    let mut tail = Vec::new();
    for c in parts.by_ref() {
        match literal_component(c) {
            Some(lit) => prefix.push(lit),
            None => {
                tail.push(c);
                break;
            }
        }
    }
    tail.extend(parts);
    Some((prefix, tail))
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
    normalise(&join(p, cwd, home))
}

/// Makes `p` absolute against `cwd` (and `~` against `home`) but keeps its `.`/`..`
/// components: after a symlink, `..` climbs from the link's target, not from the link, so
/// [`real_path`] needs the path as written.
pub fn join(p: &str, cwd: &Path, home: &Path) -> PathBuf {
    if p == "~" {
        home.to_path_buf()
    } else if let Some(rest) = p.strip_prefix("~/") {
        home.join(rest)
    } else if let Some(w) = windows_to_posix(&p.replace('\\', "/")) {
        PathBuf::from(w)
    } else {
        cwd.join(p)
    }
}

/// How many symlinks [`real_path`] follows before giving up, as Linux's `ELOOP` limit.
const MAX_LINKS: usize = 40;

/// The outcome of [`real_path`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RealPath {
    /// The path with every symlink that exists resolved; components below the nearest
    /// existing ancestor are appended lexically.
    pub path: PathBuf,
    /// Some symlink was followed on the way.
    pub followed_link: bool,
    /// Every component exists.
    pub exists: bool,
}

/// Resolves symlinks in the absolute path `raw` the way the kernel would, like
/// `realpath -m`: `..` after a link climbs from its target, a missing component ends the
/// lookup and the rest is appended as written, and a dangling link resolves to its target.
///
/// `start` is a `(lexical, real)` pair for a directory already resolved: when `raw` lies
/// below `lexical`, the walk starts at `real` and only looks up the components beneath it.
///
/// This is not `std::fs::canonicalize`: that fails on paths that do not exist yet (a file
/// about to be written) and on dangling links, which are exactly the cases where knowing the
/// target matters, and it would look every component up again after the `symlink_metadata`
/// calls this walk needs anyway. One `lstat` per component is the whole cost; a path whose
/// first missing component comes early costs only that far.
///
/// Returns `None` when the links form a loop: such a path cannot be opened, and its target
/// cannot be named.
pub fn real_path(raw: &Path, start: Option<(&Path, &Path)>) -> Option<RealPath> {
    let (mut out, rest) = match start.and_then(|(lex, real)| {
        raw.strip_prefix(lex)
            .ok()
            .map(|rest| (real.to_path_buf(), rest))
    }) {
        Some(s) => s,
        None => (PathBuf::new(), raw),
    };
    // Pending components, last first, so a link's target can be pushed in front of the rest.
    let mut pending: Vec<Component<'_>> = rest.components().rev().collect();
    // Link targets are owned; their components are pushed as owned steps.
    let mut owned: Vec<Step> = Vec::new();
    let mut followed = 0usize;
    let mut missing = false;
    loop {
        let step = match owned.pop() {
            Some(s) => s,
            None => match pending.pop() {
                Some(c) => Step::from(c),
                None => break,
            },
        };
        match step {
            Step::Prefix(p) => out = PathBuf::from(p),
            Step::RootDir => {
                // A rooted path keeps the current drive prefix, if any (Windows `\\x`).
                let mut rooted = match out.components().next() {
                    Some(Component::Prefix(p)) => PathBuf::from(p.as_os_str()),
                    _ => PathBuf::new(),
                };
                rooted.push(Component::RootDir.as_os_str());
                out = rooted;
            }
            Step::Cur => {}
            Step::Parent => {
                out.pop();
            }
            Step::Name(n) => {
                out.push(&n);
                if missing {
                    continue;
                }
                match std::fs::symlink_metadata(&out) {
                    Ok(m) if m.file_type().is_symlink() => {
                        followed += 1;
                        if followed > MAX_LINKS {
                            return None;
                        }
                        // An unreadable link cannot be followed: treat it as the end of
                        // what exists rather than guess a target.
                        let Ok(target) = std::fs::read_link(&out) else {
                            missing = true;
                            continue;
                        };
                        out.pop();
                        owned.extend(target.components().rev().map(Step::from));
                    }
                    Ok(_) => {}
                    // Not found, not a directory, no permission: nothing below can be a link
                    // this process could follow either.
                    Err(_) => missing = true,
                }
            }
        }
    }
    if out.as_os_str().is_empty() {
        out = PathBuf::from("/");
    }
    Some(RealPath {
        path: out,
        followed_link: followed > 0,
        exists: !missing,
    })
}

/// One component still to walk in [`real_path`], owned so link targets can supply them.
#[derive(Debug)]
enum Step {
    Prefix(std::ffi::OsString),
    RootDir,
    Cur,
    Parent,
    Name(std::ffi::OsString),
}

impl From<Component<'_>> for Step {
    fn from(c: Component<'_>) -> Step {
        match c {
            Component::Prefix(p) => Step::Prefix(p.as_os_str().to_owned()),
            Component::RootDir => Step::RootDir,
            Component::CurDir => Step::Cur,
            Component::ParentDir => Step::Parent,
            Component::Normal(n) => Step::Name(n.to_owned()),
        }
    }
}

/// The existing paths bash's pathname expansion makes of the absolute `pattern`, visiting at
/// most `limit` directory entries (`None` past that, or when a component cannot be read as
/// a pattern). As bash does without `dotglob`, a wildcard component matches a name starting
/// with `.` only when it starts with `.` itself. Empty when nothing matches: bash then passes
/// the word as written.
pub fn expand_glob(pattern: &Path, limit: usize) -> Option<Vec<PathBuf>> {
    let mut current = vec![PathBuf::new()];
    let mut visited = 0usize;
    for c in pattern.components() {
        match c {
            Component::Prefix(_) => return None,
            Component::RootDir => current.iter_mut().for_each(|p| p.push("/")),
            Component::CurDir => {}
            Component::ParentDir => current.iter_mut().for_each(|p| p.push("..")),
            Component::Normal(n) => {
                let s = n.to_str()?;
                if !s.contains(['*', '?', '[']) {
                    current.iter_mut().for_each(|p| p.push(n));
                    continue;
                }
                let glob = globset::GlobBuilder::new(s)
                    .literal_separator(true)
                    .backslash_escape(true)
                    .build()
                    .ok()?
                    .compile_matcher();
                let mut next = Vec::new();
                for dir in &current {
                    let Ok(entries) = std::fs::read_dir(dir) else {
                        continue;
                    };
                    for e in entries {
                        visited += 1;
                        if visited > limit {
                            return None;
                        }
                        let Ok(e) = e else { continue };
                        let name = e.file_name();
                        // A name the matcher cannot read might match: nothing is known.
                        let ns = name.to_str()?;
                        if ns.starts_with('.') && !s.starts_with('.') {
                            continue;
                        }
                        if glob.is_match(ns) {
                            next.push(dir.join(&name));
                        }
                    }
                }
                current = next;
            }
        }
    }
    current.retain(|p| std::fs::symlink_metadata(p).is_ok());
    Some(current)
}

/// [`warden_vocab::paths::normalise_clamped`], with `/` for a path that normalises to nothing
/// (`a/..`): the rules match absolute paths, and an empty one would match no rule at all.
pub fn normalise(p: &Path) -> PathBuf {
    let out = warden_vocab::paths::normalise_clamped(p);
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

    #[cfg(unix)]
    #[test]
    fn real_path_follows_links_like_the_kernel() {
        use std::os::unix::fs::symlink;
        let t = tempfile::tempdir().expect("tempdir");
        let root = t.path().canonicalize().expect("canonical");
        std::fs::create_dir_all(root.join("a/b")).expect("mkdir");
        symlink("a/b", root.join("l")).expect("symlink");
        symlink("missing", root.join("dangling")).expect("symlink");
        symlink("loop", root.join("loop")).expect("symlink");

        let r = real_path(&root.join("l/f"), None).expect("resolves");
        assert_eq!(r.path, root.join("a/b/f"));
        assert!(r.followed_link && !r.exists);
        // `..` after a link climbs from the target.
        let r = real_path(&root.join("l/../x"), None).expect("resolves");
        assert_eq!(r.path, root.join("a/x"));
        let r = real_path(&root.join("dangling"), None).expect("resolves");
        assert_eq!(r.path, root.join("missing"));
        let r = real_path(&root.join("a/b"), None).expect("resolves");
        assert_eq!(r.path, root.join("a/b"));
        assert!(!r.followed_link && r.exists);
        // Starting from a resolved directory gives the same answer.
        let alias = root.join("l");
        let real = root.join("a/b");
        let r = real_path(&root.join("l/f"), Some((&alias, &real))).expect("resolves");
        assert_eq!(r.path, root.join("a/b/f"));
        assert_eq!(real_path(&root.join("loop"), None), None);
    }

    #[test]
    fn literal_prefixes_undo_escaping() {
        let g = format!("{}/**/.env", globset::escape("/w/a*b[c]/p"));
        let (lit, rest) = literal_prefix(&g).expect("absolute");
        assert_eq!(lit, PathBuf::from("/w/a*b[c]/p"));
        assert_eq!(rest, vec!["**", ".env"]);
        assert_eq!(
            literal_prefix("/w/x/*.pem"),
            Some((PathBuf::from("/w/x"), vec!["*.pem"]))
        );
        assert_eq!(
            literal_prefix("/w/a\\*"),
            Some((PathBuf::from("/w/a*"), vec![]))
        );
        assert_eq!(literal_prefix("/"), Some((PathBuf::from("/"), vec![])));
        assert_eq!(literal_component("{a,b}"), None);
        assert_eq!(literal_component("[!x]"), None);
        assert_eq!(literal_component("[ab]"), None);
        assert_eq!(literal_prefix("rel/x"), None);
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
