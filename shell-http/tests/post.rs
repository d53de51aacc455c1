//! POST /mcp: what each kind of message gets back, and what a malformed POST gets.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod common;

use std::sync::Arc;
use std::time::Duration;

use bb_core::FetchOutcome;
use bb_drive::{Bitbucket, Cancel};
use bb_http::{HttpOptions, Limits, PersonalToken};
use common::{Req, initialize, request, start, start_default, start_standard};
use serde_json::json;

#[test]
fn a_request_gets_a_json_answer_by_default() {
    let s = start_default();
    let id = initialize(s.addr);
    let a = Req::post(request("tools/list", json!({}))).session(&id).send(s.addr);
    assert_eq!(a.status, 200);
    assert!(a.header("content-type").unwrap().starts_with("application/json"));
    let tools = a.json()["result"]["tools"].as_array().unwrap().len();
    assert!(tools > 0);
    let a = Req::post(request("tools/call", json!({"name": "echo", "arguments": {"text": "hi"}})))
        .session(&id)
        .send(s.addr);
    assert_eq!(a.json()["result"]["content"][0]["text"], "hi");
}

#[test]
fn the_initialize_answer_carries_a_long_random_hex_session_id() {
    let s = start_default();
    let a = Req::post(common::INITIALIZE).send(s.addr);
    assert_eq!(a.status, 200);
    assert_eq!(a.json()["result"]["protocolVersion"], "2025-11-25");
    let id = a.header("mcp-session-id").unwrap().to_owned();
    assert_eq!(id.len(), 32);
    assert!(id.bytes().all(|b| b.is_ascii_hexdigit()));
    let b = Req::post(common::INITIALIZE).send(s.addr);
    assert_ne!(b.header("mcp-session-id").unwrap(), id);
}

#[test]
fn a_failed_initialize_starts_no_session() {
    let s = start_default();
    let a = Req::post(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}"#).send(s.addr);
    assert_eq!(a.status, 200);
    assert!(a.json()["error"].is_object());
    assert_eq!(a.header("mcp-session-id"), None);
}

#[test]
fn notifications_and_responses_get_202_with_no_body() {
    let s = start_default();
    let id = initialize(s.addr);
    let a = Req::post(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}"#)
        .session(&id)
        .send(s.addr);
    assert_eq!((a.status, a.body.as_str()), (202, ""));
    let a = Req::post(r#"{"jsonrpc":"2.0","id":"s1","result":{}}"#).session(&id).send(s.addr);
    assert_eq!((a.status, a.body.as_str()), (202, ""));
}

#[test]
fn a_request_with_a_progress_token_is_answered_as_an_sse_stream_that_ends_after_the_answer() {
    let s = start_default();
    let id = initialize(s.addr);
    let body =
        request("tools/call", json!({"name": "get_thing", "arguments": {"id": 4}, "_meta": {"progressToken": "p1"}}));
    let a = Req::post(body).session(&id).send(s.addr);
    assert_eq!(a.status, 200);
    assert_eq!(a.header("content-type"), Some("text/event-stream"));
    let events = a.events();
    assert_eq!(events.len(), 1, "{}", a.body);
    assert_eq!(events[0]["id"], 1);
    assert_eq!(events[0]["result"]["content"][0]["text"], "thing /rest/api/latest/things/4");
}

#[test]
fn a_slow_answer_switches_to_sse_and_still_arrives() {
    let fetch: Arc<dyn Bitbucket> = Arc::new(|_: bb_core::FetchRequest, _: Option<&PersonalToken>, _: &Cancel| {
        std::thread::sleep(Duration::from_millis(400));
        FetchOutcome::response(200, "late thing")
    });
    let limits =
        Limits { sse_after: Duration::from_millis(50), sse_keepalive: Duration::from_millis(100), ..Limits::default() };
    let s = start(HttpOptions { limits, ..HttpOptions::default() }, fetch);
    let id = initialize(s.addr);
    let a = Req::post(request("tools/call", json!({"name": "get_thing", "arguments": {"id": 1}})))
        .session(&id)
        .send(s.addr);
    assert_eq!(a.header("content-type"), Some("text/event-stream"));
    assert!(a.body.contains(": keepalive"), "{}", a.body);
    assert_eq!(a.events()[0]["result"]["content"][0]["text"], "late thing");
}

#[test]
fn log_notifications_flow_on_an_open_sse_stream_before_the_answer() {
    let s = start_default();
    let id = initialize(s.addr);
    let a = Req::post(request("logging/setLevel", json!({"level": "debug"}))).session(&id).send(s.addr);
    assert_eq!(a.json()["result"], json!({}));
    let body =
        request("tools/call", json!({"name": "get_thing", "arguments": {"id": 2}, "_meta": {"progressToken": 5}}));
    let events = Req::post(body).session(&id).send(s.addr).events();
    assert!(events.len() >= 2, "{events:?}");
    assert_eq!(events[0]["method"], "notifications/message");
    assert_eq!(events.last().unwrap()["id"], 1);
}

#[test]
fn a_wrong_accept_gets_406() {
    let s = start_default();
    for accept in ["application/json", "text/event-stream", "text/html"] {
        let a = Req::post(common::INITIALIZE).header("Accept", accept).send(s.addr);
        assert_eq!(a.status, 406, "{accept}");
        assert_eq!(a.json()["error"]["code"], -32000);
    }
    // Wildcards and a missing Accept admit both answer types.
    assert_eq!(Req::post(common::INITIALIZE).header("Accept", "*/*").send(s.addr).status, 200);
    assert_eq!(Req::post(common::INITIALIZE).without("Accept").send(s.addr).status, 200);
}

#[test]
fn a_wrong_content_type_gets_415() {
    let s = start_default();
    for ct in ["text/plain", "application/x-www-form-urlencoded"] {
        assert_eq!(Req::post(common::INITIALIZE).header("Content-Type", ct).send(s.addr).status, 415, "{ct}");
    }
    assert_eq!(Req::post(common::INITIALIZE).without("Content-Type").send(s.addr).status, 415);
    let ok = Req::post(common::INITIALIZE).header("Content-Type", "application/json; charset=utf-8").send(s.addr);
    assert_eq!(ok.status, 200);
}

#[test]
fn a_body_over_the_limit_gets_413() {
    let limits = Limits { max_body: 1024, ..Limits::default() };
    let s = start(HttpOptions { limits, ..HttpOptions::default() }, common::plain_fetch());
    let big = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"pad":"{}"}}}}"#, "x".repeat(2000));
    let a = Req::post(big.clone()).send(s.addr);
    assert_eq!(a.status, 413);
    assert!(a.json()["error"]["message"].as_str().unwrap().contains("1024"));
    // A chunked body declares no length: it is counted as it arrives.
    let mut c = common::connect(s.addr);
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: */*\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n{big}\r\n0\r\n\r\n",
        s.addr,
        big.len()
    );
    std::io::Write::write_all(&mut c, head.as_bytes()).unwrap();
    assert_eq!(common::read_answer(&mut c).status, 413);
}

#[test]
fn get_without_a_session_gets_405_and_other_paths_404() {
    let s = start_default();
    let a = Req::new("GET").header("Accept", "text/event-stream").send(s.addr);
    assert_eq!(a.status, 405);
    assert_eq!(a.header("allow"), Some("GET, POST, DELETE, OPTIONS"));
    // With a session: its stream needs text/event-stream, and a session that exists.
    let id = initialize(s.addr);
    assert_eq!(Req::new("GET").session(&id).header("Accept", "application/json").send(s.addr).status, 406);
    let unknown = Req::new("GET").session("0123456789abcdef0123456789abcdef").header("Accept", "text/event-stream");
    assert_eq!(unknown.send(s.addr).status, 404);
    assert_eq!(Req::post(common::INITIALIZE).path("/other").send(s.addr).status, 404);
}

#[test]
fn an_empty_body_on_a_live_session_gets_a_json_rpc_parse_error_with_400() {
    let s = start_default();
    let id = initialize(s.addr);
    for body in ["", "  \r\n"] {
        let a = Req::post(body).session(&id).send(s.addr);
        assert_eq!(a.status, 400, "{body:?}");
        assert_eq!(a.json()["error"]["code"], -32700);
        assert_eq!(a.json()["id"], serde_json::Value::Null);
    }
    assert_eq!(Req::post(request("ping", json!({}))).session(&id).send(s.addr).status, 200);
}

#[test]
fn enable_toolset_is_answered_as_an_event_stream_the_list_change_first_then_the_answer() {
    let s = start_standard();
    let id = initialize(s.addr);
    let listed = |s: &common::TestServer| {
        let a = Req::post(request("tools/list", json!({}))).session(&id).send(s.addr);
        a.json()["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect::<Vec<_>>()
    };
    assert!(!listed(&s).contains(&"list_tags".to_string()));
    let a =
        Req::post(request("tools/call", json!({"name": "enable_toolset", "arguments": {"toolset": "repositories"}})))
            .session(&id)
            .send(s.addr);
    assert_eq!((a.status, a.header("content-type")), (200, Some("text/event-stream")), "{}", a.body);
    let events = a.events();
    assert_eq!(events.len(), 2, "{}", a.body);
    assert_eq!(events[0]["method"], "notifications/tools/list_changed");
    assert!(events[1]["result"]["content"][0]["text"].as_str().unwrap().starts_with("Turned on repositories"));
    assert!(listed(&s).contains(&"list_tags".to_string()), "the session's list has them");
    // Another session of the same server does not.
    let other = initialize(s.addr);
    let a = Req::post(request("tools/list", json!({}))).session(&other).send(s.addr);
    assert!(!a.body.contains("\"list_tags\""));
}
