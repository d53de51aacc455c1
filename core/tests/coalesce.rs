//! Properties of the table of shared reads over any sequence of joins, leaves and completions:
//! every waiter that joined gets exactly one outcome or has left, never both; at most one request
//! is in flight per read; and a request is abandoned exactly when its last waiter leaves.
#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::collections::{BTreeMap, BTreeSet};

use bb_core::FetchRequest;
use bb_core::{Coalesce, Flight, Joined, ReadKey};
use common::proptest_config;
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Op {
    /// A new waiter asks for read `read` (of a few) with credentials `who` (of two).
    Join { who: u8, read: u8 },
    /// The waiter joined `nth` (modulo those joined so far) stops waiting.
    Leave(u8),
    /// The request of the flight started `nth` (modulo those started so far) completes.
    Finish(u8),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0..2u8, 0..3u8).prop_map(|(who, read)| Op::Join { who, read }),
        2 => any::<u8>().prop_map(Op::Leave),
        2 => any::<u8>().prop_map(Op::Finish),
    ]
}

/// What happened to each waiter, as the caller of the table sees it.
#[derive(Debug, Default)]
struct Record {
    outcomes: BTreeMap<u32, u32>,
    left: BTreeSet<u32>,
    joined: Vec<u32>,
    /// Every flight started, with its key and whether its request is still to complete or abandon.
    started: Vec<(Flight, ReadKey)>,
    live: BTreeSet<Flight>,
    abandoned: BTreeSet<Flight>,
}

proptest! {
    #![proptest_config(proptest_config(512))]

    #[test]
    fn every_waiter_gets_exactly_one_outcome_or_has_left_never_both(ops in proptest::collection::vec(op(), 0..80)) {
        let mut table: Coalesce<u32, u32, u32> = Coalesce::new();
        let mut r = Record::default();
        let mut next_id = 0u32;
        // Which flight each waiter joined, to check it is handed that flight's outcome.
        let mut waits_for: BTreeMap<u32, Flight> = BTreeMap::new();
        let mut leaders: BTreeMap<Flight, u32> = BTreeMap::new();
        for op in ops {
            match op {
                Op::Join { who, read } => {
                    let id = next_id;
                    next_id += 1;
                    let key = ReadKey::of(u64::from(who), &FetchRequest::get(format!("/r/{read}"), vec![])).unwrap();
                    let in_flight = r.started.iter().find(|(f, k)| *k == key && r.live.contains(f)).map(|(f, _)| *f);
                    // The handle is the joiner's id: an abandonment must hand back the leader's.
                    match table.join(key.clone(), id, id, id) {
                        Joined::Lead(f) => {
                            prop_assert_eq!(in_flight, None, "a read in flight is never made twice");
                            leaders.insert(f, id);
                            r.started.push((f, key));
                            r.live.insert(f);
                            waits_for.insert(id, f);
                        }
                        Joined::Follow(f) => {
                            prop_assert_eq!(in_flight, Some(f), "a follower follows the read in flight");
                            waits_for.insert(id, f);
                        }
                    }
                    r.joined.push(id);
                }
                Op::Leave(nth) => {
                    if r.joined.is_empty() { continue; }
                    let id = r.joined[usize::from(nth) % r.joined.len()];
                    let waiting = !r.left.contains(&id) && !r.outcomes.contains_key(&id);
                    match table.leave(&id) {
                        Some(left) => {
                            prop_assert!(waiting, "only a waiter still waiting can leave");
                            prop_assert_eq!(left.waiter, id);
                            r.left.insert(id);
                            let f = waits_for[&id];
                            let others = waits_for.iter().any(|(w, wf)| *wf == f && !r.left.contains(w) && !r.outcomes.contains_key(w));
                            prop_assert_eq!(left.abandoned.is_some(), !others, "abandoned exactly when nobody waits");
                            if let Some(handle) = left.abandoned {
                                prop_assert_eq!(handle, leaders[&f], "the request abandoned is the leader's");
                                r.live.remove(&f);
                                r.abandoned.insert(f);
                            }
                        }
                        None => prop_assert!(!waiting, "a waiter still waiting can always leave"),
                    }
                }
                Op::Finish(nth) => {
                    if r.started.is_empty() { continue; }
                    let (f, _) = r.started[usize::from(nth) % r.started.len()].clone();
                    let handed = table.finish(f);
                    if !r.live.remove(&f) {
                        prop_assert!(handed.is_empty(), "a finished or abandoned flight hands out nothing");
                        continue;
                    }
                    let expected: Vec<u32> = waits_for.iter()
                        .filter(|(w, wf)| **wf == f && !r.left.contains(w) && !r.outcomes.contains_key(w))
                        .map(|(w, _)| *w).collect();
                    let mut got: Vec<u32> = handed.iter().map(|(id, _)| *id).collect();
                    // Leader first, then in the order they joined: ids grow with joining.
                    prop_assert!(got.windows(2).all(|w| w[0] < w[1]), "leader first, followers in order");
                    got.sort_unstable();
                    prop_assert_eq!(got, expected);
                    for (id, payload) in handed {
                        prop_assert_eq!(id, payload);
                        *r.outcomes.entry(id).or_default() += 1;
                    }
                }
            }
        }
        for id in &r.joined {
            let outcomes = r.outcomes.get(id).copied().unwrap_or(0);
            let left = r.left.contains(id);
            prop_assert!(outcomes <= 1, "waiter {} got {} outcomes", id, outcomes);
            prop_assert!(!(left && outcomes == 1), "waiter {} both left and got an outcome", id);
            prop_assert_eq!(table.is_waiting(id), !left && outcomes == 0);
            // A waiter with neither is still waiting on a live flight.
            if !left && outcomes == 0 {
                prop_assert!(r.live.contains(&waits_for[id]));
            }
        }
        prop_assert_eq!(table.flights(), r.live.len());
    }
}
