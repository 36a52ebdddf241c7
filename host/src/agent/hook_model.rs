//! `prompt` and `agent` hook handlers answered by the conversation's model.
//!
//! A prompt handler is one request with no tools. An agent handler is a short loop in which
//! the model may use the read-only tools (Read, Glob, Grep) before it answers; its calls run
//! in the tools' sandboxes under the session's deny rules, without hooks (a hook's own reads
//! must not fire it again). The model
//! is the handler's `model`, else the driver's fast default (`haiku` for the Anthropic API).

use std::sync::{Arc, Weak};

use warden_hooks::{HandlerType, ModelHookCall, ModelHookRunner};
use warden_model::{Block, Caller, Message, ModelDriver, ModelRequest, Role, ToolSpec};

use crate::runtime::ToolCallOutcome;
use crate::session::Session;

/// Most model requests an agent handler makes (Claude Code's limit for agent hooks).
const AGENT_HOOK_TURNS: u32 = 50;

/// Runs model hook handlers with a driver. Holds the session weakly: the session holds it.
pub struct DriverHookRunner {
    driver: Arc<dyn ModelDriver>,
    session: Weak<Session>,
    fast_model: Option<String>,
}

impl DriverHookRunner {
    /// A runner over `driver` for `session`'s hooks.
    pub fn new(driver: Arc<dyn ModelDriver>, session: &Arc<Session>) -> Self {
        let fast_model = (driver.name() == "anthropic").then(|| "haiku".to_string());
        DriverHookRunner {
            driver,
            session: Arc::downgrade(session),
            fast_model,
        }
    }

    async fn answer(&self, call: ModelHookCall<'_>) -> Result<String, String> {
        let model = call
            .model
            .map(str::to_string)
            .or_else(|| self.fast_model.clone())
            .unwrap_or_default();
        let tools: Vec<ToolSpec> = match (call.handler_type, self.session.upgrade()) {
            (HandlerType::Agent, Some(session)) => {
                let mut out = Vec::new();
                for name in ["Read", "Glob", "Grep"] {
                    if let Some(t) = session.tools().get(name)
                        && let Ok(d) = t.describe(&session).await
                    {
                        out.push(ToolSpec {
                            name: name.to_string(),
                            description: d.description.clone(),
                            input_schema: d.input_schema.clone(),
                        });
                    }
                }
                out
            }
            _ => Vec::new(),
        };
        let mut messages = vec![Message::user(call.prompt.clone())];
        let turns = if tools.is_empty() {
            1
        } else {
            AGENT_HOOK_TURNS
        };
        for _ in 0..turns {
            let request = ModelRequest {
                model: model.clone(),
                system: call.instructions.to_string(),
                messages: messages.clone(),
                tools: tools.clone(),
                max_tokens: 2048,
                caller: Caller::Hook(call.event.as_str().to_string()),
            };
            let response =
                self.driver.complete(&request, None).await.map_err(|e| {
                    format!("the model could not answer ({}): {e}", e.kind.as_str())
                })?;
            let message = Message {
                role: Role::Assistant,
                content: response.content,
            };
            let uses: Vec<(String, String, serde_json::Value)> = message
                .tool_uses()
                .map(|(i, n, v)| (i.to_string(), n.to_string(), v.clone()))
                .collect();
            if uses.is_empty() {
                return Ok(message.text());
            }
            let session = self
                .session
                .upgrade()
                .ok_or_else(|| "the session has ended".to_string())?;
            messages.push(message);
            let mut results = Vec::new();
            for (id, name, input) in uses {
                let tool = tools
                    .iter()
                    .any(|t| t.name == name)
                    .then(|| session.tools().get(&name))
                    .flatten();
                let (content, is_error) = match tool {
                    // Straight to the sandbox: running the hooks for a hook's own reads would
                    // let a PreToolUse agent hook call itself without end. Deny rules still
                    // stop every access at the capability boundary.
                    Some(tool) => match session.execute_approved(tool, &input).await {
                        Ok(Ok(ToolCallOutcome::Ok { content, .. })) => (content, false),
                        Ok(Ok(
                            ToolCallOutcome::Denied(m)
                            | ToolCallOutcome::Failed(m)
                            | ToolCallOutcome::InvalidInput(m),
                        ))
                        | Ok(Err(m)) => (m, true),
                        Err(e) => (e.to_string(), true),
                    },
                    None => (
                        format!("No such tool available: {name} (a hook may only read)"),
                        true,
                    ),
                };
                results.push(Block::ToolResult {
                    tool_use_id: id,
                    content,
                    is_error,
                });
            }
            messages.push(Message {
                role: Role::User,
                content: results,
            });
        }
        Err(format!(
            "the agent hook did not answer within {AGENT_HOOK_TURNS} turns"
        ))
    }
}

impl ModelHookRunner for DriverHookRunner {
    fn run<'a>(
        &'a self,
        call: ModelHookCall<'a>,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<String, String>> + Send + 'a>>
    {
        Box::pin(self.answer(call))
    }
}
