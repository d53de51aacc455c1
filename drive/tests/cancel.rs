//! A cancelled call stops its Bitbucket reads: the driver sets their flag, so a read that waits
//! (for a slot, or between retries) returns at once and its outcome is never fed back.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bb_core::testing::test_catalogue;
use bb_core::{ExposureOptions, FetchErrorKind, FetchOutcome, FetchRequest, Input, ServerConfig, SessionId, Ticket};
use bb_drive::{Cancel, Delivery, Driver, Logger, PersonalToken, Process};

const LONG: Duration = Duration::from_secs(3600);

/// A Bitbucket that says when a read starts, then waits for its cancel (an hour at most) and
/// says whether the cancel came.
fn waiting_bitbucket(started: mpsc::Sender<String>, ended: mpsc::Sender<bool>) -> impl bb_drive::Bitbucket {
    let (started, ended) = (Mutex::new(started), Mutex::new(ended));
    move |request: FetchRequest, _: Option<&PersonalToken>, cancel: &Cancel| {
        let _ = started.lock().unwrap().send(request.path.clone());
        let cancelled = cancel.sleep(LONG);
        let _ = ended.lock().unwrap().send(cancelled);
        FetchOutcome::failed(FetchErrorKind::Unreachable, "cancelled")
    }
}

struct Harness {
    driver: Driver,
    session: SessionId,
    delivered: Vec<Delivery>,
    fetched: mpsc::Receiver<(Ticket, FetchOutcome)>,
}

impl Harness {
    fn new(bitbucket: impl bb_drive::Bitbucket) -> Harness {
        let exposed = test_catalogue().expose(&ExposureOptions::default()).unwrap();
        let (tx, fetched) = mpsc::channel();
        let tx = Mutex::new(tx);
        let mut driver = Driver::new(
            ServerConfig::new(exposed, "test"),
            Process::default(),
            Arc::new(bitbucket),
            Logger::new(None),
            move |t, o| {
                let _ = tx.lock().unwrap().send((t, o));
            },
        );
        let mut delivered = Vec::new();
        let session = driver.open(None, &mut |d| delivered.push(d));
        let mut h = Harness { driver, session, delivered, fetched };
        h.send(1, r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#);
        h.send(2, r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        h.delivered.clear();
        h
    }

    fn send(&mut self, tag: u64, line: &str) {
        let delivered = &mut self.delivered;
        self.driver
            .feed(Input::Message { session: self.session, bytes: line.as_bytes(), tag }, &mut |d| delivered.push(d));
    }

    fn sends_for(&self, tag: u64) -> usize {
        self.delivered.iter().filter(|d| matches!(d, Delivery::Send { tag: Some(t), .. } if *t == tag)).count()
    }

    fn done(&self, tag: u64) -> bool {
        self.delivered.iter().any(|d| matches!(d, Delivery::Done { tag: t, .. } if *t == tag))
    }
}

const GET_THING: &str =
    r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get_thing","arguments":{"id":1}}}"#;

#[test]
fn a_cancelled_call_sets_the_cancel_of_its_read_and_is_done_without_an_answer() {
    let (started_tx, started) = mpsc::channel();
    let (ended_tx, ended) = mpsc::channel();
    let mut h = Harness::new(waiting_bitbucket(started_tx, ended_tx));
    h.send(3, GET_THING);
    assert_eq!(started.recv().unwrap(), "/rest/api/latest/things/1");
    assert!(!h.done(3), "the call waits on its read");
    h.send(4, r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}"#);
    // The read was waiting an hour; it returns because its cancel was set.
    assert!(ended.recv().unwrap());
    assert!(h.done(3) && h.done(4));
    assert_eq!(h.sends_for(3), 0);
    // Nor is its outcome handed back.
    assert!(h.fetched.try_recv().is_err());
}

#[test]
fn closing_a_session_cancels_the_reads_of_its_calls() {
    let (started_tx, started) = mpsc::channel();
    let (ended_tx, ended) = mpsc::channel();
    let mut h = Harness::new(waiting_bitbucket(started_tx, ended_tx));
    h.send(3, GET_THING);
    started.recv().unwrap();
    let delivered = &mut h.delivered;
    h.driver.close(h.session, &mut |d| delivered.push(d));
    assert!(ended.recv().unwrap());
    assert!(h.driver.server().session(h.session).is_none());
}

#[test]
fn a_read_that_completes_is_fed_back_and_answers_its_call() {
    let mut h = Harness::new(|request: FetchRequest, _: Option<&PersonalToken>, _: &Cancel| {
        FetchOutcome::response(200, format!("fetched {}", request.path))
    });
    h.send(3, GET_THING);
    let (ticket, outcome) = h.fetched.recv().unwrap();
    let delivered = &mut h.delivered;
    h.driver.feed(Input::Fetched { ticket, outcome }, &mut |d| delivered.push(d));
    assert_eq!(h.sends_for(3), 1);
    assert!(h.done(3));
    let Some(Delivery::Send { message, .. }) = h.delivered.iter().find(|d| matches!(d, Delivery::Send { .. })) else {
        panic!("an answer")
    };
    assert!(String::from_utf8_lossy(message).contains("fetched /rest/api/latest/things/1"));
}
