//! `warden demo`: Warden at work, in a scratch home and scratch projects.
//!
//! 1. The example marketplace is added and protect-secrets installed into a throwaway home,
//!    with its capability grant shown.
//! 2. A session in a scratch project sends sample PreToolUse events through its hook engine:
//!    protect-secrets decides each one as a WebAssembly component in a fresh sandbox.
//! 3. The same deny rules are asked of Claude Code's text-level engine and enforced by the
//!    built-in WASM tools where they touch files and programs: every call goes through the
//!    session's tool-call pipeline, and the demo approves every `ask` as a user would, so the
//!    capability boundary is what stops a call.
//!
//! Nothing is written outside a temporary directory except compiled components, which go to
//! the compile cache under `$WARDEN_HOME/cache`.

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use serde_json::{Value, json};
use warden::session::{
    AskAnswer, AskFuture, AskRequest, Asker, Session, SessionOptions, ToolStatus,
};
use warden_config::{Home, Scope};
use warden_hooks::{Event, Outcome, dispatch, to_cc_output};
use warden_plugins::{InstallOptions, PluginManager};

/// Arguments.
#[derive(clap::Args)]
pub struct Args {}

fn pre_tool_use(session: &Session, tool: &str, input: Value) -> Value {
    json!({
        "session_id": session.session_id,
        "transcript_path": session.cwd.join("transcript.jsonl").display().to_string(),
        "cwd": session.cwd.display().to_string(),
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": input,
        "tool_use_id": "toolu_demo",
    })
}

pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    let tmp = tempfile_dir()?;
    let home = Home::new(tmp.path().join("home"));
    let project = tmp.path().join("project");
    std::fs::create_dir_all(&project)?;
    install(&home, &project)?;
    let session = Arc::new(Session::load(&demo_options(&project, &home)));
    hooks_on_sample_events(&session)?;
    rules_at_the_boundary(tmp.path(), &home)?;
    Ok(ExitCode::SUCCESS)
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

fn hooks_on_sample_events(session: &Arc<Session>) -> anyhow::Result<()> {
    println!("2. protect-secrets: a PreToolUse hook running as a WebAssembly component");
    println!("   (fresh sandbox per event: no files, network, env or processes)\n");
    let cwd = &session.cwd;
    let samples = [
        (
            "Read",
            json!({"file_path": cwd.join(".env").display().to_string()}),
        ),
        (
            "Read",
            json!({"file_path": cwd.join("README.md").display().to_string()}),
        ),
        (
            "Edit",
            json!({"file_path": "config/certs/server.pem", "old_string": "a", "new_string": "b"}),
        ),
        (
            "Write",
            json!({"file_path": "/home/dev/.ssh/id_rsa", "content": "x"}),
        ),
        ("Bash", json!({"command": "cat secrets/prod.json | head"})),
        ("Bash", json!({"command": "cargo test --release"})),
        ("Bash", json!({"command": "source ./.env && ./deploy.sh"})),
    ];
    let dopts = session.dispatch_options()?;
    let config = session.hook_config();
    let mut denied = 0;
    let mut last = None;
    for (tool, input) in &samples {
        let event = pre_tool_use(session, tool, input.clone());
        let result = super::block_on(dispatch(Event::PreToolUse, &event, config, &dopts))?;
        let subject = input
            .get("file_path")
            .or_else(|| input.get("command"))
            .and_then(Value::as_str)
            .unwrap_or("");
        let deny = result
            .merged
            .permission_verdict()
            .decision
            .and_then(warden_hooks::HookVerdict::decision)
            == Some(warden_hooks::Decision::Deny);
        if deny {
            denied += 1;
        }
        let failed = result
            .handlers
            .iter()
            .find_map(|h| match &h.result.outcome {
                Outcome::NonBlockingError { message } => Some(message.clone()),
                _ => None,
            });
        if let Some(m) = failed {
            anyhow::bail!("the protect-secrets hook failed: {m}");
        }
        let micros: u128 = result.handlers.iter().map(|h| h.elapsed.as_micros()).sum();
        println!(
            "   {:<4}  {tool:<5} {subject:<42} {micros:>6} µs",
            if deny { "DENY" } else { "pass" }
        );
        if deny && last.is_none() {
            last = Some(result.merged);
        }
    }
    println!("\n   {denied} of {} calls denied.", samples.len());
    if let Some(merged) = last {
        let (stdout, code, _) = to_cc_output(&merged, Event::PreToolUse);
        println!(
            "   What Claude Code receives for the first one (as `warden hook PreToolUse` prints it):"
        );
        println!("   {stdout}\n   (exit {code})\n");
    }
    Ok(())
}

fn indent(text: &str) -> String {
    text.trim_end().replace('\n', "\n   ")
}

/// Approves every `ask`, as a user clicking "yes" would: the demo shows what the capability
/// boundary does with calls the text-level rules let through or leave to the user.
struct ApproveAll;

impl Asker for ApproveAll {
    fn ask<'a>(&'a self, _: AskRequest<'a>) -> AskFuture<'a> {
        Box::pin(std::future::ready(AskAnswer::AllowOnce))
    }

    fn label(&self) -> &str {
        "demo (approves every ask)"
    }
}

fn rules_at_the_boundary(tmp: &Path, home: &Home) -> anyhow::Result<()> {
    println!("3. One set of rules, two levels: Claude Code's text-level answer vs the WASM tools");
    println!("   settings: deny Read(./.env), deny Bash(git push *); every ask answered yes\n");
    let project = tmp.join("rules");
    std::fs::create_dir_all(project.join(".claude"))?;
    std::fs::create_dir_all(project.join("sub"))?;
    std::fs::write(project.join(".env"), "API_KEY=hunter2\n")?;
    std::fs::write(project.join("README.md"), "hello\n")?;
    #[cfg(unix)]
    std::os::unix::fs::symlink(".env", project.join("link"))?;
    let settings = json!({"permissions": {"deny": ["Read(./.env)", "Bash(git push *)"]}});
    std::fs::write(project.join(".claude/settings.json"), settings.to_string())?;

    let session = Arc::new(Session::load(&demo_options(&project, home)));
    let cases = [
        ("Read", json!({"file_path": "README.md"})),
        ("Read", json!({"file_path": "sub/../.env"})),
        ("Read", json!({"file_path": "link"})),
        ("Bash", json!({"command": "/bin/cat .env"})),
        ("Bash", json!({"command": "cat link"})),
        ("Bash", json!({"command": "git -C . push origin main"})),
        ("Bash", json!({"command": "bash -c 'git push'"})),
    ];
    println!("   {:<36} {:<10} WASM tool", "call", "text rule");
    for (tool, input) in &cases {
        let subject = input
            .get("file_path")
            .or_else(|| input.get("command"))
            .and_then(Value::as_str)
            .unwrap_or("");
        let text = super::block_on_multi(session.decide_tool(tool, input.clone()))??.decision;
        let run = super::block_on_multi(session.call_tool(tool, input.clone(), &ApproveAll))??;
        let outcome = match &run.status {
            ToolStatus::Ok { content, .. } => format!("ran: {}", first_line(content)),
            ToolStatus::Denied { message } => format!("DENIED: {}", first_line(message)),
            ToolStatus::InvalidInput { message } | ToolStatus::Failed { message } => {
                format!("failed: {}", first_line(message))
            }
            ToolStatus::Decided => "not run".to_string(),
        };
        println!(
            "   {:<36} {text:<10} {outcome}",
            format!("{tool}({subject})")
        );
    }
    println!(
        "\n   Every file the tools open, program they run and host they reach is checked by the host."
    );
    Ok(())
}

fn first_line(s: &str) -> String {
    let line = s.lines().next().unwrap_or("").trim();
    if line.chars().count() > 70 {
        format!("{}…", line.chars().take(70).collect::<String>())
    } else {
        line.to_string()
    }
}
