//! The control API: faults, latency, counters, reset and changes as other users.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod common;
use common::*;
use serde_json::json;
use std::time::{Duration, Instant};

#[test]
fn the_next_n_requests_fail_with_the_status_asked_for_then_service_resumes() {
    let stack = start();
    let f = control(&stack, "POST", "/_stack/faults", &json!({ "status": 503, "count": 2, "pathPrefix": "/rest/api" }));
    assert_eq!(f.status, 201);
    assert_eq!(get(&stack, "/users/bob/avatar.png").status, 200, "other paths are untouched");
    assert_eq!(get(&stack, PR1).status, 503);
    assert_eq!(get(&stack, PR1).status, 503);
    assert_eq!(get(&stack, PR1).status, 200);
}

#[test]
fn a_429_fault_carries_retry_after() {
    let stack = start();
    control(&stack, "POST", "/_stack/faults", &json!({ "status": 429, "retryAfter": 3 }));
    let r = get(&stack, PR1);
    assert_eq!(r.status, 429);
    assert_eq!(r.header("Retry-After"), Some("3"));
    assert!(r.json()["errors"][0]["message"].is_string());
}

#[test]
fn a_truncated_body_declares_more_bytes_than_it_sends() {
    let stack = start();
    control(&stack, "POST", "/_stack/faults", &json!({ "kind": "truncate" }));
    let r = get(&stack, PR1);
    assert_eq!(r.status, 200);
    let declared = r.declared_length.unwrap();
    assert!(r.body.len() < declared, "{} bytes sent of {declared} declared", r.body.len());
    assert!(serde_json::from_slice::<serde_json::Value>(&r.body).is_err());
}

#[test]
fn a_hung_request_gets_no_answer() {
    let stack = start();
    control(&stack, "POST", "/_stack/faults", &json!({ "kind": "hang", "pathPrefix": "/rest/api/latest/projects" }));
    let r = send_with_timeout(stack.addr, "GET", PR1, Some(&bearer(&stack.token)), None, Duration::from_millis(300));
    assert!(r.is_err(), "the read times out: {r:?}");
    assert_eq!(get(&stack, PR1).status, 200, "only one request hangs");
}

#[test]
fn latency_delays_matching_paths_by_at_least_the_amount_set() {
    let stack = start();
    control(&stack, "PUT", "/_stack/latency", &json!({ "pathPrefix": "/rest/api/latest/projects", "millis": 150 }));
    let t = Instant::now();
    assert_eq!(get(&stack, PR1).status, 200);
    assert!(t.elapsed() >= Duration::from_millis(150));
}

#[test]
fn the_request_counter_counts_bitbucket_requests_by_method_and_path_and_resets() {
    let stack = start();
    get(&stack, PR1);
    get(&stack, PR1);
    get(&stack, &format!("{PR1}/activities?limit=5"));
    let counts = control(&stack, "GET", "/_stack/requests", &json!(null)).json();
    assert_eq!(counts["requests"][format!("GET {PR1}")], 2);
    assert_eq!(counts["requests"][format!("GET {PR1}/activities")], 1, "the query is not part of the key");
    assert_eq!(counts["total"], 3, "control requests are not counted");
    control(&stack, "DELETE", "/_stack/requests", &json!(null));
    assert_eq!(control(&stack, "GET", "/_stack/requests", &json!(null)).json()["total"], 0);
}

#[test]
fn reset_returns_the_data_to_the_seed() {
    let stack = start();
    let before = get(&stack, PR1).json();
    let v = before["version"].as_u64().unwrap();
    call(&stack, "POST", &format!("{PR1}/decline?version={v}"), &json!({}));
    assert_eq!(get(&stack, PR1).json()["state"], "DECLINED");
    assert_eq!(control(&stack, "POST", "/_stack/reset", &json!(null)).status, 200);
    assert_eq!(get(&stack, PR1).json(), before);
}

#[test]
fn moving_a_build_changes_what_the_pull_request_page_lists() {
    let stack = start();
    let r = control(
        &stack,
        "POST",
        "/_stack/builds",
        &json!({ "project": "BB", "repo": "api", "pullRequest": 1, "key": "BB-LINT-7", "state": "SUCCESSFUL" }),
    );
    assert_eq!(r.status, 200);
    let page = get(&stack, "/rest/ui/latest/projects/BB/repos/api/pull-requests/1/builds").json();
    let lint = page["page"]["values"].as_array().unwrap().iter().find(|b| b["key"] == "BB-LINT-7").cloned().unwrap();
    assert_eq!(lint["state"], "SUCCESSFUL");
    let commit = get(&stack, PR1).json()["fromRef"]["latestCommit"].as_str().unwrap().to_string();
    let stats = get(&stack, &format!("/rest/build-status/1.0/commits/stats/{commit}")).json();
    assert_eq!(stats["inProgress"], 0);
}

#[test]
fn a_comment_as_another_user_appears_in_the_activity() {
    let stack = start();
    let r = control(
        &stack,
        "POST",
        "/_stack/comments",
        &json!({ "project": "BB", "repo": "api", "pullRequest": 1, "user": "erin", "text": "From Erin" }),
    );
    assert_eq!(r.status, 201);
    let first = &get(&stack, &format!("{PR1}/activities?limit=1")).json()["values"][0];
    assert_eq!(first["comment"]["text"], "From Erin");
    assert_eq!(first["user"]["slug"], "erin");
}

#[test]
fn a_push_rescopes_the_pull_request() {
    let stack = start();
    let before = get(&stack, PR1).json();
    let r = control(
        &stack,
        "POST",
        "/_stack/push",
        &json!({ "project": "BB", "repo": "api", "pullRequest": 1, "message": "More work" }),
    );
    assert_eq!(r.status, 200);
    let after = get(&stack, PR1).json();
    assert_ne!(after["fromRef"]["latestCommit"], before["fromRef"]["latestCommit"]);
    assert_eq!(after["version"], before["version"].as_u64().unwrap() + 1);
    let first = &get(&stack, &format!("{PR1}/activities?limit=1")).json()["values"][0];
    assert_eq!(first["action"], "RESCOPED");
    let builds = get(&stack, "/rest/ui/latest/projects/BB/repos/api/pull-requests/1/builds").json();
    assert_eq!(builds["page"]["size"], 0, "the new commit has no builds yet");
}
