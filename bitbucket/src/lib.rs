//! bb's Bitbucket client: the [`bb_drive::Bitbucket`] that carries a session's requests to a real server over ureq 3.
//!
//! ```text
//!   fetch(request, person, cancel) ──▶ rate.take(identity)     (the user's rate limit: go, wait, or defer a refresh)
//!                                  ──▶ in_flight.enter(lane, queue, cancel)  (at most max_in_flight at once;
//!                                      a check, then a call, then a refresh: [`bb_drive::Lane`])
//!                      attempt: ureq call ──▶ status + body (capped)   or   failure::classify(error)
//!                      permit released
//!                  ◀── retry::decide(policy, method, attempt, outcome, jitter)
//!                        Retry { after_ms } → cancel.sleep on this (blocking) thread, attempt again
//!                        Stop               → the outcome goes back to the session
//! ```
//!
//! It runs on the drive's pool of read threads ([`bb_drive::Process::reads`]), so sleeping and waiting for
//! a slot block only that pool thread. A cancelled request (its call was cancelled, or its session ended)
//! returns as soon as it sees its [`Cancel`]: before it is sent, while it waits for a slot, and while it
//! sleeps before a retry; so a request not yet sent when its call is cancelled is never sent. Only an
//! attempt already on the wire runs to its end (or its timeout).
//!
//! One `Client` is shared by every session of a process, which makes the bound per process. Every request
//! carries the credentials, `Accept: application/json`, a `User-Agent: bb/<version>`, and for writes
//! `Content-Type: application/json` and `X-Atlassian-Token: no-check`. Redirects are not followed (a 3xx is
//! reported as it is, and credentials never travel to another host).
//!
//! What the client needs from the configuration is [`options::BitbucketConfig`], plain values the
//! application builds from its flags and environment. The repository's map is `docs/ARCHITECTURE.md`.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod abandon;
mod failure;
mod in_flight;
pub mod options;
mod rate;
mod rate_store;
mod tls;

pub use in_flight::{InFlight, Refused};
pub use rate::{Bucket, Entry, Identity, REFILL_SHARE, Rate, RateLimit};
pub use rate_store::store_client;
pub use tls::tls_config;

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bb_core::retry::{self, Decision};
use bb_core::{Credential, FetchErrorKind, FetchOutcome, FetchRequest, FetchResponse, Method};
use bb_drive::metrics::Metrics;
use bb_drive::{Bitbucket, Cancel, Lane, PersonalToken, Requester, Secrets};
use ureq::unversioned::resolver::DefaultResolver;
use ureq::unversioned::transport::{Connector, DefaultConnector};
use ureq::{Agent, RequestBuilder};

use crate::options::{Auth, BitbucketConfig};

/// Connecting (TCP, proxy and TLS) takes at most this long, or the request timeout if that is shorter.
const MAX_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The process's Bitbucket: a [`Client`] for `config`, or [`Unconfigured`] when no server is configured
/// (bb still starts; its tools say what to set). `log` hears of the rate store's coming and going;
/// the client counts in `metrics` (the application's).
pub fn for_config(
    config: Option<BitbucketConfig>,
    log: &bb_drive::Logger,
    metrics: &Arc<Metrics>,
) -> Result<Arc<dyn Bitbucket>, String> {
    Ok(match config {
        Some(c) => {
            let mut client = Client::new(c)?;
            client.set_log(log.clone());
            client.count_in(Arc::clone(metrics));
            Arc::new(client)
        }
        None => Arc::new(Unconfigured),
    })
}

/// The Bitbucket of a bb with no server configured: every request fails with what to set.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Unconfigured;

impl Bitbucket for Unconfigured {
    fn fetch(&self, _: FetchRequest, _: Option<&PersonalToken>, _: &Cancel) -> FetchOutcome {
        FetchOutcome::failed(
            FetchErrorKind::NotConfigured,
            "no Bitbucket server is configured: set BITBUCKET_URL and BITBUCKET_TOKEN.",
        )
    }
}

/// Whom a request is for: the queue it waits in for a slot, and the Bitbucket user whose rate
/// budget it spends (0: the configured credentials; in per-person mode, the person's queue).
#[derive(Debug, Clone, Copy)]
struct Who<'a> {
    queue: u64,
    /// Its lane for a slot (a refresh's reads are `Refresh` whatever this says).
    lane: Lane,
    /// `None` without credentials: Bitbucket limits only requests with basic or bearer authentication
    /// (reference/bitbucket-dc.md "Rate limiting").
    identity: Option<Identity<'a>>,
}

/// A refresh held back for the rate limit: there is room for it again after `wait`.
fn deferred(wait: Duration) -> FetchOutcome {
    let after_ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX).max(1);
    FetchOutcome::failed(
        FetchErrorKind::Deferred { after_ms },
        "held back to keep within the Bitbucket user's rate limit (a refresh; the model's calls come first)",
    )
}

/// The outcome of a request stopped by its cancel; the driver drops it unseen.
fn cancelled() -> FetchOutcome {
    FetchOutcome::failed(FetchErrorKind::Unreachable, "cancelled: the call no longer needs this request")
}

/// The Bitbucket client. Build it once per process with [`Client::new`] and share it. As a
/// [`Bitbucket`] it acts with the configured credentials and ignores a person's token: per-person
/// mode goes through [`Client::fetch_as`].
pub struct Client {
    /// Made at the first request: an idle server holds no TLS configuration, no root store and no
    /// connection pool (and has run none of the code that makes them).
    agent: std::sync::OnceLock<Agent>,
    /// The proxy, checked when the client is made (a wrong one stops bb at start).
    proxy: Option<ureq::Proxy>,
    config: BitbucketConfig,
    authorization: Option<String>,
    secrets: Secrets,
    in_flight: InFlight,
    rate: Rate,
    /// The configured credentials' key in the shared rate store ([`rate_store::identity_key`]).
    identity_key: String,
    /// Where requests, retries and 429s are counted: the application's once [`Client::count_in`] is
    /// called, until then a set of the client's own that nobody serves.
    metrics: Arc<Metrics>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client").field("config", &self.config).finish_non_exhaustive()
    }
}

impl Client {
    /// A client for `config`. Fails (with what to fix) only on settings that bb's `config::load` did not
    /// already check, such as a proxy ureq refuses.
    pub fn new(config: BitbucketConfig) -> Result<Self, String> {
        let proxy = match &config.proxy {
            Some(p) => Some(ureq::Proxy::new(p.url.expose()).map_err(|e| {
                format!("{} `{}` cannot be used ({e})", p.source, crate::options::redact_userinfo(p.url.expose()))
            })?),
            None => None,
        };
        let authorization = match &config.auth {
            Auth::Token(t) => Some(format!("Bearer {}", t.expose())),
            Auth::Basic { user, password } => {
                Some(format!("Basic {}", bb_core::base64(format!("{user}:{}", password.expose()).as_bytes())))
            }
            Auth::Anonymous => None,
        };
        let in_flight = InFlight::new(config.max_in_flight);
        let store = match &config.rate_store {
            Some(s) => Some(rate_store::Store::new(s, config.ca_file.as_deref())?),
            None => None,
        };
        let rate = Rate::shared(config.rate_limit, config.replicas, store);
        let identity_key = rate_store::identity_key(&config.base_url, authorization.as_deref().unwrap_or(""));
        Ok(Client {
            agent: std::sync::OnceLock::new(),
            proxy,
            secrets: secrets(&config),
            config,
            authorization,
            in_flight,
            rate,
            identity_key,
            metrics: Arc::new(Metrics::new()),
        })
    }

    /// Where this client says that the shared rate store stopped or started answering.
    pub fn set_log(&self, log: bb_drive::Logger) {
        self.rate.set_log(log);
    }

    /// Counts this client's requests, retries, 429s and rate store in `metrics` (the application's).
    pub fn count_in(&mut self, metrics: Arc<Metrics>) {
        self.rate.count_in(Arc::clone(&metrics));
        self.metrics = metrics;
    }

    /// Whether the shared rate store answered when last asked (`true` without one).
    pub fn rate_store_answering(&self) -> bool {
        self.rate.store_answering()
    }

    /// bb's agent, made when first needed.
    fn agent(&self) -> &Agent {
        self.agent.get_or_init(|| {
            let config = &self.config;
            let agent_config = Agent::config_builder()
                .http_status_as_error(false)
                .max_redirects(0)
                .user_agent(format!("bb/{}", env!("CARGO_PKG_VERSION")))
                .accept("application/json")
                .timeout_connect(Some(config.timeout.min(MAX_CONNECT_TIMEOUT)))
                .timeout_per_call(Some(config.timeout))
                .max_idle_connections_per_host(config.max_in_flight.max(1))
                .proxy(self.proxy.clone())
                .tls_config(tls::tls_config(config))
                .build();
            let connector = DefaultConnector::new().chain(abandon::Abandonable);
            Agent::with_parts(agent_config, connector, DefaultResolver::default())
        })
    }

    /// The configuration this client was built from.
    pub fn config(&self) -> &BitbucketConfig {
        &self.config
    }

    /// Makes `request` with a person's own token instead of the configured credentials (the HTTP
    /// transport's per-person mode): the same connections, the same bound on requests in flight,
    /// and the person's token is scrubbed from every answer and detail like the configured ones.
    /// It waits for a slot in `queue` (the person's: [`Requester::queue`]) and `lane`, and spends the
    /// person's own rate budget: their token's, or a login's Bitbucket user's.
    pub fn fetch_as(
        &self,
        request: FetchRequest,
        person: &PersonalToken,
        (queue, lane): (u64, Lane),
        cancel: &Cancel,
    ) -> FetchOutcome {
        let token = person.secret();
        let mut secrets = self.secrets.clone();
        secrets.add_token(token);
        let authorization = format!("Bearer {token}");
        // A login's budget is its Bitbucket user's, whichever of their tokens it carries (Bitbucket's
        // limiter counts per user, and a refresh or a second client must not make a new bucket).
        let key = match person.user() {
            Some(user) => rate_store::identity_key(&self.config.base_url, &format!("user {user}")),
            None => rate_store::identity_key(&self.config.base_url, &authorization),
        };
        // The bucket is the identity's, whichever queue asks: a new person's token check (queue 0, the
        // checks' lane) spends from that person's bucket, never from the one of bb's own credentials,
        // which every check shared before (issue 58: at 300 people connecting, initialize waited 7 s
        // p50 for the configured credentials' 5 tokens a second).
        let who = Who { queue, lane, identity: Some(Identity { local: rate::local_of(&key), key: &key }) };
        let credential = if person.user().is_some() { Credential::Login } else { Credential::PersonalToken };
        self.run(request, Some((&authorization, credential)), &secrets, who, cancel)
    }

    /// Makes `request` with retries, authorized by `authorization` (the header, and the kind of credential
    /// it carries, which the answer names), waiting for each attempt's slot in `who.queue` and its token in
    /// `who.identity`'s rate budget; `secrets` are scrubbed from what it returns.
    fn run(
        &self,
        request: FetchRequest,
        authorization: Option<(&str, Credential)>,
        secrets: &Secrets,
        who: Who<'_>,
        cancel: &Cancel,
    ) -> FetchOutcome {
        let credential = authorization.map_or(Credential::Anonymous, |(_, c)| c);
        let authorization = authorization.map(|(a, _)| a);
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
            let Some(outcome) = self.attempt(&request, &url, body.as_deref(), authorization, who, cancel) else {
                return cancelled();
            };
            let metrics = &self.metrics;
            // An abandoned read failed because nobody waits for it: no retry.
            if cancel.is_cancelled() {
                metrics.bitbucket_abandoned(&request.path);
                return cancelled();
            }
            if !matches!(&outcome, FetchOutcome::Failed(e) if matches!(e.kind, FetchErrorKind::Deferred { .. })) {
                metrics.bitbucket_request(&request.path, &outcome);
            }
            if let FetchOutcome::Response(r) = &outcome
                && r.status == 429
            {
                // Bitbucket's limiter is spent (by bb, or by the person's browser with the same user):
                // every request of this identity pauses for what it asked.
                let after = Duration::from_secs(r.retry_after_s.unwrap_or(1).clamp(1, 3600));
                metrics.rate_limited(after.as_secs_f64());
                if let Some(identity) = who.identity {
                    self.rate.limited(identity, after);
                }
                // A refresh is not retried: the view keeps what it draws and asks again after the pause.
                if request.refresh.is_some() {
                    return deferred(after);
                }
            }
            match retry::decide(&self.config.retry, request.method, attempt, &outcome, jitter()) {
                Decision::Retry { after_ms } => {
                    metrics.bitbucket_retry();
                    if cancel.sleep(Duration::from_millis(after_ms)) {
                        return cancelled();
                    }
                    attempt += 1;
                }
                Decision::Stop => return finish(outcome, &request, attempt, secrets, credential),
            }
        }
    }

    /// One attempt: wait for a slot, send, read the answer (capped). `None` when cancelled before sending.
    /// A read cancelled on the wire is abandoned ([`abandon`]): its slot comes free within 50 ms.
    fn attempt(
        &self,
        request: &FetchRequest,
        url: &str,
        body: Option<&[u8]>,
        authorization: Option<&str>,
        who: Who<'_>,
        cancel: &Cancel,
    ) -> Option<FetchOutcome> {
        // The token first (a wait for it holds no connection), then the slot.
        if let Some(identity) = who.identity {
            match self.rate.enter(identity, who.queue, request.refresh, cancel) {
                Entry::Go => {}
                Entry::Defer(wait) => return Some(deferred(wait)),
                Entry::Cancelled => return None,
            }
        }
        // A refresh's batch goes whole or is put off, unsent, when the refreshes going now leave it no
        // room: a slow Bitbucket's backlog is answered "unchanged" at once rather than late.
        let entered = match request.refresh {
            Some(batch) => self.in_flight.enter_refresh(who.queue, batch, cancel),
            None => self.in_flight.enter(who.lane, who.queue, cancel).ok_or(Refused::Cancelled),
        };
        let _permit = match entered {
            Ok(permit) => permit,
            Err(refused) => {
                if let Some(identity) = who.identity {
                    self.rate.give_back(identity);
                }
                if refused == Refused::Cancelled || cancel.is_cancelled() {
                    return None;
                }
                self.metrics.refresh_put_off();
                return Some(FetchOutcome::put_off(jitter()));
            }
        };
        // The cancel may have come while this thread took the slot: the request must not leave then.
        if cancel.is_cancelled() {
            if let Some(identity) = who.identity {
                self.rate.give_back(identity);
            }
            return None;
        }
        if request.method == Method::Get {
            return Some(abandon::watching(cancel, || self.exchange(request, url, body, authorization)));
        }
        Some(self.exchange(request, url, body, authorization))
    }

    /// Sends the request and reads its answer (capped).
    fn exchange(
        &self,
        request: &FetchRequest,
        url: &str,
        body: Option<&[u8]>,
        authorization: Option<&str>,
    ) -> FetchOutcome {
        let query = request.query.iter().map(|(k, v)| (k.as_str(), v.as_str()));
        let headers = |rb| with_authorization(rb, authorization);
        let sent = match (request.method, body) {
            (Method::Get, _) => headers(self.agent().get(url).query_pairs(query)).call(),
            (Method::Delete, _) => headers(self.agent().delete(url).query_pairs(query)).call(),
            (method, body) => {
                let rb = match method {
                    Method::Put => self.agent().put(url),
                    _ => self.agent().post(url),
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
        // One file's diff, or a window of a file's lines, is decoded here, on this read thread, as it
        // arrives: only the call's share of its lines is kept, and the driver gets no bytes to decode.
        if let Some(keep) = request.keep.filter(|_| (200..300).contains(&status)) {
            let mut reader = response.body_mut().with_config().limit(self.config.max_body_bytes).reader();
            return match bb_core::decode(keep, &mut reader) {
                Ok(decoded) => FetchOutcome::Response(FetchResponse {
                    status,
                    body: Vec::new(),
                    retry_after_s,
                    user,
                    decoded: Some(decoded),
                    credential: Credential::Unknown,
                }),
                Err(e) => {
                    FetchOutcome::Failed(failure::classify(&failure::unwrap_io(e), failure::Phase::Body, &self.config))
                }
            };
        }
        match response.body_mut().with_config().limit(self.config.max_body_bytes).read_to_vec() {
            Ok(body) => FetchOutcome::Response(FetchResponse {
                status,
                body,
                retry_after_s,
                user,
                decoded: None,
                credential: Credential::Unknown,
            }),
            Err(e) => FetchOutcome::Failed(failure::classify(&e, failure::Phase::Body, &self.config)),
        }
    }
}

impl Client {
    /// The configured credentials' `Authorization` header and their kind.
    fn configured(&self) -> Option<(&str, Credential)> {
        let kind = match &self.config.auth {
            Auth::Token(_) => Credential::Token,
            Auth::Basic { .. } => Credential::Password,
            Auth::Anonymous => Credential::Anonymous,
        };
        self.authorization.as_deref().map(|a| (a, kind))
    }

    /// The configured credentials' identity: one Bitbucket user, whichever session asks.
    fn identity(&self) -> Option<Identity<'_>> {
        self.authorization.is_some().then_some(Identity { local: 0, key: &self.identity_key })
    }
}

fn with_authorization<B>(rb: RequestBuilder<B>, authorization: Option<&str>) -> RequestBuilder<B> {
    match authorization {
        Some(a) => rb.header("Authorization", a),
        None => rb,
    }
}

impl Bitbucket for Client {
    /// A request in the shared queue 0.
    fn fetch(&self, request: FetchRequest, _: Option<&PersonalToken>, cancel: &Cancel) -> FetchOutcome {
        let who = Who { queue: 0, lane: Lane::Call, identity: self.identity() };
        self.run(request, self.configured(), &self.secrets, who, cancel)
    }

    /// The configured credentials are one Bitbucket user: one rate budget, whichever session asks.
    fn fetch_for(&self, request: FetchRequest, requester: Requester<'_>, cancel: &Cancel) -> FetchOutcome {
        let who = Who { queue: requester.queue, lane: requester.lane, identity: self.identity() };
        self.run(request, self.configured(), &self.secrets, who, cancel)
    }
}

/// Names the request and the attempts in a failure's detail, and the kind of credential it carried in an
/// answer, and removes every credential from what goes back to the core: an error body, a header or a TLS
/// or proxy detail may echo one.
fn finish(
    outcome: FetchOutcome,
    request: &FetchRequest,
    attempts: u32,
    secrets: &Secrets,
    credential: Credential,
) -> FetchOutcome {
    match outcome {
        FetchOutcome::Failed(mut e) => {
            let tries = if attempts > 1 { format!(" (after {attempts} attempts)") } else { String::new() };
            let detail = format!("{} {}: {}{tries}", request.method.as_str(), request.path, e.detail);
            e.detail = secrets.scrub(&detail).into_owned();
            FetchOutcome::Failed(e)
        }
        FetchOutcome::Response(mut r) => {
            r.body = secrets.scrub_bytes(r.body);
            r.decoded = r.decoded.map(|d| {
                d.scrub(|text| match secrets.scrub(text) {
                    std::borrow::Cow::Owned(clean) => Some(clean),
                    std::borrow::Cow::Borrowed(_) => None,
                })
            });
            r.user = r.user.map(|u| secrets.scrub(&u).into_owned());
            r.credential = credential;
            FetchOutcome::Response(r)
        }
    }
}

/// Every credential `config` holds, in every form bb sends it: the token, the password with
/// `user:password` and its base64, and a proxy's password.
pub fn secrets(config: &BitbucketConfig) -> Secrets {
    let mut secrets = Secrets::new();
    match &config.auth {
        Auth::Token(t) => secrets.add_token(t.expose()),
        Auth::Basic { user, password } => secrets.add_basic(user, password.expose()),
        Auth::Anonymous => {}
    }
    if let Some((user, password)) = config.proxy.as_ref().and_then(|p| userinfo(p.url.expose())) {
        secrets.add_token(&password);
        let decoded = (percent_decode(&user), percent_decode(&password));
        secrets.add_basic(&decoded.0, &decoded.1);
    }
    if let Some(store) = &config.rate_store {
        if let Some((_, password)) = userinfo(store.url.expose()).filter(|(_, p)| !p.is_empty()) {
            secrets.add_token(&password);
            secrets.add_token(&percent_decode(&password));
        }
        if let Some(p) = &store.password {
            secrets.add_token(p.expose());
        }
    }
    secrets
}

/// The user and password in a URL's authority (`scheme://user:password@host`).
fn userinfo(url: &str) -> Option<(String, String)> {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next()?;
    let (info, _) = authority.rsplit_once('@')?;
    let (user, password) = info.split_once(':')?;
    Some((user.to_owned(), password.to_owned()))
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes.get(i + 1..i + 3).and_then(|h| std::str::from_utf8(h).ok());
        match (bytes[i], hex.and_then(|h| u8::from_str_radix(h, 16).ok())) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A jitter in 0..=1000 from the clock's sub-second digits: spreads retries of concurrent requests apart.
fn jitter() -> u16 {
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
    (nanos % 1001) as u16
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]
    use super::*;
    use crate::options::Secret;

    #[test]
    fn the_secrets_of_a_configuration_are_its_password_its_basic_form_and_its_proxys_password() {
        let mut config =
            BitbucketConfig::new("https://h", Auth::Basic { user: "u".into(), password: Secret::new("pa55word") })
                .unwrap();
        config.proxy = Some(crate::options::ProxySettings {
            url: Secret::new("http://px:pr%40xy-pw@proxy:3128"),
            source: "HTTPS_PROXY",
        });
        let b64 = bb_core::base64(b"u:pa55word");
        let proxy_b64 = bb_core::base64(b"px:pr@xy-pw");
        let text = format!("x pa55word y Basic {b64} z pr%40xy-pw {proxy_b64} pr@xy-pw");
        let r = bb_drive::secrets::REMOVED;
        assert_eq!(secrets(&config).scrub(&text), format!("x {r} y Basic {r} z {r} {r} {r}"));
    }

    #[test]
    fn the_agent_is_made_at_the_first_request_and_a_wrong_proxy_still_stops_the_start() {
        let config = BitbucketConfig::new("https://h", Auth::Token(Secret::new("t"))).unwrap();
        let client = Client::new(config).unwrap();
        assert!(client.agent.get().is_none(), "an idle client holds no TLS configuration or pool");
        let _ = client.agent();
        assert!(client.agent.get().is_some());

        let mut config = BitbucketConfig::new("https://h", Auth::Token(Secret::new("t"))).unwrap();
        config.proxy =
            Some(crate::options::ProxySettings { url: Secret::new("http://[::1:3128"), source: "HTTPS_PROXY" });
        let e = Client::new(config).err().unwrap();
        assert!(e.starts_with("HTTPS_PROXY `http://[::1:3128` cannot be used"), "{e}");
    }
}
