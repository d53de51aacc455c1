//! `GET /healthz` (the process serves) and `GET /readyz` (ready to take calls) for load balancers
//! and orchestrators. Neither needs the bearer token, both pass the Host and Origin checks, and
//! neither costs a Bitbucket request: a probe asks Bitbucket one cheap read,
//! `GET /rest/api/latest/application-properties` (`reference/bitbucket-dc.md`), once per interval from the first
//! `/readyz` on (a server nobody asks never probes), and `/readyz` reads what the last probe saw. Their bodies name the check that failed and nothing else: no URL,
//! address, user or Bitbucket error text.
//!
//! With the operator's credentials, only a 2xx counts: a 401 means every call would fail. In
//! per-person mode the probe has no credentials, and any answer below 500 counts: Bitbucket answered.
//! (That it answers anonymous callers 200 is [assumed]: its login page reads it, but a server with
//! public access turned off may say 401.)

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use bb_core::{FetchOutcome, FetchRequest};
use bb_drive::{Bitbucket, Cancel, now_ms};
use hyper::header::{CACHE_CONTROL, HeaderValue};
use hyper::{Response, StatusCode};
use serde_json::json;

use crate::drain::Drain;
use crate::reply::{Reply, json};

/// What the last probe of Bitbucket saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Seen {
    /// No probe has finished yet.
    Nothing,
    /// Bitbucket answered 2xx.
    Answered,
    /// Bitbucket answered with this status.
    Status(u16),
    /// No answer (refused, timed out, TLS, cut).
    NoAnswer,
}

/// Bitbucket's reachability as the probe last saw it, read by `/readyz`.
pub(crate) struct Readiness {
    interval: Duration,
    /// The probe asks without credentials: any answer below 500 counts.
    anonymous: std::sync::atomic::AtomicBool,
    /// When the last probe answered 2xx (ms since the epoch; 0: never).
    last_ok_ms: AtomicU64,
    seen: Mutex<Seen>,
    /// Closed (dropped) by the first `/readyz`: the probe starts then.
    wanted_tx: Mutex<Option<smol::channel::Sender<()>>>,
    wanted_rx: smol::channel::Receiver<()>,
}

impl Readiness {
    pub(crate) fn new(interval: Duration) -> Arc<Readiness> {
        let (wanted_tx, wanted_rx) = smol::channel::bounded(1);
        Arc::new(Readiness {
            interval,
            anonymous: std::sync::atomic::AtomicBool::new(false),
            last_ok_ms: AtomicU64::new(0),
            seen: Mutex::new(Seen::Nothing),
            wanted_tx: Mutex::new(Some(wanted_tx)),
            wanted_rx,
        })
    }

    /// The probe asks without credentials from now on.
    pub(crate) fn set_anonymous(&self) {
        self.anonymous.store(true, Ordering::Release);
    }

    /// Records one probe's outcome at `now_ms`.
    fn record(&self, outcome: &FetchOutcome, now_ms: u64) {
        let enough = if self.anonymous.load(Ordering::Acquire) { 200..500 } else { 200..300 };
        let seen = match outcome {
            FetchOutcome::Response(r) if enough.contains(&r.status) => {
                self.last_ok_ms.store(now_ms, Ordering::Release);
                Seen::Answered
            }
            FetchOutcome::Response(r) => Seen::Status(r.status),
            FetchOutcome::Failed(_) => Seen::NoAnswer,
        };
        *self.seen.lock().unwrap_or_else(PoisonError::into_inner) = seen;
    }

    /// Which check fails at `now_ms`, if any: a sentence with no detail of Bitbucket's.
    fn failing(&self, drain: &Drain, now_ms: u64) -> Option<String> {
        if drain.begun() {
            return Some("stopping: bb is restarting and takes no new calls".to_owned());
        }
        // Two intervals and the probe's own time: one late probe does not flap the answer.
        let window =
            u64::try_from(self.interval.as_millis()).unwrap_or(u64::MAX).saturating_mul(2).saturating_add(PROBE_MS);
        let last = self.last_ok_ms.load(Ordering::Acquire);
        let secs = window / 1000;
        match *self.seen.lock().unwrap_or_else(PoisonError::into_inner) {
            Seen::Answered if now_ms.saturating_sub(last) <= window => None,
            Seen::Nothing => Some("bitbucket: not checked yet".to_owned()),
            Seen::Status(s) => Some(format!("bitbucket: it answered HTTP {s} to a cheap read")),
            Seen::Answered | Seen::NoAnswer => Some(format!("bitbucket: no answer within the last {secs} s")),
        }
    }
}

/// How long the probe's own read may take before it counts as no answer (the client's timeouts
/// usually end it sooner).
const PROBE_MS: u64 = 10_000;

/// From the first `/readyz` on, asks Bitbucket the cheap read at once and then once per interval,
/// until the stop begins.
pub(crate) async fn probe(readiness: Arc<Readiness>, bitbucket: Arc<dyn Bitbucket>, drain: Arc<Drain>) {
    let wanted = smol::future::or(
        async {
            let _ = readiness.wanted_rx.recv().await;
            true
        },
        async {
            drain.on_begin().await;
            false
        },
    );
    if !wanted.await {
        return;
    }
    loop {
        let b = Arc::clone(&bitbucket);
        let cancel = Cancel::new();
        let flag = cancel.clone();
        let read = smol::unblock(move || {
            b.fetch(FetchRequest::get("/rest/api/latest/application-properties", vec![]), None, &flag)
        });
        let outcome = smol::future::or(read, async {
            smol::Timer::after(Duration::from_millis(PROBE_MS)).await;
            cancel.cancel();
            FetchOutcome::failed(bb_core::FetchErrorKind::Timeout, "no answer in time")
        })
        .await;
        readiness.record(&outcome, now_ms());
        let stop = smol::future::or(
            async {
                drain.on_begin().await;
                true
            },
            async {
                smol::Timer::after(readiness.interval).await;
                false
            },
        )
        .await;
        if stop {
            return;
        }
    }
}

/// `/healthz`: 200 while the process serves.
pub(crate) fn healthz() -> Response<Reply> {
    status(StatusCode::OK, json!({"status": "ok"}))
}

/// `/readyz`: 200 when ready to take calls, else 503 naming the check that failed.
pub(crate) fn readyz(readiness: &Readiness, drain: &Drain) -> Response<Reply> {
    drop(readiness.wanted_tx.lock().unwrap_or_else(PoisonError::into_inner).take());
    match readiness.failing(drain, now_ms()) {
        None => status(StatusCode::OK, json!({"status": "ready"})),
        Some(why) => status(StatusCode::SERVICE_UNAVAILABLE, json!({"status": "not ready", "failed": why})),
    }
}

fn status(code: StatusCode, body: serde_json::Value) -> Response<Reply> {
    let mut r = json(body.to_string().into_bytes());
    *r.status_mut() = code;
    r.headers_mut().insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use bb_core::FetchErrorKind;

    #[test]
    fn ready_only_while_a_recent_probe_was_answered_and_the_stop_has_not_begun() {
        let r = Readiness::new(Duration::from_secs(10));
        let d = Drain::new();
        assert_eq!(r.failing(&d, 1_000).as_deref(), Some("bitbucket: not checked yet"));
        r.record(&FetchOutcome::response(200, "{}"), 1_000);
        assert_eq!(r.failing(&d, 2_000), None);
        assert_eq!(r.failing(&d, 1_000 + 30_000), None);
        assert!(r.failing(&d, 1_000 + 30_001).is_some_and(|w| w.contains("no answer within the last 30 s")));
        r.record(&FetchOutcome::response(401, "secret detail"), 40_000);
        let why = r.failing(&d, 40_000).unwrap_or_default();
        assert_eq!(why, "bitbucket: it answered HTTP 401 to a cheap read");
        r.record(&FetchOutcome::failed(FetchErrorKind::Unreachable, "http://10.0.0.1 refused"), 50_000);
        assert!(!r.failing(&d, 50_000).unwrap_or_default().contains("10.0.0.1"));
        r.set_anonymous();
        r.record(&FetchOutcome::response(401, "{}"), 55_000);
        assert_eq!(r.failing(&d, 55_000), None, "without credentials, a 401 is an answer");
        r.record(&FetchOutcome::response(200, "{}"), 60_000);
        d.begin();
        assert!(r.failing(&d, 60_000).is_some_and(|w| w.starts_with("stopping")));
    }
}
