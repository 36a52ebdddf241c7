//! Colour for what the commands print: decisions (allow green, deny red, ask yellow), errors
//! and warnings.
//!
//! Text is styled with `anstyle` and written through `anstream`, as clap and cargo do: the
//! escape codes are dropped unless the stream is a terminal, `NO_COLOR` turns them off and
//! `CLICOLOR_FORCE` turns them on even in a pipe. Use [`println!`] and [`eprintln!`] from
//! this module (re-exported from `anstream`) for styled text.

use std::fmt::Display;

use anstyle::{AnsiColor, Style};

pub(crate) use anstream::{eprintln, println};

const ALLOW: Style = AnsiColor::Green.on_default().bold();
const DENY: Style = AnsiColor::Red.on_default().bold();
const ASK: Style = AnsiColor::Yellow.on_default().bold();
const ERROR: Style = AnsiColor::Red.on_default().bold();
const WARNING: Style = AnsiColor::Yellow.on_default().bold();
const DIM: Style = Style::new().dimmed();

fn paint(style: Style, text: impl Display) -> String {
    format!("{style}{text}{style:#}")
}

/// A decision word (`allow`, `deny`, `ask`, or a step's answer such as `ok`), coloured by
/// what it means; anything else is left plain.
pub(crate) fn decision(word: impl Display) -> String {
    let w = word.to_string();
    match w.as_str() {
        "allow" | "ok" | "allow once" | "allow always" => paint(ALLOW, w),
        "deny" | "denied" | "invalid" | "block" | "failed" | "error" => paint(DENY, w),
        "ask" => paint(ASK, w),
        _ => w,
    }
}

/// `decision(word)` padded to `width` columns (the padding outside the colour, so columns
/// line up whether or not escapes are kept).
pub(crate) fn decision_padded(word: impl Display, width: usize) -> String {
    let w = word.to_string();
    let pad = width.saturating_sub(w.chars().count());
    format!("{}{}", decision(&w), " ".repeat(pad))
}

/// The `error` label (or any text styled as one).
pub(crate) fn error(text: impl Display) -> String {
    paint(ERROR, text)
}

/// The `warning` label.
pub(crate) fn warning(text: impl Display) -> String {
    paint(WARNING, text)
}

/// Secondary text (sources, timings).
pub(crate) fn dim(text: impl Display) -> String {
    paint(DIM, text)
}

/// Prints `warning: MSG` on stderr.
pub(crate) fn warn(msg: impl Display) {
    eprintln!("{}: {msg}", warning("warning"));
}
