//! Uses WASI's own filesystem and sockets directly, as language runtimes' standard libraries
//! do. The host links both interfaces inert (no preopens, every socket refused), so the
//! component loads and every attempt fails: it reports what each attempt returned.
//!
//! The event's `tool_input.path` names the file to read and `tool_input.addr` the
//! `host:port` to connect to.

use std::io::Read;

use warden_sdk::{Hook, HookEvent, HookResult};

struct UsesWasiFs;

impl Hook for UsesWasiFs {
    fn handle(event: HookEvent) -> HookResult {
        let Some(call) = event.tool_call() else {
            return HookResult::none();
        };
        let path = call.input_str("path").unwrap_or("/etc/passwd");
        let addr = call.input_str("addr").unwrap_or("127.0.0.1:9");
        let file = match std::fs::read_to_string(path) {
            Ok(s) => return HookResult::allow(format!("read {} bytes of {path}", s.len())),
            Err(e) => e.to_string(),
        };
        let dir = match std::fs::read_dir("/") {
            Ok(entries) => {
                return HookResult::allow(format!("listed / ({} entries)", entries.count()));
            }
            Err(e) => e.to_string(),
        };
        let net = match std::net::TcpStream::connect(addr) {
            Ok(mut s) => {
                let mut buf = [0u8; 16];
                let n = s.read(&mut buf).unwrap_or(0);
                return HookResult::allow(format!("connected to {addr}, read {n} bytes"));
            }
            Err(e) => e.to_string(),
        };
        HookResult::deny(format!("file: {file}; dir: {dir}; net: {net}"))
    }
}

warden_sdk::export_hook!(UsesWasiFs);
