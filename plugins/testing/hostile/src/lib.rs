//! Misbehaves as `tool_input.attack` says: `loop`, `membomb`, `recurse`, `shout` (100 MiB to
//! stdout), `log` (one warning record), `panic`, `stderr`, `block`, `count` (calls seen by this instance), `probe` (what
//! WASI shows of env and args), `big-output` (a 2 MiB reason), `sleep` (waits `tool_input.ms`
//! milliseconds on a WASI clock, as a hook waiting on I/O would, then allows), `scatter`
//! (writes every fourth page of a 2 MiB initialised array, after counting the pages it finds
//! already written: a fresh sandbox answers 0); anything else answers `allow`.

use std::io::Write;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};

static CALLS: AtomicU64 = AtomicU64::new(0);

/// Initialised data, so it lives in the module's memory image rather than in zeroed memory:
/// a reset must copy the image back over every page a call wrote.
const PAGE: usize = 4096;
const SCATTER: usize = 2 << 20;
static SCATTERED: [AtomicU8; SCATTER] = [const { AtomicU8::new(0x5a) }; SCATTER];

use warden_sdk::{Hook, HookEvent, HookResult};

struct Hostile;

impl Hook for Hostile {
    fn handle(event: HookEvent) -> HookResult {
        let attack = event
            .tool_call()
            .and_then(|c| c.input_str("attack"))
            .unwrap_or("")
            .to_string();
        match attack.as_str() {
            "loop" => {
                let mut n: u64 = 0;
                loop {
                    n = std::hint::black_box(n.wrapping_add(1));
                }
            }
            "membomb" => {
                let mut hoard: Vec<Vec<u8>> = Vec::new();
                loop {
                    hoard.push(vec![0xa5; 8 << 20]);
                    std::hint::black_box(&hoard);
                }
            }
            "recurse" => HookResult::allow(format!("{}", recurse(std::hint::black_box(1)))),
            "shout" => {
                let chunk = vec![b'x'; 1 << 20];
                let mut out = std::io::stdout();
                for _ in 0..100 {
                    if out.write_all(&chunk).is_err() {
                        break;
                    }
                }
                HookResult::allow("shouted")
            }
            "stderr" => {
                eprintln!("a note on stderr");
                println!("a note on stdout");
                HookResult::allow("printed")
            }
            "log" => {
                warden_sdk::log::log(warden_sdk::log::Level::Warn, "a log record");
                HookResult::allow("logged")
            }
            "panic" => panic!("hostile guest panicked on purpose"),
            "block" => HookResult::block("blocked on request"),
            "count" => {
                // A fresh sandbox per call means this is 1 every time.
                let n = CALLS.fetch_add(1, Ordering::SeqCst) + 1;
                HookResult::allow(n.to_string())
            }
            "scatter" => {
                // Every fourth page, so the written pages form 128 separate runs: more than a
                // single dirty-page scan of the pool reports.
                let mut seen = 0;
                for page in (0..SCATTER).step_by(4 * PAGE) {
                    let byte = &SCATTERED[page + 17];
                    if byte.load(Ordering::Relaxed) != 0x5a {
                        seen += 1;
                    }
                    byte.store(0xa5, Ordering::Relaxed);
                }
                HookResult::allow(seen.to_string())
            }
            "probe" => HookResult::allow(format!(
                "env={} args={}",
                std::env::vars().count(),
                std::env::args().count()
            )),
            "big-output" => HookResult::allow("y".repeat(2 << 20)),
            "sleep" => {
                let ms = event
                    .input()
                    .pointer("/tool_input/ms")
                    .and_then(|v| v.as_u64())
                    .unwrap_or(0);
                std::thread::sleep(std::time::Duration::from_millis(ms));
                HookResult::allow("slept")
            }
            _ => HookResult::allow("ok"),
        }
    }
}

/// Recursion on plain values lives on the engine's native stack, so it ends in the
/// engine's stack-overflow trap (locals whose address is taken would instead exhaust the
/// guest's shadow stack in linear memory, which ends in an out-of-bounds trap).
#[inline(never)]
fn recurse(n: u64) -> u64 {
    if n == 0 {
        return 0;
    }
    let r = recurse(n.wrapping_add(1));
    r.rotate_left(3) ^ n
}

warden_sdk::export_hook!(Hostile);
