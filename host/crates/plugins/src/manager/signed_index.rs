//! Signed indexes of git and directory marketplaces: the same keys, key ids, signature format
//! and trust policy as plugins pulled from OCI registries ([`warden_distribution`]).
//!
//! `warden plugin marketplace sign DIR --key FILE` stages every plugin of the marketplace as an
//! install would (the same copy, so the same digest) and writes two files next to
//! `marketplace.json`:
//!
//! - [`INDEX_FILE`]: `{"version": 1, "marketplace": NAME, "plugins": {PLUGIN: {"sha256": HEX}}}`,
//!   each plugin's tree digest (what the lockfile records);
//! - [`INDEX_SIGNATURE_FILE`]: `{"keyId", "publicKey", "signature"}`, an ed25519 signature of
//!   the index's sha256 ([`warden_distribution::keys::signed_index_payload`]).
//!
//! Both files are left out of every plugin copied from a marketplace, so a plugin at the
//! marketplace's root does not hash its own index.
//!
//! At install, when the policy names a key for the marketplace (or requires signatures), the
//! index must be signed by a trusted key before the plugin is fetched, and the fetched tree must
//! hash to its entry before anything reads it. Without a key or requirement that applies, the
//! files are not read: unsigned marketplaces install as they always did. Every name in an index
//! must be a safe plugin name ([`crate::names`]); one that is not refuses the whole index.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use warden_distribution::oci::sha256_digest;
use warden_distribution::{PublicKey, Requirement, SecretKey, SignatureRecord, TrustPolicy};

use super::PluginManager;
use super::cache::Scratch;
use crate::digest::tree_digest;
use crate::error::{PluginError, io};
use crate::marketplace::{Marketplace, MarketplaceEntry, PluginSource};
use crate::names::check_path_name;
use crate::namespace::plugin_id;
use crate::store::InstallRecord;
use crate::util::read_limited;

/// The index, beside `marketplace.json`.
pub const INDEX_FILE: &str = ".claude-plugin/warden-index.json";
/// Its detached signature.
pub const INDEX_SIGNATURE_FILE: &str = ".claude-plugin/warden-index.sig";
/// The install record key holding the verified index, its signature and signer.
pub const INDEX_RECORD_KEY: &str = "wardenIndex";

const INDEX_VERSION: u32 = 1;
const MAX_INDEX_BYTES: u64 = 1 << 20;
const MAX_SIGNATURE_BYTES: u64 = 16 << 10;

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct IndexDoc {
    version: u32,
    marketplace: String,
    plugins: BTreeMap<String, IndexEntry>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct IndexEntry {
    sha256: String,
}

/// An index whose signature by a trusted key verified, and the digest it lists for the plugin
/// being installed.
#[derive(Debug, Clone)]
pub(super) struct VerifiedIndex {
    /// The marketplace's name.
    pub marketplace: String,
    /// The index text, kept so `verify` can check it again offline.
    pub text: String,
    /// The signature and signer.
    pub signature: SignatureRecord,
    /// The tree digest the index lists for the plugin.
    pub expected: String,
}

impl VerifiedIndex {
    /// The value recorded under [`INDEX_RECORD_KEY`].
    pub fn record_value(&self) -> Value {
        json!({
            "marketplace": self.marketplace,
            "indexDigest": sha256_digest(self.text.as_bytes()),
            "signer": self.signature.key_id,
            "signature": self.signature,
            "index": self.text,
        })
    }
}

/// Parses an index strictly: version 1, every name a safe plugin name, every digest 64
/// lowercase hex digits.
fn parse_index(text: &str) -> Result<IndexDoc, String> {
    let doc: IndexDoc = serde_json::from_str(text).map_err(|e| format!("malformed: {e}"))?;
    if doc.version != INDEX_VERSION {
        return Err(format!(
            "version {} is not one Warden reads ({INDEX_VERSION})",
            doc.version
        ));
    }
    for (name, e) in &doc.plugins {
        check_path_name(name).map_err(|reason| {
            format!("lists `{name}`, which is not a usable plugin name: {reason}")
        })?;
        if e.sha256.len() != 64
            || !e
                .sha256
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        {
            return Err(format!(
                "lists `{name}` with sha256 `{}`, not 64 lowercase hex digits",
                e.sha256
            ));
        }
    }
    Ok(doc)
}

/// Reads a marketplace file of at most `limit` bytes; `None` when it does not exist.
fn read_optional(root: &Path, rel: &str, limit: u64) -> Result<Option<String>, String> {
    let path = root.join(rel);
    match std::fs::symlink_metadata(&path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("{rel}: {e}")),
        // The marketplace's own files only: a link could point anywhere on this machine.
        Ok(md) if md.file_type().is_symlink() => {
            return Err(format!(
                "{rel} is a symbolic link; the index is read only as a file of the marketplace"
            ));
        }
        Ok(_) => {}
    }
    let inside = match (path.canonicalize(), root.canonicalize()) {
        (Ok(p), Ok(r)) => p.starts_with(&r),
        _ => false,
    };
    if !inside {
        return Err(format!(
            "{rel} resolves outside the marketplace {}",
            root.display()
        ));
    }
    read_limited(&path, limit)
        .map(Some)
        .map_err(|e| format!("{rel}: {e}"))
}

/// Checks the index's signature and finds `name` in it. `Ok(None)`: the index does not count
/// (absent, signed by a key not trusted here, or not listing `name`) and nothing requires it.
fn check_index(
    root: &Path,
    marketplace: &str,
    name: &str,
    req: &Requirement,
) -> Result<Option<VerifiedIndex>, String> {
    let unsigned = |what: String| match &req.required_by {
        Some(why) => Err(format!("{what}, and a signature is required: {why}")),
        None => Ok(None),
    };
    let sig_text = read_optional(root, INDEX_SIGNATURE_FILE, MAX_SIGNATURE_BYTES)?;
    let index_text = read_optional(root, INDEX_FILE, MAX_INDEX_BYTES)?;
    let (Some(sig_text), Some(index_text)) = (sig_text, index_text) else {
        return unsigned(format!(
            "marketplace `{marketplace}` carries no signed index ({INDEX_FILE} with {INDEX_SIGNATURE_FILE}; `warden plugin marketplace sign` writes them)"
        ));
    };
    let env: SignatureRecord = serde_json::from_str(&sig_text)
        .map_err(|e| format!("{INDEX_SIGNATURE_FILE} is malformed: {e}"))?;
    let key = PublicKey::parse(&env.public_key)
        .map_err(|e| format!("{INDEX_SIGNATURE_FILE}: publicKey: {e}"))?;
    let sig =
        hex::decode(&env.signature).map_err(|e| format!("{INDEX_SIGNATURE_FILE}: bad hex: {e}"))?;
    let id = key.key_id();
    let digest = sha256_digest(index_text.as_bytes());
    match (req.keys.contains(&key), key.verify_index(&digest, &sig)) {
        (true, true) => {}
        (true, false) => {
            return Err(format!(
                "the signature of {INDEX_FILE} by trusted key {id} does not verify for its contents ({digest}): the index was changed after it was signed"
            ));
        }
        (false, _) => {
            return unsigned(format!(
                "the index of marketplace `{marketplace}` is signed by key {id} (claimed id {}), which is not trusted here. Trust the publisher's key with `warden key trust KEY.pub --for marketplace:{marketplace}` if you mean to",
                env.key_id
            ));
        }
    }
    let doc = parse_index(&index_text).map_err(|e| format!("the signed {INDEX_FILE} {e}"))?;
    if doc.marketplace != marketplace {
        return Err(format!(
            "the signed {INDEX_FILE} is the index of marketplace `{}`, not of `{marketplace}`",
            doc.marketplace
        ));
    }
    let Some(entry) = doc.plugins.get(name) else {
        return unsigned(format!(
            "`{name}` is not listed in the index of marketplace `{marketplace}` signed by {id}"
        ));
    };
    Ok(Some(VerifiedIndex {
        marketplace: marketplace.to_string(),
        expected: entry.sha256.clone(),
        text: index_text,
        signature: SignatureRecord {
            key_id: id,
            public_key: key.to_line(),
            signature: env.signature,
        },
    }))
}

/// The requirement for plugins of the marketplace known as `marketplace`.
fn requirement(policy: &TrustPolicy, marketplace: &str) -> Requirement {
    policy.requirement("", Some(marketplace))
}

/// Removes the index files from a staged plugin copy (a plugin at the marketplace root holds
/// them, and they are the marketplace's, not the plugin's).
pub(super) fn strip_index_files(dest: &Path) -> Result<(), PluginError> {
    for rel in [INDEX_FILE, INDEX_SIGNATURE_FILE] {
        let p = dest.join(rel);
        if std::fs::symlink_metadata(&p).is_ok() {
            std::fs::remove_file(&p).map_err(io(&p))?;
        }
    }
    Ok(())
}

/// One plugin listed by `marketplace sign`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SignedPlugin {
    /// Plugin name.
    pub name: String,
    /// Tree digest.
    pub sha256: String,
}

/// What `warden plugin marketplace sign` wrote.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SignedIndexReport {
    /// Command name.
    pub command: &'static str,
    /// `ok`.
    pub outcome: &'static str,
    /// Marketplace name.
    pub marketplace: String,
    /// The index file written.
    pub index: PathBuf,
    /// The signature file written.
    pub signature: PathBuf,
    /// `sha256:<hex>` of the index.
    pub index_digest: String,
    /// The signing key's id.
    pub signer: String,
    /// Plugins listed.
    pub plugins: Vec<SignedPlugin>,
    /// Entries left out, with why.
    pub skipped: Vec<(String, String)>,
}

impl std::fmt::Display for SignedIndexReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "✔ Signed the index of marketplace {} with key {}",
            self.marketplace, self.signer
        )?;
        writeln!(
            f,
            "  {} ({})\n  {}",
            self.index.display(),
            self.index_digest,
            self.signature.display()
        )?;
        for p in &self.plugins {
            writeln!(f, "  {} sha256 {}", p.name, p.sha256)?;
        }
        for (name, why) in &self.skipped {
            writeln!(f, "  {name} not listed: {why}")?;
        }
        write!(
            f,
            "Plugins listed here install only while their files hash as above: sign again after every change."
        )
    }
}

impl PluginManager {
    /// Checks the signed index of `m` (known as `mkt_name`) for `entry` under the user's
    /// policy, before anything is fetched. `None` for OCI entries (their own signatures are
    /// checked by the pull) and where the index does not count.
    pub(super) fn index_before_fetch(
        &self,
        mkt_name: &str,
        m: &Marketplace,
        entry: &MarketplaceEntry,
    ) -> Result<Option<VerifiedIndex>, PluginError> {
        if matches!(entry.source, PluginSource::Oci { .. }) {
            return Ok(None);
        }
        let req = requirement(&self.trust_policy()?, mkt_name);
        if req.keys.is_empty() && req.required_by.is_none() {
            return Ok(None);
        }
        check_index(&m.root, &m.name, &entry.name, &req).map_err(|reason| {
            PluginError::IndexSignature {
                plugin: plugin_id(&entry.name, mkt_name),
                reason,
            }
        })
    }

    /// `warden plugin marketplace sign DIR --key FILE`: stages each plugin of the marketplace
    /// at `dir` as an install does, and writes its digest into a new index signed by `key`.
    pub fn marketplace_sign(
        &self,
        dir: &Path,
        key: &SecretKey,
    ) -> Result<SignedIndexReport, PluginError> {
        if !dir.is_dir() {
            return Err(PluginError::PathNotFound(dir.to_path_buf()));
        }
        let m = self.read_catalog(dir)?;
        check_path_name(&m.name).map_err(|reason| PluginError::InvalidName {
            file: m.root.join(crate::marketplace::MARKETPLACE_FILE),
            field: "name".into(),
            name: m.name.clone(),
            reason,
        })?;
        let limits = self.copy_limits()?;
        let mut plugins = BTreeMap::new();
        let mut listed = Vec::new();
        let mut skipped: Vec<(String, String)> = m
            .unusable
            .iter()
            .map(|(n, why)| (n.clone(), why.clone()))
            .collect();
        for entry in &m.plugins {
            match &entry.source {
                PluginSource::Oci { .. } => {
                    skipped.push((
                        entry.name.clone(),
                        "an OCI entry, verified by its registry signature".into(),
                    ));
                    continue;
                }
                PluginSource::Unsupported { kind } => {
                    skipped.push((entry.name.clone(), format!("unsupported source `{kind}`")));
                    continue;
                }
                _ => {}
            }
            let staging = Scratch::new(&self.store.tmp_dir(), "sign-")?;
            let dest = staging.path().join("plugin");
            let id = plugin_id(&entry.name, &m.name);
            self.fetch_files(&id, &m, entry, staging.path(), &dest, limits)?;
            let sha256 = tree_digest(&dest).map_err(io(&dest))?;
            plugins.insert(
                entry.name.clone(),
                IndexEntry {
                    sha256: sha256.clone(),
                },
            );
            listed.push(SignedPlugin {
                name: entry.name.clone(),
                sha256,
            });
        }
        let doc = IndexDoc {
            version: INDEX_VERSION,
            marketplace: m.name.clone(),
            plugins,
        };
        let mut text = serde_json::to_string_pretty(&doc).map_err(|e| PluginError::State {
            path: dir.join(INDEX_FILE),
            message: e.to_string(),
        })?;
        text.push('\n');
        let digest = sha256_digest(text.as_bytes());
        let public = key.public();
        let sig = SignatureRecord {
            key_id: public.key_id(),
            public_key: public.to_line(),
            signature: hex::encode(key.sign_index(&digest)),
        };
        let sig_text = serde_json::to_string_pretty(&sig).unwrap_or_default() + "\n";
        let index = m.root.join(INDEX_FILE);
        let signature = m.root.join(INDEX_SIGNATURE_FILE);
        warden_vocab::fs::write_atomic_mode(&index, text.as_bytes(), 0o644, false)
            .map_err(io(&index))?;
        warden_vocab::fs::write_atomic_mode(&signature, sig_text.as_bytes(), 0o644, false)
            .map_err(io(&signature))?;
        Ok(SignedIndexReport {
            command: "marketplace-sign",
            outcome: "ok",
            marketplace: m.name,
            index,
            signature,
            index_digest: digest,
            signer: sig.key_id,
            plugins: listed,
            skipped,
        })
    }
}

/// What an install record says of the signed index it was installed under: (marketplace,
/// index digest, signer).
pub fn index_record(r: &InstallRecord) -> Option<(String, String, String)> {
    let o = r.extra.get(INDEX_RECORD_KEY)?;
    Some((
        o.get("marketplace")?.as_str()?.to_string(),
        o.get("indexDigest")?.as_str()?.to_string(),
        o.get("signer")?.as_str()?.to_string(),
    ))
}

/// Checks an installation from a git or directory marketplace again under today's policy,
/// offline: the recorded index's signature, its signer still trusted, and the recorded digest
/// listed for the plugin. `None` where no signature is recorded or required.
pub(super) fn recheck(
    policy: &TrustPolicy,
    r: &InstallRecord,
    plugin: &str,
    marketplace: Option<&str>,
) -> Option<Result<Option<String>, String>> {
    let marketplace = marketplace?;
    let req = requirement(policy, marketplace);
    let Some(o) = r.extra.get(INDEX_RECORD_KEY) else {
        return req.required_by.map(|why| {
            Err(format!(
                "installed without a signed index, and a signature is now required: {why}"
            ))
        });
    };
    Some(recheck_value(o, r, plugin, &req))
}

fn recheck_value(
    o: &Value,
    r: &InstallRecord,
    plugin: &str,
    req: &Requirement,
) -> Result<Option<String>, String> {
    let text = o
        .get("index")
        .and_then(Value::as_str)
        .ok_or("the recorded index is missing")?;
    let sig: SignatureRecord = o
        .get("signature")
        .cloned()
        .and_then(|s| serde_json::from_value(s).ok())
        .ok_or("the recorded index signature is missing")?;
    let key = PublicKey::parse(&sig.public_key)?;
    let bytes = hex::decode(&sig.signature).map_err(|e| format!("recorded signature: {e}"))?;
    let digest = sha256_digest(text.as_bytes());
    if !key.verify_index(&digest, &bytes) {
        return Err(format!(
            "the recorded index signature by {} does not verify for {digest}",
            key.key_id()
        ));
    }
    if !req.keys.contains(&key) {
        return Err(format!(
            "index signer {} is no longer trusted here",
            key.key_id()
        ));
    }
    let doc = parse_index(text).map_err(|e| format!("the recorded index {e}"))?;
    let listed = doc.plugins.get(plugin).map(|e| e.sha256.as_str());
    let recorded = r.warden.as_ref().map(|w| w.sha256.as_str());
    if listed.is_none() || listed != recorded {
        return Err(format!(
            "the signed index lists {} for `{plugin}`, but the installation records {}",
            listed.unwrap_or("nothing"),
            recorded.unwrap_or("no digest")
        ));
    }
    Ok(Some(key.key_id()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(keys: Vec<PublicKey>, required: bool) -> Requirement {
        Requirement {
            required_by: required.then(|| "test".to_string()),
            keys,
        }
    }

    fn write_signed(root: &Path, text: &str, key: &SecretKey) {
        std::fs::create_dir_all(root.join(".claude-plugin")).unwrap();
        std::fs::write(root.join(INDEX_FILE), text).unwrap();
        let p = key.public();
        let sig = SignatureRecord {
            key_id: p.key_id(),
            public_key: p.to_line(),
            signature: hex::encode(key.sign_index(&sha256_digest(text.as_bytes()))),
        };
        std::fs::write(
            root.join(INDEX_SIGNATURE_FILE),
            serde_json::to_string(&sig).unwrap(),
        )
        .unwrap();
    }

    #[test]
    fn index_checks() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let k = SecretKey::generate().unwrap();
        let other = SecretKey::generate().unwrap();
        let hex64 = "a".repeat(64);
        // Nothing there: refused only when required.
        assert!(
            check_index(root, "m", "p", &req(vec![k.public()], false)).is_ok_and(|v| v.is_none())
        );
        let e = check_index(root, "m", "p", &req(vec![k.public()], true)).unwrap_err();
        assert!(e.contains("carries no signed index"), "{e}");
        // Signed and listed.
        let good = format!(
            r#"{{"version":1,"marketplace":"m","plugins":{{"p":{{"sha256":"{hex64}"}}}}}}"#
        );
        write_signed(root, &good, &k);
        let v = check_index(root, "m", "p", &req(vec![k.public()], true))
            .unwrap()
            .unwrap();
        assert_eq!(v.expected, hex64);
        assert_eq!(v.signature.key_id, k.public().key_id());
        // Another marketplace's index.
        let e = check_index(root, "n", "p", &req(vec![k.public()], true)).unwrap_err();
        assert!(e.contains("not of `n`"), "{e}");
        // Untrusted signer.
        let e = check_index(root, "m", "p", &req(vec![other.public()], true)).unwrap_err();
        assert!(e.contains("not trusted here"), "{e}");
        // Changed after signing.
        std::fs::write(root.join(INDEX_FILE), good.replace("\"p\"", "\"q\"")).unwrap();
        let e = check_index(root, "m", "q", &req(vec![k.public()], false)).unwrap_err();
        assert!(e.contains("does not verify"), "{e}");
        // Hostile names refuse the whole index.
        for bad in ["../evil", "a/b", ".."] {
            let text = format!(
                r#"{{"version":1,"marketplace":"m","plugins":{{"p":{{"sha256":"{hex64}"}},"{bad}":{{"sha256":"{hex64}"}}}}}}"#
            );
            write_signed(root, &text, &k);
            let e = check_index(root, "m", "p", &req(vec![k.public()], false)).unwrap_err();
            assert!(e.contains("not a usable plugin name"), "{bad}: {e}");
        }
    }

    /// An index that is a link, or reached through a linked `.claude-plugin`, is not read,
    /// even when what it points at is a validly signed index.
    #[cfg(unix)]
    #[test]
    fn an_index_outside_the_marketplace_is_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let k = SecretKey::generate().unwrap();
        let hex64 = "b".repeat(64);
        let text = format!(
            r#"{{"version":1,"marketplace":"m","plugins":{{"p":{{"sha256":"{hex64}"}}}}}}"#
        );
        let elsewhere = dir.path().join("elsewhere");
        write_signed(&elsewhere, &text, &k);

        let root = dir.path().join("linked-files");
        std::fs::create_dir_all(root.join(".claude-plugin")).unwrap();
        for rel in [INDEX_FILE, INDEX_SIGNATURE_FILE] {
            std::os::unix::fs::symlink(elsewhere.join(rel), root.join(rel)).unwrap();
        }
        let e = check_index(&root, "m", "p", &req(vec![k.public()], false)).unwrap_err();
        assert!(e.contains("is a symbolic link"), "{e}");

        let root = dir.path().join("linked-dir");
        std::fs::create_dir_all(&root).unwrap();
        std::os::unix::fs::symlink(
            elsewhere.join(".claude-plugin"),
            root.join(".claude-plugin"),
        )
        .unwrap();
        let e = check_index(&root, "m", "p", &req(vec![k.public()], false)).unwrap_err();
        assert!(e.contains("resolves outside the marketplace"), "{e}");
    }
}
