//! What the running kernel can enforce.

use std::sync::OnceLock;

/// What this kernel enforces for a confined process. Each Landlock feature arrived with an ABI
/// version: 1 (Linux 5.13) files, 2 (5.19) linking and renaming across directories, 3 (6.2)
/// truncation, 4 (6.7) TCP bind/connect, 5 (6.10) device ioctls, 6 (6.12) scoping of abstract
/// unix sockets and signals, 7 (6.15) audit logging.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Support {
    /// Landlock ABI version, 0 when Landlock is missing or disabled.
    pub landlock_abi: u32,
    /// Reads and writes are limited to the granted paths (ABI ≥ 3, the minimum Warden accepts:
    /// before it `truncate(2)` escaped the rules).
    pub filesystem: bool,
    /// Landlock refuses TCP bind and connect (ABI ≥ 4). Network is refused without it too,
    /// by the seccomp filter on `socket(2)`.
    pub tcp: bool,
    /// Abstract unix sockets and signals to processes outside the call are refused (ABI ≥ 6).
    pub scoping: bool,
    /// seccomp filters can refuse `socket(2)` families.
    pub seccomp: bool,
}

/// Minimum ABI for any filesystem confinement.
pub(crate) const MIN_FS_ABI: u32 = 3;
pub(crate) const TCP_ABI: u32 = 4;
pub(crate) const SCOPE_ABI: u32 = 6;

/// First kernel release offering an ABI, for error messages.
pub(crate) fn kernel_for(abi: u32) -> &'static str {
    match abi {
        0 | 1 => "5.13",
        2 => "5.19",
        3 => "6.2",
        4 => "6.7",
        5 => "6.10",
        6 => "6.12",
        _ => "6.15",
    }
}

fn detect_abi() -> u32 {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: with a null attribute and size 0 this call only returns the ABI version (or
    // an error); it touches no memory of ours.
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    u32::try_from(v).unwrap_or(0)
}

fn detect_seccomp() -> bool {
    // SAFETY: PR_GET_SECCOMP reads this thread's mode; it fails with EINVAL only when the
    // kernel was built without seccomp.
    unsafe { libc::prctl(libc::PR_GET_SECCOMP, 0, 0, 0, 0) >= 0 }
}

/// The kernel's abilities, probed once per process.
pub fn status() -> Support {
    static CACHED: OnceLock<Support> = OnceLock::new();
    *CACHED.get_or_init(|| support_for(detect_abi(), detect_seccomp()))
}

pub(crate) fn support_for(abi: u32, seccomp: bool) -> Support {
    Support {
        landlock_abi: abi,
        filesystem: abi >= MIN_FS_ABI,
        tcp: abi >= TCP_ABI,
        scoping: abi >= SCOPE_ABI,
        seccomp,
    }
}
