//! `warden:plugin/env`: only the variables named in the grant, with the values the session
//! resolved for them when the call started.

use wasmtime::component::HasSelf;

use super::Provider;
use crate::bindings::{WitVersion, since_v0_1};
use crate::latest::env::Host;
use crate::sandbox::SandboxState;
use warden_vocab::Capability;

pub(super) const PROVIDER: Provider = Provider {
    capability: Some(Capability::Env),
    interface: "warden:plugin/env",
    link: |l, v| match v {
        WitVersion::V0_1 => {
            since_v0_1::env::add_to_linker::<SandboxState, HasSelf<SandboxState>>(l, |s| s)
        }
    },
};

/// The `env` part of a grant: variable names, matched exactly.
#[derive(Debug, Clone, Copy)]
pub struct EnvGrant<'a>(pub &'a [String]);

impl EnvGrant<'_> {
    /// Whether the guest may see the variable `key`.
    pub fn allows(&self, key: &str) -> bool {
        self.0.iter().any(|g| g == key)
    }
}

impl Host for SandboxState {
    async fn get(&mut self, key: String) -> wasmtime::Result<Option<String>> {
        if !EnvGrant(&self.grant.env).allows(&key) {
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
        let grant = EnvGrant(&self.grant.env);
        Ok(self
            .ctx
            .env
            .iter()
            .filter(|(k, _)| grant.allows(k))
            .cloned()
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::EnvGrant;

    #[test]
    fn allows() {
        let granted = ["HOME".to_string(), "GITHUB_TOKEN".to_string()];
        let table = [
            ("HOME", true),
            ("GITHUB_TOKEN", true),
            ("home", false),
            ("GITHUB", false),
            ("GITHUB_TOKEN_X", false),
            ("", false),
            ("PATH", false),
        ];
        for (key, want) in table {
            assert_eq!(EnvGrant(&granted).allows(key), want, "{key}");
        }
        assert!(!EnvGrant(&[]).allows("HOME"));
    }
}
