//! The request log: every Bitbucket request (not `/_stack`) since the last reset, in the order they arrived, with
//! when each arrived and when its answer was made, on a monotonic clock.
//!
//! It is how bb's tests see that a view's requests go out in as few rounds as possible: requests whose `startMs` are
//! within a few ms of each other went out together. So a request's start is taken when it arrives, before its body
//! is read, before any added latency and before it waits for the world's lock; its end when its answer is handed to
//! the connection to write, after any added latency. A request that never answered (a hang, or a client that gave
//! up during the latency) keeps no end and no status.
//!
//! The log keeps the last [`MAX_ENTRIES`] requests, dropping the oldest.

use serde_json::{Value, json};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// The most requests the log keeps; beyond it the earliest are dropped.
pub const MAX_ENTRIES: usize = 10_000;

/// Entry ids are unique in the process, so a request that started before a reset never ends an entry of the log
/// that replaced its own.
static NEXT_ID: AtomicU64 = AtomicU64::new(0);

/// Which entry a request's answer ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogId(u64);

/// One Bitbucket request as the log keeps it.
#[derive(Debug, Clone, PartialEq)]
pub struct LogEntry {
    id: LogId,
    /// Upper-case method name.
    pub method: String,
    /// The path without the context path and without the query, still percent-encoded.
    pub path: String,
    /// The query string as sent, without the `?` (empty when there was none).
    pub query: String,
    /// The user the credentials named; `None` for no credentials or wrong ones.
    pub user: Option<String>,
    /// When the request arrived.
    pub start: Instant,
    /// When its answer was made, or `None` while it has none.
    pub end: Option<Instant>,
    /// The status it was answered with, or `None` while it has no answer.
    pub status: Option<u16>,
}

/// The requests since the last reset, in the order they arrived, and the instant their times count from.
#[derive(Debug, Clone)]
pub struct RequestLog {
    /// Where `startMs` and `endMs` count from: the last reset, or the start of the stack.
    epoch: Instant,
    entries: VecDeque<LogEntry>,
}

impl Default for RequestLog {
    fn default() -> Self {
        RequestLog::new(Instant::now())
    }
}

impl RequestLog {
    /// An empty log whose times count from `epoch`.
    pub fn new(epoch: Instant) -> RequestLog {
        RequestLog { epoch, entries: VecDeque::new() }
    }

    /// Logs a request that arrived at `start`, placed among the others by its start (a request may reach the log
    /// after one that arrived later did); the oldest is dropped beyond [`MAX_ENTRIES`].
    pub fn start(&mut self, method: &str, path: &str, query: &str, user: Option<String>, start: Instant) -> LogId {
        let id = LogId(NEXT_ID.fetch_add(1, Ordering::Relaxed));
        let entry = LogEntry {
            id,
            method: method.to_string(),
            path: path.to_string(),
            query: query.to_string(),
            user,
            start,
            end: None,
            status: None,
        };
        let at = self.entries.iter().rposition(|e| e.start <= start).map_or(0, |i| i + 1);
        self.entries.insert(at, entry);
        while self.entries.len() > MAX_ENTRIES {
            self.entries.pop_front();
        }
        id
    }

    /// The request `id` was answered with `status` at `end` (nothing if the log no longer holds it).
    pub fn end(&mut self, id: LogId, status: u16, end: Instant) {
        if let Some(e) = self.entries.iter_mut().rev().find(|e| e.id == id) {
            e.end = Some(end);
            e.status = Some(status);
        }
    }

    /// The entries, in the order their requests arrived.
    pub fn entries(&self) -> impl Iterator<Item = &LogEntry> {
        self.entries.iter()
    }

    /// Milliseconds from the epoch to `t`, to the microsecond (0 for an instant before the epoch).
    pub fn millis(&self, t: Instant) -> f64 {
        t.saturating_duration_since(self.epoch).as_micros() as f64 / 1000.0
    }

    /// `{"requests": [{method, path, query, user, startMs, endMs, status}, ...]}`.
    pub fn json(&self) -> Value {
        let list: Vec<Value> = self
            .entries
            .iter()
            .map(|e| {
                json!({
                    "method": e.method,
                    "path": e.path,
                    "query": e.query,
                    "user": e.user,
                    "startMs": self.millis(e.start),
                    "endMs": e.end.map(|t| self.millis(t)),
                    "status": e.status,
                })
            })
            .collect();
        json!({ "requests": list })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn us(t0: Instant, us: u64) -> Instant {
        t0 + Duration::from_micros(us)
    }

    #[test]
    fn entries_carry_their_times_in_ms_from_the_epoch_and_an_end_once_answered() {
        let t0 = Instant::now();
        let mut log = RequestLog::new(t0);
        let a = log.start("GET", "/rest/api/latest/projects", "limit=2&start=0", Some("alice".into()), us(t0, 12_500));
        let b = log.start("POST", "/rest/x", "", None, us(t0, 13_000));
        log.end(a, 200, us(t0, 63_125));
        let j = log.json();
        let first = &j["requests"][0];
        assert_eq!(first["method"], "GET");
        assert_eq!(first["path"], "/rest/api/latest/projects");
        assert_eq!(first["query"], "limit=2&start=0");
        assert_eq!(first["user"], "alice");
        assert_eq!(first["startMs"], 12.5);
        assert_eq!(first["endMs"], 63.125);
        assert_eq!(first["status"], 200);
        let second = &j["requests"][1];
        assert_eq!(second["user"], Value::Null);
        assert_eq!(second["endMs"], Value::Null, "not answered yet");
        assert_eq!(second["status"], Value::Null);
        log.end(b, 401, us(t0, 14_001));
        assert_eq!(log.json()["requests"][1]["endMs"], 14.001);
    }

    #[test]
    fn a_request_that_reaches_the_log_late_is_placed_by_when_it_arrived() {
        let t0 = Instant::now();
        let mut log = RequestLog::new(t0);
        log.start("GET", "/a", "", None, us(t0, 10));
        log.start("GET", "/c", "", None, us(t0, 30));
        log.start("GET", "/b", "", None, us(t0, 20));
        log.start("GET", "/d", "", None, us(t0, 30));
        let paths: Vec<&str> = log.entries().map(|e| e.path.as_str()).collect();
        assert_eq!(paths, ["/a", "/b", "/c", "/d"]);
    }

    #[test]
    fn the_log_keeps_the_last_entries_and_an_instant_before_the_epoch_is_zero() {
        let t0 = Instant::now();
        let mut log = RequestLog::new(us(t0, 5));
        let first = log.start("GET", "/0", "", None, t0);
        for i in 1..=MAX_ENTRIES {
            log.start("GET", &format!("/{i}"), "", None, us(t0, 5 + i as u64));
        }
        assert_eq!(log.entries().count(), MAX_ENTRIES);
        assert_eq!(log.entries().next().map(|e| e.path.as_str()), Some("/1"), "the oldest was dropped");
        log.end(first, 200, us(t0, 1));
        assert!(log.entries().all(|e| e.end.is_none()), "ending a dropped entry changes nothing");
        assert_eq!(log.millis(t0), 0.0);
    }
}
