//! Plugins distributed as OCI artifacts through the registries organisations already run, and
//! signed with ed25519 keys that are verified offline against the user's and the managed
//! settings' trust policy.
//!
//! - [`keys`]: key files, key ids, what a signature covers.
//! - [`policy`]: `pluginSignatures` in the user and managed settings.
//! - [`oci`]: publish, sign and pull, with every blob verified before use.
//! - [`pack`]: a plugin directory as layers and back.
//! - [`reader`]: registry reads, with Warden's redirect policy.

pub mod error;
pub mod keys;
pub mod oci;
pub mod pack;
pub mod policy;
pub mod reader;

pub use error::DistError;
pub use keys::{PublicKey, SecretKey};
pub use oci::{ArtifactRef, Auth, Limits, Options, Published, Pulled, SignatureRecord};
pub use policy::{Requirement, TrustPolicy};
