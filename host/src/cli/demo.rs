//! `warden demo`: the example hook deciding on sample events.

use std::process::ExitCode;
use std::time::Duration;

use serde_json::json;
use warden::hook_result::Decision;
use warden::runtime::{CallContext, Grant, Limits, Runtime, RuntimeConfig, World};

/// Arguments.
#[derive(clap::Args)]
pub struct Args {}

pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    let runtime = Runtime::new(RuntimeConfig {
        cache_dir: super::cache_dir(),
        ..RuntimeConfig::default()
    })?;
    let grant = Grant::default();
    let guard = runtime.load(
        "protect-secrets",
        warden::guests::PROTECT_SECRETS_WASM,
        World::Hook,
        &grant,
    )?;
    println!("protect-secrets: a PreToolUse hook running as a WebAssembly component");
    println!("(fresh sandbox per event: no files, network, env or processes)\n");
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
        let event = json!({
            "session_id": "00000000-0000-4000-8000-000000000000",
            "transcript_path": "/dev/null",
            "cwd": cwd.display().to_string(),
            "permission_mode": "default",
            "hook_event_name": "PreToolUse",
            "tool_name": tool,
            "tool_input": input,
            "tool_use_id": "toolu_demo",
        });
        let call = super::block_on(runtime.call_hook(
            &guard,
            "PreToolUse",
            &event.to_string(),
            &limits,
            CallContext::new(&cwd, &grant),
        ))??;
        let subject = input
            .get("file_path")
            .or_else(|| input.get("command"))
            .and_then(|v| v.as_str())
            .unwrap_or("");
        let verdict = match call.result.decision {
            Decision::Deny => {
                denied += 1;
                "DENY "
            }
            Decision::None => "pass ",
            other => {
                println!("unexpected decision {other:?}");
                "?    "
            }
        };
        println!(
            "{verdict} {tool:<5} {subject:<40} {:>6} µs",
            call.elapsed.as_micros()
        );
        if let Some(reason) = &call.result.reason {
            println!("      └─ {reason}");
        }
    }
    println!("\n{denied} of {} calls denied.", samples.len());
    Ok(ExitCode::SUCCESS)
}
