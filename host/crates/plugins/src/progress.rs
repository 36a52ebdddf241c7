//! Progress bars for clone and copy (hidden when the caller asks for quiet output).

use indicatif::{ProgressBar, ProgressStyle};

/// Makes progress bars, or hidden ones when `quiet`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Progress {
    pub quiet: bool,
}

impl Progress {
    /// A spinner for an operation of unknown length (a git clone).
    pub fn spinner(&self, msg: String) -> ProgressBar {
        if self.quiet {
            return ProgressBar::hidden();
        }
        let pb = ProgressBar::new_spinner();
        if let Ok(style) = ProgressStyle::with_template("{spinner} {msg} ({elapsed})") {
            pb.set_style(style);
        }
        pb.set_message(msg);
        pb.enable_steady_tick(std::time::Duration::from_millis(100));
        pb
    }

    /// A bar over `len` items (files copied).
    pub fn bar(&self, len: u64, msg: String) -> ProgressBar {
        if self.quiet {
            return ProgressBar::hidden();
        }
        let pb = ProgressBar::new(len);
        if let Ok(style) = ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} files") {
            pb.set_style(style.progress_chars("=> "));
        }
        pb.set_message(msg);
        pb
    }
}
