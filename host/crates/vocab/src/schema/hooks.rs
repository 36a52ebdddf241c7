//! Hooks configuration as written (spec 1.1): a plugin's `hooks/hooks.json`, the inline `hooks`
//! of `plugin.json`, the hooks of `warden.toml`, a settings file's `hooks` and a skill's or
//! agent's frontmatter `hooks`.
//!
//! [`HooksDocument`] is a whole hooks file, wrapped (`{"description"?, "hooks": {...}}`) or bare
//! (`{"PreToolUse": [...]}`); [`EventMap`] is the object of event names both forms hold. Every
//! level keeps what it could not type (a group that is not an object, a field of the wrong type)
//! instead of failing the file, because Claude Code loads the rest of a file around a bad entry.

use serde::Deserialize;
use serde_json::{Map, Value};

use super::Field;
use crate::event::Event;

/// Keys that may sit next to event names in a bare hooks document without being events.
pub const META_KEYS: &[&str] = &["description", "$schema"];

/// A hooks file's top level.
#[derive(Debug, Clone, PartialEq)]
pub enum HooksDocument {
    /// `{"hooks": {...}}`, with the top-level keys other than `hooks`, `description` and
    /// `$schema` in the order written.
    Wrapped {
        /// The events.
        events: EventMap,
        /// The other top-level keys.
        extra_keys: Vec<String>,
    },
    /// The top-level keys are the event names.
    Bare(EventMap),
    /// A `hooks` key holding something other than an object.
    HooksNotObject(Value),
    /// The document is not an object (an array, a string, ...).
    NotObject(Value),
}

impl HooksDocument {
    /// Reads a document: it is wrapped when it has a `hooks` key.
    pub fn from_value(value: &Value) -> Self {
        let Value::Object(top) = value else {
            return HooksDocument::NotObject(value.clone());
        };
        match top.get("hooks") {
            Some(Value::Object(inner)) => HooksDocument::Wrapped {
                events: EventMap::from_object(inner),
                extra_keys: top
                    .keys()
                    .filter(|k| !matches!(k.as_str(), "hooks" | "description" | "$schema"))
                    .cloned()
                    .collect(),
            },
            Some(other) => HooksDocument::HooksNotObject(other.clone()),
            None => HooksDocument::Bare(EventMap::from_object(top)),
        }
    }

    /// The events, when the document has an object of them.
    pub fn events(&self) -> Option<&EventMap> {
        match self {
            HooksDocument::Wrapped { events, .. } | HooksDocument::Bare(events) => Some(events),
            _ => None,
        }
    }
}

/// An object of event name → matcher groups, in the order written, without [`META_KEYS`].
#[derive(Debug, Clone, PartialEq, Default)]
pub struct EventMap(pub Vec<EventEntry>);

impl EventMap {
    /// Reads the value of a `hooks` key; `None` when it is not an object.
    pub fn from_value(value: &Value) -> Option<Self> {
        value.as_object().map(Self::from_object)
    }

    fn from_object(map: &Map<String, Value>) -> Self {
        EventMap(
            map.iter()
                .filter(|(name, _)| !META_KEYS.contains(&name.as_str()))
                .map(|(name, groups)| EventEntry {
                    name: name.clone(),
                    event: name.parse().ok(),
                    groups: match groups {
                        Value::Array(a) => Ok(a.iter().map(MatcherGroup::from_value).collect()),
                        other => Err(other.clone()),
                    },
                })
                .collect(),
        )
    }
}

/// One event's entry.
#[derive(Debug, Clone, PartialEq)]
pub struct EventEntry {
    /// The key as written.
    pub name: String,
    /// The event it names (`None`: not an event Claude Code knows; names are case-sensitive).
    pub event: Option<Event>,
    /// Its matcher groups, or the value when it is not an array.
    pub groups: Result<Vec<Result<MatcherGroup, Value>>, Value>,
}

/// One matcher group: `{"matcher"?: "...", "hooks": [...]}`.
#[derive(Debug, Clone, PartialEq)]
pub struct MatcherGroup {
    /// Every key as written, in order.
    pub keys: Vec<String>,
    /// The matcher.
    pub matcher: Field<String>,
    /// The handlers, each a [`HandlerSpec`] or the value when it is not an object; `None`
    /// when `hooks` is missing or not an array.
    pub hooks: Option<Vec<Result<HandlerSpec, Value>>>,
    /// The group as written.
    pub raw: Map<String, Value>,
}

impl MatcherGroup {
    /// Reads a group; `Err` holds a group that is not an object.
    pub fn from_value(value: &Value) -> Result<Self, Value> {
        let Value::Object(g) = value else {
            return Err(value.clone());
        };
        Ok(MatcherGroup {
            keys: g.keys().cloned().collect(),
            matcher: field(g, "matcher"),
            hooks: g
                .get("hooks")
                .and_then(Value::as_array)
                .map(|hs| hs.iter().map(HandlerSpec::from_value).collect()),
            raw: g.clone(),
        })
    }
}

/// One handler as written. Which fields a handler type reads is up to the reader; every field
/// any type reads is here, and [`HandlerSpec::keys`] lists what was written.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(default)]
pub struct HandlerSpec {
    /// `type`.
    #[serde(rename = "type")]
    pub kind: Field<String>,
    /// `if`: a permission-rule filter (tool events only).
    #[serde(rename = "if")]
    pub if_rule: Field<String>,
    /// `timeout`, in seconds.
    pub timeout: Field<f64>,
    /// `statusMessage`.
    #[serde(rename = "statusMessage")]
    pub status_message: Field<String>,
    /// `once`.
    pub once: Field<bool>,
    /// `onFailure`.
    #[serde(rename = "onFailure")]
    pub on_failure: Field<String>,
    /// `command` (command).
    pub command: Field<String>,
    /// `args` (command, exec form).
    pub args: Field<Vec<String>>,
    /// `async` (command).
    #[serde(rename = "async")]
    pub is_async: Field<bool>,
    /// `asyncRewake` (command).
    #[serde(rename = "asyncRewake")]
    pub async_rewake: Field<bool>,
    /// `shell` (command).
    pub shell: Field<String>,
    /// `url` (http).
    pub url: Field<String>,
    /// `headers` (http).
    pub headers: Field<Map<String, Value>>,
    /// `allowedEnvVars` (http).
    #[serde(rename = "allowedEnvVars")]
    pub allowed_env_vars: Field<Vec<Value>>,
    /// `server` (mcp_tool).
    pub server: Field<String>,
    /// `tool` (mcp_tool).
    pub tool: Field<String>,
    /// `input` (mcp_tool).
    pub input: Field<Map<String, Value>>,
    /// `prompt` (prompt, agent).
    pub prompt: Field<String>,
    /// `model` (prompt, agent).
    pub model: Field<String>,
    /// `continueOnBlock` (prompt).
    #[serde(rename = "continueOnBlock")]
    pub continue_on_block: Field<bool>,
    /// `component` (wasm).
    pub component: Field<String>,
    /// Every key as written, in order.
    #[serde(skip)]
    pub keys: Vec<String>,
    /// The handler object as written: the identity of a settings handler.
    #[serde(skip)]
    pub raw: Value,
}

impl HandlerSpec {
    /// Reads a handler; `Err` holds a handler that is not an object.
    pub fn from_value(value: &Value) -> Result<Self, Value> {
        let Value::Object(obj) = value else {
            return Err(value.clone());
        };
        // Every field is a `Field`, which takes any value, so an object always reads.
        let mut spec = HandlerSpec::deserialize(value).unwrap_or_default();
        spec.keys = obj.keys().cloned().collect();
        spec.raw = value.clone();
        Ok(spec)
    }

    /// `type` as written, when it is a string.
    pub fn kind_str(&self) -> Option<&str> {
        self.kind.valid().map(String::as_str)
    }
}

fn field<T: serde::de::DeserializeOwned>(obj: &Map<String, Value>, key: &str) -> Field<T> {
    match obj.get(key) {
        None => Field::Absent,
        Some(v) => match T::deserialize(v) {
            Ok(t) => Field::Valid(t),
            Err(_) => Field::Invalid(v.clone()),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn wrapped_bare_and_broken_tops() {
        let w = HooksDocument::from_value(
            &json!({"description": "d", "version": 1, "hooks": {"Stop": [], "$schema": "x"}}),
        );
        let HooksDocument::Wrapped { events, extra_keys } = &w else {
            panic!("{w:?}")
        };
        assert_eq!(extra_keys, &["version"]);
        assert_eq!(events.0.len(), 1);
        assert_eq!(events.0[0].event, Some(Event::Stop));
        let b = HooksDocument::from_value(&json!({"description": "d", "stop": {}}));
        let events = b.events().expect("bare");
        assert_eq!(events.0[0].event, None, "names are case-sensitive");
        assert_eq!(events.0[0].groups, Err(json!({})));
        assert!(matches!(
            HooksDocument::from_value(&json!({"hooks": []})),
            HooksDocument::HooksNotObject(_)
        ));
        assert!(matches!(
            HooksDocument::from_value(&json!([])),
            HooksDocument::NotObject(_)
        ));
    }

    #[test]
    fn fields_of_the_wrong_type_are_kept_as_written() {
        let g = MatcherGroup::from_value(&json!({"matcher": 3, "id": 1, "hooks": [
            {"type": "command", "command": "x", "timeout": "5", "args": ["a", 1], "once": null},
            "not a handler"
        ]}))
        .expect("object");
        assert_eq!(g.keys, ["matcher", "id", "hooks"]);
        assert_eq!(g.matcher, Field::Invalid(json!(3)));
        let hooks = g.hooks.expect("array");
        let h = hooks[0].as_ref().expect("handler");
        assert_eq!(h.kind_str(), Some("command"));
        assert_eq!(h.timeout, Field::Invalid(json!("5")));
        assert_eq!(h.args, Field::Invalid(json!(["a", 1])));
        assert!(h.once.is_unset() && h.once.is_present());
        assert!(!h.url.is_present());
        assert_eq!(h.keys, ["type", "command", "timeout", "args", "once"]);
        assert_eq!(hooks[1], Err(json!("not a handler")));
    }
}
