//! Credentials: a token or basic authentication is sent; a wrong one comes back as Bitbucket's 401; no secret
//! ever appears in an error detail or in debug output.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod io_support;

use bb_bitbucket::Client;
use bb_bitbucket::options::{Auth, Secret};
use bb_core::{Credential, FetchErrorKind};
use bb_drive::{Bitbucket, Cancel, PersonalToken};
use io_support::*;
use serde_json::json;
use std::time::Duration;

const WRONG: &str = "wrong-token-0123456789";

#[test]
fn a_wrong_token_gets_bitbucket_s_401_and_is_not_retried() {
    let stack = stack();
    let bb = client(&stack, |c| c.auth = Auth::Token(Secret::new(WRONG)));
    let ctl = control_client(&stack, |_| {});
    let r = response(bb.fetch(get(PR1), None, &Cancel::new()));
    assert_eq!(r.status, 401);
    let body = String::from_utf8_lossy(&r.body);
    assert!(body.contains("errors") && !body.contains(WRONG), "{body}");
    assert_eq!(Control::new(&ctl).count(&format!("GET {PR1}")), 1);
}

#[test]
fn no_error_detail_or_debug_output_holds_the_token() {
    let stack = stack();
    let bb = client(&stack, |c| {
        c.auth = Auth::Token(Secret::new(WRONG));
        c.timeout = Duration::from_millis(200);
    });
    let ctl = control_client(&stack, |_| {});
    let mut details = Vec::new();
    for fault in [json!({ "kind": "hang" }), json!({ "kind": "truncate" })] {
        Control::new(&ctl).fault(fault);
        details.push(failure(bb.fetch(get(PR1), None, &Cancel::new())).detail);
    }
    let gone = Client::new(bb_bitbucket::options::BitbucketConfig {
        base_url: "http://127.0.0.1:9".into(),
        ..bb.config().clone()
    })
    .unwrap();
    let e = failure(gone.fetch(get(PR1), None, &Cancel::new()));
    assert_eq!(e.kind, FetchErrorKind::Unreachable);
    details.push(e.detail);
    details.push(format!("{bb:?}"));
    for d in &details {
        assert!(!d.contains(WRONG), "{d}");
        assert!(!d.to_ascii_lowercase().contains("bearer"), "{d}");
    }
}

#[test]
fn basic_authentication_works_and_its_password_never_shows() {
    let stack = stack();
    let ctl = control_client(&stack, |_| {});
    let users = Control::new(&ctl).info()["users"].clone();
    let alice = users.as_array().unwrap().iter().find(|u| u["slug"] == "alice").unwrap();
    let password = alice["password"].as_str().unwrap().to_string();
    let bb = client(&stack, |c| c.auth = Auth::Basic { user: "alice".into(), password: Secret::new(password.clone()) });
    assert_eq!(response(bb.fetch(get(PR1), None, &Cancel::new())).status, 200);
    assert!(!format!("{bb:?}").contains(&password));
    let wrong = client(&stack, |c| c.auth = Auth::Basic { user: "alice".into(), password: Secret::new("not-it") });
    assert_eq!(response(wrong.fetch(get(PR1), None, &Cancel::new())).status, 401);
}

#[test]
fn an_answer_names_the_kind_of_credential_its_request_carried() {
    let stack = stack();
    let kind = |bb: &Client| response(bb.fetch(get(PR1), None, &Cancel::new())).credential;
    assert_eq!(kind(&client(&stack, |c| c.auth = Auth::Token(Secret::new(WRONG)))), Credential::Token);
    let basic = client(&stack, |c| c.auth = Auth::Basic { user: "alice".into(), password: Secret::new("not-it") });
    assert_eq!(kind(&basic), Credential::Password);
    assert_eq!(kind(&client(&stack, |c| c.auth = Auth::Anonymous)), Credential::Anonymous);
    let bb = client(&stack, |_| {});
    let own = response(bb.fetch_as(get(PR1), &PersonalToken::new(WRONG), (1, bb_drive::Lane::Call), &Cancel::new()));
    assert_eq!((own.status, own.credential), (401, Credential::PersonalToken));
}
