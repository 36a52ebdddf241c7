//! The scripted driver: a model whose answers are written down in advance, for tests, demos
//! and reproducible runs.
//!
//! A script is JSON or YAML:
//!
//! ```yaml
//! prompt: "Tidy the README"        # the first user prompt (optional; `-p` overrides it)
//! model: scripted-1                # the model name transcripts show (optional)
//! turns:
//!   - text: "Reading it first."
//!     tool_use:
//!       - { name: Read, input: { file_path: README.md } }
//!   - text: "Done."
//!   - for: agent:code-reviewer     # the next answer of that subagent
//!     text: "Looks fine."
//!   - for: hook                    # the next answer to a `prompt` or `agent` hook handler
//!     text: '{"ok": true}'
//!   - error: { kind: overloaded, message: "Overloaded" }   # an API failure
//! ```
//!
//! Each turn answers the next request of its caller (`for`: `main`, the default;
//! `agent:<agent_type>`; `hook`, or `hook:<Event>` for one event's handlers first; `compact`,
//! the summary asked for when the conversation is compacted), in order.
//! A turn may give raw `content` blocks instead of `text` and `tool_use`. A tool call without
//! an `id` gets `toolu_script_<n>`. The stop reason is `tool_use` when the turn calls a tool,
//! else `end_turn`. A request with no turn left for its caller fails with an error naming
//! the caller, so a script that is too short stops the run instead of inventing answers.

use std::collections::VecDeque;
use std::path::Path;
use std::sync::Mutex;

use serde::Deserialize;
use serde_json::Value;

use crate::{
    Block, Caller, ModelDriver, ModelError, ModelErrorKind, ModelFuture, ModelRequest,
    ModelResponse, StopReason, StreamSink, Usage,
};

/// Why a script cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ScriptError {
    /// The file could not be read.
    #[error("cannot read script {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The text is not a valid script.
    #[error("{path}: {message}")]
    Invalid {
        /// The file (or `<inline>`).
        path: String,
        /// What is wrong, with the line and column where the parser knows them.
        message: String,
    },
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScriptFile {
    #[serde(default)]
    prompt: Option<String>,
    #[serde(default)]
    model: Option<String>,
    turns: Vec<TurnFile>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TurnFile {
    #[serde(default, rename = "for")]
    for_: Option<String>,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    tool_use: Vec<ToolUseFile>,
    #[serde(default)]
    content: Option<Vec<Block>>,
    #[serde(default)]
    error: Option<ErrorFile>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ToolUseFile {
    #[serde(default)]
    id: Option<String>,
    name: String,
    #[serde(default)]
    input: Option<Value>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ErrorFile {
    kind: ModelErrorKind,
    #[serde(default)]
    message: Option<String>,
}

/// One scripted answer.
#[derive(Debug, Clone)]
enum Answer {
    Reply(Vec<Block>),
    Fail(ModelError),
}

/// Who a turn is for.
#[derive(Debug, Clone, PartialEq, Eq)]
enum For {
    Main,
    Agent(String),
    AnyHook,
    Hook(String),
    Compact,
}

impl For {
    fn parse(s: Option<&str>) -> Result<For, String> {
        match s.map(str::trim) {
            None | Some("main") => Ok(For::Main),
            Some("hook") => Ok(For::AnyHook),
            Some("compact") => Ok(For::Compact),
            Some(s) => match (s.strip_prefix("agent:"), s.strip_prefix("hook:")) {
                (Some(a), _) if !a.is_empty() => Ok(For::Agent(a.to_string())),
                (_, Some(e)) if !e.is_empty() => Ok(For::Hook(e.to_string())),
                _ => Err(format!(
                    "`for: {s}` is not `main`, `agent:<agent_type>`, `hook`, `hook:<Event>` or `compact`"
                )),
            },
        }
    }
}

/// A model that answers from a script (see the module docs).
#[derive(Debug)]
pub struct ScriptedDriver {
    model: String,
    prompt: Option<String>,
    turns: Mutex<VecDeque<(For, Answer)>>,
    used: Mutex<usize>,
}

impl ScriptedDriver {
    /// Reads a script file (`.json`, or YAML otherwise).
    pub fn from_file(path: &Path) -> Result<Self, ScriptError> {
        let text = std::fs::read_to_string(path).map_err(|source| ScriptError::Read {
            path: path.display().to_string(),
            source,
        })?;
        Self::parse(&text, &path.display().to_string())
    }

    /// Parses a script; `origin` names it in errors.
    pub fn parse(text: &str, origin: &str) -> Result<Self, ScriptError> {
        let invalid = |message: String| ScriptError::Invalid {
            path: origin.to_string(),
            message,
        };
        let trimmed = text.trim_start();
        let file: ScriptFile = if trimmed.starts_with('{') {
            serde_json::from_str(text)
                .map_err(|e| invalid(format!("line {}, column {}: {e}", e.line(), e.column())))?
        } else {
            serde_yaml::from_str(text).map_err(|e| {
                let at = e
                    .location()
                    .map(|l| format!("line {}, column {}: ", l.line(), l.column()))
                    .unwrap_or_default();
                invalid(format!("{at}{e}"))
            })?
        };
        let mut turns = VecDeque::new();
        let mut next_id = 0usize;
        for (i, t) in file.turns.into_iter().enumerate() {
            let n = i + 1;
            let who =
                For::parse(t.for_.as_deref()).map_err(|m| invalid(format!("turn {n}: {m}")))?;
            if let Some(e) = t.error {
                if t.text.is_some() || !t.tool_use.is_empty() || t.content.is_some() {
                    return Err(invalid(format!(
                        "turn {n}: an `error` turn has no `text`, `tool_use` or `content`"
                    )));
                }
                let message = e
                    .message
                    .unwrap_or_else(|| format!("scripted {} error", e.kind.as_str()));
                turns.push_back((who, Answer::Fail(ModelError::new(e.kind, message))));
                continue;
            }
            let mut blocks = match t.content {
                Some(c) => {
                    if t.text.is_some() || !t.tool_use.is_empty() {
                        return Err(invalid(format!(
                            "turn {n}: give either `content` or `text`/`tool_use`, not both"
                        )));
                    }
                    c
                }
                None => {
                    let mut b = Vec::new();
                    if let Some(text) = t.text {
                        b.push(Block::Text { text });
                    }
                    for u in t.tool_use {
                        let input = u.input.unwrap_or_else(|| Value::Object(Default::default()));
                        if !input.is_object() {
                            return Err(invalid(format!(
                                "turn {n}: the input of tool `{}` must be an object",
                                u.name
                            )));
                        }
                        b.push(Block::ToolUse {
                            id: u.id.unwrap_or_default(),
                            name: u.name,
                            input,
                        });
                    }
                    b
                }
            };
            if blocks.is_empty() {
                return Err(invalid(format!(
                    "turn {n}: a turn needs `text`, `tool_use`, `content` or `error`"
                )));
            }
            for b in &mut blocks {
                if let Block::ToolUse { id, .. } = b
                    && id.is_empty()
                {
                    next_id += 1;
                    *id = format!("toolu_script_{next_id}");
                }
            }
            turns.push_back((who, Answer::Reply(blocks)));
        }
        Ok(ScriptedDriver {
            model: file.model.unwrap_or_else(|| "scripted".to_string()),
            prompt: file.prompt,
            turns: Mutex::new(turns),
            used: Mutex::new(0),
        })
    }

    /// The script's first prompt, if it has one.
    pub fn prompt(&self) -> Option<&str> {
        self.prompt.as_deref()
    }

    /// How many turns are left, for every caller.
    pub fn remaining(&self) -> usize {
        self.turns.lock().map(|t| t.len()).unwrap_or(0)
    }

    fn next(&self, caller: &Caller) -> Option<Answer> {
        let mut turns = self.turns.lock().ok()?;
        let pos = match caller {
            Caller::Main => turns.iter().position(|(w, _)| *w == For::Main),
            Caller::Subagent(a) => turns
                .iter()
                .position(|(w, _)| matches!(w, For::Agent(x) if x == a)),
            Caller::Hook(event) => turns
                .iter()
                .position(|(w, _)| matches!(w, For::Hook(e) if e == event))
                .or_else(|| turns.iter().position(|(w, _)| *w == For::AnyHook)),
            Caller::Compact => turns.iter().position(|(w, _)| *w == For::Compact),
        }?;
        if let Ok(mut u) = self.used.lock() {
            *u += 1;
        }
        turns.remove(pos).map(|(_, a)| a)
    }
}

fn caller_name(c: &Caller) -> String {
    match c {
        Caller::Main => "the main conversation".to_string(),
        Caller::Subagent(a) => format!("subagent `{a}` (`for: agent:{a}`)"),
        Caller::Hook(e) => format!("a {e} hook handler (`for: hook`)"),
        Caller::Compact => "compaction (`for: compact`)".to_string(),
    }
}

impl ModelDriver for ScriptedDriver {
    fn complete<'a>(
        &'a self,
        request: &'a ModelRequest,
        sink: Option<&'a dyn StreamSink>,
    ) -> ModelFuture<'a> {
        let answer = self.next(&request.caller);
        let used = self.used.lock().map(|u| *u).unwrap_or(0);
        Box::pin(async move {
            match answer {
                None => Err(ModelError::new(
                    ModelErrorKind::Unknown,
                    format!(
                        "the script has no turn left for {} ({used} turns used)",
                        caller_name(&request.caller)
                    ),
                )),
                Some(Answer::Fail(e)) => Err(e),
                Some(Answer::Reply(content)) => {
                    if let Some(sink) = sink {
                        for b in &content {
                            if let Block::Text { text } = b {
                                sink.text_delta(text);
                            }
                        }
                    }
                    let calls = content.iter().any(|b| matches!(b, Block::ToolUse { .. }));
                    // Rough counts (4 characters a token) so totals and budgets behave as with
                    // a real model; the scripted model costs nothing.
                    let chars_in: usize = request.system.len()
                        + request
                            .messages
                            .iter()
                            .map(|m| serde_json::to_string(&m.content).map_or(0, |s| s.len()))
                            .sum::<usize>();
                    let chars_out = serde_json::to_string(&content).map_or(0, |s| s.len());
                    Ok(ModelResponse {
                        content,
                        stop_reason: if calls {
                            StopReason::ToolUse
                        } else {
                            StopReason::EndTurn
                        },
                        usage: Usage {
                            input_tokens: (chars_in / 4) as u64,
                            output_tokens: (chars_out / 4) as u64,
                        },
                        model: if request.model.is_empty() {
                            self.model.clone()
                        } else {
                            request.model.clone()
                        },
                    })
                }
            }
        })
    }

    fn name(&self) -> &str {
        "scripted"
    }

    fn default_model(&self) -> &str {
        &self.model
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Message;

    fn req(caller: Caller) -> ModelRequest {
        ModelRequest {
            messages: vec![Message::user("hi")],
            caller,
            ..ModelRequest::default()
        }
    }

    fn block_on<F: std::future::Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("runtime")
            .block_on(f)
    }

    #[test]
    fn turns_go_to_their_callers_in_order() {
        let d = ScriptedDriver::parse(
            r#"
turns:
  - text: one
    tool_use: [{ name: Read, input: { file_path: a } }]
  - for: agent:rev
    text: agent says
  - for: hook
    text: '{"ok": true}'
  - text: two
"#,
            "t.yaml",
        )
        .expect("parses");
        let a = block_on(d.complete(&req(Caller::Subagent("rev".into())), None)).expect("agent");
        assert_eq!(a.content, vec![Block::text("agent says")]);
        let m = block_on(d.complete(&req(Caller::Main), None)).expect("main");
        assert_eq!(m.stop_reason, StopReason::ToolUse);
        assert!(matches!(&m.content[1], Block::ToolUse { id, .. } if id == "toolu_script_1"));
        let h = block_on(d.complete(&req(Caller::Hook("Stop".into())), None)).expect("hook");
        assert_eq!(h.content, vec![Block::text(r#"{"ok": true}"#)]);
        let m = block_on(d.complete(&req(Caller::Main), None)).expect("main 2");
        assert_eq!(m.stop_reason, StopReason::EndTurn);
        let e = block_on(d.complete(&req(Caller::Main), None)).expect_err("exhausted");
        assert!(
            e.message.contains("no turn left for the main conversation"),
            "{e}"
        );
    }

    #[test]
    fn errors_and_bad_scripts() {
        let d = ScriptedDriver::parse(
            r#"{"turns": [{"error": {"kind": "overloaded", "message": "busy"}}]}"#,
            "t.json",
        )
        .expect("parses");
        let e = block_on(d.complete(&req(Caller::Main), None)).expect_err("fails");
        assert_eq!(e.kind, ModelErrorKind::Overloaded);
        for (bad, want) in [
            ("turns: [{}]", "turn 1: a turn needs"),
            ("turns: [{for: robot, text: x}]", "turn 1: `for: robot`"),
            ("turns: [{text: x, colour: red}]", "unknown field `colour`"),
            (
                "turns: [{tool_use: [{name: X, input: 3}]}]",
                "must be an object",
            ),
            ("{\"turns\": [", "t.json: line 1"),
        ] {
            let e = ScriptedDriver::parse(bad, "t.json").expect_err(bad);
            assert!(e.to_string().contains(want), "{bad}: {e}");
        }
    }
}
