//! Progress bars for clone, copy and compile (hidden when the caller asks for quiet output).
//!
//! One style for every bar Warden draws: the plugin verbs use it for clones and copies, the CLI
//! for compiling components after an install.

use indicatif::{ProgressBar, ProgressStyle};

/// Makes progress bars, or hidden ones when `quiet`.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    /// Draw nothing.
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

    /// A bar over `len` files (copied).
    pub fn bar(&self, len: u64, msg: String) -> ProgressBar {
        self.bar_of(len, msg, "files")
    }

    /// A bar over `len` items of `unit` (`files`, `components`), labelled with `msg`.
    pub fn bar_of(&self, len: u64, msg: String, unit: &str) -> ProgressBar {
        if self.quiet {
            return ProgressBar::hidden();
        }
        let pb = ProgressBar::new(len);
        let template = format!("{{msg}} [{{bar:30}}] {{pos}}/{{len}} {unit}");
        if let Ok(style) = ProgressStyle::with_template(&template) {
            pb.set_style(style.progress_chars("=> "));
        }
        pb.set_message(msg);
        pb
    }
}
