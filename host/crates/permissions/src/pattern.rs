//! Non-allocating matchers for the wildcard dialects used by rules.

/// A pattern where `*` matches any run of characters (spaces included) and everything else is
/// literal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wildcard {
    /// The literal pieces between stars.
    parts: Vec<String>,
    /// `false` when the pattern has no `*` (exact match).
    wild: bool,
}

impl Wildcard {
    /// Compiles `pattern`.
    pub fn new(pattern: &str) -> Self {
        Wildcard {
            parts: pattern.split('*').map(str::to_string).collect(),
            wild: pattern.contains('*'),
        }
    }

    /// Whether the pattern contains `*`.
    pub fn is_wild(&self) -> bool {
        self.wild
    }

    /// Whether `s` matches the whole pattern.
    pub fn matches(&self, s: &str) -> bool {
        if !self.wild {
            return self.parts.first().is_some_and(|p| p == s);
        }
        let (Some(first), Some(last)) = (self.parts.first(), self.parts.last()) else {
            return true;
        };
        if s.len() < first.len() + last.len()
            || !s.starts_with(first.as_str())
            || !s.ends_with(last.as_str())
        {
            return false;
        }
        let mut rest = &s[first.len()..s.len() - last.len()];
        for mid in &self.parts[1..self.parts.len() - 1] {
            match rest.find(mid.as_str()) {
                Some(i) => rest = &rest[i + mid.len()..],
                None => return false,
            }
        }
        true
    }
}

/// A Bash command pattern (spec 2.3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandPattern {
    full: Wildcard,
    /// For `prefix *`: the pattern without the trailing ` *`, so `Bash(ls *)` also matches a
    /// bare `ls` while the space still enforces the word boundary against `lsof`.
    bare: Option<Wildcard>,
    /// The literal first word, used to index rules by program name.
    key: Option<String>,
    /// The literal first two words (`git push`), when every matching command must start with
    /// exactly them; a finer index than `key` for the common `program subcommand *` shape.
    key2: Option<String>,
    /// More than a bare command name (`git push *` rather than `git *`).
    specific: bool,
}

impl CommandPattern {
    /// Compiles a Bash specifier; a trailing `:*` is read as ` *`.
    pub fn new(spec: &str) -> Self {
        let spec = spec.trim();
        let normalised;
        let spec = match spec.strip_suffix(":*") {
            Some(head) => {
                normalised = format!("{head} *");
                normalised.as_str()
            }
            None => spec,
        };
        let bare = spec.strip_suffix(" *").map(|h| Wildcard::new(h.trim_end()));
        let head = spec.strip_suffix(" *").unwrap_or(spec).trim_end();
        let first = head.split(' ').next().unwrap_or("");
        let key = (!first.is_empty() && !first.contains('*')).then(|| first.to_string());
        let full = Wildcard::new(spec);
        let key2 = key.as_ref().and_then(|_| {
            // The literal text every match starts with; for an exact pattern, all of it.
            let lit = if full.wild {
                full.parts.first().map_or("", String::as_str)
            } else {
                spec
            };
            let k = two_words(lit)?;
            // The second word must be complete inside the literal: followed by a space, or
            // the end of an exact pattern. An empty second word is not indexed because the
            // bare form (`git  *` → `git`) would then not share it.
            let second = &k[k.find(' ')? + 1..];
            let complete = lit.len() > k.len() || !full.wild;
            (complete && !second.is_empty()).then(|| k.to_string())
        });
        CommandPattern {
            full,
            bare,
            key,
            key2,
            specific: head.contains(' ') || head.contains('*'),
        }
    }

    /// Whether the pattern has any `*` (an exact pattern is a full-command rule).
    pub fn is_wild(&self) -> bool {
        self.full.is_wild()
    }

    /// The literal program name the pattern starts with, if any.
    pub fn key(&self) -> Option<&str> {
        self.key.as_deref()
    }

    /// The literal first two words every match starts with (see [`two_words`]), if known.
    pub fn key2(&self) -> Option<&str> {
        self.key2.as_deref()
    }

    /// For patterns without a leading literal program (`* --version`): the literal last word
    /// every match must end with, used as a second index.
    pub fn last_key(&self) -> Option<&str> {
        if self.key.is_some() || self.bare.is_some() {
            return None;
        }
        let last = self.full.parts.last()?;
        if self.full.parts.len() < 2 || !last.starts_with(' ') {
            return None;
        }
        last.rsplit(' ').next().filter(|w| !w.is_empty())
    }

    /// More than a bare command name.
    pub fn is_specific(&self) -> bool {
        self.specific
    }

    /// Whether one simple command (words joined by single spaces) matches.
    pub fn matches(&self, command: &str) -> bool {
        self.full.matches(command) || self.bare.as_ref().is_some_and(|b| b.matches(command))
    }
}

/// A command form's text up to (not including) its second space, or all of it when it has only
/// one space; `None` without a space. Rules and forms are keyed by this the same way.
pub fn two_words(form: &str) -> Option<&str> {
    let a = form.find(' ')?;
    match form[a + 1..].find(' ') {
        Some(b) => Some(&form[..a + 1 + b]),
        None => Some(form),
    }
}

/// A `WebFetch(domain:…)` host pattern (spec 2.5).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DomainPattern {
    labels: Vec<Wildcard>,
    /// `*.example.com`: any depth of subdomain, never the apex.
    any_sub: bool,
    any: bool,
}

impl DomainPattern {
    /// Compiles a host pattern (case-insensitive, trailing dot ignored).
    pub fn new(pattern: &str) -> Self {
        let p = normalise_host(pattern);
        if p == "*" {
            return DomainPattern {
                labels: Vec::new(),
                any_sub: false,
                any: true,
            };
        }
        let (any_sub, rest) = match p.strip_prefix("*.") {
            Some(r) => (true, r),
            None => (false, &*p),
        };
        DomainPattern {
            labels: rest.split('.').map(Wildcard::new).collect(),
            any_sub,
            any: false,
        }
    }

    /// Whether `host` matches.
    pub fn matches(&self, host: &str) -> bool {
        self.matches_normalised(&normalise_host(host))
    }

    /// Whether `host`, already passed through [`normalise_host`], matches.
    pub fn matches_normalised(&self, host: &str) -> bool {
        if self.any {
            return true;
        }
        let n = host.split('.').count();
        if self.any_sub {
            if n <= self.labels.len() {
                return false;
            }
        } else if n != self.labels.len() {
            return false;
        }
        host.rsplit('.')
            .zip(self.labels.iter().rev())
            .all(|(l, p)| p.matches(l))
    }

    /// The one host this pattern matches, when it has no wildcard.
    pub fn exact_host(&self) -> Option<String> {
        if self.any || self.any_sub || self.labels.iter().any(Wildcard::is_wild) {
            return None;
        }
        let labels: Vec<&str> = self
            .labels
            .iter()
            .filter_map(|l| l.parts.first().map(String::as_str))
            .collect();
        Some(labels.join("."))
    }
}

/// Lowercases and strips one trailing dot; borrows when nothing changes.
pub fn normalise_host(host: &str) -> std::borrow::Cow<'_, str> {
    let h = host.trim();
    let h = h.strip_suffix('.').unwrap_or(h);
    if h.bytes().any(|b| b.is_ascii_uppercase()) {
        std::borrow::Cow::Owned(h.to_ascii_lowercase())
    } else {
        std::borrow::Cow::Borrowed(h)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wildcard_anywhere() {
        let w = Wildcard::new("git * main");
        assert!(w.matches("git push origin main"));
        assert!(!w.matches("git push origin main2"));
        assert!(Wildcard::new("* install").matches("npm install"));
        assert!(Wildcard::new("a*a").matches("aa"));
        assert!(!Wildcard::new("a*a").matches("a"));
        assert!(
            Wildcard::new("exact").matches("exact") && !Wildcard::new("exact").matches("exactly")
        );
    }

    #[test]
    fn prefix_star_enforces_word_boundary() {
        let p = CommandPattern::new("ls *");
        assert!(p.matches("ls -la") && p.matches("ls"));
        assert!(!p.matches("lsof"));
        let glued = CommandPattern::new("ls*");
        assert!(glued.matches("ls -la") && glued.matches("lsof"));
    }

    #[test]
    fn trailing_colon_star_is_prefix_only_at_end() {
        let p = CommandPattern::new("npm run test:*");
        assert!(p.matches("npm run test --watch") && p.matches("npm run test"));
        assert_eq!(CommandPattern::new("ls:*"), CommandPattern::new("ls *"));
        let literal = CommandPattern::new("npm run test:unit");
        assert!(literal.matches("npm run test:unit") && !literal.matches("npm run test"));
    }

    #[test]
    fn command_keys() {
        assert_eq!(CommandPattern::new("git push *").key(), Some("git"));
        assert_eq!(CommandPattern::new("ls*").key(), None);
        assert_eq!(CommandPattern::new("* install").key(), None);
        assert!(!CommandPattern::new("git *").is_specific());
        assert!(CommandPattern::new("git push *").is_specific());
        assert_eq!(
            CommandPattern::new("* --version").last_key(),
            Some("--version")
        );
        assert_eq!(CommandPattern::new("*version").last_key(), None);
        assert_eq!(CommandPattern::new("* install *").last_key(), None);
        assert_eq!(CommandPattern::new("git push *").key2(), Some("git push"));
        assert_eq!(CommandPattern::new("git push:*").key2(), Some("git push"));
        assert_eq!(CommandPattern::new("git push").key2(), Some("git push"));
        assert_eq!(
            CommandPattern::new("git push -f *").key2(),
            Some("git push")
        );
        assert_eq!(CommandPattern::new("git push*").key2(), None);
        assert_eq!(CommandPattern::new("git *").key2(), None);
        assert_eq!(CommandPattern::new("git  *").key2(), None);
        assert_eq!(CommandPattern::new("git").key2(), None);
        assert_eq!(two_words("git push origin"), Some("git push"));
        assert_eq!(two_words("git push"), Some("git push"));
        assert_eq!(two_words("git"), None);
    }

    #[test]
    fn domains() {
        let d = DomainPattern::new("*.example.com");
        assert!(d.matches("a.example.com") && d.matches("a.b.example.com"));
        assert!(!d.matches("example.com"));
        assert!(DomainPattern::new("Example.COM.").matches("example.com"));
        assert!(DomainPattern::new("example.com").matches("EXAMPLE.com."));
        let one_label = DomainPattern::new("example.*");
        assert!(one_label.matches("example.org") && !one_label.matches("example.evil.com"));
        assert!(DomainPattern::new("*").matches("anything.test"));
        assert_eq!(
            DomainPattern::new("Api.Example.com")
                .exact_host()
                .as_deref(),
            Some("api.example.com")
        );
        assert_eq!(DomainPattern::new("*.example.com").exact_host(), None);
        assert_eq!(DomainPattern::new("a*.example.com").exact_host(), None);
    }
}
