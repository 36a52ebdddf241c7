//! Which signatures are required and which keys are trusted, from the user's and the managed
//! settings only.
//!
//! ```json
//! "pluginSignatures": {
//!   "requireSignatures": true,
//!   "trustedKeys": [
//!     { "publicKey": "warden-ed25519 <hex>", "for": ["registry.example.com/team"] },
//!     { "publicKey": "warden-ed25519 <hex>", "for": ["marketplace:team-tools"] },
//!     { "publicKey": "warden-ed25519 <hex>" }
//!   ]
//! }
//! ```
//!
//! A key with `for` is trusted only for artifacts under those registry prefixes (matched at a
//! path boundary) or from those marketplaces, and makes a signature by one of the keys trusted
//! there required for them. A key without `for` is trusted everywhere but requires nothing by
//! itself; `requireSignatures` requires a trusted signature everywhere. Managed settings and
//! the user's settings add up: either can require, neither can relax what the other requires.
//! A project's settings come with the repository being worked on, so they are never read here:
//! a repository cannot trust a key or turn a requirement off.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use crate::error::DistError;
use crate::keys::PublicKey;

/// The settings key.
pub const SETTINGS_KEY: &str = "pluginSignatures";

/// One trusted key.
#[derive(Debug, Clone)]
pub struct TrustedKey {
    /// The key.
    pub key: PublicKey,
    /// Registry prefixes and `marketplace:NAME`s it is trusted for; empty = everywhere.
    pub scopes: Vec<String>,
    /// The settings file that trusts it.
    pub file: PathBuf,
}

/// The policy of a user and their administrator.
#[derive(Debug, Clone, Default)]
pub struct TrustPolicy {
    /// Trusted keys.
    pub keys: Vec<TrustedKey>,
    /// Set when some file requires signatures everywhere (that file).
    pub require_everywhere: Option<PathBuf>,
}

/// What the policy says about one artifact.
#[derive(Debug, Clone)]
pub struct Requirement {
    /// Why a signature is required, when it is (`None`: optional, checked when present).
    pub required_by: Option<String>,
    /// The keys whose signature is accepted.
    pub keys: Vec<PublicKey>,
}

impl TrustPolicy {
    /// Reads `pluginSignatures` from the user settings file and the managed directory's
    /// `managed-settings.json` and `managed-settings.d/*.json`. A malformed policy is an error:
    /// guessing could drop a requirement.
    pub fn load(user_settings: &Path, managed_dir: Option<&Path>) -> Result<Self, DistError> {
        let mut files = vec![user_settings.to_path_buf()];
        if let Some(dir) = managed_dir {
            files.push(dir.join("managed-settings.json"));
            if let Ok(rd) = std::fs::read_dir(dir.join("managed-settings.d")) {
                let mut more: Vec<PathBuf> = rd
                    .filter_map(Result::ok)
                    .map(|e| e.path())
                    .filter(|p| p.extension().is_some_and(|x| x == "json"))
                    .collect();
                more.sort();
                files.extend(more);
            }
        }
        let mut policy = TrustPolicy::default();
        for f in files {
            let map = match warden_config::read_settings_file(&f) {
                Ok(Some(m)) => m,
                Ok(None) => continue,
                Err(e) => {
                    return Err(DistError::Policy {
                        path: f,
                        reason: e.to_string(),
                    });
                }
            };
            policy.add_file(&f, &map)?;
        }
        Ok(policy)
    }

    fn add_file(&mut self, file: &Path, map: &Map<String, Value>) -> Result<(), DistError> {
        let bad = |reason: String| DistError::Policy {
            path: file.to_path_buf(),
            reason,
        };
        let Some(v) = map.get(SETTINGS_KEY) else {
            return Ok(());
        };
        let Some(o) = v.as_object() else {
            return Err(bad(format!("`{SETTINGS_KEY}` must be an object")));
        };
        match o.get("requireSignatures") {
            None | Some(Value::Bool(false)) => {}
            Some(Value::Bool(true)) => {
                self.require_everywhere.get_or_insert(file.to_path_buf());
            }
            Some(_) => {
                return Err(bad(format!(
                    "`{SETTINGS_KEY}.requireSignatures` must be true or false"
                )));
            }
        }
        let keys = match o.get("trustedKeys") {
            None => return Ok(()),
            Some(Value::Array(a)) => a,
            Some(_) => {
                return Err(bad(format!(
                    "`{SETTINGS_KEY}.trustedKeys` must be an array"
                )));
            }
        };
        for (i, k) in keys.iter().enumerate() {
            let at = format!("`{SETTINGS_KEY}.trustedKeys[{i}]`");
            let text = k
                .get("publicKey")
                .and_then(Value::as_str)
                .ok_or_else(|| bad(format!("{at} needs a `publicKey` string")))?;
            let key = PublicKey::parse(text).map_err(|e| bad(format!("{at}.publicKey: {e}")))?;
            let scopes = match k.get("for") {
                None => Vec::new(),
                Some(Value::String(s)) => vec![s.clone()],
                Some(Value::Array(a)) => a
                    .iter()
                    .map(|s| {
                        s.as_str()
                            .map(str::to_string)
                            .ok_or_else(|| bad(format!("{at}.for must hold strings")))
                    })
                    .collect::<Result<_, _>>()?,
                Some(_) => return Err(bad(format!("{at}.for must be a string or an array"))),
            };
            if scopes.iter().any(|s| s.trim().is_empty()) {
                return Err(bad(format!("{at}.for holds an empty prefix")));
            }
            self.keys.push(TrustedKey {
                key,
                scopes,
                file: file.to_path_buf(),
            });
        }
        Ok(())
    }

    /// The requirement for an artifact at `reference` (`HOST/REPO`, without tag or digest)
    /// listed by `marketplace`, if any.
    pub fn requirement(&self, reference: &str, marketplace: Option<&str>) -> Requirement {
        let mut required_by = self
            .require_everywhere
            .as_ref()
            .map(|f| format!("`requireSignatures` in {}", f.display()));
        let mut keys = Vec::new();
        for k in &self.keys {
            let hit = k
                .scopes
                .iter()
                .find(|s| scope_matches(s, reference, marketplace));
            if k.scopes.is_empty() || hit.is_some() {
                keys.push(k.key.clone());
            }
            if let Some(s) = hit
                && required_by.is_none()
            {
                required_by = Some(format!(
                    "key {} is trusted for `{s}` in {}",
                    k.key.key_id(),
                    k.file.display()
                ));
            }
        }
        Requirement { required_by, keys }
    }
}

/// `marketplace:NAME` matches that marketplace; anything else is a registry prefix matching
/// `reference` itself or what lies under it at a `/` (so `host/team` does not match
/// `host/teamster`).
fn scope_matches(scope: &str, reference: &str, marketplace: Option<&str>) -> bool {
    if let Some(name) = scope.strip_prefix("marketplace:") {
        return marketplace == Some(name);
    }
    let prefix = scope.trim_end_matches('/');
    reference == prefix
        || reference
            .strip_prefix(prefix)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// `warden key trust`: adds `key` (for `scopes`, or everywhere) to `pluginSignatures.trustedKeys`
/// of the user settings file. A key already trusted there gets the new scopes added.
pub fn trust_key(
    user_settings: &Path,
    key: &PublicKey,
    scopes: &[String],
) -> Result<(), DistError> {
    let mut map = warden_config::read_settings_file(user_settings)
        .map_err(|e| DistError::Policy {
            path: user_settings.to_path_buf(),
            reason: e.to_string(),
        })?
        .unwrap_or_default();
    // Checked first, so a file whose policy is malformed is not rewritten around the problem.
    TrustPolicy::default().add_file(user_settings, &map)?;
    let sig = map.entry(SETTINGS_KEY).or_insert_with(|| json!({}));
    let Some(sig) = sig.as_object_mut() else {
        return Err(DistError::Policy {
            path: user_settings.to_path_buf(),
            reason: format!("`{SETTINGS_KEY}` must be an object"),
        });
    };
    let list = sig.entry("trustedKeys").or_insert_with(|| json!([]));
    let Some(list) = list.as_array_mut() else {
        return Err(DistError::Policy {
            path: user_settings.to_path_buf(),
            reason: format!("`{SETTINGS_KEY}.trustedKeys` must be an array"),
        });
    };
    let line = key.to_line();
    let existing = list.iter_mut().find(|k| {
        k.get("publicKey")
            .and_then(Value::as_str)
            .and_then(|t| PublicKey::parse(t).ok())
            .is_some_and(|p| p == *key)
    });
    match existing {
        Some(k) => {
            let everywhere = k.get("for").is_none();
            if scopes.is_empty() {
                if let Some(o) = k.as_object_mut() {
                    o.remove("for");
                }
            } else if !everywhere {
                let mut have: Vec<Value> = match k.get("for") {
                    Some(Value::Array(a)) => a.clone(),
                    Some(v) => vec![v.clone()],
                    None => Vec::new(),
                };
                for s in scopes {
                    if !have.iter().any(|h| h.as_str() == Some(s)) {
                        have.push(json!(s));
                    }
                }
                k["for"] = Value::Array(have);
            }
        }
        None => {
            let mut entry = json!({ "publicKey": line, "keyId": key.key_id() });
            if !scopes.is_empty() {
                entry["for"] = json!(scopes);
            }
            list.push(entry);
        }
    }
    write_json_atomic(user_settings, &Value::Object(map))
}

fn write_json_atomic(path: &Path, v: &Value) -> Result<(), DistError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(crate::error::io(dir))?;
    let text = serde_json::to_string_pretty(v).unwrap_or_default() + "\n";
    let tmp = tempfile::NamedTempFile::new_in(dir).map_err(crate::error::io(dir))?;
    std::fs::write(tmp.path(), text).map_err(crate::error::io(tmp.path()))?;
    tmp.persist(path).map_err(|e| DistError::Io {
        path: path.to_path_buf(),
        source: e.error,
    })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::SecretKey;

    #[test]
    fn prefixes_marketplaces_and_requirements() {
        let dir = tempfile::tempdir().unwrap();
        let user = dir.path().join("settings.json");
        let a = SecretKey::generate().unwrap().public();
        let b = SecretKey::generate().unwrap().public();
        trust_key(&user, &a, &["reg.example:5000/team".into()]).unwrap();
        trust_key(&user, &b, &[]).unwrap();
        let p = TrustPolicy::load(&user, None).unwrap();
        let r = p.requirement("reg.example:5000/team/tool", None);
        assert!(r.required_by.is_some());
        assert_eq!(r.keys, vec![a.clone(), b.clone()]);
        let r = p.requirement("reg.example:5000/teamster/tool", None);
        assert!(r.required_by.is_none());
        assert_eq!(r.keys, vec![b.clone()]);
        // A managed file requires everywhere; the user file cannot take it back.
        let managed = dir.path().join("managed");
        std::fs::create_dir_all(&managed).unwrap();
        std::fs::write(
            managed.join("managed-settings.json"),
            r#"{"pluginSignatures":{"requireSignatures":true}}"#,
        )
        .unwrap();
        let p = TrustPolicy::load(&user, Some(&managed)).unwrap();
        assert!(
            p.requirement("other.example/x", None)
                .required_by
                .is_some_and(|w| w.contains("managed-settings.json"))
        );
    }

    #[test]
    fn malformed_policy_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let user = dir.path().join("settings.json");
        std::fs::write(&user, r#"{"pluginSignatures":{"requireSignatures":"yes"}}"#).unwrap();
        let e = TrustPolicy::load(&user, None).unwrap_err().to_string();
        assert!(e.contains("requireSignatures"), "{e}");
    }
}
