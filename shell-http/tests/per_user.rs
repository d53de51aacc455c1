//! Per-person Bitbucket credentials: each session's requests carry its own token, and only its own.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod common;

use std::net::Ipv4Addr;
use std::sync::{Arc, Mutex};

use bb_core::FetchOutcome;
use bb_drive::{Bitbucket, Cancel};
use bb_http::{HttpOptions, PersonalToken};
use common::{INITIALIZE, Req, initialize_with, request, start};
use serde_json::json;

const HEADER: &str = "X-Bitbucket-Token";

/// The request bb makes to ask Bitbucket whether it accepts a person's token.
const TOKEN_CHECK: &str = "/rest/api/latest/users";

/// A Bitbucket stand-in that answers with the identity the token belongs to, and records each
/// token of a request other than the token check.
fn identity_fetch(seen: Arc<Mutex<Vec<Option<String>>>>) -> Arc<dyn Bitbucket> {
    Arc::new(move |req: bb_core::FetchRequest, person: Option<&PersonalToken>, _: &Cancel| {
        let token = person.map(|p| p.secret().to_owned());
        if req.path != TOKEN_CHECK {
            seen.lock().unwrap().push(token.clone());
        }
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

/// A Bitbucket that refuses `junk-not-a-token` (401) and answers `flaky` with 502, and counts the
/// token checks it gets for each token.
fn checking_fetch(checks: Arc<Mutex<Vec<String>>>) -> Arc<dyn Bitbucket> {
    Arc::new(move |req: bb_core::FetchRequest, person: Option<&PersonalToken>, _: &Cancel| {
        let token = person.map(|p| p.secret().to_owned()).unwrap_or_default();
        if req.path == TOKEN_CHECK {
            checks.lock().unwrap().push(token.clone());
        }
        match token.as_str() {
            "junk-not-a-token" => FetchOutcome::response(
                401,
                r#"{"errors":[{"message":"Authentication failed. Please check your credentials and try again."}]}"#,
            ),
            "flaky" => FetchOutcome::response(502, "Bad Gateway"),
            t if t.starts_with("junk-") => {
                FetchOutcome::response(401, r#"{"errors":[{"message":"Authentication failed."}]}"#)
            }
            _ => FetchOutcome::response(200, r#"{"values":[]}"#),
        }
    })
}

#[test]
fn a_token_bitbucket_refuses_starts_no_session_and_bitbucket_is_asked_once() {
    let checks = Arc::new(Mutex::new(Vec::new()));
    let s = start(options(), checking_fetch(Arc::clone(&checks)));
    for _ in 0..3 {
        let a = Req::post(INITIALIZE).header(HEADER, "junk-not-a-token").send(s.addr);
        assert_eq!(a.status, 403, "{a:?}");
        assert_eq!(a.header("mcp-session-id"), None);
        assert_eq!(a.json()["id"], 0);
        let message = a.json()["error"]["message"].as_str().unwrap().to_owned();
        assert!(message.contains(HEADER) && message.contains("did not accept") && message.contains("401"), "{message}");
        assert!(!a.body.contains("junk-not-a-token"));
    }
    initialize_with(s.addr, &[(HEADER, "token-of-alice")]);
    initialize_with(s.addr, &[(HEADER, "token-of-alice")]);
    let checks = checks.lock().unwrap();
    assert_eq!(*checks, ["junk-not-a-token", "token-of-alice"], "each verdict is remembered");
    let logs = s.logs.lock().unwrap();
    assert!(logs.iter().any(|l| l.contains("did not accept the person's token")), "{logs:?}");
    assert!(!logs.iter().any(|l| l.contains("junk-not-a-token") || l.contains("token-of-alice")));
}

#[test]
fn a_flood_of_made_up_tokens_from_one_address_asks_bitbucket_a_few_times_then_waits_and_a_known_person_still_gets_in() {
    let checks = Arc::new(Mutex::new(Vec::new()));
    let s = start(options(), checking_fetch(Arc::clone(&checks)));
    initialize_with(s.addr, &[(HEADER, "token-of-alice")]);
    let mut statuses = Vec::new();
    for i in 0..100 {
        statuses.push(Req::post(INITIALIZE).header(HEADER, &format!("junk-{i}")).send(s.addr).status);
    }
    let asked = checks.lock().unwrap().len() - 1;
    assert_eq!(asked, 10, "the address's allowance of questions Bitbucket refuses");
    assert_eq!(statuses.iter().filter(|&&st| st == 403).count(), 10);
    let waited = Req::post(INITIALIZE).header(HEADER, "junk-more").send(s.addr);
    assert_eq!(waited.status, 429, "{waited:?}");
    assert!(waited.header("retry-after").is_some());
    assert!(waited.json()["error"]["message"].as_str().unwrap().contains("try again in"));
    // A person whose token Bitbucket accepted is remembered: no question, no wait.
    initialize_with(s.addr, &[(HEADER, "token-of-alice")]);
    assert_eq!(checks.lock().unwrap().len(), 11);
}

#[test]
fn when_bitbucket_cannot_judge_a_token_initialize_gets_503_and_it_is_not_asked_again_for_a_few_seconds() {
    let checks = Arc::new(Mutex::new(Vec::new()));
    let s = start(options(), checking_fetch(Arc::clone(&checks)));
    for _ in 0..2 {
        let a = Req::post(INITIALIZE).header(HEADER, "flaky").send(s.addr);
        assert_eq!(a.status, 503, "{a:?}");
        assert!(a.json()["error"]["message"].as_str().unwrap().contains("Bitbucket answered 502"));
        assert!(a.header("retry-after").is_some());
    }
    assert_eq!(checks.lock().unwrap().len(), 1, "the failed lookup is kept briefly (persons.rs tests its end)");
}

#[test]
fn a_person_at_their_share_of_sessions_ends_their_own_session_idle_longest() {
    let limits = bb_http::Limits { max_sessions_per_person: Some(1), ..bb_http::Limits::default() };
    let s = start(HttpOptions { limits, ..options() }, identity_fetch(Arc::new(Mutex::new(Vec::new()))));
    let alice_first = initialize_with(s.addr, &[(HEADER, "token-of-alice")]);
    let bob = initialize_with(s.addr, &[(HEADER, "token-of-bob")]);
    let alice_second = initialize_with(s.addr, &[(HEADER, "token-of-alice")]);
    let ping = |id: &str, token: &str| {
        Req::post(request("ping", json!({}))).session(id).header(HEADER, token).send(s.addr).status
    };
    assert_eq!(ping(&alice_first, "token-of-alice"), 404);
    assert_eq!(ping(&bob, "token-of-bob"), 200);
    assert_eq!(ping(&alice_second, "token-of-alice"), 200);
}

#[test]
fn made_up_tokens_from_ten_addresses_never_keep_out_a_person_from_an_address_that_sent_none() {
    let checks = Arc::new(Mutex::new(Vec::new()));
    let s = start(options(), checking_fetch(Arc::clone(&checks)));
    // Ten addresses each send made-up tokens until bb no longer asks Bitbucket about them: each is
    // told that tokens from its own address were refused.
    for last in 2..=11 {
        let from = Ipv4Addr::new(127, 0, 0, last);
        let mut waited = None;
        // Its allowance is 10: the 11th is refused unless the test ran for more than 6 s meanwhile.
        for i in 0..20 {
            let a = Req::post(INITIALIZE).header(HEADER, &format!("junk-{last}-{i}")).send_from(from, s.addr);
            if a.status == 429 {
                waited = Some(a);
                break;
            }
            assert_eq!(a.status, 403, "{a:?}");
        }
        let a = waited.expect("an address that sends only made-up tokens is soon told to wait");
        let message = a.json()["error"]["message"].as_str().unwrap().to_owned();
        assert!(message.contains("from this address lately") && message.contains("try again in"), "{message}");
    }
    // Seven people log in for the first time from an address that sent no made-up token.
    for i in 0..7 {
        let a = Req::post(INITIALIZE).header(HEADER, &format!("token-of-person-{i}")).send(s.addr);
        assert_eq!(a.status, 200, "person {i}: {a:?}");
    }
    // And from an eleventh address.
    let a = Req::post(INITIALIZE).header(HEADER, "token-of-person-7").send_from(Ipv4Addr::new(127, 0, 0, 12), s.addr);
    assert_eq!(a.status, 200, "{a:?}");
}
