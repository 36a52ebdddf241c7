//! Host implementations of the WIT capability interfaces.
//!
//! One module per capability, and in each one place where an access is checked: first the
//! plugin's [`Grant`](crate::runtime::Grant), then the session's
//! [`Policy`](crate::runtime::Policy) (the user's permission rules, see [`PermissionPolicy`]).
//! An interface that was not granted is not even linked, so a component importing it is
//! refused at load time.

mod env;
mod exec;
mod fs;
mod http;
mod log;
mod policy;

pub use exec::{DEFAULT_TIMEOUT as EXEC_DEFAULT_TIMEOUT, MAX_CAPTURE_BYTES};
pub use fs::{MAX_DIR_ENTRIES, MAX_READ_BYTES};
pub use http::MAX_BODY_BYTES;
pub use policy::{AskAt, PermissionPolicy};

use crate::runtime::latest::types;
use crate::runtime::sandbox_state::SandboxState;

impl types::Host for SandboxState {}
