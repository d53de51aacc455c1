//! Identical reads in flight at the same time for the same credentials are made once and shared:
//! two drivers sharing their reads (as the HTTP shell's shards do) ask Bitbucket once, and each
//! waiter gets the outcome through its own driver. Reads with other credentials, and writes, are
//! never shared; a read is abandoned only when nobody waits for it any more.
//!
//! The stand-in Bitbucket holds every request until the test releases it, so the reads are in
//! flight together by construction; the tests assert counts, never timing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bb_core::testing::test_catalogue;
use bb_core::{
    Catalogue, ExposureOptions, FetchErrorKind, FetchOutcome, FetchRequest, Input, ServerConfig, SessionId, Ticket,
};
use bb_drive::{Cancel, Delivery, Driver, Logger, PersonalToken, Process, SharedReads};

/// A Bitbucket that counts requests, says when each starts, and holds it until released or cancelled.
struct Held {
    started: mpsc::Receiver<String>,
    /// Whether each request that ended was cancelled (true) or released (false).
    ended: mpsc::Receiver<bool>,
    released: Arc<AtomicBool>,
    count: Arc<AtomicUsize>,
}

impl Held {
    fn new() -> (Held, impl bb_drive::Bitbucket) {
        let (started_tx, started) = mpsc::channel();
        let (ended_tx, ended) = mpsc::channel();
        let (started_tx, ended_tx) = (Mutex::new(started_tx), Mutex::new(ended_tx));
        let released = Arc::new(AtomicBool::new(false));
        let count = Arc::new(AtomicUsize::new(0));
        let (r, c) = (Arc::clone(&released), Arc::clone(&count));
        let bitbucket = move |request: FetchRequest, person: Option<&PersonalToken>, cancel: &Cancel| {
            c.fetch_add(1, Ordering::SeqCst);
            let _ = started_tx.lock().unwrap().send(format!("{} {}", request.method.as_str(), request.path));
            loop {
                if cancel.sleep(Duration::from_millis(2)) {
                    let _ = ended_tx.lock().unwrap().send(true);
                    return FetchOutcome::failed(FetchErrorKind::Unreachable, "cancelled");
                }
                if r.load(Ordering::SeqCst) {
                    let _ = ended_tx.lock().unwrap().send(false);
                    let who = person.map_or("the operator", |p| p.secret());
                    return FetchOutcome::response(200, format!("{} read by {who}", request.path));
                }
            }
        };
        (Held { started, ended, released, count }, bitbucket)
    }

    fn release(&self) {
        self.released.store(true, Ordering::SeqCst);
    }

    fn requests(&self) -> usize {
        self.count.load(Ordering::SeqCst)
    }
}

/// Drivers sharing one table of reads, each with one session, and what each was told.
struct Shards {
    drivers: Vec<Driver>,
    sessions: Vec<SessionId>,
    delivered: Vec<Vec<Delivery>>,
    fetched: mpsc::Receiver<(usize, Ticket, FetchOutcome)>,
    reads: SharedReads,
}

impl Shards {
    /// One driver per entry of `persons`, each opening a session for that person (or the operator).
    fn new(catalogue: Catalogue, bitbucket: impl bb_drive::Bitbucket, persons: &[Option<&str>]) -> Shards {
        let options = ExposureOptions::everything();
        let exposed = catalogue.expose(&options).unwrap();
        let bitbucket: Arc<dyn bb_drive::Bitbucket> = Arc::new(bitbucket);
        let (tx, fetched) = mpsc::channel();
        let reads = SharedReads::new();
        let mut shards = Shards { drivers: vec![], sessions: vec![], delivered: vec![], fetched, reads };
        for (i, person) in persons.iter().enumerate() {
            let tx = Mutex::new(tx.clone());
            let on_fetched = move |t, o| {
                let _ = tx.lock().unwrap().send((i, t, o));
            };
            let config = ServerConfig::new(Arc::clone(&exposed), "test");
            let mut driver =
                Driver::new(config, Process::default(), Arc::clone(&bitbucket), Logger::new(None), on_fetched)
                    .share_reads(&shards.reads);
            let mut delivered = vec![];
            let session = driver.open(person.map(PersonalToken::new), &mut |d| delivered.push(d));
            shards.drivers.push(driver);
            shards.sessions.push(session);
            shards.delivered.push(delivered);
            shards.send(i, 1, r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#);
            shards.send(i, 2, r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
            shards.delivered[i].clear();
        }
        shards
    }

    fn send(&mut self, shard: usize, tag: u64, line: &str) {
        let delivered = &mut self.delivered[shard];
        let input = Input::Message { session: self.sessions[shard], bytes: line.as_bytes(), tag };
        self.drivers[shard].feed(input, &mut |d| delivered.push(d));
    }

    /// Calls `tool` with `arguments` as request `id` on `shard`'s session, tagged `id`.
    fn call(&mut self, shard: usize, id: u64, tool: &str, arguments: &str) {
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{arguments}}}}}"#
        );
        self.send(shard, id, &line);
    }

    fn cancel(&mut self, shard: usize, id: u64) {
        let line = format!(r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":{id}}}}}"#);
        self.send(shard, 1000 + id, &line);
    }

    /// Feeds back the next `n` outcomes, each to the driver whose callback got it; returns which shards got one.
    fn feed_back(&mut self, n: usize) -> Vec<usize> {
        let mut shards = vec![];
        for _ in 0..n {
            let (shard, ticket, outcome) = self.fetched.recv_timeout(Duration::from_secs(30)).expect("an outcome");
            let delivered = &mut self.delivered[shard];
            self.drivers[shard].feed(Input::Fetched { ticket, outcome }, &mut |d| delivered.push(d));
            shards.push(shard);
        }
        shards.sort_unstable();
        shards
    }

    /// The answer `shard` sent for tag `tag`, as text.
    fn answer(&self, shard: usize, tag: u64) -> Option<String> {
        self.delivered[shard].iter().find_map(|d| match d {
            Delivery::Send { tag: Some(t), message, .. } if *t == tag => Some(String::from_utf8_lossy(message).into()),
            _ => None,
        })
    }

    fn done(&self, shard: usize, tag: u64) -> bool {
        self.delivered[shard].iter().any(|d| matches!(d, Delivery::Done { tag: t, .. } if *t == tag))
    }
}

const THING: &str = r#"{"id":1}"#;

#[test]
fn two_sessions_asking_the_same_read_at_once_make_one_request_and_both_are_answered() {
    let (held, bitbucket) = Held::new();
    let mut s = Shards::new(test_catalogue(), bitbucket, &[None, None]);
    s.call(0, 7, "get_thing", THING);
    assert_eq!(held.started.recv().unwrap(), "GET /rest/api/latest/things/1");
    s.call(1, 7, "get_thing", THING);
    assert_eq!(s.reads.in_flight(), 1, "the second session follows the read in flight");
    held.release();
    assert_eq!(s.feed_back(2), [0, 1], "each session's driver is handed the outcome");
    for shard in [0, 1] {
        let answer = s.answer(shard, 7).expect("an answer");
        assert!(answer.contains("/rest/api/latest/things/1 read by the operator"), "{answer}");
    }
    assert_eq!(held.requests(), 1);
    assert_eq!(s.reads.in_flight(), 0);
}

#[test]
fn a_read_asked_after_the_shared_one_completed_goes_to_bitbucket_again() {
    let (held, bitbucket) = Held::new();
    held.release();
    let mut s = Shards::new(test_catalogue(), bitbucket, &[None, None]);
    s.call(0, 7, "get_thing", THING);
    s.feed_back(1);
    s.call(1, 7, "get_thing", THING);
    s.feed_back(1);
    assert!(s.answer(0, 7).is_some() && s.answer(1, 7).is_some());
    assert_eq!(held.requests(), 2, "only reads in flight at the same time are shared");
}

#[test]
fn two_persons_with_their_own_tokens_do_not_share_a_read() {
    let (held, bitbucket) = Held::new();
    let mut s = Shards::new(test_catalogue(), bitbucket, &[Some("alice-token"), Some("bob-token")]);
    s.call(0, 7, "get_thing", THING);
    held.started.recv().unwrap();
    s.call(1, 7, "get_thing", THING);
    // Bob's read is a request of its own: it starts while Alice's is still held.
    held.started.recv().unwrap();
    assert_eq!(s.reads.in_flight(), 2);
    held.release();
    s.feed_back(2);
    assert!(s.answer(0, 7).unwrap().contains("read by alice-token"));
    assert!(s.answer(1, 7).unwrap().contains("read by bob-token"));
    assert_eq!(held.requests(), 2);
}

#[test]
fn one_person_in_two_sessions_shares_a_read() {
    let (held, bitbucket) = Held::new();
    let mut s = Shards::new(test_catalogue(), bitbucket, &[Some("alice-token"), Some("alice-token")]);
    s.call(0, 7, "get_thing", THING);
    held.started.recv().unwrap();
    s.call(1, 7, "get_thing", THING);
    held.release();
    assert_eq!(s.feed_back(2), [0, 1]);
    assert_eq!(held.requests(), 1);
}

#[test]
fn the_leader_cancelling_while_a_follower_waits_leaves_the_request_running_for_the_follower() {
    let (held, bitbucket) = Held::new();
    let mut s = Shards::new(test_catalogue(), bitbucket, &[None, None]);
    s.call(0, 7, "get_thing", THING);
    held.started.recv().unwrap();
    s.call(1, 7, "get_thing", THING);
    s.cancel(0, 7);
    assert!(s.done(0, 7) && s.answer(0, 7).is_none(), "the cancelled call ends unanswered");
    held.release();
    assert!(!held.ended.recv().unwrap(), "the request was released, not cancelled");
    assert_eq!(s.feed_back(1), [1], "only the follower is handed the outcome");
    assert!(s.answer(1, 7).unwrap().contains("read by the operator"));
    assert!(s.fetched.try_recv().is_err());
    assert_eq!(held.requests(), 1);
}

#[test]
fn when_every_waiter_cancels_the_request_is_cancelled() {
    let (held, bitbucket) = Held::new();
    let mut s = Shards::new(test_catalogue(), bitbucket, &[None, None]);
    s.call(0, 7, "get_thing", THING);
    held.started.recv().unwrap();
    s.call(1, 7, "get_thing", THING);
    s.cancel(1, 7);
    s.cancel(0, 7);
    // The request was held for as long as the test lasts; it ends because its cancel was set.
    assert!(held.ended.recv().unwrap());
    assert_eq!(s.reads.in_flight(), 0);
    assert!(s.fetched.recv_timeout(Duration::from_millis(50)).is_err(), "nobody is handed an outcome");
    assert_eq!(held.requests(), 1);
}

#[test]
fn closing_the_leaders_session_leaves_the_read_to_the_follower_and_the_last_close_cancels_it() {
    let (held, bitbucket) = Held::new();
    let mut s = Shards::new(test_catalogue(), bitbucket, &[None, None]);
    s.call(0, 7, "get_thing", THING);
    held.started.recv().unwrap();
    s.call(1, 7, "get_thing", THING);
    let (session, delivered) = (s.sessions[0], &mut s.delivered[0]);
    s.drivers[0].close(session, &mut |d| delivered.push(d));
    assert_eq!(s.reads.in_flight(), 1);
    let (session, delivered) = (s.sessions[1], &mut s.delivered[1]);
    s.drivers[1].close(session, &mut |d| delivered.push(d));
    assert!(held.ended.recv().unwrap());
    assert_eq!(s.reads.in_flight(), 0);
}

#[test]
fn a_write_is_never_shared() {
    let (held, bitbucket) = Held::new();
    let mut s = Shards::new(Catalogue::standard(), bitbucket, &[None, None]);
    let comment = r#"{"project":"BB","repo":"api","pr_id":1,"text":"Looks good"}"#;
    s.call(0, 7, "add_pr_comment", comment);
    assert_eq!(held.started.recv().unwrap(), "POST /rest/api/latest/projects/BB/repos/api/pull-requests/1/comments");
    s.call(1, 7, "add_pr_comment", comment);
    // The second write is sent while the first is still held.
    assert_eq!(held.started.recv().unwrap(), "POST /rest/api/latest/projects/BB/repos/api/pull-requests/1/comments");
    assert_eq!(s.reads.in_flight(), 0, "a write is no shared read");
    held.release();
    assert_eq!(s.feed_back(2), [0, 1]);
    assert_eq!(held.requests(), 2);
}
