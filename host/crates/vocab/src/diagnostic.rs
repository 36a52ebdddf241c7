//! The one diagnostic type: a problem found in a file, with its [`Severity`] and, where one
//! applies, a 1-based line and column.
//!
//! Plugin and marketplace validation, and the instruction layer (memory files, skills,
//! agents) report every problem as a [`Diagnostic`]. Classification of plugin problems follows
//! Claude Code's `claude plugin validate`: schema violations are errors; unknown keys,
//! naming-style problems and ignored files are warnings. The instruction layer never stops on
//! bad input, so everything it reports is a warning.

use std::fmt;
use std::path::PathBuf;

use serde::Serialize;

/// How serious a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The input keeps working (or is skipped without stopping the rest); `--strict` turns
    /// plugin warnings into errors.
    Warning,
    /// The file or component is rejected.
    Error,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Warning => "warning",
            Severity::Error => "error",
        })
    }
}

/// One problem, with its location.
///
/// Displayed as `severity: file[:line[:column]]: message`; [`Diagnostic::located`] leaves the
/// severity out, for a list whose heading already says it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    /// Error or warning.
    pub severity: Severity,
    /// The file concerned (or, for a problem that has none, what it came from: `plugins`,
    /// `settings`, `MCP`).
    pub file: PathBuf,
    /// 1-based line, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    /// 1-based column, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<usize>,
    /// What is wrong and what to do about it (or what was done about it).
    pub message: String,
}

impl Diagnostic {
    /// An error about `file`.
    pub fn error(file: impl Into<PathBuf>, message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Error,
            file: file.into(),
            line: None,
            column: None,
            message: message.into(),
        }
    }

    /// A warning about `file`.
    pub fn warning(file: impl Into<PathBuf>, message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Warning,
            file: file.into(),
            line: None,
            column: None,
            message: message.into(),
        }
    }

    /// A warning about one line of `file`.
    pub fn warning_at(file: impl Into<PathBuf>, line: usize, message: impl Into<String>) -> Self {
        Diagnostic {
            line: Some(line),
            ..Diagnostic::warning(file, message)
        }
    }

    /// Sets the position (line, column).
    pub fn at(mut self, pos: Option<(usize, usize)>) -> Self {
        if let Some((l, c)) = pos {
            self.line = Some(l);
            self.column = Some(c);
        }
        self
    }

    /// Whether this is an error.
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// `file[:line[:column]]: message`, without the severity.
    pub fn located(&self) -> Located<'_> {
        Located(self)
    }
}

/// A [`Diagnostic`] displayed without its severity; see [`Diagnostic::located`].
#[derive(Debug, Clone, Copy)]
pub struct Located<'a>(&'a Diagnostic);

impl fmt::Display for Located<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = self.0;
        write!(f, "{}", d.file.display())?;
        if let Some(l) = d.line {
            write!(f, ":{l}")?;
            if let Some(c) = d.column {
                write!(f, ":{c}")?;
            }
        }
        write!(f, ": {}", d.message)
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.severity, self.located())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names_the_severity_file_and_position_when_known() {
        let d = Diagnostic::error("a/plugin.json", "bad").at(Some((3, 7)));
        assert_eq!(d.to_string(), "error: a/plugin.json:3:7: bad");
        assert_eq!(d.located().to_string(), "a/plugin.json:3:7: bad");
        let w = Diagnostic::warning_at("CLAUDE.md", 4, "skipped");
        assert_eq!(w.to_string(), "warning: CLAUDE.md:4: skipped");
        assert_eq!(Diagnostic::warning("x", "m").located().to_string(), "x: m");
        assert!(d.is_error() && !w.is_error());
    }
}
