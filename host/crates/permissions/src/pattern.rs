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
        CommandPattern {
            full: Wildcard::new(spec),
            bare,
            key,
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
            None => (false, p.as_str()),
        };
        DomainPattern {
            labels: rest.split('.').map(Wildcard::new).collect(),
            any_sub,
            any: false,
        }
    }

    /// Whether `host` matches.
    pub fn matches(&self, host: &str) -> bool {
        if self.any {
            return true;
        }
        let host = normalise_host(host);
        let labels: Vec<&str> = host.split('.').collect();
        if self.any_sub {
            if labels.len() <= self.labels.len() {
                return false;
            }
        } else if labels.len() != self.labels.len() {
            return false;
        }
        let tail = &labels[labels.len() - self.labels.len()..];
        self.labels.iter().zip(tail).all(|(p, l)| p.matches(l))
    }
}

/// Lowercases and strips one trailing dot.
pub fn normalise_host(host: &str) -> String {
    let h = host.trim();
    h.strip_suffix('.').unwrap_or(h).to_ascii_lowercase()
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
    }
}
