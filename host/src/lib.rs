//! Warden.
