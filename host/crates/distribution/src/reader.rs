//! Reads from a registry (manifests and blobs) with an HTTP client of Warden's own, so the
//! redirects a registry answers with are followed only as [`redirect_refusal`] allows, and
//! every body is bounded while it streams.
//!
//! Redirect policy: registries commonly redirect blob downloads to a storage service on
//! another host (a CDN or a signed bucket URL), so cross-host redirects are needed; their
//! bytes are verified against the digest anyway. What is refused is where a redirect could
//! make Warden send a request it would not send on its own: a hop away from the current
//! origin (scheme, host, port) must be `https`, so a registry reached over TLS never
//! downgrades to plain HTTP and a plain-HTTP registry (loopback or `--insecure`) cannot
//! point at other plain-HTTP services; and it may not lead to `localhost`, a loopback,
//! private, link-local or unspecified address unless the registry itself is on loopback. Only
//! `http` and `https` are followed, at most [`MAX_REDIRECTS`] hops. Credentials are not sent
//! across origins.

use std::net::IpAddr;
use std::time::Duration;

use futures_util::StreamExt as _;
use reqwest::{StatusCode, Url};
use sha2::{Digest as _, Sha256};

/// Hops a registry read may be redirected through.
pub const MAX_REDIRECTS: usize = 5;

/// Why the redirect from `from` to `to` is refused, or `None` when it may be followed.
/// `registry_loopback`: the registry itself is on the loopback interface.
pub fn redirect_refusal(registry_loopback: bool, from: &Url, to: &Url) -> Option<String> {
    if to.scheme() != "https" && to.scheme() != "http" {
        return Some(format!(
            "a redirect to `{to}` (only http and https are followed)"
        ));
    }
    let same_origin = from.scheme() == to.scheme()
        && from.host_str() == to.host_str()
        && from.port_or_known_default() == to.port_or_known_default();
    if same_origin {
        return None;
    }
    if to.scheme() != "https" {
        return Some(format!(
            "a redirect from {} to plain-HTTP `{to}` (a redirect to another origin must be https)",
            origin(from)
        ));
    }
    if !registry_loopback && is_internal(to) {
        return Some(format!(
            "a redirect from {} to `{to}`, a local or private address",
            origin(from)
        ));
    }
    None
}

fn origin(u: &Url) -> String {
    match u.port() {
        Some(p) => format!("{}://{}:{p}", u.scheme(), u.host_str().unwrap_or_default()),
        None => format!("{}://{}", u.scheme(), u.host_str().unwrap_or_default()),
    }
}

fn is_internal(u: &Url) -> bool {
    let Some(host) = u.host_str() else {
        return true;
    };
    let h = host.trim_start_matches('[').trim_end_matches(']');
    if h.eq_ignore_ascii_case("localhost") || h.to_ascii_lowercase().ends_with(".localhost") {
        return true;
    }
    match h.parse::<IpAddr>() {
        Ok(IpAddr::V4(ip)) => {
            ip.is_loopback()
                || ip.is_private()
                || ip.is_link_local()
                || ip.is_unspecified()
                || ip.is_broadcast()
        }
        Ok(IpAddr::V6(ip)) => {
            if let Some(v4) = ip.to_ipv4_mapped() {
                return is_internal(&Url::parse(&format!("https://{v4}/")).unwrap_or(u.clone()));
            }
            let first = ip.segments()[0];
            ip.is_loopback()
                || ip.is_unspecified()
                || (first & 0xfe00) == 0xfc00 // unique local
                || (first & 0xffc0) == 0xfe80 // link local
        }
        Err(_) => false,
    }
}

/// What a read of a registry path came to.
pub enum Read {
    /// The body, whole and within its bound.
    Body(Vec<u8>),
    /// 404.
    NotFound,
}

/// Why a read failed.
pub enum ReadError {
    /// The registry refused or could not be reached (status, connection, redirect refused).
    Registry(String),
    /// The body broke a bound or its digest.
    Hostile(String),
}

/// A client for one registry repository.
pub struct Reader {
    http: reqwest::Client,
    base: Url,
    authorization: Option<String>,
}

impl Reader {
    /// A reader of `registry`/`repository` over `scheme`, sending `authorization` (a whole
    /// `Authorization` header value) to the registry's origin only.
    pub fn new(
        scheme: &str,
        registry: &str,
        repository: &str,
        authorization: Option<String>,
        timeout: Duration,
        registry_loopback: bool,
    ) -> Result<Reader, String> {
        let base = Url::parse(&format!("{scheme}://{registry}/v2/{repository}/"))
            .map_err(|e| format!("registry URL: {e}"))?;
        let policy = reqwest::redirect::Policy::custom(move |attempt| {
            if attempt.previous().len() > MAX_REDIRECTS {
                return attempt.error(format!("more than {MAX_REDIRECTS} redirects"));
            }
            let refusal = attempt
                .previous()
                .last()
                .and_then(|from| redirect_refusal(registry_loopback, from, attempt.url()));
            match refusal {
                Some(why) => attempt.error(format!("refused {why}")),
                None => attempt.follow(),
            }
        });
        let http = reqwest::Client::builder()
            .redirect(policy)
            .read_timeout(timeout)
            .connect_timeout(timeout)
            .user_agent(concat!("warden/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| format!("HTTP client: {e}"))?;
        Ok(Reader {
            http,
            base,
            authorization,
        })
    }

    /// `GET <base><path>` with `accept`, its body read up to `limit` bytes (and exactly `want`
    /// bytes hashing to `digest`, when given).
    pub async fn get(
        &self,
        path: &str,
        accept: &str,
        limit: u64,
        expect: Option<(&str, u64)>,
    ) -> Result<Read, ReadError> {
        let url = self
            .base
            .join(path)
            .map_err(|e| ReadError::Registry(format!("URL for {path}: {e}")))?;
        let mut req = self.http.get(url.clone()).header("Accept", accept);
        if let Some(a) = &self.authorization {
            // reqwest drops it on a redirect to another origin.
            req = req.header("Authorization", a);
        }
        let resp = req.send().await.map_err(|e| {
            let mut msg = e.to_string();
            let mut src = std::error::Error::source(&e);
            while let Some(s) = src {
                msg = format!("{msg}: {s}");
                src = s.source();
            }
            ReadError::Registry(format!("GET {url}: {msg}"))
        })?;
        let status = resp.status();
        if status == StatusCode::NOT_FOUND {
            return Ok(Read::NotFound);
        }
        if status.is_redirection() {
            // The client hands back a redirect it would not follow (a scheme it cannot fetch).
            let to = resp
                .headers()
                .get("Location")
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default();
            return Err(ReadError::Registry(format!(
                "GET {url}: refused a redirect to `{to}` (HTTP {status}; only http and https are followed)"
            )));
        }
        if !status.is_success() {
            let what = match status {
                StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => {
                    " (not authorized: check the Docker config file's credentials or --username)"
                }
                _ => "",
            };
            let body = resp.bytes().await.unwrap_or_default();
            let body = String::from_utf8_lossy(&body[..body.len().min(300)]).to_string();
            return Err(ReadError::Registry(format!(
                "GET {url}: HTTP {status}{what}: {}",
                body.trim()
            )));
        }
        let bound = expect.map_or(limit, |(_, size)| size.min(limit));
        if let Some(n) = resp.content_length()
            && (n > bound || expect.is_some_and(|(_, size)| n != size))
        {
            return Err(ReadError::Hostile(match expect {
                Some((d, size)) => {
                    format!("blob {d} is served with {n} bytes, the manifest says {size}")
                }
                None => format!("`{path}` is {n} bytes, over the limit of {limit}"),
            }));
        }
        let mut data = Vec::with_capacity(bound.min(64 * 1024 * 1024) as usize);
        let mut h = Sha256::new();
        let mut stream = resp.bytes_stream();
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(|e| ReadError::Registry(format!("reading {url}: {e}")))?;
            if data.len() as u64 + chunk.len() as u64 > bound {
                return Err(ReadError::Hostile(match expect {
                    Some((d, size)) => {
                        format!("blob {d} is longer than the {size} bytes the manifest says")
                    }
                    None => format!("`{path}` is over the limit of {limit} bytes"),
                }));
            }
            h.update(&chunk);
            data.extend_from_slice(&chunk);
        }
        if let Some((d, size)) = expect {
            let got = format!("sha256:{}", hex::encode(h.finalize()));
            if got != d || data.len() as u64 != size {
                return Err(ReadError::Hostile(format!(
                    "blob {d} hashes to {got} ({} bytes)",
                    data.len()
                )));
            }
        }
        Ok(Read::Body(data))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn redirect_policy() {
        let reg = u("https://registry.example.com/v2/team/tool/blobs/sha256:00");
        // Storage on another host over TLS: followed.
        assert!(redirect_refusal(false, &reg, &u("https://cdn.example.net/b?sig=1")).is_none());
        // Same origin: followed.
        assert!(redirect_refusal(false, &reg, &u("https://registry.example.com/other")).is_none());
        // Downgrade, other schemes, internal addresses: refused.
        for bad in [
            "http://registry.example.com/b",
            "http://cdn.example.net/b",
            "file:///etc/passwd",
            "https://127.0.0.1/b",
            "https://localhost:8443/b",
            "https://10.0.0.1/b",
            "https://169.254.169.254/latest/meta-data",
            "https://[::1]/b",
            "https://[::ffff:127.0.0.1]/b",
            "https://[fd00::1]/b",
        ] {
            assert!(redirect_refusal(false, &reg, &u(bad)).is_some(), "{bad}");
        }
        // A loopback plain-HTTP registry: within itself, or to TLS, not to other plain HTTP.
        let local = u("http://127.0.0.1:5000/v2/t/blobs/sha256:00");
        assert!(redirect_refusal(true, &local, &u("http://127.0.0.1:5000/x")).is_none());
        assert!(redirect_refusal(true, &local, &u("https://127.0.0.1:5443/x")).is_none());
        assert!(redirect_refusal(true, &local, &u("http://127.0.0.1:6000/x")).is_some());
        assert!(redirect_refusal(true, &local, &u("http://169.254.169.254/x")).is_some());
    }
}
