//! The audit trail's records as the core emits them ([`Output::Audit`]): one per tool call, before
//! its answer; a refusal before the tool runs is `denied` with its reason; an unknown tool is no
//! record; a call cancelled is `cancelled`; while the trail fails to be written, calls are refused.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use bb_core::testing::test_catalogue;
use bb_core::{AuditEvent, ExposureOptions, Input, Output, Server, ServerConfig, SessionId};
use serde_json::{Value, json};

/// What came out for one input: records and messages, in order.
enum Out {
    Record(Box<AuditEvent>),
    Message(Value),
}

fn feed(server: &mut Server, session: SessionId, message: Value, now: u64) -> Vec<Out> {
    let bytes = message.to_string();
    server.handle(Input::Message { session, bytes: bytes.as_bytes(), tag: now }, now);
    let mut out = Vec::new();
    while let Some(o) = server.poll_output() {
        match o {
            Output::Audit { record, .. } => out.push(Out::Record(record)),
            Output::Send { message, .. } => out.push(Out::Message(serde_json::from_slice(&message).unwrap())),
            _ => {}
        }
    }
    out
}

fn server() -> (Server, SessionId) {
    serve(&test_catalogue(), ExposureOptions::everything(), None)
}

/// A server over `catalogue` with `options` and `scope`, its trail on, one session initialized.
fn serve(catalogue: &bb_core::Catalogue, options: ExposureOptions, scope: Option<&[&str]>) -> (Server, SessionId) {
    let exposed = catalogue.expose(&options).unwrap();
    let mut config = ServerConfig::new(exposed, "test");
    config.audit = true;
    config.scope = scope.map(|s| std::sync::Arc::new(bb_core::Scope::parse(s.iter().copied()).unwrap()));
    let mut server = Server::new(config, bb_core::Caches::new());
    let session = server.open();
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
        "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    feed(&mut server, session, init, 1);
    (server, session)
}

fn call(id: u64, name: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": arguments}})
}

#[test]
fn each_call_is_recorded_before_its_answer_and_an_unknown_tool_is_not() {
    let (mut server, session) = server();
    let out = feed(&mut server, session, call(1, "echo", json!({"text": "hi", "password": "p4ss"})), 10);
    let [Out::Record(r), Out::Message(m)] = out.as_slice() else { panic!("a record, then the answer") };
    // An argument the tool does not take is refused; the record keeps it, its secret removed.
    assert_eq!((r.tool.as_str(), r.status, &r.call), ("echo", "error", &json!(1)));
    assert!(r.error.as_deref().unwrap().starts_with("Invalid arguments"), "{r:?}");
    assert_eq!(r.arguments["password"], "[removed]");
    assert_eq!(r.client, "t 1");
    assert_eq!(m["id"], 1);
    let out = feed(&mut server, session, call(3, "echo", json!({"text": "hi"})), 12);
    let [Out::Record(r), Out::Message(_)] = out.as_slice() else { panic!("a record, then the answer") };
    assert_eq!((r.status, r.error.as_deref()), ("ok", None));
    let out = feed(&mut server, session, call(2, "no_such_tool", json!({})), 11);
    assert!(out.iter().all(|o| matches!(o, Out::Message(_))), "an unknown tool is no record");
}

#[test]
fn a_client_that_cannot_confirm_is_denied_with_the_reason_and_the_sentence_it_read() {
    let (mut server, session) = server();
    let out = feed(&mut server, session, call(1, "merge_thing", json!({"id": 7})), 10);
    let [Out::Record(r), Out::Message(_)] = out.as_slice() else { panic!("a record, then the answer") };
    assert_eq!(r.status, "denied");
    assert_eq!(r.reason.as_deref(), Some("the client cannot show a confirmation"));
    assert!(r.error.as_deref().unwrap().contains("cannot show a confirmation"), "{r:?}");
}

#[test]
fn a_call_cancelled_is_recorded_and_while_the_trail_fails_calls_are_refused() {
    let (mut server, session) = server();
    feed(&mut server, session, call(1, "get_thing", json!({"id": 7})), 10);
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}});
    let out = feed(&mut server, session, cancel, 25);
    let [Out::Record(r)] = out.as_slice() else { panic!("one record") };
    assert_eq!((r.status, r.duration_ms, r.pr), ("cancelled", 15, None));

    server.set_audit_failing(true);
    let out = feed(&mut server, session, call(2, "echo", json!({"text": "hi"})), 30);
    let [Out::Record(r), Out::Message(m)] = out.as_slice() else { panic!("a record, then the answer") };
    assert_eq!(r.status, "denied");
    assert_eq!(r.reason.as_deref(), Some("the audit trail could not be written"));
    assert!(m["result"]["content"][0]["text"].as_str().unwrap().contains("could not be recorded"), "{m}");
}

/// A server over the standard catalogue with `options` and `scope`.
fn governed(options: ExposureOptions, scope: Option<&[&str]>) -> (Server, SessionId) {
    serve(&bb_core::Catalogue::standard(), options, scope)
}

fn denial(out: &[Out]) -> &AuditEvent {
    out.iter()
        .find_map(|o| match o {
            Out::Record(r) => Some(r.as_ref()),
            Out::Message(_) => None,
        })
        .expect("a record")
}

#[test]
fn refusals_by_read_only_the_write_gate_and_the_scope_are_recorded_as_denied() {
    let read_only = ExposureOptions { read_only: true, ..ExposureOptions::default() };
    let (mut server, session) = governed(read_only, None);
    let out = feed(
        &mut server,
        session,
        call(1, "add_pr_comment", json!({"project": "BB", "repo": "api", "pr_id": 1, "text": "x"})),
        10,
    );
    let r = denial(&out);
    assert_eq!(
        (r.tool.as_str(), r.status, r.reason.as_deref()),
        ("add_pr_comment", "denied", Some("read-only (--read-only)"))
    );

    let (mut server, session) = governed(ExposureOptions::default(), None);
    let out = feed(
        &mut server,
        session,
        call(2, "merge_pull_request", json!({"project": "BB", "repo": "api", "pr_id": 1, "version": 0})),
        10,
    );
    let r = denial(&out);
    assert_eq!((r.status, r.reason.as_deref()), ("denied", Some("the write gate (--allow-writes)")));
    let Some(Out::Message(m)) = out.last() else { panic!("an answer") };
    assert_eq!(m["error"]["code"], -32602, "{m}");

    let (mut server, session) = governed(ExposureOptions::default(), Some(&["OPS/infra"]));
    let out = feed(
        &mut server,
        session,
        call(3, "get_pull_request", json!({"project": "BB", "repo": "api", "pr_id": 1})),
        10,
    );
    let r = denial(&out);
    assert_eq!((r.status, r.reason.as_deref()), ("denied", Some("outside the scope")));
    assert_eq!((r.project.as_deref(), r.repo.as_deref()), (Some("BB"), Some("api")));
}
