//! `warden:plugin/log`: always available; records are capped per call.

use crate::runtime::latest::log::{Host, Level};
use crate::runtime::sandbox_state::SandboxState;

impl Host for SandboxState {
    async fn log(&mut self, level: Level, message: String) -> wasmtime::Result<()> {
        let level = match level {
            Level::Trace => "trace",
            Level::Debug => "debug",
            Level::Info => "info",
            Level::Warn => "warn",
            Level::Error => "error",
        };
        SandboxState::log(self, level, message);
        Ok(())
    }
}
