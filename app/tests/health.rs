//! `/healthz` and `/readyz` against the stand-in: no token needed, Host still checked, nothing but a
//! status revealed, and no Bitbucket request per probe (bb's own probe asks once per interval).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod service;

use bb_stack::admission::{Fault, FaultKind};
use serde_json::Value;
use service::{Bb, request, until};

fn app_properties_asked(stack: &bb_stack::RunningStack) -> u64 {
    stack.with_world(|w| w.control.requests.get("GET /rest/api/latest/application-properties").copied().unwrap_or(0))
}

#[test]
fn health_and_readiness_answer_without_a_token_and_cost_bitbucket_nothing_per_probe() {
    let stack = bb_stack::Stack::start(bb_stack::StackConfig::default()).unwrap();
    // A bearer token is set: /mcp needs it, the probes do not.
    let secret = "0123456789abcdef0123456789abcdef-http";
    let bb = Bb::start_with(&stack.base_url, &stack.token, &["--ready-interval", "3600"], &[("BB_HTTP_TOKEN", secret)]);
    let (status, _, _) = request(&bb.addr, "POST", "/mcp", &[("Content-Type", "application/json")], "{}");
    assert_eq!(status, 401, "/mcp needs the token");
    let (status, _, body) = request(&bb.addr, "GET", "/healthz", &[], "");
    assert_eq!((status, body.as_str()), (200, r#"{"status":"ok"}"#));
    until("bb is ready", || request(&bb.addr, "GET", "/readyz", &[], "").0 == 200);
    let asked = app_properties_asked(&stack);
    for _ in 0..20 {
        let (status, headers, body) = request(&bb.addr, "GET", "/readyz", &[], "");
        assert_eq!((status, body.as_str()), (200, r#"{"status":"ready"}"#));
        assert!(headers.contains("cache-control: no-store"), "{headers}");
    }
    assert_eq!(app_properties_asked(&stack), asked, "20 probes cost Bitbucket no request");
    let (status, _, body) = request(&bb.addr, "HEAD", "/healthz", &[], "");
    assert_eq!((status, body.as_str()), (200, ""));
    // Host and Origin are checked as for /mcp.
    let mut s = std::net::TcpStream::connect(&bb.addr).unwrap();
    std::io::Write::write_all(&mut s, b"GET /readyz HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut raw = String::new();
    std::io::Read::read_to_string(&mut s, &mut raw).unwrap();
    assert!(raw.starts_with("HTTP/1.1 403"), "{raw}");
    let (status, _, _) = request(&bb.addr, "GET", "/readyz", &[("Origin", "https://evil.example")], "");
    assert_eq!(status, 403);
    stack.shutdown();
}

#[test]
fn readiness_fails_naming_bitbucket_when_it_stops_answering_and_says_nothing_of_its_address() {
    let stack = bb_stack::Stack::start(bb_stack::StackConfig::default()).unwrap();
    let bb = Bb::start(&stack.base_url, &stack.token, &["--ready-interval", "1"]);
    until("bb is ready", || request(&bb.addr, "GET", "/readyz", &[], "").0 == 200);
    stack.with_world(|w| {
        w.control.faults.push(Fault {
            remaining: 1_000,
            path_prefix: Some("/rest/api/latest/application-properties".into()),
            kind: FaultKind::Status { status: 503, retry_after: None },
        })
    });
    until("bb is not ready", || request(&bb.addr, "GET", "/readyz", &[], "").0 == 503);
    let (_, _, body) = request(&bb.addr, "GET", "/readyz", &[], "");
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["status"], "not ready");
    assert!(v["failed"].as_str().unwrap().starts_with("bitbucket:"), "{v}");
    let port = stack.base_url.rsplit(':').next().unwrap_or_default().trim_end_matches('/');
    assert!(!body.contains(port) && !body.contains("127.0.0.1"), "{body}");
    stack.with_world(|w| w.control.faults.clear());
    until("bb is ready again", || request(&bb.addr, "GET", "/readyz", &[], "").0 == 200);
    stack.shutdown();
}

#[test]
fn in_per_person_mode_readiness_is_probed_without_anyones_credentials() {
    let stack = bb_stack::Stack::start(bb_stack::StackConfig::default()).unwrap();
    let bb = Bb::start(&stack.base_url, &stack.token, &["--per-user-token-header", "X-Bitbucket-Token"]);
    until("bb is ready", || request(&bb.addr, "GET", "/readyz", &[], "").0 == 200);
    // The operator's token (the stand-in's valid one) would name its user.
    let users: Vec<Option<String>> = stack.with_world(|w| {
        w.control
            .log
            .entries()
            .filter(|e| e.path == "/rest/api/latest/application-properties")
            .map(|e| e.user.clone())
            .collect()
    });
    assert!(!users.is_empty() && users.iter().all(Option::is_none), "the probe carried credentials: {users:?}");
    stack.shutdown();
}
