//! Subagents (`agents/**/*.md` and `--agents` JSON), spec 7.
//!
//! Precedence for one name: managed > `--agents` > project (closest to the working directory
//! first) > user > plugin. Plugin agents are namespaced (`plugin:sub:name`), so they never
//! clash with the others.
//!
//! Claude Code skips non-plugin files with no `name`, a bad `name`, no `description` or
//! unparsable YAML silently; Warden skips them too but records a warning so `warden context`
//! can explain a missing agent. Plugin agents load under their file name in those cases.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::fields;
use crate::frontmatter::Document;
use crate::reach::Reach;
use crate::skills::{read_doc, walk_md};
use warden_vocab::Diagnostic;

/// Where an agent comes from. Declared lowest precedence first.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case", tag = "scope", content = "plugin")]
pub enum AgentSource {
    /// A plugin's `agents/`.
    Plugin(String),
    /// `agents/` of `$WARDEN_HOME` or of Claude Code's user directory.
    User,
    /// `.claude/agents/` of the working directory or a parent.
    Project,
    /// `--agents` JSON.
    Cli,
    /// `<managed dir>/.claude/agents/`.
    Managed,
}

/// A loaded subagent definition.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Agent {
    /// The `agent_type` (namespaced for plugins).
    pub name: String,
    /// Where it comes from.
    pub source: AgentSource,
    /// The file (`None` for `--agents` JSON).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<PathBuf>,
    /// `description`.
    pub description: String,
    /// `tools` (`None` = inherit all).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<String>>,
    /// `disallowedTools`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub disallowed_tools: Vec<String>,
    /// `model`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// `permissionMode` (always `None` for plugin agents).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub permission_mode: Option<String>,
    /// `maxTurns`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_turns: Option<u64>,
    /// `skills` to preload.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub skills: Vec<String>,
    /// `mcpServers` as written (always `None` for plugin agents).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mcp_servers: Option<Value>,
    /// `hooks` as written (always `None` for plugin agents).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hooks: Option<Value>,
    /// `memory` (`user`, `project`, `local`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory: Option<String>,
    /// `background`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub background: Option<bool>,
    /// `effort`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub effort: Option<String>,
    /// `isolation`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub isolation: Option<String>,
    /// `color`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub color: Option<String>,
    /// `initialPrompt`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub initial_prompt: Option<String>,
    /// The system prompt (the body).
    #[serde(skip)]
    pub prompt: String,
}

/// Known model aliases; other values pass through with a warning.
const MODELS: &[&str] = &["sonnet", "opus", "haiku", "fable", "inherit"];

/// `lowercase + hyphens; no ':'; not starting with '-'` (digits accepted too).
pub fn valid_agent_name(n: &str) -> bool {
    !n.is_empty()
        && !n.starts_with('-')
        && n.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

fn from_map(
    fm: &Map<String, Value>,
    doc: Option<&Document>,
    name: String,
    source: AgentSource,
    path: Option<&Path>,
    prompt: String,
    warnings: &mut Vec<Diagnostic>,
) -> Agent {
    let wpath = path.map_or_else(|| PathBuf::from("--agents"), Path::to_path_buf);
    let s = |k: &str| match doc {
        Some(d) => fields::string(d, k),
        None => fields::map_string(fm, k),
    };
    let model = s("model");
    if let Some(m) = &model
        && !MODELS.contains(&m.as_str())
        && !m.starts_with("claude-")
    {
        warnings.push(Diagnostic::warning(
            &wpath,
            format!("unknown model `{m}`; passed through"),
        ));
    }
    let mut agent = Agent {
        name,
        source: source.clone(),
        path: path.map(Path::to_path_buf),
        description: s("description").unwrap_or_default(),
        tools: fm
            .get("tools")
            .filter(|v| !v.is_null())
            .map(fields::tool_list),
        disallowed_tools: fm
            .get("disallowedTools")
            .map(fields::tool_list)
            .unwrap_or_default(),
        model,
        permission_mode: s("permissionMode"),
        max_turns: fm.get("maxTurns").and_then(|v| {
            v.as_u64()
                .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
        }),
        skills: fm.get("skills").map(fields::word_list).unwrap_or_default(),
        mcp_servers: fm.get("mcpServers").filter(|v| !v.is_null()).cloned(),
        hooks: fm.get("hooks").filter(|v| !v.is_null()).cloned(),
        memory: s("memory"),
        background: fm.get("background").and_then(fields::as_bool),
        effort: s("effort"),
        isolation: s("isolation"),
        color: s("color"),
        initial_prompt: s("initialPrompt"),
        prompt,
    };
    if matches!(source, AgentSource::Plugin(_)) {
        let mut stripped = Vec::new();
        if agent.hooks.take().is_some() {
            stripped.push("hooks");
        }
        if agent.mcp_servers.take().is_some() {
            stripped.push("mcpServers");
        }
        if agent.permission_mode.take().is_some() {
            stripped.push("permissionMode");
        }
        if !stripped.is_empty() {
            warnings.push(Diagnostic::warning(
                &wpath,
                format!("plugin agents cannot set {}; ignored", stripped.join(", ")),
            ));
        }
    }
    agent
}

/// Loads the agent files of one directory tree (non-plugin scopes). Each file passes `reach`
/// first; a project's must resolve inside the project.
pub fn load_dir(
    dir: &Path,
    source: AgentSource,
    reach: &Reach,
    warnings: &mut Vec<Diagnostic>,
) -> Vec<Agent> {
    let mut out = Vec::new();
    if !dir.is_dir() {
        return out;
    }
    let mut files = Vec::new();
    walk_md(
        dir,
        &mut Vec::new(),
        &mut HashSet::new(),
        &mut files,
        warnings,
    );
    let contained = source == AgentSource::Project;
    for (path, _, _) in files {
        if let Err(why) = reach.check(&path, contained) {
            warnings.push(Diagnostic::warning(&path, why.to_string()));
            continue;
        }
        let Some(doc) = read_doc(&path, warnings) else {
            continue;
        };
        let Some(name) = fields::string(&doc, "name") else {
            warnings.push(Diagnostic::warning(
                &path,
                "no `name` in frontmatter; not an agent, skipped",
            ));
            continue;
        };
        if !valid_agent_name(&name) {
            warnings.push(Diagnostic::warning(
                &path,
                format!(
                    "agent name `{name}` must be lowercase letters, digits and hyphens; skipped"
                ),
            ));
            continue;
        }
        if fields::string(&doc, "description").is_none() {
            warnings.push(Diagnostic::warning(
                &path,
                "agent has no `description`; skipped",
            ));
            continue;
        }
        out.push(from_map(
            &doc.frontmatter,
            Some(&doc),
            name,
            source.clone(),
            Some(&path),
            doc.body.clone(),
            warnings,
        ));
    }
    out
}

/// Loads a plugin's agents; subdirectories become part of the name (`plugin:sub:name`). Each
/// file passes `reach`'s secret check.
pub fn load_plugin_dir(
    dir: &Path,
    plugin: &str,
    reach: &Reach,
    warnings: &mut Vec<Diagnostic>,
) -> Vec<Agent> {
    let mut out = Vec::new();
    let mut files = Vec::new();
    if dir.is_file() {
        if let Some(stem) = dir.file_stem() {
            files.push((
                dir.to_path_buf(),
                Vec::new(),
                stem.to_string_lossy().into_owned(),
            ));
        }
    } else if dir.is_dir() {
        walk_md(
            dir,
            &mut Vec::new(),
            &mut HashSet::new(),
            &mut files,
            warnings,
        );
    }
    for (path, segs, stem) in files {
        if let Err(why) = reach.check(&path, false) {
            warnings.push(Diagnostic::warning(&path, why.to_string()));
            continue;
        }
        let text = match crate::frontmatter::read_file(&path) {
            Ok(t) => t,
            Err(e) => {
                warnings.push(Diagnostic::warning(
                    &path,
                    format!("cannot read: {e}; skipped"),
                ));
                continue;
            }
        };
        let doc = match crate::frontmatter::parse(&text, &path) {
            Ok(d) => {
                if d.lenient {
                    let at = d.strict_error.clone().unwrap_or_default();
                    warnings.push(Diagnostic::warning(
                        &path,
                        format!(
                            "frontmatter is not valid YAML ({at}); read with the lenient parser"
                        ),
                    ));
                }
                d
            }
            Err(e) => {
                warnings.push(Diagnostic::warning_at(
                    &path,
                    e.line(),
                    format!("{e}; loaded under its file name"),
                ));
                Document {
                    body: text.clone(),
                    body_line: 1,
                    ..Document::default()
                }
            }
        };
        let base = match fields::string(&doc, "name") {
            Some(n) if !n.contains(':') => n,
            Some(n) => {
                warnings.push(Diagnostic::warning(
                    &path,
                    format!("agent name `{n}` contains `:`; loaded as `{stem}`"),
                ));
                stem.clone()
            }
            None => {
                if doc.frontmatter.is_empty() {
                    warnings.push(Diagnostic::warning(
                        &path,
                        "no frontmatter; loaded as an agent under its file name",
                    ));
                }
                stem.clone()
            }
        };
        if fields::string(&doc, "description").is_none() {
            warnings.push(Diagnostic::warning(&path, "agent has no `description`"));
        }
        let mut name = plugin.to_string();
        for s in &segs {
            name.push(':');
            name.push_str(s);
        }
        name.push(':');
        name.push_str(&base);
        out.push(from_map(
            &doc.frontmatter,
            Some(&doc),
            name,
            AgentSource::Plugin(plugin.to_string()),
            Some(&path),
            doc.body.clone(),
            warnings,
        ));
    }
    out
}

/// Agents from `--agents` JSON: `{ "name": { "description": …, "prompt": …, … } }`.
pub fn load_cli(json: &Value, warnings: &mut Vec<Diagnostic>) -> Vec<Agent> {
    let mut out = Vec::new();
    let Some(map) = json.as_object() else {
        warnings.push(Diagnostic::warning(
            Path::new("--agents"),
            "must be a JSON object of agent definitions; ignored",
        ));
        return out;
    };
    for (name, def) in map {
        let Some(def) = def.as_object() else {
            warnings.push(Diagnostic::warning(
                Path::new("--agents"),
                format!("agent `{name}` is not an object; skipped"),
            ));
            continue;
        };
        if !valid_agent_name(name) {
            warnings.push(Diagnostic::warning(
                Path::new("--agents"),
                format!(
                    "agent name `{name}` must be lowercase letters, digits and hyphens; skipped"
                ),
            ));
            continue;
        }
        let prompt = fields::map_string(def, "prompt").unwrap_or_default();
        out.push(from_map(
            def,
            None,
            name.clone(),
            AgentSource::Cli,
            None,
            prompt,
            warnings,
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert!(valid_agent_name("code-reviewer2"));
        assert!(!valid_agent_name("Code"));
        assert!(!valid_agent_name("-x"));
        assert!(!valid_agent_name("a:b"));
    }

    #[test]
    fn cli_agents() {
        let mut w = Vec::new();
        let a = load_cli(
            &serde_json::json!({"rev": {"description": "d", "prompt": "p", "tools": "Read, Grep"}, "Bad": {}}),
            &mut w,
        );
        assert_eq!(a.len(), 1);
        assert_eq!(
            a[0].tools.as_deref(),
            Some(&["Read".to_string(), "Grep".to_string()][..])
        );
        assert_eq!(w.len(), 1);
    }
}
