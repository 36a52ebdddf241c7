//! Why confinement could not be set up.

use std::path::PathBuf;

/// What a caller tells the user to do when the kernel cannot confine: Warden never runs a
/// program unconfined unless the user asked for it in so many words.
pub const OPT_OUT_HINT: &str =
    "set `sandbox.allowUnconfined: true` to run programs without OS confinement";

/// Every way building or applying a [`Confinement`](crate::Confinement) can fail. All of them
/// fail closed: the program is not started.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfineError {
    /// The kernel lacks a feature the confinement needs.
    #[error(
        "cannot confine programs: {feature} needs Landlock ABI {needed}, and this kernel offers {}; \
         upgrade the kernel (Linux {kernel} or later) or {OPT_OUT_HINT}",
        if *.abi == 0 { "none (Landlock is missing or disabled; see `lsm=` on the kernel command line)".to_string() } else { format!("ABI {}", .abi) }
    )]
    Unsupported {
        /// The Landlock ABI the kernel offers (0: none).
        abi: u32,
        /// The ABI the feature needs.
        needed: u32,
        /// The first kernel release with that ABI.
        kernel: &'static str,
        /// What needs it.
        feature: &'static str,
    },
    /// Process isolation was required, and this system allows no PID namespace.
    #[error(
        "cannot confine programs: process isolation is required, and this system gives a process no PID namespace of its own (unprivileged user namespaces are off: `kernel.unprivileged_userns_clone=0`, `user.max_user_namespaces=0` or AppArmor's `kernel.apparmor_restrict_unprivileged_userns=1`), so the program would see every process's /proc; allow user namespaces or stop requiring process isolation"
    )]
    NoProcessIsolation,
    /// seccomp filters are missing, so sockets cannot be refused.
    #[error(
        "cannot confine programs: the kernel has no seccomp filter support, so network access cannot be refused; allow network or {OPT_OUT_HINT}"
    )]
    NoSeccomp,
    /// A path in the confinement could not be opened or listed.
    #[error("{}: {source}", .path.display())]
    Path {
        /// The path.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A relative path was given where only absolute ones mean anything.
    #[error("{}: confinement paths must be absolute", .0.display())]
    Relative(PathBuf),
    /// The Landlock ruleset could not be built.
    #[error("cannot build the Landlock ruleset: {0}")]
    Ruleset(String),
    /// A write-protected path is too large to keep a copy of for restoring it.
    #[error("{}: write-protected path holds over {limit} bytes, too many to keep a copy for restoring it after the call", .path.display())]
    ProtectedTooLarge {
        /// The path.
        path: PathBuf,
        /// The limit in bytes.
        limit: u64,
    },
    /// A write-protected path could not be put back after the call.
    #[error("{}: the call changed this write-protected path and it could not be restored: {reason}", .path.display())]
    RestoreFailed {
        /// The path.
        path: PathBuf,
        /// Why.
        reason: String,
    },
}

impl ConfineError {
    pub(crate) fn path(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        ConfineError::Path {
            path: path.into(),
            source,
        }
    }
}
