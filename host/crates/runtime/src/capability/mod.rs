//! The capability providers: the host side of the WIT capability interfaces.
//!
//! In the manner of Spin's factors, each capability is one module that owns everything about
//! it: linking its interface (for every supported WIT version) into a linker, the grant check
//! (one small `allows` function: [`FsGrant::allows`](crate::FsGrant::allows),
//! [`ExecGrant::allows`], [`NetGrant::allows`], [`EnvGrant::allows`]), its per-call state (a
//! field of `CallStates`, made fresh for every call) and its per-call work.
//! [`PROVIDERS`] lists them; the runtime links a provider only when the grant allows its
//! capability, so a component importing an ungranted interface is refused at load time.
//! Adding a capability is a new module here, its WIT, and a line in [`PROVIDERS`] (plus its
//! name in [`Capability`]).
//!
//! Every use is checked in one place per capability, always in the same order: first the
//! plugin's [`Grant`](crate::Grant), then the session's [`Policy`](crate::Policy) (the user's
//! permission rules, see [`PermissionPolicy`]).

mod env;
mod exec;
mod fs;
mod http;
mod log;
mod policy;

use wasmtime::component::{HasSelf, Linker};

pub use env::EnvGrant;
pub use exec::{DEFAULT_TIMEOUT as EXEC_DEFAULT_TIMEOUT, ExecGrant, MAX_CAPTURE_BYTES};
pub use fs::{MAX_DIR_ENTRIES, MAX_READ_BYTES};
pub use http::{MAX_BODY_BYTES, NetGrant};
pub use policy::{AskAt, PermissionPolicy};

use crate::bindings::{WitVersion, since_v0_1};
use crate::sandbox::SandboxState;
use warden_vocab::Capability;

/// The per-call state of every provider that keeps any, built when a call's store is made
/// and dropped with it. A provider with state adds its field here; `fs`, `http` and `env`
/// keep none beyond the grant and the call's context.
#[derive(Debug, Default)]
pub(crate) struct CallStates {
    pub(crate) log: log::CallState,
    pub(crate) exec: exec::CallState,
}

impl CallStates {
    pub(crate) fn new(ctx: &crate::sandbox::CallContext) -> Self {
        CallStates {
            log: log::CallState::default(),
            exec: exec::CallState::new(ctx),
        }
    }
}

/// One host interface: which capability it needs and how it is linked.
pub(crate) struct Provider {
    /// The capability a grant must give; `None` for interfaces every component gets.
    pub(crate) capability: Option<Capability>,
    /// The WIT interface, without its version (`warden:plugin/fs`).
    pub(crate) interface: &'static str,
    /// Adds the interface, as the bindings of `version` define it, to a linker.
    pub(crate) link: fn(&mut Linker<SandboxState>, WitVersion) -> wasmtime::Result<()>,
}

/// Every provider. The order is the order of linking.
pub(crate) const PROVIDERS: &[Provider] = &[
    TYPES,
    log::PROVIDER,
    fs::PROVIDER,
    exec::PROVIDER,
    http::PROVIDER,
    env::PROVIDER,
];

/// `warden:plugin/types` carries only types; every world uses it.
const TYPES: Provider = Provider {
    capability: None,
    interface: "warden:plugin/types",
    link: |l, v| match v {
        WitVersion::V0_1 => {
            since_v0_1::types::add_to_linker::<SandboxState, HasSelf<SandboxState>>(l, |s| s)
        }
    },
};

impl since_v0_1::types::Host for SandboxState {}

/// The provider of an imported interface (`warden:plugin/fs@0.1.0`), if any.
pub(crate) fn provider_for(import: &str) -> Option<&'static Provider> {
    let unversioned = import.split('@').next().unwrap_or(import);
    PROVIDERS.iter().find(|p| p.interface == unversioned)
}
