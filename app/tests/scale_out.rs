//! Scale-out: two `bb ai mcp serve --http` processes behind haproxy (round robin, nothing shared)
//! answer 2026-07-28 requests (tools, `show`, the view page) whichever process gets them. Needs
//! Debian's `haproxy` (`.ci/run` installs it); without it the test says so and passes, except under
//! `CI=true`, where it fails.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod service;

use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use serde_json::{Value, json};
use service::{Bb, free_port, haproxy, start_haproxy};

/// One 2026-07-28 POST through the load balancer: the answer's JSON and which bb served it.
fn post(lb: u16, method: &str, mut params: Value, views: bool) -> (Value, String) {
    let caps = if views {
        json!({"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}})
    } else {
        json!({})
    };
    params["_meta"] = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                             "io.modelcontextprotocol/clientCapabilities": caps});
    let name = params.get("name").or_else(|| params.get("uri")).and_then(Value::as_str).map(str::to_owned);
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string();
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{lb}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: {method}\r\n"
    );
    if let Some(name) = name {
        head.push_str(&format!("Mcp-Name: {name}\r\n"));
    }
    head.push_str(&format!("Content-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len()));
    let mut s = TcpStream::connect(("127.0.0.1", lb)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s.write_all(head.as_bytes()).unwrap();
    let mut raw = String::new();
    s.read_to_string(&mut raw).unwrap();
    let (headers, rest) = raw.split_once("\r\n\r\n").unwrap_or_else(|| panic!("no answer: {raw}"));
    assert!(headers.starts_with("HTTP/1.1 200"), "{raw}");
    let served = headers
        .lines()
        .find_map(|l| l.strip_prefix("x-served-by: ").or_else(|| l.strip_prefix("X-Served-By: ")))
        .unwrap_or_else(|| panic!("no X-Served-By: {headers}"))
        .to_owned();
    // The body is JSON, or SSE whose last data line is the answer.
    let json = rest.lines().rev().find_map(|l| l.strip_prefix("data: ")).unwrap_or(rest);
    let json = if json.starts_with('{') { json } else { rest.lines().find(|l| l.starts_with('{')).unwrap_or(rest) };
    (serde_json::from_str(json).unwrap_or_else(|e| panic!("not JSON ({e}): {rest}")), served)
}

#[test]
fn two_bb_processes_behind_a_round_robin_load_balancer_answer_every_stateless_request() {
    let Some(haproxy) = haproxy("the scale-out test") else { return };
    let stack = bb_stack::Stack::start(bb_stack::StackConfig::default()).unwrap();
    let lb = free_port();
    let allow = format!("127.0.0.1:{lb}");
    let a = Bb::start(&stack.base_url, &stack.token, &["--allow-host", &allow]);
    let b = Bb::start(&stack.base_url, &stack.token, &["--allow-host", &allow]);
    let (addr_a, addr_b) = (&a.addr, &b.addr);
    let dir = std::env::temp_dir().join(format!("bb-scale-out-{}-{lb}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("haproxy.cfg");
    std::fs::write(
        &config,
        format!(
            "global\n  maxconn 256\ndefaults\n  mode http\n  timeout connect 5s\n  timeout client 30s\n  timeout server 30s\n\
             frontend mcp\n  bind 127.0.0.1:{lb}\n  default_backend bb\n\
             backend bb\n  balance roundrobin\n  http-response set-header X-Served-By %s\n\
             \x20 server a {addr_a}\n  server b {addr_b}\n"
        ),
    )
    .unwrap();
    let _lb = start_haproxy(&haproxy, &config, lb);

    let pr = json!({"project": "BB", "repo": "api", "pr_id": 1});
    let mut served = BTreeSet::new();
    let mut lists = BTreeSet::new();
    for _ in 0..3 {
        let (list, by) = post(lb, "tools/list", json!({}), false);
        served.insert(by);
        lists.insert(list["result"]["tools"].to_string());
        let (call, by) = post(lb, "tools/call", json!({"name": "get_pull_request", "arguments": pr}), false);
        served.insert(by);
        assert!(call["result"]["content"][0]["text"].as_str().unwrap().starts_with("PR #1 · OPEN"), "{call}");
        let mut show_args = pr.clone();
        show_args["kind"] = json!("pull_request");
        let (show, by) = post(lb, "tools/call", json!({"name": "show", "arguments": show_args}), true);
        served.insert(by);
        assert!(show["result"]["_meta"].is_object(), "{show}");
        assert!(show["result"].get("isError").is_none_or(|e| e == false), "{show}");
        let (unseen, by) = post(lb, "tools/call", json!({"name": "show", "arguments": show_args}), false);
        served.insert(by);
        assert!(unseen["result"]["content"][0]["text"].as_str().unwrap().contains("Nothing was shown"), "{unseen}");
        let (page, by) = post(lb, "resources/read", json!({"uri": "ui://bb/view"}), true);
        served.insert(by);
        assert_eq!(page["result"]["contents"][0]["mimeType"], "text/html;profile=mcp-app");
        assert_eq!(page["result"]["cacheScope"], "public");
    }
    assert_eq!(served, BTreeSet::from(["a".to_owned(), "b".to_owned()]), "both processes answered");
    assert_eq!(lists.len(), 1, "both list the same tools in the same order");
    let _ = std::fs::remove_dir_all(&dir);
}
