//! Validation reports.
//!
//! Every problem found while loading or validating a plugin or marketplace is a
//! [`Diagnostic`] (the vocabulary's one diagnostic type) with a [`Severity`], the file it
//! concerns and, where it applies, a 1-based line and column. Classification follows Claude
//! Code's `claude plugin validate`: schema violations (missing required fields, wrong types on
//! known fields, paths escaping the root, unknown hook handler types, duplicate marketplace
//! entries) are errors; unknown keys, naming-style problems and ignored files are warnings.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::Serialize;

pub use warden_vocab::diagnostic::{Diagnostic, Severity};

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
