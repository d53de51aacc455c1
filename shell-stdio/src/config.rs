//! Where bb finds Bitbucket and how it talks to it: flags and environment, read and checked once at start.
//!
//! | Source | Meaning |
//! |---|---|
//! | `--host URL`, `BITBUCKET_URL` | the server, with its context path if any (`https://host/bitbucket`) |
//! | `--token T`, `BITBUCKET_TOKEN` | a personal access token, sent as `Authorization: Bearer` |
//! | `BITBUCKET_USER` + `BITBUCKET_PASSWORD` | basic authentication, when no token is given |
//! | `BB_CA_FILE` | PEM certificates trusted in addition to the built-in roots |
//! | `BB_CLIENT_CERT` + `BB_CLIENT_KEY` | a PEM client certificate (chain) and its private key |
//! | `BB_REQUEST_TIMEOUT` | per attempt: `30s`, `500ms`, `2m` or plain seconds, from 100 ms to 1 h (default 30 s) |
//! | `BB_RETRY_COUNT` | retries after the first attempt, 0–10 (default 3) |
//! | `HTTPS_PROXY` (`HTTP_PROXY` for an http URL), `NO_PROXY` | a proxy, and hosts that bypass it (either case) |
//! | `--rate-store URL`, `BB_RATE_STORE_PASSWORD` | Valkey or Redis holding the rate budget replicas share |
//! | `--replicas N` | how many replicas share the budget (each keeps 1/N when the store does not answer) |
//!
//! Flags win over the environment. Every mistake is an error that names the variable and what to fix; files are
//! read and checked here, so a wrong CA file or a key that does not match its certificate stops bb at start rather
//! than failing (or panicking) on the first request. No secret is ever printed: [`Secret`] and
//! [`BitbucketConfig`] redact in `Debug`.

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use bb_core::retry::RetryPolicy;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

/// At most this many Bitbucket requests are in flight per bb process ([`bb_core::limits::BITBUCKET_CONNECTIONS`]).
pub const MAX_IN_FLIGHT: usize = bb_core::limits::BITBUCKET_CONNECTIONS;
/// Answers larger than this are refused ([`bb_core::limits::MAX_ANSWER_BYTES`]).
pub const MAX_BODY_BYTES: u64 = bb_core::limits::MAX_ANSWER_BYTES;
/// The default per-attempt timeout.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// The per-attempt timeouts `BB_REQUEST_TIMEOUT` may ask for.
pub const REQUEST_TIMEOUT: std::ops::RangeInclusive<Duration> = Duration::from_millis(100)..=Duration::from_secs(3600);
/// The most retries `BB_RETRY_COUNT` may ask for.
pub const MAX_RETRY_COUNT: u32 = 10;

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

/// The connection flags of `bb ai mcp serve`; they win over the environment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConnectionFlags {
    /// `--host URL`.
    pub host: Option<String>,
    /// `--token T`.
    pub token: Option<Secret>,
    /// `--rate-limit SIZE/RATE` or `off`, checked by [`load`].
    pub rate_limit: Option<String>,
    /// `--rate-store URL`, checked by [`load`].
    pub rate_store: Option<Secret>,
    /// `--replicas N` (1 unless set).
    pub replicas: Option<u32>,
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
        /// `BITBUCKET_PASSWORD`; [`load`] refuses an empty one.
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

/// Reads the configuration from `flags` and `env` (a lookup such as `|k| std::env::var(k).ok()`).
///
/// `Ok(None)` when no Bitbucket URL is given: bb still starts, and its tools say that Bitbucket is not configured.
pub fn load(flags: &ConnectionFlags, env: &dyn Fn(&str) -> Option<String>) -> Result<Option<BitbucketConfig>, String> {
    let get = |name: &str| env(name).map(|v| v.trim().to_string()).filter(|v| !v.is_empty());
    let rate_store = flags.rate_store.as_ref().map(|url| {
        let password = env("BB_RATE_STORE_PASSWORD").filter(|p| !p.is_empty()).map(Secret);
        RateStore { url: url.clone(), password }
    });
    if let Some(store) = &rate_store {
        // Checked now (no connection made): a wrong URL stops bb at start, configured or not.
        store.connection_info()?;
    }
    let url = match (&flags.host, get("BITBUCKET_URL")) {
        (Some(host), _) => normalise_url(host, "--host")?,
        (None, Some(url)) => normalise_url(&url, "BITBUCKET_URL")?,
        (None, None) => return Ok(None),
    };
    let auth = match (&flags.token, get("BITBUCKET_TOKEN"), get("BITBUCKET_USER"), env("BITBUCKET_PASSWORD")) {
        (Some(t), ..) if !t.expose().is_empty() => Auth::Token(t.clone()),
        (_, Some(t), ..) => Auth::Token(Secret(t)),
        (_, None, Some(user), Some(password)) if !password.is_empty() => {
            Auth::Basic { user, password: Secret(password) }
        }
        (_, None, Some(_), _) => {
            return Err("BITBUCKET_USER is set but BITBUCKET_PASSWORD is not: set both, or set BITBUCKET_TOKEN".into());
        }
        (_, None, None, Some(p)) if !p.is_empty() => {
            return Err("BITBUCKET_PASSWORD is set but BITBUCKET_USER is not: set both, or set BITBUCKET_TOKEN".into());
        }
        _ => Auth::Anonymous,
    };
    let mut config = BitbucketConfig::new(&url, auth)?;
    if let Some(file) = get("BB_CA_FILE") {
        config.extra_roots = read_ca_file(Path::new(&file))?;
        config.ca_file = Some(PathBuf::from(file));
    }
    config.client_identity = match (get("BB_CLIENT_CERT"), get("BB_CLIENT_KEY")) {
        (Some(cert), Some(key)) => Some(read_client_identity(Path::new(&cert), Path::new(&key))?),
        (Some(_), None) => return Err("BB_CLIENT_CERT is set but BB_CLIENT_KEY is not: set both, or neither".into()),
        (None, Some(_)) => return Err("BB_CLIENT_KEY is set but BB_CLIENT_CERT is not: set both, or neither".into()),
        (None, None) => None,
    };
    if let Some(t) = get("BB_REQUEST_TIMEOUT") {
        config.timeout = parse_duration(&t).filter(|d| REQUEST_TIMEOUT.contains(d)).ok_or_else(|| {
            format!("BB_REQUEST_TIMEOUT `{t}` is not a duration from 100ms to 1h: use e.g. 30s, 500ms, 2m or 30")
        })?;
    }
    if let Some(n) = get("BB_RETRY_COUNT") {
        config.retry.retries = n
            .parse::<u32>()
            .ok()
            .filter(|n| *n <= MAX_RETRY_COUNT)
            .ok_or_else(|| format!("BB_RETRY_COUNT `{n}` is not a number from 0 to {MAX_RETRY_COUNT}"))?;
    }
    config.proxy = proxy_for(&config.base_url, &get)?;
    if let Some(r) = &flags.rate_limit {
        config.rate_limit = match r.trim() {
            "off" => None,
            setting => Some(RateLimit::parse(setting)?),
        };
    }
    config.replicas = flags.replicas.unwrap_or(1);
    config.rate_store = rate_store;
    Ok(Some(config))
}

/// Checks a server URL and drops trailing slashes: `https://host/bitbucket/` → `https://host/bitbucket`.
fn normalise_url(raw: &str, what: &str) -> Result<String, String> {
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

/// `30s`, `500ms`, `2m`, `1.5s` or a plain number of seconds, from 1 ms to 24 h; `None` for anything
/// else (zero, negative, NaN, infinite, empty).
pub fn parse_duration(text: &str) -> Option<Duration> {
    let t = text.trim();
    let (number, unit_ms) = if let Some(n) = t.strip_suffix("ms") {
        (n, 1.0)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1_000.0)
    } else if let Some(n) = t.strip_suffix('m') {
        (n, 60_000.0)
    } else {
        (t, 1_000.0)
    };
    let value: f64 = number.trim().parse().ok()?;
    let ms = value * unit_ms;
    (1.0..=86_400_000.0).contains(&ms).then(|| Duration::from_micros((ms * 1000.0) as u64))
}

fn read_file(path: &Path, var: &str) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| format!("{var} {}: cannot be read ({e}); point it at a PEM file", path.display()))
}

/// The certificates of a PEM CA file, each checked to be usable as a trust anchor.
fn read_ca_file(path: &Path) -> Result<Vec<CertificateDer<'static>>, String> {
    let bytes = read_file(path, "BB_CA_FILE")?;
    let certs = CertificateDer::pem_slice_iter(&bytes)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("BB_CA_FILE {}: not a valid PEM file ({e})", path.display()))?;
    if certs.is_empty() {
        return Err(format!(
            "BB_CA_FILE {}: holds no certificate; it must contain PEM blocks starting -----BEGIN CERTIFICATE-----",
            path.display()
        ));
    }
    let mut store = rustls::RootCertStore::empty();
    for (i, cert) in certs.iter().enumerate() {
        store.add(cert.clone()).map_err(|e| {
            format!("BB_CA_FILE {}: certificate {} cannot be used as a CA ({e})", path.display(), i + 1)
        })?;
    }
    Ok(certs)
}

/// A client certificate chain and key, checked to parse and to belong together.
fn read_client_identity(cert: &Path, key: &Path) -> Result<ClientIdentity, String> {
    let cert_bytes = read_file(cert, "BB_CLIENT_CERT")?;
    let chain = CertificateDer::pem_slice_iter(&cert_bytes)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("BB_CLIENT_CERT {}: not a valid PEM file ({e})", cert.display()))?;
    if chain.is_empty() {
        return Err(format!(
            "BB_CLIENT_CERT {}: holds no certificate; it must contain a PEM block starting -----BEGIN CERTIFICATE-----",
            cert.display()
        ));
    }
    let key_bytes = read_file(key, "BB_CLIENT_KEY")?;
    let key_der = PrivateKeyDer::from_pem_slice(&key_bytes).map_err(|e| {
        format!(
            "BB_CLIENT_KEY {}: holds no usable private key ({e}); it must be an unencrypted PEM key (PRIVATE KEY, RSA PRIVATE KEY or EC PRIVATE KEY)",
            key.display()
        )
    })?;
    let provider = rustls::crypto::ring::default_provider();
    rustls::sign::CertifiedKey::from_der(chain.clone(), key_der.clone_key(), &provider).map_err(|e| match e {
        rustls::Error::InconsistentKeys(_) => format!(
            "BB_CLIENT_KEY {} is not the private key of the certificate in BB_CLIENT_CERT {}: give the matching pair",
            key.display(),
            cert.display()
        ),
        other => format!("BB_CLIENT_CERT {} / BB_CLIENT_KEY {}: unusable ({other})", cert.display(), key.display()),
    })?;
    Ok(ClientIdentity { cert_file: cert.to_path_buf(), chain, key: key_der, key_pem: key_bytes })
}

/// The proxy for `base_url`: `HTTPS_PROXY` (or `HTTP_PROXY` for an http URL), either case, unless `NO_PROXY`
/// names the host.
fn proxy_for(base_url: &str, get: &dyn Fn(&str) -> Option<String>) -> Result<Option<ProxySettings>, String> {
    let https = base_url.starts_with("https://");
    let names: [&'static str; 2] = if https { ["HTTPS_PROXY", "https_proxy"] } else { ["HTTP_PROXY", "http_proxy"] };
    let Some((source, url)) = names.iter().find_map(|n| get(n).map(|v| (*n, v))) else {
        return Ok(None);
    };
    let host = base_url
        .parse::<ureq::http::Uri>()
        .ok()
        .and_then(|u| u.host().map(|h| h.trim_matches(['[', ']']).to_ascii_lowercase()))
        .unwrap_or_default();
    let no_proxy = get("NO_PROXY").or_else(|| get("no_proxy")).unwrap_or_default();
    if no_proxy.split(',').any(|entry| no_proxy_matches(entry, &host)) {
        return Ok(None);
    }
    let scheme_ok = !url.contains("://") || url.starts_with("http://") || url.starts_with("https://");
    if !scheme_ok || ureq::Proxy::new(&url).is_err() {
        return Err(format!(
            "{source} `{}` is not a proxy URL: use e.g. http://proxy.example.com:3128",
            redact_userinfo(&url)
        ));
    }
    Ok(Some(ProxySettings { source, url: Secret(url) }))
}

/// curl's rules: `*` matches every host; `example.com` and `.example.com` match it and its subdomains; a port is
/// ignored.
fn no_proxy_matches(entry: &str, host: &str) -> bool {
    let entry = entry.trim().to_ascii_lowercase();
    let entry = entry.trim_start_matches("*.").trim_start_matches('.');
    let entry = match entry.rsplit_once(':') {
        Some((name, port)) if port.chars().all(|c| c.is_ascii_digit()) && !name.contains(':') => name,
        _ => entry,
    };
    let entry = entry.trim_matches(['[', ']']);
    if entry.is_empty() {
        return false;
    }
    entry == "*" || host == entry || host.ends_with(&format!(".{entry}"))
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

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
