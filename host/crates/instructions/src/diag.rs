//! Warnings: everything that was skipped, refused or read leniently, naming the file.

use std::fmt;
use std::path::{Path, PathBuf};

/// One problem found while loading instructions. Loading never stops on bad input; the file or
/// value concerned is skipped (or read leniently) and a warning records why.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Warning {
    /// The file the warning is about.
    pub file: PathBuf,
    /// 1-based line, where one applies.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    /// What happened and what was done about it.
    pub message: String,
}

impl Warning {
    /// A warning about a whole file.
    pub fn new(file: &Path, message: impl Into<String>) -> Self {
        Warning {
            file: file.to_path_buf(),
            line: None,
            message: message.into(),
        }
    }

    /// A warning about one line of a file.
    pub fn at(file: &Path, line: usize, message: impl Into<String>) -> Self {
        Warning {
            file: file.to_path_buf(),
            line: Some(line),
            message: message.into(),
        }
    }
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(l) => write!(f, "{}:{l}: {}", self.file.display(), self.message),
            None => write!(f, "{}: {}", self.file.display(), self.message),
        }
    }
}
