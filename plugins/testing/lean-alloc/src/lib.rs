//! Works the lean allocator the way real hooks use memory, and reports what it computed so
//! the host can check every byte came back intact.
//!
//! The event's `tool_input` says what to do:
//! - `{"grow_mib": n}`: build an n-MiB buffer by pushing bytes one at a time (so every growth
//!   is a realloc of the newest block, in place), interleaved with short-lived strings that are
//!   freed again, then sum the buffer;
//! - `{"vecs": n}`: keep n vectors alive while each grows in turn (so most reallocs must
//!   copy), then sum them all.
//!
//! The answer is `additional_context`: the sum as decimal text.

#![cfg_attr(target_arch = "wasm32", no_std)]

extern crate alloc;

use alloc::string::{String, ToString};
use alloc::vec::Vec;

use warden_sdk::{Hook, HookEvent, HookResult};

/// The hook.
pub struct LeanAlloc;

/// The byte at position `i` of every buffer.
fn pattern(i: usize) -> u8 {
    (i.wrapping_mul(31) ^ (i >> 7)) as u8
}

fn grow(mib: usize) -> u64 {
    let mut buf: Vec<u8> = Vec::new();
    let mut sum = 0u64;
    for i in 0..mib << 20 {
        buf.push(pattern(i));
        if i % 65_536 == 0 {
            // A temporary that is freed before the next push: the newest block is handed back.
            let t = i.to_string();
            sum += t.len() as u64;
        }
    }
    sum + buf.iter().map(|&b| u64::from(b)).sum::<u64>()
}

fn vecs(n: usize) -> u64 {
    let mut all: Vec<Vec<u8>> = (0..n).map(|_| Vec::new()).collect();
    for round in 0..64 {
        for (k, v) in all.iter_mut().enumerate() {
            for j in 0..16 {
                v.push(pattern(round * 16 + j + k));
            }
        }
    }
    all.iter()
        .flat_map(|v| v.iter())
        .map(|&b| u64::from(b))
        .sum()
}

impl Hook for LeanAlloc {
    fn handle(event: HookEvent) -> HookResult {
        let Some(call) = event.tool_call() else {
            return HookResult::none();
        };
        let arg = |k: &str| call.tool_input.get(k).and_then(|v| v.as_u64());
        let sum = if let Some(mib) = arg("grow_mib") {
            grow(mib as usize)
        } else if let Some(n) = arg("vecs") {
            vecs(n as usize)
        } else {
            return HookResult::none();
        };
        let mut r = HookResult::none();
        r.additional_context = Some(String::from(sum.to_string().as_str()));
        r
    }
}

warden_sdk::export_hook!(LeanAlloc);
warden_sdk::lean!();
