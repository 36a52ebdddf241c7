//! Publishing to and pulling from an OCI registry.
//!
//! A pull never trusts the registry: the manifest's size is bounded and its digest computed
//! here (and compared with the pinned one); the signature is checked against the policy before
//! any layer is fetched; each blob is bounded by its descriptor's size and the limits, hashed
//! while it streams and refused on a mismatch; only then is anything written to the
//! destination. The whole operation has a deadline and each read a timeout, so a registry that
//! hangs or drips bytes fails instead of stalling an install.
//!
//! Signatures use the cosign tag convention: the signature of manifest `sha256:<hex>` is an
//! artifact tagged `sha256-<hex>.sig` in the same repository, whose one layer
//! ([`SIGNATURE_MEDIA_TYPE`]) is a JSON envelope `{keyId, publicKey, signature}`. It also names
//! the signed manifest as its `subject`, so registries with the referrers API list it.

use std::path::{Path, PathBuf};
use std::str::FromStr as _;
use std::time::Duration;

use oci_client::client::{ClientConfig, ClientProtocol};
use oci_client::errors::OciDistributionError;
use oci_client::secrets::RegistryAuth;
use oci_client::{Client, Reference};
use serde::Deserialize;
use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};

use crate::error::{DistError, io};
use crate::keys::{PublicKey, SecretKey};
use crate::pack::{
    FILES_MEDIA_TYPE, TITLE, WASM_CONFIG_MEDIA_TYPE, WASM_LEGACY_MEDIA_TYPE, WASM_MEDIA_TYPE, pack,
    safe_relative, unpack_files, write_file,
};
use crate::policy::Requirement;
use crate::reader::{Read, ReadError, Reader};

/// OCI image manifest media type.
pub const MANIFEST_MEDIA_TYPE: &str = "application/vnd.oci.image.manifest.v1+json";
const DOCKER_MANIFEST_MEDIA_TYPE: &str = "application/vnd.docker.distribution.manifest.v2+json";
/// Media type of a signature envelope layer (and the signature artifact's type).
pub const SIGNATURE_MEDIA_TYPE: &str = "application/vnd.warden.signature.v1+json";
const EMPTY_MEDIA_TYPE: &str = "application/vnd.oci.empty.v1+json";
/// The environment variable holding the deadline of a whole pull or push, in seconds.
pub const TIMEOUT_ENV: &str = "WARDEN_OCI_TIMEOUT_SECS";

/// Size limits on what a registry may send.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// A manifest (the artifact's and a signature's).
    pub manifest: u64,
    /// One blob.
    pub blob: u64,
    /// All blobs of one artifact.
    pub total: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            manifest: 256 * 1024,
            blob: 256 * 1024 * 1024,
            total: 512 * 1024 * 1024,
        }
    }
}

/// Registry credentials.
#[derive(Clone, Default)]
pub enum Auth {
    /// From the Docker config file (`$DOCKER_CONFIG/config.json`, else
    /// `~/.docker/config.json`), else anonymous.
    #[default]
    DockerConfig,
    /// User name and password (`--username`, `--password-stdin`).
    Basic(String, String),
}

impl std::fmt::Debug for Auth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Auth::DockerConfig => write!(f, "DockerConfig"),
            Auth::Basic(u, _) => write!(f, "Basic({u}, ***)"),
        }
    }
}

/// How to talk to registries.
#[derive(Debug, Clone)]
pub struct Options {
    /// Allow plain HTTP to a registry that is not on the loopback interface.
    pub insecure: bool,
    /// Credentials.
    pub auth: Auth,
    /// Size limits.
    pub limits: Limits,
    /// Deadline of the whole operation.
    pub deadline: Duration,
    /// Longest wait for any one read or connection.
    pub read_timeout: Duration,
    /// Verified blobs by digest (`<dir>/sha256/<hex>`), reused by later pulls after hashing
    /// them again; `None`: no cache.
    pub cache_dir: Option<PathBuf>,
}

impl Default for Options {
    fn default() -> Self {
        let secs = std::env::var(TIMEOUT_ENV)
            .ok()
            .and_then(|v| v.parse::<u64>().ok())
            .filter(|s| *s > 0);
        Options {
            insecure: false,
            auth: Auth::DockerConfig,
            limits: Limits::default(),
            deadline: Duration::from_secs(secs.unwrap_or(600)),
            read_timeout: Duration::from_secs(secs.unwrap_or(30).min(30)),
            cache_dir: None,
        }
    }
}

/// A parsed `[oci://]HOST[:PORT]/REPO[:TAG][@DIGEST]`.
#[derive(Debug, Clone)]
pub struct ArtifactRef {
    inner: Reference,
    /// As given, without `oci://`.
    pub text: String,
}

impl ArtifactRef {
    /// Parses a reference. The host must be explicit (a name with a dot or a port, or
    /// `localhost`): a bare `team/tool` would silently mean Docker Hub.
    pub fn parse(s: &str) -> Result<Self, DistError> {
        let text = s.strip_prefix("oci://").unwrap_or(s).to_string();
        let bad = |reason: &str| DistError::Reference {
            reference: s.to_string(),
            reason: reason.to_string(),
        };
        let host = text.split('/').next().unwrap_or("");
        if !text.contains('/') || !(host.contains('.') || host.contains(':') || host == "localhost")
        {
            return Err(bad(
                "expected HOST[:PORT]/REPOSITORY[:TAG][@sha256:DIGEST] with an explicit registry host",
            ));
        }
        let inner = Reference::from_str(&text).map_err(|e| bad(&e.to_string()))?;
        if inner.registry() != host {
            return Err(bad(
                "the registry host could not be read from the reference",
            ));
        }
        Ok(ArtifactRef { inner, text })
    }

    /// `HOST/REPO`, what registry prefixes in the trust policy match.
    pub fn repository(&self) -> String {
        format!("{}/{}", self.inner.registry(), self.inner.repository())
    }

    /// The tag, if any.
    pub fn tag(&self) -> Option<&str> {
        self.inner.tag()
    }

    /// The digest, if any.
    pub fn digest(&self) -> Option<&str> {
        self.inner.digest()
    }

    /// The last path component of the repository.
    pub fn name(&self) -> &str {
        self.inner
            .repository()
            .rsplit('/')
            .next()
            .unwrap_or_default()
    }

    fn with_digest(&self, digest: &str) -> Reference {
        Reference::with_digest(
            self.inner.registry().to_string(),
            self.inner.repository().to_string(),
            digest.to_string(),
        )
    }

    fn with_tag(&self, tag: &str) -> Reference {
        Reference::with_tag(
            self.inner.registry().to_string(),
            self.inner.repository().to_string(),
            tag.to_string(),
        )
    }
}

/// What a publish pushed.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Published {
    /// The reference pushed to.
    pub reference: String,
    /// `sha256:<hex>` of the manifest.
    pub manifest_digest: String,
    /// The signature's tag and key id, when signed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signature_tag: Option<String>,
    /// The signing key's id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signer: Option<String>,
    /// Layers pushed (media type, digest, size).
    pub layers: Vec<(String, String, u64)>,
}

/// What a pull verified and unpacked.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Pulled {
    /// `HOST/REPO`.
    pub repository: String,
    /// `sha256:<hex>` of the manifest.
    pub manifest_digest: String,
    /// The trusted signature that was verified.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signature: Option<SignatureRecord>,
    /// Blobs read from the local cache instead of the registry.
    pub cached_blobs: usize,
}

/// A verified signature, kept with the installation so `verify` can check it again offline.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SignatureRecord {
    /// The signer's key id.
    pub key_id: String,
    /// The signer's public key (`warden-ed25519 <hex>`).
    pub public_key: String,
    /// The signature, hex.
    pub signature: String,
}

impl SignatureRecord {
    /// Checks this signature of `manifest_digest` again under `req`: the key must still be
    /// trusted and the signature valid; with no signature, `req` must not require one. Returns
    /// the signer's key id, or why the check fails.
    pub fn check(
        this: Option<&SignatureRecord>,
        manifest_digest: &str,
        req: &Requirement,
    ) -> Result<Option<String>, String> {
        let Some(s) = this else {
            return match &req.required_by {
                Some(why) => Err(format!(
                    "installed unsigned, and a signature is now required: {why}"
                )),
                None => Ok(None),
            };
        };
        let key = PublicKey::parse(&s.public_key)?;
        let sig = hex::decode(&s.signature).map_err(|e| format!("recorded signature: {e}"))?;
        if !key.verify_manifest(manifest_digest, &sig) {
            return Err(format!(
                "the recorded signature by {} does not verify for {manifest_digest}",
                key.key_id()
            ));
        }
        if !req.keys.contains(&key) {
            return Err(format!("signer {} is no longer trusted here", key.key_id()));
        }
        Ok(Some(key.key_id()))
    }
}

/// `sha256:<hex>` of `data`.
pub fn sha256_digest(data: &[u8]) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(data)))
}

/// Runs `f`'s future to completion on a runtime of its own, on a thread of its own, so a
/// caller that is itself inside a runtime can call the blocking API.
fn block<T: Send>(f: impl AsyncFnOnce() -> T + Send) -> T {
    std::thread::scope(|s| {
        s.spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a current-thread runtime builds");
            rt.block_on(f())
        })
        .join()
        .unwrap_or_else(|p| std::panic::resume_unwind(p))
    })
}

fn is_loopback(host: &str) -> bool {
    let h = host
        .rsplit_once(':')
        .filter(|(h, port)| !h.is_empty() && port.chars().all(|c| c.is_ascii_digit()))
        .map_or(host, |(h, _)| h);
    let h = h.trim_start_matches('[').trim_end_matches(']');
    h == "localhost"
        || h.parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

fn client(r: &ArtifactRef, opts: &Options) -> Client {
    // The TLS provider the rest of the tree uses; installing it twice is harmless.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let registry = r.inner.registry().to_string();
    let protocol = if opts.insecure || is_loopback(&registry) {
        ClientProtocol::HttpsExcept(vec![registry])
    } else {
        ClientProtocol::Https
    };
    Client::new(ClientConfig {
        protocol,
        read_timeout: Some(opts.read_timeout),
        connect_timeout: Some(opts.read_timeout),
        platform_resolver: None,
        ..Default::default()
    })
}

fn auth_for(registry: &str, auth: &Auth) -> RegistryAuth {
    match auth {
        Auth::Basic(u, p) => RegistryAuth::Basic(u.clone(), p.clone()),
        Auth::DockerConfig => docker_config_auth(registry).unwrap_or(RegistryAuth::Anonymous),
    }
}

/// A reader of `r`'s repository with the credentials `c.auth` settled on: its bearer token,
/// else the basic credentials, else none.
fn reader(
    r: &ArtifactRef,
    opts: &Options,
    token: Option<String>,
    auth: &RegistryAuth,
) -> Result<Reader, DistError> {
    let registry = r.inner.resolve_registry();
    let loopback = is_loopback(registry);
    let scheme = if opts.insecure || loopback {
        "http"
    } else {
        "https"
    };
    let authorization = match (token, auth) {
        (Some(t), _) => Some(format!("Bearer {t}")),
        (None, RegistryAuth::Basic(u, p)) => {
            use base64::Engine as _;
            Some(format!(
                "Basic {}",
                base64::engine::general_purpose::STANDARD.encode(format!("{u}:{p}"))
            ))
        }
        _ => None,
    };
    Reader::new(
        scheme,
        registry,
        r.inner.repository(),
        authorization,
        opts.read_timeout,
        loopback,
    )
    .map_err(|reason| DistError::Registry {
        reference: r.text.clone(),
        reason,
    })
}

/// Maps a failed read of `what` to the error it is.
fn read_err(r: &ArtifactRef, what: &str) -> impl Fn(ReadError) -> DistError {
    let reference = r.text.clone();
    let what = what.to_string();
    move |e| match e {
        ReadError::Registry(reason) => DistError::Registry {
            reference: reference.clone(),
            reason: format!("{what}: {reason}"),
        },
        ReadError::Hostile(reason) => DistError::Hostile {
            reference: reference.clone(),
            reason,
        },
    }
}

/// The credentials the Docker config file holds for `registry` (`auths.<host>.auth`, base64 of
/// `user:password`). Credential helpers are not run.
fn docker_config_auth(registry: &str) -> Option<RegistryAuth> {
    let file = match std::env::var_os("DOCKER_CONFIG") {
        Some(d) => PathBuf::from(d).join("config.json"),
        None => warden_vocab::home_dir()?.join(".docker/config.json"),
    };
    let v: Value = serde_json::from_slice(&std::fs::read(file).ok()?).ok()?;
    let auths = v.get("auths")?.as_object()?;
    let entry = auths.iter().find_map(|(k, e)| {
        let host = k
            .trim_start_matches("https://")
            .trim_start_matches("http://")
            .split('/')
            .next()
            .unwrap_or_default();
        (host == registry).then_some(e)
    })?;
    use base64::Engine as _;
    let raw = base64::engine::general_purpose::STANDARD
        .decode(entry.get("auth")?.as_str()?)
        .ok()?;
    let (u, p) = std::str::from_utf8(&raw).ok()?.split_once(':')?;
    Some(RegistryAuth::Basic(u.to_string(), p.to_string()))
}

fn registry_err(r: &ArtifactRef, what: &str) -> impl Fn(OciDistributionError) -> DistError {
    let reference = r.text.clone();
    let what = what.to_string();
    move |e| DistError::Registry {
        reference: reference.clone(),
        reason: format!("{what}: {e}"),
    }
}

async fn with_deadline<T>(
    r: &ArtifactRef,
    opts: &Options,
    fut: impl Future<Output = Result<T, DistError>>,
) -> Result<T, DistError> {
    tokio::time::timeout(opts.deadline, fut)
        .await
        .unwrap_or_else(|_| {
            Err(DistError::Registry {
                reference: r.text.clone(),
                reason: format!(
                    "did not finish within {}s (set {TIMEOUT_ENV} to allow longer)",
                    opts.deadline.as_secs()
                ),
            })
        })
}

fn descriptor(media_type: &str, data: &[u8]) -> Value {
    json!({
        "mediaType": media_type,
        "digest": sha256_digest(data),
        "size": data.len(),
    })
}

/// `warden plugin publish DIR REF [--key FILE]`: pushes `dir` as an artifact, signs it with
/// `key` when given, and returns the manifest digest.
pub fn publish(
    dir: &Path,
    reference: &str,
    key: Option<&SecretKey>,
    opts: &Options,
) -> Result<Published, DistError> {
    let r = ArtifactRef::parse(reference)?;
    if r.tag().is_none() || r.digest().is_some() {
        return Err(DistError::Reference {
            reference: reference.to_string(),
            reason: "publish needs a tag (HOST/REPO:TAG) and no digest".into(),
        });
    }
    let layers = pack(dir)?;
    block(async || with_deadline(&r, opts, publish_async(&r, layers, key, opts)).await)
}

async fn publish_async(
    r: &ArtifactRef,
    layers: Vec<crate::pack::Layer>,
    key: Option<&SecretKey>,
    opts: &Options,
) -> Result<Published, DistError> {
    let c = client(r, opts);
    let auth = auth_for(r.inner.registry(), &opts.auth);
    c.auth(&r.inner, &auth, oci_client::RegistryOperation::Push)
        .await
        .map_err(registry_err(r, "authenticating for push"))?;
    let wasm_digests: Vec<String> = layers
        .iter()
        .filter(|l| l.media_type == WASM_MEDIA_TYPE)
        .map(|l| sha256_digest(&l.data))
        .collect();
    let config = serde_json::to_vec(&json!({
        "architecture": "wasm",
        "os": "wasip2",
        "layerDigests": wasm_digests,
    }))
    .unwrap_or_default();
    push_blob(&c, r, &config).await?;
    let mut descs = Vec::new();
    let mut summary = Vec::new();
    for l in &layers {
        push_blob(&c, r, &l.data).await?;
        let mut d = descriptor(l.media_type, &l.data);
        if let Some(t) = &l.title {
            d["annotations"] = json!({ TITLE: t });
        }
        summary.push((
            l.media_type.to_string(),
            sha256_digest(&l.data),
            l.data.len() as u64,
        ));
        descs.push(d);
    }
    let manifest = serde_json::to_vec(&json!({
        "schemaVersion": 2,
        "mediaType": MANIFEST_MEDIA_TYPE,
        "config": descriptor(WASM_CONFIG_MEDIA_TYPE, &config),
        "layers": descs,
    }))
    .unwrap_or_default();
    let digest = sha256_digest(&manifest);
    let manifest_size = manifest.len();
    push_manifest(&c, r, &r.inner, manifest).await?;
    let (signature_tag, signer) = match key {
        Some(k) => {
            let tag = sign_async(&c, r, &digest, manifest_size, k).await?;
            (Some(tag), Some(k.public().key_id()))
        }
        None => (None, None),
    };
    Ok(Published {
        reference: r.text.clone(),
        manifest_digest: digest,
        signature_tag,
        signer,
        layers: summary,
    })
}

async fn push_blob(c: &Client, r: &ArtifactRef, data: &[u8]) -> Result<(), DistError> {
    let digest = sha256_digest(data);
    if c.blob_exists(&r.inner, &digest).await.unwrap_or(false) {
        return Ok(());
    }
    c.push_blob(&r.inner, data.to_vec(), &digest)
        .await
        .map(|_| ())
        .map_err(registry_err(r, &format!("pushing blob {digest}")))
}

async fn push_manifest(
    c: &Client,
    r: &ArtifactRef,
    to: &Reference,
    manifest: Vec<u8>,
) -> Result<(), DistError> {
    c.push_manifest_raw(
        to,
        manifest,
        http::HeaderValue::from_static(MANIFEST_MEDIA_TYPE),
    )
    .await
    .map(|_| ())
    .map_err(registry_err(r, "pushing the manifest"))
}

/// The tag holding the signature of `manifest_digest` (`sha256-<hex>.sig`).
pub fn signature_tag(manifest_digest: &str) -> String {
    format!("{}.sig", manifest_digest.replace(':', "-"))
}

/// `warden plugin sign REF --key FILE`: signs the manifest `reference` names now.
pub fn sign(reference: &str, key: &SecretKey, opts: &Options) -> Result<Published, DistError> {
    let r = ArtifactRef::parse(reference)?;
    block(async || {
        with_deadline(&r, opts, async {
            let c = client(&r, opts);
            let auth = auth_for(r.inner.registry(), &opts.auth);
            let token = c
                .auth(&r.inner, &auth, oci_client::RegistryOperation::Push)
                .await
                .map_err(registry_err(&r, "authenticating for push"))?;
            let rd = reader(&r, opts, token, &auth)?;
            let (body, digest) = fetch_manifest(&rd, &r, &r.inner, opts.limits.manifest).await?;
            let tag = sign_async(&c, &r, &digest, body.len(), key).await?;
            Ok(Published {
                reference: r.text.clone(),
                manifest_digest: digest,
                signature_tag: Some(tag),
                signer: Some(key.public().key_id()),
                layers: Vec::new(),
            })
        })
        .await
    })
}

async fn sign_async(
    c: &Client,
    r: &ArtifactRef,
    manifest_digest: &str,
    manifest_size: usize,
    key: &SecretKey,
) -> Result<String, DistError> {
    let public = key.public();
    let envelope = serde_json::to_vec(&json!({
        "keyId": public.key_id(),
        "publicKey": public.to_line(),
        "signature": hex::encode(key.sign_manifest(manifest_digest)),
    }))
    .unwrap_or_default();
    let empty = b"{}".to_vec();
    push_blob(c, r, &empty).await?;
    push_blob(c, r, &envelope).await?;
    let manifest = serde_json::to_vec(&json!({
        "schemaVersion": 2,
        "mediaType": MANIFEST_MEDIA_TYPE,
        "artifactType": SIGNATURE_MEDIA_TYPE,
        "config": descriptor(EMPTY_MEDIA_TYPE, &empty),
        "layers": [descriptor(SIGNATURE_MEDIA_TYPE, &envelope)],
        "subject": {
            "mediaType": MANIFEST_MEDIA_TYPE,
            "digest": manifest_digest,
            "size": manifest_size,
        },
    }))
    .unwrap_or_default();
    let tag = signature_tag(manifest_digest);
    push_manifest(c, r, &r.with_tag(&tag), manifest).await?;
    Ok(tag)
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Manifest {
    schema_version: u32,
    #[serde(default)]
    media_type: Option<String>,
    config: Descriptor,
    #[serde(default)]
    layers: Vec<Descriptor>,
}

#[derive(Deserialize, Clone)]
#[serde(rename_all = "camelCase")]
struct Descriptor {
    media_type: String,
    digest: String,
    size: i64,
    #[serde(default)]
    annotations: Option<serde_json::Map<String, Value>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Envelope {
    key_id: String,
    public_key: String,
    signature: String,
}

/// Fetches a manifest and returns it with its digest as computed here (and checked against the
/// digest `at` names, if it names one).
async fn fetch_manifest(
    rd: &Reader,
    r: &ArtifactRef,
    at: &Reference,
    limit: u64,
) -> Result<(Vec<u8>, String), DistError> {
    match get_manifest(rd, r, at, limit).await? {
        Some(found) => Ok(found),
        None => Err(DistError::Registry {
            reference: r.text.clone(),
            reason: format!(
                "fetching the manifest: {} is not in the registry",
                at.digest().or(at.tag()).unwrap_or("latest")
            ),
        }),
    }
}

/// A manifest and its digest, `None` when the registry has none there.
async fn get_manifest(
    rd: &Reader,
    r: &ArtifactRef,
    at: &Reference,
    limit: u64,
) -> Result<Option<(Vec<u8>, String)>, DistError> {
    let name = at.digest().or(at.tag()).unwrap_or("latest");
    let body = match rd
        .get(
            &format!("manifests/{name}"),
            &format!("{MANIFEST_MEDIA_TYPE}, {DOCKER_MANIFEST_MEDIA_TYPE}"),
            limit,
            None,
        )
        .await
        .map_err(read_err(r, "fetching the manifest"))?
    {
        Read::Body(b) => b,
        Read::NotFound => return Ok(None),
    };
    let digest = sha256_digest(&body);
    if let Some(want) = at.digest()
        && want != digest
    {
        return Err(DistError::Hostile {
            reference: r.text.clone(),
            reason: format!("the manifest asked for as {want} hashes to {digest}"),
        });
    }
    Ok(Some((body, digest)))
}

/// `install` from OCI: fetches the manifest `reference` names (or `pinned`, when given),
/// verifies its signature as `req` demands, fetches and verifies every blob, and unpacks the
/// plugin into `dest` (which must not exist).
pub fn pull(
    reference: &str,
    pinned: Option<&str>,
    req: &Requirement,
    dest: &Path,
    opts: &Options,
) -> Result<Pulled, DistError> {
    let r = ArtifactRef::parse(reference)?;
    if let (Some(p), Some(d)) = (pinned, r.digest())
        && p != d
    {
        return Err(DistError::Reference {
            reference: reference.to_string(),
            reason: format!("names digest {d} but the entry pins {p}"),
        });
    }
    block(async || with_deadline(&r, opts, pull_async(&r, pinned, req, dest, opts)).await)
}

async fn pull_async(
    r: &ArtifactRef,
    pinned: Option<&str>,
    req: &Requirement,
    dest: &Path,
    opts: &Options,
) -> Result<Pulled, DistError> {
    let c = client(r, opts);
    let auth = auth_for(r.inner.registry(), &opts.auth);
    let token = c
        .auth(&r.inner, &auth, oci_client::RegistryOperation::Pull)
        .await
        .map_err(registry_err(r, "authenticating for pull"))?;
    let rd = reader(r, opts, token, &auth)?;
    let at = match pinned.or(r.digest()) {
        Some(d) => r.with_digest(d),
        None => r.inner.clone(),
    };
    let hostile = |reason: String| DistError::Hostile {
        reference: r.text.clone(),
        reason,
    };
    let (body, digest) = fetch_manifest(&rd, r, &at, opts.limits.manifest).await?;
    let m: Manifest = serde_json::from_slice(&body)
        .map_err(|e| hostile(format!("the manifest is not an OCI image manifest: {e}")))?;
    if m.schema_version != 2
        || m.media_type
            .as_deref()
            .is_some_and(|t| t != MANIFEST_MEDIA_TYPE && t != DOCKER_MANIFEST_MEDIA_TYPE)
    {
        return Err(hostile(format!(
            "unsupported manifest (schemaVersion {}, mediaType {})",
            m.schema_version,
            m.media_type.as_deref().unwrap_or("none")
        )));
    }

    // The signature comes before any layer: an artifact the policy refuses is not downloaded.
    let signature = verify_signature(&rd, r, &digest, req, opts).await?;

    let mut total: u64 = 0;
    for d in std::iter::once(&m.config).chain(&m.layers) {
        let size = u64::try_from(d.size)
            .map_err(|_| hostile(format!("blob {} has a negative size", d.digest)))?;
        if size > opts.limits.blob {
            return Err(hostile(format!(
                "blob {} declares {size} bytes, over the limit of {}",
                d.digest, opts.limits.blob
            )));
        }
        total += size;
        if !d.digest.starts_with("sha256:") || d.digest.len() != 71 {
            return Err(hostile(format!("blob digest `{}` is not sha256", d.digest)));
        }
    }
    if total > opts.limits.total {
        return Err(hostile(format!(
            "the artifact declares {total} bytes, over the limit of {}",
            opts.limits.total
        )));
    }
    if m.config.media_type != WASM_CONFIG_MEDIA_TYPE
        && m.config.media_type != oci_client::manifest::WASM_CONFIG_MEDIA_TYPE
    {
        return Err(hostile(format!(
            "config media type `{}` is not a WASM artifact's ({WASM_CONFIG_MEDIA_TYPE})",
            m.config.media_type
        )));
    }
    let wasm_layers = m
        .layers
        .iter()
        .filter(|l| l.media_type == WASM_MEDIA_TYPE || l.media_type == WASM_LEGACY_MEDIA_TYPE)
        .count();
    for l in &m.layers {
        if l.media_type != WASM_MEDIA_TYPE
            && l.media_type != WASM_LEGACY_MEDIA_TYPE
            && l.media_type != FILES_MEDIA_TYPE
        {
            return Err(hostile(format!(
                "layer {} has media type `{}`; a plugin has only {WASM_MEDIA_TYPE} and {FILES_MEDIA_TYPE} layers",
                l.digest, l.media_type
            )));
        }
    }

    let lone_component = wasm_layers == 1 && m.layers.len() == 1;
    let mut cached_blobs = 0;
    let mut blobs = Vec::new();
    for l in &m.layers {
        let (data, cached) = fetch_blob(&rd, r, l, opts).await?;
        cached_blobs += usize::from(cached);
        blobs.push(data);
    }

    // Everything is verified: only now is anything written.
    std::fs::create_dir(dest).map_err(io(dest))?;
    for (l, data) in m.layers.iter().zip(&blobs) {
        if l.media_type == FILES_MEDIA_TYPE {
            unpack_files(data, dest, &format!("layer {}", l.digest)).map_err(&hostile)?;
            continue;
        }
        let title = l
            .annotations
            .as_ref()
            .and_then(|a| a.get(TITLE))
            .and_then(Value::as_str)
            .map(str::to_string);
        let name = match title {
            Some(t) => t,
            // A lone component pushed by another tool (`wkg oci push`) carries no file name.
            None if wasm_layers == 1 => format!("{}.wasm", r.name()),
            None => {
                return Err(hostile(format!(
                    "WASM layer {} has no `{TITLE}` annotation naming its file",
                    l.digest
                )));
            }
        };
        let rel = safe_relative(&name).map_err(|e| hostile(format!("layer {}: {e}", l.digest)))?;
        write_file(dest, &rel, data, false)?;
        if lone_component {
            // A component pushed alone by another tool (`wkg oci push`) carries no
            // `warden.toml`: it is declared here as the plugin's one tool.
            let component = component_name(r.name());
            let toml = format!(
                "tools = [\"{component}\"]\n\n[components.{component}]\npath = \"{}\"\nworld = \"tool\"\n",
                rel.to_string_lossy().replace('\\', "/").replace('"', "")
            );
            write_file(dest, Path::new("warden.toml"), toml.as_bytes(), false)?;
        }
    }
    Ok(Pulled {
        repository: r.repository(),
        manifest_digest: digest,
        signature,
        cached_blobs,
    })
}

/// A component name (`[a-z0-9][a-z0-9_-]*`) made from a repository name.
fn component_name(repo: &str) -> String {
    let name: String = repo
        .chars()
        .map(|c| match c.to_ascii_lowercase() {
            c @ ('a'..='z' | '0'..='9' | '_' | '-') => c,
            _ => '-',
        })
        .collect();
    if name.starts_with(|c: char| c.is_ascii_alphanumeric()) {
        name
    } else {
        format!("c{name}")
    }
}

/// A blob's bytes, verified: from the cache when a copy there still hashes right, else
/// streamed from the registry with its size bounded by the descriptor and its digest checked.
async fn fetch_blob(
    rd: &Reader,
    r: &ArtifactRef,
    d: &Descriptor,
    opts: &Options,
) -> Result<(Vec<u8>, bool), DistError> {
    let cache_file = opts.cache_dir.as_ref().map(|dir| {
        dir.join("sha256")
            .join(d.digest.trim_start_matches("sha256:"))
    });
    if let Some(f) = &cache_file
        && let Ok(data) = std::fs::read(f)
    {
        if sha256_digest(&data) == d.digest && data.len() as i64 == d.size {
            return Ok((data, true));
        }
        let _ = std::fs::remove_file(f);
    }
    let hostile = |reason: String| DistError::Hostile {
        reference: r.text.clone(),
        reason,
    };
    let size = u64::try_from(d.size)
        .map_err(|_| hostile(format!("blob {} has a negative size", d.digest)))?;
    let data = match rd
        .get(
            &format!("blobs/{}", d.digest),
            "*/*",
            opts.limits.blob,
            Some((&d.digest, size)),
        )
        .await
        .map_err(read_err(r, &format!("fetching blob {}", d.digest)))?
    {
        Read::Body(b) => b,
        Read::NotFound => {
            return Err(DistError::Registry {
                reference: r.text.clone(),
                reason: format!("blob {} is not in the registry", d.digest),
            });
        }
    };
    if let Some(f) = &cache_file
        && let Some(dir) = f.parent()
        && std::fs::create_dir_all(dir).is_ok()
        && let Ok(tmp) = tempfile::NamedTempFile::new_in(dir)
        && std::fs::write(tmp.path(), &data).is_ok()
    {
        // A cache that cannot be written only costs the next pull a download.
        let _ = tmp.persist(f);
    }
    Ok((data, false))
}

/// Checks the signature of `digest` against `req`: the trusted signature; `None` when no
/// trusted signature exists and none is required. A signature by a trusted key that does not
/// verify is always refused.
async fn verify_signature(
    rd: &Reader,
    r: &ArtifactRef,
    digest: &str,
    req: &Requirement,
    opts: &Options,
) -> Result<Option<SignatureRecord>, DistError> {
    let refuse = |reason: String| DistError::Signature {
        reference: r.text.clone(),
        reason,
    };
    let tag = signature_tag(digest);
    let sig_ref = r.with_tag(&tag);
    let limit = opts.limits.manifest.min(64 * 1024);
    let body = match get_manifest(rd, r, &sig_ref, limit).await {
        Ok(Some((b, _))) => b,
        Ok(None) => {
            return match &req.required_by {
                Some(why) => Err(refuse(format!(
                    "manifest {digest} is not signed (no `{tag}`), and a signature is required: {why}"
                ))),
                None => Ok(None),
            };
        }
        Err(DistError::Hostile { .. }) => {
            return Err(refuse(format!("signature manifest {tag} is oversized")));
        }
        Err(e) => return Err(e),
    };
    let m: Manifest = serde_json::from_slice(&body)
        .map_err(|e| refuse(format!("signature manifest {tag} is malformed: {e}")))?;
    let Some(layer) = m
        .layers
        .iter()
        .find(|l| l.media_type == SIGNATURE_MEDIA_TYPE)
    else {
        return Err(refuse(format!(
            "signature manifest {tag} holds no signature"
        )));
    };
    if layer.size < 0 || layer.size > 64 * 1024 {
        return Err(refuse(format!("signature {tag} is oversized")));
    }
    let sig_opts = Options {
        cache_dir: None,
        ..opts.clone()
    };
    let (data, _) = fetch_blob(rd, r, layer, &sig_opts).await?;
    let env: Envelope = serde_json::from_slice(&data)
        .map_err(|e| refuse(format!("signature {tag} is malformed: {e}")))?;
    let key =
        PublicKey::parse(&env.public_key).map_err(|e| refuse(format!("signature {tag}: {e}")))?;
    let sig = hex::decode(&env.signature)
        .map_err(|e| refuse(format!("signature {tag}: bad hex: {e}")))?;
    let trusted = req.keys.contains(&key);
    let valid = key.verify_manifest(digest, &sig);
    let id = key.key_id();
    match (trusted, valid) {
        (true, true) => Ok(Some(SignatureRecord {
            key_id: id,
            public_key: key.to_line(),
            signature: env.signature,
        })),
        (true, false) => Err(refuse(format!(
            "the signature by trusted key {id} does not verify for manifest {digest}"
        ))),
        (false, _) => match &req.required_by {
            Some(why) => Err(refuse(format!(
                "signed by key {id} (claimed id {}), which is not trusted here; a trusted signature is required: {why}. Trust the publisher's key with `warden key trust KEY.pub --for {}` if you mean to",
                env.key_id,
                r.repository()
            ))),
            None => Ok(None),
        },
    }
}

/// Re-checks a recorded install: the manifest the registry serves under `digest` still carries
/// a valid signature by `signer` among the trusted keys.
pub fn verify_remote(
    reference: &str,
    digest: &str,
    req: &Requirement,
    opts: &Options,
) -> Result<Option<SignatureRecord>, DistError> {
    let r = ArtifactRef::parse(reference)?;
    block(async || {
        with_deadline(&r, opts, async {
            let c = client(&r, opts);
            let auth = auth_for(r.inner.registry(), &opts.auth);
            let token = c
                .auth(&r.inner, &auth, oci_client::RegistryOperation::Pull)
                .await
                .map_err(registry_err(&r, "authenticating for pull"))?;
            let rd = reader(&r, opts, token, &auth)?;
            fetch_manifest(&rd, &r, &r.with_digest(digest), opts.limits.manifest).await?;
            verify_signature(&rd, &r, digest, req, opts).await
        })
        .await
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references() {
        let r = ArtifactRef::parse("oci://127.0.0.1:5000/team/tool:1.0").unwrap();
        assert_eq!(r.repository(), "127.0.0.1:5000/team/tool");
        assert_eq!(r.tag(), Some("1.0"));
        assert_eq!(r.name(), "tool");
        assert!(ArtifactRef::parse("team/tool:1").is_err());
        assert!(is_loopback("127.0.0.1:5000"));
        assert!(is_loopback("localhost"));
        assert!(is_loopback("[::1]:80"));
        assert!(!is_loopback("registry.example.com:5000"));
        assert_eq!(signature_tag("sha256:abcd"), "sha256-abcd.sig".to_string());
    }
}
