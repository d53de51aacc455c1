//! How much anonymous login traffic bb takes (`--oauth`): anyone may register a client, start an
//! authorization or ask for a token, so none of it may take what people who logged in need.
//!
//! ```text
//!   a login request on a connection not admitted ──▶ the anonymous share (connections.rs), else 503
//!     POST /oauth/register, GET /oauth/authorize ──▶ its address's sign-up allowance ([`SIGN_UP`]), else 429
//!     POST /oauth/token ──────────────────────────▶ its address's token allowance ([`TOKENS`]), else 429
//!     a body ──▶ at most `Limits::oauth_max_body` (413), whole within `Limits::oauth_body_timeout` (408)
//!     an https client_id ──▶ one of [`MAX_FETCHES`] metadata documents in flight, else 503 at once
//! ```
//!
//! An allowance is a token bucket per [`Peer`] (an IPv4 address, an IPv6 /64), kept as the time at
//! which the peer's bucket is full again (GCRA): a peer whose bucket is full has no entry, and at
//! [`MAX_PEERS`] entries the fullest goes first, so the map never grows past it. Every decision
//! takes the time (`now_ms`). Refusals say when to come back (`Retry-After`) and name no secret:
//! a JSON OAuth error for a client (`slow_down`, RFC 8628 §3.5's code for "ask less often", for a
//! spent allowance; `temporarily_unavailable`, RFC 6749 §4.1.2.1, when bb is busy), a plain page for
//! a person's browser. A document's own time is bounded where it is fetched (the application's
//! provider); here, how many are fetched at once, each holding a blocking thread.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bb_core::Level;
use bb_drive::{Logger, now_ms};
use hyper::body::Incoming;
use hyper::header::{CACHE_CONTROL, CONTENT_LENGTH, CONTENT_TYPE, HeaderValue, RETRY_AFTER};
use hyper::http::request::Parts;
use hyper::{Response, StatusCode};
use serde_json::json;

use crate::options::Limits;
use crate::peer::Peer;
use crate::reply::{self, Reply, closing};
use crate::request::{BodyError, read_body};
use crate::throttle::{Throttle, and_more};

/// How many requests a peer may make at once, and how often it gains one more.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Allowance {
    /// The bucket's size: requests one peer may make in a burst.
    pub(crate) burst: u64,
    /// The bucket gains one request per this many milliseconds.
    pub(crate) every_ms: u64,
}

/// Registrations and authorizations together, per peer: 60 at once, then one a second. A person
/// logs in with a few; a shared address (a NAT, an office) with many people still gets 3,600 an hour.
pub(crate) const SIGN_UP: Allowance = Allowance { burst: 60, every_ms: 1_000 };
/// Token requests (codes exchanged, tokens refreshed), per peer: 120 at once, then two a second.
pub(crate) const TOKENS: Allowance = Allowance { burst: 120, every_ms: 500 };
/// The most peers whose buckets are remembered, per allowance.
pub(crate) const MAX_PEERS: usize = 4096;
/// The most clients' metadata documents fetched at once across the server.
pub(crate) const MAX_FETCHES: usize = 8;
/// What `Retry-After` says when every fetch is taken: about a slow document's time.
const FETCHES_RETRY_S: u64 = 5;
/// What `Retry-After` says when the anonymous share is taken.
const SHARE_RETRY_S: u64 = 1;
/// At most one line of the log about refused login requests per this many milliseconds.
const LOG_PERIOD_MS: u64 = 1_000;

/// What a login request asks for, as far as its allowance goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ask {
    /// `POST /oauth/register`.
    Register,
    /// `GET /oauth/authorize`.
    Authorize,
    /// `POST /oauth/token`.
    Token,
}

/// The peers' buckets of one allowance.
#[derive(Debug)]
pub(crate) struct Buckets {
    allowance: Allowance,
    max_peers: usize,
    /// When each peer's bucket is full again (epoch ms); a full bucket has no entry.
    full_at: HashMap<Peer, u64>,
}

impl Buckets {
    pub(crate) fn new(allowance: Allowance, max_peers: usize) -> Buckets {
        Buckets { allowance, max_peers: max_peers.max(1), full_at: HashMap::new() }
    }

    /// One request of `peer` at `now_ms`: `Ok` when its bucket had one, else `Err` with the
    /// milliseconds until it has.
    pub(crate) fn take(&mut self, peer: Peer, now_ms: u64) -> Result<(), u64> {
        let Allowance { burst, every_ms } = self.allowance;
        let full_at = self.full_at.get(&peer).copied().unwrap_or(now_ms).max(now_ms);
        let next = full_at.saturating_add(every_ms);
        let limit = now_ms.saturating_add(burst.saturating_mul(every_ms));
        if next > limit {
            return Err(next - limit);
        }
        if !self.full_at.contains_key(&peer) && self.full_at.len() >= self.max_peers {
            self.full_at.retain(|_, at| *at > now_ms);
            if self.full_at.len() >= self.max_peers
                && let Some(fullest) = self.full_at.iter().min_by_key(|(_, at)| **at).map(|(p, _)| *p)
            {
                self.full_at.remove(&fullest);
            }
        }
        self.full_at.insert(peer, next);
        Ok(())
    }

    /// How many peers' buckets are remembered.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.full_at.len()
    }
}

/// The login's admission rules of one server.
pub(crate) struct Admission {
    sign_up: Mutex<Buckets>,
    tokens: Mutex<Buckets>,
    fetches: Arc<AtomicUsize>,
    max_body: usize,
    body_timeout: Duration,
    logger: Logger,
    refusals: Throttle,
}

/// One of the [`MAX_FETCHES`] metadata documents in flight; its place is given back when dropped.
#[derive(Debug)]
pub(crate) struct Fetching(Arc<AtomicUsize>);

impl Drop for Fetching {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Admission {
    /// The rules for a server with `limits`, logging refusals (at most a line a second) to `logger`.
    pub(crate) fn new(limits: &Limits, logger: Logger) -> Admission {
        Admission {
            sign_up: Mutex::new(Buckets::new(SIGN_UP, MAX_PEERS)),
            tokens: Mutex::new(Buckets::new(TOKENS, MAX_PEERS)),
            fetches: Arc::new(AtomicUsize::new(0)),
            max_body: limits.oauth_max_body.min(limits.max_body),
            body_timeout: limits.oauth_body_timeout.min(limits.body_timeout),
            logger,
            refusals: Throttle::new(LOG_PERIOD_MS),
        }
    }

    /// Whether `peer` may ask for `ask` at `now_ms`; the 429 to answer when its allowance is spent.
    pub(crate) fn admit(&self, ask: Ask, peer: Peer, now_ms: u64) -> Result<(), Box<Response<Reply>>> {
        let buckets = if ask == Ask::Token { &self.tokens } else { &self.sign_up };
        let taken = buckets.lock().unwrap_or_else(|p| p.into_inner()).take(peer, now_ms);
        let Err(wait_ms) = taken else { return Ok(()) };
        let wait_s = wait_ms.div_ceil(1000).max(1);
        self.refused(now_ms, &format!("refused a login request from {peer}: its allowance is spent"));
        let mut r = match ask {
            Ask::Authorize => page(
                StatusCode::TOO_MANY_REQUESTS,
                &format!("Too many logins from this address; try again in {wait_s} s."),
            ),
            Ask::Register | Ask::Token => oauth_error(
                StatusCode::TOO_MANY_REQUESTS,
                "slow_down",
                &format!("Too many requests from this address; try again in {wait_s} s."),
            ),
        };
        retry_after(&mut r, wait_s);
        Err(Box::new(r))
    }

    /// A place to fetch the metadata document an authorization's `client_id` may name (an https
    /// URL): `Ok(None)` when it names none, or the 503 to answer at once when every place is taken.
    /// The place is to be held by the thread that fetches, until it is done.
    pub(crate) fn fetch_for(&self, query: &[(String, String)]) -> Result<Option<Fetching>, Box<Response<Reply>>> {
        let client_id = query.iter().find(|(k, _)| k == "client_id").map_or("", |(_, v)| v.as_str());
        if !client_id.starts_with("https://") {
            return Ok(None);
        }
        let taken =
            self.fetches.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| (n < MAX_FETCHES).then_some(n + 1));
        if taken.is_ok() {
            return Ok(Some(Fetching(Arc::clone(&self.fetches))));
        }
        self.refused(
            now_ms(),
            &format!("refused an authorization: {MAX_FETCHES} client metadata documents are being fetched"),
        );
        let mut r = page(
            StatusCode::SERVICE_UNAVAILABLE,
            &format!("bb is busy reading other clients' details; try again in {FETCHES_RETRY_S} s."),
        );
        retry_after(&mut r, FETCHES_RETRY_S);
        Err(Box::new(r))
    }

    /// A login request's body: at most the login's cap (a larger `Content-Length` is refused before
    /// any of it is read), whole within its deadline. A refusal closes the connection.
    pub(crate) async fn body(&self, parts: &Parts, body: Incoming) -> Result<Vec<u8>, Box<Response<Reply>>> {
        let declared =
            parts.headers.get(CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.parse::<u64>().ok());
        let too_large = |max: usize| {
            let why = format!("Content too large: a login request's body is at most {max} bytes.");
            closing(oauth_error(StatusCode::PAYLOAD_TOO_LARGE, "invalid_request", &why))
        };
        if declared.is_some_and(|n| n > self.max_body as u64) {
            return Err(Box::new(too_large(self.max_body)));
        }
        read_body(body, self.max_body, self.body_timeout).await.map_err(|e| {
            Box::new(match e {
                BodyError::TooLarge => too_large(self.max_body),
                BodyError::Slow => {
                    let why = format!(
                        "Request timeout: a login request's body must arrive whole within {} ms.",
                        self.body_timeout.as_millis()
                    );
                    closing(oauth_error(StatusCode::REQUEST_TIMEOUT, "invalid_request", &why))
                }
                BodyError::Broken => closing(oauth_error(
                    StatusCode::BAD_REQUEST,
                    "invalid_request",
                    "Bad request: the body could not be read.",
                )),
            })
        })
    }

    /// How often the log says a login request was refused here (the server flushes what it held back).
    pub(crate) fn refusals(&self) -> &Throttle {
        &self.refusals
    }

    fn refused(&self, now_ms: u64, line: &str) {
        if let Some(held) = self.refusals.event(now_ms) {
            self.logger.log(Level::Notice, &format!("{line}{}", and_more(held)));
        }
    }
}

/// The answer to a login request on a connection not admitted when the anonymous share is taken:
/// 503 with `Retry-After`, a page for the paths a browser visits, and the connection closed.
pub(crate) fn busy(path: &str) -> Response<Reply> {
    let why = "bb is busy with other logins; try again shortly.";
    let mut r = match path {
        "/oauth/authorize" | "/oauth/callback" => page(StatusCode::SERVICE_UNAVAILABLE, why),
        _ => oauth_error(StatusCode::SERVICE_UNAVAILABLE, "temporarily_unavailable", why),
    };
    retry_after(&mut r, SHARE_RETRY_S);
    closing(r)
}

fn retry_after(r: &mut Response<Reply>, seconds: u64) {
    if let Ok(v) = HeaderValue::from_str(&seconds.to_string()) {
        r.headers_mut().insert(RETRY_AFTER, v);
    }
}

/// An OAuth error document (RFC 6749 §5.2), never cached.
fn oauth_error(status: StatusCode, error: &str, description: &str) -> Response<Reply> {
    let body = json!({ "error": error, "error_description": description });
    let mut r = reply::json(body.to_string().into_bytes());
    *r.status_mut() = status;
    r.headers_mut().insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}

/// A page for a person's browser: plain text, so nothing in it is ever markup.
fn page(status: StatusCode, text: &str) -> Response<Reply> {
    let mut r = Response::new(Reply::Full(Some(format!("bb: {text}\n").into_bytes().into())));
    *r.status_mut() = status;
    r.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"));
    r.headers_mut().insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]
    use super::*;

    fn peer(s: &str) -> Peer {
        Peer::of(format!("{s}:1").parse().unwrap())
    }

    const T0: u64 = 1_000_000;

    #[test]
    fn a_peer_gets_its_burst_then_one_request_per_interval_and_is_told_how_long_to_wait() {
        let mut b = Buckets::new(Allowance { burst: 3, every_ms: 1_000 }, 16);
        let p = peer("10.0.0.1");
        assert!((0..3).all(|_| b.take(p, T0).is_ok()));
        assert_eq!(b.take(p, T0), Err(1_000));
        assert_eq!(b.take(p, T0 + 400), Err(600), "a refused request spends nothing");
        assert_eq!(b.take(p, T0 + 1_000), Ok(()));
        assert_eq!(b.take(p, T0 + 1_000), Err(1_000));
        // Idle long enough, the bucket is full again, and no fuller than its burst.
        assert!((0..3).all(|_| b.take(p, T0 + 60_000).is_ok()));
        assert!(b.take(p, T0 + 60_000).is_err());
    }

    #[test]
    fn one_peer_spending_its_allowance_leaves_anothers_whole() {
        let mut b = Buckets::new(Allowance { burst: 2, every_ms: 1_000 }, 16);
        let (flood, other) = (peer("10.0.0.1"), peer("10.0.0.2"));
        assert!((0..2).all(|_| b.take(flood, T0).is_ok()));
        assert!(b.take(flood, T0).is_err());
        assert!((0..2).all(|_| b.take(other, T0).is_ok()));
        // An IPv6 /64 is one peer: its addresses share a bucket.
        let (a, c) = (peer("[2001:db8::1]"), peer("[2001:db8::2]"));
        assert!(b.take(a, T0).is_ok() && b.take(c, T0).is_ok());
        assert!(b.take(a, T0).is_err());
    }

    #[test]
    fn the_buckets_remembered_never_pass_their_bound_and_full_ones_go_first() {
        let mut b = Buckets::new(Allowance { burst: 10, every_ms: 1_000 }, 4);
        let flood = peer("10.0.0.1");
        assert!((0..10).all(|_| b.take(flood, T0).is_ok()));
        // Peers that asked once are full again a second later.
        for i in 2..=4 {
            assert!(b.take(peer(&format!("10.0.0.{i}")), T0).is_ok());
        }
        assert!(b.take(peer("10.0.0.5"), T0 + 1_000).is_ok());
        assert_eq!(b.len(), 2, "the full buckets were forgotten");
        assert!(b.take(flood, T0 + 1_000).is_ok(), "a second gave it one request back");
        assert!(b.take(flood, T0 + 1_000).is_err(), "the spent one was kept");
        // A bound reached by spent buckets only: the fullest goes, and the map stays at its bound.
        for i in 6..=200 {
            assert!(b.take(peer(&format!("10.0.1.{}", i % 250)), T0 + 1_000).is_ok());
            assert!(b.len() <= 4);
        }
    }

    #[test]
    fn registrations_and_authorizations_share_an_allowance_and_tokens_have_their_own() {
        let a = Admission::new(&Limits::default(), Logger::new(None));
        let p = peer("10.0.0.1");
        for i in 0..SIGN_UP.burst {
            let ask = if i % 2 == 0 { Ask::Register } else { Ask::Authorize };
            assert!(a.admit(ask, p, T0).is_ok());
        }
        let Err(r) = a.admit(Ask::Register, p, T0) else { panic!("a request beyond the burst") };
        assert_eq!(r.status(), StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(r.headers()[RETRY_AFTER], "1");
        assert_eq!(r.headers()[CONTENT_TYPE], "application/json");
        let Err(page) = a.admit(Ask::Authorize, p, T0) else { panic!("a request beyond the burst") };
        assert!(page.headers()[CONTENT_TYPE].to_str().unwrap().starts_with("text/plain"));
        assert!(a.admit(Ask::Token, p, T0).is_ok(), "tokens are counted apart");
        assert!(a.admit(Ask::Register, p, T0 + 1_000).is_ok());
    }

    #[test]
    fn only_an_https_client_id_takes_one_of_the_few_fetches_and_gives_it_back() {
        let a = Admission::new(&Limits::default(), Logger::new(None));
        let q = |id: &str| vec![("client_id".to_owned(), id.to_owned())];
        assert!(matches!(a.fetch_for(&q("registered-id")), Ok(None)));
        let held: Vec<Fetching> = (0..MAX_FETCHES)
            .filter_map(|i| a.fetch_for(&q(&format!("https://c{i}.example/m"))).ok().flatten())
            .collect();
        assert_eq!(held.len(), MAX_FETCHES);
        let Err(r) = a.fetch_for(&q("https://late.example/m")) else { panic!("a fetch beyond the bound") };
        assert_eq!(r.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert!(r.headers().contains_key(RETRY_AFTER));
        assert!(matches!(a.fetch_for(&q("registered-id")), Ok(None)), "a registered client fetches nothing");
        drop(held);
        assert!(matches!(a.fetch_for(&q("https://late.example/m")), Ok(Some(_))));
    }

    #[test]
    fn login_bodies_are_capped_and_timed_by_the_smaller_of_their_limits_and_the_mcp_ones() {
        let l = Limits { max_body: 1_000, body_timeout: Duration::from_secs(2), ..Limits::default() };
        let a = Admission::new(&l, Logger::new(None));
        assert_eq!((a.max_body, a.body_timeout), (1_000, Duration::from_secs(2)));
        let a = Admission::new(&Limits::default(), Logger::new(None));
        assert_eq!((a.max_body, a.body_timeout), (16 * 1024, Duration::from_secs(5)));
    }
}
