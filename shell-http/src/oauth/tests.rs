//! The login's rules, driven with explicit time against a Bitbucket and a provider made up here.

#![allow(clippy::unwrap_used, clippy::panic)]

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use bb_core::FetchResponse;

use super::store::MemoryStore;
use super::*;

const PUBLIC: &str = "https://bb.example.com";
const REDIRECT: &str = "http://127.0.0.1:5555/callback";
const VERIFIER: &str = "the-verifier-of-a-test-0123456789-abcdefghijklmnop";
const CHALLENGE: &str = "BVvy4CD-OvCFbvT0e0Ez4cvXutBtG3b4Q43biCWs3YQ";

/// Bitbucket's token endpoint: `bb-code` is the one good code; refreshes work until `revoked`.
#[derive(Default)]
struct FakeProvider {
    revoked: AtomicBool,
    issued: AtomicU64,
}

impl Provider for FakeProvider {
    fn exchange(&self, code: &str, verifier: &str, redirect_uri: &str) -> Result<Tokens, ProviderError> {
        assert_eq!(redirect_uri, format!("{PUBLIC}/oauth/callback"));
        assert!(pkce::verifies(verifier, &pkce::challenge_of(verifier)));
        match code {
            "bb-code" => Ok(self.tokens()),
            _ => Err(ProviderError::Refused("invalid_grant".into())),
        }
    }

    fn refresh(&self, _: &str) -> Result<Tokens, ProviderError> {
        if self.revoked.load(Ordering::SeqCst) {
            return Err(ProviderError::Refused("invalid_grant".into()));
        }
        Ok(self.tokens())
    }

    fn client_metadata(&self, url: &str) -> Result<Vec<u8>, String> {
        Ok(json!({ "client_id": url, "redirect_uris": [REDIRECT], "client_name": "A client" }).to_string().into_bytes())
    }
}

impl FakeProvider {
    fn tokens(&self) -> Tokens {
        let n = self.issued.fetch_add(1, Ordering::SeqCst);
        Tokens { access: format!("bbat-{n}"), refresh: Some(format!("bbrt-{n}")), expires_in_s: 3600 }
    }
}

/// Bitbucket's REST: a token `bbat-…` is alice's, unless its number is in `dead`.
fn bitbucket(dead: Arc<Mutex<Vec<String>>>) -> Arc<dyn Bitbucket> {
    Arc::new(move |_: FetchRequest, person: Option<&PersonalToken>, _: &Cancel| {
        let t = person.map(PersonalToken::secret).unwrap_or_default();
        if t.starts_with("bbat-") && !dead.lock().unwrap().iter().any(|d| d == t) {
            let FetchOutcome::Response(r) = FetchOutcome::response(200, "[]") else { unreachable!() };
            FetchOutcome::Response(FetchResponse { user: Some("alice".into()), ..r })
        } else {
            FetchOutcome::response(401, "{}")
        }
    })
}

struct World {
    authority: Arc<Authority>,
    provider: Arc<FakeProvider>,
    dead: Arc<Mutex<Vec<String>>>,
}

fn world() -> World {
    let provider = Arc::new(FakeProvider::default());
    let dead = Arc::new(Mutex::new(Vec::new()));
    let options = OAuthOptions {
        public_url: PUBLIC.into(),
        bitbucket_url: "https://bitbucket.example.com".into(),
        client_id: "bb-link".into(),
        scope: "REPO_READ".into(),
        provider: provider.clone(),
        store: Arc::new(MemoryStore::new()),
    };
    World { authority: Authority::new(options, bitbucket(dead.clone()), Logger::new(None)), provider, dead }
}

fn q(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
}

fn param(url: &str, name: &str) -> Option<String> {
    let query = url.split_once('?')?.1;
    endpoints::parse_form(query).into_iter().find(|(k, _)| k == name).map(|(_, v)| v)
}

fn redirect(n: Next) -> String {
    match n {
        Next::Redirect(u) => u,
        Next::Page(s, t) => panic!("expected a redirect, got {s}: {t}"),
    }
}

impl World {
    fn register(&self) -> String {
        self.register_at(0)
    }

    fn register_at(&self, now: u64) -> String {
        let body = json!({ "redirect_uris": [REDIRECT], "client_name": "test" }).to_string();
        self.authority.register(body.as_bytes(), now).unwrap()["client_id"].as_str().unwrap().to_owned()
    }

    fn authorize(&self, client: &str, extra: &[(&str, &str)], now: u64) -> Next {
        let mut pairs = vec![
            ("client_id", client),
            ("redirect_uri", REDIRECT),
            ("response_type", "code"),
            ("code_challenge", CHALLENGE),
            ("code_challenge_method", "S256"),
            ("state", "client-state"),
        ];
        pairs.extend_from_slice(extra);
        self.authority.authorize(&q(&pairs), now).unwrap()
    }

    /// A whole login up to the client's code; the URL the client is sent back to.
    fn code(&self, client: &str, now: u64) -> String {
        let to_bitbucket = redirect(self.authorize(client, &[("resource", &format!("{PUBLIC}/mcp"))], now));
        let state = param(&to_bitbucket, "state").unwrap();
        redirect(self.authority.callback(&q(&[("code", "bb-code"), ("state", &state)]), now).unwrap())
    }

    fn exchange(&self, client: &str, code: &str, verifier: &str, now: u64) -> Result<Value, OAuthError> {
        self.authority.token(
            &q(&[
                ("grant_type", "authorization_code"),
                ("client_id", client),
                ("code", code),
                ("redirect_uri", REDIRECT),
                ("code_verifier", verifier),
            ]),
            now,
        )
    }

    fn login(&self, now: u64) -> (String, Value) {
        let client = self.register_at(now);
        let back = self.code(&client, now);
        let tokens = self.exchange(&client, &param(&back, "code").unwrap(), VERIFIER, now).unwrap();
        (client, tokens)
    }
}

#[test]
fn a_login_sends_the_person_to_bitbucket_with_bbs_own_state_and_pkce_and_back_with_a_code_state_and_iss() {
    let w = world();
    let client = w.register();
    let to_bitbucket = redirect(w.authorize(&client, &[], 0));
    assert!(to_bitbucket.starts_with("https://bitbucket.example.com/rest/oauth2/latest/authorize?"));
    assert_eq!(param(&to_bitbucket, "client_id").as_deref(), Some("bb-link"));
    assert_eq!(param(&to_bitbucket, "redirect_uri").as_deref(), Some("https://bb.example.com/oauth/callback"));
    assert_eq!(param(&to_bitbucket, "code_challenge_method").as_deref(), Some("S256"));
    assert_ne!(param(&to_bitbucket, "code_challenge").as_deref(), Some(CHALLENGE), "bb's own PKCE, not the client's");
    assert_ne!(param(&to_bitbucket, "state").as_deref(), Some("client-state"), "bb's own state");
    let back = w.code(&client, 0);
    assert!(back.starts_with(REDIRECT));
    assert_eq!(param(&back, "state").as_deref(), Some("client-state"));
    assert_eq!(param(&back, "iss").as_deref(), Some(PUBLIC));
    assert!(!back.contains("bbat-"), "no Bitbucket token reaches the client");
}

#[test]
fn a_code_is_exchanged_once_with_the_right_verifier_and_never_again() {
    let w = world();
    let client = w.register();
    let code = param(&w.code(&client, 0), "code").unwrap();
    let wrong = w.exchange(&client, &code, "the-verifier-of-a-test-0123456789-abcdefghijklmnoq", 10).unwrap_err();
    assert_eq!(wrong.error, "invalid_grant");
    assert!(wrong.description.contains("PKCE"), "{}", wrong.description);
    assert_eq!(
        w.exchange(&client, &code, VERIFIER, 10).unwrap_err().error,
        "invalid_grant",
        "a failed try spends the code"
    );

    let code = param(&w.code(&client, 0), "code").unwrap();
    let tokens = w.exchange(&client, &code, VERIFIER, 10).unwrap();
    assert_eq!(tokens["token_type"], "Bearer");
    assert!(!tokens.to_string().contains("bbat-"), "bb's own tokens, never Bitbucket's");
    let replay = w.exchange(&client, &code, VERIFIER, 20).unwrap_err();
    assert_eq!((replay.error, replay.status), ("invalid_grant", 400));
}

#[test]
fn a_code_expires_after_a_minute() {
    let w = world();
    let client = w.register();
    let code = param(&w.code(&client, 1_000), "code").unwrap();
    assert_eq!(w.exchange(&client, &code, VERIFIER, 1_000 + CODE_TTL_MS).unwrap_err().error, "invalid_grant");
}

#[test]
fn a_redirect_uri_the_client_did_not_register_gets_a_page_and_no_redirect() {
    let w = world();
    let client = w.register();
    let n = w.authority.authorize(
        &q(&[("client_id", &client), ("redirect_uri", "https://evil.example/cb"), ("response_type", "code")]),
        0,
    );
    assert!(matches!(n, Ok(Next::Page(400, _))), "{n:?}");
    let unknown = w.authorize("no-such-client", &[], 0);
    assert!(matches!(unknown, Next::Page(400, _)));
}

#[test]
fn a_request_without_s256_pkce_or_for_another_resource_is_sent_back_with_its_error() {
    let w = world();
    let client = w.register();
    let no_pkce = w.authority.authorize(
        &q(&[("client_id", &client), ("redirect_uri", REDIRECT), ("response_type", "code"), ("state", "s")]),
        0,
    );
    let back = redirect(no_pkce.unwrap());
    assert_eq!(param(&back, "error").as_deref(), Some("invalid_request"));
    assert_eq!(param(&back, "state").as_deref(), Some("s"));
    let other = redirect(w.authorize(&client, &[("resource", "https://other.example/mcp")], 0));
    assert_eq!(param(&other, "error").as_deref(), Some("invalid_target"));
    assert_eq!(param(&other, "iss").as_deref(), Some(PUBLIC));
}

#[test]
fn bbs_token_lets_its_person_in_as_their_bitbucket_user_until_it_expires() {
    let w = world();
    let (_, tokens) = w.login(0);
    let token = tokens["access_token"].as_str().unwrap();
    let person = w.authority.authenticate(Some(token), 1_000).unwrap();
    assert_eq!(person.user(), Some("alice"));
    assert!(person.secret().starts_with("bbat-"), "the session acts with the grant's Bitbucket token");
    let late = w.authority.authenticate(Some(token), ACCESS_TTL_MS).unwrap_err();
    assert_eq!(late.error, Some("invalid_token"));
    assert_eq!(w.authority.authenticate(None, 0).unwrap_err().error, None);
    assert_eq!(w.authority.authenticate(Some("made-up"), 0).unwrap_err().error, Some("invalid_token"));
}

#[test]
fn a_token_for_another_resource_is_refused() {
    let w = world();
    let (_, tokens) = w.login(0);
    // The same store behind a bb at another public URL: its resource is another.
    let options = OAuthOptions { public_url: "https://other.example.com".into(), ..w.authority.options.clone() };
    let other = Authority::new(options, bitbucket(w.dead.clone()), Logger::new(None));
    let e = other.authenticate(tokens["access_token"].as_str(), 0).unwrap_err();
    assert_eq!(e.error, Some("invalid_token"));
    assert!(e.description.contains("another resource"), "{}", e.description);
}

#[test]
fn a_refresh_token_is_used_once_and_gives_a_new_pair() {
    let w = world();
    let (client, tokens) = w.login(0);
    let refresh = tokens["refresh_token"].as_str().unwrap();
    let form = q(&[("grant_type", "refresh_token"), ("client_id", &client), ("refresh_token", refresh)]);
    let again = w.authority.token(&form, 10).unwrap();
    assert_ne!(again["access_token"], tokens["access_token"]);
    assert_eq!(w.authority.token(&form, 20).unwrap_err().error, "invalid_grant");
}

#[test]
fn bb_refreshes_the_bitbucket_token_itself_shortly_before_it_expires() {
    let w = world();
    let (_, tokens) = w.login(0);
    let token = tokens["access_token"].as_str().unwrap();
    let first = w.authority.authenticate(Some(token), 0).unwrap();
    let later = w.authority.authenticate(Some(token), 3_600_000 - REFRESH_AHEAD_MS).unwrap();
    assert_ne!(first.secret(), later.secret(), "renewed");
    assert_eq!(later.user(), Some("alice"));
}

#[test]
fn a_revoked_grant_tells_the_person_to_log_in_again_and_ends_every_token_bb_gave_for_it() {
    let w = world();
    // The grant's handle reads the clock (a read thread calls it): this test lives at today's time.
    let t = bb_drive::now_ms();
    let (client, tokens) = w.login(t);
    let token = tokens["access_token"].as_str().unwrap();
    let person = w.authority.authenticate(Some(token), t).unwrap();
    // The person revokes bb in their Bitbucket profile: its token and refresh token die.
    w.dead.lock().unwrap().push(person.secret().to_owned());
    w.provider.revoked.store(true, Ordering::SeqCst);
    let told = person.grant().unwrap().refused(person.secret()).unwrap_err();
    assert_eq!(told, LOG_IN_AGAIN);
    let e = w.authority.authenticate(Some(token), t + 10).unwrap_err();
    assert_eq!((e.error, e.description.as_str()), (Some("invalid_token"), LOG_IN_AGAIN));
    let refresh = tokens["refresh_token"].as_str().unwrap();
    let form = q(&[("grant_type", "refresh_token"), ("client_id", &client), ("refresh_token", refresh)]);
    assert_eq!(w.authority.token(&form, t + 10).unwrap_err().description, LOG_IN_AGAIN);
}

#[test]
fn a_refusal_for_want_of_permission_keeps_the_token() {
    let w = world();
    let t = bb_drive::now_ms();
    let (_, tokens) = w.login(t);
    let person = w.authority.authenticate(tokens["access_token"].as_str(), t).unwrap();
    assert_eq!(person.grant().unwrap().refused(person.secret()).unwrap(), person.secret());
}

#[test]
fn a_client_id_metadata_document_is_a_client() {
    let w = world();
    let back = w.code("https://client.example/meta.json", 0);
    assert!(param(&back, "code").is_some());
}

#[test]
fn registration_refuses_redirect_uris_that_could_leak_a_code() {
    let w = world();
    for bad in ["http://evil.example/cb", "https://a.example/cb#frag", "javascript:alert(1)", "nope"] {
        let body = json!({ "redirect_uris": [bad] }).to_string();
        assert_eq!(w.authority.register(body.as_bytes(), 0).unwrap_err().error, "invalid_redirect_uri", "{bad}");
    }
    for good in ["https://a.example/cb", "http://localhost:33418/cb", "cursor://anysphere.cursor-mcp/oauth/callback"] {
        let body = json!({ "redirect_uris": [good] }).to_string();
        assert!(w.authority.register(body.as_bytes(), 0).is_ok(), "{good}");
    }
    assert_eq!(w.authority.register(b"[", 0).unwrap_err().error, "invalid_client_metadata");
}

#[test]
fn the_public_url_must_be_https_off_loopback() {
    assert_eq!(OAuthOptions::check_public_url("https://bb.example.com/").unwrap(), "https://bb.example.com");
    assert_eq!(OAuthOptions::check_public_url("http://127.0.0.1:8080").unwrap(), "http://127.0.0.1:8080");
    assert!(OAuthOptions::check_public_url("http://bb.example.com").is_err());
    assert!(OAuthOptions::check_public_url("https://bb.example.com/?x").is_err());
}
