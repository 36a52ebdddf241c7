//! warden-hooks (in progress).
