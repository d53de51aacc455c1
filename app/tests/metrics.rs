//! `--metrics ADDR`: after a run of calls against the stand-in, the Prometheus text counts them as
//! they were made, and no label carries a project, repository, pull request, person or token.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod service;

use bb_stack::admission::{Fault, FaultKind};
use serde_json::json;
use service::{Bb, call, request, until};

/// The value of the sample `series` (its name and labels exactly as written), or 0.
fn sample(text: &str, series: &str) -> f64 {
    text.lines()
        .find_map(|l| l.strip_prefix(series).and_then(|rest| rest.strip_prefix(' ')))
        .map_or(0.0, |v| v.trim().parse().unwrap())
}

/// The sum of every sample of `name` (with any labels).
fn total(text: &str, name: &str) -> f64 {
    text.lines()
        .filter(|l| l.starts_with(&format!("{name}{{")) || l.starts_with(&format!("{name} ")))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

#[test]
fn the_metrics_count_the_calls_and_bitbucket_requests_made_and_name_no_person_or_project() {
    let stack = bb_stack::Stack::start(bb_stack::StackConfig::default()).unwrap();
    let bb = Bb::start(&stack.base_url, &stack.token, &["--metrics", "127.0.0.1:0"]);
    until("bb says where the metrics are", || bb.stderr.lock().unwrap().contains("/metrics"));
    let metrics = {
        let err = bb.stderr.lock().unwrap().clone();
        let line = err.lines().find(|l| l.contains("metrics at http://")).unwrap().to_owned();
        line.rsplit("http://").next().unwrap().trim_end_matches("/metrics").to_owned()
    };
    let pr = json!({"project": "BB", "repo": "api", "pr_id": 1});
    for _ in 0..3 {
        let (status, v) = call(&bb.addr, "tools/call", json!({"name": "get_pull_request", "arguments": pr}));
        assert_eq!(status, 200, "{v}");
    }
    let (_, v) = call(&bb.addr, "tools/list", json!({}));
    assert!(v["result"]["tools"].is_array());
    let (_, v) = call(&bb.addr, "tools/call", json!({"name": "no_such_tool_SECRETNAME", "arguments": {}}));
    assert!(v.get("error").is_some() || v["result"]["isError"] == true, "{v}");
    let (_, v) = call(
        &bb.addr,
        "tools/call",
        json!({"name": "get_pull_request", "arguments": {"project": "BB", "repo": "api", "pr_id": 999_999}}),
    );
    assert_eq!(v["result"]["isError"], true, "{v}");
    // Bitbucket's rate limit answers once: bb waits the Retry-After and sends it again.
    stack.with_world(|w| {
        w.control.faults.push(Fault {
            remaining: 1,
            path_prefix: Some("/rest/api/latest/projects/BB/repos/api/pull-requests/1".into()),
            kind: FaultKind::Status { status: 429, retry_after: Some(1) },
        })
    });
    let (_, v) = call(&bb.addr, "tools/call", json!({"name": "get_pull_request", "arguments": pr}));
    assert!(v["result"]["content"][0]["text"].as_str().unwrap().starts_with("PR #1"), "{v}");

    // Every Bitbucket request the stand-in received is counted once, by endpoint class and status,
    // once bb has its answer (scraped until it does). A read abandoned on the wire (the call it was
    // for had failed) is counted `abandoned`, whether or not its head reached the stand-in.
    let received = || stack.with_world(|w| w.control.requests.values().sum::<u64>()) as f64;
    let counted = |text: &str| {
        let all = total(text, "bb_bitbucket_requests_total");
        let abandoned: f64 = text
            .lines()
            .filter(|l| l.contains(r#"status="abandoned""#))
            .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .sum();
        (all - abandoned, all)
    };
    until("bb counted every request the stand-in received", || {
        let (least, most) = counted(&request(&metrics, "GET", "/metrics", &[], "").2);
        (least..=most).contains(&received())
    });
    let (status, headers, text) = request(&metrics, "GET", "/metrics", &[], "");
    assert_eq!(status, 200, "{text}");
    assert!(headers.contains("content-type: application/openmetrics-text"), "{headers}");
    assert_eq!(sample(&text, r#"bb_mcp_requests_total{method="tools/call",tool="get_pull_request"}"#), 5.0, "{text}");
    assert_eq!(sample(&text, r#"bb_mcp_requests_total{method="tools/call",tool="other"}"#), 1.0, "{text}");
    assert_eq!(sample(&text, r#"bb_mcp_requests_total{method="tools/list",tool=""}"#), 1.0, "{text}");
    assert_eq!(sample(&text, r#"bb_mcp_request_duration_seconds_count{method="tools/call"}"#), 6.0, "{text}");
    assert!(sample(&text, r#"bb_mcp_errors_total{kind="tool"}"#) >= 1.0, "{text}");
    assert!(total(&text, "bb_mcp_errors_total") >= 2.0, "{text}");
    assert!(sample(&text, r#"bb_bitbucket_requests_total{endpoint="pull-requests",status="404"}"#) >= 1.0, "{text}");
    let (least, most) = counted(&text);
    assert!((least..=most).contains(&received()), "{text}");
    assert!(sample(&text, "bb_resident_memory_bytes") > 1e6, "{text}");
    assert_eq!(sample(&text, "bb_bitbucket_rate_limited_total"), 1.0, "{text}");
    assert_eq!(sample(&text, "bb_bitbucket_retry_after_seconds_total"), 1.0, "{text}");
    assert_eq!(sample(&text, "bb_bitbucket_retries_total"), 1.0, "{text}");
    assert_eq!(sample(&text, r#"bb_bitbucket_requests_total{endpoint="pull-requests",status="429"}"#), 1.0, "{text}");
    assert!(text.contains("bb_sessions_open 0") && text.contains("bb_connections_open"), "{text}");
    // Label values only (a sample's value, such as a duration's sum, may hold any digits).
    let labels: String = text.lines().filter_map(|l| Some(l.split_once('{')?.1.rsplit_once('}')?.0)).collect();
    for secret in ["SECRETNAME", "\"BB\"", "\"api\"", "999999", "alice", &stack.token] {
        assert!(!labels.contains(secret) && !text.contains(&format!("{secret}\"")), "{secret} in the metrics:\n{text}");
    }
    if std::env::var_os("BB_SHOW_METRICS").is_some() {
        eprintln!("{text}");
    }
    let (status, _, _) = request(&metrics, "GET", "/other", &[], "");
    assert_eq!(status, 404);
    stack.shutdown();
}
