//! Permissions enforced at the capability boundary.
