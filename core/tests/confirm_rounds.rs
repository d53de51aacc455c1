//! The confirmation's rounds on the test catalogue's `merge_thing` (which asks, reads the thing's
//! version and POSTs the merge at it): 2026-07-28's `input_required` and its sealed state (tampered,
//! reused, foreign, expired, no capability), and the handshake era's question withdrawn when the call
//! is cancelled or nobody answers in 10 minutes.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use bb_core::{ANSWER_WITHIN_MS, Input, Seal, Spent};
use common::Harness;
use serde_json::{Value, json};

/// A stand-in for the application's AEAD: a keyed checksum over the payload and a counter, enough to
/// tell this key's tokens from altered or foreign ones. The real seal is tested in bb-drive.
#[derive(Debug)]
struct TestSeal {
    key: u64,
    n: AtomicU64,
}

impl TestSeal {
    fn sum(&self, bytes: &[u8]) -> u64 {
        bytes.iter().fold(self.key ^ 0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3))
    }
}

impl Seal for TestSeal {
    fn seal(&self, payload: &[u8]) -> String {
        let n = self.n.fetch_add(1, Ordering::Relaxed);
        let body: String = payload.iter().map(|b| format!("{b:02x}")).collect();
        let sum = self.sum(format!("{n}.{body}").as_bytes());
        format!("{n}.{body}.{sum:016x}")
    }
    fn open(&self, token: &str) -> Option<(Vec<u8>, String)> {
        let mut parts = token.split('.');
        let (n, body, sum) = (parts.next()?, parts.next()?, parts.next()?);
        if format!("{:016x}", self.sum(format!("{n}.{body}").as_bytes())) != sum {
            return None;
        }
        let bytes: Option<Vec<u8>> =
            (0..body.len()).step_by(2).map(|i| u8::from_str_radix(body.get(i..i + 2)?, 16).ok()).collect();
        Some((bytes?, n.to_owned()))
    }
    fn digest(&self, bytes: &[u8]) -> String {
        format!("{:016x}", self.sum(bytes))
    }
}

fn harness(key: u64) -> Harness {
    Harness::everything_with(|c| c.seal = Some(Arc::new(TestSeal { key, n: AtomicU64::new(0) })))
}

const FORMS: &str = r#"{"elicitation": {"form": {}}}"#;

fn modern(id: i64, caps: &str, extra: Value) -> String {
    let mut params = json!({"name": "merge_thing", "arguments": {"id": 7},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": serde_json::from_str::<Value>(caps).unwrap()}});
    if let Value::Object(extra) = extra {
        params.as_object_mut().unwrap().extend(extra);
    }
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}).to_string()
}

/// Serves the read of thing 7 (version 4) and returns the answer of the call.
fn read_thing(h: &mut Harness) -> Vec<Value> {
    let (ticket, request) = h.fetches.pop().expect("a read");
    assert_eq!(request.path, "/rest/api/latest/things/7");
    h.fetched(ticket, Harness::ok(r#"{"version": 4}"#))
}

/// The first round: input_required, with the question and the sealed state.
fn first_round(h: &mut Harness) -> (Value, String) {
    assert!(h.line(&modern(1, FORMS, json!({}))).is_empty(), "the call reads first");
    let out = read_thing(h);
    let result = out[0]["result"].clone();
    assert_eq!(result["resultType"], "input_required", "{result}");
    let state = result["requestState"].as_str().unwrap().to_owned();
    (result, state)
}

fn retry(h: &mut Harness, id: i64, state: &str, answer: Value) -> Vec<Value> {
    h.line(&modern(id, FORMS, json!({"requestState": state, "inputResponses": {"confirm": answer}})))
}

fn ticked() -> Value {
    json!({"action": "accept", "content": {"confirm": true}})
}

#[test]
fn a_2026_request_is_answered_input_required_and_its_accepted_retry_merges_once() {
    let mut h = harness(1);
    let (result, state) = first_round(&mut h);
    let ask = &result["inputRequests"]["confirm"];
    assert_eq!(ask["method"], "elicitation/create");
    assert_eq!(ask["params"]["requestedSchema"]["properties"]["confirm"]["title"], "Merge thing 7");
    assert!(h.fetches.is_empty(), "nothing written");
    // The retry (a new id) is spent once in the ledger, then the merge goes out at the version seen.
    assert!(retry(&mut h, 2, &state, ticked()).is_empty());
    let (_, id) = h.spends.pop().expect("the state is spent");
    assert!(!id.is_empty());
}

#[test]
fn the_accepted_retry_posts_the_merge_at_the_version_the_person_saw() {
    let mut h = harness(1);
    let (_, state) = first_round(&mut h);
    retry(&mut h, 2, &state, ticked());
    let (ticket, _) = h.spends.pop().unwrap();
    h.now += 1;
    h.server.handle(Input::Spent { ticket, spent: Spent::Fresh }, h.now);
    let mut merge = None;
    while let Some(out) = h.server.poll_output() {
        if let bb_core::Output::Fetch { request, .. } = out {
            merge = Some(request);
        }
    }
    let merge = merge.expect("the merge is sent");
    assert_eq!(merge.path, "/rest/api/latest/things/7/merge");
    assert_eq!(merge.query, [("version".to_owned(), "4".to_owned())]);
}

#[test]
fn a_reused_state_is_invalid_params_and_writes_nothing() {
    let mut h = harness(1);
    let (_, state) = first_round(&mut h);
    retry(&mut h, 2, &state, ticked());
    let (ticket, _) = h.spends.pop().unwrap();
    h.now += 1;
    // The ledger says another retry (here or at another replica) used it.
    h.server.handle(Input::Spent { ticket, spent: Spent::Used }, h.now);
    let mut answers = vec![];
    while let Some(out) = h.server.poll_output() {
        match out {
            bb_core::Output::Send { message, .. } => answers.push(serde_json::from_slice::<Value>(&message).unwrap()),
            bb_core::Output::Fetch { request, .. } => panic!("wrote {request:?}"),
            _ => {}
        }
    }
    assert_eq!(answers[0]["error"]["code"], -32602, "{answers:?}");
    assert!(answers[0]["error"]["message"].as_str().unwrap().contains("was used already"));
}

#[test]
fn a_tampered_a_foreign_and_another_calls_state_are_refused() {
    let mut h = harness(1);
    let (_, state) = first_round(&mut h);
    let mut altered = state.clone().into_bytes();
    let i = altered.len() / 2;
    altered[i] = if altered[i] == b'0' { b'1' } else { b'0' };
    let altered = String::from_utf8(altered).unwrap();
    for (n, bad) in [altered.as_str(), "forged", ""].into_iter().enumerate() {
        let out = retry(&mut h, 10 + n as i64, bad, ticked());
        assert_eq!(out[0]["error"]["code"], -32602, "{bad}: {out:?}");
    }
    // Another server's key.
    let mut other = harness(2);
    let out = retry(&mut other, 3, &state, ticked());
    assert_eq!(out[0]["error"]["code"], -32602);
    // Another person: the state is bound to who asked.
    let mut h = harness(1);
    h.server.set_principal(h.session, "user:alice".into());
    let (_, state) = first_round(&mut h);
    h.server.set_principal(h.session, "user:mallory".into());
    let out = retry(&mut h, 4, &state, ticked());
    assert!(out[0]["error"]["message"].as_str().unwrap().contains("another person"), "{out:?}");
    // Other arguments.
    let line = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "merge_thing",
        "arguments": {"id": 8}, "requestState": state, "inputResponses": {"confirm": ticked()},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}}}}});
    h.server.set_principal(h.session, "user:alice".into());
    let out = h.line(&line.to_string());
    assert!(out[0]["error"]["message"].as_str().unwrap().contains("other arguments"), "{out:?}");
    assert!(h.spends.is_empty(), "nothing was spent, nothing written");
}

#[test]
fn an_acceptance_after_ten_minutes_runs_nothing() {
    let mut h = harness(1);
    let (_, state) = first_round(&mut h);
    h.now += ANSWER_WITHIN_MS;
    let out = retry(&mut h, 2, &state, ticked());
    let text = out[0]["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("The confirmation came after its 10 minutes had passed: nothing was merged."), "{text}");
    assert!(h.spends.is_empty());
}

#[test]
fn a_declined_retry_writes_nothing_and_a_request_without_forms_is_32021() {
    let mut h = harness(1);
    let (_, state) = first_round(&mut h);
    let out = retry(&mut h, 2, &state, json!({"action": "decline"}));
    assert!(out[0]["result"]["content"][0]["text"].as_str().unwrap().starts_with("The person declined"));
    assert_eq!(out[0]["result"]["resultType"], "complete");
    let out = h.line(&modern(3, "{}", json!({})));
    assert_eq!(out[0]["error"]["code"], -32021, "{out:?}");
    assert_eq!(out[0]["error"]["data"]["requiredCapabilities"], json!({"elicitation": {"form": {}}}));
    assert!(h.fetches.is_empty(), "nothing read or written");
}

fn handshake(forms: bool) -> Harness {
    let mut h = harness(1);
    let caps = if forms { json!({"elicitation": {}}) } else { json!({}) };
    let a = h.request(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": caps, "clientInfo": {"name": "t", "version": "1"}}}));
    assert!(a.get("result").is_some());
    h
}

#[test]
fn a_handshake_client_without_forms_gets_a_tool_error_and_nothing_is_read() {
    let mut h = handshake(false);
    let out = h.call(1, "merge_thing", json!({"id": 7}));
    assert_eq!(out[0]["result"]["isError"], true);
    assert!(
        out[0]["result"]["content"][0]["text"].as_str().unwrap().starts_with("This client cannot show a confirmation")
    );
    assert!(h.fetches.is_empty());
}

#[test]
fn a_cancelled_call_withdraws_its_question() {
    let mut h = handshake(true);
    assert!(h.call(1, "merge_thing", json!({"id": 7})).is_empty());
    let out = read_thing(&mut h);
    assert_eq!(out[0]["method"], "elicitation/create", "{out:?}");
    let ask = out[0]["id"].clone();
    let out =
        h.line(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}).to_string());
    assert_eq!(out[0]["method"], "notifications/cancelled");
    assert_eq!(out[0]["params"]["requestId"], ask);
    // A late answer finds nothing to run.
    let late = h.line(&json!({"jsonrpc": "2.0", "id": ask, "result": ticked()}).to_string());
    assert!(late.is_empty() && h.fetches.is_empty());
}

#[test]
fn no_answer_in_ten_minutes_withdraws_the_question_and_writes_nothing() {
    let mut h = handshake(true);
    h.call(1, "merge_thing", json!({"id": 7}));
    read_thing(&mut h);
    // The drive feeds the call's steps ticket at its deadline.
    let mut work = None;
    h.now += 1;
    // (The Output::Work was drained by the harness; find its ticket by asking the server again.)
    for t in 0..64 {
        h.server.handle(Input::Work { ticket: bb_core::Ticket(t) }, h.now + ANSWER_WITHIN_MS);
        while let Some(out) = h.server.poll_output() {
            if let bb_core::Output::Send { message, .. } = out {
                work.get_or_insert_with(Vec::new).push(serde_json::from_slice::<Value>(&message).unwrap());
            }
        }
        if work.is_some() {
            break;
        }
    }
    let sent = work.expect("the deadline answered the call");
    assert_eq!(sent[0]["method"], "notifications/cancelled");
    let text = sent[1]["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("No answer came from the person within 10 minutes: nothing was merged."), "{text}");
    assert!(h.fetches.is_empty());
}
