//! A client that opens with `server/discover` or a 2026-07-28 request is served statelessly over
//! stdio (each request on its own `_meta`); one that opens with `initialize` gets a session as
//! before. The binary against the stand-in.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::{Read, Write};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

/// Pipes `lines` into `bb ai mcp serve` against a fresh stand-in and returns its answers.
fn serve(lines: &[Value]) -> Vec<Value> {
    let stack = bb_stack::Stack::start(bb_stack::StackConfig::default()).unwrap();
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
    for line in lines {
        writeln!(stdin, "{line}").unwrap();
    }
    drop(stdin);
    let mut out = String::new();
    child.stdout.take().unwrap().read_to_string(&mut out).unwrap();
    assert!(child.wait().unwrap().success());
    let mut answers: Vec<Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    answers.sort_by_key(|a| a["id"].as_i64());
    answers
}

fn meta(views: bool) -> Value {
    let caps = if views {
        json!({"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}})
    } else {
        json!({})
    };
    json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": caps})
}

#[test]
fn a_client_that_probes_with_server_discover_is_served_statelessly() {
    let pr = json!({"project": "BB", "repo": "api", "pr_id": 1});
    let answers = serve(&[
        json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": meta(false)}}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
               "params": {"name": "get_pull_request", "arguments": pr, "_meta": meta(false)}}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "resources/read", "params": {"uri": "ui://bb/view", "_meta": meta(true)}}),
        json!({"jsonrpc": "2.0", "id": 4, "method": "ping", "params": {"_meta": meta(false)}}),
    ]);
    assert_eq!(answers.len(), 4, "{answers:?}");
    assert_eq!(answers[0]["result"]["supportedVersions"][0], "2026-07-28");
    let call = &answers[1]["result"];
    assert_eq!(call["resultType"], "complete");
    assert!(call["content"][0]["text"].as_str().unwrap().starts_with("PR #1 · OPEN"), "{call}");
    assert_eq!(answers[2]["result"]["cacheScope"], "public");
    assert_eq!(answers[3]["error"]["code"], -32601, "no ping in 2026-07-28");
}

#[test]
fn a_client_that_opens_with_a_stateless_request_needs_no_discovery_and_initialize_keeps_its_session() {
    let answers =
        serve(&[json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": meta(false)}})]);
    assert_eq!(answers[0]["result"]["resultType"], "complete");
    let answers = serve(&[
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
               "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "old", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}),
    ]);
    assert_eq!(answers[0]["result"]["protocolVersion"], "2025-11-25");
    assert_eq!(answers[1]["result"], json!({}));
    assert_eq!(answers[2]["result"].get("resultType"), None);
}
