//! The person confirms what cannot be undone (issue 51): the `bb` binary against the stand-in, with
//! `merge_pull_request` exposed (`--toolsets all,writes`). Over stdio and HTTP sessions (2025-11-25)
//! bb sends `elicitation/create` and waits; on 2026-07-28 it answers `input_required` with a sealed
//! state that a retry brings back once, at any replica sharing the key and the rate store.
//!
//! Every wait is for a condition (a message, a status); nothing sleeps a fixed time.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod service;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use serde_json::{Value, json};
use service::{Bb, StdioBb, free_port, redis_server, request, start_redis};

/// How long any one message may take to come.
const WAIT: Duration = Duration::from_secs(60);

/// BB/api #11 in the stand-in: open, mergeable, at version 0.
fn pr11() -> Value {
    json!({"project": "BB", "repo": "api", "pr_id": 11, "version": 0})
}

fn pr11_get() -> Value {
    json!({"project": "BB", "repo": "api", "pr_id": 11})
}

fn text(message: &Value) -> String {
    message["result"]["content"][0]["text"].as_str().unwrap_or_default().to_owned()
}

const KEY: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

// --- stdio -------------------------------------------------------------------------------------

/// What the confirmation tests ask of bb over stdio beyond the shared client.
trait Confirming {
    fn question(&self, id: u64) -> Value;
    fn call(&mut self, id: u64, name: &str, arguments: Value);
    fn state_of_pr11(&mut self, id: u64) -> String;
}

impl Confirming for StdioBb {
    /// bb's `elicitation/create` for the call `id` (which must not have answered first).
    fn question(&self, id: u64) -> Value {
        let m = self.next("elicitation/create", |m| m["method"] == "elicitation/create" || m["id"] == id);
        assert_eq!(m["method"], "elicitation/create", "the call answered without asking: {m}");
        m
    }

    fn call(&mut self, id: u64, name: &str, arguments: Value) {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                          "params": {"name": name, "arguments": arguments}}));
    }

    fn state_of_pr11(&mut self, id: u64) -> String {
        self.call(id, "get_pull_request", pr11_get());
        text(&self.answer(id))
    }
}

/// The one box of bb's form: required, a boolean, with no default.
fn assert_one_required_box(ask: &Value) {
    let schema = &ask["params"]["requestedSchema"];
    assert_eq!(schema["required"], json!(["confirm"]), "{ask}");
    assert_eq!(schema["properties"]["confirm"]["type"], "boolean", "{ask}");
    assert!(schema["properties"]["confirm"].get("default").is_none(), "{ask}");
    assert!(schema["properties"]["confirm"]["title"].as_str().unwrap().contains("#11"), "{ask}");
}

#[test]
fn over_stdio_a_decline_writes_nothing_and_an_acceptance_merges() {
    let stack = bb_stack::Stack::start(bb_stack::StackConfig::default()).unwrap();
    let mut bb = StdioBb::start(&stack, json!({"elicitation": {"form": {}}}), &[], "confirm-test");

    bb.call(2, "merge_pull_request", pr11());
    let ask = bb.question(2);
    assert_one_required_box(&ask);
    bb.send(&json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "decline"}}));
    let declined = bb.answer(2);
    assert!(text(&declined).contains("The person declined"), "{declined}");
    assert!(bb.state_of_pr11(3).starts_with("PR #11 · OPEN"), "a decline writes nothing");

    bb.call(4, "merge_pull_request", pr11());
    let ask = bb.question(4);
    assert_one_required_box(&ask);
    bb.send(&json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "accept", "content": {"confirm": true}}}));
    let merged = bb.answer(4);
    assert_ne!(merged["result"]["isError"], true, "{merged}");
    let state = bb.state_of_pr11(5);
    assert!(state.starts_with("PR #11 · MERGED"), "{state}");
}

#[test]
fn over_stdio_a_client_that_cannot_ask_gets_a_tool_error_and_nothing_merges() {
    let stack = bb_stack::Stack::start(bb_stack::StackConfig::default()).unwrap();
    let mut bb = StdioBb::start(&stack, json!({}), &[], "confirm-test");
    bb.call(2, "merge_pull_request", pr11());
    let refused = bb.next("the call's answer", |m| m["id"] == 2 || m["method"] == "elicitation/create");
    assert_ne!(refused["method"], "elicitation/create", "bb asked a client that declared no forms: {refused}");
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    assert!(bb.state_of_pr11(3).starts_with("PR #11 · OPEN"), "nothing merged");
}

// --- HTTP, 2025-11-25 sessions -----------------------------------------------------------------

/// A POST whose answer is read as it comes: each SSE event's JSON-RPC message, in order.
struct Stream {
    messages: Receiver<Value>,
}

impl Stream {
    fn post(addr: &str, headers: &[(&str, &str)], body: &str) -> Stream {
        let mut s = TcpStream::connect(addr).unwrap();
        let mut head = format!("POST /mcp HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
        for (k, v) in headers {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        head.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
        s.write_all(head.as_bytes()).unwrap();
        let (tx, messages) = channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(s);
            let mut chunked = false;
            let mut line = String::new();
            // The head.
            loop {
                line.clear();
                if r.read_line(&mut line).unwrap_or(0) == 0 {
                    return;
                }
                if line.to_ascii_lowercase().starts_with("transfer-encoding: chunked") {
                    chunked = true;
                }
                if line == "\r\n" {
                    break;
                }
            }
            // The body, chunk by chunk; an event is whole once its blank line has come.
            let mut body = String::new();
            loop {
                let mut piece = Vec::new();
                if chunked {
                    line.clear();
                    if r.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let n = usize::from_str_radix(line.trim(), 16).unwrap_or(0);
                    if n == 0 {
                        return;
                    }
                    piece.resize(n + 2, 0);
                    if r.read_exact(&mut piece).is_err() {
                        return;
                    }
                    piece.truncate(n);
                } else {
                    let mut buf = [0u8; 4096];
                    match r.read(&mut buf) {
                        Ok(0) | Err(_) => {
                            // A plain JSON answer ends with the connection.
                            if let Ok(v) = serde_json::from_str::<Value>(body.trim()) {
                                let _ = tx.send(v);
                            }
                            return;
                        }
                        Ok(n) => piece.extend_from_slice(&buf[..n]),
                    }
                }
                body.push_str(&String::from_utf8_lossy(&piece));
                while let Some(end) = body.find("\n\n") {
                    let event: String = body.drain(..end + 2).collect();
                    for data in event.lines().filter_map(|l| l.strip_prefix("data: ")) {
                        if let Ok(v) = serde_json::from_str::<Value>(data) {
                            let _ = tx.send(v);
                        }
                    }
                }
            }
        });
        Stream { messages }
    }

    fn next(&self, what: &str) -> Value {
        self.messages.recv_timeout(WAIT).unwrap_or_else(|_| panic!("no {what} on the stream within {WAIT:?}"))
    }
}

fn session_headers(id: &str) -> Vec<(&'static str, String)> {
    vec![
        ("Content-Type", "application/json".into()),
        ("Accept", "application/json, text/event-stream".into()),
        ("MCP-Protocol-Version", "2025-11-25".into()),
        ("Mcp-Session-Id", id.to_owned()),
    ]
}

fn post_in(addr: &str, session: &str, body: &Value) -> (u16, String) {
    let headers = session_headers(session);
    let refs: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let (status, _, body) = request(addr, "POST", "/mcp", &refs, &body.to_string());
    (status, body)
}

#[test]
fn over_an_http_session_the_question_comes_on_the_posts_stream_and_the_result_after_the_answer() {
    let stack = bb_stack::Stack::start(bb_stack::StackConfig::default()).unwrap();
    let bb = Bb::start_with(&stack.base_url, &stack.token, &["--toolsets", "all,writes"], &[("BB_CONFIRM", "on")]);
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
        "capabilities": {"elicitation": {"form": {}}}, "clientInfo": {"name": "confirm-test", "version": "1"}}});
    let (status, head, _) = request(
        &bb.addr,
        "POST",
        "/mcp",
        &[("Content-Type", "application/json"), ("Accept", "application/json, text/event-stream")],
        &init.to_string(),
    );
    assert_eq!(status, 200);
    let session = head
        .lines()
        .find_map(|l| l.strip_prefix("mcp-session-id:"))
        .map(|v| v.trim().to_owned())
        .expect("initialize hands out a session id");
    let (status, _) = post_in(&bb.addr, &session, &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    assert_eq!(status, 202);

    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                      "params": {"name": "merge_pull_request", "arguments": pr11()}});
    let headers = session_headers(&session);
    let refs: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let stream = Stream::post(&bb.addr, &refs, &call.to_string());
    let ask = loop {
        let m = stream.next("elicitation/create");
        if m["method"] == "elicitation/create" {
            break m;
        }
        assert_ne!(m["id"], 2, "the call answered before asking: {m}");
    };
    assert_one_required_box(&ask);
    let (status, _) = post_in(
        &bb.addr,
        &session,
        &json!({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "accept", "content": {"confirm": true}}}),
    );
    assert_eq!(status, 202, "a response is accepted with 202");
    let result = loop {
        let m = stream.next("the call's result");
        if m["id"] == 2 {
            break m;
        }
    };
    assert_ne!(result["result"]["isError"], true, "{result}");
    let get = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                     "params": {"name": "get_pull_request", "arguments": pr11_get()}});
    let (status, body) = post_in(&bb.addr, &session, &get);
    assert_eq!(status, 200);
    let state = text(&service::message(&body));
    assert!(state.starts_with("PR #11 · MERGED"), "{state}");
}

// --- HTTP, 2026-07-28 ---------------------------------------------------------------------------

/// A 2026-07-28 `tools/call` with `extra` params (requestState, inputResponses), from a client that
/// declares form elicitation when `forms`: the HTTP status and the message.
fn modern(addr: &str, id: u64, name: &str, arguments: Value, extra: Value, forms: bool) -> (u16, Value) {
    let (status, _, message) = modern_seen(addr, id, name, arguments, extra, forms);
    (status, message)
}

/// As [`modern`], with the answer's headers (lowercase) too.
fn modern_seen(addr: &str, id: u64, name: &str, arguments: Value, extra: Value, forms: bool) -> (u16, String, Value) {
    let caps = if forms { json!({"elicitation": {"form": {}}}) } else { json!({}) };
    let mut params = json!({"name": name, "arguments": arguments, "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": caps}});
    if let Value::Object(extra) = extra {
        params.as_object_mut().unwrap().extend(extra);
    }
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}).to_string();
    let headers = [
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", name),
    ];
    let (status, head, rest) = request(addr, "POST", "/mcp", &headers, &body);
    (status, head, service::message(&rest))
}

/// A first call's sealed state.
fn first_state(addr: &str, id: u64) -> String {
    let (status, first) = modern(addr, id, "merge_pull_request", pr11(), json!({}), true);
    assert_eq!(status, 200, "{first}");
    assert_eq!(first["result"]["resultType"], "input_required", "{first}");
    let ask = &first["result"]["inputRequests"]["confirm"];
    assert_eq!(ask["method"], "elicitation/create", "{first}");
    assert_one_required_box(ask);
    first["result"]["requestState"].as_str().expect("a requestState").to_owned()
}

fn accept(state: &str) -> Value {
    json!({"requestState": state, "inputResponses": {"confirm": {"action": "accept", "content": {"confirm": true}}}})
}

fn pr11_is(addr: &str, id: u64) -> String {
    let (_, got) = modern(addr, id, "get_pull_request", pr11_get(), json!({}), false);
    text(&got)
}

#[test]
fn on_2026_07_28_a_sealed_state_is_honoured_once_and_an_altered_one_never() {
    let stack = bb_stack::Stack::start(bb_stack::StackConfig::default()).unwrap();
    let bb = Bb::start(&stack.base_url, &stack.token, &["--toolsets", "all,writes"]);

    // A client that cannot ask: -32021 with HTTP 400, and nothing merges.
    let (status, refused) = modern(&bb.addr, 1, "merge_pull_request", pr11(), json!({}), false);
    assert_eq!(status, 400, "{refused}");
    assert_eq!(refused["error"]["code"], -32021, "{refused}");
    assert!(refused["error"]["data"]["requiredCapabilities"]["elicitation"]["form"].is_object(), "{refused}");
    assert!(pr11_is(&bb.addr, 2).starts_with("PR #11 · OPEN"));

    let state = first_state(&bb.addr, 3);
    // One character changed: refused, and nothing merges.
    let mut altered: Vec<char> = state.chars().collect();
    let mid = altered.len() / 2;
    altered[mid] = if altered[mid] == 'A' { 'B' } else { 'A' };
    let altered: String = altered.into_iter().collect();
    let (_, bad) = modern(&bb.addr, 4, "merge_pull_request", pr11(), accept(&altered), true);
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
    assert!(pr11_is(&bb.addr, 5).starts_with("PR #11 · OPEN"));

    // The retry (a new id) with the person's acceptance merges.
    let (status, merged) = modern(&bb.addr, 6, "merge_pull_request", pr11(), accept(&state), true);
    assert_eq!(status, 200, "{merged}");
    assert_eq!(merged["result"]["resultType"], "complete", "{merged}");
    assert_ne!(merged["result"]["isError"], true, "{merged}");
    let now = pr11_is(&bb.addr, 7);
    assert!(now.starts_with("PR #11 · MERGED"), "{now}");

    // The same state again: used.
    let (_, again) = modern(&bb.addr, 8, "merge_pull_request", pr11(), accept(&state), true);
    assert_eq!(again["error"]["code"], -32602, "{again}");
}

// --- replicas sharing one store -----------------------------------------------------------------

fn replicas(redis_port: u16, stack: &bb_stack::RunningStack, env: &[(&str, &str)]) -> (Bb, Bb) {
    let store = format!("redis://127.0.0.1:{redis_port}");
    let args = ["--toolsets", "all,writes", "--rate-store", &store, "--replicas", "2"];
    let one = Bb::start_with(&stack.base_url, &stack.token, &args, env);
    let two = Bb::start_with(&stack.base_url, &stack.token, &args, env);
    (one, two)
}

fn store_get(redis_port: u16, key: &str) -> Option<String> {
    let client = redis::Client::open(format!("redis://127.0.0.1:{redis_port}")).unwrap();
    let mut c = client.get_connection_with_timeout(Duration::from_secs(5)).unwrap();
    redis::cmd("GET").arg(key).query(&mut c).unwrap()
}

#[test]
fn a_state_made_by_one_replica_is_honoured_once_by_another() {
    let Some(redis_server) = redis_server("confirmations shared by replicas") else { return };
    let stack = bb_stack::Stack::start(bb_stack::StackConfig::default()).unwrap();
    let port = free_port();
    let _redis = start_redis(&redis_server, port);
    let (one, two) = replicas(port, &stack, &[("BB_CONFIRM_KEY", KEY)]);

    let state = first_state(&one.addr, 1);
    let (status, merged) = modern(&two.addr, 2, "merge_pull_request", pr11(), accept(&state), true);
    assert_eq!(status, 200, "{merged}");
    assert_ne!(merged["result"]["isError"], true, "{merged}");
    assert!(pr11_is(&one.addr, 3).starts_with("PR #11 · MERGED"));
    // Replayed at the replica that made it: the store remembers it was used.
    let (_, replayed) = modern(&one.addr, 4, "merge_pull_request", pr11(), accept(&state), true);
    assert_eq!(replayed["error"]["code"], -32602, "{replayed}");
}

#[test]
fn without_bb_confirm_key_replicas_share_the_key_kept_in_the_store() {
    let Some(redis_server) = redis_server("confirmations shared by replicas") else { return };
    let stack = bb_stack::Stack::start(bb_stack::StackConfig::default()).unwrap();
    let port = free_port();
    let _redis = start_redis(&redis_server, port);
    let (one, two) = replicas(port, &stack, &[]);
    let state = first_state(&two.addr, 1);
    let (_, merged) = modern(&one.addr, 2, "merge_pull_request", pr11(), accept(&state), true);
    assert_ne!(merged["result"]["isError"], true, "{merged}");
    assert!(merged.get("error").is_none(), "{merged}");
    assert!(pr11_is(&two.addr, 3).starts_with("PR #11 · MERGED"));
}

/// What runs before `merge_pull_request` asks: replicas without `BB_CONFIRM_KEY` keep one key in the
/// store (the first one's), and `BB_CONFIRM_KEY` keeps it out of the store.
#[test]
fn replicas_keep_one_confirmation_key_in_the_store_unless_bb_confirm_key_is_set() {
    let Some(redis_server) = redis_server("confirmations shared by replicas") else { return };
    let stack = bb_stack::Stack::start(bb_stack::StackConfig::default()).unwrap();
    let port = free_port();
    let redis = start_redis(&redis_server, port);
    {
        let (_one, _two) = replicas(port, &stack, &[("BB_CONFIRM_KEY", KEY)]);
        assert_eq!(store_get(port, "bb:confirm:key"), None, "BB_CONFIRM_KEY is not written to the store");
    }
    let (one, two) = replicas(port, &stack, &[]);
    // Each replica has read the key before it printed its URL (Bb::start waits for that line).
    let key = store_get(port, "bb:confirm:key").expect("the first replica's key");
    assert!(key.len() == 64 && key.bytes().all(|b| b.is_ascii_hexdigit()), "{key}");
    drop((one, two));
    // A third replica reads the same key, and does not replace it.
    let (_three, _four) = replicas(port, &stack, &[]);
    assert_eq!(store_get(port, "bb:confirm:key").as_deref(), Some(key.as_str()));
    drop(redis);
}

/// Two replicas behind haproxy (round robin, a new connection per request): the first call is answered
/// by one replica, its retry by the other, which honours the state once; the replay, back at the first,
/// is refused because the store remembers the state was used.
#[test]
fn behind_haproxy_a_state_made_at_one_replica_is_honoured_once_at_the_other() {
    let Some(haproxy) = service::haproxy("confirmations behind haproxy") else { return };
    let Some(redis_server) = redis_server("confirmations behind haproxy") else { return };
    let stack = bb_stack::Stack::start(bb_stack::StackConfig::default()).unwrap();
    let port = free_port();
    let _redis = start_redis(&redis_server, port);
    let lb = free_port();
    let allow = format!("127.0.0.1:{lb}");
    let store = format!("redis://127.0.0.1:{port}");
    let args = ["--toolsets", "all,writes", "--rate-store", &store, "--replicas", "2", "--allow-host", &allow];
    let env = [("BB_CONFIRM_KEY", KEY)];
    let replicas = [
        Bb::start_with(&stack.base_url, &stack.token, &args, &env),
        Bb::start_with(&stack.base_url, &stack.token, &args, &env),
    ];
    let config =
        service::haproxy_round_robin(lb, &[&replicas[0], &replicas[1]], "  http-response set-header X-Replica %s\n");
    let _lb = service::start_haproxy(&haproxy, &config, lb);
    let via = format!("127.0.0.1:{lb}");
    let replica_of = |id: u64, extra: Value| {
        let (status, head, message) = modern_seen(&via, id, "merge_pull_request", pr11(), extra, true);
        let server = head.lines().find_map(|l| l.strip_prefix("x-replica: ")).unwrap_or("").trim().to_owned();
        (status, server, message)
    };
    let (status, made_at, first) = replica_of(1, json!({}));
    assert_eq!(status, 200, "{first}");
    let state = first["result"]["requestState"].as_str().expect("input_required").to_owned();
    let (_, honoured_at, merged) = replica_of(2, accept(&state));
    assert_ne!(made_at, honoured_at, "the retry reached the other replica");
    assert!(merged["result"]["content"][0]["text"].as_str().unwrap_or("").starts_with("Merged PR #11"), "{merged}");
    let (_, replayed_at, replayed) = replica_of(3, accept(&state));
    assert_eq!(replayed_at, made_at, "the replay went back to the replica that made the state");
    assert_eq!(replayed["error"]["code"], -32602, "{replayed}");
    let _ = std::fs::remove_dir_all(config.parent().unwrap());
}
