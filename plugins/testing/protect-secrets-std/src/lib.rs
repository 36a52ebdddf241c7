//! The protect-secrets hook, same decision code, built with the standard library: the
//! component imports WASI's environment, stdio, clocks and exit interfaces and uses the C
//! allocator, as any std guest does. The hook-latency benchmark runs it beside the lean build.

extern crate alloc;

#[path = "../../../protect-secrets/src/logic.rs"]
mod logic;

warden_sdk::export_hook!(logic::ProtectSecrets);
