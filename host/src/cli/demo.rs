//! `warden demo`: Warden at work, in a scratch home and a scratch project, with no network.
//!
//! 1. The example marketplace is added and protect-secrets installed into a throwaway home,
//!    with its capability grant shown.
//! 2. A scripted session runs in a scratch project (the model's turns are embedded, so the
//!    demo needs no key): protect-secrets, a WASM hook, denies reading `.env`; the WASM Read
//!    tool reads the README; `Bash(git push *)` holds against `git -C . push`; an MCP tool is
//!    called on Warden's own MCP server; the plugin's namespaced skill is rendered; a Stop hook
//!    sends the model back once.
//! 3. A table of every hook and decision with its time, and what to try next.
//!
//! Nothing is written outside a temporary directory except compiled components, which go to
//! the compile cache under `$WARDEN_HOME/cache`.

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use serde_json::json;
use warden::agent::model::ScriptedDriver;
use warden::agent::{Conversation, ConversationOptions, LoopEvent, Observer, Recorder, TurnEnd};
use warden::session::{DenyAsker, Session, SessionOptions, Step, ToolStatus};
use warden_config::{Home, Scope};
use warden_plugins::{InstallOptions, PluginManager};

/// Arguments.
#[derive(clap::Args)]
pub struct Args {}

/// The model's turns.
const SCRIPT: &str = include_str!("demo_script.yaml");

pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    let tmp = tempfile_dir()?;
    let home = Home::new(tmp.path().join("home"));
    let project = tmp.path().join("project");
    std::fs::create_dir_all(&project)?;
    install(&home, &project)?;
    scratch_project(&project, &home)?;
    let session = Arc::new(Session::load(&demo_options(&project, &home)));
    let recorder = Arc::new(Recorder::default());
    let end = scripted_session(session, recorder.clone())?;
    table(&recorder.events());
    println!(
        "\n   Try next: `warden run -p \"…\"` with ANTHROPIC_API_KEY set, `warden run --script FILE` \
         for your own scripted model,\n   `warden plugin marketplace add ./plugins` to keep \
         these plugins, and `warden context` in a project of yours."
    );
    Ok(match end {
        TurnEnd::Completed { .. } => ExitCode::SUCCESS,
        _ => ExitCode::from(1),
    })
}

/// A session in `project`; compiled components go to the user's real cache, so a second run
/// compiles nothing. The user's own Claude Code configuration is left out, so the demo shows
/// the same on every machine.
fn demo_options(project: &Path, home: &Home) -> SessionOptions {
    let mut opts = SessionOptions::new(project, home.clone());
    opts.runtime.cache_dir = super::cache_dir();
    opts.user_home = Some(project.to_path_buf());
    opts.managed_dir = None;
    opts.claude_config = warden_config::ClaudeConfig::default();
    opts
}

fn tempfile_dir() -> anyhow::Result<TempDir> {
    let base = std::env::temp_dir().join(format!("warden-demo-{}", std::process::id()));
    std::fs::create_dir_all(&base).with_context(|| format!("creating {}", base.display()))?;
    Ok(TempDir(base.canonicalize()?))
}

/// Removes the demo's directory however the demo ends.
struct TempDir(std::path::PathBuf);

impl TempDir {
    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn install(home: &Home, project: &Path) -> anyhow::Result<()> {
    println!("1. The example marketplace, and protect-secrets installed from it\n");
    let manager = PluginManager::new(home.clone(), project).quiet(true);
    let added = manager.marketplace_add(warden::guests::PLUGINS_DIR, Scope::User)?;
    println!(
        "   $ warden plugin marketplace add ./plugins\n   {}",
        indent(&added.to_string())
    );
    let installed = manager.install(
        "protect-secrets@warden-examples",
        &InstallOptions {
            scope: Scope::Project,
            accept_capabilities: true,
        },
    )?;
    println!(
        "   $ warden plugin install protect-secrets@warden-examples --scope project --yes\n   {}\n",
        indent(&installed.to_string())
    );
    Ok(())
}

fn indent(text: &str) -> String {
    text.trim_end().replace('\n', "\n   ")
}

/// The demo project: a README, a secret, rules, a Stop hook, and Warden's own MCP server.
fn scratch_project(project: &Path, home: &Home) -> anyhow::Result<()> {
    std::fs::create_dir_all(project.join(".claude"))?;
    std::fs::write(
        project.join("README.md"),
        "# Demo\nA scratch project for warden demo.\n",
    )?;
    std::fs::write(project.join(".env"), "API_KEY=hunter2\n")?;
    let stop = project.join(".claude/stop-once.sh");
    // Sends the model back once with a request, then lets it stop (`stop_hook_active`).
    std::fs::write(
        &stop,
        "#!/bin/sh\nif grep -q '\"stop_hook_active\":true'; then exit 0; fi\n\
         echo 'Before you stop: summarise what was refused and why.' >&2\nexit 2\n",
    )?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&stop, std::fs::Permissions::from_mode(0o755))?;
    }
    let settings = json!({
        "permissions": {
            "allow": ["Read", "Glob", "Skill", "mcp__warden"],
            "deny": ["Bash(git push *)"]
        },
        "hooks": {"Stop": [{"hooks": [{"type": "command", "command": stop.display().to_string()}]}]}
    });
    std::fs::write(project.join(".claude/settings.json"), settings.to_string())?;
    // Warden serves its own tools over MCP: the session calls one as a plugin MCP server's.
    let exe = std::env::current_exe()?;
    let mcp = json!({"mcpServers": {"warden": {
        "command": exe.display().to_string(),
        "args": ["mcp", "serve", "--cwd", project.display().to_string()],
        "env": {
            "WARDEN_HOME": home.root().display().to_string(),
            "WARDEN_NO_CLAUDE_CONFIG": "1",
            "WARDEN_MANAGED_SETTINGS_DIR": ""
        }
    }}});
    std::fs::write(project.join(".mcp.json"), mcp.to_string())?;
    // A project's own files cannot approve its MCP servers; the user's settings can. The
    // server runs confined, as every project server does: the user makes the binary and the
    // home it serves from readable to it, as for any toolchain outside the default list.
    let exe_dir = exe.parent().unwrap_or(&exe).display().to_string();
    std::fs::write(
        home.user_settings(),
        json!({
            "enableAllProjectMcpServers": true,
            "sandbox": {"readablePaths": [exe_dir, home.root().display().to_string()]}
        })
        .to_string(),
    )?;
    Ok(())
}

/// Prints the session as it happens, in a few words a line.
struct Narrator;

impl Observer for Narrator {
    fn event(&self, event: &LoopEvent) {
        match event {
            LoopEvent::Text { text, .. } => println!("   model: {}", super::first_line(text, 100)),
            LoopEvent::ToolCall { outcome, .. } => {
                let subject = ["file_path", "command", "pattern", "skill"]
                    .iter()
                    .find_map(|k| outcome.input.get(*k).and_then(|v| v.as_str()))
                    .unwrap_or("");
                let by = match (&outcome.rule, &outcome.source) {
                    (Some(r), _) => format!("rule `{r}`"),
                    (None, Some(s)) => s.clone(),
                    (None, None) => outcome.reason.clone(),
                };
                let result = match &outcome.status {
                    ToolStatus::Ok { content, .. } => {
                        format!("ran: {}", super::first_line(content, 60))
                    }
                    ToolStatus::Denied { message } => {
                        format!("DENIED: {}", super::first_line(message, 70))
                    }
                    ToolStatus::InvalidInput { message } | ToolStatus::Failed { message } => {
                        format!("failed: {}", super::first_line(message, 70))
                    }
                    ToolStatus::Decided => "not run".into(),
                };
                println!(
                    "   {}({subject})  {} by {by}\n      {result}",
                    outcome.tool,
                    outcome.decision.as_str()
                );
            }
            LoopEvent::StopBlocked { reason, .. } => {
                println!("   Stop hook: not yet: {}", super::first_line(reason, 80));
            }
            LoopEvent::Warning { message } => {
                println!("   warning: {}", super::first_line(message, 100))
            }
            _ => {}
        }
    }
}

struct Both(Arc<Recorder>);

impl Observer for Both {
    fn event(&self, event: &LoopEvent) {
        self.0.event(event);
        Narrator.event(event);
    }
}

fn scripted_session(session: Arc<Session>, recorder: Arc<Recorder>) -> anyhow::Result<TurnEnd> {
    println!("2. A scripted session in a scratch project (no network, no key)");
    println!(
        "   rules: allow Read, Glob, Skill, mcp__warden; deny Bash(git push *); a Stop hook\n"
    );
    let driver = Arc::new(ScriptedDriver::parse(SCRIPT, "demo script")?);
    let transcript = session.cwd.join("transcript.jsonl");
    let opts = ConversationOptions {
        transcript_path: Some(transcript),
        max_turns: 10,
        ..ConversationOptions::default()
    };
    let mut conversation = Conversation::new(session, driver, Arc::new(DenyAsker), opts)
        .with_observer(Arc::new(Both(recorder)));
    let end = super::block_on_multi(async move {
        let report = conversation
            .send("Look around this project and push it.")
            .await;
        conversation.end("other").await;
        report.end
    })?;
    match &end {
        TurnEnd::Completed { .. } => println!("\n   The session completed."),
        other => println!("\n   The session ended early: {other:?}"),
    }
    Ok(end)
}

/// Every hook and decision of the session: (event, handler, decision, µs).
fn table(events: &[LoopEvent]) {
    println!("\n3. Every hook and decision\n");
    println!(
        "   {:<18} {:<44} {:<10} {:>8}",
        "event", "handler", "decision", "µs"
    );
    let row = |event: &str, handler: &str, decision: &str, micros: u64| {
        println!(
            "   {event:<18} {:<44} {decision:<10} {micros:>8}",
            super::first_line(handler, 44)
        );
    };
    for e in events {
        match e {
            LoopEvent::Hook {
                event,
                handler,
                decision,
                micros,
                ..
            } => row(event, handler, decision, *micros),
            LoopEvent::ToolCall { outcome, .. } => {
                for t in &outcome.trace {
                    let event = match t.step {
                        Step::PreToolUse => "PreToolUse",
                        Step::PostToolUse => "PostToolUse",
                        Step::PostToolUseFailure => "PostToolUseFailure",
                        Step::Rules => "rules",
                        Step::Execute => "execute",
                        Step::PermissionRequest => "PermissionRequest",
                        Step::Ask => "ask",
                        Step::Validate => continue,
                    };
                    let handler = match t.step {
                        Step::PreToolUse
                        | Step::PermissionRequest
                        | Step::PostToolUse
                        | Step::PostToolUseFailure => {
                            format!("{} ({})", t.by, t.source.as_deref().unwrap_or(""))
                        }
                        _ => format!("{}: {}", outcome.tool, t.by),
                    };
                    row(event, &handler, &t.decision, t.micros);
                }
            }
            _ => {}
        }
    }
}
