//! Feeds arbitrary sequences of client lines, Bitbucket outcomes and clock steps to a session.
//! The session must never panic, and everything it sends must be JSON.
#![no_main]

use std::sync::Arc;

use arbitrary::Arbitrary;
use bb_core::testing::test_catalogue;
use bb_core::{ExposureOptions, FetchErrorKind, FetchOutcome, Input, Output, ServerConfig, Session, Ticket};
use libfuzzer_sys::fuzz_target;

#[derive(Debug, Arbitrary)]
enum Operation {
    /// Raw bytes as one line.
    Line(Vec<u8>),
    /// A well-formed request built from a few choices, so the fuzzer gets past the parser.
    Request { id: u16, method: u8, tool: u8, arg: i64 },
    /// A batch of well-formed pings and calls.
    Batch(Vec<(u16, u8)>),
    /// Cancel a request.
    Cancel(u16),
    /// Bitbucket answers one outstanding request.
    Answer { which: u8, status: u16, body: Vec<u8> },
    /// Bitbucket fails one outstanding request.
    Fail { which: u8, may_have_arrived: bool },
    /// A line that was too long.
    Oversized,
    /// The clock moves (or tries to move back).
    Clock(i32),
}

const METHODS: &[&str] =
    &["initialize", "ping", "tools/list", "tools/call", "resources/read", "resources/list", "logging/setLevel", "x"];
const TOOLS: &[&str] = &["echo", "get_thing", "fetch_twice", "show", "merge_thing", "nope"];

fuzz_target!(|ops: Vec<Operation>| {
    let exposed = test_catalogue().expose(&ExposureOptions::default()).expect("the test catalogue exposes");
    let mut session = Session::new(Arc::new(ServerConfig::new(exposed, "fuzz")));
    let mut outstanding: Vec<Ticket> = Vec::new();
    let mut now: u64 = 1_000_000;
    for (tag, op) in ops.into_iter().enumerate() {
        let tag = tag as u64;
        match op {
            Operation::Line(bytes) => session.handle(Input::Message { bytes: &bytes, tag }, now),
            Operation::Request { id, method, tool, arg } => {
                let method = METHODS[method as usize % METHODS.len()];
                let tool = TOOLS[tool as usize % TOOLS.len()];
                let line = format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{{"protocolVersion":"2025-03-26","name":"{tool}","arguments":{{"id":{arg},"text":"t","kind":"thing"}},"uri":"ui://bb/view","level":"debug"}}}}"#
                );
                session.handle(Input::Message { bytes: line.as_bytes(), tag }, now);
            }
            Operation::Batch(items) => {
                let parts: Vec<String> = items
                    .iter()
                    .map(|(id, m)| {
                        let method = METHODS[*m as usize % METHODS.len()];
                        format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{{"name":"get_thing","arguments":{{"id":1}}}}}}"#)
                    })
                    .collect();
                let line = format!("[{}]", parts.join(","));
                session.handle(Input::Message { bytes: line.as_bytes(), tag }, now);
            }
            Operation::Cancel(id) => {
                let line = format!(r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":{id}}}}}"#);
                session.handle(Input::Message { bytes: line.as_bytes(), tag }, now);
            }
            Operation::Answer { which, status, body } => {
                if !outstanding.is_empty() {
                    let ticket = outstanding.remove(which as usize % outstanding.len());
                    session.handle(Input::Fetched { ticket, outcome: FetchOutcome::response(status, body) }, now);
                }
            }
            Operation::Fail { which, may_have_arrived } => {
                if !outstanding.is_empty() {
                    let ticket = outstanding.remove(which as usize % outstanding.len());
                    let mut outcome = FetchOutcome::failed(FetchErrorKind::Timeout, "timed out");
                    if let FetchOutcome::Failed(e) = &mut outcome {
                        e.may_have_arrived = may_have_arrived;
                    }
                    session.handle(Input::Fetched { ticket, outcome }, now);
                }
            }
            Operation::Oversized => session.handle(Input::Oversized { limit: 16 << 20, tag }, now),
            Operation::Clock(step) => now = now.saturating_add_signed(i64::from(step)),
        }
        while let Some(out) = session.poll_output() {
            match out {
                Output::Fetch { ticket, .. } => outstanding.push(ticket),
                Output::CancelFetch(t) => outstanding.retain(|o| *o != t),
                Output::Send { message, .. } => {
                    assert!(serde_json::from_slice::<serde_json::Value>(&message).is_ok(), "bb sends JSON");
                    assert!(!message.contains(&b'\n'), "one message is one line");
                }
                Output::Log { .. } => {}
            }
        }
    }
});
