//! YAML frontmatter of skill, agent, command and rule files.
//!
//! This is the only module of the project that touches YAML. `serde_yaml` is deprecated upstream,
//! so everything else goes through [`parse`] and [`parse_yaml_value`], which hand back
//! `serde_json` values: swapping the YAML library is a change to this file alone.
//!
//! Published plugins contain frontmatter that strict YAML rejects (unquoted `: ` inside values,
//! `<example>` blocks and `user: "…"` lines at column 0, tabs). Claude Code still loads most of
//! them, so [`parse`] works in three steps and records in [`Document::lenient`] whether the strict
//! parse failed:
//!
//! 1. strict YAML;
//! 2. the same text with every top-level plain scalar auto-quoted (leading tabs turned into
//!    spaces), which fixes `description: Use when: X` and `paths: **/*.{ts,tsx}`;
//! 3. a line parser: a line at column 0 that starts with a known key (see [`KNOWN_KEYS`]), or
//!    with any `key:` while the previous value is complete YAML on its own, starts a new value;
//!    every other line is appended to the previous value with its newline.
//!
//! Input normalisation: a UTF-8 BOM is dropped and `\r\n` is read as `\n` before the delimiters
//! are looked for. The closing `---` may be the last bytes of the file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

/// Largest skill, agent, command or rule file read, in bytes (the largest published `SKILL.md`
/// is 74 KB). A plugin is someone else's files: without a limit one huge file would be read
/// whole into memory and handed to the YAML parser.
pub const MAX_FILE_BYTES: u64 = 2 << 20;

/// Reads a skill, agent, command or rule file, refusing one that is not a regular file or is
/// over [`MAX_FILE_BYTES`] before reading it (and never reading more than that).
pub fn read_file(path: &Path) -> std::io::Result<String> {
    use std::io::Read;
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    let too_large = |size: u64| {
        std::io::Error::new(
            std::io::ErrorKind::FileTooLarge,
            format!(
                "the file is {size} bytes, over the limit of {MAX_FILE_BYTES} bytes for skill, agent, command and rule files"
            ),
        )
    };
    if meta.len() > MAX_FILE_BYTES {
        return Err(too_large(meta.len()));
    }
    let mut buf = Vec::new();
    std::fs::File::open(path)?
        .take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut buf)?;
    if buf.len() as u64 > MAX_FILE_BYTES {
        return Err(too_large(buf.len() as u64));
    }
    String::from_utf8(buf)
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidData, "not valid UTF-8"))
}

/// Keys that start a new value in the line parser even when the previous value is unfinished
/// prose. Every field of skills, commands, subagents and rules is listed; anything else at
/// column 0 (`user: "…"`, `Context: …`) inside a broken description stays part of it.
pub const KNOWN_KEYS: &[&str] = &[
    "name",
    "description",
    "when_to_use",
    "when-to-use",
    "argument-hint",
    "arguments",
    "disable-model-invocation",
    "user-invocable",
    "allowed-tools",
    "allowed_tools",
    "disallowed-tools",
    "model",
    "effort",
    "context",
    "agent",
    "background",
    "hooks",
    "paths",
    "globs",
    "shell",
    "metadata",
    "license",
    "compatibility",
    "version",
    "tools",
    "disallowedTools",
    "permissionMode",
    "maxTurns",
    "skills",
    "mcpServers",
    "memory",
    "isolation",
    "color",
    "initialPrompt",
    "hide-from-slash-command-tool",
];

/// A parsed markdown file: its frontmatter and body.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Document {
    /// Top-level frontmatter keys and values (empty when the file has none).
    pub frontmatter: Map<String, Value>,
    /// The raw source text of each top-level value (after `key:`, with continuation lines),
    /// kept because some string fields are written so that YAML reads them as something else:
    /// `argument-hint: [project-name]` is a list to YAML and a hint string to the user.
    pub raw: BTreeMap<String, String>,
    /// The markdown after the frontmatter.
    pub body: String,
    /// 1-based line of the file where `body` starts.
    pub body_line: usize,
    /// True when strict YAML failed and a fallback produced `frontmatter`.
    pub lenient: bool,
    /// The strict parser's complaint when `lenient` is true, as `line:column: message` in file
    /// coordinates.
    pub strict_error: Option<String>,
}

/// Why a file's frontmatter could not be used at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrontmatterError {
    /// The opening `---` has no closing `---`.
    #[error("{}:{line}: frontmatter opened here is never closed with `---`", path.display())]
    Unclosed {
        /// The file.
        path: PathBuf,
        /// Line of the opening delimiter.
        line: usize,
    },
    /// Neither strict YAML nor the fallbacks found a `key: value` mapping.
    #[error("{}:{line}:{column}: invalid YAML frontmatter: {message}", path.display())]
    Yaml {
        /// The file.
        path: PathBuf,
        /// 1-based line in the file.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What the parser said.
        message: String,
    },
}

impl FrontmatterError {
    /// The file the error is about.
    pub fn path(&self) -> &Path {
        match self {
            FrontmatterError::Unclosed { path, .. } | FrontmatterError::Yaml { path, .. } => path,
        }
    }

    /// The 1-based line the error is about.
    pub fn line(&self) -> usize {
        match self {
            FrontmatterError::Unclosed { line, .. } | FrontmatterError::Yaml { line, .. } => *line,
        }
    }
}

/// Splits `text` into frontmatter and body and parses the frontmatter (see the module docs for
/// the fallbacks). `path` is used in errors only.
pub fn parse(text: &str, path: &Path) -> Result<Document, FrontmatterError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let normalised;
    let text = if text.contains('\r') {
        normalised = text.replace("\r\n", "\n");
        normalised.as_str()
    } else {
        text
    };
    let Some((yaml, body, body_line)) = split(text) else {
        if is_delimiter(text.lines().next().unwrap_or("")) {
            return Err(FrontmatterError::Unclosed {
                path: path.to_path_buf(),
                line: 1,
            });
        }
        return Ok(Document {
            body: text.to_string(),
            body_line: 1,
            ..Document::default()
        });
    };
    // The YAML starts on line 2 of the file.
    const OFFSET: usize = 1;
    let mut doc = Document {
        body: body.to_string(),
        body_line,
        ..Document::default()
    };
    doc.raw = raw_values(yaml);
    if yaml.trim().is_empty() {
        return Ok(doc);
    }
    let strict_err = match strict_mapping(yaml) {
        Ok(map) => {
            doc.frontmatter = map;
            return Ok(doc);
        }
        Err(e) => e,
    };
    let (line, column, message) = strict_err;
    doc.lenient = true;
    doc.strict_error = Some(format!("{}:{column}: {message}", line + OFFSET));
    if let Ok(map) = strict_mapping(&auto_quote(yaml)) {
        doc.frontmatter = map;
        return Ok(doc);
    }
    let map = line_parse(yaml);
    if map.is_empty() {
        return Err(FrontmatterError::Yaml {
            path: path.to_path_buf(),
            line: line + OFFSET,
            column,
            message,
        });
    }
    doc.frontmatter = map;
    Ok(doc)
}

/// Parses a whole YAML document strictly into a JSON value (`null` for an empty document).
pub fn parse_yaml_value(text: &str, path: &Path) -> Result<Value, FrontmatterError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    match serde_yaml::from_str::<serde_yaml::Value>(text) {
        Ok(v) => Ok(to_json(v)),
        Err(e) => {
            let (line, column, message) = describe(&e);
            Err(FrontmatterError::Yaml {
                path: path.to_path_buf(),
                line,
                column,
                message,
            })
        }
    }
}

fn is_delimiter(line: &str) -> bool {
    line.trim_end() == "---"
}

/// Returns (yaml, body, body_line) when `text` opens with a closed frontmatter block.
fn split(text: &str) -> Option<(&str, &str, usize)> {
    let first_end = text.find('\n').unwrap_or(text.len());
    if !is_delimiter(&text[..first_end]) {
        return None;
    }
    let yaml_start = (first_end + 1).min(text.len());
    let mut pos = yaml_start;
    let mut line_no = 2;
    while pos < text.len() {
        let end = text[pos..].find('\n').map_or(text.len(), |i| pos + i);
        let line = &text[pos..end];
        if is_delimiter(line) || line.trim_end() == "..." {
            let body_start = (end + 1).min(text.len());
            return Some((&text[yaml_start..pos], &text[body_start..], line_no + 1));
        }
        pos = end + 1;
        line_no += 1;
    }
    None
}

fn describe(e: &serde_yaml::Error) -> (usize, usize, String) {
    let (line, column) = e.location().map_or((1, 1), |l| (l.line(), l.column()));
    let msg = e.to_string();
    let msg = match msg.find(" at line ") {
        Some(i) => msg[..i].to_string(),
        None => msg,
    };
    (line, column, msg)
}

/// Strict YAML that must be a mapping (or empty).
fn strict_mapping(yaml: &str) -> Result<Map<String, Value>, (usize, usize, String)> {
    match serde_yaml::from_str::<serde_yaml::Value>(yaml) {
        Ok(serde_yaml::Value::Null) => Ok(Map::new()),
        Ok(v) => match to_json(v) {
            Value::Object(m) => Ok(m),
            other => Err((
                1,
                1,
                format!(
                    "frontmatter must be a `key: value` mapping, found {}",
                    kind(&other)
                ),
            )),
        },
        Err(e) => Err(describe(&e)),
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "nothing",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "text",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

/// Converts a YAML value to JSON. Non-string keys are written as their YAML text; tags are
/// dropped; non-finite floats become strings.
pub(crate) fn to_json(v: serde_yaml::Value) -> Value {
    use serde_yaml::Value as Y;
    match v {
        Y::Null => Value::Null,
        Y::Bool(b) => Value::Bool(b),
        Y::Number(n) => {
            if let Some(i) = n.as_i64() {
                Value::from(i)
            } else if let Some(u) = n.as_u64() {
                Value::from(u)
            } else {
                let f = n.as_f64().unwrap_or(f64::NAN);
                serde_json::Number::from_f64(f)
                    .map_or_else(|| Value::String(n.to_string()), Value::Number)
            }
        }
        Y::String(s) => Value::String(s),
        Y::Sequence(seq) => Value::Array(seq.into_iter().map(to_json).collect()),
        Y::Mapping(m) => {
            let mut out = Map::new();
            for (k, v) in m {
                let key = match to_json(k) {
                    Value::String(s) => s,
                    Value::Null => "null".to_string(),
                    other => other.to_string(),
                };
                out.insert(key, to_json(v));
            }
            Value::Object(out)
        }
        Y::Tagged(t) => to_json(t.value),
    }
}

/// `key:` at column 0; returns the key and the rest of the line after the colon.
fn top_key(line: &str) -> Option<(&str, &str)> {
    let first = line.chars().next()?;
    if !(first.is_ascii_alphabetic() || first == '_') {
        return None;
    }
    let colon = line.find(':')?;
    let key = &line[..colon];
    if !key
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return None;
    }
    let rest = &line[colon + 1..];
    if !(rest.is_empty() || rest.starts_with(' ') || rest.starts_with('\t')) {
        return None;
    }
    Some((key, rest))
}

/// Raw source text of each top-level value: the text after `key:` plus following lines that are
/// indented or blank, trimmed.
fn raw_values(yaml: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut current: Option<(String, String)> = None;
    for line in yaml.lines() {
        if let Some((k, rest)) = top_key(line) {
            if let Some((k0, v0)) = current.take() {
                out.insert(k0, v0.trim().to_string());
            }
            current = Some((k.to_string(), rest.trim().to_string()));
        } else if let Some((_, v)) = current.as_mut() {
            if line.starts_with([' ', '\t']) || line.trim().is_empty() {
                v.push('\n');
                v.push_str(line);
            } else if let Some((k0, v0)) = current.take() {
                out.insert(k0, v0.trim().to_string());
            }
        }
    }
    if let Some((k0, v0)) = current {
        out.insert(k0, v0.trim().to_string());
    }
    out
}

/// Quotes every top-level plain scalar (joining its indented continuation lines the way YAML
/// folds them) and turns leading tabs into spaces.
fn auto_quote(yaml: &str) -> String {
    let lines: Vec<String> = yaml
        .lines()
        .map(|l| {
            let tabs = l.len() - l.trim_start_matches('\t').len();
            if tabs > 0 {
                format!("{}{}", "  ".repeat(tabs), &l[tabs..])
            } else {
                l.to_string()
            }
        })
        .collect();
    let mut out = String::with_capacity(yaml.len() + 64);
    let mut i = 0;
    while i < lines.len() {
        let line = &lines[i];
        let Some((key, rest)) = top_key(line) else {
            out.push_str(line);
            out.push('\n');
            i += 1;
            continue;
        };
        let value = rest.trim();
        let mut j = i + 1;
        let mut cont = Vec::new();
        while j < lines.len() && top_key(&lines[j]).is_none() && !lines[j].trim().is_empty() {
            cont.push(lines[j].trim());
            j += 1;
        }
        if value.is_empty() || !needs_quote(value) {
            out.push_str(line);
            out.push('\n');
            i += 1;
            continue;
        }
        let mut joined = value.to_string();
        // Indented continuation lines belong to a plain scalar only when they are not a nested
        // block; a value on the key line rules out a nested block.
        for c in &cont {
            joined.push(' ');
            joined.push_str(c);
        }
        out.push_str(key);
        out.push_str(": '");
        out.push_str(&joined.replace('\'', "''"));
        out.push_str("'\n");
        i = j;
    }
    out
}

/// Whether a top-level value should be quoted by [`auto_quote`]: everything except quoted
/// strings, block scalars and complete flow collections.
fn needs_quote(value: &str) -> bool {
    if value.starts_with('|') || value.starts_with('>') {
        return false;
    }
    let quoted = |q: char| value.len() >= 2 && value.starts_with(q) && value.ends_with(q);
    if quoted('"') || quoted('\'') {
        return false;
    }
    if (value.starts_with('[') && value.ends_with(']'))
        || (value.starts_with('{') && value.ends_with('}'))
    {
        return serde_yaml::from_str::<serde_yaml::Value>(value).is_err();
    }
    true
}

/// The last-resort line parser (see the module docs).
fn line_parse(yaml: &str) -> Map<String, Value> {
    let mut chunks: Vec<(String, Vec<&str>)> = Vec::new();
    for line in yaml.lines() {
        if let Some((key, _)) = top_key(line) {
            let starts_new = KNOWN_KEYS.contains(&key)
                || chunks.last().is_none_or(|(_, lines)| {
                    serde_yaml::from_str::<serde_yaml::Value>(&lines.join("\n")).is_ok()
                });
            if starts_new {
                chunks.push((key.to_string(), vec![line]));
                continue;
            }
        }
        match chunks.last_mut() {
            Some((_, lines)) => lines.push(line),
            // Text before the first key is not frontmatter anyone could use.
            None => continue,
        }
    }
    let mut map = Map::new();
    for (key, lines) in chunks {
        let chunk = lines.join("\n");
        if let Ok(serde_yaml::Value::Mapping(m)) = serde_yaml::from_str::<serde_yaml::Value>(&chunk)
            && m.len() == 1
            && let Some((_, v)) = m.into_iter().next()
        {
            map.insert(key, to_json(v));
            continue;
        }
        let first = lines[0].split_once(':').map_or("", |(_, r)| r).trim();
        let mut text = first.to_string();
        for l in &lines[1..] {
            text.push('\n');
            text.push_str(l.trim_end());
        }
        let text = text.trim();
        let text = unquote(text);
        map.insert(key, Value::String(text.to_string()));
    }
    map
}

fn unquote(s: &str) -> &str {
    for q in ['"', '\''] {
        if s.len() >= 2 && s.starts_with(q) && s.ends_with(q) && !s[1..s.len() - 1].contains(q) {
            return &s[1..s.len() - 1];
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(text: &str) -> Document {
        parse(text, Path::new("x.md")).expect("parse")
    }

    #[test]
    fn no_frontmatter() {
        let d = p("# Title\ndescription: not frontmatter\n");
        assert!(d.frontmatter.is_empty());
        assert_eq!(d.body_line, 1);
        assert!(d.body.starts_with("# Title"));
    }

    #[test]
    fn strict_crlf_bom_and_no_final_newline() {
        let d = p("\u{feff}---\r\nname: a\r\ncount: 3\r\n---");
        assert_eq!(d.frontmatter["name"], "a");
        assert_eq!(d.frontmatter["count"], 3);
        assert_eq!(d.body, "");
        assert!(!d.lenient);
        let d = p("---\nname: a\n---\nbody\n");
        assert_eq!(d.body, "body\n");
        assert_eq!(d.body_line, 4);
    }

    #[test]
    fn dates_stay_strings_and_lists_keep_raw_text() {
        let d = p("---\ncreated: 2025-12-27\nargument-hint: [project-name]\n---\n");
        assert_eq!(d.frontmatter["created"], "2025-12-27");
        assert!(d.frontmatter["argument-hint"].is_array());
        assert_eq!(d.raw["argument-hint"], "[project-name]");
    }

    #[test]
    fn unquoted_colon_is_auto_quoted() {
        let d = p("---\nname: x\ndescription: Use when: the user asks\n---\n");
        assert!(d.lenient);
        assert!(
            d.strict_error
                .as_deref()
                .is_some_and(|e| e.starts_with("3:")),
            "{:?}",
            d.strict_error
        );
        assert_eq!(d.frontmatter["description"], "Use when: the user asks");
        assert_eq!(d.frontmatter["name"], "x");
    }

    #[test]
    fn glob_values_are_auto_quoted() {
        let d = p("---\npaths: **/*.{ts,tsx}\n---\n");
        assert!(d.lenient);
        assert_eq!(d.frontmatter["paths"], "**/*.{ts,tsx}");
    }

    #[test]
    fn example_blocks_fall_back_to_line_parser() {
        let text = "---\nname: reviewer\ndescription: Use this agent to review code. Examples: <example>Context: user says \"review\"\n<example>\nuser: \"check this\"\n</example>\nmodel: sonnet\n---\nBody\n";
        let d = p(text);
        assert!(d.lenient);
        assert_eq!(d.frontmatter["name"], "reviewer");
        assert_eq!(d.frontmatter["model"], "sonnet");
        let desc = d.frontmatter["description"].as_str().expect("string");
        assert!(desc.starts_with("Use this agent"));
        assert!(desc.contains("user: \"check this\""));
        assert!(desc.ends_with("</example>"));
        assert_eq!(d.body, "Body\n");
    }

    #[test]
    fn tabs_are_tolerated() {
        let d = p("---\nhooks:\n\tStop: x\nname: t\n---\n");
        assert!(d.lenient);
        assert_eq!(d.frontmatter["name"], "t");
    }

    #[test]
    fn unclosed_and_hopeless_are_errors_with_position() {
        let e = parse("---\nname: a\n", Path::new("a.md")).expect_err("unclosed");
        assert_eq!(
            e.to_string(),
            "a.md:1: frontmatter opened here is never closed with `---`"
        );
        let e = parse("---\n- just\n- a list\n---\n", Path::new("b.md")).expect_err("list");
        assert!(e.to_string().starts_with("b.md:"), "{e}");
    }

    #[test]
    fn yaml_value() {
        let v = parse_yaml_value("a: [1, 2]\n", Path::new("c.yaml")).expect("yaml");
        assert_eq!(v, serde_json::json!({"a": [1, 2]}));
        let e = parse_yaml_value("a: [1,\n", Path::new("c.yaml")).expect_err("bad");
        assert!(matches!(e, FrontmatterError::Yaml { .. }));
    }
}
