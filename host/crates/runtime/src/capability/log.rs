//! `warden:plugin/log`: always available; records are capped per call.

use wasmtime::component::HasSelf;

use super::Provider;
use crate::bindings::{WitVersion, since_v0_1};
use crate::latest::log::{Host, Level};
use crate::sandbox::{LogRecord, SandboxState};

/// Most records kept per call, and most bytes per record.
const MAX_RECORDS: usize = 256;
const MAX_MESSAGE: usize = 4096;

/// What one call logged.
#[derive(Debug, Default)]
pub(crate) struct CallState {
    pub(crate) records: Vec<LogRecord>,
}

impl CallState {
    /// Keeps a record, capped in number and size (a guest must not grow the host's memory
    /// through its log).
    pub(crate) fn push(&mut self, level: &'static str, mut message: String) {
        if self.records.len() >= MAX_RECORDS {
            return;
        }
        if message.len() > MAX_MESSAGE {
            let mut cut = MAX_MESSAGE;
            while !message.is_char_boundary(cut) {
                cut -= 1;
            }
            message.truncate(cut);
            message.push_str("…[truncated]");
        }
        self.records.push(LogRecord { level, message });
    }
}

pub(super) const PROVIDER: Provider = Provider {
    capability: None,
    interface: "warden:plugin/log",
    link: |l, v| match v {
        WitVersion::V0_1 => {
            since_v0_1::log::add_to_linker::<SandboxState, HasSelf<SandboxState>>(l, |s| s)
        }
    },
};

impl Host for SandboxState {
    async fn log(&mut self, level: Level, message: String) -> wasmtime::Result<()> {
        let level = match level {
            Level::Trace => "trace",
            Level::Debug => "debug",
            Level::Info => "info",
            Level::Warn => "warn",
            Level::Error => "error",
        };
        self.calls.log.push(level, message);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::{CallState, MAX_MESSAGE, MAX_RECORDS};

    #[test]
    fn records_are_capped_in_number_and_size() {
        let mut s = CallState::default();
        s.push("info", "é".repeat(MAX_MESSAGE));
        let first = &s.records[0].message;
        assert!(first.ends_with("…[truncated]"), "{first}");
        assert!(first.len() <= MAX_MESSAGE + "…[truncated]".len());
        for i in 0..MAX_RECORDS * 2 {
            s.push("debug", format!("{i}"));
        }
        assert_eq!(s.records.len(), MAX_RECORDS);
        assert_eq!(s.records[1].message, "0");
    }
}
