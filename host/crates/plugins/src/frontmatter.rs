//! Frontmatter checks for a plugin's skills, agents and commands (part of `validate`).
//!
//! Parsing is the instruction layer's (`warden_instructions::frontmatter`, the one YAML module);
//! this module classifies what it reports, following Claude Code:
//! * Frontmatter that cannot be parsed at all: an error for skills and commands; a warning for
//!   agents (a plugin agent with unparsable YAML still loads under its file name).
//! * Frontmatter that only loads through the lenient fallback: a warning with the strict parser's
//!   position, so authors can quote the offending value.
//! * A skill or agent without frontmatter or without `description`: a warning (the name comes
//!   from the directory or file; the description from the first paragraph).
//! * An unknown `model` alias, a boolean field that is not one of
//!   `true/false/yes/no/on/off/1/0`, an agent `name` containing `:`: warnings.

use std::path::Path;

use serde_json::Value;

use crate::diag::Diagnostic;
use crate::loader::LoadedPlugin;
use crate::util::{ReadLimitError, read_limited};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Skill,
    Agent,
    Command,
}

impl Kind {
    fn label(self) -> &'static str {
        match self {
            Kind::Skill => "skill",
            Kind::Agent => "agent",
            Kind::Command => "command",
        }
    }
}

/// Adds frontmatter diagnostics for every markdown component of `p`.
pub(crate) fn check_plugin(p: &LoadedPlugin, diags: &mut Vec<Diagnostic>) {
    for s in &p.skills {
        check_file(&s.file, Kind::Skill, diags);
    }
    for a in &p.agents {
        check_file(&a.path, Kind::Agent, diags);
    }
    for c in &p.commands {
        check_file(&c.path, Kind::Command, diags);
    }
}

fn check_file(path: &Path, kind: Kind, diags: &mut Vec<Diagnostic>) {
    let text = match read_limited(path, warden_instructions::frontmatter::MAX_FILE_BYTES) {
        Ok(t) => t,
        Err(ReadLimitError::NotUtf8) => {
            diags.push(Diagnostic::error(
                path,
                format!(
                    "{} file is not valid UTF-8; re-save it as UTF-8",
                    kind.label()
                ),
            ));
            return;
        }
        Err(e) => {
            diags.push(Diagnostic::error(
                path,
                format!("cannot read {} file: {e}", kind.label()),
            ));
            return;
        }
    };
    let doc = match warden_instructions::frontmatter::parse(&text, path) {
        Ok(d) => d,
        Err(e) => {
            let msg = format!("{e}");
            let msg = msg
                .split_once(": ")
                .map_or(msg.as_str(), |(_, m)| m)
                .to_string();
            let d = if kind == Kind::Agent {
                Diagnostic::warning(
                    path,
                    format!("{msg}; the agent still loads under its file name"),
                )
            } else {
                Diagnostic::error(path, format!("{msg}; fix the YAML between the `---` lines"))
            };
            diags.push(d.at(Some((e.line(), 1))));
            return;
        }
    };
    if doc.lenient {
        let (pos, msg) = match &doc.strict_error {
            Some(s) => {
                let mut it = s.splitn(3, ':');
                let l = it.next().and_then(|x| x.trim().parse().ok());
                let c = it.next().and_then(|x| x.trim().parse().ok());
                (l.zip(c), it.next().unwrap_or("").trim().to_string())
            }
            None => (None, String::new()),
        };
        diags.push(Diagnostic::warning(path, format!("frontmatter is not valid YAML ({msg}); it loads through the lenient parser — quote values that contain `: `")).at(pos));
    }
    let fm = &doc.frontmatter;
    let has_fm = !fm.is_empty() || text.trim_start_matches('\u{feff}').starts_with("---");
    if !has_fm {
        if kind != Kind::Command {
            diags.push(Diagnostic::warning(
                path,
                format!(
                    "{} has no frontmatter; add `---\\nname: ...\\ndescription: ...\\n---`",
                    kind.label()
                ),
            ));
        }
        return;
    }
    let desc_missing = fm
        .get("description")
        .and_then(Value::as_str)
        .is_none_or(|s| s.trim().is_empty());
    if desc_missing && kind != Kind::Command {
        diags.push(Diagnostic::warning(
            path,
            format!(
                "{} has no `description`; Claude uses it to decide when to use the {}",
                kind.label(),
                kind.label()
            ),
        ));
    }
    if kind == Kind::Agent
        && let Some(n) = fm.get("name").and_then(Value::as_str)
        && n.contains(':')
    {
        diags.push(Diagnostic::warning(
            path,
            format!("agent name `{n}` contains `:`; the plugin prefix is added automatically"),
        ));
    }
    if let Some(m) = fm.get("model").and_then(Value::as_str)
        && !matches!(
            m,
            "sonnet" | "opus" | "haiku" | "inherit" | "fast" | "default"
        )
        && !m.starts_with("claude-")
    {
        diags.push(Diagnostic::warning(path, format!("unknown model `{m}`; it is passed through unchanged (known aliases: sonnet, opus, haiku, inherit)")));
    }
    for key in [
        "user-invocable",
        "disable-model-invocation",
        "hide-from-slash-command-tool",
        "background",
    ] {
        match fm.get(key) {
            None | Some(Value::Bool(_)) => {}
            Some(Value::String(s))
                if matches!(
                    s.to_ascii_lowercase().as_str(),
                    "true" | "false" | "yes" | "no" | "on" | "off" | "1" | "0"
                ) => {}
            Some(Value::Number(n)) if n.as_u64().is_some_and(|v| v <= 1) => {}
            Some(other) => diags.push(Diagnostic::warning(
                path,
                format!(
                    "`{key}` should be a boolean (true/false/yes/no/on/off/1/0), found {other}"
                ),
            )),
        }
    }
}
