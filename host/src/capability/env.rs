//! `warden:plugin/env`: only the variables named in the grant, with the values the session
//! resolved for them when the call started.

use crate::runtime::latest::env::Host;
use crate::runtime::sandbox_state::SandboxState;

impl Host for SandboxState {
    async fn get(&mut self, key: String) -> wasmtime::Result<Option<String>> {
        if !self.grant.env.contains(&key) {
            return Ok(None);
        }
        Ok(self
            .ctx
            .env
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v.clone()))
    }

    async fn vars(&mut self) -> wasmtime::Result<Vec<(String, String)>> {
        let grant = &self.grant;
        Ok(self
            .ctx
            .env
            .iter()
            .filter(|(k, _)| grant.env.contains(k))
            .cloned()
            .collect())
    }
}
