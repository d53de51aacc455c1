//! A read nobody waits for gives its slot back at once: six reads hang on Bitbucket, their calls
//! are cancelled, and a seventh read is served without waiting for BB_REQUEST_TIMEOUT (an hour here).
//! The abandoned connections are closed, never handed back to the pool half-read.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod io_support;

use std::sync::Arc;
use std::sync::mpsc;
use std::time::Duration;

use bb_drive::{Bitbucket, Cancel};
use io_support::*;
use serde_json::json;

/// A safety net only: each step takes milliseconds, and without the fix the seventh read would wait an hour.
const NET: Duration = Duration::from_secs(60);

fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let start = std::time::Instant::now();
    while !done() {
        assert!(start.elapsed() < NET, "gave up waiting until {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn six_cancelled_reads_hanging_on_bitbucket_free_their_slots_for_a_seventh() {
    let stack = stack();
    let ctl = control_client(&stack, |_| {});
    let control = Control::new(&ctl);
    let bb = Arc::new(client(&stack, |c| {
        // One queue holds all permits but one: six for these reads, the seventh kept for others.
        c.max_in_flight = 7;
        c.timeout = Duration::from_secs(3600);
    }));
    control.fault(json!({ "kind": "hang", "count": 6, "pathPrefix": PR1 }));
    let (done_tx, done) = mpsc::channel();
    let cancels: Vec<Cancel> = (0..6).map(|_| Cancel::new()).collect();
    for cancel in &cancels {
        let (bb, cancel, done_tx) = (Arc::clone(&bb), cancel.clone(), done_tx.clone());
        std::thread::spawn(move || done_tx.send(bb.fetch(get(PR1), None, &cancel)).unwrap());
    }
    wait_until("six reads hang on the stack", || control.requests()["inFlight"] == 6);
    for cancel in &cancels {
        cancel.cancel();
    }
    let seventh = {
        let bb = Arc::clone(&bb);
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || tx.send(bb.fetch(get(PR1), None, &Cancel::new())).unwrap());
        rx
    };
    assert_eq!(response(seventh.recv_timeout(NET).expect("the seventh read is served")).status, 200);
    for _ in 0..6 {
        let abandoned = failure(done.recv_timeout(NET).expect("an abandoned read returns"));
        assert!(abandoned.detail.contains("cancelled"), "{}", abandoned.detail);
    }
    // bb closed the six connections: the stack sees each hanging request end.
    wait_until("the stack's six hanging requests end", || control.requests()["inFlight"] == 0);
    assert_eq!(control.count(&format!("GET {PR1}")), 7);
}
