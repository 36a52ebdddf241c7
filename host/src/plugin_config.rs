//! A plugin's `userConfig` values, as Claude Code keeps and hands them out.
//!
//! `warden plugin enable NAME --config KEY=VALUE` checks each value against the option the
//! plugin's `plugin.json` declares (its `type`, `min`/`max`, `multiple`) and stores it:
//! non-sensitive values at `pluginConfigs[<id>].options` in the user settings file, sensitive
//! ones in [`SECRETS_FILE`], a file of Warden's home only its owner can read (0600), never in a
//! settings file and never printed. A required option with no value and no default is an
//! error naming the keys, since nobody can be asked for them there.
//!
//! A session reads the values only from files the user controls: managed settings over
//! `--settings` over user settings, then the private file, then the option's `default`, as
//! Claude Code reads them. Project and local settings (a repository's files) cannot set them.
//! They reach hooks as `CLAUDE_PLUGIN_OPTION_<KEY>` and exec-form `${user_config.KEY}`, and MCP
//! and LSP configs as `${user_config.KEY}`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use warden_config::{Home, Scope, Settings};
use warden_plugins::manifest::UserConfigOption;

/// The file of Warden's home that holds sensitive `userConfig` values: `{"<plugin id>":
/// {"KEY": value}}`, mode 0600.
pub const SECRETS_FILE: &str = "plugin-secrets.json";

/// Why values could not be stored.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// `--config` without `=`.
    #[error("--config {0}: expected KEY=VALUE")]
    Malformed(String),
    /// A key the plugin does not declare.
    #[error("--config {key}: {plugin} has no userConfig option `{key}` (it has: {known})")]
    Unknown {
        /// The plugin.
        plugin: String,
        /// The key given.
        key: String,
        /// The keys it declares.
        known: String,
    },
    /// A value of the wrong type or out of range.
    #[error("--config {key}: {reason}")]
    Invalid {
        /// The key.
        key: String,
        /// What is wrong.
        reason: String,
    },
    /// Required options left without a value.
    #[error(
        "{plugin} needs a value for {}: pass --config KEY=VALUE for each (there is no one to ask here)",
        .keys.join(", ")
    )]
    Missing {
        /// The plugin.
        plugin: String,
        /// The keys without a value.
        keys: Vec<String>,
    },
    /// A file could not be read or written.
    #[error("{}: {source}", .path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// A file is not the JSON object it should be.
    #[error("{}: {reason}", .path.display())]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
}

/// What [`configure`] stored: the keys, never the sensitive values.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Configured {
    /// Keys written to the user settings file.
    pub settings: Vec<String>,
    /// Keys written to the private file.
    pub sensitive: Vec<String>,
}

/// `KEY=VALUE` arguments parsed against the options `schema` declares, stored for `plugin`
/// (its full id); required options without a value (given now, stored before, or a default)
/// are an error and nothing is written.
pub fn configure(
    home: &Home,
    plugin: &str,
    schema: &BTreeMap<String, UserConfigOption>,
    given: &[String],
) -> Result<Configured, ConfigError> {
    let mut values: BTreeMap<String, Value> = BTreeMap::new();
    for arg in given {
        let (key, raw) = arg
            .split_once('=')
            .ok_or_else(|| ConfigError::Malformed(arg.clone()))?;
        let option = schema.get(key).ok_or_else(|| ConfigError::Unknown {
            plugin: plugin.to_string(),
            key: key.to_string(),
            known: if schema.is_empty() {
                "none".to_string()
            } else {
                schema.keys().cloned().collect::<Vec<_>>().join(", ")
            },
        })?;
        let value = typed(key, option, raw)?;
        match (values.get_mut(key), option.multiple) {
            // A repeated key of a `multiple` option adds to the list.
            (Some(Value::Array(list)), true) => {
                if let Value::Array(more) = value {
                    list.extend(more);
                }
            }
            _ => {
                values.insert(key.to_string(), value);
            }
        }
    }
    let settings_path = home.user_settings();
    let mut settings = read_object(&settings_path)?;
    let secrets_path = secrets_file(home);
    let mut secrets = read_object(&secrets_path)?;
    let stored = |m: &Map<String, Value>, key: &str, in_settings: bool| -> bool {
        let entry = if in_settings {
            m.get("pluginConfigs")
                .and_then(|c| c.get(plugin))
                .and_then(|c| c.get("options"))
        } else {
            m.get(plugin)
        };
        entry.and_then(|o| o.get(key)).is_some()
    };
    let missing: Vec<String> = schema
        .iter()
        .filter(|(k, o)| {
            o.required
                && o.default.is_none()
                && !values.contains_key(*k)
                && !stored(&settings, k, true)
                && !stored(&secrets, k, false)
        })
        .map(|(k, _)| k.clone())
        .collect();
    if !missing.is_empty() {
        return Err(ConfigError::Missing {
            plugin: plugin.to_string(),
            keys: missing,
        });
    }
    let mut done = Configured::default();
    for (key, value) in values {
        let sensitive = schema.get(&key).is_some_and(|o| o.sensitive);
        if sensitive {
            object_at(&mut secrets, &[plugin]).insert(key.clone(), value);
            // A value once stored in the settings file does not linger there.
            object_at(&mut settings, &["pluginConfigs", plugin, "options"]).remove(&key);
            done.sensitive.push(key);
        } else {
            object_at(&mut settings, &["pluginConfigs", plugin, "options"])
                .insert(key.clone(), value);
            done.settings.push(key);
        }
    }
    if !done.sensitive.is_empty() {
        write_object(&secrets_path, &secrets)?;
    }
    if !done.settings.is_empty() || !done.sensitive.is_empty() {
        write_object(&settings_path, &settings)?;
    }
    Ok(done)
}

/// The values a session hands `plugin`'s programs: managed over `--settings` over user
/// settings, then the private file, then each declared option's `default`. Project and local
/// settings are not read.
pub fn options(
    settings: &Settings,
    home: &Home,
    plugin: &str,
    schema: &BTreeMap<String, UserConfigOption>,
) -> Map<String, Value> {
    let mut out = Map::new();
    let rank = |s: Scope| match s {
        Scope::Managed => 0,
        Scope::Cli => 1,
        _ => 2,
    };
    let mut files: Vec<_> = settings
        .files
        .iter()
        .filter(|f| matches!(f.scope, Scope::User | Scope::Managed | Scope::Cli))
        .collect();
    files.sort_by_key(|f| rank(f.scope));
    for f in files {
        if let Some(Value::Object(o)) = f
            .value
            .get("pluginConfigs")
            .and_then(|c| c.get(plugin))
            .and_then(|c| c.get("options"))
        {
            for (k, v) in o {
                out.entry(k.clone()).or_insert_with(|| v.clone());
            }
        }
    }
    // An unreadable private file hands out no secrets rather than failing the session.
    if let Ok(secrets) = read_object(&secrets_file(home))
        && let Some(Value::Object(o)) = secrets.get(plugin)
    {
        for (k, v) in o {
            out.entry(k.clone()).or_insert_with(|| v.clone());
        }
    }
    for (k, o) in schema {
        if let Some(d) = &o.default {
            out.entry(k.clone()).or_insert_with(|| d.clone());
        }
    }
    out
}

/// A value as a string, as `CLAUDE_PLUGIN_OPTION_<KEY>` and `${user_config.KEY}` give it:
/// strings as they are, lists joined with `,`, numbers and booleans as JSON writes them.
pub fn option_string(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(a) => a.iter().map(option_string).collect::<Vec<_>>().join(","),
        other => other.to_string(),
    }
}

/// [`SECRETS_FILE`] in `home`.
pub fn secrets_file(home: &Home) -> PathBuf {
    home.root().join(SECRETS_FILE)
}

fn typed(key: &str, option: &UserConfigOption, raw: &str) -> Result<Value, ConfigError> {
    let invalid = |reason: String| ConfigError::Invalid {
        key: key.to_string(),
        reason,
    };
    match option.kind.as_str() {
        "number" => {
            let n: f64 = raw
                .trim()
                .parse()
                .map_err(|_| invalid(format!("`{raw}` is not a number")))?;
            if option.min.is_some_and(|m| n < m) || option.max.is_some_and(|m| n > m) {
                return Err(invalid(format!(
                    "{n} is outside {}..{}",
                    option.min.map_or("".into(), |m| m.to_string()),
                    option.max.map_or("".into(), |m| m.to_string())
                )));
            }
            serde_json::Number::from_f64(n)
                .map(|n| match n.as_f64() {
                    Some(f) if f.fract() == 0.0 && f.abs() < 9e15 => Value::from(f as i64),
                    _ => Value::Number(n),
                })
                .ok_or_else(|| invalid(format!("`{raw}` is not a finite number")))
        }
        "boolean" => match raw.trim() {
            "true" => Ok(Value::Bool(true)),
            "false" => Ok(Value::Bool(false)),
            _ => Err(invalid(format!("`{raw}` is not true or false"))),
        },
        _ if option.multiple => Ok(Value::Array(vec![Value::String(raw.to_string())])),
        _ => Ok(Value::String(raw.to_string())),
    }
}

fn read_object(path: &Path) -> Result<Map<String, Value>, ConfigError> {
    match std::fs::read_to_string(path) {
        Ok(text) if text.trim().is_empty() => Ok(Map::new()),
        Ok(text) => match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(o)) => Ok(o),
            Ok(_) => Err(ConfigError::Corrupt {
                path: path.to_path_buf(),
                reason: "not a JSON object".into(),
            }),
            Err(e) => Err(ConfigError::Corrupt {
                path: path.to_path_buf(),
                reason: format!("line {} column {}: {e}", e.line(), e.column()),
            }),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Map::new()),
        Err(source) => Err(ConfigError::Io {
            path: path.to_path_buf(),
            source,
        }),
    }
}

fn write_object(path: &Path, value: &Map<String, Value>) -> Result<(), ConfigError> {
    let io = |source| ConfigError::Io {
        path: path.to_path_buf(),
        source,
    };
    if let Some(dir) = path.parent() {
        warden_vocab::fs::create_private_dir(dir).map_err(io)?;
    }
    let mut text = serde_json::to_string_pretty(value).unwrap_or_default();
    text.push('\n');
    // Owner-only (0600), whichever file: the settings file holds nothing secret, but a
    // user's settings have no reason to be readable by others either.
    warden_vocab::fs::write_atomic(path, text.as_bytes()).map_err(io)
}

/// The object at `path` inside `root`, created (or replacing a non-object) on the way.
fn object_at<'a>(root: &'a mut Map<String, Value>, path: &[&str]) -> &'a mut Map<String, Value> {
    let mut at = root;
    for key in path {
        let slot = at
            .entry(key.to_string())
            .or_insert_with(|| Value::Object(Map::new()));
        if !slot.is_object() {
            *slot = Value::Object(Map::new());
        }
        at = match slot {
            Value::Object(o) => o,
            _ => unreachable!("made an object just above"),
        };
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    fn option(kind: &str, sensitive: bool, required: bool) -> UserConfigOption {
        UserConfigOption {
            kind: kind.into(),
            title: "T".into(),
            description: "D".into(),
            sensitive,
            required,
            default: None,
            multiple: false,
            min: Some(1.0),
            max: Some(10.0),
        }
    }

    fn schema() -> BTreeMap<String, UserConfigOption> {
        BTreeMap::from([
            ("api_url".to_string(), option("string", false, true)),
            ("token".to_string(), option("string", true, true)),
            ("level".to_string(), option("number", false, false)),
        ])
    }

    #[test]
    fn sensitive_values_go_to_the_private_file_and_the_rest_to_user_settings() {
        let tmp = tempfile::tempdir().expect("tmp");
        let home = Home::new(tmp.path().join("home"));
        let done = configure(
            &home,
            "p@m",
            &schema(),
            &[
                "api_url=https://x".into(),
                "token=s3cr3t".into(),
                "level=3".into(),
            ],
        )
        .expect("configured");
        assert_eq!(done.sensitive, ["token"]);
        let settings = std::fs::read_to_string(home.user_settings()).expect("settings");
        assert!(!settings.contains("s3cr3t"), "{settings}");
        let v: Value = serde_json::from_str(&settings).expect("json");
        assert_eq!(
            v["pluginConfigs"]["p@m"]["options"],
            serde_json::json!({"api_url": "https://x", "level": 3})
        );
        let secrets = secrets_file(&home);
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&secrets)
            .expect("secrets")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        assert!(
            std::fs::read_to_string(&secrets)
                .expect("read")
                .contains("s3cr3t")
        );
    }

    #[test]
    fn missing_required_keys_are_named_and_nothing_is_written() {
        let tmp = tempfile::tempdir().expect("tmp");
        let home = Home::new(tmp.path().join("home"));
        let e = configure(&home, "p@m", &schema(), &["level=2".into()]).expect_err("missing");
        assert!(e.to_string().contains("api_url, token"), "{e}");
        assert!(!home.user_settings().exists());
        // Stored once, a required value need not be given again.
        configure(
            &home,
            "p@m",
            &schema(),
            &["api_url=a".into(), "token=t".into()],
        )
        .expect("configured");
        configure(&home, "p@m", &schema(), &["level=4".into()]).expect("the rest is stored");
    }

    #[test]
    fn values_are_checked_against_the_declared_option() {
        let tmp = tempfile::tempdir().expect("tmp");
        let home = Home::new(tmp.path().join("home"));
        let s = schema();
        let args = |a: &str| {
            vec![
                "api_url=a".to_string(),
                "token=t".to_string(),
                a.to_string(),
            ]
        };
        for (bad, why) in [
            ("level=lots", "not a number"),
            ("level=11", "outside"),
            ("colour=red", "no userConfig option `colour`"),
            ("level", "expected KEY=VALUE"),
        ] {
            let e = configure(&home, "p@m", &s, &args(bad)).expect_err(bad);
            assert!(e.to_string().contains(why), "{bad}: {e}");
        }
    }
}
