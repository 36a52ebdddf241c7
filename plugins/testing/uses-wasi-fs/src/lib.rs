//! Reads `/etc/passwd` with `std::fs`, which imports `wasi:filesystem`. Warden offers files
//! only through `warden:plugin/fs`, so this component must be refused before it runs.

use warden_sdk::{Hook, HookEvent, HookResult};

struct UsesWasiFs;

impl Hook for UsesWasiFs {
    fn handle(_event: HookEvent) -> HookResult {
        match std::fs::read_to_string("/etc/passwd") {
            Ok(s) => HookResult::allow(format!("read {} bytes", s.len())),
            Err(e) => HookResult::deny(e.to_string()),
        }
    }
}

warden_sdk::export_hook!(UsesWasiFs);
