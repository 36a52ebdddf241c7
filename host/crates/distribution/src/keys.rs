//! Ed25519 signing keys, their files, and what a signature covers.
//!
//! `PATH.key` holds `warden-ed25519-secret <hex of the 32-byte seed>` and is created with mode
//! 0600 (a key readable by others is refused when loaded, as ssh does). `PATH.pub` holds
//! `warden-ed25519 <hex of the 32-byte public key>`. A key's id is `ed25519:` and the first 16
//! hex digits of the sha256 of its public key bytes.
//!
//! A signature is over [`signed_payload`] of the OCI manifest digest: the manifest names every
//! blob by digest, so one signature pins every byte of the artifact, and the payload is bound to
//! Warden signatures by its prefix so it is never a valid signature of anything else.

use std::fs::OpenOptions;
use std::io::Write as _;
use std::os::unix::fs::{OpenOptionsExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};

use ed25519_dalek::{Signature, Signer as _, SigningKey, VerifyingKey};
use sha2::{Digest as _, Sha256};

use crate::error::DistError;

const SECRET_TAG: &str = "warden-ed25519-secret";
const PUBLIC_TAG: &str = "warden-ed25519";

/// The bytes a signature covers for an artifact whose manifest has `manifest_digest`.
pub fn signed_payload(manifest_digest: &str) -> Vec<u8> {
    format!("warden-signature-v1 {manifest_digest}").into_bytes()
}

/// The bytes a signature covers for a marketplace's signed index whose bytes have
/// `index_digest` (`sha256:<hex>`): the same key and signature format as an artifact's, bound
/// to indexes by its own prefix so neither is ever valid as the other.
pub fn signed_index_payload(index_digest: &str) -> Vec<u8> {
    format!("warden-index-signature-v1 {index_digest}").into_bytes()
}

/// A private signing key.
pub struct SecretKey(SigningKey);

/// A public key that verifies signatures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublicKey(VerifyingKey);

impl std::fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SecretKey({})", self.public().key_id())
    }
}

impl SecretKey {
    /// A new random key (from the operating system's generator).
    pub fn generate() -> Result<Self, DistError> {
        let mut seed = [0u8; 32];
        getrandom::fill(&mut seed).map_err(|e| DistError::Key {
            path: PathBuf::new(),
            reason: format!("no randomness from the operating system: {e}"),
        })?;
        Ok(SecretKey(SigningKey::from_bytes(&seed)))
    }

    /// Reads `PATH.key` (or the exact path given). A file that group or others may read is
    /// refused: whoever reads it can sign as its owner.
    pub fn load(path: &Path) -> Result<Self, DistError> {
        let err = |reason: String| DistError::Key {
            path: path.to_path_buf(),
            reason,
        };
        let meta = std::fs::metadata(path).map_err(|e| err(e.to_string()))?;
        if meta.permissions().mode() & 0o077 != 0 {
            return Err(err(format!(
                "is readable by others (mode {:o}); run `chmod 600 {}`",
                meta.permissions().mode() & 0o777,
                path.display()
            )));
        }
        let text = std::fs::read_to_string(path).map_err(|e| err(e.to_string()))?;
        let bytes = parse_tagged(&text, SECRET_TAG).map_err(err)?;
        Ok(SecretKey(SigningKey::from_bytes(&bytes)))
    }

    /// The matching public key.
    pub fn public(&self) -> PublicKey {
        PublicKey(self.0.verifying_key())
    }

    /// Signs `manifest_digest` (see [`signed_payload`]).
    pub fn sign_manifest(&self, manifest_digest: &str) -> [u8; 64] {
        self.0.sign(&signed_payload(manifest_digest)).to_bytes()
    }

    /// Signs a marketplace index whose bytes have `index_digest` (see
    /// [`signed_index_payload`]).
    pub fn sign_index(&self, index_digest: &str) -> [u8; 64] {
        self.0.sign(&signed_index_payload(index_digest)).to_bytes()
    }

    /// Writes `PATH.key` (0600, never over an existing file) and `PATH.pub`.
    pub fn write_pair(&self, path: &Path) -> Result<(PathBuf, PathBuf), DistError> {
        let key = with_suffix(path, "key");
        let public = with_suffix(path, "pub");
        let err = |p: &Path, e: std::io::Error| DistError::Key {
            path: p.to_path_buf(),
            reason: e.to_string(),
        };
        for p in [&key, &public] {
            if p.exists() {
                return Err(DistError::Key {
                    path: p.clone(),
                    reason: "already exists; a key is never overwritten".into(),
                });
            }
        }
        let mut f = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&key)
            .map_err(|e| err(&key, e))?;
        writeln!(f, "{SECRET_TAG} {}", hex::encode(self.0.to_bytes())).map_err(|e| err(&key, e))?;
        f.sync_all().map_err(|e| err(&key, e))?;
        std::fs::write(&public, self.public().to_line() + "\n").map_err(|e| err(&public, e))?;
        Ok((key, public))
    }
}

impl PublicKey {
    /// Parses the text of a `.pub` file (or a settings value): `warden-ed25519 <hex>`.
    pub fn parse(text: &str) -> Result<Self, String> {
        let bytes = parse_tagged(text, PUBLIC_TAG)?;
        VerifyingKey::from_bytes(&bytes)
            .map(PublicKey)
            .map_err(|e| format!("not an ed25519 public key: {e}"))
    }

    /// Reads a `.pub` file.
    pub fn load(path: &Path) -> Result<Self, DistError> {
        let text = std::fs::read_to_string(path).map_err(|e| DistError::Key {
            path: path.to_path_buf(),
            reason: e.to_string(),
        })?;
        Self::parse(&text).map_err(|reason| DistError::Key {
            path: path.to_path_buf(),
            reason,
        })
    }

    /// `warden-ed25519 <hex>`, the `.pub` file's line and the settings' value.
    pub fn to_line(&self) -> String {
        format!("{PUBLIC_TAG} {}", hex::encode(self.0.to_bytes()))
    }

    /// The public key bytes, hex.
    pub fn to_hex(&self) -> String {
        hex::encode(self.0.to_bytes())
    }

    /// `ed25519:<16 hex digits of sha256(public key)>`.
    pub fn key_id(&self) -> String {
        let h = Sha256::digest(self.0.to_bytes());
        format!("ed25519:{}", &hex::encode(h)[..16])
    }

    /// Whether `signature` is this key's signature of `manifest_digest` (strict verification:
    /// no malleable or small-order forms).
    pub fn verify_manifest(&self, manifest_digest: &str, signature: &[u8]) -> bool {
        let Ok(bytes) = <[u8; 64]>::try_from(signature) else {
            return false;
        };
        self.0
            .verify_strict(
                &signed_payload(manifest_digest),
                &Signature::from_bytes(&bytes),
            )
            .is_ok()
    }
}

impl PublicKey {
    /// Whether `signature` is this key's signature of a marketplace index whose bytes have
    /// `index_digest` (strict verification).
    pub fn verify_index(&self, index_digest: &str, signature: &[u8]) -> bool {
        let Ok(bytes) = <[u8; 64]>::try_from(signature) else {
            return false;
        };
        self.0
            .verify_strict(
                &signed_index_payload(index_digest),
                &Signature::from_bytes(&bytes),
            )
            .is_ok()
    }
}

/// `PATH.<ext>`, keeping any dots already in the file name.
fn with_suffix(path: &Path, ext: &str) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(".");
    s.push(ext);
    PathBuf::from(s)
}

fn parse_tagged(text: &str, tag: &str) -> Result<[u8; 32], String> {
    let mut words = text.split_whitespace();
    match (words.next(), words.next()) {
        (Some(t), Some(h)) if t == tag => {
            let v = hex::decode(h).map_err(|e| format!("bad hex after `{tag}`: {e}"))?;
            <[u8; 32]>::try_from(v.as_slice())
                .map_err(|_| format!("expected 32 bytes after `{tag}`, found {}", v.len()))
        }
        _ => Err(format!("expected `{tag} <64 hex digits>`")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sign_verify_and_files() {
        let dir = tempfile::tempdir().unwrap();
        let k = SecretKey::generate().unwrap();
        let (key, public) = k.write_pair(&dir.path().join("team")).unwrap();
        assert_eq!(
            std::fs::metadata(&key).unwrap().permissions().mode() & 0o777,
            0o600
        );
        let loaded = SecretKey::load(&key).unwrap();
        let p = PublicKey::load(&public).unwrap();
        assert_eq!(p, k.public());
        let d = "sha256:00";
        let sig = loaded.sign_manifest(d);
        assert!(p.verify_manifest(d, &sig));
        assert!(!p.verify_manifest("sha256:01", &sig));
        let other = SecretKey::generate().unwrap().public();
        assert!(!other.verify_manifest(d, &sig));
        // An artifact's signature is not an index's, nor the reverse.
        assert!(!p.verify_index(d, &sig));
        let isig = loaded.sign_index(d);
        assert!(p.verify_index(d, &isig));
        assert!(!p.verify_manifest(d, &isig));
        // Never overwritten.
        assert!(k.write_pair(&dir.path().join("team")).is_err());
        // A key file others can read is refused.
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).unwrap();
        let e = SecretKey::load(&key).unwrap_err().to_string();
        assert!(e.contains("readable by others"), "{e}");
    }
}
