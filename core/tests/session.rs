//! The session's lifecycle and methods, driven through the test catalogue.
#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use bb_core::{ExposureOptions, FetchOutcome, VIEW_URI};
use common::Harness;
use serde_json::{Value, json};

fn code(answer: &Value) -> i64 {
    answer["error"]["code"].as_i64().unwrap_or_else(|| panic!("not an error: {answer}"))
}

#[test]
fn initialize_answers_with_the_requested_supported_version() {
    for v in ["2025-11-25", "2025-06-18", "2025-03-26"] {
        let mut h = Harness::new();
        let a = h.request(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": v, "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}}));
        assert_eq!(a["result"]["protocolVersion"], v);
    }
}

#[test]
fn initialize_with_an_unknown_version_answers_with_the_latest() {
    let mut h = Harness::new();
    let a = h.request(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "1999-01-01", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}}));
    assert_eq!(a["result"]["protocolVersion"], "2025-11-25");
}

#[test]
fn initialize_declares_tools_resources_logging_and_the_ui_extension() {
    let mut h = Harness::new();
    let a = h.request(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}}),
    );
    let caps = &a["result"]["capabilities"];
    assert!(caps["tools"].is_object() && caps["resources"].is_object() && caps["logging"].is_object());
    assert!(caps["extensions"]["io.modelcontextprotocol/ui"].is_object());
    assert_eq!(a["result"]["serverInfo"]["name"], "bb");
    assert!(a["result"]["instructions"].as_str().unwrap().contains("`show` is for the person"));
}

#[test]
fn the_client_ui_capability_is_remembered_for_the_session() {
    let h = Harness::initialized("2025-11-25", true);
    assert!(h.current().client().renders_views);
    let h = Harness::initialized("2025-11-25", false);
    assert!(!h.current().client().renders_views);
}

#[test]
fn show_tells_a_client_without_views_that_nothing_was_shown() {
    let mut h = Harness::initialized("2025-11-25", false);
    let a = h.call(1, "show", json!({"kind": "thing"}));
    assert!(a[0]["result"]["content"][0]["text"].as_str().unwrap().contains("Nothing was shown"));
    let mut h = Harness::initialized("2025-11-25", true);
    let a = h.call(1, "show", json!({"kind": "thing"}));
    assert_eq!(a[0]["result"]["content"][0]["text"], "Showing thing.");
}

#[test]
fn a_second_initialize_is_refused() {
    let mut h = Harness::initialized("2025-11-25", false);
    let a = h.request(
        json!({"jsonrpc": "2.0", "id": 9, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}}),
    );
    assert_eq!(code(&a), -32600);
}

#[test]
fn initialize_without_a_protocol_version_is_invalid_params() {
    let mut h = Harness::new();
    let a = h.request(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}));
    assert_eq!(code(&a), -32602);
    assert!(h.current().protocol_version().is_none());
}

#[test]
fn before_initialize_only_ping_is_answered() {
    let mut h = Harness::new();
    assert_eq!(h.request(json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}))["result"], json!({}));
    let a = h.request(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
    assert_eq!(code(&a), -32600);
    assert!(a["error"]["message"].as_str().unwrap().contains("send `initialize` first"));
}

#[test]
fn ping_answers_an_empty_object() {
    let mut h = Harness::initialized("2025-11-25", false);
    let a = h.request(json!({"jsonrpc": "2.0", "id": "p", "method": "ping"}));
    assert_eq!(a, json!({"jsonrpc": "2.0", "id": "p", "result": {}}));
}

#[test]
fn an_unknown_method_is_method_not_found() {
    let mut h = Harness::initialized("2025-11-25", false);
    assert_eq!(code(&h.request(json!({"jsonrpc": "2.0", "id": 1, "method": "sampling/createMessage"}))), -32601);
}

#[test]
fn notifications_are_never_answered() {
    let mut h = Harness::initialized("2025-11-25", false);
    for m in ["notifications/initialized", "notifications/roots/list_changed", "unknown/thing", "ping"] {
        assert!(h.line(&json!({"jsonrpc": "2.0", "method": m}).to_string()).is_empty(), "{m}");
    }
}

#[test]
fn malformed_input_gets_parse_and_invalid_request_errors() {
    let mut h = Harness::initialized("2025-11-25", false);
    assert_eq!(code(&h.line("{not json")[0]), -32700);
    assert_eq!(code(&h.line("17")[0]), -32600);
    assert_eq!(code(&h.line(r#"{"jsonrpc":"2.0","id":1}"#)[0]), -32600);
    assert_eq!(code(&h.line(r#"{"id":1,"method":"ping"}"#)[0]), -32600);
    assert!(h.line("   ").is_empty());
}

#[test]
fn batches_are_refused_except_under_2025_03_26() {
    let batch = r#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]"#;
    for v in ["2025-11-25", "2025-06-18"] {
        let mut h = Harness::initialized(v, false);
        let a = h.line(batch);
        assert_eq!(a.len(), 1);
        assert_eq!(code(&a[0]), -32600);
    }
    let mut h = Harness::initialized("2025-03-26", false);
    let a = h.line(batch);
    assert_eq!(a.len(), 1);
    let ids: Vec<&Value> = a[0].as_array().unwrap().iter().map(|m| &m["id"]).collect();
    assert_eq!(ids, [&json!(1), &json!(2)]);
}

#[test]
fn a_batch_of_notifications_only_gets_no_answer_and_bad_elements_get_errors() {
    let mut h = Harness::initialized("2025-03-26", false);
    assert!(h.line(r#"[{"jsonrpc":"2.0","method":"notifications/initialized"}]"#).is_empty());
    let a = h.line(r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}, 3]"#);
    let items = a[0].as_array().unwrap();
    assert_eq!(items.len(), 2);
    assert_eq!(code(&items[1]), -32600);
}

#[test]
fn a_batch_waits_for_its_slowest_request_and_answers_all_at_once() {
    let mut h = Harness::initialized("2025-03-26", false);
    let a = h.line(r#"[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_thing","arguments":{"id":4}}},{"jsonrpc":"2.0","id":2,"method":"ping"}]"#);
    assert!(a.is_empty(), "nothing until the fetch returns: {a:?}");
    let ticket = h.fetches[0].0;
    let a = h.fetched(ticket, Harness::ok("thing 4"));
    let items = a[0].as_array().unwrap();
    assert_eq!(items.len(), 2);
    assert!(items.iter().any(|m| m["result"]["content"][0]["text"] == "thing 4"));
}

#[test]
fn initialize_inside_a_batch_is_refused() {
    let mut h = Harness::initialized("2025-03-26", false);
    let a = h.line(r#"[{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26"}}]"#);
    assert_eq!(code(&a[0][0]), -32600);
}

#[test]
fn tools_list_pages_with_a_cursor_and_refuses_a_forged_one() {
    let mut h = Harness::with(ExposureOptions::default(), 3).initialize("2025-11-25", true);
    assert_eq!(
        listed_names(&mut h),
        ["echo", "get_thing", "list_things", "add_note", "fetch_twice", "show", "refresh_view", "suggest_form_values"]
    );
    for bad in [json!("tools:999"), json!("garbage"), json!(5)] {
        let a = h.request(json!({"jsonrpc": "2.0", "id": 20, "method": "tools/list", "params": {"cursor": bad}}));
        assert_eq!(code(&a), -32602, "{bad}");
    }
}

/// Every tool `tools/list` gives `h`'s session, page after page.
fn listed_names(h: &mut Harness) -> Vec<String> {
    let mut names = vec![];
    let mut cursor: Option<String> = None;
    for id in 1..10 {
        let params = cursor.as_ref().map_or(json!({}), |c| json!({"cursor": c}));
        let a = h.request(json!({"jsonrpc": "2.0", "id": id, "method": "tools/list", "params": params}));
        let tools = a["result"]["tools"].as_array().unwrap();
        names.extend(tools.iter().map(|t| t["name"].as_str().unwrap().to_owned()));
        match a["result"]["nextCursor"].as_str() {
            Some(c) => cursor = Some(c.to_owned()),
            None => break,
        }
    }
    names
}

#[test]
fn a_client_that_renders_no_views_is_neither_listed_nor_may_call_the_tools_only_views_call() {
    for page in [100, 3] {
        let mut h = Harness::with(ExposureOptions::default(), page).initialize("2025-11-25", false);
        assert_eq!(listed_names(&mut h), ["echo", "get_thing", "list_things", "add_note", "fetch_twice", "show"]);
        let a = h.call(1, "refresh_view", json!({}));
        assert_eq!(code(&a[0]), -32602, "{a:?}");
        assert!(a[0]["error"]["message"].as_str().unwrap().starts_with("Unknown tool: `refresh_view`"), "{a:?}");
        assert!(h.fetches.is_empty());
    }
    let mut h = Harness::with(ExposureOptions::default(), 3).initialize("2025-11-25", false);
    let a = h.request(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"cursor": "tools:6"}}));
    assert_eq!(code(&a), -32602, "past the end of what this client sees: {a}");
}

#[test]
fn calling_an_unknown_or_unexposed_tool_is_invalid_params() {
    let mut h = Harness::initialized("2025-11-25", false);
    assert_eq!(code(&h.call(1, "nope", json!({}))[0]), -32602);
    assert_eq!(
        code(&h.call(2, "merge_thing", json!({"id": 1}))[0]),
        -32602,
        "unsafe writes are not exposed by default"
    );
    let a = h.request(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {}}));
    assert_eq!(code(&a), -32602);
}

#[test]
fn bad_arguments_are_an_error_result_that_says_what_is_wrong() {
    let mut h = Harness::initialized("2025-11-25", false);
    let a = &h.call(1, "get_thing", json!({"id": "seven"}))[0];
    assert_eq!(a["result"]["isError"], true);
    assert_eq!(
        a["result"]["content"][0]["text"],
        "Invalid arguments for get_thing: `id` must be an integer, not the string \"seven\"."
    );
    let a = &h.call(2, "show", json!({"kind": "merge_form"}))[0];
    assert_eq!(a["result"]["isError"], true, "a kind that is not offered is refused: {a}");
}

#[test]
fn a_call_that_fetches_answers_when_its_response_arrives() {
    let mut h = Harness::initialized("2025-11-25", false);
    assert!(h.call(1, "get_thing", json!({"id": 7})).is_empty());
    assert_eq!(h.current().in_flight(), 1);
    let (ticket, request) = h.fetches[0].clone();
    assert_eq!(request.path, "/rest/api/latest/things/7");
    let a = h.fetched(ticket, Harness::ok("the seventh thing"));
    assert_eq!(a[0]["id"], 1);
    assert_eq!(a[0]["result"]["content"][0]["text"], "the seventh thing");
    assert_eq!(h.current().in_flight(), 0);
}

#[test]
fn requests_are_answered_while_a_call_waits_on_bitbucket() {
    let mut h = Harness::initialized("2025-11-25", false);
    h.call(1, "get_thing", json!({"id": 7}));
    let a = h.request(json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}));
    assert_eq!(a["id"], 2);
    let b = h.call(3, "echo", json!({"text": "hi"}));
    assert_eq!(b[0]["id"], 3);
}

#[test]
fn parallel_fetches_answer_once_both_have_arrived_in_any_order() {
    let mut h = Harness::initialized("2025-11-25", false);
    h.call(1, "fetch_twice", json!({}));
    assert_eq!(h.fetches.len(), 2);
    let (a, b) = (h.fetches[0].0, h.fetches[1].0);
    assert!(h.fetched(b, Harness::ok("B")).is_empty());
    let out = h.fetched(a, FetchOutcome::failed(bb_core::FetchErrorKind::Unreachable, "connection refused"));
    assert_eq!(out[0]["result"]["content"][0]["text"], "Bitbucket could not be reached: connection refused | B");
}

#[test]
fn a_cancelled_call_gets_no_answer_and_its_fetches_are_cancelled() {
    let mut h = Harness::initialized("2025-11-25", false);
    h.call(1, "fetch_twice", json!({}));
    let cancel =
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1, "reason": "user"}});
    assert!(h.line(&cancel.to_string()).is_empty());
    assert_eq!(h.cancelled.len(), 2);
    let (a, b) = (h.fetches[0].0, h.fetches[1].0);
    assert!(h.fetched(a, Harness::ok("A")).is_empty());
    assert!(h.fetched(b, Harness::ok("B")).is_empty());
    assert!(h.sent.iter().all(|m| m["id"] != 1), "no answer for a cancelled call");
}

#[test]
fn cancelling_an_unknown_or_answered_request_does_nothing() {
    let mut h = Harness::initialized("2025-11-25", false);
    h.call(1, "echo", json!({"text": "x"}));
    for p in [json!({"requestId": 1}), json!({"requestId": 99}), json!({}), json!({"requestId": null})] {
        assert!(
            h.line(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": p}).to_string()).is_empty()
        );
    }
}

#[test]
fn a_request_reusing_the_id_of_one_in_progress_is_refused() {
    let mut h = Harness::initialized("2025-11-25", false);
    h.call(1, "get_thing", json!({"id": 1}));
    let a = h.request(json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}));
    assert_eq!(code(&a), -32600);
    let ticket = h.fetches[0].0;
    assert_eq!(h.fetched(ticket, Harness::ok("x"))[0]["id"], 1);
}

#[test]
fn the_view_resource_is_served_and_left_out_of_the_list() {
    let mut h = Harness::initialized("2025-11-25", false);
    let a = h.request(json!({"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {"uri": VIEW_URI}}));
    let content = &a["result"]["contents"][0];
    assert_eq!(content["uri"], VIEW_URI);
    assert_eq!(content["mimeType"], "text/html;profile=mcp-app");
    assert_eq!(content["text"], bb_assets::VIEW_HTML);
    assert!(content["_meta"]["ui"].get("csp").is_none(), "the page declares no domains");
    let a = h.request(json!({"jsonrpc": "2.0", "id": 2, "method": "resources/list"}));
    assert_eq!(a["result"]["resources"], json!([]));
}

#[test]
fn the_view_resource_is_byte_identical_across_sessions() {
    let read = || {
        let mut h = Harness::initialized("2025-11-25", true);
        h.request(json!({"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {"uri": VIEW_URI}}))
            .to_string()
    };
    assert_eq!(read(), read());
}

#[test]
fn an_unknown_resource_is_not_found_with_its_uri() {
    let mut h = Harness::initialized("2025-11-25", false);
    let a =
        h.request(json!({"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {"uri": "ui://bb/other"}}));
    assert_eq!(code(&a), -32002);
    assert_eq!(a["error"]["data"]["uri"], "ui://bb/other");
}

#[test]
fn set_level_turns_on_log_notifications_at_and_above_the_level() {
    let mut h = Harness::initialized("2025-11-25", false);
    assert_eq!(
        h.request(json!({"jsonrpc": "2.0", "id": 1, "method": "logging/setLevel", "params": {"level": "debug"}}))["result"],
        json!({})
    );
    let out = h.line(r#"{"jsonrpc":"2.0","method":"some/notification"}"#);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0]["method"], "notifications/message");
    assert_eq!(out[0]["params"]["level"], "debug");
    let a = h.request(json!({"jsonrpc": "2.0", "id": 2, "method": "logging/setLevel", "params": {"level": "loud"}}));
    assert_eq!(code(&a), -32602);
}

#[test]
fn an_oversized_message_is_answered_with_a_clear_error() {
    let mut h = Harness::initialized("2025-11-25", false);
    h.server.handle(bb_core::Input::Oversized { session: h.session, limit: 16 << 20, tag: 5 }, 10);
    let out: Vec<_> = std::iter::from_fn(|| h.server.poll_output()).collect();
    let Some(bb_core::Output::Send { message, tag, .. }) =
        out.iter().find(|o| matches!(o, bb_core::Output::Send { .. })).cloned()
    else {
        panic!("expected an answer, got {out:?}")
    };
    assert_eq!(tag, Some(5));
    let v: Value = serde_json::from_slice(&message).unwrap();
    assert_eq!(code(&v), -32600);
    assert!(v["error"]["message"].as_str().unwrap().contains("16777216 bytes"));
}

#[test]
fn a_session_has_at_most_its_share_of_reads_in_flight_and_the_rest_wait_in_order() {
    let mut h = Harness::initialized("2025-11-25", false);
    let n = bb_core::limits::READS_PER_SESSION as i64;
    for id in 1..=n + 2 {
        h.call(id, "get_thing", json!({"id": id}));
    }
    let sent: Vec<String> = h.fetches.iter().map(|(_, r)| r.path.clone()).collect();
    assert_eq!(sent.len() as i64, n, "{sent:?}");
    let first = h.fetches[0].0;
    h.fetched(first, Harness::ok("one"));
    assert_eq!(h.fetches.len() as i64, n + 1, "an answered read makes room for the next queued one");
    assert_eq!(h.fetches[n as usize].1.path, format!("/rest/api/latest/things/{}", n + 1));
}

#[test]
fn a_cancelled_calls_queued_read_is_never_sent() {
    let mut h = Harness::initialized("2025-11-25", false);
    let last = bb_core::limits::READS_PER_SESSION as i64 + 1;
    for id in 1..=last {
        h.call(id, "get_thing", json!({"id": id}));
    }
    // The last call's read waits behind the others; its call is cancelled before it is sent.
    h.line(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": last}}).to_string());
    assert!(h.cancelled.is_empty(), "a read never sent needs no cancelling");
    for (ticket, _) in h.fetches.clone() {
        h.fetched(ticket, Harness::ok("x"));
    }
    let cancelled = format!("/things/{last}");
    assert!(
        !h.fetches.iter().any(|(_, r)| r.path.ends_with(&cancelled)),
        "the cancelled call's read was never handed to the shell: {:?}",
        h.fetches
    );
}

#[test]
fn every_input_ends_in_one_done_after_its_answers() {
    let mut h = Harness::initialized("2025-11-25", false);
    h.done.clear();
    h.request(json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}));
    h.line(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string());
    h.call(2, "get_thing", json!({"id": 1}));
    assert_eq!(h.done.len(), 2, "the call waits on Bitbucket: its input is not done yet");
    let ticket = h.fetches[0].0;
    h.fetched(ticket, Harness::ok("x"));
    assert_eq!(h.done.len(), 3);
    assert_eq!(h.done.iter().collect::<std::collections::BTreeSet<_>>().len(), 3, "one Done per input");
}

#[test]
fn a_batch_larger_than_the_bound_is_refused_whole() {
    let mut h = Harness::initialized("2025-03-26", false);
    let batch: Vec<Value> =
        (0..=bb_core::limits::MAX_BATCH as i64).map(|i| json!({"jsonrpc": "2.0", "id": i, "method": "ping"})).collect();
    let out = h.line(&Value::Array(batch).to_string());
    assert_eq!(out.len(), 1);
    assert_eq!(code(&out[0]), -32600);
}

#[test]
fn a_batchs_answers_together_stay_within_their_cap_and_each_left_out_says_so() {
    let mut h = Harness::initialized("2025-03-26", false);
    let batch: Vec<Value> = (1..=40)
        .map(|i| json!({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": "get_thing", "arguments": {"id": i}}}))
        .chain([json!({"jsonrpc": "2.0", "id": "p", "method": "ping"})])
        .collect();
    assert!(h.line(&Value::Array(batch).to_string()).is_empty());
    // Each thing is a megabyte: forty of them are forty megabytes, in one answer the client may never read.
    let big = "x".repeat(1 << 20);
    let fetches = std::mem::take(&mut h.fetches);
    let mut out = vec![];
    for (ticket, _) in fetches {
        out.extend(h.fetched(ticket, Harness::ok(&big)));
    }
    assert_eq!(out.len(), 1, "one answer for the batch");
    let bytes = out[0].to_string().len();
    let cap = bb_core::limits::BATCH_ANSWER_BYTES;
    assert!(bytes <= cap, "{bytes} bytes, past the cap of {cap}");
    let items = out[0].as_array().unwrap();
    assert_eq!(items.len(), 41, "every request is answered");
    let left_out: Vec<&Value> = items.iter().filter(|m| m["result"]["isError"] == true).collect();
    let whole = items.iter().filter(|m| m["result"]["content"][0]["text"].as_str().is_some_and(|t| t.len() >= 1 << 20));
    assert_eq!(whole.count() + left_out.len(), 40);
    assert_eq!(left_out.len(), 25, "fifteen megabytes fit under sixteen");
    let words = left_out[0]["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        words.starts_with("This answer (about 1 MB) was left out: the answers of one batch may take at most 16 MB"),
        "{words}"
    );
    assert!(items.iter().any(|m| m["id"] == "p" && m["result"] == json!({})), "a small answer still fits");
}
