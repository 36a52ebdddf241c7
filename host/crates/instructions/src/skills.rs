//! Skills (`<dir>/SKILL.md`) and legacy commands (`commands/*.md`): discovery, naming,
//! precedence, the listing shown to the model, and rendering with substitutions and `!` command
//! injection.
//!
//! Choices where the spec is silent, following Claude Code's documented behaviour:
//! * a missing `description` falls back to the first paragraph of the body that is not a
//!   heading;
//! * `skill.md` in lower case is accepted with a warning; `SKILL.md` wins when both exist;
//! * a `SKILL.md` below another skill's directory is one of that skill's supporting files unless
//!   [`ScanOptions::nested_skills`] is set, in which case it becomes the skill `a/b`;
//! * a skills directory that itself holds `SKILL.md` is a single skill named after the directory
//!   (for plugins: frontmatter `name`, else the directory name), with a warning when the
//!   directory is literally called `skills`;
//! * rendering adds `Base directory for this skill: <dir>` before a skill's body, as Claude Code
//!   does, so relative references to supporting files resolve;
//! * when listing over budget, descriptions are dropped from the end of the listing first
//!   (there is no usage history here to find the least-used ones).

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use regex::Regex;
use serde_json::{Map, Value};

use crate::fields;
use crate::frontmatter::{self, Document};
use warden_vocab::Diagnostic;

/// Default cap on `description` + `when_to_use` in the listing (`skillListingMaxDescChars`).
pub const DEFAULT_MAX_DESC_CHARS: usize = 1536;
/// Default listing budget in characters (Claude Code's fixed fallback).
pub const DEFAULT_LISTING_BUDGET: usize = 8000;
/// Text that replaces an injected command when `disableSkillShellExecution` is on.
pub const SHELL_DISABLED_TEXT: &str = "[shell command execution disabled by policy]";

/// Where a skill or command comes from. Declared lowest precedence first.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case", tag = "scope", content = "plugin")]
pub enum SkillSource {
    /// From a plugin (namespaced, never conflicts).
    Plugin(String),
    /// `.claude/skills` or `.claude/commands` of the working directory or a parent.
    Project,
    /// `skills/` or `commands/` of `$WARDEN_HOME` or of Claude Code's user directory.
    User,
    /// `<managed dir>/.claude/skills` or `.claude/commands`.
    Managed,
}

/// Whether an entry is a skill directory or a legacy command file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SkillKind {
    /// `<name>/SKILL.md`, possibly with supporting files.
    Skill,
    /// `commands/<name>.md`.
    Command,
}

/// A loaded skill or command.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Skill {
    /// The name it is invoked by (`plugin:name` for plugins).
    pub name: String,
    /// The frontmatter `name`, when it differs from the invocation name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
    /// Skill or command.
    pub kind: SkillKind,
    /// Where it comes from.
    pub source: SkillSource,
    /// The markdown file.
    pub path: PathBuf,
    /// The skill's directory (`${CLAUDE_SKILL_DIR}`); the file's directory for commands.
    pub dir: PathBuf,
    /// The plugin root for plugin skills (`${CLAUDE_PLUGIN_ROOT}`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plugin_root: Option<PathBuf>,
    /// `description`, or the first paragraph of the body.
    pub description: String,
    /// `when_to_use`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub when_to_use: Option<String>,
    /// `argument-hint`, as written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub argument_hint: Option<String>,
    /// Named positional arguments (`arguments`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub arguments: Vec<String>,
    /// `disable-model-invocation`.
    pub disable_model_invocation: bool,
    /// `user-invocable` (default true).
    pub user_invocable: bool,
    /// `allowed-tools`, one entry per rule.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub allowed_tools: Vec<String>,
    /// `disallowed-tools`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub disallowed_tools: Vec<String>,
    /// `model`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// `effort`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub effort: Option<String>,
    /// `context` (`fork`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
    /// `agent` for a forked skill.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// `background`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub background: Option<bool>,
    /// `hooks`, as written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hooks: Option<Value>,
    /// `paths` (skills only; ignored for commands).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub paths: Vec<String>,
    /// `shell` (`bash` or `powershell`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shell: Option<String>,
    /// `metadata` (non-map values dropped).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
    /// True when the frontmatter needed the lenient parser.
    pub lenient: bool,
    /// The markdown body.
    #[serde(skip)]
    pub body: String,
}

/// Scan switches.
#[derive(Debug, Clone, Copy, Default)]
pub struct ScanOptions {
    /// Load `skills/a/b/SKILL.md` as its own skill `a/b` instead of a supporting file of `a`.
    pub nested_skills: bool,
}

/// Finds the skill directories under `root`: `root` itself when it holds `SKILL.md`, else each
/// child directory with one (symlinks followed once per target).
pub fn scan_skill_dirs(
    root: &Path,
    opts: ScanOptions,
    warnings: &mut Vec<Diagnostic>,
) -> Vec<(PathBuf, PathBuf, String)> {
    let mut out = Vec::new();
    if !root.is_dir() {
        return out;
    }
    if let Some(f) = skill_file(root, warnings) {
        let name = root
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if name == "skills" {
            warnings.push(Diagnostic::warning(
                &f,
                "SKILL.md directly in a skills directory; loaded as one skill",
            ));
        }
        out.push((root.to_path_buf(), f, name));
        return out;
    }
    let mut seen = HashSet::new();
    walk_skills(root, "", opts, &mut seen, &mut out, warnings, 0);
    out
}

fn walk_skills(
    dir: &Path,
    prefix: &str,
    opts: ScanOptions,
    seen: &mut HashSet<PathBuf>,
    out: &mut Vec<(PathBuf, PathBuf, String)>,
    warnings: &mut Vec<Diagnostic>,
    depth: usize,
) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = rd
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    entries.sort();
    for d in entries {
        let Some(name) = d.file_name().map(|n| n.to_string_lossy().into_owned()) else {
            continue;
        };
        if depth == 0 && name == "synced" {
            continue;
        }
        let Ok(real) = std::fs::canonicalize(&d) else {
            warnings.push(Diagnostic::warning(
                &d,
                "cannot resolve skill directory; skipped",
            ));
            continue;
        };
        if !seen.insert(real) {
            continue;
        }
        let full = if prefix.is_empty() {
            name.clone()
        } else {
            format!("{prefix}/{name}")
        };
        if let Some(f) = skill_file(&d, warnings) {
            out.push((d.clone(), f, full.clone()));
            if opts.nested_skills && depth < 8 {
                walk_skills(&d, &full, opts, seen, out, warnings, depth + 1);
            }
        } else if depth < 8 {
            let before = out.len();
            walk_skills(&d, &full, opts, seen, out, warnings, depth + 1);
            if !opts.nested_skills && out.len() > before {
                let skipped: Vec<(PathBuf, PathBuf, String)> = out.drain(before..).collect();
                for (_, f, _) in skipped {
                    warnings.push(Diagnostic::warning(&f, "nested SKILL.md under a directory without SKILL.md is not loaded (one-level scan)"));
                }
            }
        }
    }
}

fn skill_file(dir: &Path, warnings: &mut Vec<Diagnostic>) -> Option<PathBuf> {
    let upper = dir.join("SKILL.md");
    if upper.is_file() {
        return Some(upper);
    }
    let rd = std::fs::read_dir(dir).ok()?;
    for e in rd.filter_map(Result::ok) {
        let n = e.file_name().to_string_lossy().into_owned();
        if n.eq_ignore_ascii_case("skill.md") && e.path().is_file() {
            warnings.push(Diagnostic::warning(
                e.path(),
                format!("`{n}` is not spelled `SKILL.md`; loaded anyway"),
            ));
            return Some(e.path());
        }
    }
    None
}

/// Command files under `root`, recursively: (path, subdirectory segments, stem).
pub fn scan_command_files(
    root: &Path,
    warnings: &mut Vec<Diagnostic>,
) -> Vec<(PathBuf, Vec<String>, String)> {
    let mut out = Vec::new();
    if root.is_file() {
        if let Some(stem) = root.file_stem() {
            out.push((
                root.to_path_buf(),
                Vec::new(),
                stem.to_string_lossy().into_owned(),
            ));
        }
        return out;
    }
    if !root.is_dir() {
        return out;
    }
    let mut seen = HashSet::new();
    walk_md(root, &mut Vec::new(), &mut seen, &mut out, warnings);
    out
}

pub(crate) fn walk_md(
    dir: &Path,
    segs: &mut Vec<String>,
    seen: &mut HashSet<PathBuf>,
    out: &mut Vec<(PathBuf, Vec<String>, String)>,
    warnings: &mut Vec<Diagnostic>,
) {
    let real = match std::fs::canonicalize(dir) {
        Ok(r) => r,
        Err(e) => {
            warnings.push(Diagnostic::warning(
                dir,
                format!("cannot resolve directory ({e}); skipped"),
            ));
            return;
        }
    };
    if !seen.insert(real) || segs.len() > 8 {
        return;
    }
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = rd.filter_map(Result::ok).map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        let Some(name) = p.file_name().map(|n| n.to_string_lossy().into_owned()) else {
            continue;
        };
        if p.is_dir() {
            segs.push(name);
            walk_md(&p, segs, seen, out, warnings);
            segs.pop();
        } else if p.extension().is_some_and(|e| e == "md") && p.is_file() {
            let stem = p
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            out.push((p.clone(), segs.clone(), stem));
        }
    }
}

/// Reads and parses a markdown component file, turning every problem into a warning.
pub(crate) fn read_doc(path: &Path, warnings: &mut Vec<Diagnostic>) -> Option<Document> {
    let text = match frontmatter::read_file(path) {
        Ok(t) => t,
        Err(e) => {
            warnings.push(Diagnostic::warning(
                path,
                format!("cannot read: {e}; skipped"),
            ));
            return None;
        }
    };
    match frontmatter::parse(&text, path) {
        Ok(doc) => {
            if doc.lenient {
                let at = doc.strict_error.clone().unwrap_or_default();
                warnings.push(Diagnostic::warning(
                    path,
                    format!("frontmatter is not valid YAML ({at}); read with the lenient parser"),
                ));
            }
            Some(doc)
        }
        Err(e) => {
            warnings.push(Diagnostic::warning_at(path, e.line(), e.to_string()));
            None
        }
    }
}

/// The first paragraph of `body` that is not a heading, joined into one line.
pub fn first_paragraph(body: &str) -> String {
    let mut para: Vec<&str> = Vec::new();
    let mut in_fence = false;
    for line in body.lines() {
        let t = line.trim();
        if t.starts_with("```") || t.starts_with("~~~") {
            in_fence = !in_fence;
            if !para.is_empty() {
                break;
            }
            continue;
        }
        if in_fence {
            continue;
        }
        if t.is_empty() || t.starts_with('#') {
            if !para.is_empty() {
                break;
            }
            continue;
        }
        para.push(t);
    }
    para.join(" ")
}

/// Builds a skill or command from a parsed file.
#[allow(clippy::too_many_arguments)]
pub(crate) fn build(
    doc: Document,
    path: &Path,
    dir: &Path,
    kind: SkillKind,
    source: SkillSource,
    invocation_name: String,
    plugin_root: Option<&Path>,
    warnings: &mut Vec<Diagnostic>,
) -> Skill {
    let fm = &doc.frontmatter;
    let s = |k: &str| fields::string(&doc, k);
    let mut bad_bools = Vec::new();
    let mut b = |k: &str| -> Option<bool> {
        let v = fm.get(k)?;
        let r = fields::as_bool(v);
        if r.is_none() {
            bad_bools.push(format!("`{k}` is not a boolean ({v}); ignored"));
        }
        r
    };
    let disable_model_invocation = b("disable-model-invocation").unwrap_or(false);
    let user_invocable = b("user-invocable").unwrap_or(true);
    let background = b("background");
    for m in bad_bools {
        warnings.push(Diagnostic::warning(path, m));
    }
    let description = s("description").unwrap_or_else(|| first_paragraph(&doc.body));
    if fm.contains_key("allowed_tools") && !fm.contains_key("allowed-tools") {
        warnings.push(Diagnostic::warning(
            path,
            "`allowed_tools` is not a field (did you mean `allowed-tools`?); ignored",
        ));
    }
    let paths = match kind {
        SkillKind::Skill => fm.get("paths").map(fields::glob_list).unwrap_or_default(),
        SkillKind::Command => Vec::new(),
    };
    let display = s("name").filter(|n| *n != invocation_name);
    let metadata = match fm.get("metadata") {
        Some(Value::Object(m)) => Some(m.clone()),
        Some(Value::Null) | None => None,
        Some(_) => {
            warnings.push(Diagnostic::warning(
                path,
                "`metadata` is not a map; dropped",
            ));
            None
        }
    };
    Skill {
        name: invocation_name,
        display_name: display,
        kind,
        source,
        path: path.to_path_buf(),
        dir: dir.to_path_buf(),
        plugin_root: plugin_root.map(Path::to_path_buf),
        description,
        when_to_use: s("when_to_use").or_else(|| s("when-to-use")),
        argument_hint: s("argument-hint"),
        arguments: fm
            .get("arguments")
            .map(fields::word_list)
            .unwrap_or_default(),
        disable_model_invocation,
        user_invocable,
        allowed_tools: fm
            .get("allowed-tools")
            .map(fields::tool_list)
            .unwrap_or_default(),
        disallowed_tools: fm
            .get("disallowed-tools")
            .map(fields::tool_list)
            .unwrap_or_default(),
        model: s("model"),
        effort: s("effort"),
        context: s("context"),
        agent: s("agent"),
        background,
        hooks: fm.get("hooks").filter(|v| !v.is_null()).cloned(),
        paths,
        shell: s("shell"),
        metadata,
        lenient: doc.lenient,
        body: doc.body,
    }
}

/// One line of the listing: `- name: description - when_to_use`, the description part capped
/// at `max_desc` characters (an ellipsis marks a cut).
pub fn listing_line(skill: &Skill, max_desc: usize, with_description: bool) -> String {
    if !with_description {
        return format!("- {}", skill.name);
    }
    let mut desc = skill.description.clone();
    if let Some(w) = &skill.when_to_use {
        if desc.is_empty() {
            desc = w.clone();
        } else {
            desc = format!("{desc} - {w}");
        }
    }
    let desc: String = desc.split_whitespace().collect::<Vec<_>>().join(" ");
    let desc = truncate_chars(&desc, max_desc);
    if desc.is_empty() {
        format!("- {}", skill.name)
    } else {
        format!("- {}: {desc}", skill.name)
    }
}

/// Cuts `s` to at most `max` characters, the last one an ellipsis when cut.
pub fn truncate_chars(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// Runs `!` injected commands for the host, which routes them through its permission engine.
/// This crate never starts a shell itself.
pub trait CommandRunner {
    /// Runs `command` in `cwd` with the skill's `shell`; returns its output (stderr merged) or a
    /// message explaining why it failed or was not allowed.
    fn run(&self, command: &str, cwd: &Path) -> Result<String, String>;
}

/// Values for rendering a skill.
#[derive(Default)]
pub struct RenderOptions<'a> {
    /// Runs `!` commands; `None` leaves them in the text unexecuted (a preview).
    pub runner: Option<&'a dyn CommandRunner>,
    /// `${CLAUDE_SESSION_ID}`; left as written when `None`.
    pub session_id: Option<String>,
    /// `${CLAUDE_EFFORT}`; left as written when `None`.
    pub effort: Option<String>,
    /// `${CLAUDE_PROJECT_DIR}`.
    pub project_dir: Option<PathBuf>,
    /// `${CLAUDE_PLUGIN_DATA}` for plugin skills.
    pub plugin_data: Option<PathBuf>,
    /// Directory injected commands run in.
    pub cwd: PathBuf,
    /// `disableSkillShellExecution` is on.
    pub shell_disabled: bool,
}

/// A skill ready to be sent.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RenderedSkill {
    /// The invoked name.
    pub name: String,
    /// The text sent to the model.
    pub content: String,
    /// `allowed-tools` with `${CLAUDE_*}` placeholders substituted.
    pub allowed_tools: Vec<String>,
}

/// Why a skill could not be rendered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RenderError {
    /// No skill or command has this name.
    #[error("no skill or command named `{0}`")]
    NotFound(String),
    /// More than one plugin has a skill of this bare name.
    #[error("`{name}` is ambiguous: {}", candidates.join(", "))]
    Ambiguous {
        /// The name asked for.
        name: String,
        /// The namespaced names that match.
        candidates: Vec<String>,
    },
    /// An injected command failed or was refused; the whole invocation is aborted.
    #[error("{}:{line}: Shell command failed for pattern \"{pattern}\": {message}", path.display())]
    Shell {
        /// The skill file.
        path: PathBuf,
        /// 1-based line of the command in the file.
        line: usize,
        /// The pattern as written.
        pattern: String,
        /// What the runner said.
        message: String,
    },
}

/// Splits an argument string the way a shell would (quotes and backslashes), for `$N`.
pub fn split_args(args: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut have = false;
    let mut quote: Option<char> = None;
    let mut chars = args.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some('"'), '\\') => {
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
            }
            (Some(_), c) => cur.push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                have = true;
            }
            (None, '\\') => {
                if let Some(n) = chars.next() {
                    cur.push(n);
                    have = true;
                }
            }
            (None, c) if c.is_whitespace() => {
                if have || !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
                have = false;
            }
            (None, c) => {
                cur.push(c);
                have = true;
            }
        }
    }
    if have || !cur.is_empty() {
        out.push(cur);
    }
    out
}

static TOKEN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(\\\\)|\\(\$(?:ARGUMENTS\[\d+\]|\d+|[A-Za-z_][A-Za-z0-9_]*))|\$\{(CLAUDE_[A-Z_]+)\}|\$(?:ARGUMENTS\[(\d+)\]|(\d+)|([A-Za-z_][A-Za-z0-9_]*))")
        .unwrap_or_else(|e| panic!("static regex: {e}"))
});

/// Applies the argument substitutions of spec 6.3 to `text`. Returns the text and whether any
/// argument token was used.
fn substitute_args(text: &str, args: &str, named: &[String]) -> (String, bool) {
    let positional = split_args(args);
    let mut used = false;
    let out = TOKEN.replace_all(text, |c: &regex::Captures<'_>| {
        if let Some(m) = c.get(1) {
            return m.as_str().to_string();
        }
        if let Some(m) = c.get(2) {
            let tok = &m.as_str()[1..];
            let is_arg = tok == "ARGUMENTS"
                || tok.starts_with("ARGUMENTS[")
                || tok.chars().all(|ch| ch.is_ascii_digit())
                || named.iter().any(|n| n == tok);
            return if is_arg {
                m.as_str().to_string()
            } else {
                c[0].to_string()
            };
        }
        if c.get(3).is_some() {
            return c[0].to_string();
        }
        let idx = c
            .get(4)
            .or_else(|| c.get(5))
            .and_then(|m| m.as_str().parse::<usize>().ok());
        if c.get(4).is_some() || c.get(5).is_some() {
            used = true;
            return match idx.and_then(|i| positional.get(i)) {
                Some(v) => v.clone(),
                None => c[0].to_string(),
            };
        }
        if let Some(m) = c.get(6) {
            let name = m.as_str();
            if name == "ARGUMENTS" {
                used = true;
                return args.to_string();
            }
            if let Some(i) = named.iter().position(|n| n == name) {
                used = true;
                return positional.get(i).cloned().unwrap_or_default();
            }
        }
        c[0].to_string()
    });
    (out.into_owned(), used)
}

/// Replaces `${CLAUDE_*}` placeholders (a backslash never prevents this).
fn substitute_vars(text: &str, skill: &Skill, opts: &RenderOptions<'_>) -> String {
    static VAR: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"\$\{(CLAUDE_[A-Z_]+)\}").unwrap_or_else(|e| panic!("static regex: {e}"))
    });
    VAR.replace_all(text, |c: &regex::Captures<'_>| {
        let v: Option<String> = match &c[1] {
            "CLAUDE_SKILL_DIR" => Some(skill.dir.display().to_string()),
            "CLAUDE_SESSION_ID" => opts.session_id.clone(),
            "CLAUDE_EFFORT" => opts.effort.clone(),
            "CLAUDE_PROJECT_DIR" => opts.project_dir.as_ref().map(|p| p.display().to_string()),
            "CLAUDE_PLUGIN_ROOT" => skill.plugin_root.as_ref().map(|p| p.display().to_string()),
            "CLAUDE_PLUGIN_DATA" if skill.plugin_root.is_some() => {
                opts.plugin_data.as_ref().map(|p| p.display().to_string())
            }
            _ => None,
        };
        v.unwrap_or_else(|| c[0].to_string())
    })
    .into_owned()
}

/// Renders `skill` with `args`: argument substitution, `${CLAUDE_*}` placeholders, then `!`
/// command injection (whose output is not scanned again).
pub fn render(
    skill: &Skill,
    args: &str,
    opts: &RenderOptions<'_>,
) -> Result<RenderedSkill, RenderError> {
    let (mut text, used) = substitute_args(&skill.body, args, &skill.arguments);
    if !used && !args.trim().is_empty() {
        text = format!("{}\n\nARGUMENTS: {args}", text.trim_end());
    }
    let text = substitute_vars(&text, skill, opts);
    let body_line = count_frontmatter_lines(skill);
    let text = inject(&text, skill, opts, body_line)?;
    let content = match skill.kind {
        SkillKind::Skill => format!(
            "Base directory for this skill: {}\n\n{text}",
            skill.dir.display()
        ),
        SkillKind::Command => text,
    };
    let allowed_tools = skill
        .allowed_tools
        .iter()
        .map(|t| substitute_vars(t, skill, opts))
        .collect();
    Ok(RenderedSkill {
        name: skill.name.clone(),
        content,
        allowed_tools,
    })
}

fn count_frontmatter_lines(skill: &Skill) -> usize {
    frontmatter::read_file(&skill.path)
        .ok()
        .and_then(|t| frontmatter::parse(&t, &skill.path).ok())
        .map_or(1, |d| d.body_line)
}

/// Whether a skill's file contains `!` command injections.
pub fn has_injections(body: &str) -> bool {
    INLINE.is_match(body) || body.contains("```!")
}

static INLINE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?m)(^|\s)!`([^`\n]+)`").unwrap_or_else(|e| panic!("static regex: {e}"))
});

fn inject(
    text: &str,
    skill: &Skill,
    opts: &RenderOptions<'_>,
    body_line: usize,
) -> Result<String, RenderError> {
    let exempt = matches!(skill.source, SkillSource::Managed);
    let run = |cmd: &str, pattern: &str, offset: usize| -> Result<Option<String>, RenderError> {
        if opts.shell_disabled && !exempt {
            return Ok(Some(SHELL_DISABLED_TEXT.to_string()));
        }
        let Some(r) = opts.runner else {
            return Ok(None);
        };
        r.run(cmd, &opts.cwd)
            .map(Some)
            .map_err(|message| RenderError::Shell {
                path: skill.path.clone(),
                line: body_line + text[..offset].matches('\n').count(),
                pattern: pattern.to_string(),
                message,
            })
    };
    // Fenced ```! blocks first: their content spans lines.
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let mut consumed = 0;
    loop {
        let Some(start) = find_block_start(rest) else {
            out.push_str(rest);
            break;
        };
        let after_open = start + 4;
        let body_start = rest[after_open..]
            .find('\n')
            .map_or(rest.len(), |i| after_open + i + 1);
        let Some(close_rel) = rest[body_start..].find("```") else {
            out.push_str(rest);
            break;
        };
        let close = body_start + close_rel;
        let cmd = rest[body_start..close].trim();
        let pattern = &rest[start..close + 3];
        out.push_str(&rest[..start]);
        match run(cmd, pattern, consumed + start)? {
            Some(o) => out.push_str(o.trim_end()),
            None => out.push_str(pattern),
        }
        consumed += close + 3;
        rest = &rest[close + 3..];
    }
    let mut err = None;
    let replaced = INLINE.replace_all(&out, |c: &regex::Captures<'_>| {
        if err.is_some() {
            return c[0].to_string();
        }
        let pre = &c[1];
        let whole = c.get(0).map_or(0, |m| m.start());
        match run(&c[2], &format!("!`{}`", &c[2]), whole.min(text.len())) {
            Ok(Some(o)) => format!("{pre}{}", o.trim_end()),
            Ok(None) => c[0].to_string(),
            Err(e) => {
                err = Some(e);
                c[0].to_string()
            }
        }
    });
    match err {
        Some(e) => Err(e),
        None => Ok(replaced.into_owned()),
    }
}

fn find_block_start(s: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(i) = s[from..].find("```!") {
        let at = from + i;
        if at == 0 || s[..at].ends_with('\n') {
            return Some(at);
        }
        from = at + 4;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skill(body: &str, named: &[&str]) -> Skill {
        let doc = Document {
            body: body.to_string(),
            body_line: 1,
            ..Document::default()
        };
        let mut w = Vec::new();
        let mut s = build(
            doc,
            Path::new("/p/s/SKILL.md"),
            Path::new("/p/s"),
            SkillKind::Command,
            SkillSource::Project,
            "s".into(),
            None,
            &mut w,
        );
        s.arguments = named.iter().map(|n| n.to_string()).collect();
        s
    }

    fn r(body: &str, named: &[&str], args: &str) -> String {
        render(&skill(body, named), args, &RenderOptions::default())
            .expect("render")
            .content
    }

    #[test]
    fn arguments_full_and_appended() {
        assert_eq!(r("Do $ARGUMENTS now", &[], "a b"), "Do a b now");
        assert_eq!(r("Do it", &[], "x y"), "Do it\n\nARGUMENTS: x y");
        assert_eq!(r("Do it", &[], ""), "Do it");
    }

    #[test]
    fn positional_zero_based_quoted_and_missing() {
        assert_eq!(
            r("$0|$1|$ARGUMENTS[1]|$2", &[], "one 'two three'"),
            "one|two three|two three|$2"
        );
        assert_eq!(r("$ARGUMENTS[5]", &[], "a"), "$ARGUMENTS[5]");
    }

    #[test]
    fn named_arguments() {
        assert_eq!(
            r("from $src to $dst, $HOME stays", &["src", "dst"], "a"),
            "from a to , $HOME stays"
        );
    }

    #[test]
    fn escapes() {
        assert_eq!(
            r(r"\$1 and \$ARGUMENTS and $0", &[], "v"),
            r"$1 and $ARGUMENTS and v"
        );
        assert_eq!(r(r"\\$0", &[], "v"), r"\\v");
    }

    #[test]
    fn claude_vars_ignore_backslash() {
        let s = skill(
            r"dir=\${CLAUDE_SKILL_DIR} id=${CLAUDE_SESSION_ID} x=${CLAUDE_NOPE}",
            &[],
        );
        let o = RenderOptions {
            session_id: Some("S1".into()),
            ..RenderOptions::default()
        };
        assert_eq!(
            render(&s, "", &o).expect("render").content,
            r"dir=\/p/s id=S1 x=${CLAUDE_NOPE}"
        );
    }

    struct Echo;
    impl CommandRunner for Echo {
        fn run(&self, command: &str, _cwd: &Path) -> Result<String, String> {
            if command.contains("fail") {
                Err("exit 2".into())
            } else {
                Ok(format!("<{command}>\n"))
            }
        }
    }

    #[test]
    fn injection_inline_and_block_and_policy() {
        let body = "Status: !`git status`\nno!`x`\n```!\nls -la\n```\n";
        let o = RenderOptions {
            runner: Some(&Echo),
            ..RenderOptions::default()
        };
        let out = render(&skill(body, &[]), "", &o).expect("render").content;
        assert_eq!(out, "Status: <git status>\nno!`x`\n<ls -la>\n");
        let o = RenderOptions {
            runner: Some(&Echo),
            shell_disabled: true,
            ..RenderOptions::default()
        };
        let out = render(&skill(body, &[]), "", &o).expect("render").content;
        assert!(out.starts_with(&format!("Status: {SHELL_DISABLED_TEXT}")));
        let o = RenderOptions {
            runner: Some(&Echo),
            ..RenderOptions::default()
        };
        let e = render(&skill("a\n!`fail now`\n", &[]), "", &o).expect_err("fails");
        assert!(
            matches!(e, RenderError::Shell { ref pattern, .. } if pattern == "!`fail now`"),
            "{e}"
        );
    }

    #[test]
    fn listing_truncates_in_chars() {
        let mut s = skill("", &[]);
        s.description = "é".repeat(2000);
        s.when_to_use = Some("later".into());
        let line = listing_line(&s, DEFAULT_MAX_DESC_CHARS, true);
        assert_eq!(line.chars().count(), "- s: ".len() + DEFAULT_MAX_DESC_CHARS);
        assert!(line.ends_with('…'));
        s.description = "Short.".into();
        assert_eq!(
            listing_line(&s, DEFAULT_MAX_DESC_CHARS, true),
            "- s: Short. - later"
        );
    }
}
