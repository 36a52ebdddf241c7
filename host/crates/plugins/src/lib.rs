//! warden-plugins (in progress).
