//! `warden:plugin/exec`.

use crate::runtime::latest::exec::{ExecError, Host, Options, Output};
use crate::runtime::sandbox_state::SandboxState;

impl Host for SandboxState {
    async fn run(
        &mut self,
        _argv: Vec<String>,
        _options: Options,
    ) -> wasmtime::Result<Result<Output, ExecError>> {
        Ok(Err(ExecError::Denied(
            "running programs is not available in this build".into(),
        )))
    }
}
