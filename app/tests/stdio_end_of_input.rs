//! `printf '…initialize…\n…tools/call…\n' | bb ai mcp serve`: the end of input comes before the
//! call's answer, and bb answers the call before it exits. The binary against the stand-in.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::{Read, Write};
use std::process::{Command, Stdio};

use bb_core::FetchRequest;
use bb_drive::{Bitbucket, Cancel};
use serde_json::{Value, json};

#[test]
fn a_call_piped_in_before_the_end_of_input_is_answered_before_bb_exits() {
    let stack = bb_stack::Stack::start(bb_stack::StackConfig::default()).unwrap();
    // The pull request takes a while, so the input surely ends while its call is in flight.
    let control = bb_bitbucket::Client::new(
        bb::config::BitbucketConfig::new(&stack.base_url, bb::config::Auth::Anonymous).unwrap(),
    )
    .unwrap();
    let latency = FetchRequest {
        method: bb_core::Method::Put,
        path: "/_stack/latency".into(),
        query: vec![],
        body: Some(json!({ "pathPrefix": "/rest/api/latest/projects/BB/repos/api/pull-requests/1", "millis": 300 })),
        keep: None,
        refresh: None,
    };
    assert!(
        matches!(control.fetch(latency, None, &Cancel::new()), bb_core::FetchOutcome::Response(r) if r.status == 200)
    );
    let mut child = Command::new(env!("CARGO_BIN_EXE_bb"))
        .args(["ai", "mcp", "serve"])
        .env("BITBUCKET_URL", &stack.base_url)
        .env("BITBUCKET_TOKEN", &stack.token)
        .env_remove("BITBUCKET_USER")
        .env_remove("BITBUCKET_PASSWORD")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "printf", "version": "1"}}});
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "get_pull_request", "arguments": {"project": "BB", "repo": "api", "pr_id": 1}}});
    write!(stdin, "{init}\n{call}\n").unwrap();
    drop(stdin);
    let mut out = String::new();
    child.stdout.take().unwrap().read_to_string(&mut out).unwrap();
    assert!(child.wait().unwrap().success());
    let answers: Vec<Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(answers.len(), 2, "{out}");
    assert_eq!(answers[1]["id"], 2);
    let text = answers[1]["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("PR #1 · OPEN"), "{text}");
}

#[test]
fn stdout_to_a_file_with_input_that_comes_later_is_served() {
    // `bb ai mcp serve > answers.jsonl` with a client that writes after a pause: stdout cannot be
    // polled, so stdin is read by a thread, which must wait for input rather than fail at once.
    let dir = std::env::temp_dir().join(format!("bb-stdio-file-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("answers.jsonl");
    let file = std::fs::File::create(&path).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_bb"))
        .args(["ai", "mcp", "serve"])
        .env("BITBUCKET_URL", "http://127.0.0.1:9")
        .env("BITBUCKET_TOKEN", "t")
        .env_remove("BITBUCKET_USER")
        .env_remove("BITBUCKET_PASSWORD")
        .stdin(Stdio::piped())
        .stdout(file)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "later", "version": "1"}}});
    writeln!(stdin, "{init}").unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let answers = std::fs::read_to_string(&path).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let answer: Value = serde_json::from_str(answers.lines().next().unwrap_or_default()).unwrap();
    assert_eq!(answer["id"], 1, "{answers}");
    assert!(answer["result"]["serverInfo"]["name"].is_string(), "{answers}");
}
