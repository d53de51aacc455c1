//! The request log (`GET /_stack/log`): every Bitbucket request since the last reset, in the order they arrived,
//! with when each arrived and when its answer was made.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod common;
use common::*;
use serde_json::{Value, json};
use std::time::Instant;

fn log(stack: &bb_stack::RunningStack) -> Vec<Value> {
    let r = control(stack, "GET", "/_stack/log", &json!(null));
    assert_eq!(r.status, 200);
    r.json()["requests"].as_array().expect("a requests array").clone()
}

fn ms(entry: &Value, key: &str) -> f64 {
    entry[key].as_f64().unwrap_or_else(|| panic!("{key} is a number in {entry}"))
}

#[test]
fn the_log_lists_each_bitbucket_request_with_method_path_query_user_times_and_status() {
    let stack = start();
    get(&stack, PR1);
    get(&stack, "/rest/api/latest/projects?limit=2&start=0");
    control(&stack, "GET", "/_stack/requests", &json!(null));
    send(stack.addr, "GET", "/rest/api/latest/projects", None, None).unwrap();
    let bob = basic("bob", "bob-password");
    send(stack.addr, "POST", &format!("{PR1}/comments"), Some(&bob), Some(&json!({ "text": "Hi" }))).unwrap();
    send(stack.addr, "GET", "/rest/api/latest/nothing-here", Some("Bearer wrong"), None).unwrap();

    let entries = log(&stack);
    let summary: Vec<(&str, &str, &str, Value, u64)> = entries
        .iter()
        .map(|e| {
            (
                e["method"].as_str().unwrap(),
                e["path"].as_str().unwrap(),
                e["query"].as_str().unwrap(),
                e["user"].clone(),
                e["status"].as_u64().unwrap(),
            )
        })
        .collect();
    let comments = format!("{PR1}/comments");
    assert_eq!(
        summary,
        [
            ("GET", PR1, "", json!("alice"), 200),
            ("GET", "/rest/api/latest/projects", "limit=2&start=0", json!("alice"), 200),
            ("GET", "/rest/api/latest/projects", "", Value::Null, 401),
            ("POST", comments.as_str(), "", json!("bob"), 201),
            ("GET", "/rest/api/latest/nothing-here", "", Value::Null, 401),
        ],
        "control requests are not logged"
    );
    let mut previous_start = 0.0;
    for e in &entries {
        let (start, end) = (ms(e, "startMs"), ms(e, "endMs"));
        assert!(start >= previous_start, "in the order they arrived: {entries:?}");
        assert!(end >= start, "answered after it arrived: {e}");
        previous_start = start;
    }
}

#[test]
fn added_latency_lies_between_start_and_end() {
    let stack = start();
    control(&stack, "PUT", "/_stack/latency", &json!({ "pathPrefix": PR1, "millis": 150 }));
    let before = Instant::now();
    assert_eq!(get(&stack, PR1).status, 200);
    let round_trip = before.elapsed();
    let entries = log(&stack);
    assert_eq!(entries.len(), 1);
    let (start, end) = (ms(&entries[0], "startMs"), ms(&entries[0], "endMs"));
    assert!(end - start >= 150.0, "the latency is inside the logged time: {start} to {end}");
    assert!(end - start <= round_trip.as_secs_f64() * 1000.0, "and the logged time inside the round trip");
}

#[test]
fn a_request_waiting_for_the_worlds_lock_is_logged_from_when_it_arrived() {
    let stack = start();
    let before = stack.arrived();
    let addr = stack.addr;
    let auth = bearer(&stack.token);
    // Holds the lock until the request has arrived (the server, one thread, then waits for it), and notes on the
    // log's clock when it lets go.
    let (released_ms, client) = stack.with_world(|w| {
        let client = std::thread::spawn(move || send(addr, "GET", PR1, Some(&auth), None).unwrap().status);
        wait_until("the request arrives and waits for the lock", || stack.arrived() > before);
        (w.control.log.millis(Instant::now()), client)
    });
    assert_eq!(client.join().unwrap(), 200);
    let entries = log(&stack);
    assert_eq!(entries.len(), 1);
    let e = &entries[0];
    assert!(ms(e, "startMs") < released_ms, "started before the lock was let go at {released_ms} ms: {e}");
    assert!(ms(e, "endMs") >= released_ms, "answered after: {e}");
}

#[test]
fn a_hung_request_has_no_end_and_no_status() {
    let stack = start();
    control(&stack, "POST", "/_stack/faults", &json!({ "kind": "hang", "pathPrefix": PR1 }));
    let addr = stack.addr;
    let auth = bearer(&stack.token);
    let hung = std::thread::spawn(move || send(addr, "GET", PR1, Some(&auth), None));
    wait_until("the hung request is logged", || !log(&stack).is_empty());
    assert_eq!(get(&stack, "/rest/api/latest/projects").status, 200);
    let entries = log(&stack);
    assert_eq!(entries.len(), 2);
    assert_eq!(entries[0]["path"], PR1);
    assert_eq!(entries[0]["endMs"], Value::Null);
    assert_eq!(entries[0]["status"], Value::Null);
    assert!(entries[0]["startMs"].is_f64());
    assert_eq!(entries[1]["status"], 200);
    drop(stack);
    let _ = hung.join().unwrap();
}

#[test]
fn rate_limited_requests_are_logged_with_their_429() {
    let stack = start();
    control(&stack, "POST", "/_stack/rate-limit", &json!({ "capacity": 1, "refill": 0.001 }));
    get(&stack, PR1);
    get(&stack, PR1);
    let statuses: Vec<Value> = log(&stack).iter().map(|e| e["status"].clone()).collect();
    assert_eq!(statuses, [json!(200), json!(429)]);
}

#[test]
fn a_reset_clears_the_log_and_restarts_its_clock() {
    let stack = start();
    control(&stack, "PUT", "/_stack/latency", &json!({ "pathPrefix": "/", "millis": 100 }));
    get(&stack, PR1);
    let entries = log(&stack);
    assert_eq!(entries.len(), 1);
    assert!(ms(&entries[0], "endMs") >= 100.0, "the clock has run past 100 ms");
    let before_reset = Instant::now();
    assert_eq!(control(&stack, "POST", "/_stack/reset", &json!(null)).status, 200);
    assert!(log(&stack).is_empty());
    get(&stack, PR1);
    let since_reset = before_reset.elapsed().as_secs_f64() * 1000.0;
    let entries = log(&stack);
    assert_eq!(entries.len(), 1);
    let (start, end) = (ms(&entries[0], "startMs"), ms(&entries[0], "endMs"));
    assert!(
        start <= end && end <= since_reset,
        "counted from the reset: {start} to {end} ms, {since_reset} ms since it"
    );
}
