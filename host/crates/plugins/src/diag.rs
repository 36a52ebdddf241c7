//! Diagnostics and validation reports.
//!
//! Every problem found while loading or validating a plugin or marketplace is a [`Diagnostic`]
//! with a [`Severity`], the file it concerns and, where it applies, a 1-based line and column.
//! Classification follows Claude Code's `claude plugin validate`: schema violations (missing
//! required fields, wrong types on known fields, paths escaping the root, unknown hook handler
//! types, duplicate marketplace entries) are errors; unknown keys, naming-style problems and
//! ignored files are warnings.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::Serialize;

/// How serious a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The plugin keeps working; `--strict` turns these into errors.
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    /// Error or warning.
    pub severity: Severity,
    /// The file concerned.
    pub file: PathBuf,
    /// 1-based line, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    /// 1-based column, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<usize>,
    /// What is wrong and what to do about it.
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

    /// Sets the position.
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
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.severity, self.file.display())?;
        if let Some(l) = self.line {
            write!(f, ":{l}")?;
            if let Some(c) = self.column {
                write!(f, ":{c}")?;
            }
        }
        write!(f, ": {}", self.message)
    }
}

/// What a [`Report`] was made for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ReportKind {
    /// A plugin directory.
    Plugin,
    /// A marketplace directory (`.claude-plugin/marketplace.json`).
    Marketplace,
}

/// The result of [`crate::validate()`]: every diagnostic for one directory.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// The directory validated.
    pub path: PathBuf,
    /// Plugin or marketplace.
    pub kind: ReportKind,
    /// Whether at least one error was found (the CLI exits 1 when true).
    pub has_errors: bool,
    /// Number of errors.
    pub error_count: usize,
    /// Number of warnings.
    pub warning_count: usize,
    /// All diagnostics, errors first, then by file and position.
    pub diagnostics: Vec<Diagnostic>,
}

impl Report {
    /// Builds a report, sorting and counting the diagnostics.
    pub fn new(path: &Path, kind: ReportKind, mut diagnostics: Vec<Diagnostic>) -> Self {
        diagnostics.sort_by(|a, b| {
            b.severity
                .cmp(&a.severity)
                .then_with(|| a.file.cmp(&b.file))
                .then_with(|| a.line.cmp(&b.line))
        });
        diagnostics.dedup();
        let error_count = diagnostics.iter().filter(|d| d.is_error()).count();
        let warning_count = diagnostics.len() - error_count;
        Report {
            path: path.to_path_buf(),
            kind,
            has_errors: error_count > 0,
            error_count,
            warning_count,
            diagnostics,
        }
    }

    /// Whether the report fails: errors, or with `strict` any warning (`claude plugin validate --strict`).
    pub fn fails(&self, strict: bool) -> bool {
        self.has_errors || (strict && self.warning_count > 0)
    }

    /// The errors.
    pub fn errors(&self) -> impl Iterator<Item = &Diagnostic> {
        self.diagnostics.iter().filter(|d| d.is_error())
    }

    /// The warnings.
    pub fn warnings(&self) -> impl Iterator<Item = &Diagnostic> {
        self.diagnostics.iter().filter(|d| !d.is_error())
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.kind {
            ReportKind::Plugin => "plugin",
            ReportKind::Marketplace => "marketplace",
        };
        for d in &self.diagnostics {
            writeln!(f, "{d}")?;
        }
        if self.has_errors {
            write!(
                f,
                "✘ Validation failed for {kind} {}: {} error(s), {} warning(s)",
                self.path.display(),
                self.error_count,
                self.warning_count
            )
        } else {
            write!(
                f,
                "✔ Validation passed for {kind} {} ({} warning(s))",
                self.path.display(),
                self.warning_count
            )
        }
    }
}
