//! Errors of publishing, pulling and verifying.

use std::path::PathBuf;

/// What went wrong, naming the file, reference or blob and the reason.
#[derive(Debug, thiserror::Error)]
pub enum DistError {
    /// A key file that cannot be read, written or parsed.
    #[error("{}: {reason}", path.display())]
    Key {
        /// The key file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// A settings file whose signature policy is unusable.
    #[error("{}: {reason}", path.display())]
    Policy {
        /// The settings file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// A reference that is not `HOST[:PORT]/REPO[:TAG][@DIGEST]`.
    #[error("`{reference}`: {reason}")]
    Reference {
        /// As given.
        reference: String,
        /// Why.
        reason: String,
    },
    /// The registry refused, failed or could not be reached.
    #[error("{reference}: {reason}")]
    Registry {
        /// The artifact.
        reference: String,
        /// What the registry or client said.
        reason: String,
    },
    /// The registry served something that is not what was asked for: a digest that does not
    /// match, an oversized or malformed manifest or blob, an unexpected media type.
    #[error("{reference}: {reason}; nothing was unpacked")]
    Hostile {
        /// The artifact.
        reference: String,
        /// What was wrong.
        reason: String,
    },
    /// A signature missing, invalid, or by a key the policy does not trust.
    #[error("{reference}: {reason}; nothing was unpacked")]
    Signature {
        /// The artifact.
        reference: String,
        /// Why it is refused.
        reason: String,
    },
    /// A plugin directory that cannot be packed.
    #[error("{}: {reason}", path.display())]
    Pack {
        /// The file or directory.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// Reading or writing a local file.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

/// Maps an I/O error to [`DistError::Io`] for `path`.
pub(crate) fn io(path: &std::path::Path) -> impl FnOnce(std::io::Error) -> DistError + '_ {
    move |source| DistError::Io {
        path: path.to_path_buf(),
        source,
    }
}
