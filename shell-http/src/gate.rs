//! Whether a request is admitted at all, before any MCP is read: its `Host` (DNS rebinding), its
//! `Origin` (a web page calling bb), its bearer token; and which CORS headers an allowed origin gets.

use std::net::SocketAddr;

use hyper::header::{AUTHORIZATION, HOST, HeaderValue, ORIGIN};
use hyper::{HeaderMap, Uri};

use crate::options::HttpOptions;

/// The headers a browser-resident client may send (the MCP set, plus the per-user token header).
const ALLOWED_HEADERS: &str =
    "content-type, mcp-session-id, mcp-protocol-version, mcp-method, mcp-name, last-event-id, authorization";

/// Why a request was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// The `Host` is not one this server answers to (403).
    Host,
    /// The `Origin` is not on the allow-list (403).
    Origin,
    /// No bearer token (401).
    NoToken,
    /// A bearer token that is not the server's (401).
    WrongToken,
    /// More than one `Host` or `Origin` header: which one counts is ambiguous (400).
    Ambiguous(&'static str),
    /// A request target in absolute form (`POST http://other.example/mcp`) whose authority is not
    /// the `Host` (400): which host the client meant is ambiguous, and a proxy may route by either.
    Target,
}

/// The admission rules, made once from the options and the bound address.
#[derive(Debug)]
pub(crate) struct Gate {
    hosts: Vec<String>,
    origins: Vec<String>,
    token: Option<Vec<u8>>,
    allowed_headers: String,
}

impl Gate {
    /// The rules for a server bound to `addr`.
    pub(crate) fn new(options: &HttpOptions, addr: SocketAddr) -> Gate {
        let port = addr.port();
        let mut hosts: Vec<String> =
            ["localhost", "127.0.0.1", "[::1]"].iter().map(|h| format!("{h}:{port}")).collect();
        if !addr.ip().is_unspecified() {
            hosts.push(authority(addr));
        }
        hosts.extend(options.allow_hosts.iter().map(|h| h.trim().to_ascii_lowercase()));
        let mut origins: Vec<String> = hosts[..3].iter().map(|h| format!("http://{h}")).collect();
        origins.extend(options.allow_origins.iter().map(|o| normalize_origin(o)));
        // With logins, bb's own pages (the consent form) post from its public origin.
        if let Some(origin) = options.oauth.as_ref().and_then(|o| o.public_origin()) {
            origins.push(normalize_origin(&origin));
        }
        let mut allowed_headers = ALLOWED_HEADERS.to_owned();
        if let Some(h) = &options.per_user_token_header {
            allowed_headers.push_str(", ");
            allowed_headers.push_str(&h.to_ascii_lowercase());
        }
        Gate { hosts, origins, token: options.token.as_ref().map(|t| t.as_bytes().to_vec()), allowed_headers }
    }

    /// Checks Host, then Origin, then the bearer token. On success, returns the allowed origin the
    /// request came from, if it named one (for CORS).
    pub(crate) fn admit(&self, target: &Uri, headers: &HeaderMap) -> Result<Option<HeaderValue>, Refusal> {
        let origin = self.admit_preflight(target, headers)?;
        if let Some(expected) = &self.token {
            let given = headers.get(AUTHORIZATION).and_then(|v| v.to_str().ok()).and_then(bearer);
            match given {
                None => return Err(Refusal::NoToken),
                Some(t) if !same_secret(t.as_bytes(), expected) => return Err(Refusal::WrongToken),
                Some(_) => {}
            }
        }
        Ok(origin)
    }

    /// Checks Host (and the request target's authority against it) and Origin only: a CORS preflight
    /// carries no credentials.
    pub(crate) fn admit_preflight(&self, target: &Uri, headers: &HeaderMap) -> Result<Option<HeaderValue>, Refusal> {
        for name in [HOST, ORIGIN] {
            let mut values = headers.get_all(&name).iter();
            if values.next().is_some() && values.next().is_some() {
                return Err(Refusal::Ambiguous(if name == HOST { "Host" } else { "Origin" }));
            }
        }
        let host = headers.get(HOST).and_then(|h| h.to_str().ok()).map(str::to_ascii_lowercase);
        if let Some(authority) = target.authority()
            && host.as_deref() != Some(authority.as_str().to_ascii_lowercase().as_str())
        {
            return Err(Refusal::Target);
        }
        if !host.is_some_and(|h| self.host_allowed(&h)) {
            return Err(Refusal::Host);
        }
        self.origin(headers)
    }

    /// The headers a preflight may ask for.
    pub(crate) fn allowed_headers(&self) -> &str {
        &self.allowed_headers
    }

    fn origin(&self, headers: &HeaderMap) -> Result<Option<HeaderValue>, Refusal> {
        match headers.get(ORIGIN) {
            None => Ok(None),
            Some(o) => {
                let text = o.to_str().map_err(|_| Refusal::Origin)?;
                if self.origins.iter().any(|a| *a == normalize_origin(text)) {
                    Ok(Some(o.clone()))
                } else {
                    Err(Refusal::Origin)
                }
            }
        }
    }

    fn host_allowed(&self, host: &str) -> bool {
        self.hosts.iter().any(|allowed| {
            allowed == host || (!has_port(allowed) && host.strip_prefix(allowed.as_str()).is_some_and(is_port_suffix))
        })
    }
}

/// `host:port` as it appears in a `Host` header.
fn authority(addr: SocketAddr) -> String {
    match addr {
        SocketAddr::V4(a) => format!("{}:{}", a.ip(), a.port()),
        SocketAddr::V6(a) => format!("[{}]:{}", a.ip(), a.port()),
    }
}

fn has_port(host: &str) -> bool {
    host.rsplit_once(':')
        .is_some_and(|(h, p)| !h.is_empty() && !h.ends_with(':') && p.bytes().all(|b| b.is_ascii_digit()))
        && !host.ends_with(']')
}

fn is_port_suffix(rest: &str) -> bool {
    rest.is_empty() || rest.strip_prefix(':').is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

fn normalize_origin(origin: &str) -> String {
    origin.trim().trim_end_matches('/').to_ascii_lowercase()
}

/// The token of an `Authorization: Bearer …` header's value.
pub(crate) fn bearer(header: &str) -> Option<&str> {
    let (scheme, token) = header.trim().split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
}

pub(crate) use crate::secret::same_secret;

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    fn path() -> Uri {
        Uri::from_static("/mcp")
    }

    fn gate(options: HttpOptions) -> Gate {
        Gate::new(&options, "127.0.0.1:4000".parse().unwrap())
    }

    #[test]
    fn loopback_hosts_of_the_bound_port_are_admitted_and_others_are_not() {
        let g = gate(HttpOptions::default());
        for ok in ["127.0.0.1:4000", "localhost:4000", "[::1]:4000", "LOCALHOST:4000"] {
            assert!(g.admit(&path(), &headers(&[("host", ok)])).is_ok(), "{ok}");
        }
        for bad in ["evil.example.com", "evil.example.com:4000", "127.0.0.1:4001", "localhost", "127.0.0.1"] {
            assert_eq!(g.admit(&path(), &headers(&[("host", bad)])), Err(Refusal::Host), "{bad}");
        }
        assert_eq!(g.admit(&path(), &HeaderMap::new()), Err(Refusal::Host));
    }

    #[test]
    fn an_allowed_host_without_a_port_matches_any_port() {
        let g = gate(HttpOptions { allow_hosts: vec!["bb.example.com".into()], ..HttpOptions::default() });
        assert!(g.admit(&path(), &headers(&[("host", "bb.example.com")])).is_ok());
        assert!(g.admit(&path(), &headers(&[("host", "bb.example.com:8443")])).is_ok());
        assert!(g.admit(&path(), &headers(&[("host", "bb.example.com.evil.example")])).is_err());
    }

    #[test]
    fn origins_must_be_on_the_list() {
        let g = gate(HttpOptions { allow_origins: vec!["https://Host.Example/".into()], ..HttpOptions::default() });
        let h = |o: &str| headers(&[("host", "127.0.0.1:4000"), ("origin", o)]);
        assert!(g.admit(&path(), &h("http://localhost:4000")).unwrap().is_some());
        assert!(g.admit(&path(), &h("https://host.example")).unwrap().is_some());
        assert_eq!(g.admit(&path(), &h("http://evil.example.com")), Err(Refusal::Origin));
        assert_eq!(g.admit(&path(), &h("null")), Err(Refusal::Origin));
    }

    #[test]
    fn a_token_must_be_the_servers_bearer_token() {
        let g = gate(HttpOptions { token: Some("t0k".into()), ..HttpOptions::default() });
        let h = |a: Option<&str>| {
            let mut h = headers(&[("host", "127.0.0.1:4000")]);
            if let Some(a) = a {
                h.insert(AUTHORIZATION, HeaderValue::from_str(a).unwrap());
            }
            h
        };
        assert_eq!(g.admit(&path(), &h(None)), Err(Refusal::NoToken));
        assert_eq!(g.admit(&path(), &h(Some("Bearer nope"))), Err(Refusal::WrongToken));
        assert_eq!(g.admit(&path(), &h(Some("Basic t0k"))), Err(Refusal::NoToken));
        assert!(g.admit(&path(), &h(Some("Bearer t0k"))).is_ok());
        assert!(g.admit(&path(), &h(Some("bearer t0k"))).is_ok());
        assert!(g.admit_preflight(&path(), &h(None)).is_ok());
    }

    #[test]
    fn two_host_or_two_origin_headers_are_refused_whatever_they_say() {
        let g = gate(HttpOptions::default());
        let mut h = headers(&[("host", "127.0.0.1:4000")]);
        h.append(HOST, HeaderValue::from_static("127.0.0.1:4000"));
        assert_eq!(g.admit(&path(), &h), Err(Refusal::Ambiguous("Host")));
        let mut h = headers(&[("host", "127.0.0.1:4000"), ("origin", "http://localhost:4000")]);
        h.append(ORIGIN, HeaderValue::from_static("http://localhost:4000"));
        assert_eq!(g.admit(&path(), &h), Err(Refusal::Ambiguous("Origin")));
        assert_eq!(g.admit_preflight(&path(), &h), Err(Refusal::Ambiguous("Origin")));
    }

    #[test]
    fn a_request_target_naming_another_host_than_host_is_refused() {
        let g = gate(HttpOptions::default());
        let h = headers(&[("host", "127.0.0.1:4000")]);
        assert_eq!(g.admit(&Uri::from_static("http://evil.example/mcp"), &h), Err(Refusal::Target));
        assert_eq!(g.admit_preflight(&Uri::from_static("http://evil.example/mcp"), &h), Err(Refusal::Target));
        assert!(
            g.admit(&Uri::from_static("http://127.0.0.1:4000/mcp"), &h).is_ok(),
            "the same authority is the same request"
        );
    }

    #[test]
    fn secrets_match_only_when_equal() {
        assert!(same_secret(b"abc", b"abc"));
        assert!(!same_secret(b"abd", b"abc"));
        assert!(!same_secret(b"ab", b"abc"));
        assert!(!same_secret(b"abcd", b"abc"));
        assert!(!same_secret(b"", b"abc"));
        assert!(same_secret(b"", b""));
    }
}
