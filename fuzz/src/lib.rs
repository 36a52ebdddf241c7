//! Fuzz targets for Warden's parsers; the bodies live in [`targets`].

pub mod targets;
