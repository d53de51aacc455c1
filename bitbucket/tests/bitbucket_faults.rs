//! Every fault the stack can inject ends in a clear, specific outcome, retried only where that is safe, and the
//! client keeps working afterwards. Counts come from the stack's request counter, never from timing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod io_support;

use bb_core::{FetchErrorKind, Method};
use bb_drive::{Bitbucket, Cancel};
use io_support::*;
use serde_json::json;
use std::time::Duration;

const KEY: &str = "GET /rest/api/latest/projects/BB/repos/api/pull-requests/1";

#[test]
fn a_503_is_retried_and_the_answer_after_it_is_served() {
    let stack = stack();
    let (bb, ctl) = (client(&stack, |_| {}), control_client(&stack, |_| {}));
    Control::new(&ctl).fault(json!({ "status": 503, "count": 2, "pathPrefix": PR1 }));
    let r = response(bb.fetch(get(PR1), None, &Cancel::new()));
    assert_eq!(r.status, 200);
    assert_eq!(Control::new(&ctl).count(KEY), 3, "two refusals, then the answer");
}

#[test]
fn a_502_or_503_that_persists_is_reported_after_the_configured_retries() {
    let stack = stack();
    let ctl = control_client(&stack, |_| {});
    for (status, retries) in [(502, 2), (503, 1), (504, 0)] {
        let bb = client(&stack, |c| c.retry.retries = retries);
        Control::new(&ctl).fault(json!({ "status": status, "count": 100, "pathPrefix": PR1 }));
        let before = Control::new(&ctl).count(KEY);
        let r = response(bb.fetch(get(PR1), None, &Cancel::new()));
        assert_eq!(r.status, status);
        assert!(String::from_utf8_lossy(&r.body).contains("errors"), "Bitbucket's error JSON is passed on");
        assert_eq!(Control::new(&ctl).count(KEY) - before, u64::from(retries) + 1, "{status}");
        ctl.fetch(request(Method::Delete, "/_stack/faults", json!(null)), None, &Cancel::new());
    }
}

#[test]
fn a_500_is_reported_at_once() {
    let stack = stack();
    let (bb, ctl) = (client(&stack, |_| {}), control_client(&stack, |_| {}));
    Control::new(&ctl).fault(json!({ "status": 500, "count": 5 }));
    assert_eq!(response(bb.fetch(get(PR1), None, &Cancel::new())).status, 500);
    assert_eq!(Control::new(&ctl).count(KEY), 1);
}

#[test]
fn a_429_with_retry_after_is_waited_out_and_then_served() {
    let stack = stack();
    let (bb, ctl) = (client(&stack, |_| {}), control_client(&stack, |_| {}));
    Control::new(&ctl).fault(json!({ "status": 429, "retryAfter": 1, "count": 1 }));
    assert_eq!(response(bb.fetch(get(PR1), None, &Cancel::new())).status, 200);
    assert_eq!(Control::new(&ctl).count(KEY), 2);
}

#[test]
fn a_429_asking_for_a_longer_wait_than_bb_accepts_is_reported_with_its_retry_after() {
    let stack = stack();
    let (bb, ctl) = (client(&stack, |_| {}), control_client(&stack, |_| {}));
    Control::new(&ctl).fault(json!({ "status": 429, "retryAfter": 120, "count": 1 }));
    let r = response(bb.fetch(get(PR1), None, &Cancel::new()));
    assert_eq!((r.status, r.retry_after_s), (429, Some(120)));
    assert_eq!(Control::new(&ctl).count(KEY), 1, "not retried");
}

#[test]
fn a_post_is_never_retried() {
    let stack = stack();
    let (bb, ctl) = (client(&stack, |_| {}), control_client(&stack, |_| {}));
    let path = format!("{PR1}/comments");
    Control::new(&ctl).fault(json!({ "status": 503, "count": 5, "pathPrefix": path }));
    let r = response(bb.fetch(request(Method::Post, &path, json!({ "text": "hello" })), None, &Cancel::new()));
    assert_eq!(r.status, 503);
    assert_eq!(Control::new(&ctl).count(&format!("POST {path}")), 1);
    let created = response(bb.fetch(request(Method::Post, &path, json!({ "text": "hello" })), None, &Cancel::new()));
    assert_eq!(created.status, 503, "the fault is still queued");
}

#[test]
fn a_write_with_a_body_reaches_bitbucket_as_json() {
    let stack = stack();
    let bb = client(&stack, |_| {});
    let r = response(bb.fetch(
        request(Method::Post, &format!("{PR1}/comments"), json!({ "text": "from bb" })),
        None,
        &Cancel::new(),
    ));
    assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
    let comment: serde_json::Value = serde_json::from_slice(&r.body).unwrap();
    assert_eq!(comment["text"], "from bb");
}

#[test]
fn a_hang_ends_in_a_timeout_and_the_next_request_is_served() {
    let stack = stack();
    let (bb, ctl) = (client(&stack, |c| c.timeout = Duration::from_millis(300)), control_client(&stack, |_| {}));
    Control::new(&ctl).fault(json!({ "kind": "hang", "count": 1, "pathPrefix": PR1 }));
    let e = failure(bb.fetch(get(PR1), None, &Cancel::new()));
    assert_eq!(e.kind, FetchErrorKind::Timeout, "{e:?}");
    assert!(e.may_have_arrived);
    assert!(e.detail.contains("did not answer within 300ms"), "{}", e.detail);
    assert!(e.detail.starts_with(&format!("GET {PR1}: ")), "{}", e.detail);
    assert_eq!(Control::new(&ctl).count(KEY), 1, "a timeout is not retried");
    assert_eq!(response(bb.fetch(get(PR1), None, &Cancel::new())).status, 200);
}

#[test]
fn a_truncated_body_is_a_broken_response_that_may_have_arrived() {
    let stack = stack();
    let (bb, ctl) = (client(&stack, |_| {}), control_client(&stack, |_| {}));
    Control::new(&ctl).fault(json!({ "kind": "truncate", "count": 1, "pathPrefix": PR1 }));
    let e = failure(bb.fetch(get(PR1), None, &Cancel::new()));
    assert_eq!(e.kind, FetchErrorKind::BrokenResponse, "{e:?}");
    assert!(e.may_have_arrived);
    assert!(e.detail.contains("broke off"), "{}", e.detail);
    assert_eq!(response(bb.fetch(get(PR1), None, &Cancel::new())).status, 200);
}

#[test]
fn an_answer_larger_than_the_cap_is_refused() {
    let stack = stack();
    let bb = client(&stack, |c| c.max_body_bytes = 64);
    let e = failure(bb.fetch(get(PR1), None, &Cancel::new()));
    assert_eq!(e.kind, FetchErrorKind::BrokenResponse, "{e:?}");
    assert!(e.detail.contains("larger than bb accepts"), "{}", e.detail);
}

#[test]
fn a_server_that_is_not_there_is_unreachable_and_retried() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut config = bb_bitbucket::options::BitbucketConfig::new(
        &format!("http://127.0.0.1:{port}"),
        bb_bitbucket::options::Auth::Anonymous,
    )
    .unwrap();
    config.retry.base_ms = 1;
    let e = failure(bb_bitbucket::Client::new(config).unwrap().fetch(get(PR1), None, &Cancel::new()));
    assert_eq!(e.kind, FetchErrorKind::Unreachable, "{e:?}");
    assert!(!e.may_have_arrived);
    assert!(e.detail.contains("(after 4 attempts)"), "{}", e.detail);
}

#[test]
fn a_context_path_in_the_url_is_kept() {
    let stack =
        bb_stack::Stack::start(bb_stack::StackConfig { context_path: "/bitbucket".into(), ..Default::default() })
            .unwrap();
    let url = format!("{}/", stack.base_url);
    let bb = client(&stack, |c| *c = bb_bitbucket::options::BitbucketConfig::new(&url, c.auth.clone()).unwrap());
    assert!(bb.config().base_url.ends_with("/bitbucket"));
    assert_eq!(response(bb.fetch(get(PR1), None, &Cancel::new())).status, 200);
}

#[test]
fn query_parameters_are_encoded() {
    let stack = stack();
    let bb = client(&stack, |_| {});
    let list = "/rest/api/latest/projects/BB/repos/api/pull-requests";
    let r = response(bb.fetch(
        bb_core::FetchRequest::get(
            list,
            vec![("state".into(), "ALL".into()), ("limit".into(), "2".into()), ("filterText".into(), "a b&c".into())],
        ),
        None,
        &Cancel::new(),
    ));
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    let page: serde_json::Value = serde_json::from_slice(&r.body).unwrap();
    assert!(page["limit"].as_u64().unwrap() <= 2 || page["values"].as_array().unwrap().len() <= 2);
}

const BINDINGS: &str = "/rest/api/latest/projects/BB/repos/api/pull-requests/9/diff/vendor/bindings.rs";

#[test]
fn a_diff_asked_for_with_a_share_is_decoded_on_the_read_thread_keeping_only_the_share() {
    let stack = stack();
    let bb = client(&stack, |_| {});
    let share = bb_core::Share { lines: 300, bytes: 1 << 20 };
    let r = response(bb.fetch(get(BINDINGS).keeping(share), None, &Cancel::new()));
    assert_eq!(r.status, 200);
    assert!(r.body.is_empty(), "no bytes for the driver to hold or decode");
    let answer = format!("{:?}", r.decoded.expect("decoded as it was read"));
    // Bitbucket sends 10,000 of the file's 12,000 lines; the share keeps 300 of them.
    assert_eq!(answer, "Diff(DiffAnswer(1 file(s), 9700 line(s) skipped))");
    // An error answer is not decoded: its bytes carry Bitbucket's words.
    let missing = response(bb.fetch(
        get("/rest/api/latest/projects/BB/repos/api/pull-requests/99/diff/x").keeping(share),
        None,
        &Cancel::new(),
    ));
    assert_eq!((missing.status, missing.decoded.is_none()), (404, true));
}

#[test]
fn a_diff_whose_answer_breaks_off_while_it_is_decoded_fails_as_a_whole_read_does() {
    let stack = stack();
    let (bb, ctl) = (client(&stack, |_| {}), control_client(&stack, |_| {}));
    Control::new(&ctl).fault(json!({ "kind": "truncate", "count": 1, "pathPrefix": BINDINGS }));
    let share = bb_core::Share { lines: 300, bytes: 1 << 20 };
    let e = failure(bb.fetch(get(BINDINGS).keeping(share), None, &Cancel::new()));
    assert_eq!(e.kind, FetchErrorKind::BrokenResponse, "{e:?}");
    assert!(e.detail.contains("broke off"), "{}", e.detail);
    assert!(response(bb.fetch(get(BINDINGS).keeping(share), None, &Cancel::new())).decoded.is_some());
}
