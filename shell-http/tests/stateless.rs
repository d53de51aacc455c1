//! MCP 2026-07-28 over raw sockets: no session, the standard headers checked against the body,
//! modern errors as 400, and the older revisions' sessions beside it on the same endpoint.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod common;

use std::sync::{Arc, Mutex};

use bb_core::FetchOutcome;
use bb_drive::{Bitbucket, Cancel};
use bb_http::{HttpOptions, PersonalToken};
use common::{Req, initialize, request, start, start_default};
use serde_json::{Value, json};

const V: &str = "2026-07-28";

fn meta(views: bool) -> Value {
    let caps = if views {
        json!({"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}})
    } else {
        json!({})
    };
    json!({"io.modelcontextprotocol/protocolVersion": V, "io.modelcontextprotocol/clientCapabilities": caps,
           "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"}})
}

/// A 2026-07-28 POST of `method` with `params`, its headers mirroring the body.
fn modern(method: &str, mut params: Value, views: bool) -> Req {
    params["_meta"] = meta(views);
    let name = params.get("name").or_else(|| params.get("uri")).and_then(Value::as_str).map(str::to_owned);
    let mut r = Req::post(request(method, params)).header("MCP-Protocol-Version", V).header("Mcp-Method", method);
    if let Some(name) = name {
        r = r.header("Mcp-Name", &name);
    }
    r
}

#[test]
fn a_stateless_request_is_answered_without_a_session_and_none_is_minted() {
    let s = start_default();
    let a = modern("tools/list", json!({}), false).send(s.addr);
    assert_eq!(a.status, 200, "{a:?}");
    assert_eq!(a.header("mcp-session-id"), None);
    let r = &a.json()["result"];
    assert_eq!(r["resultType"], "complete");
    assert_eq!(r["cacheScope"], "public");
    assert_eq!(r["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "bb");
    let d = modern("server/discover", json!({}), false).send(s.addr);
    assert_eq!(d.json()["result"]["supportedVersions"][0], V);
}

#[test]
fn tool_calls_show_and_the_page_work_request_by_request() {
    let s = start_default();
    let a = modern("tools/call", json!({"name": "get_thing", "arguments": {"id": 3}}), false).send(s.addr);
    assert_eq!(a.status, 200, "{a:?}");
    let body = if a.header("content-type") == Some("text/event-stream") { a.events().pop().unwrap() } else { a.json() };
    assert!(body["result"]["content"][0]["text"].as_str().unwrap().contains("thing"), "{body}");
    let shown = modern("tools/call", json!({"name": "show", "arguments": {"kind": "thing"}}), true).send(s.addr);
    assert_eq!(shown.json()["result"]["content"][0]["text"], "Showing thing.");
    let unseen = modern("tools/call", json!({"name": "show", "arguments": {"kind": "thing"}}), false).send(s.addr);
    assert!(unseen.json()["result"]["content"][0]["text"].as_str().unwrap().contains("Nothing was shown"));
    let page = modern("resources/read", json!({"uri": "ui://bb/view"}), true).send(s.addr);
    assert_eq!(page.json()["result"]["contents"][0]["mimeType"], "text/html;profile=mcp-app");
}

#[test]
fn headers_that_disagree_with_the_body_or_are_missing_are_a_header_mismatch() {
    let s = start_default();
    let call = || modern("tools/call", json!({"name": "echo", "arguments": {"text": "x"}}), false);
    for r in [
        call().header("Mcp-Name", "show"),
        call().header("Mcp-Method", "tools/list"),
        call().without("Mcp-Name"),
        call().without("Mcp-Method"),
        call().header("MCP-Protocol-Version", "2025-11-25"),
        call().without("MCP-Protocol-Version"),
    ] {
        let a = r.send(s.addr);
        assert_eq!(a.status, 400, "{a:?}");
        assert_eq!(a.json()["error"]["code"], -32020, "{a:?}");
        assert_eq!(a.json()["id"], 1);
    }
    let encoded = call().header("Mcp-Name", "=?base64?ZWNobw==?=").send(s.addr);
    assert_eq!(encoded.status, 200, "{encoded:?}");
}

#[test]
fn an_unsupported_version_is_400_and_an_unknown_method_404_each_with_its_json_rpc_error() {
    let s = start_default();
    let body = request(
        "tools/list",
        json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "1900-01-01",
                                                       "io.modelcontextprotocol/clientCapabilities": {}}}),
    );
    let a =
        Req::post(body).header("MCP-Protocol-Version", "1900-01-01").header("Mcp-Method", "tools/list").send(s.addr);
    assert_eq!(a.status, 400, "{a:?}");
    assert_eq!(a.json()["error"]["code"], -32022);
    assert_eq!(a.json()["error"]["data"]["supported"][0], V);
    let ping = modern("ping", json!({}), false).send(s.addr);
    assert_eq!(ping.status, 404, "{ping:?}");
    assert_eq!(ping.json()["error"]["code"], -32601);
}

#[test]
fn a_session_id_on_a_stateless_request_is_ignored_and_get_has_no_stream() {
    let s = start_default();
    let a = modern("tools/list", json!({}), false).session("no-such-session").send(s.addr);
    assert_eq!(a.status, 200, "{a:?}");
    assert_eq!(a.header("mcp-session-id"), None);
    let get = Req::new("GET").header("MCP-Protocol-Version", V).send(s.addr);
    assert_eq!(get.status, 405);
}

#[test]
fn the_older_revisions_keep_their_sessions_on_the_same_endpoint() {
    let s = start_default();
    let id = initialize(s.addr);
    let a = Req::post(request("tools/list", json!({})))
        .session(&id)
        .header("MCP-Protocol-Version", "2025-11-25")
        .send(s.addr);
    assert_eq!(a.status, 200);
    assert_eq!(a.json()["result"].get("resultType"), None);
    let without = Req::post(request("tools/list", json!({}))).send(s.addr);
    assert_eq!(without.status, 400, "a handshake request still needs its session");
}

#[test]
fn per_person_tokens_travel_with_each_stateless_request() {
    const HEADER: &str = "X-Bitbucket-Token";
    let seen: Arc<Mutex<Vec<Option<String>>>> = Arc::default();
    let record = Arc::clone(&seen);
    let fetch: Arc<dyn Bitbucket> =
        Arc::new(move |req: bb_core::FetchRequest, p: Option<&PersonalToken>, _: &Cancel| {
            let token = p.map(|p| p.secret().to_owned());
            if req.path != "/rest/api/latest/users" {
                record.lock().unwrap().push(token.clone());
            }
            FetchOutcome::response(200, format!("you are {}", token.unwrap_or_default()))
        });
    let s = start(HttpOptions { per_user_token_header: Some(HEADER.into()), ..HttpOptions::default() }, fetch);
    let call = || modern("tools/call", json!({"name": "get_thing", "arguments": {"id": 1}}), false);
    let missing = call().send(s.addr);
    assert_eq!(missing.status, 400);
    assert!(missing.json()["error"]["message"].as_str().unwrap().contains(HEADER));
    for who in ["alice", "bob", "alice"] {
        let a = call().header(HEADER, &format!("token-of-{who}")).send(s.addr);
        assert_eq!(a.status, 200, "{a:?}");
        assert_eq!(a.json()["result"]["content"][0]["text"], format!("you are token-of-{who}"));
    }
    assert_eq!(seen.lock().unwrap().len(), 3);
    assert!(!s.logs.lock().unwrap().iter().any(|l| l.contains("token-of")));
}
