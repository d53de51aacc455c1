//! Properties of a session over any input: it never panics, answers each request exactly once
//! (unless cancelled), never answers a notification, and answers identically to identical input.
#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use std::collections::{BTreeMap, BTreeSet};

use bb_core::{FetchOutcome, Input, Output, Ticket};
use common::{Harness, proptest_config};
use proptest::prelude::*;
use serde_json::{Value, json};

/// One step a client (or Bitbucket) can take.
#[derive(Debug, Clone)]
enum Op {
    Initialize(u8),
    Request(u8),
    Notification(u8),
    Cancel(u8),
    Batch(Vec<u8>),
    Garbage(Vec<u8>),
    Complete { which: u8, ok: bool },
}

const METHODS: &[&str] = &[
    "ping",
    "tools/list",
    "tools/call",
    "tools/call",
    "tools/call",
    "resources/read",
    "resources/list",
    "logging/setLevel",
    "no/such/method",
    "initialize",
];

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        1 => any::<u8>().prop_map(Op::Initialize),
        6 => any::<u8>().prop_map(Op::Request),
        2 => any::<u8>().prop_map(Op::Notification),
        2 => any::<u8>().prop_map(Op::Cancel),
        1 => proptest::collection::vec(any::<u8>(), 1..4).prop_map(Op::Batch),
        2 => proptest::collection::vec(any::<u8>(), 0..64).prop_map(Op::Garbage),
        4 => (any::<u8>(), any::<bool>()).prop_map(|(which, ok)| Op::Complete { which, ok }),
    ]
}

/// A request built from a seed byte: method, tool and arguments (some of them wrong).
fn request(id: u64, seed: u8) -> Value {
    let method = METHODS[seed as usize % METHODS.len()];
    let params = match method {
        "tools/call" => {
            let tools = ["get_thing", "fetch_twice", "echo", "show", "nope", "merge_thing"];
            let name = tools[(seed / 16) as usize % tools.len()];
            let args = match seed % 4 {
                0 => json!({"id": (seed % 5) + 1}),
                1 => json!({"id": "x"}),
                2 => json!({"kind": "thing", "text": "t"}),
                _ => json!(null),
            };
            json!({"name": name, "arguments": args})
        }
        "resources/read" => json!({"uri": if seed.is_multiple_of(2) { "ui://bb/view" } else { "ui://nope" }}),
        "logging/setLevel" => {
            let level = ["debug", "error", "bogus"][seed as usize % 3];
            json!({"level": level})
        }
        "initialize" => json!({"protocolVersion": "2025-11-25"}),
        _ => json!({}),
    };
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// What a run produced: every message sent, in order, and every fetch asked for.
#[derive(Debug, PartialEq)]
struct Run {
    sent: Vec<Vec<u8>>,
    fetches: Vec<Ticket>,
    /// Ids of requests sent alone or in an accepted batch, and whether each was cancelled.
    expected: BTreeMap<u64, bool>,
}

fn run(ops: &[Op]) -> Run {
    let mut h = Harness::new();
    let mut sent = vec![];
    let mut fetches: Vec<Ticket> = vec![];
    let mut outstanding: Vec<Ticket> = vec![];
    let mut expected: BTreeMap<u64, bool> = BTreeMap::new();
    let mut batches_ok = false;
    let mut now = 0u64;
    let mut tag = 0u64;
    let mut feed = |h: &mut Harness,
                    input: Input<'_>,
                    outstanding: &mut Vec<Ticket>,
                    sent: &mut Vec<Vec<u8>>,
                    fetches: &mut Vec<Ticket>| {
        now += 7;
        h.server.handle(input, now);
        while let Some(out) = h.server.poll_output() {
            match out {
                Output::Send { message, .. } => sent.push(message),
                Output::Fetch { ticket, .. } => {
                    outstanding.push(ticket);
                    fetches.push(ticket);
                }
                Output::Cancel(t) => outstanding.retain(|o| *o != t),
                Output::Log { .. }
                | Output::Audit { .. }
                | Output::Done { .. }
                | Output::Work { .. }
                | Output::Compute { .. }
                | Output::PastDeadline { .. }
                | Output::Timer { .. }
                | Output::Admit { .. }
                | Output::Spend { .. } => {}
            }
        }
    };
    for (i, op) in ops.iter().enumerate() {
        let id = 1_000_000 + i as u64;
        tag += 1;
        let line: Option<Vec<u8>> = match op {
            Op::Initialize(v) => {
                let version = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-01-01"][*v as usize % 4];
                if h.current().protocol_version().is_none() && *v % 4 == 2 {
                    batches_ok = true;
                }
                expected.insert(id, false);
                Some(
                    json!({"jsonrpc": "2.0", "id": id, "method": "initialize",
                    "params": {"protocolVersion": version, "capabilities": {}}})
                    .to_string()
                    .into_bytes(),
                )
            }
            Op::Request(seed) => {
                expected.insert(id, false);
                Some(request(id, *seed).to_string().into_bytes())
            }
            Op::Notification(seed) => {
                let m = ["notifications/initialized", "notifications/progress", "ping", "x"][*seed as usize % 4];
                Some(json!({"jsonrpc": "2.0", "method": m}).to_string().into_bytes())
            }
            Op::Cancel(back) => {
                let target = id.saturating_sub(1 + u64::from(*back % 8));
                if let Some(c) = expected.get_mut(&target) {
                    *c = true;
                }
                Some(
                    json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": target}})
                        .to_string()
                        .into_bytes(),
                )
            }
            Op::Batch(seeds) => {
                let items: Vec<Value> =
                    seeds.iter().enumerate().map(|(j, s)| request(id * 10 + j as u64, *s)).collect();
                if batches_ok && h.current().protocol_version().is_some() {
                    for j in 0..items.len() {
                        expected.insert(id * 10 + j as u64, false);
                    }
                }
                Some(Value::Array(items).to_string().into_bytes())
            }
            Op::Garbage(bytes) => Some(bytes.clone()),
            Op::Complete { which, ok } => {
                if !outstanding.is_empty() {
                    let t = outstanding.remove(*which as usize % outstanding.len());
                    let outcome = if *ok {
                        Harness::ok("body")
                    } else {
                        FetchOutcome::failed(bb_core::FetchErrorKind::Unreachable, "reset")
                    };
                    feed(&mut h, Input::Fetched { ticket: t, outcome }, &mut outstanding, &mut sent, &mut fetches);
                }
                None
            }
        };
        if let Some(line) = line {
            let session = h.session;
            feed(&mut h, Input::Message { session, bytes: &line, tag }, &mut outstanding, &mut sent, &mut fetches);
        }
    }
    // Let Bitbucket answer everything still outstanding.
    while let Some(t) = outstanding.first().copied() {
        outstanding.remove(0);
        feed(
            &mut h,
            Input::Fetched { ticket: t, outcome: Harness::ok("late") },
            &mut outstanding,
            &mut sent,
            &mut fetches,
        );
    }
    Run { sent, fetches, expected }
}

fn answers_by_id(sent: &[Vec<u8>]) -> (BTreeMap<u64, usize>, usize) {
    let mut by_id = BTreeMap::new();
    let mut notifications_answered = 0;
    for message in sent {
        let v: Value = serde_json::from_slice(message).unwrap();
        let items = match v {
            Value::Array(items) => items,
            one => vec![one],
        };
        for m in items {
            if m.get("method").is_some() {
                // A server notification (log message), not an answer.
                assert!(m.get("id").is_none(), "a server notification carries no id: {m}");
                continue;
            }
            match m["id"].as_u64() {
                Some(id) => *by_id.entry(id).or_insert(0) += 1,
                None => notifications_answered += usize::from(!m["id"].is_null()),
            }
        }
    }
    (by_id, notifications_answered)
}

proptest! {
    #![proptest_config(proptest_config(256))]

    #[test]
    fn any_bytes_never_panic(lines in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..200), 0..20)) {
        let mut h = Harness::new();
        for line in &lines {
            h.bytes(line);
        }
        let mut h = Harness::initialized("2025-03-26", true);
        for line in &lines {
            h.bytes(line);
        }
    }

    #[test]
    fn each_request_gets_exactly_one_answer_unless_cancelled(ops in proptest::collection::vec(op(), 0..40)) {
        let r = run(&ops);
        let (by_id, stray) = answers_by_id(&r.sent);
        prop_assert_eq!(stray, 0);
        for (id, cancelled) in &r.expected {
            let n = by_id.get(id).copied().unwrap_or(0);
            if *cancelled {
                prop_assert!(n <= 1, "request {} answered {} times", id, n);
            } else {
                prop_assert_eq!(n, 1, "request {} answered {} times", id, n);
            }
        }
        let known: BTreeSet<u64> = r.expected.keys().copied().collect();
        for id in by_id.keys() {
            prop_assert!(known.contains(id), "answer to {} which was never asked (or was in a refused batch)", id);
        }
    }

    #[test]
    fn identical_input_gives_identical_answers(ops in proptest::collection::vec(op(), 0..40)) {
        prop_assert_eq!(run(&ops), run(&ops));
    }
}

#[test]
fn notifications_alone_are_never_answered() {
    let ops: Vec<Op> =
        (0..4).map(Op::Notification).chain([Op::Initialize(0)]).chain((0..4).map(Op::Notification)).collect();
    let r = run(&ops);
    let (by_id, _) = answers_by_id(&r.sent);
    assert_eq!(by_id.len(), 1, "only initialize is answered: {by_id:?}");
}
