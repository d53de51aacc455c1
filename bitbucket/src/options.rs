//! What the client needs to reach one Bitbucket server: [`BitbucketConfig`] and the settings in it, plain
//! values the application fills from its flags and environment (bb's `config::load`, which reads and checks
//! files, so a wrong CA file or key stops bb at start). No secret is ever printed: [`Secret`] and
//! [`BitbucketConfig`] redact in `Debug`.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use bb_core::retry::RetryPolicy;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

/// At most this many Bitbucket requests are in flight per bb process ([`bb_core::limits::BITBUCKET_CONNECTIONS`]).
pub const MAX_IN_FLIGHT: usize = bb_core::limits::BITBUCKET_CONNECTIONS;
/// Answers larger than this are refused ([`bb_core::limits::MAX_ANSWER_BYTES`]).
pub const MAX_BODY_BYTES: u64 = bb_core::limits::MAX_ANSWER_BYTES;
/// The default per-attempt timeout.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// A value that must never be printed: `Debug` shows `<redacted>`.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Keeps `value` so that only [`Secret::expose`] shows it.
    pub fn new(value: impl Into<String>) -> Self {
        Secret(value.into())
    }

    /// The secret itself, for the one place that sends it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

/// Where the replicas' shared rate budget lives (`--rate-store`), and how many share it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RateStore {
    /// `redis://` or `rediss://host[:port][/db]`, perhaps with a password in it.
    pub url: Secret,
    /// `BB_RATE_STORE_PASSWORD`, which wins over a password in the URL.
    pub password: Option<Secret>,
}

/// How bb authenticates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Auth {
    /// A personal access token (`Authorization: Bearer`).
    Token(Secret),
    /// Basic authentication.
    Basic {
        /// `BITBUCKET_USER`: the login name sent with the password.
        user: String,
        /// `BITBUCKET_PASSWORD`; bb's `config::load` refuses an empty one.
        password: Secret,
    },
    /// No credentials: only what Bitbucket shows anonymously.
    Anonymous,
}

/// A client certificate chain and its private key, checked to belong together.
pub struct ClientIdentity {
    /// `BB_CLIENT_CERT`: the file the chain came from, named when the server refuses the certificate.
    pub cert_file: PathBuf,
    /// The chain, leaf first (DER).
    pub chain: Vec<CertificateDer<'static>>,
    /// The private key (DER).
    pub key: PrivateKeyDer<'static>,
    /// The private key as read (PEM), for ureq.
    pub key_pem: Vec<u8>,
}

impl Clone for ClientIdentity {
    fn clone(&self) -> Self {
        ClientIdentity {
            cert_file: self.cert_file.clone(),
            chain: self.chain.clone(),
            key: self.key.clone_key(),
            key_pem: self.key_pem.clone(),
        }
    }
}

impl fmt::Debug for ClientIdentity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientIdentity")
            .field("cert_file", &self.cert_file)
            .field("chain", &self.chain.len())
            .field("key", &"<redacted>")
            .finish()
    }
}

impl RateStore {
    /// What the client needs to connect, with the password set: a URL that is not `redis://` or
    /// `rediss://`, or that the client cannot read, is an error that says what to write and shows
    /// no password.
    pub fn connection_info(&self) -> Result<redis::ConnectionInfo, String> {
        use redis::IntoConnectionInfo;
        let url = self.url.expose();
        let shown = redact_userinfo(url);
        let fix = "use redis://host:port[/db] or rediss://host:port[/db]";
        if !(url.starts_with("redis://") || url.starts_with("rediss://")) {
            return Err(format!("--rate-store `{shown}` is not a Valkey or Redis URL: {fix}"));
        }
        let info = url
            .into_connection_info()
            .map_err(|e| self.scrub(format!("--rate-store `{shown}` cannot be used ({e}): {fix}")))?;
        Ok(match &self.password {
            Some(p) => info.clone().set_redis_settings(info.redis_settings().clone().set_password(p.expose())),
            None => info,
        })
    }

    /// `text` without the store's passwords.
    pub fn scrub(&self, text: String) -> String {
        let from_url = url_password(self.url.expose());
        let mut text = text;
        for p in [from_url.as_deref(), self.password.as_ref().map(Secret::expose)].into_iter().flatten() {
            if !p.is_empty() {
                text = text.replace(p, "<redacted>");
            }
        }
        text
    }
}

/// The password in a URL's authority, if any.
fn url_password(url: &str) -> Option<String> {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next()?;
    let (info, _) = authority.rsplit_once('@')?;
    Some(info.split_once(':').map_or(info, |(_, p)| p).to_owned())
}

/// A bucket's size and refill, as `--rate-limit SIZE/RATE` sets them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RateLimit {
    /// The most tokens a bucket holds: the longest burst.
    pub capacity: f64,
    /// Tokens added each second.
    pub refill_per_s: f64,
}

impl RateLimit {
    /// Atlassian's defaults on the rate-limiting admin page: a bucket of 60, refilled at 5 a second.
    pub const BITBUCKET_DEFAULT: RateLimit = RateLimit { capacity: 60.0, refill_per_s: 5.0 };

    /// The bucket sizes `--rate-limit` takes: a burst of at least one request, at most a million.
    pub const BUCKET: std::ops::RangeInclusive<f64> = 1.0..=1_000_000.0;
    /// The refills `--rate-limit` takes, a second: from one request in about 17 minutes to 10,000 a
    /// second (a bucket's waits are then at most 1,000 s, and never smaller than a clock can keep).
    pub const REFILL: std::ops::RangeInclusive<f64> = 0.001..=10_000.0;

    /// Reads `SIZE/RATE` (`60/5`, `120/2.5`): a whole SIZE in [`RateLimit::BUCKET`], a RATE in
    /// [`RateLimit::REFILL`]; anything else is a sentence naming `--rate-limit` and the range.
    pub fn parse(s: &str) -> Result<RateLimit, String> {
        let s = s.trim();
        let form = || {
            format!(
                "--rate-limit `{s}` is not SIZE/RATE (a bucket of SIZE requests refilled at RATE a second, such as 60/5) or off"
            )
        };
        let (size, rate) = s.split_once('/').ok_or_else(form)?;
        let capacity: f64 = size.trim().parse().map_err(|_| form())?;
        let refill_per_s: f64 = rate.trim().parse().map_err(|_| form())?;
        if !(Self::BUCKET.contains(&capacity) && capacity.fract() == 0.0) {
            return Err(format!(
                "--rate-limit `{s}`: the bucket SIZE must be a whole number of requests from 1 to 1,000,000"
            ));
        }
        if !Self::REFILL.contains(&refill_per_s) {
            return Err(format!("--rate-limit `{s}`: the refill RATE must be from 0.001 to 10,000 requests a second"));
        }
        Ok(RateLimit { capacity, refill_per_s })
    }
}

/// A proxy for the Bitbucket host.
#[derive(Clone, PartialEq, Eq)]
pub struct ProxySettings {
    /// The variable it came from (for messages).
    pub source: &'static str,
    /// The proxy URL (it may hold credentials: redacted in `Debug`).
    pub url: Secret,
}

impl fmt::Debug for ProxySettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProxySettings")
            .field("source", &self.source)
            .field("url", &redact_userinfo(self.url.expose()))
            .finish()
    }
}

/// Everything bb needs to reach one Bitbucket server. `Debug` shows no secret and no certificate bytes.
#[derive(Clone)]
pub struct BitbucketConfig {
    /// `scheme://host[:port][/context]`, without a trailing slash; request paths are appended to it.
    pub base_url: String,
    /// Credentials.
    pub auth: Auth,
    /// `BB_CA_FILE`, when set.
    pub ca_file: Option<PathBuf>,
    /// The certificates of `BB_CA_FILE`, trusted in addition to the built-in roots.
    pub extra_roots: Vec<CertificateDer<'static>>,
    /// `BB_CLIENT_CERT` + `BB_CLIENT_KEY`.
    pub client_identity: Option<ClientIdentity>,
    /// Per-attempt timeout (connecting is bounded by the smaller of this and 10 s).
    pub timeout: Duration,
    /// The retry policy (`BB_RETRY_COUNT` sets its count).
    pub retry: RetryPolicy,
    /// The proxy, unless none is set or `NO_PROXY` exempts the host.
    pub proxy: Option<ProxySettings>,
    /// How many requests may be in flight at once (the rest wait their turn), and how many idle connections
    /// per host are kept; [`MAX_IN_FLIGHT`] unless a test sets another.
    pub max_in_flight: usize,
    /// The largest answer accepted, in bytes.
    pub max_body_bytes: u64,
    /// bb's own budget of the user's Bitbucket rate limit (`--rate-limit`): Atlassian's defaults unless
    /// set; `None` spends nothing (`--rate-limit off`).
    pub rate_limit: Option<RateLimit>,
    /// The store the replicas share that budget in (`--rate-store`); `None`: each process keeps its own.
    pub rate_store: Option<RateStore>,
    /// How many replicas share the budget (`--replicas`): without an answering store each keeps 1/N of it.
    pub replicas: u32,
}

impl fmt::Debug for BitbucketConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BitbucketConfig")
            .field("base_url", &self.base_url)
            .field("auth", &self.auth)
            .field("ca_file", &self.ca_file)
            .field("extra_roots", &self.extra_roots.len())
            .field("client_identity", &self.client_identity)
            .field("timeout", &self.timeout)
            .field("retry", &self.retry)
            .field("proxy", &self.proxy)
            .field("max_in_flight", &self.max_in_flight)
            .field("max_body_bytes", &self.max_body_bytes)
            .field("rate_limit", &self.rate_limit)
            .field("rate_store", &self.rate_store)
            .field("replicas", &self.replicas)
            .finish()
    }
}

impl BitbucketConfig {
    /// A configuration for `base_url` with `auth` and every other setting at its default (for tests and tools).
    pub fn new(base_url: &str, auth: Auth) -> Result<Self, String> {
        Ok(BitbucketConfig {
            base_url: normalise_url(base_url, "the Bitbucket URL")?,
            auth,
            ca_file: None,
            extra_roots: Vec::new(),
            client_identity: None,
            timeout: DEFAULT_TIMEOUT,
            retry: RetryPolicy::default(),
            proxy: None,
            max_in_flight: MAX_IN_FLIGHT,
            max_body_bytes: MAX_BODY_BYTES,
            rate_limit: Some(RateLimit::BITBUCKET_DEFAULT),
            rate_store: None,
            replicas: 1,
        })
    }

    /// The secrets this configuration holds, so error texts can be checked against them.
    pub fn secrets(&self) -> Vec<&str> {
        let mut out = match &self.auth {
            Auth::Token(t) => vec![t.expose()],
            Auth::Basic { password, .. } => vec![password.expose()],
            Auth::Anonymous => vec![],
        };
        out.retain(|s| !s.is_empty());
        out
    }
}

/// Checks a server URL and drops trailing slashes: `https://host/bitbucket/` → `https://host/bitbucket`.
/// `what` names the setting in the error (`--host`, `BITBUCKET_URL`).
pub fn normalise_url(raw: &str, what: &str) -> Result<String, String> {
    let url = raw.trim().trim_end_matches('/');
    let fix =
        format!("{what} must be the server's address, such as https://bitbucket.example.com or https://host/bitbucket");
    let Some((scheme, rest)) = url.split_once("://") else {
        return Err(format!("{what} `{}` has no http:// or https:// scheme; {fix}", redact_userinfo(url)));
    };
    if !scheme.eq_ignore_ascii_case("http") && !scheme.eq_ignore_ascii_case("https") {
        return Err(format!("{what} uses `{scheme}`: only http and https are supported; {fix}"));
    }
    let authority = rest.split('/').next().unwrap_or_default();
    if authority.contains('@') {
        return Err(format!(
            "{what} must not hold credentials: set BITBUCKET_TOKEN (or BITBUCKET_USER and BITBUCKET_PASSWORD) instead"
        ));
    }
    if rest.contains(['?', '#']) {
        return Err(format!("{what} `{url}` has a query or fragment; {fix}"));
    }
    let normalised = format!("{}://{rest}", scheme.to_ascii_lowercase());
    match normalised.parse::<ureq::http::Uri>() {
        Ok(uri) if uri.host().is_some_and(|h| !h.is_empty()) => Ok(normalised),
        _ => Err(format!("{what} `{url}` is not a valid URL; {fix}")),
    }
}

/// `http://user:pw@host` → `http://<redacted>@host`.
pub fn redact_userinfo(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").map_or(("", url), |(s, r)| (s, r));
    let authority_end = rest.find('/').unwrap_or(rest.len());
    let prefix = if scheme.is_empty() { String::new() } else { format!("{scheme}://") };
    match rest[..authority_end].rfind('@') {
        Some(at) => format!("{prefix}<redacted>{}", &rest[at..]),
        None => url.to_string(),
    }
}
