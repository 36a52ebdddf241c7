//! The hook `if` filter (spec 1.5).

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::bash;
use crate::paths::{self, Anchors};
use crate::rules::{self, RuleKind, Spec};
use crate::shell;

/// Whether a hook's `if` filter (one permission-rule string) selects this tool call.
///
/// Best effort and fail-open by design: an unparsable rule or command makes the hook run, and
/// a pattern more specific than a bare command name (`Bash(git push *)`) also runs the hook
/// when the command contains `$()`, backticks or `$VAR`, because the real command is unknown.
pub fn if_filter_matches(rule: &str, tool_name: &str, tool_input: &Value, cwd: &Path) -> bool {
    let home = warden_vocab::home_dir().unwrap_or_else(|| PathBuf::from("/"));
    let anchors = Anchors {
        cwd,
        home: &home,
        source_root: cwd,
    };
    // Allow-kind compilation gives `Edit(src/**)` its `<cwd>/src/**` reading (1.5); kinds only
    // differ otherwise in which rules they refuse, so fall back to deny for those shapes.
    let compiled = rules::compile(rule, RuleKind::Allow, 0, &anchors, false)
        .or_else(|_| rules::compile(rule, RuleKind::Deny, 0, &anchors, false));
    let Ok((rule, _)) = compiled else { return true };
    let tool = rules::canonical_tool(tool_name);
    let path_tool = rules::READ_TOOLS.contains(&tool) || rules::EDIT_TOOLS.contains(&tool);
    let tool_ok = match &rule.spec {
        Spec::Path { edit, .. } => {
            if *edit {
                rules::EDIT_TOOLS.contains(&tool)
            } else {
                rules::READ_TOOLS.contains(&tool)
            }
        }
        _ => rule.tool.matches(tool),
    };
    if !tool_ok {
        return false;
    }
    let str_field = |k: &str| tool_input.get(k).and_then(Value::as_str);
    match &rule.spec {
        Spec::Any => true,
        Spec::Command(p) => {
            let Some(command) = str_field("command") else {
                return true;
            };
            let Ok(parsed) = shell::parse(command) else {
                return true;
            };
            if p.is_specific() && parsed.dynamic {
                return true;
            }
            parsed.commands.iter().any(|c| {
                let stripped = bash::strip_wrappers(&c.words);
                let off = c.words.len() - stripped.len();
                p.matches(&stripped.join(" ")) || p.matches(&c.raw_words[off..].join(" "))
            })
        }
        Spec::Path { globs, .. } if path_tool => {
            let p = str_field("file_path")
                .or_else(|| str_field("notebook_path"))
                .or_else(|| str_field("path"));
            let path = p.map_or_else(|| paths::normalise(cwd), |p| paths::resolve(p, cwd, &home));
            let mut b = globset::GlobSetBuilder::new();
            for g in globs {
                match globset::GlobBuilder::new(g).literal_separator(true).build() {
                    Ok(g) => {
                        b.add(g);
                    }
                    Err(_) => return true,
                }
            }
            b.build().map_or(true, |s| s.is_match(&path))
        }
        Spec::Path { .. } => false,
        Spec::Domain(d) => match str_field("url")
            .and_then(|u| u.split_once("://"))
            .and_then(|(_, r)| r.split(['/', ':', '?', '#']).next())
        {
            Some(host) => d.matches(host.rsplit('@').next().unwrap_or(host)),
            None => true,
        },
        Spec::Param { name, value } => tool_input
            .get(name)
            .is_some_and(|v| rules::scalar_matches(v, value)),
        Spec::Text(p) => {
            let field = match tool {
                "Agent" => "subagent_type",
                "Skill" => "skill",
                _ => return true,
            };
            str_field(field).is_none_or(|t| p.matches(t))
        }
    }
}
