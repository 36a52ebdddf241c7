//! `warden:plugin/log`: always available; records are capped per call.

use wasmtime::component::HasSelf;

use super::Provider;
use crate::bindings::{WitVersion, since_v0_1};
use crate::latest::log::{Host, Level};
use crate::sandbox::SandboxState;

pub(super) const PROVIDER: Provider = Provider {
    capability: None,
    interface: "warden:plugin/log",
    link: |l, v| match v {
        WitVersion::V0_1 => {
            since_v0_1::log::add_to_linker::<SandboxState, HasSelf<SandboxState>>(l, |s| s)
        }
    },
};

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
