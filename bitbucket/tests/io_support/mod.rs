//! Helpers for the Bitbucket IO tests: a stack started in-process, bb's client pointed at it, and the stack's
//! control API reached through a client of its own (so the same code works over HTTPS).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, dead_code)]

use bb_bitbucket::Client;
use bb_bitbucket::options::{Auth, BitbucketConfig, Secret};
use bb_core::FetchError;
use bb_core::retry::RetryPolicy;
use bb_core::{FetchOutcome, FetchRequest, FetchResponse, Method};
use bb_drive::{Bitbucket, Cancel};
use bb_stack::{RunningStack, Stack, StackConfig};
use serde_json::{Value, json};

/// The pull request every test reads.
pub const PR1: &str = "/rest/api/latest/projects/BB/repos/api/pull-requests/1";

/// A plain-HTTP stack with the committed seed.
pub fn stack() -> RunningStack {
    Stack::start(StackConfig::default()).expect("the stack starts")
}

/// A configuration for `stack` with its token, fast retries (1 ms backoff) and `tweak` applied.
pub fn config_for(stack: &RunningStack, tweak: impl FnOnce(&mut BitbucketConfig)) -> BitbucketConfig {
    let mut c = BitbucketConfig::new(&stack.base_url, Auth::Token(Secret::new(stack.token.clone()))).unwrap();
    c.retry = RetryPolicy { retries: 3, base_ms: 1, max_backoff_ms: 5, max_retry_after_s: 30 };
    tweak(&mut c);
    c
}

/// bb's client for `stack`.
pub fn client(stack: &RunningStack, tweak: impl FnOnce(&mut BitbucketConfig)) -> Client {
    Client::new(config_for(stack, tweak)).unwrap()
}

/// A GET of `path`.
pub fn get(path: &str) -> FetchRequest {
    FetchRequest::get(path, vec![])
}

/// A request with a method and a JSON body.
pub fn request(method: Method, path: &str, body: Value) -> FetchRequest {
    FetchRequest { method, path: path.into(), query: vec![], body: Some(body), keep: None, refresh: None }
}

/// The response, or a panic naming the failure.
pub fn response(outcome: FetchOutcome) -> FetchResponse {
    match outcome {
        FetchOutcome::Response(r) => r,
        FetchOutcome::Failed(e) => panic!("expected a response, got {e:?}"),
    }
}

/// The failure, or a panic naming the response.
pub fn failure(outcome: FetchOutcome) -> FetchError {
    match outcome {
        FetchOutcome::Failed(e) => e,
        FetchOutcome::Response(r) => {
            panic!("expected a failure, got {} {}", r.status, String::from_utf8_lossy(&r.body))
        }
    }
}

/// The stack's control API through `via` (a client that can reach it: same scheme and trust).
pub struct Control<'a> {
    via: &'a Client,
}

impl<'a> Control<'a> {
    /// Control through `via`.
    pub fn new(via: &'a Client) -> Self {
        Control { via }
    }

    fn call(&self, method: Method, path: &str, body: Value) -> Value {
        let r = response(self.via.fetch(
            FetchRequest { method, path: path.into(), query: vec![], body: Some(body), keep: None, refresh: None },
            None,
            &Cancel::new(),
        ));
        assert!(r.status < 300, "control {path}: {} {}", r.status, String::from_utf8_lossy(&r.body));
        serde_json::from_slice(&r.body).unwrap()
    }

    /// Queues a fault.
    pub fn fault(&self, fault: Value) {
        self.call(Method::Post, "/_stack/faults", fault);
    }

    /// Sets latency for a path prefix.
    pub fn latency(&self, prefix: &str, millis: u64) {
        self.call(Method::Put, "/_stack/latency", json!({ "pathPrefix": prefix, "millis": millis }));
    }

    /// Turns on Bitbucket Data Center's rate limit: every user's bucket holds `capacity` tokens (it starts full), each
    /// request takes one, `refill` come back a second; an empty bucket answers 429 with `Retry-After`.
    pub fn rate_limit(&self, capacity: u64, refill: f64) {
        self.call(Method::Post, "/_stack/rate-limit", json!({ "capacity": capacity, "refill": refill }));
    }

    /// Turns the rate limit off.
    pub fn rate_limit_off(&self) {
        self.call(Method::Post, "/_stack/rate-limit", json!({ "enabled": false }));
    }

    /// The stack's request log (`GET /_stack/log`), its `requests` array: every Bitbucket request since the last
    /// reset, in the order they arrived, as `{method, path, query, user, startMs, endMs, status}` (`endMs` and
    /// `status` null for a request never answered).
    pub fn log(&self) -> Value {
        let mut answer = self.call(Method::Get, "/_stack/log", Value::Null);
        answer["requests"].take()
    }

    /// The stack's counters (`GET /_stack/requests`): `{total, requests: {"METHOD /path": n}, inFlight, maxInFlight,
    /// rateLimited}`.
    pub fn requests(&self) -> Value {
        self.call(Method::Get, "/_stack/requests", Value::Null)
    }

    /// How many times `METHOD /path` was served.
    pub fn count(&self, key: &str) -> u64 {
        self.requests()["requests"][key].as_u64().unwrap_or(0)
    }

    /// The stack's own description (users, passwords).
    pub fn info(&self) -> Value {
        self.call(Method::Get, "/_stack", Value::Null)
    }
}

/// A control client for `stack` (no retries, so control calls are never repeated).
pub fn control_client(stack: &RunningStack, tweak: impl FnOnce(&mut BitbucketConfig)) -> Client {
    client(stack, |c| {
        c.retry.retries = 0;
        // Control calls are not Bitbucket's: they spend no rate budget.
        c.rate_limit = None;
        tweak(c);
    })
}
