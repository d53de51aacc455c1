//! Per-person Bitbucket credentials: each session's requests carry its own token, and only its own.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod common;

use std::sync::{Arc, Mutex};

use bb_core::FetchOutcome;
use bb_drive::{Bitbucket, Cancel};
use bb_http::{HttpOptions, PersonalToken};
use common::{INITIALIZE, Req, initialize_with, request, start};
use serde_json::json;

const HEADER: &str = "X-Bitbucket-Token";

/// A Bitbucket stand-in that answers with the identity the token belongs to, and records each token.
fn identity_fetch(seen: Arc<Mutex<Vec<Option<String>>>>) -> Arc<dyn Bitbucket> {
    Arc::new(move |_: bb_core::FetchRequest, person: Option<&PersonalToken>, _: &Cancel| {
        let token = person.map(|p| p.secret().to_owned());
        seen.lock().unwrap().push(token.clone());
        let who = match token.as_deref() {
            Some("token-of-alice") => "alice",
            Some("token-of-bob") => "bob",
            Some(_) => "stranger",
            None => "operator",
        };
        FetchOutcome::response(200, format!("you are {who}"))
    })
}

fn options() -> HttpOptions {
    HttpOptions { per_user_token_header: Some(HEADER.into()), ..HttpOptions::default() }
}

fn who_am_i(addr: std::net::SocketAddr, session: &str, token: &str) -> String {
    let a = Req::post(request("tools/call", json!({"name": "get_thing", "arguments": {"id": 1}})))
        .session(session)
        .header(HEADER, token)
        .send(addr);
    assert_eq!(a.status, 200, "{a:?}");
    a.json()["result"]["content"][0]["text"].as_str().unwrap().to_owned()
}

#[test]
fn two_sessions_with_different_tokens_never_see_each_others_identity() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = start(options(), identity_fetch(Arc::clone(&seen)));
    let alice = initialize_with(s.addr, &[(HEADER, "token-of-alice")]);
    let bob = initialize_with(s.addr, &[(HEADER, "token-of-bob")]);
    for _ in 0..5 {
        assert_eq!(who_am_i(s.addr, &alice, "token-of-alice"), "you are alice");
        assert_eq!(who_am_i(s.addr, &bob, "token-of-bob"), "you are bob");
    }
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 10);
    assert_eq!(seen.iter().filter(|t| t.as_deref() == Some("token-of-alice")).count(), 5);
    assert_eq!(seen.iter().filter(|t| t.as_deref() == Some("token-of-bob")).count(), 5);
    // Neither token is ever logged.
    assert!(!s.logs.lock().unwrap().iter().any(|l| l.contains("token-of")));
}

#[test]
fn a_session_refuses_another_persons_token_and_initialize_needs_one() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = start(options(), identity_fetch(Arc::clone(&seen)));
    let missing = Req::post(INITIALIZE).send(s.addr);
    assert_eq!(missing.status, 400);
    assert!(missing.json()["error"]["message"].as_str().unwrap().contains(HEADER));
    let alice = initialize_with(s.addr, &[(HEADER, "token-of-alice")]);
    let body = request("tools/call", json!({"name": "get_thing", "arguments": {"id": 1}}));
    let stolen = Req::post(body.clone()).session(&alice).header(HEADER, "token-of-bob").send(s.addr);
    assert_eq!(stolen.status, 403);
    assert!(!stolen.body.contains("token-of"));
    assert_eq!(Req::post(body).session(&alice).send(s.addr).status, 403);
    assert!(seen.lock().unwrap().is_empty());
}

#[test]
fn without_the_mode_requests_use_the_operators_credentials() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = start(HttpOptions::default(), identity_fetch(Arc::clone(&seen)));
    let id = common::initialize(s.addr);
    assert_eq!(who_am_i(s.addr, &id, "token-of-alice"), "you are operator");
    assert_eq!(*seen.lock().unwrap(), vec![None]);
}
