//! `warden:plugin/http`.

use crate::runtime::latest::http::{Host, HttpError, Request, Response};
use crate::runtime::sandbox_state::SandboxState;

impl Host for SandboxState {
    async fn fetch(&mut self, _request: Request) -> wasmtime::Result<Result<Response, HttpError>> {
        Ok(Err(HttpError::Denied(
            "HTTP is not available in this build".into(),
        )))
    }
}
