//! `warden demo`: Warden at work on sample events, in temporary directories.
//!
//! 1. The protect-secrets component decides on sample PreToolUse events, each in a fresh
//!    sandbox.
//! 2. The example marketplace is added and protect-secrets installed into a throwaway home and
//!    project, and one event goes through the hook engine as `warden hook` would run it.
//! 3. The same deny rules are asked of Claude Code's text-level engine and enforced by the
//!    built-in WASM tools where they touch files and programs.
//!
//! Nothing is written outside a temporary directory except compiled components, which go to
//! the compile cache under `$WARDEN_HOME/cache`.

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use serde_json::{Value, json};
use warden::hook_result::Decision;
use warden::runtime::{
    CallContext, DigestPin, Grant, Limits, Runtime, RuntimeConfig, ToolCallOutcome,
    UnrestrictedPolicy, World,
};
use warden::session::{Session, SessionOptions, WasmRunner};
use warden::tools::{ToolOptions, ToolRunner, load_permissions};
use warden_config::{Home, Scope};
use warden_hooks::{DispatchOptions, Event, dispatch, to_cc_output};
use warden_permissions::Verdict;
use warden_plugins::{InstallOptions, PluginManager};

/// Arguments.
#[derive(clap::Args)]
pub struct Args {}

fn pre_tool_use(cwd: &Path, tool: &str, input: Value) -> Value {
    json!({
        "session_id": "00000000-0000-4000-8000-000000000000",
        "transcript_path": cwd.join("transcript.jsonl").display().to_string(),
        "cwd": cwd.display().to_string(),
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": input,
        "tool_use_id": "toolu_demo",
    })
}

pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    let tmp = tempfile_dir()?;
    let cache = super::cache_dir();
    let config = RuntimeConfig {
        cache_dir: cache.clone(),
        ..RuntimeConfig::default()
    };
    one_component(&config)?;
    installed_plugin(tmp.path(), &config)?;
    rules_at_the_boundary(tmp.path(), &config)?;
    Ok(ExitCode::SUCCESS)
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

fn one_component(config: &RuntimeConfig) -> anyhow::Result<()> {
    println!("1. protect-secrets: a PreToolUse hook running as a WebAssembly component");
    println!("   (fresh sandbox per event: no files, network, env or processes)\n");
    let runtime = Runtime::new(config.clone())?;
    let grant = Grant::default();
    let guard = runtime.load(
        "protect-secrets",
        warden::guests::PROTECT_SECRETS_WASM,
        World::Hook,
        &grant,
        DigestPin::None,
    )?;
    let cwd = std::env::current_dir()?;
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
    let limits = Limits::with_deadline(Duration::from_secs(5));
    let mut denied = 0;
    for (tool, input) in &samples {
        let event = pre_tool_use(&cwd, tool, input.clone()).to_string();
        let call = super::block_on(runtime.call_hook(
            &guard,
            "PreToolUse",
            &event,
            &limits,
            CallContext::new(&cwd, &grant),
        ))??;
        let subject = input
            .get("file_path")
            .or_else(|| input.get("command"))
            .and_then(Value::as_str)
            .unwrap_or("");
        let verdict = match call.result.decision {
            Decision::Deny => {
                denied += 1;
                "DENY"
            }
            Decision::None => "pass",
            _ => "?",
        };
        println!(
            "   {verdict:<4}  {tool:<5} {subject:<42} {:>6} µs",
            call.elapsed.as_micros()
        );
    }
    println!("\n   {denied} of {} calls denied.\n", samples.len());
    Ok(())
}

fn installed_plugin(tmp: &Path, config: &RuntimeConfig) -> anyhow::Result<()> {
    println!(
        "2. The same hook installed from the example marketplace, run as `warden hook` runs it\n"
    );
    let home = Home::new(tmp.join("home"));
    let project = tmp.join("project");
    std::fs::create_dir_all(&project)?;
    let manager = PluginManager::new(home.clone(), &project).quiet(true);
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
        "   $ warden plugin install protect-secrets@warden-examples --scope project\n   {}",
        indent(&installed.to_string())
    );

    let session = Session::load(&SessionOptions::new(&project, home));
    let hooks = session.hook_config();
    let runner = Arc::new(WasmRunner::new(
        &session,
        config.clone(),
        Arc::new(UnrestrictedPolicy),
    ));
    let mut opts = DispatchOptions::new(&project).with_wasm_runner(runner);
    opts.cwd = project.clone();
    let input = pre_tool_use(&project, "Read", json!({"file_path": ".env"}));
    let result = super::block_on(dispatch(Event::PreToolUse, &input, &hooks, &opts))?;
    let (stdout, code, _) = to_cc_output(&result.merged, Event::PreToolUse);
    println!(
        "   $ echo '{{…\"tool_name\":\"Read\",\"tool_input\":{{\"file_path\":\".env\"}}}}' | warden hook PreToolUse"
    );
    println!("   {stdout}\n   (exit {code})\n");
    Ok(())
}

fn indent(text: &str) -> String {
    text.trim_end().replace('\n', "\n   ")
}

fn rules_at_the_boundary(tmp: &Path, config: &RuntimeConfig) -> anyhow::Result<()> {
    println!("3. One set of rules, two levels: Claude Code's text-level answer vs the WASM tools");
    println!("   settings: deny Read(./.env), deny Bash(git push *)\n");
    let project = tmp.join("rules");
    std::fs::create_dir_all(project.join(".claude"))?;
    std::fs::create_dir_all(project.join("sub"))?;
    std::fs::write(project.join(".env"), "API_KEY=hunter2\n")?;
    std::fs::write(project.join("README.md"), "hello\n")?;
    #[cfg(unix)]
    std::os::unix::fs::symlink(".env", project.join("link"))?;
    let settings = json!({"permissions": {"deny": ["Read(./.env)", "Bash(git push *)"]}});
    std::fs::write(project.join(".claude/settings.json"), settings.to_string())?;

    let opts = ToolOptions {
        home: Some(tmp.join("home")),
        user_home: Some(tmp.to_path_buf()),
        trusted: true,
        ..ToolOptions::default()
    };
    let perms = load_permissions(&project, &opts)?;
    let runner = ToolRunner::new(config.clone())?;
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
        let text = match perms.decide(tool, input, None).decision {
            Verdict::Allow => "allow",
            Verdict::Ask => "ask",
            Verdict::Deny => "deny",
        };
        let run = super::block_on(runner.run(tool, &input.to_string(), &project, &opts))??;
        let outcome = match &run.call.outcome {
            ToolCallOutcome::Ok { content, .. } => format!("ran: {}", first_line(content)),
            ToolCallOutcome::Denied(m) => format!("DENIED: {}", first_line(m)),
            ToolCallOutcome::InvalidInput(m) | ToolCallOutcome::Failed(m) => {
                format!("failed: {}", first_line(m))
            }
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
