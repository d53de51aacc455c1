//! SIGTERM (or Ctrl-C) with `--http`: bb stops taking connections, lets calls in flight finish
//! within the grace period, answers a call still hanging at its end with an error that says bb is
//! restarting, and exits 0.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod service;

use std::net::TcpStream;
use std::time::Duration;

use bb_stack::admission::{Fault, FaultKind};
use serde_json::{Value, json};
use service::{Bb, call, until};

const PR: &str = "/rest/api/latest/projects/BB/repos/api/pull-requests";

fn in_flight(stack: &bb_stack::RunningStack) -> u64 {
    stack.with_world(|w| w.control.in_flight)
}

fn get_pr(addr: String) -> std::thread::JoinHandle<(u16, Value)> {
    std::thread::spawn(move || {
        call(
            &addr,
            "tools/call",
            json!({"name": "get_pull_request",
                                         "arguments": {"project": "BB", "repo": "api", "pr_id": 1}}),
        )
    })
}

#[test]
fn a_call_in_flight_at_sigterm_is_answered_and_bb_then_exits_0_refusing_new_connections() {
    let stack = bb_stack::Stack::start(bb_stack::StackConfig::default()).unwrap();
    let mut bb = Bb::start(&stack.base_url, &stack.token, &["--log-level", "notice"]);
    stack.with_world(|w| {
        w.control.latency.insert(PR.to_owned(), 1_500);
    });
    let answer = get_pr(bb.addr.clone());
    until("the call reached Bitbucket", || in_flight(&stack) > 0);
    bb.signal("TERM");
    until("bb refuses new connections", || TcpStream::connect(&bb.addr).is_err());
    let (status, v) = answer.join().unwrap();
    assert_eq!(status, 200, "{v}");
    assert!(v["result"]["content"][0]["text"].as_str().unwrap().starts_with("PR #1 · OPEN"), "{v}");
    assert_eq!(bb.exit_code(Duration::from_secs(20)), Some(0));
    let log = bb.stderr.lock().unwrap().clone();
    assert!(log.contains("SIGTERM: stopping"), "{log}");
    assert!(log.contains("every call in flight was answered"), "{log}");
    stack.shutdown();
}

#[test]
fn a_call_still_hanging_when_the_grace_period_ends_is_told_bb_is_restarting_before_bb_exits() {
    let stack = bb_stack::Stack::start(bb_stack::StackConfig::default()).unwrap();
    let mut bb = Bb::start(&stack.base_url, &stack.token, &["--grace", "1"]);
    stack.with_world(|w| {
        w.control.faults.push(Fault { remaining: 100, path_prefix: Some(PR.to_owned()), kind: FaultKind::Hang })
    });
    let answer = get_pr(bb.addr.clone());
    until("the call reached Bitbucket", || in_flight(&stack) > 0);
    bb.signal("INT");
    let (_, v) = answer.join().unwrap();
    assert_eq!(v["id"], 7, "{v}");
    let message = v["error"]["message"].as_str().unwrap_or_else(|| panic!("not an error: {v}"));
    assert!(message.contains("bb is restarting"), "{message}");
    assert!(message.contains("A read can be sent again"), "{message}");
    assert_eq!(bb.exit_code(Duration::from_secs(20)), Some(0));
    stack.shutdown();
}

#[test]
fn a_second_signal_while_stopping_ends_bb_at_once() {
    let stack = bb_stack::Stack::start(bb_stack::StackConfig::default()).unwrap();
    let mut bb = Bb::start(&stack.base_url, &stack.token, &["--grace", "600", "--log-level", "notice"]);
    stack.with_world(|w| {
        w.control.faults.push(Fault { remaining: 100, path_prefix: Some(PR.to_owned()), kind: FaultKind::Hang })
    });
    let _answer = get_pr(bb.addr.clone());
    until("the call reached Bitbucket", || in_flight(&stack) > 0);
    bb.signal("TERM");
    until("bb is stopping", || bb.stderr.lock().unwrap().contains("SIGTERM: stopping"));
    bb.signal("INT");
    assert_eq!(bb.exit_code(Duration::from_secs(20)), Some(1));
    stack.shutdown();
}

#[test]
fn streams_that_answer_no_call_end_at_once_when_bb_stops_a_listen_with_its_graceful_answer() {
    let stack = bb_stack::Stack::start(bb_stack::StackConfig::default()).unwrap();
    // A grace period far longer than the test may take: the streams must not hold the stop.
    let mut bb = Bb::start(&stack.base_url, &stack.token, &["--grace", "600", "--log-level", "notice"]);
    // A 2026-07-28 subscriptions/listen: a POST whose answer stays open.
    let addr = bb.addr.clone();
    let listen = std::thread::spawn(move || {
        let uri = "bitbucket://projects/BB/repos/api/pull-requests/1";
        call(&addr, "subscriptions/listen", json!({"notifications": {"resourceSubscriptions": [uri]}}))
    });
    // A 2025-11-25 session's GET stream.
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
        "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
    .to_string();
    let json_headers = [("Content-Type", "application/json"), ("Accept", "application/json, text/event-stream")];
    let (status, headers, _) = service::request(&bb.addr, "POST", "/mcp", &json_headers, &init);
    assert_eq!(status, 200);
    let session = headers
        .lines()
        .find_map(|l| l.strip_prefix("mcp-session-id: "))
        .map(|s| s.trim().to_owned())
        .expect("a session id");
    // Opened here, and read until bb's first comment says the stream is open; the rest on a thread.
    let mut get = TcpStream::connect(&bb.addr).unwrap();
    get.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let head = format!(
        "GET /mcp HTTP/1.1\r\nHost: {}\r\nAccept: text/event-stream\r\nMcp-Session-Id: {session}\r\n\r\n",
        bb.addr
    );
    std::io::Write::write_all(&mut get, head.as_bytes()).unwrap();
    let mut seen = Vec::new();
    let mut byte = [0u8; 1];
    while !String::from_utf8_lossy(&seen).contains(": bb") {
        assert_eq!(std::io::Read::read(&mut get, &mut byte).unwrap(), 1, "the GET stream ended before it opened");
        seen.push(byte[0]);
    }
    assert!(String::from_utf8_lossy(&seen).starts_with("HTTP/1.1 200"), "{}", String::from_utf8_lossy(&seen));
    let get = std::thread::spawn(move || {
        let mut rest = Vec::new();
        std::io::Read::read_to_end(&mut get, &mut rest).map(|_| rest.len())
    });
    until("the listen's watch read the pull request", || {
        stack.with_world(|w| w.control.requests.keys().any(|k| k.contains("/pull-requests/1")))
    });
    bb.signal("TERM");
    let (status, v) = listen.join().unwrap();
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["id"], 7, "{v}");
    assert_eq!(v["result"]["resultType"], "complete", "{v}");
    assert_eq!(v["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"], 7, "{v}");
    assert!(get.join().unwrap().is_ok(), "the GET stream ended when the stop began");
    assert_eq!(bb.exit_code(Duration::from_secs(20)), Some(0));
    stack.shutdown();
}
