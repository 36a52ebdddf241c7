//! Path globs of rules and skills: brace expansion and matching.
//!
//! Matching follows Claude Code's rule semantics: patterns are relative to the directory that
//! holds `.claude/`; `*` stays within one path segment and `**` crosses segments; a pattern with
//! no `/` (like `*.md`) matches the file name at any depth, as in `.gitignore`; a leading `/` or
//! `./` anchors the pattern at the base directory.

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

/// Most patterns one glob may expand to; a pattern over this is used unexpanded (and then
/// matches nothing that a brace would have matched), as Claude Code does.
pub const MAX_EXPANSIONS: usize = 1000;
/// Most bytes the expansions of one glob may take.
pub const MAX_EXPANSION_BYTES: usize = 4 << 20;

/// Expands `{a,b}` alternatives, nested ones included: `src/{a,b}/*.{ts,tsx}` gives four
/// patterns. Unbalanced braces and single-item braces are left as written. Returns `None` when
/// the expansion would exceed [`MAX_EXPANSIONS`] or [`MAX_EXPANSION_BYTES`].
pub fn expand_braces(pattern: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    let mut bytes = 0usize;
    expand_into(pattern, &mut out, &mut bytes)?;
    Some(out)
}

fn expand_into(pattern: &str, out: &mut Vec<String>, bytes: &mut usize) -> Option<()> {
    let Some((open, close, alts)) = first_group(pattern) else {
        if out.len() >= MAX_EXPANSIONS || *bytes + pattern.len() > MAX_EXPANSION_BYTES {
            return None;
        }
        *bytes += pattern.len();
        out.push(pattern.to_string());
        return Some(());
    };
    let (pre, post) = (&pattern[..open], &pattern[close + 1..]);
    for alt in alts {
        expand_into(&format!("{pre}{alt}{post}"), out, bytes)?;
    }
    Some(())
}

/// The first brace group with at least one top-level comma: (open index, close index, items).
fn first_group(p: &str) -> Option<(usize, usize, Vec<&str>)> {
    let b = p.as_bytes();
    let mut search_from = 0;
    while let Some(rel) = p[search_from..].find('{') {
        let open = search_from + rel;
        let mut depth = 0usize;
        let mut commas = Vec::new();
        let mut close = None;
        let mut i = open;
        while i < b.len() {
            match b[i] {
                b'\\' => i += 1,
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        close = Some(i);
                        break;
                    }
                }
                b',' if depth == 1 => commas.push(i),
                _ => {}
            }
            i += 1;
        }
        match close {
            Some(close) if !commas.is_empty() => {
                let mut items = Vec::new();
                let mut start = open + 1;
                for c in commas {
                    items.push(&p[start..c]);
                    start = c + 1;
                }
                items.push(&p[start..close]);
                return Some((open, close, items));
            }
            _ => search_from = open + 1,
        }
    }
    None
}

/// A compiled set of globs with the patterns that could not be used.
#[derive(Debug, Clone)]
pub struct Matcher {
    set: GlobSet,
    /// Patterns (as written) that were invalid or over the expansion budget, with the reason.
    pub rejected: Vec<(String, String)>,
}

impl Matcher {
    /// Compiles `patterns` once. An invalid pattern matches nothing and does not disable the
    /// others.
    pub fn new(patterns: &[String]) -> Matcher {
        let mut b = GlobSetBuilder::new();
        let mut rejected = Vec::new();
        for p in patterns {
            let expanded = match expand_braces(p) {
                Some(e) => e,
                None => {
                    rejected.push((p.clone(), format!("expands to more than {MAX_EXPANSIONS} patterns or {MAX_EXPANSION_BYTES} bytes")));
                    continue;
                }
            };
            for e in expanded {
                let anchored = e.starts_with('/') || e.starts_with("./");
                let e = e.trim_start_matches("./").trim_start_matches('/');
                let e = e
                    .strip_suffix('/')
                    .map_or_else(|| e.to_string(), |d| format!("{d}/**"));
                let mut forms = vec![e.clone()];
                if !anchored && !e.contains('/') {
                    forms.push(format!("**/{e}"));
                }
                for f in forms {
                    match GlobBuilder::new(&f)
                        .literal_separator(true)
                        .backslash_escape(true)
                        .build()
                    {
                        Ok(g) => {
                            b.add(g);
                        }
                        Err(err) => {
                            rejected.push((p.clone(), err.kind().to_string()));
                            break;
                        }
                    }
                }
            }
        }
        let set = b.build().unwrap_or_else(|_| GlobSet::empty());
        Matcher { set, rejected }
    }

    /// Whether `relative` (a path relative to the base directory, `/`-separated) matches.
    pub fn is_match(&self, relative: &std::path::Path) -> bool {
        self.set.is_match(relative)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn nested_braces() {
        let mut e = expand_braces("src/{a,b}/*.{ts,tsx}").expect("expand");
        e.sort();
        assert_eq!(
            e,
            ["src/a/*.ts", "src/a/*.tsx", "src/b/*.ts", "src/b/*.tsx"]
        );
        let e = expand_braces("{x,{y,z}w}").expect("expand");
        assert_eq!(e, ["x", "yw", "zw"]);
        assert_eq!(expand_braces("a{b}c").expect("expand"), ["a{b}c"]);
        assert_eq!(expand_braces("a{b,c").expect("expand"), ["a{b,c"]);
    }

    #[test]
    fn budget() {
        let p = "{a,b,c,d,e,f,g,h,i,j}{a,b,c,d,e,f,g,h,i,j}{a,b,c,d,e,f,g,h,i,j}{a,b}";
        assert!(expand_braces(p).is_none());
        let m = Matcher::new(&[p.to_string(), "*.rs".to_string()]);
        assert_eq!(m.rejected.len(), 1);
        assert!(m.is_match(Path::new("x/y.rs")));
    }

    #[test]
    fn matching() {
        let m = Matcher::new(&["src/{a,b}/*.{ts,tsx}".to_string()]);
        assert!(m.is_match(Path::new("src/a/x.ts")));
        assert!(m.is_match(Path::new("src/b/x.tsx")));
        assert!(!m.is_match(Path::new("src/c/x.ts")));
        assert!(!m.is_match(Path::new("src/a/deep/x.ts")));
        let m = Matcher::new(&[
            "*.md".to_string(),
            "/top.txt".to_string(),
            "[z-a].rs".to_string(),
        ]);
        assert!(m.is_match(Path::new("docs/deep/x.md")));
        assert!(m.is_match(Path::new("top.txt")));
        assert!(!m.is_match(Path::new("a/top.txt")));
        assert_eq!(m.rejected.len(), 1);
    }
}
