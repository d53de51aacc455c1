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
    /// Whether dave logs in at Bitbucket, not alice.
    dave: AtomicBool,
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
        if url.contains("unreachable") {
            return Err("it did not answer within 3 s".into());
        }
        Ok(json!({ "client_id": url, "redirect_uris": [REDIRECT], "client_name": "A client" }).to_string().into_bytes())
    }
}

impl FakeProvider {
    fn tokens(&self) -> Tokens {
        let n = self.issued.fetch_add(1, Ordering::SeqCst);
        let who = if self.dave.load(Ordering::SeqCst) { "-dave" } else { "" };
        Tokens { access: format!("bbat-{n}{who}"), refresh: Some(format!("bbrt-{n}")), expires_in_s: 3600 }
    }
}

/// Bitbucket's REST: a token `bbat-…` is alice's (`bbat-…-dave`, dave's), unless it is in `dead`.
fn bitbucket(dead: Arc<Mutex<Vec<String>>>) -> Arc<dyn Bitbucket> {
    Arc::new(move |_: FetchRequest, person: Option<&PersonalToken>, _: &Cancel| {
        let t = person.map(PersonalToken::secret).unwrap_or_default();
        if t.starts_with("bbat-") && !dead.lock().unwrap().iter().any(|d| d == t) {
            let FetchOutcome::Response(r) = FetchOutcome::response(200, "[]") else { unreachable!() };
            let who = if t.ends_with("-dave") { "dave".to_owned() } else { "alice".to_owned() };
            FetchOutcome::Response(FetchResponse { user: Some(who), ..r })
        } else {
            FetchOutcome::response(401, "{}")
        }
    })
}

struct World {
    authority: Arc<Authority>,
    provider: Arc<FakeProvider>,
    dead: Arc<Mutex<Vec<String>>>,
    /// The person's browser's cookies for bb.
    jar: Mutex<Vec<(String, String)>>,
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
        consent_key: [9; 32],
        access_ttl_ms: ACCESS_TTL_MS,
    };
    World {
        authority: Authority::new(options, bitbucket(dead.clone()), Logger::new(None), None),
        provider,
        dead,
        jar: Mutex::default(),
    }
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
        Next::Consent(_) => panic!("expected a redirect, got the consent page"),
    }
}

/// The value of the consent page's hidden field `name`.
fn field(html: &str, name: &str) -> String {
    let start = format!("name=\"{name}\" value=\"");
    let from = html.find(&start).unwrap() + start.len();
    html[from..].split('"').next().unwrap().to_owned()
}

impl World {
    fn register(&self) -> String {
        self.register_at(0)
    }

    fn register_at(&self, now: u64) -> String {
        let body = json!({ "redirect_uris": [REDIRECT], "client_name": "test" }).to_string();
        self.authority.register(body.as_bytes(), now).unwrap()["client_id"].as_str().unwrap().to_owned()
    }

    fn cookies(&self) -> Vec<(String, String)> {
        self.jar.lock().unwrap().clone()
    }

    /// The browser keeps what bb set (and forgets what it removed).
    fn keep(&self, step: Step) -> Next {
        let mut jar = self.jar.lock().unwrap();
        for c in &step.cookies {
            let (pair, attributes) = c.split_once(';').unwrap();
            let (name, value) = pair.split_once('=').unwrap();
            jar.retain(|(n, _)| n != name);
            if !attributes.contains("Max-Age=0;") {
                jar.push((name.to_owned(), value.to_owned()));
            }
        }
        step.next
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
        let step = self.authority.authorize(&q(&pairs), &self.cookies(), now).unwrap();
        self.keep(step)
    }

    /// The person answers bb's consent page.
    fn answer(&self, html: &str, decision: &str, now: u64) -> Next {
        let form = q(&[("login", &field(html, "login")), ("token", &field(html, "token")), ("decision", decision)]);
        let step = self.authority.consent(&form, &self.cookies(), now).unwrap();
        self.keep(step)
    }

    /// From the authorize request to Bitbucket, the person allowing the client on bb's page when asked.
    fn to_bitbucket(&self, client: &str, extra: &[(&str, &str)], now: u64) -> String {
        match self.authorize(client, extra, now) {
            Next::Consent(html) => redirect(self.answer(&html, "allow", now)),
            other => redirect(other),
        }
    }

    /// Bitbucket sends the person back to bb.
    fn callback(&self, to_bitbucket: &str, now: u64) -> Next {
        let state = param(to_bitbucket, "state").unwrap();
        let step =
            self.authority.callback(&q(&[("code", "bb-code"), ("state", &state)]), &self.cookies(), now).unwrap();
        self.keep(step)
    }

    /// A whole login up to the client's code; the URL the client is sent back to.
    fn code(&self, client: &str, now: u64) -> String {
        let to_bitbucket = self.to_bitbucket(client, &[("resource", &format!("{PUBLIC}/mcp"))], now);
        redirect(self.callback(&to_bitbucket, now))
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
            None,
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
    let Next::Consent(html) = w.authorize(&client, &[], 0) else { panic!("bb asks the person first") };
    let to_bitbucket = redirect(w.answer(&html, "allow", 0));
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
        &[],
        0,
    );
    assert!(matches!(n, Ok(Step { next: Next::Page(400, _), .. })), "{n:?}");
    let unknown = w.authorize("no-such-client", &[], 0);
    assert!(matches!(unknown, Next::Page(400, _)));
}

#[test]
fn an_error_before_the_person_consents_is_shown_on_bbs_page_and_never_redirected() {
    let w = world();
    let client = w.register();
    let no_pkce = w.authority.authorize(
        &q(&[("client_id", &client), ("redirect_uri", REDIRECT), ("response_type", "code"), ("state", "s")]),
        &[],
        0,
    );
    assert!(matches!(no_pkce, Ok(Step { next: Next::Page(400, ref t), .. }) if t.contains("PKCE")), "{no_pkce:?}");
    let other = w.authorize(&client, &[("resource", "https://other.example/mcp")], 0);
    assert!(matches!(other, Next::Page(400, _)), "{other:?}");
    // The open redirect: an implicit-flow request with a registered phishing page gets bb's page.
    let body = json!({ "redirect_uris": ["https://phish.example/login"] }).to_string();
    let phish = w.authority.register(body.as_bytes(), 0).unwrap()["client_id"].as_str().unwrap().to_owned();
    let n = w.authority.authorize(
        &q(&[("client_id", &phish), ("redirect_uri", "https://phish.example/login"), ("response_type", "token")]),
        &[],
        0,
    );
    assert!(matches!(n, Ok(Step { next: Next::Page(400, _), .. })), "{n:?}");
    let long_state = "s".repeat(MAX_STATE + 1);
    let n = w.authority.authorize(
        &q(&[
            ("client_id", &client),
            ("redirect_uri", REDIRECT),
            ("response_type", "code"),
            ("code_challenge", CHALLENGE),
            ("code_challenge_method", "S256"),
            ("state", &long_state),
        ]),
        &[],
        0,
    );
    assert!(matches!(n, Ok(Step { next: Next::Page(400, ref t), .. }) if t.contains("state")), "{n:?}");
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
    let other = Authority::new(options, bitbucket(w.dead.clone()), Logger::new(None), None);
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
    let again = w.authority.token(&form, None, 10).unwrap();
    assert_ne!(again["access_token"], tokens["access_token"]);
    assert_eq!(w.authority.token(&form, None, 20).unwrap_err().error, "invalid_grant");
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
    assert_eq!(w.authority.token(&form, None, t + 10).unwrap_err().description, LOG_IN_AGAIN);
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
    for bad in [
        "http://evil.example/cb",
        "https://a.example/cb#frag",
        "javascript:alert(1)",
        "nope",
        "vbscript:x",
        "blob:https://x/y",
        "http://127.0.0.1:1@evil.example/cb",
        "http://localhost:80@evil.example/cb",
    ] {
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

#[test]
fn a_loopback_redirect_registered_without_a_port_works_on_the_port_chosen_at_login() {
    let w = world();
    let body = json!({ "redirect_uris": ["http://127.0.0.1/callback"] }).to_string();
    let client = w.authority.register(body.as_bytes(), 0).unwrap()["client_id"].as_str().unwrap().to_owned();
    let chosen = "http://127.0.0.1:54321/callback";
    let pairs = q(&[
        ("client_id", &client),
        ("redirect_uri", chosen),
        ("response_type", "code"),
        ("code_challenge", CHALLENGE),
        ("code_challenge_method", "S256"),
    ]);
    let step = w.authority.authorize(&pairs, &w.cookies(), 0).unwrap();
    let to_bitbucket = match w.keep(step) {
        Next::Consent(html) => redirect(w.answer(&html, "allow", 0)),
        other => redirect(other),
    };
    let back = redirect(w.callback(&to_bitbucket, 0));
    assert!(back.starts_with("http://127.0.0.1:54321/callback?code="), "{back}");
    let code = param(&back, "code").unwrap();
    let form = q(&[
        ("grant_type", "authorization_code"),
        ("client_id", &client),
        ("code", &code),
        ("redirect_uri", chosen),
        ("code_verifier", VERIFIER),
    ]);
    assert!(w.authority.token(&form, None, 0).is_ok());
    let other_host = w.authority.authorize(
        &q(&[("client_id", &client), ("redirect_uri", "http://localhost:54321/callback"), ("response_type", "code")]),
        &[],
        0,
    );
    assert!(matches!(other_host, Ok(Step { next: Next::Page(400, _), .. })), "localhost is not 127.0.0.1");
}

#[test]
fn a_replayed_refresh_token_revokes_every_token_of_its_login() {
    let w = world();
    let (client, tokens) = w.login(0);
    let stolen = tokens["refresh_token"].as_str().unwrap();
    let form = q(&[("grant_type", "refresh_token"), ("client_id", &client), ("refresh_token", stolen)]);
    let fresh = w.authority.token(&form, None, 10).unwrap();
    assert!(w.authority.authenticate(fresh["access_token"].as_str(), 20).is_ok());
    let replay = w.authority.token(&form, None, 30).unwrap_err();
    assert_eq!(replay.error, "invalid_grant");
    assert!(replay.description.contains("revoked"), "{}", replay.description);
    let e = w.authority.authenticate(fresh["access_token"].as_str(), 40).unwrap_err();
    assert_eq!((e.error, e.description.as_str()), (Some("invalid_token"), LOG_IN_AGAIN), "the successor is dead too");
    let successor = fresh["refresh_token"].as_str().unwrap();
    let form = q(&[("grant_type", "refresh_token"), ("client_id", &client), ("refresh_token", successor)]);
    assert_eq!(w.authority.token(&form, None, 50).unwrap_err().error, "invalid_grant");
    // Another login of the same person is another family: it lives on.
    let (_, other) = w.login(60);
    assert!(w.authority.authenticate(other["access_token"].as_str(), 70).is_ok());
}

#[test]
fn a_replayed_code_revokes_the_tokens_of_its_first_use() {
    let w = world();
    let client = w.register();
    let code = param(&w.code(&client, 0), "code").unwrap();
    let tokens = w.exchange(&client, &code, VERIFIER, 10).unwrap();
    assert!(w.authority.authenticate(tokens["access_token"].as_str(), 20).is_ok());
    let replay = w.exchange(&client, &code, VERIFIER, 30).unwrap_err();
    assert_eq!(replay.error, "invalid_grant");
    assert!(w.authority.authenticate(tokens["access_token"].as_str(), 40).is_err());
}

#[test]
fn every_token_answer_and_both_metadata_documents_say_the_scope() {
    let w = world();
    let (client, tokens) = w.login(0);
    assert_eq!(tokens["scope"], "REPO_READ");
    let form = q(&[
        ("grant_type", "refresh_token"),
        ("client_id", &client),
        ("refresh_token", tokens["refresh_token"].as_str().unwrap()),
        ("scope", "openid email profile"),
    ]);
    assert_eq!(w.authority.token(&form, None, 10).unwrap()["scope"], "REPO_READ");
    assert_eq!(w.authority.server_metadata()["scopes_supported"], json!(["REPO_READ"]));
    assert_eq!(w.authority.resource_metadata()["scopes_supported"], json!(["REPO_READ"]));
    let challenge = endpoints::challenge(&w.authority, &w.authority.authenticate(None, 0).unwrap_err());
    let header = challenge.headers()[hyper::header::WWW_AUTHENTICATE].to_str().unwrap().to_owned();
    assert!(header.contains("scope=\"REPO_READ\""), "{header}");
}

#[test]
fn a_confidential_client_is_issued_a_secret_and_must_send_it() {
    let w = world();
    for method in ["client_secret_post", "client_secret_basic"] {
        let body = json!({ "redirect_uris": [REDIRECT], "token_endpoint_auth_method": method }).to_string();
        let reg = w.authority.register(body.as_bytes(), 0).unwrap();
        assert_eq!(reg["token_endpoint_auth_method"], method);
        assert_eq!(reg["client_secret_expires_at"], 0);
        let (client, secret) = (reg["client_id"].as_str().unwrap(), reg["client_secret"].as_str().unwrap());
        let code = param(&w.code(client, 0), "code").unwrap();
        let mut form = q(&[
            ("grant_type", "authorization_code"),
            ("client_id", client),
            ("code", &code),
            ("redirect_uri", REDIRECT),
            ("code_verifier", VERIFIER),
        ]);
        let without = w.authority.token(&form, None, 10).unwrap_err();
        assert_eq!((without.status, without.error), (401, "invalid_client"));
        let wrong = (client.to_owned(), "not-the-secret".to_owned());
        assert_eq!(w.authority.token(&form, Some(&wrong), 10).unwrap_err().error, "invalid_client");
        // A refused client authentication spends no code: the client tries again with its secret.
        let tokens = if method == "client_secret_post" {
            form.push(("client_secret".into(), secret.into()));
            w.authority.token(&form, None, 10)
        } else {
            w.authority.token(&form, Some(&(client.to_owned(), secret.to_owned())), 10)
        };
        assert!(tokens.is_ok(), "{method}: {tokens:?}");
    }
    let body = json!({ "redirect_uris": [REDIRECT], "token_endpoint_auth_method": "private_key_jwt" }).to_string();
    assert_eq!(w.authority.register(body.as_bytes(), 0).unwrap_err().error, "invalid_client_metadata");
}

#[test]
fn a_client_first_seen_is_named_on_bbs_consent_page_before_anyone_goes_to_bitbucket() {
    let w = world();
    let body = json!({ "redirect_uris": ["https://attacker.example/cb"], "client_name": "Claude <b>" }).to_string();
    let client = w.authority.register(body.as_bytes(), 0).unwrap()["client_id"].as_str().unwrap().to_owned();
    let pairs = q(&[
        ("client_id", &client),
        ("redirect_uri", "https://attacker.example/cb"),
        ("response_type", "code"),
        ("code_challenge", CHALLENGE),
        ("code_challenge_method", "S256"),
    ]);
    let Next::Consent(html) = w.keep(w.authority.authorize(&pairs, &[], 0).unwrap()) else { panic!("asked first") };
    assert!(html.contains("<p class=\"to\">attacker.example</p>"), "{html}");
    assert!(html.contains("“Claude &lt;b&gt;”"));
    // Deny: back to the client with access_denied, and the login is over.
    let Next::Redirect(denied) = w.answer(&html, "deny", 0) else { panic!("sent back") };
    assert!(denied.starts_with("https://attacker.example/cb?error=access_denied"), "{denied}");
    assert!(matches!(w.answer(&html, "allow", 0), Next::Page(400, _)), "a denied login cannot be allowed after");
}

#[test]
fn the_consent_form_and_bitbuckets_callback_count_only_from_the_browser_that_began_the_login() {
    let w = world();
    let client = w.register();
    let Next::Consent(html) = w.authorize(&client, &[], 0) else { panic!("asked first") };
    // A page elsewhere makes another browser post the form (CSRF): no cookie, or another one.
    let form = q(&[("login", &field(&html, "login")), ("token", &field(&html, "token")), ("decision", "allow")]);
    let forged = w.authority.consent(&form, &[], 0).unwrap();
    assert!(matches!(forged.next, Next::Page(403, _)), "{forged:?}");
    let other = q(&[(consent::BROWSER_COOKIE, "another-browser-0123456789012345678901234567")]);
    assert!(matches!(w.authority.consent(&form, &other, 0).unwrap().next, Next::Page(403, _)));
    let bad_token = q(&[("login", &field(&html, "login")), ("token", "x"), ("decision", "allow")]);
    assert!(matches!(w.authority.consent(&bad_token, &w.cookies(), 0).unwrap().next, Next::Page(403, _)));
    let to_bitbucket = redirect(w.answer(&html, "allow", 0));
    // The attacker's browser comes back from Bitbucket with this login's state: nothing is given.
    let state = param(&to_bitbucket, "state").unwrap();
    let elsewhere = w.authority.callback(&q(&[("code", "bb-code"), ("state", &state)]), &[], 0).unwrap();
    assert!(matches!(elsewhere.next, Next::Page(400, _)), "{elsewhere:?}");
}

#[test]
fn a_login_not_allowed_on_bbs_page_gets_no_code() {
    let w = world();
    let client = w.register();
    let Next::Consent(html) = w.authorize(&client, &[], 0) else { panic!("asked first") };
    // Straight to the callback with the login's id, skipping the consent.
    let login = field(&html, "login");
    let skipped = w.authority.callback(&q(&[("code", "bb-code"), ("state", &login)]), &w.cookies(), 0).unwrap();
    assert!(matches!(skipped.next, Next::Page(400, _)), "{skipped:?}");
}

#[test]
fn a_consent_is_remembered_for_its_person_client_and_redirect_only() {
    let w = world();
    let client = w.register();
    let _ = w.code(&client, 0);
    // The same browser, the same client: straight to Bitbucket.
    assert!(matches!(w.authorize(&client, &[], 10), Next::Redirect(_)));
    // Another client in the same browser is asked about.
    let other = w.register();
    assert!(matches!(w.authorize(&other, &[], 10), Next::Consent(_)));
    // The remembered consent is alice's: dave, logging in in this browser, is not given a code.
    w.provider.dave.store(true, Ordering::SeqCst);
    let to_bitbucket = redirect(w.authorize(&client, &[], 20));
    let Next::Page(403, text) = w.callback(&to_bitbucket, 20) else { panic!("dave is not alice") };
    assert!(text.contains("alice") && text.contains("dave"), "{text}");
    // The remembered consent is forgotten: dave is asked, and his consent is his.
    assert!(matches!(w.authorize(&client, &[], 30), Next::Consent(_)));
    let back = w.code(&client, 40);
    assert!(param(&back, "code").is_some());
    // A browser that never consented is asked, however many did.
    let n = w.authority.authorize(
        &q(&[
            ("client_id", &client),
            ("redirect_uri", REDIRECT),
            ("response_type", "code"),
            ("code_challenge", CHALLENGE),
            ("code_challenge_method", "S256"),
        ]),
        &[],
        50,
    );
    assert!(matches!(n, Ok(Step { next: Next::Consent(_), .. })));
}

#[test]
fn a_metadata_document_that_cannot_be_read_is_said_with_where_from_and_why() {
    let w = world();
    let n = w.authority.authorize(&q(&[("client_id", "https://unreachable.example/client.json")]), &[], 0);
    let e = n.unwrap_err();
    assert_eq!(e.status, 400);
    assert!(
        e.description.contains("metadata document at https://unreachable.example/client.json"),
        "{}",
        e.description
    );
    assert!(e.description.contains("did not answer within 3 s"), "{}", e.description);
}

#[test]
fn a_full_quota_of_logins_begun_refuses_a_newcomer_and_keeps_every_grant() {
    let w = world();
    let (_, tokens) = w.login(0);
    let client = w.register();
    let mut refused = None;
    for i in 0..store::MAX_ANONYMOUS_RECORDS + 1 {
        match w.authority.authorize(
            &q(&[
                ("client_id", &client),
                ("redirect_uri", REDIRECT),
                ("response_type", "code"),
                ("code_challenge", CHALLENGE),
                ("code_challenge_method", "S256"),
            ]),
            &[],
            i as u64,
        ) {
            Ok(_) => {}
            Err(e) => {
                refused = Some(e);
                break;
            }
        }
    }
    let Some(e) = refused else { panic!("the quota is reached") };
    assert_eq!((e.status, e.error), (503, "temporarily_unavailable"));
    assert!(w.authority.authenticate(tokens["access_token"].as_str(), 100).is_ok(), "no grant was pushed out");
}
