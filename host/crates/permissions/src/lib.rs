//! warden-permissions (in progress).
