//! The bound on requests in flight, seen from the server: the stack counts the most requests it served at once.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod io_support;

use bb_drive::{Bitbucket, Cancel};
use io_support::*;
use std::sync::Arc;

#[test]
fn twenty_concurrent_fetches_never_put_more_than_the_bound_in_flight() {
    let stack = stack();
    let ctl = control_client(&stack, |_| {});
    let bb = Arc::new(client(&stack, |c| c.max_in_flight = 6));
    Control::new(&ctl).latency("/rest/api/latest/projects/BB/repos/api/pull-requests", 100);
    let threads: Vec<_> = (0..20)
        .map(|_| {
            let bb = bb.clone();
            std::thread::spawn(move || response(bb.fetch(get(PR1), None, &Cancel::new())).status)
        })
        .collect();
    let statuses: Vec<u16> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    assert_eq!(statuses, vec![200; 20], "every request is served, none refused");
    let counters = Control::new(&ctl).requests();
    assert_eq!(counters["requests"][format!("GET {PR1}")], 20);
    let most = counters["maxInFlight"].as_u64().unwrap();
    assert!((1..=6).contains(&most), "at most 6 at once, saw {most}");
    assert_eq!(counters["inFlight"], 0);
}

#[test]
fn a_bound_of_one_serialises_requests() {
    let stack = stack();
    let ctl = control_client(&stack, |_| {});
    let bb = Arc::new(client(&stack, |c| c.max_in_flight = 1));
    Control::new(&ctl).latency("/rest", 20);
    let threads: Vec<_> = (0..6)
        .map(|_| {
            let bb = bb.clone();
            std::thread::spawn(move || response(bb.fetch(get(PR1), None, &Cancel::new())).status)
        })
        .collect();
    assert!(threads.into_iter().all(|t| t.join().unwrap() == 200));
    assert_eq!(Control::new(&ctl).requests()["maxInFlight"], 1);
}
