//! When the CLI draws progress bars, and the bars it draws itself.
//!
//! Bars are for a person watching: they are drawn only when both stdout and stderr are
//! terminals, and never around `--json` output. The bars themselves are
//! [`warden_plugins::Progress`]'s, so clone, copy and compile look alike.

use std::io::IsTerminal;

use warden_plugins::Progress;

/// Whether progress may be drawn: not for `--json`, and only on a terminal (stdout and stderr).
pub(crate) fn shown(json: bool) -> bool {
    !json && std::io::stdout().is_terminal() && std::io::stderr().is_terminal()
}

/// The bar factory for a command's output mode.
pub(crate) fn progress(json: bool) -> Progress {
    Progress {
        quiet: !shown(json),
    }
}
