//! bb's Bitbucket client: the [`Fetcher`] that carries a session's requests to a real server over ureq 3.
//!
//! ```text
//!   fetch(request) ──▶ gate.enter()  (at most max_in_flight at once)
//!                      attempt: ureq call ──▶ status + body (capped)   or   failure::classify(error)
//!                      gate released
//!                  ◀── retry::decide(policy, method, attempt, outcome, jitter)
//!                        Retry { after_ms } → sleep on this (blocking) thread, attempt again
//!                        Stop               → the outcome goes back to the session
//! ```
//!
//! It runs on smol's blocking pool (the driver calls it through `smol::unblock`), so sleeping and waiting for
//! the gate block only that pool thread. One `Bitbucket` is shared by every session of a process, which makes
//! the bound per process. Every request carries the credentials, `Accept: application/json`, a
//! `User-Agent: bb/<version>`, and for writes `Content-Type: application/json` and `X-Atlassian-Token: no-check`.
//! Redirects are not followed (a 3xx is reported as it is, and credentials never travel to another host).

mod failure;
mod gate;
mod tls;

pub use gate::Gate;

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bb_core::plan::{FetchErrorKind, FetchResponse};
use bb_core::retry::{self, Decision};
use bb_core::{FetchOutcome, FetchRequest, Method};
use ureq::{Agent, RequestBuilder};

use crate::config::{Auth, BitbucketConfig};
use crate::fetch::{Fetcher, Unconfigured};

/// Connecting (TCP, proxy and TLS) takes at most this long, or the request timeout if that is shorter.
const MAX_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The process's fetcher: a [`Bitbucket`] client for `config`, or [`Unconfigured`] when no server is configured
/// (bb still starts; its tools say what to set).
pub fn fetcher(config: Option<BitbucketConfig>) -> Result<Arc<dyn Fetcher>, String> {
    Ok(match config {
        Some(c) => Arc::new(Bitbucket::new(c)?),
        None => Arc::new(Unconfigured),
    })
}

/// The Bitbucket client. Build it once per process with [`Bitbucket::new`] and share it.
pub struct Bitbucket {
    agent: Agent,
    config: BitbucketConfig,
    authorization: Option<String>,
    gate: Gate,
}

impl std::fmt::Debug for Bitbucket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bitbucket").field("config", &self.config).finish_non_exhaustive()
    }
}

impl Bitbucket {
    /// A client for `config`. Fails (with what to fix) only on settings that [`crate::config::load`] did not
    /// already check, such as a proxy ureq refuses.
    pub fn new(config: BitbucketConfig) -> Result<Self, String> {
        let proxy = match &config.proxy {
            Some(p) => Some(ureq::Proxy::new(p.url.expose()).map_err(|e| {
                format!("{} `{}` cannot be used ({e})", p.source, crate::config::redact_userinfo(p.url.expose()))
            })?),
            None => None,
        };
        let agent: Agent = Agent::config_builder()
            .http_status_as_error(false)
            .max_redirects(0)
            .user_agent(format!("bb/{}", env!("CARGO_PKG_VERSION")))
            .accept("application/json")
            .timeout_connect(Some(config.timeout.min(MAX_CONNECT_TIMEOUT)))
            .timeout_per_call(Some(config.timeout))
            .max_idle_connections_per_host(config.max_in_flight.max(1))
            .proxy(proxy)
            .tls_config(tls::tls_config(&config))
            .build()
            .into();
        let authorization = match &config.auth {
            Auth::Token(t) => Some(format!("Bearer {}", t.expose())),
            Auth::Basic { user, password } => Some(format!("Basic {}", basic(user, password.expose()))),
            Auth::Anonymous => None,
        };
        let gate = Gate::new(config.max_in_flight);
        Ok(Bitbucket { agent, config, authorization, gate })
    }

    /// The configuration this client was built from.
    pub fn config(&self) -> &BitbucketConfig {
        &self.config
    }

    /// Makes `request` with a person's own token instead of the configured credentials (the HTTP
    /// transport's per-person mode): the same connections, the same bound on requests in flight,
    /// and the person's token is scrubbed from every detail like the configured ones.
    pub fn fetch_as(&self, request: FetchRequest, token: &str) -> FetchOutcome {
        self.run(request, Some(&format!("Bearer {token}")), Some(token))
    }

    /// Makes `request` with retries, authorized by `authorization`; `extra_secret` is scrubbed too.
    fn run(&self, request: FetchRequest, authorization: Option<&str>, extra_secret: Option<&str>) -> FetchOutcome {
        let url = format!("{}{}", self.config.base_url, request.path);
        let body = match request.body.as_ref().map(serde_json::to_vec).transpose() {
            Ok(b) => b,
            Err(e) => {
                return FetchOutcome::failed(
                    FetchErrorKind::BrokenResponse,
                    format!("bb could not encode the request body: {e}"),
                );
            }
        };
        let mut attempt = 1;
        loop {
            let outcome = self.attempt(&request, &url, body.as_deref(), authorization);
            match retry::decide(&self.config.retry, request.method, attempt, &outcome, jitter()) {
                Decision::Retry { after_ms } => {
                    std::thread::sleep(Duration::from_millis(after_ms));
                    attempt += 1;
                }
                Decision::Stop => return finish(outcome, &request, attempt, &self.config, extra_secret),
            }
        }
    }

    /// One attempt: wait for the gate, send, read the answer (capped).
    fn attempt(
        &self,
        request: &FetchRequest,
        url: &str,
        body: Option<&[u8]>,
        authorization: Option<&str>,
    ) -> FetchOutcome {
        let _permit = self.gate.enter();
        let query = request.query.iter().map(|(k, v)| (k.as_str(), v.as_str()));
        let headers = |rb| with_authorization(rb, authorization);
        let sent = match (request.method, body) {
            (Method::Get, _) => headers(self.agent.get(url).query_pairs(query)).call(),
            (Method::Delete, _) => headers(self.agent.delete(url).query_pairs(query)).call(),
            (method, body) => {
                let rb = match method {
                    Method::Put => self.agent.put(url),
                    _ => self.agent.post(url),
                };
                let rb =
                    with_authorization(rb.query_pairs(query), authorization).header("X-Atlassian-Token", "no-check");
                match body {
                    Some(b) => rb.header("Content-Type", "application/json").send(b),
                    None => rb.send_empty(),
                }
            }
        };
        let mut response = match sent {
            Ok(r) => r,
            Err(e) => return FetchOutcome::Failed(failure::classify(&e, failure::Phase::Exchange, &self.config)),
        };
        let status = response.status().as_u16();
        let retry_after_s = response
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok());
        // The authenticated user's slug (reference "Users": X-AUSERNAME, [assumed] for 9.x).
        let user = response
            .headers()
            .get("x-ausername")
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .map(str::to_owned);
        match response.body_mut().with_config().limit(self.config.max_body_bytes).read_to_vec() {
            Ok(body) => FetchOutcome::Response(FetchResponse { status, body, retry_after_s, user }),
            Err(e) => FetchOutcome::Failed(failure::classify(&e, failure::Phase::Body, &self.config)),
        }
    }
}

fn with_authorization<B>(rb: RequestBuilder<B>, authorization: Option<&str>) -> RequestBuilder<B> {
    match authorization {
        Some(a) => rb.header("Authorization", a),
        None => rb,
    }
}

impl Fetcher for Bitbucket {
    fn fetch(&self, request: FetchRequest) -> FetchOutcome {
        self.run(request, self.authorization.as_deref(), None)
    }
}

/// Names the request and the attempts in a failure's detail, and removes any secret that slipped in.
fn finish(
    outcome: FetchOutcome,
    request: &FetchRequest,
    attempts: u32,
    config: &BitbucketConfig,
    extra_secret: Option<&str>,
) -> FetchOutcome {
    match outcome {
        FetchOutcome::Failed(mut e) => {
            let tries = if attempts > 1 { format!(" (after {attempts} attempts)") } else { String::new() };
            let mut detail =
                scrub(&format!("{} {}: {}{tries}", request.method.as_str(), request.path, e.detail), config);
            if let Some(secret) = extra_secret.filter(|s| !s.is_empty()) {
                detail = detail.replace(secret, "<hidden>");
            }
            e.detail = detail;
            FetchOutcome::Failed(e)
        }
        response => response,
    }
}

/// Replaces every secret of `config` (and its base64 form in basic auth) found in `text`.
pub fn scrub(text: &str, config: &BitbucketConfig) -> String {
    let mut out = text.to_string();
    let mut secrets: Vec<String> = config.secrets().into_iter().map(str::to_string).collect();
    if let Auth::Basic { user, password } = &config.auth {
        secrets.push(basic(user, password.expose()));
    }
    for s in secrets.iter().filter(|s| s.len() >= 3) {
        out = out.replace(s.as_str(), "<redacted>");
    }
    out
}

/// A jitter in 0..=1000 from the clock's sub-second digits: spreads retries of concurrent requests apart.
fn jitter() -> u16 {
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
    (nanos % 1001) as u16
}

/// `user:password` in base64 (RFC 4648, padded), as basic authentication sends it.
fn basic(user: &str, password: &str) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let input = format!("{user}:{password}").into_bytes();
    let mut out = String::with_capacity(input.len().div_ceil(3) * 4);
    for chunk in input.chunks(3) {
        let b = [chunk[0], chunk.get(1).copied().unwrap_or(0), chunk.get(2).copied().unwrap_or(0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]
    use super::*;
    use crate::config::Secret;

    #[test]
    fn basic_credentials_are_base64_encoded_as_rfc_7617_says() {
        assert_eq!(basic("Aladdin", "open sesame"), "QWxhZGRpbjpvcGVuIHNlc2FtZQ==");
        assert_eq!(basic("a", "b"), "YTpi");
        assert_eq!(basic("ab", "c"), "YWI6Yw==");
    }

    #[test]
    fn scrub_removes_the_password_and_its_encoded_form() {
        let config =
            BitbucketConfig::new("https://h", Auth::Basic { user: "u".into(), password: Secret::new("pa55word") })
                .unwrap();
        let text = format!("x pa55word y {} z", basic("u", "pa55word"));
        assert_eq!(scrub(&text, &config), "x <redacted> y <redacted> z");
    }
}
