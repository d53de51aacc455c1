//! Bitbucket's OAuth 2.0 provider in the stand-in: an incoming link, a person's consent, the code exchanged once
//! with its PKCE verifier, the access token accepted as that person, a refresh that rotates, and a revocation that
//! ends both tokens.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use bb_stack::auth::encode_base64;
use bb_stack::exchange::{Request, Response};
use bb_stack::grants::Link;
use bb_stack::oauth::s256;
use bb_stack::world::World;
use serde_json::Value;

const CALLBACK: &str = "https://bb.example.com/oauth/callback";
const VERIFIER: &str = "the-verifier-of-a-test-0123456789-abcdefghijklmnop";

fn world() -> World {
    let mut w = World::from_default_seed().unwrap();
    w.model.oauth.links.insert("bb".into(), Link { secret: "s3cret".into(), redirect_uri: CALLBACK.into() });
    w
}

fn basic(w: &World, slug: &str) -> String {
    let u = &w.model.users[slug];
    format!("Basic {}", encode_base64(format!("{slug}:{}", u.password).as_bytes()))
}

fn location(r: &Response) -> String {
    assert_eq!(r.status, 302, "{}", String::from_utf8_lossy(&r.body));
    r.headers.iter().find(|(k, _)| k == "Location").map(|(_, v)| v.clone()).unwrap()
}

fn form(w: &mut World, path: &str, body: &str, auth: Option<&str>) -> Response {
    let mut req = Request::new("POST", path).with_header("Content-Type", "application/x-www-form-urlencoded");
    if let Some(a) = auth {
        req = req.with_header("Authorization", a);
    }
    req.body = body.as_bytes().to_vec();
    bb_stack::routes::serve(w, &req)
}

/// Carol consents; the code Bitbucket sends bb back with.
fn code(w: &mut World) -> String {
    let target = format!(
        "/rest/oauth2/latest/authorize?client_id=bb&redirect_uri={CALLBACK}&response_type=code&scope=REPO_READ&state=st&code_challenge={}&code_challenge_method=S256",
        s256(VERIFIER)
    );
    let anonymous = bb_stack::routes::serve(w, &Request::new("GET", &target));
    assert_eq!(anonymous.status, 401, "a person logs in to Bitbucket first");
    let login = basic(w, "carol");
    let page = bb_stack::routes::serve(w, &Request::new("GET", &target).with_header("Authorization", &login));
    assert_eq!(page.status, 200);
    let html = String::from_utf8(page.body).unwrap();
    let consent = html.split("name=\"consent\" value=\"").nth(1).unwrap().split('"').next().unwrap().to_owned();
    let to =
        location(&form(w, "/rest/oauth2/latest/authorize", &format!("consent={consent}&decision=allow"), Some(&login)));
    assert!(to.starts_with(&format!("{CALLBACK}?code=")) && to.ends_with("&state=st"), "{to}");
    to.split("code=").nth(1).unwrap().split('&').next().unwrap().to_owned()
}

fn token(w: &mut World, body: &str) -> (u16, Value) {
    let r = form(w, "/rest/oauth2/latest/token", &format!("{body}&client_id=bb&client_secret=s3cret"), None);
    (r.status, r.body_json())
}

fn me(w: &mut World, access: &str) -> u16 {
    let req =
        Request::new("GET", "/rest/api/latest/users?limit=1").with_header("Authorization", &format!("Bearer {access}"));
    bb_stack::routes::serve(w, &req).status
}

#[test]
fn a_code_is_exchanged_once_with_its_verifier_for_tokens_that_act_as_the_person() {
    let mut w = world();
    let c = code(&mut w);
    let (status, wrong) =
        token(&mut w, &format!("grant_type=authorization_code&code={c}&redirect_uri={CALLBACK}&code_verifier=nope"));
    assert_eq!((status, wrong["error"].as_str()), (400, Some("invalid_grant")));
    let c = code(&mut w);
    let exchange = format!("grant_type=authorization_code&code={c}&redirect_uri={CALLBACK}&code_verifier={VERIFIER}");
    let (status, t) = token(&mut w, &exchange);
    assert_eq!(status, 200, "{t}");
    assert_eq!(t["token_type"], "bearer");
    assert_eq!(t["expires_in"], 3600);
    let access = t["access_token"].as_str().unwrap().to_owned();
    let req =
        Request::new("GET", "/rest/api/latest/projects").with_header("Authorization", &format!("Bearer {access}"));
    let r = bb_stack::routes::serve(&mut w, &req);
    assert!(r.headers.contains(&("X-AUSERNAME".into(), "carol".into())), "{:?}", r.headers);
    assert_eq!(token(&mut w, &exchange).0, 400, "a code is single-use");
    let (status, e) = token(&mut w, "grant_type=authorization_code&code=x&client_secret=wrong");
    assert_eq!((status, e["error"].as_str()), (401, Some("invalid_client")), "the first client_secret counts");
}

#[test]
fn a_refresh_rotates_the_tokens_and_a_revocation_ends_them_both() {
    let mut w = world();
    let c = code(&mut w);
    let (_, t) = token(
        &mut w,
        &format!("grant_type=authorization_code&code={c}&redirect_uri={CALLBACK}&code_verifier={VERIFIER}"),
    );
    let refresh = t["refresh_token"].as_str().unwrap().to_owned();
    let (status, t2) = token(&mut w, &format!("grant_type=refresh_token&refresh_token={refresh}"));
    assert_eq!(status, 200, "{t2}");
    assert_eq!(token(&mut w, &format!("grant_type=refresh_token&refresh_token={refresh}")).0, 400, "rotated");
    let access = t2["access_token"].as_str().unwrap().to_owned();
    assert_eq!(me(&mut w, &access), 200);
    assert_eq!(w.model.oauth.expire("carol"), 1);
    assert_eq!(me(&mut w, &access), 401, "expired");
    let (_, t3) =
        token(&mut w, &format!("grant_type=refresh_token&refresh_token={}", t2["refresh_token"].as_str().unwrap()));
    let access = t3["access_token"].as_str().unwrap().to_owned();
    assert_eq!(me(&mut w, &access), 200);
    assert_eq!(w.model.oauth.revoke("carol"), 1);
    assert_eq!(me(&mut w, &access), 401);
    let (status, e) =
        token(&mut w, &format!("grant_type=refresh_token&refresh_token={}", t3["refresh_token"].as_str().unwrap()));
    assert_eq!((status, e["error"].as_str()), (400, Some("invalid_grant")));
}

#[test]
fn a_redirect_uri_other_than_the_links_is_refused_without_a_redirect() {
    let mut w = world();
    let login = basic(&w, "carol");
    let req = Request::new(
        "GET",
        "/rest/oauth2/latest/authorize?client_id=bb&redirect_uri=https://evil.example/cb&response_type=code",
    )
    .with_header("Authorization", &login);
    let r = bb_stack::routes::serve(&mut w, &req);
    assert_eq!(r.status, 400);
    assert!(!r.headers.iter().any(|(k, _)| k == "Location"));
}
