//! An answer nobody reads: its bytes count against the process's memory budget until they are written,
//! a client that goes away gives them back, and a client that reads nothing of it for the write
//! timeout has its connection closed, which gives them back too. One test in this file: the budget is
//! the process's own.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod common;

use std::io::Write;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bb_core::FetchOutcome;
use bb_drive::{Bitbucket, Cancel};
use bb_http::{HttpOptions, Limits, PersonalToken};
use common::{Req, TestServer, connect, initialize, start};

/// Each thing is this many bytes: far more than loopback's socket buffers take in for a client that
/// does not read.
const THING: usize = 16 << 20;

fn waits_for(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < Duration::from_secs(60), "{what}: not within a minute");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn server(write_timeout: Duration) -> TestServer {
    let big: Arc<dyn Bitbucket> = Arc::new(|_: bb_core::FetchRequest, _: Option<&PersonalToken>, _: &Cancel| {
        FetchOutcome::response(200, "x".repeat(THING))
    });
    start(HttpOptions { limits: Limits { write_timeout, ..Limits::default() }, ..HttpOptions::default() }, big)
}

/// A request for the big thing, as bytes to write to a connection.
fn call(addr: SocketAddr, session: &str, id: u64) -> Vec<u8> {
    let body = serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                                  "params": {"name": "get_thing", "arguments": {"id": 1}}});
    Req::post(body.to_string()).session(session).header("MCP-Protocol-Version", "2025-11-25").bytes(addr)
}

#[test]
fn unread_answers_hold_the_memory_budget_until_the_write_timeout_closes_their_connections() {
    // Three clients ask and read nothing, and the write timeout is far away: all three answers are
    // held at once, however slowly a loaded machine makes them. Going away gives them back.
    let patient = server(Duration::from_secs(600));
    let session = initialize(patient.addr);
    let unread: Vec<_> = (1..=3)
        .map(|id| {
            let mut c = connect(patient.addr);
            c.write_all(&call(patient.addr, &session, id)).unwrap();
            c
        })
        .collect();
    let room = patient.process.room();
    waits_for("the three answers held against the budget", || room.unsent() >= 3 * THING as u64);
    drop(unread);
    waits_for("the answers of the clients that went away given back", || room.unsent() == 0);
    assert_eq!(room.usage().0, 0, "nothing else holds room");

    // A client that stays connected and reads nothing: after the write timeout its connection is
    // closed and the bytes go. (The timeout runs from the answer's first stalled write, after it is
    // held: seconds, for the wait below to see it held on a loaded machine.)
    let s = server(Duration::from_secs(3));
    let room = s.process.room();
    let session = initialize(s.addr);
    let mut stalled = connect(s.addr);
    stalled.write_all(&call(s.addr, &session, 1)).unwrap();
    waits_for("the unread answer held against the budget", || room.unsent() >= THING as u64);
    waits_for("the unread answer given back at the write timeout", || room.unsent() == 0);
    assert_eq!(room.usage().0, 0, "nothing else holds room");
    // The server still serves, and a read answer is given back too.
    let mut c = connect(s.addr);
    c.write_all(&call(s.addr, &session, 2)).unwrap();
    let a = common::read_answer(&mut c);
    assert_eq!(a.status, 200);
    assert!(a.body.len() > THING, "{} bytes", a.body.len());
    waits_for("a read answer given back", || room.unsent() == 0);
    drop(stalled);
    drop(patient);
}
