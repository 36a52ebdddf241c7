//! `warden:plugin/fs`.

use crate::runtime::latest::fs::{DirEntry, ErrorCode, FsError, Host, Metadata};
use crate::runtime::sandbox_state::SandboxState;

fn unavailable() -> FsError {
    FsError {
        code: ErrorCode::Denied,
        message: "file access is not available in this build".into(),
    }
}

impl Host for SandboxState {
    async fn cwd(&mut self) -> wasmtime::Result<String> {
        Ok(self.ctx.cwd.display().to_string())
    }

    async fn read(&mut self, _path: String) -> wasmtime::Result<Result<Vec<u8>, FsError>> {
        Ok(Err(unavailable()))
    }

    async fn write(
        &mut self,
        _path: String,
        _contents: Vec<u8>,
    ) -> wasmtime::Result<Result<(), FsError>> {
        Ok(Err(unavailable()))
    }

    async fn stat(&mut self, _path: String) -> wasmtime::Result<Result<Metadata, FsError>> {
        Ok(Err(unavailable()))
    }

    async fn list_dir(
        &mut self,
        _path: String,
    ) -> wasmtime::Result<Result<Vec<DirEntry>, FsError>> {
        Ok(Err(unavailable()))
    }

    async fn create_dir(&mut self, _path: String) -> wasmtime::Result<Result<(), FsError>> {
        Ok(Err(unavailable()))
    }

    async fn remove_file(&mut self, _path: String) -> wasmtime::Result<Result<(), FsError>> {
        Ok(Err(unavailable()))
    }
}
