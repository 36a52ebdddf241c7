//! Runs `git status` through the exec capability, so the component imports
//! `warden:plugin/exec`. Without an exec grant the host must refuse to link it.

use warden_sdk::exec;
use warden_sdk::{Hook, HookEvent, HookResult};

struct UsesExec;

impl Hook for UsesExec {
    fn handle(_event: HookEvent) -> HookResult {
        let options = exec::Options {
            cwd: None,
            stdin: None,
            env: Vec::new(),
            timeout_ms: Some(1000),
        };
        match exec::run(&["git".to_string(), "status".to_string()], &options) {
            Ok(out) => HookResult::allow(format!("git exited {}", out.status)),
            Err(e) => HookResult::deny(format!("exec failed: {e:?}")),
        }
    }
}

warden_sdk::export_hook!(UsesExec);
