//! What confining a plugin's programs costs, measured side by side in one run.
//!
//! `cargo bench -p warden --bench plugin_processes` prints p50/p99, interleaved round by
//! round so load on the machine hits both alike, of:
//! 1. a plugin's PreToolUse command hook (`bash` running `jq` on the event, the shape of most
//!    published guards) dispatched through a warm session, unconfined
//!    (`"sandbox": {"confinePlugins": false}`) and confined;
//! 2. a plugin's stdio MCP server (`python3`, answering `initialize` and `tools/list`) from
//!    start to its first `tools/list`, unconfined and confined.
//!
//! `WARDEN_BENCH_ROUNDS` sets the rounds (default 100).

fn main() {
    #[cfg(target_os = "linux")]
    linux::main();
}

#[cfg(target_os = "linux")]
mod linux {
    use std::path::{Path, PathBuf};
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    use serde_json::json;
    use warden::session::{Session, SessionOptions};
    use warden_config::Home;
    use warden_hooks::{Event, dispatch};

    fn p(samples: &mut [Duration], q: f64) -> Duration {
        samples.sort();
        samples[((samples.len() as f64 - 1.0) * q).round() as usize]
    }

    fn ms(d: Duration) -> String {
        format!("{:.2} ms", d.as_secs_f64() * 1e3)
    }

    const GUARD: &str = r#"#!/bin/bash
cmd=$(jq -r '.tool_input.command // ""')
case "$cmd" in
  *"rm -rf"*) jq -n '{hookSpecificOutput: {hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: "no"}}' ;;
  *) exit 0 ;;
esac
"#;

    const SERVER: &str = r#"
import json, sys
for line in sys.stdin:
    msg = json.loads(line)
    mid = msg.get("id")
    if mid is None:
        continue
    if msg.get("method") == "initialize":
        result = {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
                  "serverInfo": {"name": "b", "version": "1"}}
    elif msg.get("method") == "tools/list":
        result = {"tools": [{"name": "t", "inputSchema": {"type": "object"}}]}
    else:
        result = {}
    print(json.dumps({"jsonrpc": "2.0", "id": mid, "result": result}), flush=True)
"#;

    fn plugin(root: &Path) -> PathBuf {
        let dir = root.join("plugin");
        std::fs::create_dir_all(dir.join(".claude-plugin")).expect("mkdir");
        std::fs::create_dir_all(dir.join("hooks")).expect("mkdir");
        std::fs::write(
            dir.join(".claude-plugin/plugin.json"),
            json!({"name": "bench", "version": "1.0.0"}).to_string(),
        )
        .expect("plugin.json");
        std::fs::write(dir.join("hooks/guard.sh"), GUARD).expect("guard");
        std::fs::write(
            dir.join("hooks/hooks.json"),
            json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "bash ${CLAUDE_PLUGIN_ROOT}/hooks/guard.sh"}]}]}}).to_string(),
        )
        .expect("hooks.json");
        std::fs::write(dir.join("server.py"), SERVER).expect("server");
        std::fs::write(
            dir.join(".mcp.json"),
            json!({"mcpServers": {"s": {"command": "/usr/bin/python3", "args": ["${CLAUDE_PLUGIN_ROOT}/server.py"]}}}).to_string(),
        )
        .expect(".mcp.json");
        dir
    }

    fn session(root: &Path, plugin: &Path, confined: bool) -> Arc<Session> {
        let proj = root.join("proj");
        std::fs::create_dir_all(&proj).expect("mkdir");
        std::fs::write(proj.join(".env"), "SECRET=x\n").expect(".env");
        let home = root.join(if confined { "home-c" } else { "home-u" });
        std::fs::create_dir_all(&home).expect("mkdir");
        std::fs::write(
            home.join("settings.json"),
            json!({"sandbox": {"confinePlugins": confined}}).to_string(),
        )
        .expect("settings");
        let mut opts = SessionOptions::new(&proj, Home::new(&home));
        opts.plugin_dirs = vec![plugin.to_path_buf()];
        opts.managed_dir = None;
        opts.claude_config =
            warden_config::ClaudeConfig::Off(warden_config::ClaudeConfigOff::NotRequested);
        Arc::new(Session::load(&opts))
    }

    pub fn main() {
        let rounds: usize = std::env::var("WARDEN_BENCH_ROUNDS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(100);
        let t = tempfile::tempdir().expect("tempdir");
        let root = t.path().canonicalize().expect("canonical");
        let plugin = plugin(&root);
        let rt = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .expect("runtime");
        let sessions = [
            session(&root, &plugin, false),
            session(&root, &plugin, true),
        ];
        let input = json!({
            "session_id": "00000000-1111-4222-8333-444444444444",
            "transcript_path": root.join("t.jsonl").display().to_string(),
            "cwd": root.join("proj").display().to_string(),
            "permission_mode": "default",
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": "ls"},
            "tool_use_id": "toolu_1",
        });
        let mut hook: [Vec<Duration>; 2] = [Vec::new(), Vec::new()];
        let mut mcp: [Vec<Duration>; 2] = [Vec::new(), Vec::new()];
        let mcp_rounds = rounds.div_ceil(4);
        for round in 0..rounds {
            for (i, s) in sessions.iter().enumerate() {
                let opts = s.dispatch_options().expect("options");
                let config = s.hook_config();
                let started = Instant::now();
                let r = rt.block_on(dispatch(Event::PreToolUse, &input, config, &opts));
                hook[i].push(started.elapsed());
                assert_eq!(r.handlers.len(), 1, "{r:?}");
            }
            if round < mcp_rounds {
                for (i, confined) in [false, true].into_iter().enumerate() {
                    // A fresh session per start: the hub keeps one connection per session.
                    let s = session(&root, &plugin, confined);
                    let started = Instant::now();
                    rt.block_on(async {
                        let hub = s.mcp();
                        let server = hub.by_name("plugin:bench:s").expect("server");
                        let conn = hub.connect(server).await.expect("connect");
                        assert_eq!(conn.tools().len(), 1);
                        s.close().await;
                    });
                    mcp[i].push(started.elapsed());
                }
            }
        }
        println!("plugin programs, {rounds} rounds (MCP: {mcp_rounds}), p50 / p99:");
        for (what, samples) in [
            ("PreToolUse hook (bash + jq)", &mut hook),
            ("MCP server to first tools/list", &mut mcp),
        ] {
            let [u, c] = samples;
            let (u50, u99, c50, c99) = (p(u, 0.5), p(u, 0.99), p(c, 0.5), p(c, 0.99));
            println!(
                "  {what:<32} unconfined {} / {}   confined {} / {}   added {} ({:.0}%)",
                ms(u50),
                ms(u99),
                ms(c50),
                ms(c99),
                ms(c50.saturating_sub(u50)),
                (c50.as_secs_f64() / u50.as_secs_f64() - 1.0) * 100.0
            );
        }
    }
}
