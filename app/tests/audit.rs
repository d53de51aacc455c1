//! The audit trail (issue 52, item 3): the `bb` binary against the stand-in with `--audit-file`. A
//! record for a call that succeeds, one that fails, a refusal and a confirmation asked and answered,
//! each naming the person and holding no credential; the file 0600; what a write that fails does
//! (`--audit-failure refuse|warn`); SIGHUP reopening the file; 200 calls over HTTP from 100 clients at
//! once giving 200 complete lines.
//!
//! Every wait is for a condition (a message, a line); nothing sleeps a fixed time.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod service;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Value, json};
use service::{Bb, StdioBb, until};

fn pr11() -> Value {
    json!({"project": "BB", "repo": "api", "pr_id": 11, "version": 0})
}

/// A fresh path in the temporary folder, for this test.
fn temp(name: &str) -> PathBuf {
    let p = std::env::temp_dir().join(format!("bb-audit-{}-{name}", std::process::id()));
    let _ = std::fs::remove_file(&p);
    p
}

/// The lines of the trail, each a JSON object (a line that is not one fails the test).
fn records(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not a JSON line ({e}): {l}"))).collect()
}

/// Waits until the trail holds a record `pick` accepts; that record.
fn record(path: &Path, what: &str, pick: impl Fn(&Value) -> bool) -> Value {
    let mut found = None;
    until(what, || {
        found = records(path).into_iter().find(|r| pick(r));
        found.is_some()
    });
    found.unwrap()
}
/// What the audit tests ask of bb over stdio beyond the shared client.
trait Calling {
    fn call(&mut self, id: u64, name: &str, arguments: Value) -> Value;
}

impl Calling for StdioBb {
    /// Calls `name` with a W3C `traceparent` in `_meta`, and waits for its answer.
    fn call(&mut self, id: u64, name: &str, arguments: Value) -> Value {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": name, "arguments": arguments,
                       "_meta": {"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}}));
        self.answer(id)
    }
}

/// No record holds the token, in any form bb sends it.
fn assert_no_token(path: &Path, token: &str) {
    let text = std::fs::read_to_string(path).unwrap();
    assert!(!text.contains(token), "the token is in the trail:\n{text}");
    assert!(!text.contains(&bb_core::base64(token.as_bytes())), "the token's base64 is in the trail");
}

#[test]
fn over_stdio_a_success_an_error_a_refusal_and_a_confirmation_are_each_recorded_with_the_person() {
    let stack = bb_stack::Stack::start(bb_stack::StackConfig::default()).unwrap();
    let path = temp("stdio.jsonl");
    let file = path.to_str().unwrap();
    let mut bb = StdioBb::start(&stack, json!({"elicitation": {"form": {}}}), &["--audit-file", file], "audit-test");

    let ok = bb.call(2, "get_pull_request", json!({"project": "BB", "repo": "api", "pr_id": 11}));
    assert_ne!(ok["result"]["isError"], true, "{ok}");
    let missing = bb.call(3, "get_pull_request", json!({"project": "BB", "repo": "api", "pr_id": 9999}));
    assert_eq!(missing["result"]["isError"], true, "{missing}");
    // A secret in odd places of the arguments: under a key named so, and as text.
    let odd = bb.call(
        4,
        "get_pull_request",
        json!({"project": "BB", "repo": "api", "pr_id": 11,
        "access_token": stack.token, "note": format!("mine is {}", stack.token)}),
    );
    assert!(odd.get("result").is_some(), "{odd}");

    bb.send(&json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
                    "params": {"name": "merge_pull_request", "arguments": pr11()}}));
    let ask = bb.next("elicitation/create", |m| m["method"] == "elicitation/create");
    bb.send(&json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "decline"}}));
    bb.answer(5);

    let ok = record(&path, "the success", |r| r["call"] == 2);
    assert_eq!(ok["event"], "tool_call");
    assert_eq!(ok["tool"], "get_pull_request");
    assert_eq!(ok["status"], "ok", "{ok}");
    assert_eq!((ok["project"].as_str(), ok["repo"].as_str(), ok["pr"].as_u64()), (Some("BB"), Some("api"), Some(11)));
    assert_eq!(ok["client"], "audit-test 7");
    assert_eq!(ok["transport"], "stdio");
    assert_eq!(ok["trace"], "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
    assert!(ok["replica"].as_str().unwrap().ends_with(&format!(":{}", bb.child.id())), "{ok}");
    assert!(ok["time"].as_str().unwrap().ends_with('Z'), "{ok}");
    assert!(ok["duration_ms"].is_u64(), "{ok}");

    let error = record(&path, "the error", |r| r["call"] == 3);
    assert_eq!(error["status"], "error", "{error}");
    assert!(error["error"].as_str().unwrap().contains("9999"), "the sentence the model read: {error}");

    let odd = record(&path, "the call with a secret", |r| r["call"] == 4);
    assert_eq!(odd["arguments"]["access_token"], "[removed]", "{odd}");

    let asked = record(&path, "the question", |r| r["event"] == "confirmation" && r["status"] == "asked");
    assert_eq!(asked["tool"], "merge_pull_request");
    let answered = record(&path, "the answer", |r| r["event"] == "confirmation" && r["status"] == "answered");
    assert_eq!(answered["answer"], "decline", "{answered}");
    let merge = record(&path, "the merge's outcome", |r| r["call"] == 5 && r["event"] == "tool_call");
    assert_eq!(merge["status"], "denied", "{merge}");
    assert_eq!(merge["reason"], "the person did not confirm", "{merge}");

    // A client that cannot confirm: the merge is denied before it runs.
    let mut blind = StdioBb::start(&stack, json!({}), &["--audit-file", file], "audit-test");
    let refused = blind.call(2, "merge_pull_request", pr11());
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    let denied =
        record(&path, "the refusal", |r| r["status"] == "denied" && r["reason"] != "the person did not confirm");
    assert_eq!(denied["reason"], "the client cannot show a confirmation", "{denied}");
    assert!(denied["error"].as_str().unwrap().contains("cannot show a confirmation"), "{denied}");

    for r in records(&path) {
        let person = r["person"].as_str().unwrap_or_default();
        assert!(!person.is_empty() && person != "unknown", "every record names the person: {r}");
    }
    assert_no_token(&path, &stack.token);
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "the trail is the owner's alone");
    let _ = std::fs::remove_file(&path);
}

#[test]
fn stdout_and_a_path_bb_cannot_open_stop_it_with_a_sentence() {
    for (target, says) in
        [("stdout", "carries the protocol"), ("/nonexistent/dir/audit.jsonl", "cannot open the audit file")]
    {
        let out = Command::new(env!("CARGO_BIN_EXE_bb"))
            .args(["ai", "mcp", "serve", "--audit-file", target])
            .env("BITBUCKET_URL", "http://127.0.0.1:9")
            .env("BITBUCKET_TOKEN", "t0ken-never-used")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{target}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{target}: {err}");
    }
}

#[test]
fn a_write_that_fails_refuses_the_next_call_unless_the_policy_is_warn() {
    let stack = bb_stack::Stack::start(bb_stack::StackConfig::default()).unwrap();
    // Every write to /dev/full fails (ENOSPC).
    let mut bb = StdioBb::start(&stack, json!({}), &["--audit-file", "/dev/full"], "audit-test");
    let args = json!({"project": "BB", "repo": "api", "pr_id": 11});
    // The first call's record is the first write: it fails after the answer is queued.
    bb.call(2, "get_pull_request", args.clone());
    let mut refused = Value::Null;
    for id in 3..200 {
        refused = bb.call(id, "get_pull_request", args.clone());
        if refused["result"]["isError"] == true {
            break;
        }
    }
    let text = refused["result"]["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.contains("could not be recorded"), "{refused}");

    let mut warn =
        StdioBb::start(&stack, json!({}), &["--audit-file", "/dev/full", "--audit-failure", "warn"], "audit-test");
    for id in 2..6 {
        let ok = warn.call(id, "get_pull_request", args.clone());
        assert_ne!(ok["result"]["isError"], true, "{ok}");
    }
}

#[test]
fn sighup_reopens_the_file_so_the_next_record_lands_in_a_new_one() {
    let stack = bb_stack::Stack::start(bb_stack::StackConfig::default()).unwrap();
    let path = temp("rotate.jsonl");
    let rotated = temp("rotate.jsonl.1");
    let mut bb = StdioBb::start(&stack, json!({}), &["--audit-file", path.to_str().unwrap()], "audit-test");
    let args = json!({"project": "BB", "repo": "api", "pr_id": 11});
    bb.call(2, "get_pull_request", args.clone());
    record(&path, "the first record", |r| r["call"] == 2);
    std::fs::rename(&path, &rotated).unwrap();
    let hup = Command::new("kill").args(["-HUP", &bb.child.id().to_string()]).status().unwrap();
    assert!(hup.success());
    until("bb reopens the file", || path.exists());
    bb.call(3, "get_pull_request", args);
    record(&path, "the record after SIGHUP", |r| r["call"] == 3);
    assert_eq!(records(&rotated).len(), 1, "the old file keeps what it had");
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let _ = std::fs::remove_file(&path);
    let _ = std::fs::remove_file(&rotated);
}

#[test]
fn two_hundred_concurrent_calls_over_http_give_two_hundred_complete_lines() {
    let stack = bb_stack::Stack::start(bb_stack::StackConfig::default()).unwrap();
    let path = temp("http.jsonl");
    let bb = Bb::start(&stack.base_url, &stack.token, &["--audit-file", path.to_str().unwrap()]);
    // 100 clients at once, two calls each: under the connections one peer may hold (a quarter of
    // 512), so every call is answered, none turned away.
    let threads: Vec<_> = (0..100)
        .map(|_| {
            let addr = bb.addr.clone();
            std::thread::spawn(move || {
                [11, 1].map(|pr| {
                    let params = json!({"name": "get_pull_request",
                                        "arguments": {"project": "BB", "repo": "api", "pr_id": pr}});
                    service::call(&addr, "tools/call", params)
                })
            })
        })
        .collect();
    for t in threads {
        for (status, answer) in t.join().unwrap() {
            assert_eq!(status, 200, "{answer}");
        }
    }
    until("200 records", || records(&path).len() >= 200);
    let all = records(&path);
    assert_eq!(all.len(), 200);
    for r in &all {
        assert_eq!(r["event"], "tool_call");
        assert_eq!(r["transport"], "http");
        assert!(!r["person"].as_str().unwrap_or_default().is_empty(), "{r}");
    }
    assert_no_token(&path, &stack.token);
    let _ = std::fs::remove_file(&path);
}

#[test]
fn a_session_ended_by_delete_is_recorded_as_a_logout() {
    let stack = bb_stack::Stack::start(bb_stack::StackConfig::default()).unwrap();
    let path = temp("logout.jsonl");
    let bb = Bb::start(&stack.base_url, &stack.token, &["--audit-file", path.to_str().unwrap()]);
    let json = [("Content-Type", "application/json"), ("Accept", "application/json, text/event-stream")];
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
        "capabilities": {}, "clientInfo": {"name": "audit-test", "version": "7"}}});
    let (status, headers, _) = service::request(&bb.addr, "POST", "/mcp", &json, &init.to_string());
    assert_eq!(status, 200);
    let id = headers.lines().find_map(|l| l.strip_prefix("mcp-session-id: ")).unwrap().trim().to_owned();
    let mut with_id = json.to_vec();
    with_id.push(("Mcp-Session-Id", &id));
    let (status, _, _) = service::request(&bb.addr, "DELETE", "/mcp", &with_id, "");
    assert_eq!(status, 204);
    let logout = record(&path, "the logout", |r| r["event"] == "logout");
    assert_eq!(logout["transport"], "http");
    assert!(logout["session"].is_u64(), "{logout}");
    assert!(!logout["person"].as_str().unwrap_or_default().is_empty(), "{logout}");
    assert!(!std::fs::read_to_string(&path).unwrap().contains(&id), "the session's id is not in the trail");
    let _ = std::fs::remove_file(&path);
}
