//! The configuration files plugins and settings carry, as typed serde types, each read once.
//!
//! A schema type records what was written, not what a reader makes of it: a field of the wrong
//! type is kept as [`Field::Invalid`] with its value, so the plugin validator (which reports it
//! with the file's line and column) and the hook engine (which skips or defaults it) read the
//! same parse and each applies its own rule. Claude Code accepts unknown keys everywhere, so no
//! schema type refuses one; the keys as written are kept for the readers that warn about them.

pub mod features;
pub mod hooks;

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// A field where a `T` is expected: absent, a `T`, or something else (kept as written).
///
/// `null` is [`Field::Invalid`]: some readers treat it as absent, others report it.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Field<T> {
    /// The key is not there.
    #[default]
    Absent,
    /// The key holds a `T`.
    Valid(T),
    /// The key holds something else.
    Invalid(Value),
}

impl<T> Field<T> {
    /// The value when it has the expected type.
    pub fn valid(&self) -> Option<&T> {
        match self {
            Field::Valid(t) => Some(t),
            _ => None,
        }
    }

    /// Whether the key is written at all (whatever its value).
    pub fn is_present(&self) -> bool {
        !matches!(self, Field::Absent)
    }

    /// Whether the key is absent or `null`, the two forms Claude Code treats alike for optional
    /// fields.
    pub fn is_unset(&self) -> bool {
        matches!(self, Field::Absent | Field::Invalid(Value::Null))
    }

    /// The value as written when it is not a `T` (`null` included).
    pub fn invalid(&self) -> Option<&Value> {
        match self {
            Field::Invalid(v) => Some(v),
            _ => None,
        }
    }
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for Field<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        Ok(match T::deserialize(&v) {
            Ok(t) => Field::Valid(t),
            Err(_) => Field::Invalid(v),
        })
    }
}
