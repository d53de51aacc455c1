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

/// Issue 58: a burst of live views' refreshes, from many people, never holds every connection to
/// Bitbucket: a model's call goes out beside them at once, while every refresh still waits on a slow
/// Bitbucket; and refreshes beyond what the connections can take soon are put off, unsent.
#[test]
fn refreshes_never_hold_every_connection_and_a_call_goes_out_beside_them() {
    use bb_core::{FetchErrorKind, FetchOutcome};
    use bb_drive::{Lane, Requester};
    use std::sync::mpsc;
    use std::time::{Duration, Instant};
    let stack = stack();
    let ctl = control_client(&stack, |_| {});
    let bb = Arc::new(client(&stack, |c| c.max_in_flight = 4));
    // The pull request answers after a minute; the repository at once.
    Control::new(&ctl).latency(PR1, 60_000);
    // Each refresh says how it ended: put off (unsent), or answered.
    let (ended, ends) = mpsc::channel::<&'static str>();
    let cancels: Vec<Cancel> = (0..8).map(|_| Cancel::new()).collect();
    let refreshes: Vec<_> = cancels
        .iter()
        .enumerate()
        .map(|(i, cancel)| {
            let (bb, cancel, ended) = (bb.clone(), cancel.clone(), ended.clone());
            std::thread::spawn(move || {
                let mut request = get(PR1);
                request.refresh = Some(bb_core::Batch { id: i as u64, reads: 1 });
                // Each person's own queue, as per-person mode has it.
                let who = Requester { queue: i as u64 + 1, person: None, lane: Lane::Call };
                let end = match bb.fetch_for(request, who, &cancel) {
                    FetchOutcome::Failed(e) if matches!(e.kind, FetchErrorKind::Deferred { .. }) => "put off",
                    _ => "answered",
                };
                let _ = ended.send(end);
            })
        })
        .collect();
    // Six one-read batches go (twice the three connections refreshes may hold); the other two are put
    // off at once, unsent.
    for _ in 0..2 {
        assert_eq!(ends.recv_timeout(Duration::from_secs(60)), Ok("put off"));
    }
    // Three of the six that go are on the wire (the stand-in holds them a minute); each poll of its
    // counters is a round trip.
    let in_flight = || Control::new(&ctl).requests()["inFlight"].as_u64().unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while in_flight() < 3 && Instant::now() < deadline {}
    assert_eq!(in_flight(), 3, "refreshes take all but a quarter of the four connections");
    let call = response(bb.fetch(get("/rest/api/latest/projects/BB/repos/api"), None, &Cancel::new()));
    assert_eq!(call.status, 200);
    assert!(ends.try_recv().is_err(), "the call went out while every refresh still waited");
    assert_eq!(Control::new(&ctl).count(&format!("GET {PR1}")), 3, "the put-off ones were never sent");
    for cancel in &cancels {
        cancel.cancel();
    }
    for t in refreshes {
        t.join().unwrap();
    }
}
