//! Context assembly: what a model receives at the start of a conversation.
//!
//! - **System prompt**: who the agent is and its environment (directory, platform, date).
//! - **First user message**: the memory files (CLAUDE.md, rules) and the skill listing, each
//!   as a `<system-reminder>` before the prompt, as Claude Code sends them; context hooks add
//!   (SessionStart, UserPromptSubmit) join them.
//! - **Tools**: the built-in and plugin WASM tools (their `describe()` schemas), the MCP
//!   servers' tools, and the loop's own `Agent` (with the subagents' descriptions) and
//!   `Skill`.

use std::fmt::Write as _;
use std::sync::Arc;

use serde_json::{Value, json};
use warden_instructions::{Agent, Context};
use warden_model::ToolSpec;

use crate::session::Session;

/// Wraps text as a system reminder.
pub fn reminder(text: &str) -> String {
    format!("<system-reminder>\n{}\n</system-reminder>", text.trim_end())
}

/// The default system prompt's opening: who the agent is, with its coding instructions.
const CODING: &str = "You are an agent working in a software project, run by Warden. Use the \
tools to read, change and run things; every call is checked against the user's permission rules \
and plugin hooks, and a refused call tells you why. Prefer small, verifiable steps.";

/// The opening of an output style's prompt without `keep-coding-instructions`: who the agent
/// is and how its calls are checked, without the coding instructions.
const IDENTITY: &str = "You are an agent run by Warden. Every tool call is checked against the \
user's permission rules and plugin hooks, and a refused call tells you why.";

/// The system prompt of the main conversation.
pub fn system_prompt(session: &Session) -> String {
    format!("{CODING}\n\n{}", environment(session))
}

/// The main conversation's system prompt: the agent's prompt when it runs as one (in place of
/// the default), else the default opening (without its coding instructions under an output
/// style, unless the style keeps them); then the output style's instructions, then the
/// environment.
pub fn main_prompt(
    session: &Session,
    agent: Option<&Agent>,
    style: Option<&crate::output_style::OutputStyle>,
) -> String {
    let mut out = match (agent, style) {
        (Some(a), _) => a.prompt.trim_end().to_string(),
        (None, Some(s)) if !s.keep_coding_instructions => IDENTITY.to_string(),
        (None, _) => CODING.to_string(),
    };
    if let Some(s) = style.filter(|s| !s.body.is_empty()) {
        let _ = write!(out, "\n\n# Output style: {}\n\n{}", s.name, s.body);
    }
    let _ = write!(out, "\n\n{}", environment(session));
    out
}

/// The system prompt of a subagent: its own prompt, then the environment.
pub fn subagent_prompt(session: &Session, agent: &Agent) -> String {
    format!("{}\n\n{}", agent.prompt.trim_end(), environment(session))
}

fn environment(session: &Session) -> String {
    format!(
        "<env>\nWorking directory: {}\nIs directory a git repo: {}\nPlatform: {}\nToday's date: {}\n</env>",
        session.cwd.display(),
        if session.cwd.join(".git").exists() {
            "Yes"
        } else {
            "No"
        },
        std::env::consts::OS,
        super::transcript::today(),
    )
}

/// The reminders of the first user message: memory, then the skill listing.
pub fn first_reminders(ctx: &Context) -> Vec<String> {
    let mut out = Vec::new();
    let memory = ctx.memory_text();
    if !memory.trim().is_empty() {
        out.push(reminder(&format!(
            "As you answer the user's questions, you can use the following context:\n# claudeMd\n\
             Codebase and user instructions are shown below. Be sure to adhere to these \
             instructions. IMPORTANT: These instructions OVERRIDE any default behavior and you \
             MUST follow them exactly as written.\n\n{memory}"
        )));
    }
    if !ctx.skill_listing.trim().is_empty() {
        out.push(reminder(&format!(
            "The following skills are available for use with the Skill tool:\n\n{}",
            ctx.skill_listing.trim_end()
        )));
    }
    out
}

/// The `Agent` tool, listing the subagents a model may start.
pub fn agent_tool(agents: &[Agent]) -> ToolSpec {
    let mut d = String::from(
        "Launch a subagent to handle a task on its own, with its own instructions and tools. \
         It sees only the prompt you give it and answers with one final message.\n\n\
         Available agent types:\n",
    );
    for a in agents {
        let tools = match &a.tools {
            Some(t) => t.join(", "),
            None => "all tools".to_string(),
        };
        let _ = writeln!(d, "- {}: {} (Tools: {tools})", a.name, a.description.trim());
    }
    ToolSpec {
        name: "Agent".into(),
        description: d,
        input_schema: agent_schema(),
    }
}

/// The input of the `Agent` tool (`Task` is its older name).
pub fn agent_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "description": {"type": "string", "description": "A short (3-5 word) description of the task"},
            "prompt": {"type": "string", "description": "The task for the agent to perform"},
            "subagent_type": {"type": "string", "description": "The type of agent to use"},
            "model": {"type": "string", "description": "Optional model for this agent"}
        },
        "required": ["description", "prompt", "subagent_type"],
        "additionalProperties": false
    })
}

/// The `Skill` tool.
pub fn skill_tool() -> ToolSpec {
    ToolSpec {
        name: "Skill".into(),
        description: "Run a skill in the main conversation: its instructions are loaded and \
                      you follow them. Skills are listed in a system reminder; use the name as \
                      listed (`plugin:skill` for plugin skills)."
            .into(),
        input_schema: skill_schema(),
    }
}

/// The input of the `Skill` tool.
pub fn skill_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "skill": {"type": "string", "description": "The skill name, e.g. \"commit\" or \"plugin:review\""},
            "args": {"type": "string", "description": "Optional arguments for the skill"}
        },
        "required": ["skill"],
        "additionalProperties": false
    })
}

/// The session's component tools (built-in and plugin WASM tools) and MCP tools, as the model
/// is told of them. A tool that cannot describe itself is left out with a warning, so one
/// broken plugin does not stop the conversation.
pub async fn session_tools(session: &Arc<Session>, warnings: &mut Vec<String>) -> Vec<ToolSpec> {
    let mut out = Vec::new();
    for tool in session.tools().iter() {
        match tool.describe(session).await {
            Ok(d) => out.push(ToolSpec {
                name: tool.name.clone(),
                description: d.description.clone(),
                input_schema: d.input_schema.clone(),
            }),
            Err(e) => warnings.push(format!("tool {} left out: {e}", tool.name)),
        }
    }
    for t in session.mcp().tools().await {
        out.push(ToolSpec {
            name: t.name.clone(),
            description: t
                .tool
                .description
                .as_deref()
                .unwrap_or_default()
                .to_string(),
            input_schema: Value::Object((*t.tool.input_schema).clone()),
        });
    }
    warnings.extend(session.mcp().problems().iter().cloned());
    out
}

/// Whether a subagent's `tools` / `disallowedTools` lets it use `name`: entries are tool
/// names, `mcp__<server>` or `mcp__<server>__*` (every tool of a server), or `mcp__*`.
pub fn agent_allows(agent: &Agent, name: &str) -> bool {
    let matches = |pattern: &str| {
        let p = pattern.trim();
        let p = p.split('(').next().unwrap_or(p);
        p == name
            || (p == "Task" && name == "Agent")
            || p == "mcp__*" && name.starts_with("mcp__")
            || p.strip_suffix("__*")
                .is_some_and(|s| name.starts_with(&format!("{s}__")))
            || (p.starts_with("mcp__")
                && p.matches("__").count() == 1
                && name.starts_with(&format!("{p}__")))
    };
    if agent.disallowed_tools.iter().any(|d| matches(d)) {
        return false;
    }
    match &agent.tools {
        None => true,
        Some(list) => list.iter().any(|t| matches(t)),
    }
}

/// The subagents an agent run as the main conversation may start, as Claude Code reads an
/// `Agent(a, b)` (or `Task(a, b)`) entry of its `tools`: those names only. `None` when no
/// entry lists names (any subagent, as far as `tools` goes).
pub fn spawnable(agent: &Agent) -> Option<Vec<String>> {
    let mut names: Option<Vec<String>> = None;
    for t in agent.tools.iter().flatten() {
        let t = t.trim();
        let inner = t
            .strip_prefix("Agent(")
            .or_else(|| t.strip_prefix("Task("))
            .and_then(|r| r.strip_suffix(')'));
        if let Some(inner) = inner {
            names.get_or_insert_with(Vec::new).extend(
                inner
                    .split(',')
                    .map(str::trim)
                    .filter(|n| !n.is_empty())
                    .map(str::to_string),
            );
        }
    }
    names
}

/// What the model is asked for when the conversation is compacted.
pub const COMPACT_INSTRUCTIONS: &str = "Your task is to create a detailed summary of the \
conversation so far, to continue the work from it without the messages: the user's requests \
and intent, the decisions made, the files read and changed, errors met and how they were \
fixed, and the work still pending. Reply with the summary alone, and call no tools.";

/// The first message of a compacted conversation.
pub fn compacted(summary: &str) -> String {
    format!(
        "This session is being continued from a previous conversation that ran out of \
         context. The conversation is summarized below:\n{summary}\n\nContinue the \
         conversation from where it left off without asking the user any further questions."
    )
}
