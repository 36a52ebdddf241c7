//! What a `#![no_std]` hook needs from a runtime, installed by [`lean!`](crate::lean).
//!
//! The allocator hands out memory from the end of the guest's heap and never reuses it, except
//! that freeing or growing the most recent block works in place (a `String` being built keeps
//! growing where it is). That is the right trade for a component that lives for exactly one
//! call: nothing to initialise, nothing to consolidate, and the host resets the whole memory
//! when the call ends. Running out of memory grows linear memory a page at a time, up to the
//! call's memory limit; past it the allocation fails and the guest traps.

#[cfg(target_arch = "wasm32")]
mod imp {
    use core::alloc::{GlobalAlloc, Layout};
    use core::cell::Cell;

    const PAGE: usize = 64 * 1024;

    unsafe extern "C" {
        /// Where the linker ends static data; the heap starts here.
        static __heap_base: u8;
    }

    /// The bump allocator. Components are single-threaded, hence `Cell`.
    pub struct Bump {
        next: Cell<usize>,
        end: Cell<usize>,
    }

    // SAFETY: a WebAssembly component instance runs on one thread.
    unsafe impl Sync for Bump {}

    impl Bump {
        /// An allocator that finds the heap on first use.
        pub const fn new() -> Self {
            Bump {
                next: Cell::new(0),
                end: Cell::new(0),
            }
        }

        fn start(&self) {
            if self.end.get() == 0 {
                self.next.set(&raw const __heap_base as usize);
                self.end.set(core::arch::wasm32::memory_size(0) * PAGE);
            }
        }

        /// Makes `[.., to)` addressable, growing memory if needed.
        fn reach(&self, to: usize) -> bool {
            if to <= self.end.get() {
                return true;
            }
            let pages = (to - self.end.get()).div_ceil(PAGE);
            if core::arch::wasm32::memory_grow(0, pages) == usize::MAX {
                return false;
            }
            self.end.set(self.end.get() + pages * PAGE);
            true
        }
    }

    impl Default for Bump {
        fn default() -> Self {
            Self::new()
        }
    }

    unsafe impl GlobalAlloc for Bump {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            self.start();
            let Some(start) = self.next.get().checked_next_multiple_of(layout.align()) else {
                return core::ptr::null_mut();
            };
            let Some(end) = start.checked_add(layout.size()) else {
                return core::ptr::null_mut();
            };
            if !self.reach(end) {
                return core::ptr::null_mut();
            }
            self.next.set(end);
            start as *mut u8
        }

        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            // Only the most recent block can be given back.
            if ptr as usize + layout.size() == self.next.get() {
                self.next.set(ptr as usize);
            }
        }

        unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
            let old_end = ptr as usize + layout.size();
            if old_end == self.next.get() {
                let Some(new_end) = (ptr as usize).checked_add(new_size) else {
                    return core::ptr::null_mut();
                };
                if new_size <= layout.size() || self.reach(new_end) {
                    self.next.set(new_end);
                    return ptr;
                }
                return core::ptr::null_mut();
            }
            // SAFETY: forwarded from the caller, with the layout it gave.
            unsafe {
                let new_layout = Layout::from_size_align_unchecked(new_size, layout.align());
                let new = self.alloc(new_layout);
                if !new.is_null() {
                    core::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
                }
                new
            }
        }
    }

    /// The canonical ABI's `cabi_realloc`, on the global allocator.
    ///
    /// # Safety
    ///
    /// As for `cabi_realloc`: `old` is null with `old_len` 0, or a block of `old_len` bytes
    /// aligned to `align` from an earlier call.
    pub unsafe fn cabi_realloc(
        old: *mut u8,
        old_len: usize,
        align: usize,
        new_len: usize,
    ) -> *mut u8 {
        use alloc::alloc::{Layout, alloc, realloc};
        if new_len == 0 {
            return align as *mut u8;
        }
        // SAFETY: the canonical ABI passes valid, power-of-two alignments.
        unsafe {
            if old_len == 0 {
                alloc(Layout::from_size_align_unchecked(new_len, align))
            } else {
                realloc(
                    old,
                    Layout::from_size_align_unchecked(old_len, align),
                    new_len,
                )
            }
        }
    }
}

#[cfg(target_arch = "wasm32")]
pub use imp::{Bump, cabi_realloc};

/// Supplies the runtime a `#![no_std]` hook component needs: the allocator, a panic handler
/// (a panic traps) and the `cabi_realloc` export. Call it once, at the crate root, in a crate
/// that is `#![no_std]` on `wasm32`. See the [crate docs](crate#lean-hooks).
#[macro_export]
macro_rules! lean {
    () => {
        #[cfg(target_arch = "wasm32")]
        #[global_allocator]
        static __WARDEN_ALLOCATOR: $crate::lean::Bump = $crate::lean::Bump::new();

        #[cfg(target_arch = "wasm32")]
        #[panic_handler]
        fn __warden_panic(_: &::core::panic::PanicInfo) -> ! {
            ::core::arch::wasm32::unreachable()
        }

        /// The canonical ABI's allocation entry point.
        ///
        /// # Safety
        ///
        /// Called by the host as the canonical ABI specifies.
        #[cfg(target_arch = "wasm32")]
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn cabi_realloc(
            old: *mut u8,
            old_len: usize,
            align: usize,
            new_len: usize,
        ) -> *mut u8 {
            // SAFETY: forwarded unchanged from the host.
            unsafe { $crate::lean::cabi_realloc(old, old_len, align, new_len) }
        }
    };
}
