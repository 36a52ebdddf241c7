//! Plugins from OCI registries: the `oci` source's fetch, `install oci://…`, and the signature
//! half of `verify`.
//!
//! `install oci://HOST/REPO:TAG` records the reference as an entry of a directory marketplace
//! Warden keeps for such installs (`plugins/oci/`, named [`OCI_MARKETPLACE`]), then installs
//! `<REPO's last component>@oci` through the ordinary pipeline: staging, consent, atomic
//! placement and the commit point are those of every install, and `update` resolves the tag
//! again. The trust policy is read from the user's and the managed settings only
//! ([`warden_distribution::policy`]).

use std::path::Path;

use serde_json::{Value, json};
use warden_config::Scope;
use warden_distribution::{ArtifactRef, Options, Pulled, SignatureRecord, TrustPolicy};

use super::PluginManager;
use super::install::Consent;
use super::report::InstallOutcome;
use crate::error::{PluginError, io};
use crate::marketplace::MARKETPLACE_FILE;
use crate::names::check_path_name;
use crate::store::InstallRecord;

/// The marketplace `install oci://…` records its references in.
pub const OCI_MARKETPLACE: &str = "oci";

/// The install record key holding what was pulled: reference, manifest digest, signature.
pub const OCI_RECORD_KEY: &str = "wardenOci";

impl PluginManager {
    /// The signature policy of this user (user settings and managed settings; never the
    /// project's).
    pub fn trust_policy(&self) -> Result<TrustPolicy, PluginError> {
        let managed = warden_config::LoadOptions::new(&self.cwd, self.home.clone()).managed_dir;
        Ok(TrustPolicy::load(
            &self.home.user_settings(),
            managed.as_deref(),
        )?)
    }

    /// Registry options for pulls: blobs cached by digest under `cache/oci`.
    fn oci_options(&self) -> Options {
        Options {
            cache_dir: Some(self.home.cache_dir().join("oci")),
            insecure: self.insecure_registries,
            ..Options::default()
        }
    }

    /// Pulls an `oci` entry into `dest`, verified as the policy says for its repository and
    /// marketplace.
    pub(super) fn fetch_oci(
        &self,
        reference: &str,
        digest: Option<&str>,
        marketplace: &str,
        dest: &Path,
    ) -> Result<Pulled, PluginError> {
        let r = ArtifactRef::parse(reference)?;
        let req = self
            .trust_policy()?
            .requirement(&r.repository(), Some(marketplace));
        let pb = self.progress().spinner(format!("Pulling {reference}"));
        let res =
            warden_distribution::oci::pull(reference, digest, &req, dest, &self.oci_options());
        pb.finish_and_clear();
        Ok(res?)
    }

    /// `install oci://HOST/REPO:TAG`: records the reference in the [`OCI_MARKETPLACE`]
    /// marketplace and installs it from there.
    pub fn install_oci(
        &self,
        reference: &str,
        scope: Scope,
        consent: &Consent,
    ) -> Result<InstallOutcome, PluginError> {
        let r = ArtifactRef::parse(reference)?;
        let name = r.name().to_string();
        check_path_name(&name).map_err(|reason| PluginError::InvalidName {
            file: Path::new(reference).to_path_buf(),
            field: "repository".into(),
            name: name.clone(),
            reason,
        })?;
        let dir = self.store.root.join(OCI_MARKETPLACE);
        let file = dir.join(MARKETPLACE_FILE);
        let mut catalog: Value = match std::fs::read(&file) {
            Ok(b) => serde_json::from_slice(&b).map_err(|e| PluginError::State {
                path: file.clone(),
                message: format!("invalid JSON: {e}"),
            })?,
            Err(_) => json!({
                "name": OCI_MARKETPLACE,
                "owner": { "name": "warden" },
                "description": "Plugins installed with `warden plugin install oci://…`",
                "plugins": [],
            }),
        };
        let entry = json!({
            "name": name,
            "source": { "source": "oci", "ref": r.text },
        });
        if let Some(list) = catalog.get_mut("plugins").and_then(Value::as_array_mut) {
            list.retain(|e| e.get("name").and_then(Value::as_str) != Some(name.as_str()));
            list.push(entry);
        }
        if let Some(parent) = file.parent() {
            std::fs::create_dir_all(parent).map_err(io(parent))?;
        }
        crate::store::write_json(&file, &catalog)?;
        if !self.store.known()?.contains_key(OCI_MARKETPLACE) {
            self.marketplace_add(&dir.to_string_lossy(), Scope::User)?;
        }
        self.install_with_consent(&format!("{name}@{OCI_MARKETPLACE}"), scope, consent)
    }
}

/// What an install record says was pulled, if it came from a registry.
pub fn oci_record(r: &InstallRecord) -> Option<(String, String, Option<SignatureRecord>)> {
    let o = r.extra.get(OCI_RECORD_KEY)?;
    let reference = o.get("reference")?.as_str()?.to_string();
    let digest = o.get("manifestDigest")?.as_str()?.to_string();
    let sig = o
        .get("signature")
        .and_then(|s| serde_json::from_value(s.clone()).ok());
    Some((reference, digest, sig))
}

/// The record of a pull, for [`OCI_RECORD_KEY`].
pub(super) fn record_value(reference: &str, p: &Pulled) -> Value {
    let mut v = json!({
        "reference": reference,
        "manifestDigest": p.manifest_digest,
    });
    if let Some(s) = &p.signature {
        v["signer"] = json!(s.key_id);
        v["signature"] = json!(s);
    }
    v
}

/// Checks an installation's recorded signature again under today's policy: `Ok(signer)`, or
/// why it fails. `None` for installations that did not come from a registry.
pub(super) fn recheck(
    policy: &TrustPolicy,
    r: &InstallRecord,
    marketplace: Option<&str>,
) -> Option<Result<Option<String>, String>> {
    let (reference, digest, sig) = oci_record(r)?;
    let repo = ArtifactRef::parse(&reference)
        .map(|a| a.repository())
        .unwrap_or(reference);
    let req = policy.requirement(&repo, marketplace);
    Some(SignatureRecord::check(sig.as_ref(), &digest, &req))
}
