//! Requests are served at once, as on a real Bitbucket: reads share the world (a write waits for them), and a
//! request waiting for the world does not stop the server from reading other connections.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod common;
use common::*;
use std::time::Duration;

/// Bounds a wait that fails the test if requests are served one at a time (the server never answers meanwhile).
const GENEROUS: Duration = Duration::from_secs(20);

#[test]
fn a_read_is_answered_while_another_holds_the_world_to_read() {
    let stack = start();
    let (addr, auth) = (stack.addr, bearer(&stack.token));
    let reply = stack.with_world_read(|w| {
        assert!(w.model.prs.len() > 1, "the seed has pull requests");
        send_with_timeout(addr, "GET", PR1, Some(&auth), None, GENEROUS)
    });
    let reply = reply.unwrap_or_else(|e| panic!("the read was answered while the world was held to read: {e}"));
    assert_eq!(reply.status, 200);
    assert_eq!(reply.json()["id"], 1);
}

#[test]
fn a_request_waiting_for_the_world_leaves_other_connections_served() {
    let stack = start();
    let before = stack.arrived();
    let (addr, auth) = (stack.addr, bearer(&stack.token));
    let (first, second) = stack.with_world(|_| {
        let a = auth.clone();
        let first = std::thread::spawn(move || send(addr, "GET", PR1, Some(&a), None).map(|r| r.status));
        wait_until("the first request arrives and waits for the world", || stack.arrived() > before);
        // While the first waits, another connection's request is still read: its arrival is counted.
        let second = std::thread::spawn(move || send(addr, "GET", PR1, Some(&auth), None).map(|r| r.status));
        wait_until("a second connection is read while the first request waits", || stack.arrived() > before + 1);
        (first, second)
    });
    assert_eq!(first.join().unwrap().unwrap(), 200);
    assert_eq!(second.join().unwrap().unwrap(), 200);
}
