//! bb's Bitbucket client: the [`bb_drive::Bitbucket`] that carries a session's requests to a real server over ureq 3.
//!
//! ```text
//!   fetch(request, person, cancel) ──▶ in_flight.enter(cancel)  (at most max_in_flight at once)
//!                      attempt: ureq call ──▶ status + body (capped)   or   failure::classify(error)
//!                      permit released
//!                  ◀── retry::decide(policy, method, attempt, outcome, jitter)
//!                        Retry { after_ms } → cancel.sleep on this (blocking) thread, attempt again
//!                        Stop               → the outcome goes back to the session
//! ```
//!
//! It runs on smol's blocking pool (the driver calls it through `smol::unblock`), so sleeping and waiting for
//! a slot block only that pool thread. A cancelled request (its call was cancelled, or its session ended)
//! returns as soon as it sees its [`Cancel`]: before it is sent, while it waits for a slot, and while it
//! sleeps before a retry; so a request not yet sent when its call is cancelled is never sent. Only an
//! attempt already on the wire runs to its end (or its timeout).
//!
//! One `Client` is shared by every session of a process, which makes the bound per process. Every request
//! carries the credentials, `Accept: application/json`, a `User-Agent: bb/<version>`, and for writes
//! `Content-Type: application/json` and `X-Atlassian-Token: no-check`. Redirects are not followed (a 3xx is
//! reported as it is, and credentials never travel to another host).

mod failure;
mod in_flight;
mod tls;

pub use in_flight::InFlight;

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bb_core::retry::{self, Decision};
use bb_core::{FetchErrorKind, FetchOutcome, FetchRequest, FetchResponse, Method};
use bb_drive::{Bitbucket, Cancel, PersonalToken};
use ureq::{Agent, RequestBuilder};

use crate::config::{Auth, BitbucketConfig};

/// Connecting (TCP, proxy and TLS) takes at most this long, or the request timeout if that is shorter.
const MAX_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The process's Bitbucket: a [`Client`] for `config`, or [`Unconfigured`] when no server is configured
/// (bb still starts; its tools say what to set).
pub fn for_config(config: Option<BitbucketConfig>) -> Result<Arc<dyn Bitbucket>, String> {
    Ok(match config {
        Some(c) => Arc::new(Client::new(c)?),
        None => Arc::new(Unconfigured),
    })
}

/// The Bitbucket of a bb with no server configured: every request fails with what to set.
#[derive(Debug, Clone, Copy, Default)]
pub struct Unconfigured;

impl Bitbucket for Unconfigured {
    fn fetch(&self, _: FetchRequest, _: Option<&PersonalToken>, _: &Cancel) -> FetchOutcome {
        FetchOutcome::failed(
            FetchErrorKind::NotConfigured,
            "no Bitbucket server is configured: set BITBUCKET_URL and BITBUCKET_TOKEN.",
        )
    }
}

/// The outcome of a request stopped by its cancel; the driver drops it unseen.
fn cancelled() -> FetchOutcome {
    FetchOutcome::failed(FetchErrorKind::Unreachable, "cancelled: the call no longer needs this request")
}

/// The Bitbucket client. Build it once per process with [`Client::new`] and share it. As a
/// [`Bitbucket`] it acts with the configured credentials and ignores a person's token: per-person
/// mode goes through [`Client::fetch_as`].
pub struct Client {
    agent: Agent,
    config: BitbucketConfig,
    authorization: Option<String>,
    in_flight: InFlight,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client").field("config", &self.config).finish_non_exhaustive()
    }
}

impl Client {
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
        let in_flight = InFlight::new(config.max_in_flight);
        Ok(Client { agent, config, authorization, in_flight })
    }

    /// The configuration this client was built from.
    pub fn config(&self) -> &BitbucketConfig {
        &self.config
    }

    /// Makes `request` with a person's own token instead of the configured credentials (the HTTP
    /// transport's per-person mode): the same connections, the same bound on requests in flight,
    /// and the person's token is scrubbed from every detail like the configured ones.
    pub fn fetch_as(&self, request: FetchRequest, token: &str, cancel: &Cancel) -> FetchOutcome {
        self.run(request, Some(&format!("Bearer {token}")), Some(token), cancel)
    }

    /// Makes `request` with retries, authorized by `authorization`; `extra_secret` is scrubbed too.
    fn run(
        &self,
        request: FetchRequest,
        authorization: Option<&str>,
        extra_secret: Option<&str>,
        cancel: &Cancel,
    ) -> FetchOutcome {
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
            let Some(outcome) = self.attempt(&request, &url, body.as_deref(), authorization, cancel) else {
                return cancelled();
            };
            match retry::decide(&self.config.retry, request.method, attempt, &outcome, jitter()) {
                Decision::Retry { after_ms } => {
                    if cancel.sleep(Duration::from_millis(after_ms)) {
                        return cancelled();
                    }
                    attempt += 1;
                }
                Decision::Stop => return finish(outcome, &request, attempt, &self.config, extra_secret),
            }
        }
    }

    /// One attempt: wait for a slot, send, read the answer (capped). `None` when cancelled before sending.
    fn attempt(
        &self,
        request: &FetchRequest,
        url: &str,
        body: Option<&[u8]>,
        authorization: Option<&str>,
        cancel: &Cancel,
    ) -> Option<FetchOutcome> {
        let _permit = self.in_flight.enter(cancel)?;
        // The cancel may have come while this thread took the slot: the request must not leave then.
        if cancel.is_cancelled() {
            return None;
        }
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
            Err(e) => return Some(FetchOutcome::Failed(failure::classify(&e, failure::Phase::Exchange, &self.config))),
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
        Some(match response.body_mut().with_config().limit(self.config.max_body_bytes).read_to_vec() {
            Ok(body) => FetchOutcome::Response(FetchResponse { status, body, retry_after_s, user }),
            Err(e) => FetchOutcome::Failed(failure::classify(&e, failure::Phase::Body, &self.config)),
        })
    }
}

fn with_authorization<B>(rb: RequestBuilder<B>, authorization: Option<&str>) -> RequestBuilder<B> {
    match authorization {
        Some(a) => rb.header("Authorization", a),
        None => rb,
    }
}

impl Bitbucket for Client {
    fn fetch(&self, request: FetchRequest, _: Option<&PersonalToken>, cancel: &Cancel) -> FetchOutcome {
        self.run(request, self.authorization.as_deref(), None, cancel)
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
