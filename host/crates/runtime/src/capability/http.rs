//! `warden:plugin/http`: one request, checked before any byte leaves the host.
//!
//! The URL must be `http` or `https` and match a `net` grant pattern, then pass the policy
//! (`WebFetch` rules). The host resolves the name itself and refuses loopback, private,
//! link-local, unique-local, CGNAT, multicast and unspecified addresses (cloud metadata at
//! 169.254.169.254 included) unless the matching grant names that host or IP without a
//! wildcard. The connection is pinned to the checked address, so a second DNS answer cannot
//! swap it (DNS rebinding); redirects are not followed (each hop would need the same checks)
//! and environment proxies are ignored.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Duration;

use url::{Host as UrlHost, Url};
use wasmtime::component::HasSelf;

use super::Provider;
use crate::bindings::{WitVersion, since_v0_1};
use crate::latest::http::{Host, HttpError, Request, Response};
use crate::sandbox::SandboxState;
use warden_vocab::Capability;

pub(super) const PROVIDER: Provider = Provider {
    capability: Some(Capability::Net),
    interface: "warden:plugin/http",
    link: |l, v| match v {
        WitVersion::V0_1 => {
            since_v0_1::http::add_to_linker::<SandboxState, HasSelf<SandboxState>>(l, |s| s)
        }
    },
};

/// The `net` part of a grant: URL patterns `scheme://host[:port]`, `*` a whole host label or
/// the port; patterns that do not parse grant nothing.
#[derive(Debug, Clone, Copy)]
pub struct NetGrant<'a>(pub &'a [String]);

impl NetGrant<'_> {
    /// Whether the guest may fetch `url` (before the policy and the address checks).
    pub fn allows(&self, url: &str) -> bool {
        let Ok(url) = Url::parse(url) else {
            return false;
        };
        let (Some(host), Some(port)) = (url.host(), url.port_or_known_default()) else {
            return false;
        };
        let host = match host {
            UrlHost::Domain(d) => d.trim_end_matches('.').to_ascii_lowercase(),
            UrlHost::Ipv4(ip) => ip.to_string(),
            UrlHost::Ipv6(ip) => ip.to_string(),
        };
        self.reach(url.scheme(), &host, port).is_some()
    }

    /// How the grant covers `scheme://host:port`: `None` not at all, `Some(true)` through a
    /// pattern naming the host without wildcards (which may reach a local address).
    fn reach(&self, scheme: &str, host: &str, port: u16) -> Option<bool> {
        self.0
            .iter()
            .filter_map(|p| NetPattern::parse(p))
            .filter(|p| p.matches(scheme, host, port))
            .map(|p| p.explicit_host())
            .reduce(|a, b| a || b)
    }
}

/// Largest response body accepted.
pub const MAX_BODY_BYTES: usize = 16 << 20;
/// Timeout when the guest gives none (still capped by the call's deadline).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);
const MAX_URL_BYTES: usize = 8192;
const MAX_HEADERS: usize = 256;

/// One parsed `net` grant: `scheme://host[:port]`, `*` a whole label or the port.
#[derive(Debug, PartialEq, Eq)]
struct NetPattern {
    scheme: String,
    host: Vec<String>,
    /// `None` is `*`.
    port: Option<u16>,
}

impl NetPattern {
    fn parse(p: &str) -> Option<NetPattern> {
        let (scheme, rest) = p.split_once("://")?;
        let scheme = scheme.to_ascii_lowercase();
        let default_port = match scheme.as_str() {
            "http" => 80,
            "https" => 443,
            _ => return None,
        };
        let rest = rest.strip_suffix('/').unwrap_or(rest);
        let (host, port) = if let Some(v6) = rest.strip_prefix('[') {
            let (h, after) = v6.split_once(']')?;
            (h, after.strip_prefix(':'))
        } else {
            match rest.rsplit_once(':') {
                Some((h, port)) => (h, Some(port)),
                None => (rest, None),
            }
        };
        let port = match port {
            None => Some(default_port),
            Some("*") => None,
            Some(n) => Some(n.parse().ok()?),
        };
        if host.is_empty() {
            return None;
        }
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        let labels = if host.contains(':') {
            // An IPv6 literal is one "label".
            vec![host]
        } else {
            host.split('.').map(str::to_string).collect()
        };
        Some(NetPattern {
            scheme,
            host: labels,
            port,
        })
    }

    fn matches(&self, scheme: &str, host: &str, port: u16) -> bool {
        if self.scheme != scheme || self.port.is_some_and(|p| p != port) {
            return false;
        }
        let labels: Vec<&str> = if host.contains(':') {
            vec![host]
        } else {
            host.split('.').collect()
        };
        labels.len() == self.host.len()
            && self
                .host
                .iter()
                .zip(&labels)
                .all(|(p, l)| p == "*" || p == l)
    }

    /// Whether the host is named without wildcards (which lets it reach a local address).
    fn explicit_host(&self) -> bool {
        self.host.iter().all(|l| l != "*")
    }
}

/// Whether an address is local, private or otherwise not on the public internet.
fn is_internal(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_internal_v4(v4),
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_internal_v4(v4);
            }
            let seg0 = v6.segments()[0];
            v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (seg0 & 0xfe00) == 0xfc00 // unique local fc00::/7
                || (seg0 & 0xffc0) == 0xfe80 // link-local fe80::/10
                || (seg0 & 0xffc0) == 0xfec0 // site-local fec0::/10 (deprecated, still routed by some)
                || v6.segments()[..6] == [0, 0, 0, 0, 0, 0] // IPv4-compatible ::a.b.c.d
                || (seg0 == 0x64 && v6.segments()[1] == 0xff9b) // NAT64 64:ff9b::/96
                || (seg0 == 0x2001 && v6.segments()[1] == 0x0db8) // documentation
        }
    }
}

fn is_internal_v4(v4: Ipv4Addr) -> bool {
    let o = v4.octets();
    v4.is_loopback()
        || v4.is_private()
        || v4.is_link_local()
        || v4.is_unspecified()
        || v4.is_broadcast()
        || v4.is_multicast()
        || v4.is_documentation()
        || o[0] == 0
        || (o[0] == 100 && (o[1] & 0xc0) == 64) // CGNAT 100.64.0.0/10
        || (o[0] == 192 && o[1] == 0 && o[2] == 0) // IETF protocol assignments
        || (o[0] == 198 && (o[1] & 0xfe) == 18) // benchmarking 198.18.0.0/15
        || o[0] >= 240 // reserved
}

fn denied(msg: String) -> HttpError {
    HttpError::Denied(msg)
}

/// The checked target of a request: the URL and the address to connect to.
struct Target {
    url: Url,
    host: String,
    addr: SocketAddr,
}

impl SandboxState {
    async fn http_target(&mut self, raw: &str) -> Result<Target, HttpError> {
        if raw.len() > MAX_URL_BYTES {
            return Err(HttpError::InvalidUrl(format!(
                "URL is longer than {MAX_URL_BYTES} bytes"
            )));
        }
        let url = Url::parse(raw).map_err(|e| HttpError::InvalidUrl(format!("{raw}: {e}")))?;
        let scheme = url.scheme().to_string();
        if scheme != "http" && scheme != "https" {
            return Err(HttpError::InvalidUrl(format!(
                "{raw}: only http and https URLs are supported"
            )));
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(HttpError::InvalidUrl(format!(
                "{url}: credentials in the URL are not supported; send an Authorization header"
            )));
        }
        let (host, literal) = match url.host() {
            Some(UrlHost::Domain(d)) => (d.trim_end_matches('.').to_ascii_lowercase(), None),
            Some(UrlHost::Ipv4(ip)) => (ip.to_string(), Some(IpAddr::V4(ip))),
            Some(UrlHost::Ipv6(ip)) => (ip.to_string(), Some(IpAddr::V6(ip))),
            None => return Err(HttpError::InvalidUrl(format!("{raw}: no host"))),
        };
        let Some(port) = url.port_or_known_default() else {
            return Err(HttpError::InvalidUrl(format!("{raw}: no port")));
        };
        let Some(explicit) = NetGrant(&self.grant.net).reach(&scheme, &host, port) else {
            return Err(denied(format!(
                "{scheme}://{host}:{port} is not granted (net grant: {})",
                if self.grant.net.is_empty() {
                    "none".to_string()
                } else {
                    self.grant.net.join(", ")
                }
            )));
        };
        self.ctx
            .policy
            .check_url(url.as_str())
            .map_err(|rule| denied(format!("{url} is denied: {rule}")))?;

        let addrs: Vec<SocketAddr> = match literal {
            Some(ip) => vec![SocketAddr::new(ip, port)],
            None => {
                let budget = self.remaining().min(Duration::from_secs(10));
                match tokio::time::timeout(budget, tokio::net::lookup_host((host.as_str(), port)))
                    .await
                {
                    Ok(Ok(a)) => a.collect(),
                    Ok(Err(e)) => {
                        return Err(HttpError::Failed(format!("cannot resolve {host}: {e}")));
                    }
                    Err(_) => return Err(HttpError::Timeout),
                }
            }
        };
        let mut refused = Vec::new();
        for addr in addrs {
            if explicit || !is_internal(addr.ip()) {
                return Ok(Target { url, host, addr });
            }
            refused.push(addr.ip().to_string());
        }
        Err(if refused.is_empty() {
            HttpError::Failed(format!("{host} has no addresses"))
        } else {
            denied(format!(
                "{host} resolves to a local or private address ({}); only a grant naming this host or IP exactly (e.g. {scheme}://{host}:{port}) may reach it",
                refused.join(", ")
            ))
        })
    }

    async fn http_fetch(&mut self, req: Request) -> Result<Response, HttpError> {
        let target = self.http_target(&req.url).await?;
        let limit = req
            .timeout_ms
            .map(|ms| Duration::from_millis(ms.into()))
            .unwrap_or(DEFAULT_TIMEOUT)
            .min(self.remaining());
        if limit.is_zero() {
            return Err(HttpError::Timeout);
        }
        let method = reqwest::Method::from_bytes(req.method.as_bytes())
            .map_err(|_| HttpError::InvalidUrl(format!("invalid method {:?}", req.method)))?;
        if req.headers.len() > MAX_HEADERS {
            return Err(HttpError::Failed(format!(
                "more than {MAX_HEADERS} request headers"
            )));
        }
        let mut headers = reqwest::header::HeaderMap::new();
        for (k, v) in &req.headers {
            let name = reqwest::header::HeaderName::from_bytes(k.as_bytes())
                .map_err(|_| HttpError::Failed(format!("invalid header name {k:?}")))?;
            // The Host header must match the checked host, so it is the host's to set.
            if name == reqwest::header::HOST {
                continue;
            }
            let value = reqwest::header::HeaderValue::from_str(v)
                .map_err(|_| HttpError::Failed(format!("invalid value for header {k}")))?;
            headers.append(name, value);
        }
        let client = reqwest::Client::builder()
            .resolve(&target.host, target.addr)
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .timeout(limit)
            .build()
            .map_err(|e| HttpError::Failed(format!("cannot build the HTTP client: {e}")))?;
        let mut builder = client.request(method, target.url.clone()).headers(headers);
        if let Some(body) = req.body {
            builder = builder.body(body);
        }
        let work = async {
            let mut resp = builder.send().await.map_err(map_err)?;
            let status = resp.status().as_u16();
            let headers = resp
                .headers()
                .iter()
                .map(|(k, v)| {
                    (
                        k.as_str().to_string(),
                        String::from_utf8_lossy(v.as_bytes()).into_owned(),
                    )
                })
                .collect();
            if resp
                .content_length()
                .is_some_and(|n| n > MAX_BODY_BYTES as u64)
            {
                return Err(too_large(&target.url));
            }
            let mut body = Vec::new();
            while let Some(chunk) = resp.chunk().await.map_err(map_err)? {
                if body.len() + chunk.len() > MAX_BODY_BYTES {
                    return Err(too_large(&target.url));
                }
                body.extend_from_slice(&chunk);
            }
            Ok(Response {
                status,
                headers,
                body,
            })
        };
        match tokio::time::timeout(limit, work).await {
            Ok(r) => r,
            Err(_) => Err(HttpError::Timeout),
        }
    }
}

fn too_large(url: &Url) -> HttpError {
    HttpError::Failed(format!(
        "{url}: response body is over the {MAX_BODY_BYTES}-byte limit"
    ))
}

fn map_err(e: reqwest::Error) -> HttpError {
    if e.is_timeout() {
        HttpError::Timeout
    } else {
        HttpError::Failed(format!("{e}"))
    }
}

impl Host for SandboxState {
    async fn fetch(&mut self, request: Request) -> wasmtime::Result<Result<Response, HttpError>> {
        Ok(self.http_fetch(request).await)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns() {
        let p = NetPattern::parse("https://*.example.com").expect("pattern");
        assert!(p.matches("https", "api.example.com", 443));
        assert!(!p.matches("https", "a.b.example.com", 443));
        assert!(!p.matches("http", "api.example.com", 80));
        assert!(!p.explicit_host());
        let p = NetPattern::parse("http://127.0.0.1:*").expect("pattern");
        assert!(p.matches("http", "127.0.0.1", 8080));
        assert!(p.explicit_host());
        assert!(NetPattern::parse("ftp://x").is_none());
    }

    #[test]
    fn allows() {
        let granted = [
            "https://api.github.com".to_string(),
            "https://*.example.com:*".to_string(),
            "http://127.0.0.1:8080".to_string(),
            "not a pattern".to_string(),
        ];
        let table = [
            ("https://api.github.com/repos", true),
            ("https://api.github.com:443/", true),
            ("https://API.github.com./x", true),
            ("http://api.github.com/", false),
            ("https://api.github.com:8443/", false),
            ("https://github.com/", false),
            ("https://x.example.com:9999/", true),
            ("https://a.b.example.com/", false),
            ("https://example.com/", false),
            ("http://127.0.0.1:8080/", true),
            ("http://127.0.0.1/", false),
            ("ftp://api.github.com/", false),
            ("not a url", false),
        ];
        for (url, want) in table {
            assert_eq!(NetGrant(&granted).allows(url), want, "{url}");
        }
        assert!(!NetGrant(&[]).allows("https://api.github.com/"));
    }

    #[test]
    fn internal_addresses() {
        for ip in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "100.64.0.1",
            "::1",
            "::",
            "fd00::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
        ] {
            let ip: IpAddr = ip.parse().expect("ip");
            assert!(is_internal(ip), "{ip}");
        }
        for ip in ["1.1.1.1", "93.184.216.34", "2606:4700::1111"] {
            let ip: IpAddr = ip.parse().expect("ip");
            assert!(!is_internal(ip), "{ip}");
        }
    }
}
