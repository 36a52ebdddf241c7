//! Matcher semantics (spec 1.4).
//!
//! 1. absent, `""` or `"*"` matches everything;
//! 2. a value made only of the *exact set* `[A-Za-z0-9_\- ,|]` is split on `|` / `,`, each part
//!    trimmed, and compared for equality (the narrower set `[A-Za-z0-9_|]`, split on `|` only and
//!    not trimmed, for `FileChanged` and `StopFailure`);
//! 3. anything else is a JavaScript regular expression tested **unanchored**.
//!
//! Claude Code runs on Node, so patterns are JavaScript syntax. They are checked for the JS
//! errors Rust's engine would accept (`Write(docs/**)` is "Nothing to repeat" in JS), translated
//! where the two dialects differ (`\d`, `\w`, `\b` are ASCII-only in JS), and compiled with
//! `regex`; only patterns that use look-around or back-references go to `fancy-regex`.

use serde_json::Value;
use warden_vocab::schema::Field;

/// Largest compiled program accepted for one matcher; hostile patterns fail to compile instead
/// of using unbounded memory.
const REGEX_SIZE_LIMIT: usize = 1 << 20;

/// A compiled matcher.
#[derive(Debug, Clone)]
pub enum Matcher {
    /// Matches every value (absent, `""`, `"*"`).
    All,
    /// Equality against any of the listed names.
    Exact(Vec<String>),
    /// An unanchored regular expression.
    Regex(regex::Regex),
    /// An unanchored regular expression that needs look-around or back-references.
    Fancy(Box<fancy_regex::Regex>),
}

/// Why a matcher could not be compiled. The group carrying it is skipped with a warning.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MatcherError {
    /// The matcher is not a string (e.g. `{"toolNames": [...]}`).
    #[error("matcher must be a string, found {0}")]
    NotAString(String),
    /// The matcher is not a valid JavaScript regular expression.
    #[error("matcher `{pattern}` is not a valid regular expression: {message}")]
    InvalidRegex {
        /// The matcher text.
        pattern: String,
        /// What is wrong with it.
        message: String,
    },
}

impl Matcher {
    /// Compiles the `matcher` value of a group. `None` and `null` mean "absent".
    pub fn from_json(raw: Option<&Value>, narrow: bool) -> Result<Matcher, MatcherError> {
        match raw {
            None | Some(Value::Null) => Ok(Matcher::All),
            Some(Value::String(s)) => Matcher::parse(s, narrow),
            Some(other) => Err(MatcherError::NotAString(json_kind(other).to_string())),
        }
    }

    /// Compiles the `matcher` of a group as read by the hooks schema.
    pub fn from_field(field: &Field<String>, narrow: bool) -> Result<Matcher, MatcherError> {
        match field {
            Field::Valid(s) => Matcher::parse(s, narrow),
            f if f.is_unset() => Ok(Matcher::All),
            f => Matcher::from_json(f.invalid(), narrow),
        }
    }

    /// Compiles a matcher string. `narrow` selects the `FileChanged` / `StopFailure` exact set.
    pub fn parse(s: &str, narrow: bool) -> Result<Matcher, MatcherError> {
        if s.is_empty() || s == "*" {
            return Ok(Matcher::All);
        }
        if narrow {
            if s.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '|')
            {
                return Ok(Matcher::Exact(s.split('|').map(str::to_string).collect()));
            }
        } else if s
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | ' ' | ',' | '|'))
        {
            return Ok(Matcher::Exact(
                s.split(['|', ',']).map(|p| p.trim().to_string()).collect(),
            ));
        }
        compile_js_regex(s)
    }

    /// Whether `value` (the event's matcher field) is selected.
    pub fn matches(&self, value: &str) -> bool {
        match self {
            Matcher::All => true,
            Matcher::Exact(parts) => parts.iter().any(|p| p == value),
            Matcher::Regex(re) => re.is_match(value),
            // A backtracking limit hit counts as "no match": the hook is not worth a hang.
            Matcher::Fancy(re) => re.is_match(value).unwrap_or(false),
        }
    }
}

fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Prev {
    /// Start of pattern, after `(`, `|` or an assertion: a quantifier here is "Nothing to repeat".
    Nothing,
    Atom,
    Quantifier,
    Lazy,
}

fn invalid(pattern: &str, message: &str) -> MatcherError {
    MatcherError::InvalidRegex {
        pattern: pattern.to_string(),
        message: message.to_string(),
    }
}

/// Length of a `{n}`, `{n,}` or `{n,m}` quantifier starting at `chars[i] == '{'`.
fn brace_quantifier(chars: &[char], i: usize) -> Option<usize> {
    let mut j = i + 1;
    let start = j;
    while j < chars.len() && chars[j].is_ascii_digit() {
        j += 1;
    }
    if j == start {
        return None;
    }
    if j < chars.len() && chars[j] == ',' {
        j += 1;
        while j < chars.len() && chars[j].is_ascii_digit() {
            j += 1;
        }
    }
    (j < chars.len() && chars[j] == '}').then_some(j + 1 - i)
}

/// Translates one escape (`chars[i] == '\\'`); returns the Rust text and how many chars it used.
fn translate_escape(chars: &[char], i: usize, in_class: bool, fancy: &mut bool) -> (String, usize) {
    let Some(&c) = chars.get(i + 1) else {
        return (String::from("\\\\"), 1);
    };
    let text = match (c, in_class) {
        ('d', false) => "[0-9]".to_string(),
        ('d', true) => "0-9".to_string(),
        ('D', false) => "[^0-9]".to_string(),
        ('w', false) => "[0-9A-Za-z_]".to_string(),
        ('w', true) => "0-9A-Za-z_".to_string(),
        ('W', false) => "[^0-9A-Za-z_]".to_string(),
        ('b', false) => "(?-u:\\b)".to_string(),
        ('B', false) => "(?-u:\\B)".to_string(),
        ('b', true) => "\\x08".to_string(),
        ('1'..='9', false) => {
            *fancy = true;
            format!("\\{c}")
        }
        ('k', false) if chars.get(i + 2) == Some(&'<') => {
            *fancy = true;
            "\\k".to_string()
        }
        // JS allows escaping `/` and other punctuation; keep them escaped for Rust where that is
        // legal and drop the escape otherwise.
        ('/', _) => "/".to_string(),
        (c, _) if c.is_ascii_punctuation() => format!("\\{c}"),
        (c, _) => format!("\\{c}"),
    };
    (text, 2)
}

fn compile_js_regex(pattern: &str) -> Result<Matcher, MatcherError> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = String::with_capacity(pattern.len() + 8);
    let mut prev = Prev::Nothing;
    let mut depth = 0usize;
    let mut fancy = false;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\\' => {
                let (text, used) = translate_escape(&chars, i, false, &mut fancy);
                out.push_str(&text);
                i += used;
                prev = Prev::Atom;
                continue;
            }
            '[' => {
                out.push('[');
                i += 1;
                if chars.get(i) == Some(&'^') {
                    out.push('^');
                    i += 1;
                }
                let mut closed = false;
                while i < chars.len() {
                    match chars[i] {
                        '\\' => {
                            let (text, used) = translate_escape(&chars, i, true, &mut fancy);
                            out.push_str(&text);
                            i += used;
                        }
                        ']' => {
                            out.push(']');
                            i += 1;
                            closed = true;
                            break;
                        }
                        // Rust treats `[` inside a class as a nested class; JS as a literal.
                        '[' => {
                            out.push_str("\\[");
                            i += 1;
                        }
                        ch => {
                            out.push(ch);
                            i += 1;
                        }
                    }
                }
                if !closed {
                    return Err(invalid(pattern, "Unterminated character class"));
                }
                prev = Prev::Atom;
                continue;
            }
            '(' => {
                depth += 1;
                let rest: String = chars[i..chars.len().min(i + 4)].iter().collect();
                if rest.starts_with("(?=") || rest.starts_with("(?!") {
                    fancy = true;
                    out.push_str(&rest[..3]);
                    i += 3;
                } else if rest.starts_with("(?<=") || rest.starts_with("(?<!") {
                    fancy = true;
                    out.push_str(&rest[..4]);
                    i += 4;
                } else if rest.starts_with("(?:") {
                    out.push_str("(?:");
                    i += 3;
                } else if rest.starts_with("(?<") {
                    out.push_str("(?<");
                    i += 3;
                } else if rest.starts_with("(?") {
                    return Err(invalid(pattern, "Invalid group"));
                } else {
                    out.push('(');
                    i += 1;
                }
                prev = Prev::Nothing;
                continue;
            }
            ')' => {
                if depth == 0 {
                    return Err(invalid(pattern, "Unmatched ')'"));
                }
                depth -= 1;
                out.push(')');
                prev = Prev::Atom;
            }
            '|' => {
                out.push('|');
                prev = Prev::Nothing;
            }
            '^' | '$' => {
                out.push(c);
                prev = Prev::Nothing;
            }
            '*' | '+' | '?' => {
                if c == '?' && prev == Prev::Quantifier {
                    out.push('?');
                    prev = Prev::Lazy;
                } else if prev != Prev::Atom {
                    return Err(invalid(pattern, "Nothing to repeat"));
                } else {
                    out.push(c);
                    prev = Prev::Quantifier;
                }
            }
            '{' => match brace_quantifier(&chars, i) {
                Some(len) => {
                    if prev != Prev::Atom {
                        return Err(invalid(pattern, "Nothing to repeat"));
                    }
                    out.extend(&chars[i..i + len]);
                    i += len;
                    prev = Prev::Quantifier;
                    continue;
                }
                // JS (without the `u` flag) reads a brace that is not a quantifier literally.
                None => {
                    out.push_str("\\{");
                    prev = Prev::Atom;
                }
            },
            '}' => {
                out.push_str("\\}");
                prev = Prev::Atom;
            }
            _ => {
                out.push(c);
                prev = Prev::Atom;
            }
        }
        i += 1;
    }
    if depth != 0 {
        return Err(invalid(pattern, "Unterminated group"));
    }
    if fancy {
        fancy_regex::RegexBuilder::new(&out)
            .delegate_size_limit(REGEX_SIZE_LIMIT)
            .build()
            .map(|re| Matcher::Fancy(Box::new(re)))
            .map_err(|e| invalid(pattern, &e.to_string()))
    } else {
        regex::RegexBuilder::new(&out)
            .size_limit(REGEX_SIZE_LIMIT)
            .build()
            .map(Matcher::Regex)
            .map_err(|e| invalid(pattern, &regex_error_line(&e.to_string())))
    }
}

/// The line of a regex compile error that says what is wrong (its `error:` line, else the last).
fn regex_error_line(s: &str) -> String {
    s.lines()
        .find(|l| l.starts_with("error:"))
        .unwrap_or_else(|| s.lines().last().unwrap_or(s))
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(s: &str) -> Matcher {
        Matcher::parse(s, false).expect("compiles")
    }

    #[test]
    fn js_translation_basics() {
        assert!(m(r"^\d+$").matches("123"));
        assert!(!m(r"^\d+$").matches("١٢٣"));
        assert!(m(r"a\/b").matches("a/b"));
        assert!(m(r"x{").matches("x{"));
        assert!(m(r"^a{2}$").matches("aa"));
        assert!(m(r"(?<n>ab)\k<n>").matches("abab"));
        assert!(m(r"foo(?!bar)").matches("foobaz"));
        assert!(!m(r"^foo(?!bar)").matches("foobar"));
        assert!(m(r"[\w.]+").matches("a.b"));
        assert!(m(r"a+?").matches("aa"));
    }

    #[test]
    fn js_errors() {
        for bad in [
            "Write(docs/**)",
            "*x",
            "a|*",
            "(?P<x>a)",
            "(a",
            "a)",
            "[ab",
            "a**",
            "a+*",
        ] {
            assert!(Matcher::parse(bad, false).is_err(), "{bad}");
        }
    }
}
