//! Plugin features that start a program for the session: monitors and status lines.
//!
//! - A **monitor** (`experimental.monitors` in `plugin.json`, inline or as paths, else
//!   `monitors/monitors.json`) is `{name, command, description, when?}`: a shell command run in
//!   the background for the session's life, each line of whose standard output is an event for
//!   the model. `when` is `"always"` (the default: from session start) or
//!   `"on-skill-invoke:<skill>"` (from the first use of that skill of the plugin). Unknown keys
//!   are ignored, as Claude Code ignores them.
//! - A **status line** (`statusLine` in a settings file; `subagentStatusLine` there or in a
//!   plugin's `settings.json` or manifest `settings`) is `{type: "command", command, padding?}`:
//!   a shell command given the session as JSON on standard input, whose standard output is the
//!   status line.
//!
//! Unlike the hooks schema, these are read strictly: an entry that is not of this shape is an
//! error naming the file and the entry, and the entry is not used.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

/// A problem with a monitor or status line declaration, naming its file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {at}: {message}", file.display())]
pub struct FeatureError {
    /// The file that declares it (`plugin.json` for an inline declaration).
    pub file: PathBuf,
    /// Where in the file: `monitors[2]`, `statusLine`, …
    pub at: String,
    /// What is wrong.
    pub message: String,
}

/// When a monitor starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MonitorWhen {
    /// At session start (`"always"`, the default).
    Always,
    /// The first time the plugin's skill of this name is invoked (`"on-skill-invoke:<skill>"`).
    OnSkillInvoke(String),
}

impl MonitorWhen {
    /// As written in the file.
    pub fn as_written(&self) -> String {
        match self {
            MonitorWhen::Always => "always".to_string(),
            MonitorWhen::OnSkillInvoke(s) => format!("on-skill-invoke:{s}"),
        }
    }
}

/// One monitor of a plugin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MonitorSpec {
    /// Unique within the plugin.
    pub name: String,
    /// The shell command, as written (`${CLAUDE_PLUGIN_ROOT}` and the like not yet replaced).
    pub command: String,
    /// What it watches: shown with each of its events.
    pub description: String,
    /// When it starts.
    pub when: MonitorWhen,
}

/// Reads a monitors declaration (`value` is the array from `file`); `first_index` numbers the
/// entries after those of earlier files. Returns the good entries and one error per bad one.
pub fn parse_monitors(
    value: &Value,
    file: &Path,
    first_index: usize,
) -> (Vec<MonitorSpec>, Vec<FeatureError>) {
    let err = |at: String, message: String| FeatureError {
        file: file.to_path_buf(),
        at,
        message,
    };
    let Value::Array(entries) = value else {
        return (
            Vec::new(),
            vec![err(
                "monitors".into(),
                format!(
                    "must be an array of {{name, command, description, when?}}, found {}",
                    crate::text::a_json_type(value)
                ),
            )],
        );
    };
    let mut specs = Vec::new();
    let mut errors = Vec::new();
    for (i, entry) in entries.iter().enumerate() {
        let at = format!("monitors[{}]", first_index + i);
        let Value::Object(o) = entry else {
            errors.push(err(
                at,
                format!(
                    "must be an object, found {}",
                    crate::text::a_json_type(entry)
                ),
            ));
            continue;
        };
        let text = |key: &str| -> Result<String, String> {
            match o.get(key) {
                Some(Value::String(s)) if !s.trim().is_empty() => Ok(s.clone()),
                Some(Value::String(_)) => Err(format!("`{key}` is empty")),
                Some(other) => Err(format!(
                    "`{key}` must be a string, found {}",
                    crate::text::a_json_type(other)
                )),
                None => Err(format!("`{key}` is missing")),
            }
        };
        let when = match o.get("when") {
            None | Some(Value::Null) => Ok(MonitorWhen::Always),
            Some(Value::String(s)) if s == "always" => Ok(MonitorWhen::Always),
            Some(Value::String(s)) => match s.strip_prefix("on-skill-invoke:") {
                Some(skill) if !skill.trim().is_empty() => {
                    Ok(MonitorWhen::OnSkillInvoke(skill.trim().to_string()))
                }
                _ => Err(format!(
                    "`when` must be \"always\" or \"on-skill-invoke:<skill>\", found {s:?}"
                )),
            },
            Some(other) => Err(format!(
                "`when` must be a string, found {}",
                crate::text::a_json_type(other)
            )),
        };
        match (text("name"), text("command"), text("description"), when) {
            (Ok(name), Ok(command), Ok(description), Ok(when)) => {
                if specs.iter().any(|s: &MonitorSpec| s.name == name) {
                    errors.push(err(
                        at,
                        format!("a monitor named `{name}` is declared twice; names are unique within a plugin"),
                    ));
                } else {
                    specs.push(MonitorSpec {
                        name,
                        command,
                        description,
                        when,
                    });
                }
            }
            (a, b, c, d) => {
                let problems: Vec<String> = [a.err(), b.err(), c.err(), d.err()]
                    .into_iter()
                    .flatten()
                    .collect();
                errors.push(err(at, problems.join("; ")));
            }
        }
    }
    (specs, errors)
}

/// A `statusLine` or `subagentStatusLine` setting.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusLineSpec {
    /// The shell command, as written.
    pub command: String,
    /// Columns of padding Claude Code puts around it (kept; Warden prints no frame).
    pub padding: Option<u64>,
}

/// Reads the setting `key` (`statusLine`, `subagentStatusLine`) of a settings object from
/// `file`: `None` when it is not set (or `null`).
pub fn parse_status_line(
    settings: &Map<String, Value>,
    key: &str,
    file: &Path,
) -> Option<Result<StatusLineSpec, FeatureError>> {
    let value = settings.get(key)?;
    let err = |message: String| FeatureError {
        file: file.to_path_buf(),
        at: key.to_string(),
        message,
    };
    let o = match value {
        Value::Null => return None,
        Value::Object(o) => o,
        other => {
            return Some(Err(err(format!(
                "must be an object {{\"type\": \"command\", \"command\": …}}, found {}",
                crate::text::a_json_type(other)
            ))));
        }
    };
    match o.get("type") {
        Some(Value::String(t)) if t == "command" => {}
        Some(Value::String(t)) => {
            return Some(Err(err(format!("`type` must be \"command\", found {t:?}"))));
        }
        Some(other) => {
            return Some(Err(err(format!(
                "`type` must be \"command\", found {}",
                crate::text::a_json_type(other)
            ))));
        }
        None => return Some(Err(err("`type` is missing (it is \"command\")".into()))),
    }
    let command = match o.get("command") {
        Some(Value::String(c)) if !c.trim().is_empty() => c.clone(),
        Some(Value::String(_)) => return Some(Err(err("`command` is empty".into()))),
        Some(other) => {
            return Some(Err(err(format!(
                "`command` must be a string, found {}",
                crate::text::a_json_type(other)
            ))));
        }
        None => return Some(Err(err("`command` is missing".into()))),
    };
    let padding = match o.get("padding") {
        None | Some(Value::Null) => None,
        Some(Value::Number(n)) if n.as_u64().is_some() => n.as_u64(),
        Some(other) => {
            return Some(Err(err(format!(
                "`padding` must be a non-negative integer, found {other}"
            ))));
        }
    };
    Some(Ok(StatusLineSpec { command, padding }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn monitors_are_read_with_errors_naming_the_file_and_entry() {
        let file = Path::new("/p/monitors/monitors.json");
        let (specs, errors) = parse_monitors(
            &json!([
                {"name": "a", "command": "tail -F x", "description": "d"},
                {"name": "b", "command": "c", "description": "d", "when": "on-skill-invoke:s", "x": 1},
                {"name": "c", "description": "d"},
                {"name": "a", "command": "c", "description": "d"},
                {"name": "e", "command": "c", "description": "d", "when": "sometimes"},
            ]),
            file,
            0,
        );
        assert_eq!(specs.len(), 2);
        assert_eq!(specs[1].when, MonitorWhen::OnSkillInvoke("s".into()));
        let lines: Vec<String> = errors.iter().map(ToString::to_string).collect();
        assert_eq!(
            lines,
            [
                "/p/monitors/monitors.json: monitors[2]: `command` is missing",
                "/p/monitors/monitors.json: monitors[3]: a monitor named `a` is declared twice; names are unique within a plugin",
                "/p/monitors/monitors.json: monitors[4]: `when` must be \"always\" or \"on-skill-invoke:<skill>\", found \"sometimes\"",
            ]
        );
    }

    #[test]
    fn status_lines_need_a_command() {
        let file = Path::new("/h/settings.json");
        let s = json!({
            "statusLine": {"type": "command", "command": "echo hi", "padding": 0},
            "subagentStatusLine": {"type": "static"},
        });
        let m = s.as_object().cloned().unwrap_or_default();
        assert_eq!(
            parse_status_line(&m, "statusLine", file),
            Some(Ok(StatusLineSpec {
                command: "echo hi".into(),
                padding: Some(0)
            }))
        );
        let e = parse_status_line(&m, "subagentStatusLine", file).and_then(Result::err);
        assert_eq!(
            e.map(|e| e.to_string()).as_deref(),
            Some(
                "/h/settings.json: subagentStatusLine: `type` must be \"command\", found \"static\""
            )
        );
        assert_eq!(parse_status_line(&m, "other", file), None);
    }
}
