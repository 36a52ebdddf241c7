//! The refusals a plugin's programs met lately, for `warden plugin details`: every line the
//! [`Explainer`](super::processes::Explainer) gives for a plugin, kept in a small log per
//! plugin, `<Warden home>/state/refusals/<data directory name>.jsonl`.
//!
//! The log is under Warden's home rather than in the plugin's data directory because the
//! plugin's programs write that directory: they could hide or invent refusals there. It
//! holds the last [`KEPT`] distinct lines, a line met again moving to the end with its new
//! time, and is replaced whole through a rename, so a reader never sees half of it.

use std::io::Write;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// How many distinct refusals a plugin's log keeps.
pub const KEPT: usize = 20;

/// One explained refusal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Refusal {
    /// When it was last explained (RFC 3339, UTC).
    pub at: String,
    /// The explanation: who was refused what, and the command that allows it.
    pub message: String,
}

/// The log of the plugin whose data directory is named `data_dir_name`, or `None` when that
/// is not a plain file name of `[A-Za-z0-9_.-]` (not starting with `.`): a name from
/// anywhere else could point outside the log directory.
pub fn log_path(warden_home: &Path, data_dir_name: &str) -> Option<PathBuf> {
    let ok = !data_dir_name.is_empty()
        && data_dir_name.len() <= 200
        && !data_dir_name.starts_with('.')
        && data_dir_name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
    ok.then(|| {
        warden_home
            .join("state/refusals")
            .join(format!("{data_dir_name}.jsonl"))
    })
}

/// Adds `messages` to the log at `log`, keeping the last [`KEPT`].
pub fn record(log: &Path, messages: &[String]) -> std::io::Result<()> {
    if messages.is_empty() {
        return Ok(());
    }
    let dir = log.parent().ok_or_else(|| {
        std::io::Error::other(format!("{} has no parent directory", log.display()))
    })?;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)?;
    // Programs of one session finish concurrently: the lock keeps each read-change-write
    // whole, so no refusal is lost to another's rename.
    let lock = std::fs::File::open(dir)?;
    lock.lock()?;
    let mut kept = read(log);
    let at = crate::agent::transcript::iso_now();
    for m in messages {
        kept.retain(|r| &r.message != m);
        kept.push(Refusal {
            at: at.clone(),
            message: m.clone(),
        });
    }
    let drop = kept.len().saturating_sub(KEPT);
    kept.drain(..drop);
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    for r in &kept {
        serde_json::to_writer(&mut tmp, r)?;
        tmp.write_all(b"\n")?;
    }
    tmp.as_file().sync_all()?;
    tmp.persist(log).map_err(|e| e.error)?;
    Ok(())
}

/// The log at `log`, oldest first: empty when there is none; lines that are not a
/// [`Refusal`] are skipped.
pub fn read(log: &Path) -> Vec<Refusal> {
    let Ok(text) = std::fs::read_to_string(log) else {
        return Vec::new();
    };
    text.lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_could_leave_the_directory_are_refused() {
        let home = Path::new("/h");
        assert_eq!(
            log_path(home, "fmt-market.0123456789abcdef"),
            Some(PathBuf::from(
                "/h/state/refusals/fmt-market.0123456789abcdef.jsonl"
            ))
        );
        for bad in ["", ".", "..", "../x", "a/b", ".hidden", "a\0b", "a b"] {
            assert_eq!(log_path(home, bad), None, "{bad:?}");
        }
    }

    #[test]
    fn the_log_keeps_the_last_distinct_refusals() {
        let t = tempfile::tempdir().expect("tempdir");
        let log = log_path(t.path(), "p-m").expect("path");
        for i in 0..KEPT + 5 {
            record(&log, &[format!("refusal {i}")]).expect("record");
        }
        let got = read(&log);
        assert_eq!(got.len(), KEPT);
        assert_eq!(got[0].message, "refusal 5");
        assert_eq!(got[KEPT - 1].message, format!("refusal {}", KEPT + 4));
        // Met again: one entry, now the latest.
        record(&log, &["refusal 5".to_string()]).expect("record");
        let got = read(&log);
        assert_eq!(got.len(), KEPT);
        assert_eq!(got[KEPT - 1].message, "refusal 5");
        assert_eq!(got.iter().filter(|r| r.message == "refusal 5").count(), 1);
        // Nothing but the log is left in the directory.
        let entries: Vec<_> = std::fs::read_dir(log.parent().expect("dir"))
            .expect("read_dir")
            .collect();
        assert_eq!(entries.len(), 1);
    }
}
