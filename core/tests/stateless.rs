//! The 2026-07-28 era beside the handshake era, one server answering both: the same call answered
//! the same; version negotiation and mismatches; cacheable results; each request's own capabilities
//! deciding `show`.
#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use bb_core::VIEW_URI;
use common::Harness;
use serde_json::{Value, json};

const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

/// A request's `_meta` in 2026-07-28, with or without the UI extension.
fn meta(views: bool) -> Value {
    let caps = if views {
        json!({"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}})
    } else {
        json!({})
    };
    json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
           "io.modelcontextprotocol/clientCapabilities": caps,
           "io.modelcontextprotocol/clientInfo": {"name": "modern", "version": "2"}})
}

fn stateless(id: i64, method: &str, mut params: Value, views: bool) -> Value {
    params["_meta"] = meta(views);
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

fn code(answer: &Value) -> i64 {
    answer["error"]["code"].as_i64().unwrap_or_else(|| panic!("not an error: {answer}"))
}

/// A 2026-07-28 result with what that era adds taken off, to compare with the handshake era's.
fn bare(mut result: Value) -> Value {
    let r = result.as_object_mut().unwrap();
    assert_eq!(r.remove("resultType"), Some(json!("complete")), "every result is complete");
    for hint in ["ttlMs", "cacheScope"] {
        r.remove(hint);
    }
    let info = r["_meta"].as_object_mut().unwrap().remove(SERVER_INFO).unwrap();
    assert_eq!(info["name"], "bb");
    assert_eq!(info["version"], "0.0.0-test");
    if r["_meta"].as_object().is_some_and(serde_json::Map::is_empty) {
        r.remove("_meta");
    }
    result
}

#[test]
fn server_discover_names_the_versions_capabilities_and_identity_without_a_handshake() {
    let mut h = Harness::new();
    let a = h.request(stateless(1, "server/discover", json!({}), false));
    let r = &a["result"];
    assert_eq!(r["supportedVersions"], json!(["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"]));
    assert!(r["capabilities"]["tools"].is_object() && r["capabilities"]["resources"].is_object());
    assert!(r["capabilities"]["extensions"]["io.modelcontextprotocol/ui"].is_object());
    assert_eq!(r["resultType"], "complete");
    assert_eq!(r["_meta"][SERVER_INFO]["name"], "bb");
    assert!(r["ttlMs"].as_u64().unwrap() > 0);
    assert_eq!(r["cacheScope"], "public");
    assert!(r["instructions"].as_str().unwrap().contains("`show`"));
    // Discovery needs no revision named, and works on a session that has shaken hands too.
    let bare_discover = h.request(json!({"jsonrpc": "2.0", "id": 2, "method": "server/discover"}));
    assert_eq!(bare_discover["result"]["supportedVersions"], r["supportedVersions"]);
    let mut old = Harness::initialized("2025-11-25", false);
    assert_eq!(old.request(stateless(1, "server/discover", json!({}), false))["result"], *r);
    assert!(h.current().protocol_version().is_none(), "a stateless request shakes no hands");
}

#[test]
fn the_same_tool_call_is_answered_the_same_in_both_eras() {
    let mut old = Harness::initialized("2025-11-25", false);
    old.call(7, "get_thing", json!({"id": 4}));
    let old_answer = old.fetched(old.fetches[0].0, Harness::ok("thing 4")).remove(0);

    let mut new = Harness::new();
    assert!(
        new.line(&stateless(7, "tools/call", json!({"name": "get_thing", "arguments": {"id": 4}}), false).to_string())
            .is_empty()
    );
    assert_eq!(new.fetches[0].1, old.fetches[0].1, "the same read");
    let new_answer = new.fetched(new.fetches[0].0, Harness::ok("thing 4")).remove(0);
    assert_eq!(new_answer["id"], 7);
    assert_eq!(bare(new_answer["result"].clone()), old_answer["result"]);

    // An answer made at once is the same too.
    let old_echo = old.call(8, "echo", json!({"text": "hi"})).remove(0);
    let new_echo = new.request(stateless(8, "tools/call", json!({"name": "echo", "arguments": {"text": "hi"}}), false));
    assert_eq!(bare(new_echo["result"].clone()), old_echo["result"]);
}

#[test]
fn tools_list_is_the_same_list_in_both_eras_in_a_fixed_order_and_cacheable_by_anyone() {
    let mut old = Harness::initialized("2025-11-25", false);
    let old_list = old.request(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}));
    let mut new = Harness::new();
    let new_list = new.request(stateless(1, "tools/list", json!({}), false));
    assert_eq!(new_list["result"]["cacheScope"], "public");
    assert!(new_list["result"]["ttlMs"].as_u64().unwrap() > 0);
    assert_eq!(bare(new_list["result"].clone()), old_list["result"]);
    // Another process lists the same tools in the same order.
    let mut other = Harness::new();
    assert_eq!(other.request(stateless(1, "tools/list", json!({}), false))["result"], new_list["result"]);
}

#[test]
fn the_tools_only_views_call_are_listed_and_callable_only_by_a_request_that_declares_views() {
    let mut h = Harness::new();
    let names = |a: &Value| -> Vec<String> {
        a["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_owned()).collect()
    };
    let with = names(&h.request(stateless(1, "tools/list", json!({}), true)));
    let without = names(&h.request(stateless(2, "tools/list", json!({}), false)));
    assert!(with.contains(&"refresh_view".to_owned()) && with.contains(&"suggest_form_values".to_owned()), "{with:?}");
    assert_eq!(
        without,
        with.iter().filter(|n| !n.ends_with("_view") && !n.starts_with("suggest_")).cloned().collect::<Vec<_>>()
    );
    // What one request declared is not carried to the next.
    assert_eq!(names(&h.request(stateless(3, "tools/list", json!({}), true))), with);
    let a = h.request(stateless(4, "tools/call", json!({"name": "refresh_view", "arguments": {}}), false));
    assert_eq!(code(&a), -32602, "{a}");
}

#[test]
fn a_paged_tools_list_carries_cache_hints_on_every_page() {
    let mut h = Harness::with(bb_core::ExposureOptions::default(), 3);
    let first = h.request(stateless(1, "tools/list", json!({}), false));
    let cursor = first["result"]["nextCursor"].as_str().unwrap().to_owned();
    let second = h.request(stateless(2, "tools/list", json!({"cursor": cursor}), false));
    assert_eq!(second["result"]["resultType"], "complete");
    assert_eq!(second["result"]["cacheScope"], "public");
    assert_eq!(code(&h.request(stateless(3, "tools/list", json!({"cursor": "nope"}), false))), -32602);
}

#[test]
fn the_view_page_is_public_and_long_lived_and_an_unknown_resource_is_invalid_params() {
    let mut h = Harness::new();
    let a = h.request(stateless(1, "resources/read", json!({"uri": VIEW_URI}), true));
    assert_eq!(a["result"]["contents"][0]["uri"], VIEW_URI);
    assert_eq!(a["result"]["cacheScope"], "public");
    assert!(a["result"]["ttlMs"].as_u64().unwrap() >= 24 * 60 * 60 * 1000);
    assert_eq!(a["result"]["resultType"], "complete");
    let missing = h.request(stateless(2, "resources/read", json!({"uri": "ui://bb/other"}), true));
    assert_eq!(code(&missing), -32602, "2026-07-28 numbers resource-not-found as invalid params");
    assert_eq!(missing["error"]["data"]["uri"], "ui://bb/other");
    let mut old = Harness::initialized("2025-11-25", true);
    let old_missing =
        old.request(json!({"jsonrpc": "2.0", "id": 2, "method": "resources/read", "params": {"uri": "ui://bb/other"}}));
    assert_eq!(code(&old_missing), -32002, "the older revisions keep theirs");
    let list = h.request(stateless(3, "resources/list", json!({}), false));
    assert_eq!(list["result"]["resources"], json!([]));
    assert_eq!(list["result"]["cacheScope"], "public");
}

#[test]
fn an_unsupported_revision_in_meta_is_refused_with_the_revisions_bb_speaks() {
    for requested in ["1900-01-01", "2025-11-25"] {
        let mut h = Harness::new();
        let a = h.request(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list",
            "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": requested,
                                 "io.modelcontextprotocol/clientCapabilities": {}}}}));
        assert_eq!(code(&a), -32022, "{requested}");
        assert_eq!(a["error"]["data"]["requested"], requested);
        assert_eq!(a["error"]["data"]["supported"][0], "2026-07-28");
    }
}

#[test]
fn a_request_with_neither_a_handshake_nor_a_revision_is_still_told_to_initialize() {
    let mut h = Harness::new();
    let a = h.request(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}));
    assert_eq!(code(&a), -32600);
    assert!(a["error"]["message"].as_str().unwrap().contains("initialize"));
}

#[test]
fn ping_set_level_and_resources_subscribe_are_not_part_of_the_stateless_era() {
    let mut h = Harness::new();
    for method in ["ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"] {
        let a = h.request(stateless(1, method, json!({"level": "debug"}), false));
        assert_eq!(code(&a), -32601, "{method}");
    }
    // subscriptions/listen is (core/tests/subscriptions.rs): asked for nothing bb sends, it is acknowledged
    // with nothing honoured, and stays open.
    let a =
        h.request(stateless(1, "subscriptions/listen", json!({"notifications": {"toolsListChanged": true}}), false));
    assert_eq!(a["method"], "notifications/subscriptions/acknowledged", "{a}");
    assert_eq!(a["params"]["notifications"], json!({}));
    // The handshake era keeps ping.
    assert_eq!(h.request(json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}))["result"], json!({}));
}

#[test]
fn each_request_s_own_capabilities_decide_whether_show_shows() {
    let mut h = Harness::new();
    let with = h.request(stateless(1, "tools/call", json!({"name": "show", "arguments": {"kind": "thing"}}), true));
    assert_eq!(with["result"]["content"][0]["text"], "Showing thing.");
    // The next request from the same connection without the extension: nothing remembered.
    let without = h.request(stateless(2, "tools/call", json!({"name": "show", "arguments": {"kind": "thing"}}), false));
    assert!(without["result"]["content"][0]["text"].as_str().unwrap().contains("Nothing was shown"));
    assert!(h.fetches.is_empty(), "a show nobody sees fetches nothing");
    // And the handshake session's capability is not lent to a stateless request.
    let mut old = Harness::initialized("2025-11-25", true);
    let stateless_show =
        old.request(stateless(3, "tools/call", json!({"name": "show", "arguments": {"kind": "thing"}}), false));
    assert_eq!(stateless_show["result"].get("resultType"), None, "an initialized session answers as it negotiated");
}

#[test]
fn log_messages_go_with_a_request_only_when_it_asked_for_them() {
    let mut h = Harness::new();
    let quiet =
        h.line(&stateless(1, "tools/call", json!({"name": "get_thing", "arguments": {"id": 1}}), false).to_string());
    assert!(quiet.is_empty(), "no notifications/message without a logLevel: {quiet:?}");
    let mut asking = stateless(2, "tools/call", json!({"name": "get_thing", "arguments": {"id": 2}}), false);
    asking["params"]["_meta"]["io.modelcontextprotocol/logLevel"] = json!("debug");
    let told = h.line(&asking.to_string());
    assert_eq!(told.len(), 1, "{told:?}");
    assert_eq!(told[0]["method"], "notifications/message");
    assert_eq!(told[0]["params"]["level"], "debug");
    let answers = h.fetched(h.fetches[1].0, Harness::ok("thing 2"));
    assert_eq!(answers.len(), 1);
    assert_eq!(answers[0]["id"], 2);
}
