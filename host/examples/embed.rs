//! Embedding Warden in a Rust agent: a session (settings, rules, plugins, hooks, tools), a
//! model driver and an asker, in one conversation.
//!
//! ```text
//! cargo run --release --example embed -- /path/to/project script.yaml "Tidy the README"
//! ```
//!
//! With no script it talks to the Anthropic API (`ANTHROPIC_API_KEY`). Every tool call the
//! model makes goes through the session's pipeline: PreToolUse hooks, the permission rules,
//! the asker below, a fresh WebAssembly sandbox, PostToolUse hooks.

use std::sync::Arc;

use warden::agent::ask::FnAsker;
use warden::agent::model::{AnthropicDriver, ModelDriver, ScriptedDriver};
use warden::agent::{Conversation, ConversationOptions, LoopEvent, Observer, TurnEnd};
use warden::session::{AskAnswer, Session, SessionOptions, ToolStatus};

/// Prints each tool call and the model's text.
struct Print;

impl Observer for Print {
    fn event(&self, event: &LoopEvent) {
        match event {
            LoopEvent::Text { text, .. } => println!("model: {text}"),
            LoopEvent::ToolCall { outcome, .. } => {
                let result = match &outcome.status {
                    ToolStatus::Ok { .. } => "ok".to_string(),
                    ToolStatus::Denied { message } => format!("denied: {message}"),
                    other => format!("{other:?}"),
                };
                println!("{} {} → {result}", outcome.tool, outcome.input);
            }
            _ => {}
        }
    }
}

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let project = args.next().unwrap_or_else(|| ".".into());
    let script = args.next();
    let prompt = args
        .next()
        .unwrap_or_else(|| "Describe this project.".into());

    // The session: what `warden` would load in `project` (settings, rules, plugins, MCP).
    let home = warden_config::Home::from_env()?;
    let session = Arc::new(Session::load(&SessionOptions::new(
        std::path::absolute(&project)?,
        home,
    )));

    // The model.
    let driver: Arc<dyn ModelDriver> = match script {
        Some(path) => Arc::new(ScriptedDriver::from_file(path.as_ref())?),
        None => Arc::new(AnthropicDriver::from_env()?),
    };

    // Who answers the rules' `ask`: here, a policy in code that allows reads only.
    let asker = Arc::new(FnAsker(|request: &warden::session::AskRequest<'_>| {
        if matches!(request.tool, "Read" | "Glob" | "Grep") {
            AskAnswer::AllowOnce
        } else {
            AskAnswer::Deny
        }
    }));

    let mut conversation =
        Conversation::new(session, driver, asker, ConversationOptions::default())
            .with_observer(Arc::new(Print));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let end = runtime.block_on(async {
        let report = conversation.send(&prompt).await;
        conversation.end("other").await;
        report.end
    });
    println!("transcript: {}", conversation.transcript_path().display());
    match end {
        TurnEnd::Completed { .. } => Ok(()),
        other => anyhow::bail!("the turn ended early: {other:?}"),
    }
}
