//! warden-instructions (in progress).
