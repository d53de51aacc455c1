//! An answer nobody reads: its bytes count against the process's memory budget until they are written,
//! and a client that reads nothing of it for the write timeout has its connection closed, which gives
//! them back. One test in this file: the budget is the process's own.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod common;

use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bb_core::FetchOutcome;
use bb_drive::{Bitbucket, Cancel, Room};
use bb_http::{HttpOptions, Limits, PersonalToken};
use common::{Req, connect, initialize, start};

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

#[test]
fn unread_answers_hold_the_memory_budget_until_the_write_timeout_closes_their_connections() {
    let big: Arc<dyn Bitbucket> = Arc::new(|_: bb_core::FetchRequest, _: Option<&PersonalToken>, _: &Cancel| {
        FetchOutcome::response(200, "x".repeat(THING))
    });
    let limits = Limits { write_timeout: Duration::from_millis(1500), ..Limits::default() };
    let s = start(HttpOptions { limits, ..HttpOptions::default() }, big);
    let session = initialize(s.addr);
    let call = |id: u64| {
        let body = serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                                      "params": {"name": "get_thing", "arguments": {"id": 1}}});
        Req::post(body.to_string()).session(&session).header("MCP-Protocol-Version", "2025-11-25").bytes(s.addr)
    };
    // Three clients ask, and read nothing.
    let unread: Vec<_> = (1..=3)
        .map(|id| {
            let mut c = connect(s.addr);
            c.write_all(&call(id)).unwrap();
            c
        })
        .collect();
    let room = Room::process();
    waits_for("the three answers held against the budget", || room.unsent() >= 3 * THING as u64);
    // Nothing of them is read: after the write timeout their connections close and the bytes go.
    waits_for("the answers given back", || room.unsent() == 0);
    assert_eq!(room.usage().0, 0, "nothing else holds room");
    drop(unread);
    // The server still serves.
    let mut c = connect(s.addr);
    c.write_all(&call(4)).unwrap();
    let a = common::read_answer(&mut c);
    assert_eq!(a.status, 200);
    assert!(a.body.len() > THING, "{} bytes", a.body.len());
    waits_for("a read answer given back", || room.unsent() == 0);
}
