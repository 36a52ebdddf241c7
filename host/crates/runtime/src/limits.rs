//! Per-call limits and the store's resource limiter.

use std::time::Duration;

/// Limits for one call into a component. Every breach is reported as a
/// [`RuntimeError`](super::RuntimeError) naming the limit; the host keeps serving other calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Largest linear memory the guest may grow to. Default 64 MiB.
    pub memory_bytes: usize,
    /// Wall-clock budget for the whole call: waiting for a sandbox slot when all are in use,
    /// instantiation and the guest's run. Default 60 s, Claude Code's default command-hook
    /// timeout; a hook's own `timeout` replaces it.
    pub deadline: Duration,
    /// Bytes kept from each of stdout and stderr; more is dropped and flagged. Default 1 MiB.
    pub capture_bytes: usize,
    /// Largest total size of the strings a call returns. Default 1 MiB.
    pub output_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            memory_bytes: 64 << 20,
            deadline: Duration::from_secs(60),
            capture_bytes: 1 << 20,
            output_bytes: 1 << 20,
        }
    }
}

impl Limits {
    /// The defaults with another deadline.
    pub fn with_deadline(deadline: Duration) -> Self {
        Limits {
            deadline,
            ..Limits::default()
        }
    }
}

/// Memory and table limits for one store; remembers whether the memory limit was hit so the
/// resulting trap can be reported as a memory-limit breach.
pub(crate) struct CallLimiter {
    pub(crate) memory_bytes: usize,
    pub(crate) memory_limit_hit: Option<usize>,
}

const MAX_TABLE_ELEMENTS: usize = 100_000;

impl wasmtime::ResourceLimiter for CallLimiter {
    fn memory_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if desired > self.memory_bytes {
            self.memory_limit_hit = Some(desired);
            // Trap at once: a guest allocator that sees a failed grow usually aborts anyway,
            // and trapping here lets the error name the limit.
            wasmtime::bail!(
                "memory limit of {} bytes reached (guest asked for {desired})",
                self.memory_bytes
            );
        }
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(desired <= MAX_TABLE_ELEMENTS)
    }

    fn instances(&self) -> usize {
        64
    }

    fn tables(&self) -> usize {
        64
    }

    fn memories(&self) -> usize {
        16
    }
}
