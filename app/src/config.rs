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

use std::path::{Path, PathBuf};
use std::time::Duration;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

use bb_bitbucket::options::normalise_url;
pub use bb_bitbucket::options::{
    Auth, BitbucketConfig, ClientIdentity, ProxySettings, RateLimit, RateStore, Secret, redact_userinfo,
};

/// The per-attempt timeouts `BB_REQUEST_TIMEOUT` may ask for.
pub const REQUEST_TIMEOUT: std::ops::RangeInclusive<Duration> = Duration::from_millis(100)..=Duration::from_secs(3600);
/// The most retries `BB_RETRY_COUNT` may ask for.
pub const MAX_RETRY_COUNT: u32 = 10;

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

/// Reads the configuration from `flags` and `env` (a lookup such as `|k| std::env::var(k).ok()`).
///
/// `Ok(None)` when no Bitbucket URL is given: bb still starts, and its tools say that Bitbucket is not configured.
pub fn load(flags: &ConnectionFlags, env: &dyn Fn(&str) -> Option<String>) -> Result<Option<BitbucketConfig>, String> {
    let get = |name: &str| env(name).map(|v| v.trim().to_string()).filter(|v| !v.is_empty());
    let rate_store = flags.rate_store.as_ref().map(|url| {
        let password = env("BB_RATE_STORE_PASSWORD").filter(|p| !p.is_empty()).map(Secret::new);
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
        (_, Some(t), ..) => Auth::Token(Secret::new(t)),
        (_, None, Some(user), Some(password)) if !password.is_empty() => {
            Auth::Basic { user, password: Secret::new(password) }
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
    Ok(Some(ProxySettings { source, url: Secret::new(url) }))
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

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
