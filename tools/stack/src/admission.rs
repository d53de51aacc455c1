//! What happens to a Bitbucket request before any handler runs, as the control API has set it: the rate limit
//! (Bitbucket Data Center's, [`crate::rate_limit`]), the faults queued (a status, a hang, a cut body, an echoed
//! `Authorization`), the latency added by path prefix; and what is kept of the requests: counted, in flight too,
//! and logged with their times ([`crate::request_log`]).
//!
//! The world holds one [`Control`]; `control` (the `/_stack` API) changes it, and `server` asks it for each request's
//! latency and [`Admission`] and carries them out.

use crate::errors;
use crate::exchange::Response;
use crate::rate_limit::RateLimiter;
use crate::request_log::RequestLog;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// What `/_stack` has set: the rate limit, queued faults, latency by path prefix; the requests counted and logged.
#[derive(Debug, Clone, Default)]
pub struct Control {
    /// Faults waiting to happen, oldest first.
    pub faults: Vec<Fault>,
    /// Added latency in ms by path prefix (the longest matching prefix applies).
    pub latency: BTreeMap<String, u64>,
    /// Bitbucket requests received, by `METHOD /path` (query left out).
    pub requests: BTreeMap<String, u64>,
    /// Bitbucket requests being served right now (latency and hangs included).
    pub in_flight: u64,
    /// The most Bitbucket requests served at once since the counters were last reset.
    pub max_in_flight: u64,
    /// The rate limit (off unless set) and every user's token bucket.
    pub rate_limiter: RateLimiter,
    /// Bitbucket requests the rate limit refused since the counters were last reset.
    pub rate_limited: u64,
    /// Every Bitbucket request since the last reset, with when it arrived and when it was answered.
    pub log: RequestLog,
}

/// A fault that the next matching requests meet.
#[derive(Debug, Clone, PartialEq)]
pub struct Fault {
    /// How many more requests it hits.
    pub remaining: u32,
    /// Only requests whose path starts with this (all when absent).
    pub path_prefix: Option<String>,
    /// What happens.
    pub kind: FaultKind,
}

/// What a fault does to a request.
#[derive(Debug, Clone, PartialEq)]
pub enum FaultKind {
    /// Answer with this status (and `Retry-After` seconds, for 429).
    Status {
        /// The status of the injected answer, with a Bitbucket error body worded for 429, 414, 502 and 503.
        status: u16,
        /// `Retry-After` seconds.
        retry_after: Option<u64>,
    },
    /// Never answer.
    Hang,
    /// Declare the whole body's length but send half of it, then close.
    Truncate,
    /// Answer with this status and an error whose text repeats the request's `Authorization` header, as a
    /// careless server or proxy does.
    Echo {
        /// The status of the injected answer, whose error text repeats the request's `Authorization`.
        status: u16,
    },
}

/// What the server does with a Bitbucket request, decided before any handler runs.
#[derive(Debug, Clone, PartialEq)]
pub enum Admission {
    /// Serve it normally.
    Serve,
    /// Answer with this response instead.
    Respond(Response),
    /// Never answer.
    Hang,
    /// Serve it, but cut the body short.
    Truncate,
    /// Answer with this status and the request's `Authorization` header in the error text ([`echo_response`]).
    Echo(u16),
}

impl Control {
    /// A Bitbucket request starts being served.
    pub fn enter(&mut self) {
        self.in_flight += 1;
        self.max_in_flight = self.max_in_flight.max(self.in_flight);
    }

    /// A Bitbucket request has been answered (or abandoned).
    pub fn leave(&mut self) {
        self.in_flight = self.in_flight.saturating_sub(1);
    }

    /// Counts a Bitbucket request and decides its fate: the latency to add and whether a fault takes it. It is
    /// [`Control::admit_as`] for a request whose credentials name nobody, so the rate limit never refuses it.
    pub fn admit(&mut self, method: &str, path: &str) -> (Option<Duration>, Admission) {
        self.admit_as(method, path, None, Instant::now())
    }

    /// Counts a Bitbucket request and decides its fate: the latency to add, and whether the rate limit refuses it
    /// (when `user`, whom its credentials name, has no token left at `now`) or else a fault takes it. A refused
    /// request takes no fault; anonymous requests and wrong credentials (`user` `None`) are never limited.
    pub fn admit_as(
        &mut self,
        method: &str,
        path: &str,
        user: Option<&str>,
        now: Instant,
    ) -> (Option<Duration>, Admission) {
        *self.requests.entry(format!("{method} {path}")).or_default() += 1;
        let delay = self
            .latency
            .iter()
            .filter(|(prefix, _)| path.starts_with(prefix.as_str()))
            .max_by_key(|(prefix, _)| prefix.len())
            .map(|(_, ms)| Duration::from_millis(*ms));
        if let Some(Err(retry_after)) = user.map(|u| self.rate_limiter.admit(u, now)) {
            self.rate_limited += 1;
            return (delay, Admission::Respond(fault_response(429, Some(retry_after))));
        }
        let hit = self
            .faults
            .iter()
            .position(|f| f.remaining > 0 && f.path_prefix.as_deref().is_none_or(|p| path.starts_with(p)));
        let Some(i) = hit else {
            return (delay, Admission::Serve);
        };
        let kind = self.faults[i].kind.clone();
        self.faults[i].remaining -= 1;
        if self.faults[i].remaining == 0 {
            self.faults.remove(i);
        }
        let admission = match kind {
            FaultKind::Hang => Admission::Hang,
            FaultKind::Truncate => Admission::Truncate,
            FaultKind::Status { status, retry_after } => Admission::Respond(fault_response(status, retry_after)),
            FaultKind::Echo { status } => Admission::Echo(status),
        };
        (delay, admission)
    }
}

fn fault_response(status: u16, retry_after: Option<u64>) -> Response {
    let message = match status {
        // Rate limiting: 429 with Retry-After seconds [rec]; the rate limit's own answer too ([`crate::rate_limit`]).
        // The text is [assumed]: no public source quotes Bitbucket Data Center's.
        429 => "You have been rate limited. Try again later.",
        414 => "URI Too Long (injected by the stack).",
        502 => "Bad gateway (injected by the stack).",
        503 => "Bitbucket is unavailable (injected by the stack).",
        _ => "An internal error occurred (injected by the stack).",
    };
    let r = errors::error(status, None, message);
    match retry_after {
        Some(s) => r.with_header("Retry-After", &s.to_string()),
        None => r,
    }
}

/// The answer of an [`FaultKind::Echo`] fault: `status` with an error that repeats `authorization`.
pub fn echo_response(status: u16, authorization: Option<&str>) -> Response {
    let seen = authorization.unwrap_or("(none)");
    errors::error(status, None, &format!("Request rejected (injected by the stack); it carried Authorization: {seen}"))
}
