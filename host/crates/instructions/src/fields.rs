//! Typed reads of frontmatter values, tolerant of the type mix found in published files.

use serde_json::{Map, Value};

use crate::frontmatter::Document;

/// A Boolean written any way Claude Code accepts: `true/false/yes/no/on/off/1/0`, typed or
/// quoted, any case. Anything else is `None`.
pub fn as_bool(v: &Value) -> Option<bool> {
    match v {
        Value::Bool(b) => Some(*b),
        Value::Number(n) => match n.as_i64() {
            Some(1) => Some(true),
            Some(0) => Some(false),
            _ => None,
        },
        Value::String(s) => match s.trim().to_ascii_lowercase().as_str() {
            "true" | "yes" | "on" | "1" => Some(true),
            "false" | "no" | "off" | "0" => Some(false),
            _ => None,
        },
        _ => None,
    }
}

/// A string field. A non-string value (YAML read `argument-hint: [name]` as a list) is given as
/// its raw source text; an empty string counts as missing.
pub fn string(doc: &Document, key: &str) -> Option<String> {
    let v = doc.frontmatter.get(key)?;
    let s = match v {
        Value::Null => return None,
        Value::String(s) => s.trim().to_string(),
        other => doc
            .raw
            .get(key)
            .cloned()
            .unwrap_or_else(|| other.to_string()),
    };
    (!s.is_empty()).then_some(s)
}

/// A string from a plain JSON map (used for `--agents` JSON).
pub fn map_string(map: &Map<String, Value>, key: &str) -> Option<String> {
    match map.get(key)? {
        Value::Null => None,
        Value::String(s) if s.trim().is_empty() => None,
        Value::String(s) => Some(s.trim().to_string()),
        other => Some(other.to_string()),
    }
}

/// A tool list (`allowed-tools`, `tools`, `disallowedTools`): a YAML list, or a string split on
/// commas and whitespace outside parentheses, so `Bash(git log --oneline:*), Read` is two items.
pub fn tool_list(v: &Value) -> Vec<String> {
    match v {
        Value::Array(items) => items.iter().flat_map(tool_list).collect(),
        Value::String(s) => split_outside(s, |c| c == ',' || c.is_whitespace(), ('(', ')')),
        Value::Null => Vec::new(),
        other => vec![other.to_string()],
    }
}

/// A glob list (`paths`): a YAML list, or a comma-separated string. Commas inside `{…}` belong to
/// brace expansion, not to the list.
pub fn glob_list(v: &Value) -> Vec<String> {
    match v {
        Value::Array(items) => items.iter().flat_map(glob_list).collect(),
        Value::String(s) => split_outside(s, |c| c == ',', ('{', '}')),
        Value::Null => Vec::new(),
        other => vec![other.to_string()],
    }
}

/// A list of words (`arguments`, `skills`): a YAML list, or a string split on commas and
/// whitespace.
pub fn word_list(v: &Value) -> Vec<String> {
    match v {
        Value::Array(items) => items.iter().flat_map(word_list).collect(),
        Value::String(s) => s
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|w| !w.is_empty())
            .map(str::to_string)
            .collect(),
        Value::Null => Vec::new(),
        other => vec![other.to_string()],
    }
}

fn split_outside(
    s: &str,
    is_sep: impl Fn(char) -> bool,
    (open, close): (char, char),
) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut cur = String::new();
    for c in s.chars() {
        if c == open {
            depth += 1;
        } else if c == close {
            depth = depth.saturating_sub(1);
        }
        if depth == 0 && is_sep(c) {
            if !cur.trim().is_empty() {
                out.push(cur.trim().to_string());
            }
            cur.clear();
        } else {
            cur.push(c);
        }
    }
    if !cur.trim().is_empty() {
        out.push(cur.trim().to_string());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn booleans() {
        for (v, want) in [
            (json!("yes"), Some(true)),
            (json!("Off"), Some(false)),
            (json!(1), Some(true)),
            (json!("true"), Some(true)),
            (json!("maybe"), None),
        ] {
            assert_eq!(as_bool(&v), want, "{v}");
        }
    }

    #[test]
    fn tool_lists() {
        assert_eq!(
            tool_list(&json!("Bash(git log --oneline:*), Read")),
            ["Bash(git log --oneline:*)", "Read"]
        );
        assert_eq!(
            tool_list(&json!("Bash Read Grep")),
            ["Bash", "Read", "Grep"]
        );
        assert_eq!(tool_list(&json!(["Read", "Write"])), ["Read", "Write"]);
        assert_eq!(tool_list(&json!("*")), ["*"]);
    }

    #[test]
    fn glob_lists() {
        assert_eq!(
            glob_list(&json!("src/{a,b}/*.ts, lib/**")),
            ["src/{a,b}/*.ts", "lib/**"]
        );
        assert_eq!(glob_list(&json!(["a", "b"])), ["a", "b"]);
    }
}
