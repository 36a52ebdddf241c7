//! Text-level decisions: a tool call's name and input against the rules, the mode and the
//! hooks' verdict.

use serde_json::Value;

use super::files::FileOp;
use super::{Auto, Facts, Guard, Permissions};
use crate::decision::{Decision, HookVerdict, Ruling};
use crate::paths;
use crate::rules::{self, first};

impl Permissions {
    /// Decides a tool call: rules merged across scopes, deny → ask → allow, then the mode.
    /// `hook` is the merged PreToolUse verdict, if any hook gave one; a hook's `allow` never
    /// overrides a deny or ask rule, its `deny` wins over everything, and `defer` is no opinion.
    pub fn decide(&self, tool_name: &str, tool_input: &Value, hook: Option<HookVerdict>) -> Ruling {
        let tool = rules::canonical_tool(tool_name);
        // A deferring hook has no opinion on the call itself; the rules decide.
        let hook = hook.and_then(HookVerdict::decision);
        if hook == Some(Decision::Deny) {
            return self.plain(Decision::Deny, "blocked by a PreToolUse hook");
        }
        if tool == "EndConversation" {
            return self.plain(
                Decision::Allow,
                "EndConversation cannot be denied or prompted for",
            );
        }
        let mut f = Facts::default();
        f.deny(self.deny.tool_level(tool));
        f.ask(self.ask.tool_level(tool));
        f.allow = self.allow.tool_level(tool);
        f.deny(self.deny.param(tool, tool_input));
        f.ask(self.ask.param(tool, tool_input));
        let str_field = |k: &str| tool_input.get(k).and_then(Value::as_str);
        match tool {
            "Bash" => {
                let command = str_field("command").unwrap_or("");
                self.bash_facts(command, &self.cwd, &mut f);
            }
            t if rules::READ_TOOLS.contains(&t) => {
                let p = str_field("file_path")
                    .or_else(|| str_field("notebook_path"))
                    .or_else(|| str_field("path"));
                let path = p.map_or_else(
                    || self.cwd.clone(),
                    |p| paths::resolve(p, &self.cwd, &self.home),
                );
                // The tools normalise the path before opening it, so the kernel resolves
                // links in the normalised form.
                let names = self.spellings(path.clone(), &path, false);
                self.path_facts(FileOp::Read, &names, &mut f);
            }
            t if rules::EDIT_TOOLS.contains(&t) => {
                let p = str_field("file_path")
                    .or_else(|| str_field("notebook_path"))
                    .unwrap_or("");
                let path = paths::resolve(p, &self.cwd, &self.home);
                let names = self.spellings(path.clone(), &path, false);
                let op = if t == "NotebookEdit" {
                    FileOp::Notebook
                } else {
                    FileOp::Write
                };
                self.path_facts(op, &names, &mut f);
            }
            "WebFetch" => match str_field("url").and_then(host_of) {
                Some(host) => {
                    f.deny(self.deny.domain(host));
                    f.ask(self.ask.domain(host));
                    f.allow = first(f.allow, self.allow.domain(host));
                }
                None => {
                    if f.deny.is_none() {
                        return self
                            .plain(Decision::Deny, "WebFetch needs an http(s) URL with a host");
                    }
                }
            },
            "Agent" | "Skill" | "Cd" => {
                let text = match tool {
                    "Agent" => str_field("subagent_type").unwrap_or("").to_string(),
                    "Skill" => match (str_field("skill"), str_field("args")) {
                        (Some(s), Some(a)) if !a.is_empty() => format!("{s} {a}"),
                        (Some(s), _) => s.to_string(),
                        _ => String::new(),
                    },
                    _ => str_field("path").unwrap_or("").to_string(),
                };
                f.deny(self.deny.text(tool, &text));
                f.ask(self.ask.text(tool, &text));
                f.allow = first(f.allow, self.allow.text(tool, &text));
                if tool != "Cd" {
                    f.auto = Some(Auto::ReadOnly);
                }
            }
            "AskUserQuestion" => f.guard = Some(Guard::Interactive),
            "TodoWrite" | "ExitPlanMode" | "EnterPlanMode" | "BashOutput" | "KillShell"
            | "TaskOutput" | "TaskStop" | "ToolSearch" | "TaskCreate" | "TaskGet" | "TaskList"
            | "TaskUpdate" => f.auto = Some(Auto::ReadOnly),
            _ => {}
        }
        self.finish(f, hook)
    }
}

/// The host of an http(s) URL.
pub(super) fn host_of(url: &str) -> Option<&str> {
    let rest = url
        .trim()
        .split_once("://")
        .map(|(scheme, rest)| (scheme.to_ascii_lowercase(), rest))?;
    if rest.0 != "http" && rest.0 != "https" {
        return None;
    }
    let authority = rest.1.split(['/', '?', '#']).next()?;
    let host_port = authority.rsplit('@').next()?;
    let host = if let Some(v6) = host_port.strip_prefix('[') {
        v6.split(']').next()?
    } else {
        host_port.split(':').next()?
    };
    (!host.is_empty()).then_some(host)
}
