//! `--log-format json`: every line bb writes on stderr is one JSON object with `time`, `level` and
//! `event`; a call's line has its tool and duration, a Bitbucket request's its status; and no line
//! holds a credential, even when Bitbucket echoes one back.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod service;

use std::time::Duration;

use bb_stack::admission::{Fault, FaultKind};
use serde_json::{Value, json};
use service::{Bb, call};

#[test]
fn json_logs_parse_line_by_line_carry_call_fields_and_hold_no_secret() {
    let stack = bb_stack::Stack::start(bb_stack::StackConfig::default()).unwrap();
    let mut bb = Bb::start(&stack.base_url, &stack.token, &["--log-format", "json", "--log-level", "debug"]);
    let pr = json!({"project": "BB", "repo": "api", "pr_id": 1});
    let (status, v) = call(&bb.addr, "tools/call", json!({"name": "get_pull_request", "arguments": pr}));
    assert_eq!(status, 200, "{v}");
    // A careless proxy's error page repeats the request's Authorization header.
    stack.with_world(|w| {
        w.control.faults.push(Fault { remaining: 10, path_prefix: None, kind: FaultKind::Echo { status: 500 } })
    });
    let (_, v) = call(&bb.addr, "tools/call", json!({"name": "get_pull_request", "arguments": pr}));
    assert_eq!(v["result"]["isError"], true, "{v}");
    bb.signal("TERM");
    assert_eq!(bb.exit_code(Duration::from_secs(20)), Some(0));
    // stderr is read to its end once bb has exited.
    service::until("bb's last line is read", || bb.stderr.lock().unwrap().contains("stopped"));
    let log = bb.stderr.lock().unwrap().clone();
    let lines: Vec<Value> =
        log.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not a JSON line ({e}): {l}"))).collect();
    for l in &lines {
        assert!(l["time"].as_str().is_some_and(|t| t.ends_with('Z')), "{l}");
        assert!(l["level"].is_string() && l["event"].is_string(), "{l}");
    }
    assert_eq!(lines[0]["event"], "listening");
    let calls: Vec<&Value> = lines.iter().filter(|l| l["event"] == "call answered").collect();
    assert_eq!(calls.len(), 2, "{log}");
    assert_eq!(calls[0]["tool"], "get_pull_request");
    assert!(calls[0]["duration_ms"].is_u64() && calls[0]["call"].is_u64(), "{}", calls[0]);
    assert_eq!(calls[1]["error"], "tool");
    let statuses: Vec<&Value> =
        lines.iter().filter(|l| l["event"] == "bitbucket answered").map(|l| &l["status"]).collect();
    assert!(statuses.contains(&&json!(200)) && statuses.contains(&&json!(500)), "{log}");
    assert!(!log.contains(&stack.token), "the token in the log:\n{log}");
    assert!(lines.iter().any(|l| l["event"].as_str().unwrap().starts_with("SIGTERM: stopping")), "{log}");
    stack.shutdown();
}
