//! Sessions: ids required after initialize, unknown and ended ids, protocol versions, the cap and
//! idle expiry.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod common;

use std::time::Duration;

use bb_http::{HttpOptions, Limits};
use common::{INITIALIZE, Req, initialize, request, start, start_default};
use serde_json::json;

fn ping() -> String {
    request("ping", json!({}))
}

#[test]
fn a_request_without_a_session_id_gets_400() {
    let s = start_default();
    let a = Req::post(ping()).send(s.addr);
    assert_eq!(a.status, 400);
    assert!(a.json()["error"]["message"].as_str().unwrap().contains("Mcp-Session-Id"));
}

#[test]
fn an_unknown_session_id_gets_404() {
    let s = start_default();
    let a = Req::post(ping()).session("00000000000000000000000000000000").send(s.addr);
    assert_eq!(a.status, 404);
}

#[test]
fn delete_ends_the_session_and_its_id_then_gets_404() {
    let s = start_default();
    let id = initialize(s.addr);
    assert_eq!(Req::post(ping()).session(&id).send(s.addr).status, 200);
    assert_eq!(Req::new("DELETE").session(&id).send(s.addr).status, 204);
    assert_eq!(Req::post(ping()).session(&id).send(s.addr).status, 404);
    assert_eq!(Req::new("DELETE").session(&id).send(s.addr).status, 404);
    assert_eq!(Req::new("DELETE").send(s.addr).status, 400);
}

#[test]
fn an_unsupported_protocol_version_gets_400_and_an_absent_one_is_2025_03_26() {
    let s = start_default();
    let id = initialize(s.addr);
    let a = Req::post(ping()).session(&id).header("MCP-Protocol-Version", "1999-01-01").send(s.addr);
    assert_eq!(a.status, 400);
    assert!(a.json()["error"]["message"].as_str().unwrap().contains("MCP-Protocol-Version"));
    for v in ["2025-03-26", "2025-06-18", "2025-11-25"] {
        assert_eq!(Req::post(ping()).session(&id).header("MCP-Protocol-Version", v).send(s.addr).status, 200, "{v}");
    }
    assert_eq!(Req::post(ping()).session(&id).send(s.addr).status, 200);
}

#[test]
fn sessions_are_independent() {
    let s = start_default();
    let a = initialize(s.addr);
    let b = initialize(s.addr);
    assert_ne!(a, b);
    assert_eq!(Req::new("DELETE").session(&a).send(s.addr).status, 204);
    assert_eq!(Req::post(ping()).session(&b).send(s.addr).status, 200);
}

#[test]
fn initialize_beyond_the_session_cap_gets_503_with_a_json_rpc_error() {
    let limits = Limits { max_sessions: 2, ..Limits::default() };
    let s = start(HttpOptions { limits, ..HttpOptions::default() }, common::plain_fetch());
    let first = initialize(s.addr);
    initialize(s.addr);
    let a = Req::post(INITIALIZE).send(s.addr);
    assert_eq!(a.status, 503);
    assert_eq!(a.json()["id"], 0);
    assert!(a.json()["error"]["message"].as_str().unwrap().contains("limit of 2 sessions"));
    assert!(a.header("retry-after").is_some());
    // Ending one makes room.
    assert_eq!(Req::new("DELETE").session(&first).send(s.addr).status, 204);
    assert_eq!(Req::post(INITIALIZE).send(s.addr).status, 200);
}

#[test]
fn an_idle_session_expires() {
    let limits = Limits { session_idle: Duration::from_millis(100), ..Limits::default() };
    let s = start(HttpOptions { limits, ..HttpOptions::default() }, common::plain_fetch());
    let id = initialize(s.addr);
    let mut status = 200;
    for _ in 0..100 {
        std::thread::sleep(Duration::from_millis(50));
        status = Req::post(ping()).session(&id).send(s.addr).status;
        if status == 404 {
            break;
        }
        // Each use renews the session; wait without using it.
        std::thread::sleep(Duration::from_millis(300));
        status = Req::post(ping()).session(&id).send(s.addr).status;
        if status == 404 {
            break;
        }
    }
    assert_eq!(status, 404);
}
