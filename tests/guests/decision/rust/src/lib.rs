//! The reference hook that every guest language implements alike; `tests/languages.rs` runs
//! one decision table against each build. The rules are in `tests/guests/decision/README.md`.

use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};

use warden_sdk::{Hook, HookEvent, HookResult};

struct Policy;

impl Hook for Policy {
    fn handle(event: HookEvent) -> HookResult {
        if event.name != "PreToolUse" {
            return HookResult::none();
        }
        let Some(call) = event.tool_call() else {
            return HookResult::none();
        };
        if call.tool_name != "Bash" {
            return HookResult::none();
        }
        let Some(command) = call.command() else {
            return HookResult::none();
        };
        match command {
            "__loop__" => {
                let mut n = 0u64;
                loop {
                    n = black_box(n.wrapping_add(1));
                }
            }
            "__bomb__" => {
                let mut blocks = Vec::new();
                loop {
                    blocks.push(black_box(vec![7u8; 1 << 20]));
                }
            }
            "__trap__" => panic!("trap requested"),
            "__count__" => {
                static CALLS: AtomicU64 = AtomicU64::new(0);
                let n = CALLS.fetch_add(1, Ordering::SeqCst) + 1;
                return HookResult::allow(n.to_string());
            }
            _ => {}
        }
        if command.to_lowercase().contains("drop table") {
            return HookResult::deny("destructive SQL: DROP TABLE");
        }
        if command.starts_with("sudo ") {
            return HookResult::ask("runs as root");
        }
        match command {
            "ls" => return HookResult::allow("read-only listing"),
            "rewrite" => {
                let mut r = HookResult::allow("rewritten");
                r.updated_input = Some(serde_json::json!({ "command": "ls -la" }));
                return r;
            }
            "stop" => {
                let mut r = HookResult::none();
                r.continue_ = false;
                r.stop_reason = Some("stopped by policy".into());
                return r;
            }
            _ => {}
        }
        if let Some(rest) = command.strip_prefix("say ") {
            let mut r = HookResult::none();
            r.system_message = Some(rest.to_string());
            return r;
        }
        if command.starts_with("echo ") {
            let mut r = HookResult::none();
            r.additional_context = Some("echo is harmless".into());
            return r;
        }
        HookResult::none()
    }
}

warden_sdk::export_hook!(Policy);
