//! Bitbucket Data Center's rate limit, switched through `/_stack/rate-limit`: a token bucket per user, 429 with
//! `Retry-After` when it is empty, counted in `/_stack/requests`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod common;
use common::*;
use serde_json::{Value, json};

const PROJECTS: &str = "/rest/api/latest/projects";

/// Turns the limit on: `capacity` tokens, `refill` a second.
fn limit(stack: &bb_stack::RunningStack, capacity: u64, refill: f64) {
    let r = control(stack, "POST", "/_stack/rate-limit", &json!({ "capacity": capacity, "refill": refill }));
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(r.json(), json!({ "enabled": true, "capacity": capacity, "refill": refill }));
}

fn rate_limited(stack: &bb_stack::RunningStack) -> Value {
    control(stack, "GET", "/_stack/requests", &json!(null)).json()["rateLimited"].clone()
}

#[test]
fn the_rate_limit_is_off_until_turned_on() {
    let stack = start();
    assert_eq!(control(&stack, "GET", "/_stack/rate-limit", &json!(null)).json()["enabled"], false);
    for _ in 0..70 {
        assert_eq!(get(&stack, PROJECTS).status, 200);
    }
    assert_eq!(rate_limited(&stack), 0);
}

#[test]
fn a_user_whose_bucket_is_empty_gets_429_with_retry_after_and_bitbucket_error_json() {
    let stack = start();
    // One token every 1000 s: the bucket does not refill during the test.
    limit(&stack, 3, 0.001);
    for i in 0..3 {
        assert_eq!(get(&stack, PROJECTS).status, 200, "request {i} takes a token of the burst");
    }
    let r = get(&stack, PR1);
    assert_eq!(r.status, 429);
    let retry: u64 = r.header("Retry-After").expect("Retry-After").parse().expect("whole seconds");
    assert!((900..=1000).contains(&retry), "about 1000 s until the next token: {retry}");
    let body = r.json();
    let e = &body["errors"][0];
    assert_eq!(e["message"], "You have been rate limited. Try again later.");
    assert_eq!(e["context"], Value::Null);
    assert_eq!(e["exceptionName"], Value::Null);
    assert_eq!(get(&stack, PROJECTS).status, 429, "a refused request gives nothing back");
    let counts = control(&stack, "GET", "/_stack/requests", &json!(null)).json();
    assert_eq!(counts["rateLimited"], 2);
    assert_eq!(counts["total"], 5, "refused requests are counted as requests too");
    control(&stack, "DELETE", "/_stack/requests", &json!(null));
    assert_eq!(rate_limited(&stack), 0, "resetting the counters resets it");
}

#[test]
fn each_user_has_a_bucket_of_their_own_and_requests_without_valid_credentials_are_not_limited() {
    let stack = start();
    limit(&stack, 1, 0.001);
    assert_eq!(get(&stack, PROJECTS).status, 200);
    assert_eq!(get(&stack, PROJECTS).status, 429, "alice's bucket is empty");
    let bob = basic("bob", "bob-password");
    let as_bob = send(stack.addr, "GET", PROJECTS, Some(&bob), None).unwrap();
    assert_eq!(as_bob.status, 200, "basic authentication takes from bob's own bucket");
    assert_eq!(send(stack.addr, "GET", PROJECTS, Some(&bob), None).unwrap().status, 429);
    let alice_basic = basic("alice", "alice-password");
    assert_eq!(
        send(stack.addr, "GET", PROJECTS, Some(&alice_basic), None).unwrap().status,
        429,
        "the bucket is the user's, however they authenticate"
    );
    for _ in 0..3 {
        assert_eq!(send(stack.addr, "GET", PROJECTS, None, None).unwrap().status, 401, "anonymous: its 401");
        assert_eq!(send(stack.addr, "GET", "/rest/api/latest/application-properties", None, None).unwrap().status, 200);
        assert_eq!(send(stack.addr, "GET", PROJECTS, Some("Bearer wrong"), None).unwrap().status, 401);
    }
    assert_eq!(rate_limited(&stack), 3);
}

#[test]
fn control_requests_are_never_limited_and_take_no_token() {
    let stack = start();
    limit(&stack, 1, 0.001);
    let auth = bearer(&stack.token);
    for _ in 0..5 {
        let r = send(stack.addr, "GET", "/_stack/requests", Some(&auth), None).unwrap();
        assert_eq!(r.status, 200);
    }
    assert_eq!(get(&stack, PROJECTS).status, 200, "the bucket is still full");
    assert_eq!(get(&stack, PROJECTS).status, 429);
}

#[test]
fn tokens_come_back_at_the_refill_rate() {
    let stack = start();
    // One token every 100 ms; Retry-After is at least 1.
    limit(&stack, 2, 10.0);
    let mut refused = None;
    for _ in 0..1000 {
        let r = get(&stack, PROJECTS);
        if r.status == 429 {
            refused = Some(r);
            break;
        }
        assert_eq!(r.status, 200);
    }
    let refused = refused.expect("a burst past the bucket is refused");
    assert_eq!(refused.header("Retry-After"), Some("1"), "a tenth of a second, rounded up to 1");
    // Served again once a token has come back.
    wait_until("a token comes back", || get(&stack, PROJECTS).status == 200);
}

#[test]
fn turning_the_limit_off_or_resetting_lifts_it_and_turning_it_on_fills_every_bucket() {
    let stack = start();
    limit(&stack, 1, 0.001);
    assert_eq!(get(&stack, PROJECTS).status, 200);
    assert_eq!(get(&stack, PROJECTS).status, 429);
    let off = control(&stack, "POST", "/_stack/rate-limit", &json!({ "enabled": false }));
    assert_eq!(off.json(), json!({ "enabled": false, "capacity": null, "refill": null }));
    assert_eq!(get(&stack, PROJECTS).status, 200);
    assert_eq!(get(&stack, PROJECTS).status, 200);

    limit(&stack, 1, 0.001);
    assert_eq!(get(&stack, PROJECTS).status, 200, "buckets start full");
    assert_eq!(get(&stack, PROJECTS).status, 429);
    assert_eq!(control(&stack, "DELETE", "/_stack/rate-limit", &json!(null)).json()["enabled"], false);
    assert_eq!(get(&stack, PROJECTS).status, 200);

    limit(&stack, 1, 0.001);
    assert_eq!(get(&stack, PROJECTS).status, 200);
    assert_eq!(get(&stack, PROJECTS).status, 429);
    assert_eq!(control(&stack, "POST", "/_stack/reset", &json!(null)).status, 200);
    assert_eq!(control(&stack, "GET", "/_stack/rate-limit", &json!(null)).json()["enabled"], false);
    assert_eq!(rate_limited(&stack), 0);
    assert_eq!(get(&stack, PROJECTS).status, 200);
    assert_eq!(get(&stack, PROJECTS).status, 200);
}

#[test]
fn defaults_are_the_admin_pages_and_nonsense_is_refused() {
    let stack = start();
    let on = control(&stack, "POST", "/_stack/rate-limit", &json!({}));
    assert_eq!(on.json(), json!({ "enabled": true, "capacity": 60, "refill": 5.0 }));
    for bad in [json!({ "capacity": 0 }), json!({ "refill": 0 }), json!({ "refill": -2 }), json!({ "enabled": 1 })] {
        let r = control(&stack, "POST", "/_stack/rate-limit", &bad);
        assert_eq!(r.status, 400, "{bad}");
        assert!(r.json()["errors"][0]["message"].is_string());
    }
    let now = control(&stack, "GET", "/_stack/rate-limit", &json!(null)).json();
    assert_eq!(now, json!({ "enabled": true, "capacity": 60, "refill": 5.0 }), "a refused setting changes nothing");
}
