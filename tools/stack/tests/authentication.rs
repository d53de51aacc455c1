//! Authentication: bearer, basic, anonymous and wrong credentials.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod common;
use common::*;

#[test]
fn a_request_without_credentials_gets_401_with_bitbucket_error_json() {
    let stack = start();
    let r = send(stack.addr, "GET", "/rest/api/latest/projects", None, None).unwrap();
    assert_eq!(r.status, 401);
    let e = &r.json()["errors"][0];
    assert_eq!(e["exceptionName"], "com.atlassian.bitbucket.AuthorisationException");
    assert!(e["message"].as_str().unwrap().contains("logged in"));
}

#[test]
fn a_wrong_token_or_password_gets_401() {
    let stack = start();
    let r = send(stack.addr, "GET", "/rest/api/latest/projects", Some("Bearer nope"), None).unwrap();
    assert_eq!(r.status, 401);
    assert_eq!(
        r.json()["errors"][0]["exceptionName"],
        "com.atlassian.bitbucket.auth.IncorrectPasswordAuthenticationException"
    );
    let basic = format!("Basic {}", bb_stack::auth::encode_base64(b"alice:wrong"));
    assert_eq!(send(stack.addr, "GET", "/rest/api/latest/projects", Some(&basic), None).unwrap().status, 401);
}

#[test]
fn bearer_and_basic_credentials_are_accepted_and_name_the_user() {
    let stack = start();
    let r = get(&stack, "/rest/api/latest/projects");
    assert_eq!(r.status, 200);
    assert_eq!(r.header("X-AUSERNAME"), Some("alice"));
    let basic = format!("Basic {}", bb_stack::auth::encode_base64(b"bob:bob-password"));
    let r = send(stack.addr, "GET", "/rest/api/latest/projects", Some(&basic), None).unwrap();
    assert_eq!(r.status, 200);
    assert_eq!(r.header("X-AUSERNAME"), Some("bob"));
}

#[test]
fn the_token_option_replaces_the_default_users_token() {
    let stack =
        bb_stack::Stack::start(bb_stack::StackConfig { token: Some("my-token".into()), ..Default::default() }).unwrap();
    assert_eq!(stack.token, "my-token");
    assert_eq!(
        send(stack.addr, "GET", "/rest/api/latest/projects", Some("Bearer my-token"), None).unwrap().status,
        200
    );
}

#[test]
fn an_anonymous_avatar_request_gets_the_default_image() {
    let stack = start();
    let anon = send(stack.addr, "GET", "/users/bob/avatar.png?s=16", None, None).unwrap();
    let authed = get(&stack, "/users/bob/avatar.png?s=16");
    assert_eq!(anon.status, 200);
    assert_eq!(authed.status, 200);
    assert_eq!(authed.header("Content-Type"), Some("image/png"));
    assert_ne!(anon.body, authed.body, "the user's own colour needs credentials");
}

#[test]
fn a_context_path_prefixes_every_bitbucket_path() {
    let stack =
        bb_stack::Stack::start(bb_stack::StackConfig { context_path: "/bitbucket".into(), ..Default::default() })
            .unwrap();
    assert!(stack.base_url.ends_with("/bitbucket"));
    assert_eq!(get(&stack, "/bitbucket/rest/api/latest/projects").status, 200);
    assert_eq!(get(&stack, "/rest/api/latest/projects").status, 404);
}
