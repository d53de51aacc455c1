//! Log in with Bitbucket (`--oauth`): bb is the MCP resource server and, for MCP clients, an
//! authorization server facade whose identity and grant is Bitbucket Data Center's own OAuth 2.0
//! provider (docs/reference/oauth.md: "Bitbucket Data Center's OAuth 2.0 provider", and a heading per
//! rule bb follows as an authorization server).
//!
//! ```text
//!  client ── GET /mcp (no token) ─────────────▶ 401 WWW-Authenticate: Bearer resource_metadata=…
//!         ── GET /.well-known/oauth-protected-resource/mcp, /.well-known/oauth-authorization-server
//!         ── POST /oauth/register (RFC 7591), or a Client ID Metadata Document URL as client_id
//!  person ── GET /oauth/authorize?…&code_challenge&resource ─▶ bb's consent page, naming the client and
//!            where it sends them (a consent this browser's person gave this client before: skipped)
//!         ── POST /oauth/consent (Allow) ─▶ 303 Bitbucket's /rest/oauth2/latest/authorize
//!                                  (bb's own state and PKCE towards Bitbucket: a Pending record)
//!         ── Bitbucket's consent ─▶ GET /oauth/callback?code&state: bb exchanges Bitbucket's code, asks who
//!            the person is, keeps the Grant, ─▶ 303 client's redirect_uri?code&state&iss  (a Code, 60 s, once)
//!  client ── POST /oauth/token (code + verifier) ─▶ bb's own access token (1 h) and refresh token (30 d);
//!            each refresh gives a new pair, and a code or refresh token used twice ends its grant
//!         ── POST /mcp, Bearer bb's token ─▶ the person's session, acting with the grant's Bitbucket token
//! ```
//!
//! bb never passes a client's token to Bitbucket and never gives a client a Bitbucket token. It
//! refreshes a grant's Bitbucket token itself (ahead of its expiry at a request, or when Bitbucket
//! refuses it); when Bitbucket refuses the refresh, the grant has ended (the person revoked bb in
//! their Bitbucket profile, or it expired): every token bb gave for it is refused from then on with a
//! sentence that tells the person to log in again.
//!
//! Every method takes the time; the store ([`store`]) is where replicas meet; the HTTP answers are
//! `endpoints`. Secrets (codes, tokens, Bitbucket's tokens, bb's client secret) never reach a log, an
//! answer's text or an error.

mod admission;
mod consent;
mod endpoints;
mod pkce;
pub mod store;
mod uri;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use bb_core::{FetchOutcome, FetchRequest};
use bb_drive::{Bitbucket, Cancel, Grant, Logger, PersonalToken};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

pub(crate) use admission::{Admission, busy};
pub(crate) use endpoints::{challenge, is_oauth_path, serve};
use store::{Kind, Store, StoreError};

/// How long a code bb gives a client may wait to be exchanged.
pub const CODE_TTL_MS: u64 = 60_000;
/// How long an access token bb gives a client lives unless the operator says otherwise
/// (`BB_OAUTH_ACCESS_TTL`).
pub const ACCESS_TTL_MS: u64 = 60 * 60_000;
/// How long a refresh token bb gives a client lives (each use gives a new one).
pub const REFRESH_TTL_MS: u64 = 30 * 24 * 60 * 60_000;
/// How long a person may take at Bitbucket's consent.
pub const PENDING_TTL_MS: u64 = 10 * 60_000;
/// How long a grant and a registered client are kept unused (the store's time to live).
pub const GRANT_TTL_MS: u64 = 90 * 24 * 60 * 60_000;
/// A grant's Bitbucket token is refreshed when it has less than this left.
pub const REFRESH_AHEAD_MS: u64 = 5 * 60_000;

/// How a client may authenticate at the token endpoint (RFC 7591 §2).
const AUTH_METHODS: [&str; 3] = ["none", "client_secret_post", "client_secret_basic"];

/// The longest Client ID Metadata Document URL bb reads.
const MAX_CLIENT_ID_URL: usize = 512;

/// What a person whose login bb no longer knows reads.
const STALE: &str = "This login is unknown, was finished already or took too long. Start again from your MCP client.";

/// The sentence a person whose Bitbucket grant ended reads.
pub const LOG_IN_AGAIN: &str = "Your Bitbucket login for bb has ended (it was revoked in Bitbucket or it expired). \
                                Log in to bb again from your MCP client.";

/// What Bitbucket's token endpoint gave.
#[derive(Clone)]
pub struct Tokens {
    /// The access token.
    pub access: String,
    /// The refresh token, if Bitbucket gave one.
    pub refresh: Option<String>,
    /// Seconds the access token lives.
    pub expires_in_s: u64,
}

impl std::fmt::Debug for Tokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Tokens(<hidden>, expires in {} s)", self.expires_in_s)
    }
}

/// Why Bitbucket's token endpoint gave no tokens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProviderError {
    /// It refused (`invalid_grant` and the like): the code or grant is no good.
    Refused(String),
    /// It did not answer usefully; try again later.
    Unavailable(String),
}

/// Bitbucket's OAuth 2.0 provider as bb's client of it: the application makes these requests with
/// the incoming link's client id and secret (which bb-http never holds). Calls block.
pub trait Provider: Send + Sync + 'static {
    /// Exchanges Bitbucket's `code` (with bb's PKCE `verifier`) for tokens.
    fn exchange(&self, code: &str, verifier: &str, redirect_uri: &str) -> Result<Tokens, ProviderError>;
    /// Refreshes a grant's tokens.
    fn refresh(&self, refresh_token: &str) -> Result<Tokens, ProviderError>;
    /// The Client ID Metadata Document at `url` (an `https` URL), its bytes; `Err` says why not.
    fn client_metadata(&self, url: &str) -> Result<Vec<u8>, String>;
}

/// What the operator set for `--oauth`.
#[derive(Clone)]
pub struct OAuthOptions {
    /// bb's public URL as people's browsers and clients reach it (`--public-url`), without a
    /// trailing slash: the issuer; the resource is it plus `/mcp`.
    pub public_url: String,
    /// Bitbucket's base URL as people's browsers reach it (for its consent page).
    pub bitbucket_url: String,
    /// The incoming link's client id (`BB_OAUTH_CLIENT_ID`).
    pub client_id: String,
    /// The scopes bb asks Bitbucket for, space-separated (`REPO_READ`, or `REPO_WRITE` with writes).
    pub scope: String,
    /// Bitbucket's token endpoint, through the application.
    pub provider: Arc<dyn Provider>,
    /// Where logins live.
    pub store: Arc<dyn Store>,
    /// The key bb seals what it leaves in browsers with (remembered consents, the consent form's
    /// token): the same on every replica that shares the store.
    pub consent_key: [u8; 32],
    /// How long an access token bb gives a client lives ([`ACCESS_TTL_MS`] by default).
    pub access_ttl_ms: u64,
}

impl std::fmt::Debug for OAuthOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthOptions")
            .field("public_url", &self.public_url)
            .field("bitbucket_url", &self.bitbucket_url)
            .field("scope", &self.scope)
            .finish_non_exhaustive()
    }
}

impl OAuthOptions {
    /// Checks and normalizes the public URL: absolute, `https` unless the host is loopback, no
    /// userinfo, query or fragment; the trailing slash dropped.
    pub fn check_public_url(url: &str) -> Result<String, String> {
        uri::check_public_url(url)
    }

    /// The origin of bb's public URL: bb's own pages (the consent form) post from it.
    pub(crate) fn public_origin(&self) -> Option<String> {
        uri::origin_of(&self.public_url)
    }

    /// What bb may do in Bitbucket with the scope it asks for, in the consent page's words.
    fn access(&self) -> &'static str {
        if self.scope.split_whitespace().any(|s| s == "REPO_WRITE" || s.ends_with("_ADMIN")) {
            "read and change the repositories and pull requests you can reach in Bitbucket"
        } else {
            "read the repositories and pull requests you can reach in Bitbucket"
        }
    }
}

/// A registered client.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct ClientRecord {
    redirect_uris: Vec<String>,
    #[serde(default)]
    name: Option<String>,
    /// For a confidential client (RFC 7591 §2 `client_secret_post` or `client_secret_basic`): the
    /// key of the secret bb issued it, checked at the token endpoint.
    #[serde(default)]
    secret: Option<String>,
}

/// A login begun, keyed by bb's state towards Bitbucket.
#[derive(Serialize, Deserialize)]
struct PendingRecord {
    client_id: String,
    /// The redirect URI as the client sent it (a loopback one with the port it chose).
    redirect_uri: String,
    /// The registered redirect URI it matched: what a consent is remembered for.
    registered: String,
    state: Option<String>,
    challenge: String,
    resource: String,
    /// bb's own PKCE verifier towards Bitbucket.
    verifier: String,
    /// The key of the browser cookie the login was begun with: the consent and Bitbucket's
    /// callback must come from that browser.
    browser: String,
    /// Whether the person allowed this client on bb's page (or a remembered consent stands for it).
    consented: bool,
    /// The Bitbucket user a remembered consent was given by: the person who logs in must be them.
    remembered: Option<String>,
}

/// A code bb gave a client.
#[derive(Serialize, Deserialize)]
struct CodeRecord {
    grant: String,
    client_id: String,
    redirect_uri: String,
    challenge: String,
    resource: String,
}

/// An access or refresh token bb gave a client.
#[derive(Serialize, Deserialize)]
struct TokenRecord {
    grant: String,
    client_id: String,
    resource: String,
}

/// A code or refresh token that was used: the grant a second use ends.
#[derive(Serialize, Deserialize)]
struct SpentRecord {
    grant: String,
}

/// A person's Bitbucket grant.
#[derive(Clone, Serialize, Deserialize)]
struct GrantRecord {
    user: String,
    access: String,
    refresh: Option<String>,
    expires_at_ms: u64,
}

/// The longest `state` a client may send: a record's bytes are bounded, not only their count.
const MAX_STATE: usize = 1024;

/// How long a marker of a used code or refresh token is kept (a second use within it ends the grant).
const SPENT_TTL_MS: u64 = REFRESH_TTL_MS;

/// An OAuth error for a client (RFC 6749 §5.2): the status, the code, a sentence naming no secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct OAuthError {
    pub(crate) status: u16,
    pub(crate) error: &'static str,
    pub(crate) description: String,
}

fn refuse(error: &'static str, description: impl Into<String>) -> OAuthError {
    OAuthError { status: 400, error, description: description.into() }
}

fn unavailable(description: impl Into<String>) -> OAuthError {
    OAuthError { status: 503, error: "temporarily_unavailable", description: description.into() }
}

/// What an `/oauth/authorize` or `/oauth/callback` leads to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Next {
    /// A redirect to this URL.
    Redirect(String),
    /// A page for the person, with its status: nothing is trusted enough to redirect to.
    Page(u16, String),
    /// bb's consent page (HTML made by [`consent::page`]).
    Consent(String),
}

/// What a step of the login in the person's browser answers: where it leads, and the cookies bb
/// sets on the way (`Set-Cookie` values).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Step {
    pub(crate) next: Next,
    pub(crate) cookies: Vec<String>,
}

impl From<Next> for Step {
    fn from(next: Next) -> Step {
        Step { next, cookies: Vec::new() }
    }
}

/// Why a request to `/mcp` is not let in (a 401, or a 503 when the store or Bitbucket failed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Unauthorized {
    /// `invalid_token` for a token that is no good; `None` when none was sent.
    pub(crate) error: Option<&'static str>,
    pub(crate) description: String,
    pub(crate) status: u16,
}

/// bb's authorization server and resource server: the options, the store, the grants being refreshed.
pub(crate) struct Authority {
    options: OAuthOptions,
    /// Bitbucket, asked who a new grant's token names and whether a refused token still lives.
    bitbucket: Arc<dyn Bitbucket>,
    logger: Logger,
    /// One lock per grant being refreshed here, so two requests do not spend one refresh token.
    refreshing: Mutex<HashMap<String, Arc<Mutex<()>>>>,
    /// The audit trail, where each login is recorded (`event` `login`).
    audit: Option<bb_drive::AuditTrail>,
}

impl Authority {
    pub(crate) fn new(
        options: OAuthOptions,
        bitbucket: Arc<dyn Bitbucket>,
        logger: Logger,
        audit: Option<bb_drive::AuditTrail>,
    ) -> Arc<Authority> {
        Arc::new(Authority { options, bitbucket, logger, refreshing: Mutex::default(), audit })
    }

    pub(crate) fn issuer(&self) -> &str {
        &self.options.public_url
    }

    /// The resource bb's tokens are for: the MCP endpoint's public URL.
    pub(crate) fn resource(&self) -> String {
        format!("{}/mcp", self.options.public_url)
    }

    /// The scopes bb's tokens carry: the ones bb asks Bitbucket for (docs/reference/oauth.md
    /// "Granted scope in the token response").
    pub(crate) fn scopes(&self) -> Vec<&str> {
        self.options.scope.split_whitespace().collect()
    }

    /// Protected Resource Metadata (RFC 9728 §2), served only for the resource it describes
    /// (`/mcp`, docs/reference/oauth.md "Protected resource metadata location").
    pub(crate) fn resource_metadata(&self) -> Value {
        json!({
            "resource": self.resource(),
            "authorization_servers": [self.issuer()],
            "bearer_methods_supported": ["header"],
            "scopes_supported": self.scopes(),
            "resource_name": "bb (Bitbucket Data Center)",
        })
    }

    /// Authorization Server Metadata (RFC 8414 §2).
    pub(crate) fn server_metadata(&self) -> Value {
        let i = self.issuer();
        json!({
            "issuer": i,
            "authorization_endpoint": format!("{i}/oauth/authorize"),
            "token_endpoint": format!("{i}/oauth/token"),
            "registration_endpoint": format!("{i}/oauth/register"),
            "scopes_supported": self.scopes(),
            "response_types_supported": ["code"],
            "response_modes_supported": ["query"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": AUTH_METHODS,
            "client_id_metadata_document_supported": true,
            "authorization_response_iss_parameter_supported": true,
        })
    }

    fn put<T: Serialize>(&self, kind: Kind, key: &str, record: &T, ttl_ms: u64, now_ms: u64) -> Result<(), OAuthError> {
        let bytes = serde_json::to_vec(record).map_err(|e| unavailable(format!("bb could not keep a record: {e}")))?;
        self.options.store.put(kind, key, &bytes, ttl_ms, now_ms).map_err(|e| self.store_failed(&e))
    }

    fn read<T: for<'de> Deserialize<'de>>(
        &self,
        kind: Kind,
        key: &str,
        now_ms: u64,
        take: bool,
    ) -> Result<Option<T>, OAuthError> {
        let store = &self.options.store;
        let got = if take { store.take(kind, key, now_ms) } else { store.get(kind, key, now_ms) };
        match got.map_err(|e| self.store_failed(&e))? {
            None => Ok(None),
            // A record that does not read is as good as none (another version wrote it, or it was damaged).
            Some(bytes) => Ok(serde_json::from_slice(&bytes).ok()),
        }
    }

    fn store_failed(&self, why: &StoreError) -> OAuthError {
        match why {
            StoreError::Full(kind) => {
                let what = if *kind == Kind::Client { "registered clients" } else { "logins in progress" };
                OAuthError {
                    status: 503,
                    error: "temporarily_unavailable",
                    description: format!("bb holds as many {what} as it may right now; try again in a minute."),
                }
            }
            StoreError::Failed(why) => {
                self.logger.log(bb_core::Level::Warning, &format!("the login store failed: {why}"));
                unavailable("bb's login store did not answer; try again shortly.")
            }
        }
    }

    /// Dynamic client registration (RFC 7591 §3): `body` is the client's metadata. A client that
    /// asks to authenticate at the token endpoint (`client_secret_post`, `client_secret_basic`) is
    /// issued a secret, checked there (docs/reference/oauth.md "Dynamic client registration").
    pub(crate) fn register(&self, body: &[u8], now_ms: u64) -> Result<Value, OAuthError> {
        let meta: Value = serde_json::from_slice(body)
            .map_err(|_| refuse("invalid_client_metadata", "The registration must be a JSON object."))?;
        let uris: Vec<String> = match meta.get("redirect_uris").and_then(Value::as_array) {
            Some(a) if !a.is_empty() && a.len() <= 10 => a
                .iter()
                .map(|u| u.as_str().map(str::to_owned))
                .collect::<Option<_>>()
                .ok_or_else(|| refuse("invalid_redirect_uri", "redirect_uris must be strings."))?,
            _ => return Err(refuse("invalid_redirect_uri", "redirect_uris must list 1 to 10 redirect URIs.")),
        };
        for u in &uris {
            if let Some(why) = uri::refused_redirect(u) {
                return Err(refuse(
                    "invalid_redirect_uri",
                    format!(
                        "The redirect URI `{}` is not allowed: {why}. Use https, http on 127.0.0.1, [::1] or localhost, \
                         or an app's own reverse-domain scheme, without a fragment.",
                        clip(u)
                    ),
                ));
            }
        }
        let method = match meta.get("token_endpoint_auth_method") {
            None | Some(Value::Null) => "none",
            Some(m) => match m.as_str() {
                Some(m) if AUTH_METHODS.contains(&m) => m,
                _ => {
                    return Err(refuse(
                        "invalid_client_metadata",
                        "token_endpoint_auth_method must be none, client_secret_post or client_secret_basic.",
                    ));
                }
            },
        };
        let name = meta
            .get("client_name")
            .and_then(Value::as_str)
            .map(|n| n.chars().take(100).collect::<String>())
            .filter(|n| !n.trim().is_empty());
        let id = pkce::fresh().map_err(unavailable)?;
        let secret = if method == "none" { None } else { Some(pkce::fresh().map_err(unavailable)?) };
        let record = ClientRecord {
            redirect_uris: uris.clone(),
            name: name.clone(),
            secret: secret.as_deref().map(pkce::key_of),
        };
        self.put(Kind::Client, &id, &record, GRANT_TTL_MS, now_ms)?;
        let mut answer = json!({
            "client_id": id,
            "client_id_issued_at": now_ms / 1000,
            "redirect_uris": uris,
            "token_endpoint_auth_method": method,
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "scope": self.options.scope,
        });
        if let Some(n) = name {
            answer["client_name"] = Value::String(n);
        }
        if let Some(secret) = secret {
            answer["client_secret"] = Value::String(secret);
            answer["client_secret_expires_at"] = json!(0);
        }
        Ok(answer)
    }

    /// The client `client_id` names: a registered one, or the Client ID Metadata Document at that
    /// `https` URL (fetched, held to name itself, and kept for an hour). A document that cannot be
    /// read is said as such, with where from and why (docs/reference/oauth.md "Client ID Metadata
    /// Documents").
    fn client(&self, client_id: &str, now_ms: u64) -> Result<Option<ClientRecord>, OAuthError> {
        if !client_id.starts_with("https://") {
            if client_id.len() > 64 {
                return Ok(None);
            }
            return self.read(Kind::Client, client_id, now_ms, false);
        }
        let key = pkce::key_of(client_id);
        if let Some(c) = self.read(Kind::Client, &key, now_ms, false)? {
            return Ok(Some(c));
        }
        let unread = |why: &str| {
            self.logger.log(
                bb_core::Level::Notice,
                &format!("could not read the client metadata document at {}: {why}", clip(client_id)),
            );
            OAuthError {
                status: 400,
                error: "invalid_client",
                description: format!(
                    "bb could not read this client's metadata document at {}: {why}. Ask the client's maker, \
                     or register the client with bb instead.",
                    clip(client_id)
                ),
            }
        };
        if client_id.len() > MAX_CLIENT_ID_URL {
            return Err(unread("the address is longer than 512 bytes"));
        }
        let bytes = self.options.provider.client_metadata(client_id).map_err(|why| unread(&why))?;
        let doc = serde_json::from_slice::<Value>(&bytes).map_err(|_| unread("it is not JSON"))?;
        if doc.get("client_id").and_then(Value::as_str) != Some(client_id) {
            return Err(unread("its client_id is not the address it was read from"));
        }
        let uris: Vec<String> = doc
            .get("redirect_uris")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .filter(|u| uri::refused_redirect(u).is_none())
                    .take(10)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        if uris.is_empty() {
            return Err(unread("it lists no redirect URI bb allows"));
        }
        let name = doc.get("client_name").and_then(Value::as_str).map(|n| n.chars().take(100).collect());
        let record = ClientRecord { redirect_uris: uris, name, secret: None };
        self.put(Kind::Client, &key, &record, 60 * 60_000, now_ms)?;
        Ok(Some(record))
    }

    /// Where bb sends the person at Bitbucket for the login begun as `ours` with `verifier`.
    fn to_bitbucket(&self, ours: &str, verifier: &str) -> String {
        let o = &self.options;
        let callback = format!("{}/oauth/callback", o.public_url);
        with_query(
            &format!("{}/rest/oauth2/latest/authorize", o.bitbucket_url),
            &[
                ("client_id", &o.client_id),
                ("redirect_uri", &callback),
                ("response_type", "code"),
                ("scope", &o.scope),
                ("state", ours),
                ("code_challenge", &pkce::challenge_of(verifier)),
                ("code_challenge_method", "S256"),
            ],
            false,
        )
    }

    /// Where the login's cookies go.
    fn cookies(&self) -> consent::Scope {
        consent::Scope::of(&self.options.public_url)
    }

    /// `GET /oauth/authorize`: the client's request checked, then bb's consent page (or, when this
    /// browser's person consented to this client before, straight to Bitbucket). Every error before
    /// the person consents is a page of bb's, never a redirect: with open registration no redirect
    /// URI is trusted yet (docs/reference/oauth.md "Errors before consent are not redirected").
    pub(crate) fn authorize(
        &self,
        q: &[(String, String)],
        cookies: &[(String, String)],
        now_ms: u64,
    ) -> Result<Step, OAuthError> {
        let get = |k: &str| q.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
        let page = |text: &str| Ok(Next::Page(400, text.to_owned()).into());
        let client_id = get("client_id").unwrap_or_default();
        let Some(client) = self.client(client_id, now_ms)? else {
            return page("Unknown client: register it with bb first (its client_id is unknown).");
        };
        let redirect_uri = get("redirect_uri").unwrap_or_default();
        let Some(registered) = client.redirect_uris.iter().find(|r| uri::redirect_matches(r, redirect_uri)) else {
            return page("The redirect URI is not one this client registered; bb does not send you there.");
        };
        if get("response_type") != Some("code") {
            return page("The client asked for a response_type bb does not give: bb supports response_type=code only.");
        }
        let challenge = get("code_challenge").unwrap_or_default();
        if get("code_challenge_method") != Some("S256") || !pkce::is_challenge(challenge) {
            return page(
                "The client sent no PKCE challenge: it must send code_challenge with code_challenge_method=S256.",
            );
        }
        let resource = match get("resource") {
            None => self.resource(),
            Some(r) if same_resource(r, &self.resource()) => self.resource(),
            Some(_) => {
                return page(
                    "The client asked for a token for another resource: bb's are for its own MCP endpoint only.",
                );
            }
        };
        let state = get("state").map(str::to_owned);
        if state.as_ref().is_some_and(|s| s.len() > MAX_STATE) {
            return page("The client's state is longer than 1,024 bytes.");
        }
        let mut set = Vec::new();
        let browser = match cookie(cookies, consent::BROWSER_COOKIE).filter(|b| b.len() == 43) {
            Some(b) => b.to_owned(),
            None => {
                let fresh = pkce::fresh().map_err(unavailable)?;
                set.push(self.cookies().set_cookie(consent::BROWSER_COOKIE, &fresh, consent::CONSENT_TTL_S));
                fresh
            }
        };
        let remembered = cookie(cookies, &consent::cookie_name(client_id, registered))
            .and_then(|v| consent::open(&self.options.consent_key, v, client_id, registered, now_ms / 1000));
        let ours = pkce::fresh().map_err(unavailable)?;
        let verifier = pkce::fresh().map_err(unavailable)?;
        let pending = PendingRecord {
            client_id: client_id.to_owned(),
            redirect_uri: redirect_uri.to_owned(),
            registered: registered.clone(),
            state,
            challenge: challenge.to_owned(),
            resource,
            verifier: verifier.clone(),
            browser: pkce::key_of(&browser),
            consented: remembered.is_some(),
            remembered: remembered.clone(),
        };
        self.put(Kind::Pending, &pkce::key_of(&ours), &pending, PENDING_TTL_MS, now_ms)?;
        if remembered.is_some() {
            return Ok(Step { next: Next::Redirect(self.to_bitbucket(&ours, &verifier)), cookies: set });
        }
        let ask = consent::Ask {
            client_name: client.name,
            client_id: client_id.to_owned(),
            redirect_uri: redirect_uri.to_owned(),
            destination: uri::destination(redirect_uri),
            access: self.options.access(),
            token: consent::form_token(&self.options.consent_key, &ours, &browser),
            login: ours,
        };
        Ok(Step { next: Next::Consent(consent::page(&ask)), cookies: set })
    }

    /// `POST /oauth/consent`: the person's answer on bb's consent page, from the browser that
    /// asked. Allow sends them to Bitbucket; Deny sends them back to the client with
    /// `access_denied` and ends the login.
    pub(crate) fn consent(
        &self,
        form: &[(String, String)],
        cookies: &[(String, String)],
        now_ms: u64,
    ) -> Result<Step, OAuthError> {
        let get = |k: &str| form.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
        let login = get("login").unwrap_or_default();
        let Some(mut p) = self.read::<PendingRecord>(Kind::Pending, &pkce::key_of(login), now_ms, false)? else {
            return Ok(Next::Page(400, STALE.into()).into());
        };
        let browser = cookie(cookies, consent::BROWSER_COOKIE).unwrap_or_default();
        let token = consent::form_token(&self.options.consent_key, login, browser);
        if pkce::key_of(browser) != p.browser
            || !crate::secret::same_secret(get("token").unwrap_or_default().as_bytes(), token.as_bytes())
        {
            return Ok(Next::Page(
                403,
                "This answer did not come from the page bb showed in this browser; nothing was allowed. Start the login again from your MCP client.".into(),
            )
            .into());
        }
        match get("decision") {
            Some("allow") => {
                p.consented = true;
                let to = self.to_bitbucket(login, &p.verifier);
                self.put(Kind::Pending, &pkce::key_of(login), &p, PENDING_TTL_MS, now_ms)?;
                Ok(Next::Redirect(to).into())
            }
            Some("deny") => {
                let _ = self.options.store.delete(Kind::Pending, &pkce::key_of(login));
                let pairs = [
                    ("error", "access_denied"),
                    ("error_description", "The person did not allow this client."),
                    ("state", p.state.as_deref().unwrap_or_default()),
                    ("iss", self.issuer()),
                ];
                Ok(Next::Redirect(with_query(&p.redirect_uri, &pairs, p.state.is_none())).into())
            }
            _ => Ok(Next::Page(400, "Choose Allow or Deny.".into()).into()),
        }
    }

    /// `GET /oauth/callback`: Bitbucket sent the person back; bb takes the grant and gives the
    /// client a code (blocking: it asks Bitbucket), and remembers the person's consent to the client.
    pub(crate) fn callback(
        &self,
        q: &[(String, String)],
        cookies: &[(String, String)],
        now_ms: u64,
    ) -> Result<Step, OAuthError> {
        let get = |k: &str| q.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
        let Some(state) = get("state") else { return Ok(Next::Page(400, STALE.into()).into()) };
        let Some(p) = self.read::<PendingRecord>(Kind::Pending, &pkce::key_of(state), now_ms, true)? else {
            return Ok(Next::Page(400, STALE.into()).into());
        };
        let browser = cookie(cookies, consent::BROWSER_COOKIE).unwrap_or_default();
        if pkce::key_of(browser) != p.browser {
            return Ok(Next::Page(
                400,
                "This login was begun in another browser; nothing was given. Start it again from your MCP client."
                    .into(),
            )
            .into());
        }
        if !p.consented {
            return Ok(Next::Page(
                400,
                "This login was not allowed on bb's page. Start it again from your MCP client.".into(),
            )
            .into());
        }
        let back = |pairs: &[(&str, &str)]| {
            let mut all: Vec<(&str, &str)> = pairs.to_vec();
            all.push(("state", p.state.as_deref().unwrap_or_default()));
            all.push(("iss", self.issuer()));
            Next::Redirect(with_query(&p.redirect_uri, &all, p.state.is_none()))
        };
        let Some(code) = get("code") else {
            let error = if get("error") == Some("access_denied") { "access_denied" } else { "server_error" };
            return Ok(back(&[("error", error), ("error_description", "Bitbucket did not grant bb access.")]).into());
        };
        let callback = format!("{}/oauth/callback", self.options.public_url);
        let tokens = match self.options.provider.exchange(code, &p.verifier, &callback) {
            Ok(t) => t,
            Err(ProviderError::Refused(why) | ProviderError::Unavailable(why)) => {
                self.logger.log(bb_core::Level::Warning, &format!("Bitbucket gave no tokens for a login: {why}"));
                return Ok(back(&[
                    ("error", "server_error"),
                    ("error_description", "Bitbucket did not give bb a token."),
                ])
                .into());
            }
        };
        self.logger.hide(&tokens.access);
        if let Some(r) = &tokens.refresh {
            self.logger.hide(r);
        }
        let Some(user) = self.user_of(&tokens.access) else {
            return Ok(back(&[
                ("error", "server_error"),
                ("error_description", "Bitbucket did not say who logged in."),
            ])
            .into());
        };
        let name = consent::cookie_name(&p.client_id, &p.registered);
        if let Some(before) = &p.remembered
            && *before != user
        {
            // The consent this browser remembered is another person's: it does not stand for this one.
            return Ok(Step {
                next: Next::Page(
                    403,
                    format!(
                        "This browser remembered a consent to this client given by the Bitbucket user {}, but you \
                         logged in as {}: nothing was given. Start the login again from your MCP client to be asked.",
                        clip(before),
                        clip(&user)
                    ),
                ),
                cookies: vec![self.cookies().set_cookie(&name, "", 0)],
            });
        }
        let grant = pkce::fresh().map_err(unavailable)?;
        let record = GrantRecord {
            user: user.clone(),
            access: tokens.access,
            refresh: tokens.refresh,
            expires_at_ms: now_ms.saturating_add(tokens.expires_in_s.saturating_mul(1000)),
        };
        self.put(Kind::Grant, &grant, &record, GRANT_TTL_MS, now_ms)?;
        let ours = pkce::fresh().map_err(unavailable)?;
        let code_record = CodeRecord {
            grant,
            client_id: p.client_id.clone(),
            redirect_uri: p.redirect_uri.clone(),
            challenge: p.challenge.clone(),
            resource: p.resource.clone(),
        };
        self.put(Kind::Code, &pkce::key_of(&ours), &code_record, CODE_TTL_MS, now_ms)?;
        self.logger.log(bb_core::Level::Info, &format!("{user} logged in with Bitbucket"));
        if let Some(trail) = &self.audit {
            let client = vec![("client", serde_json::Value::from(clip(&p.client_id)))];
            trail.shell_event("login", Some(user.clone()), None, client, &self.logger, now_ms);
        }
        let until = now_ms / 1000 + consent::CONSENT_TTL_S;
        let sealed = consent::seal(&self.options.consent_key, &p.client_id, &p.registered, &user, until);
        Ok(Step {
            next: back(&[("code", &ours)]),
            cookies: vec![self.cookies().set_cookie(&name, &sealed, consent::CONSENT_TTL_S)],
        })
    }

    /// The Bitbucket user `token` names (the `X-AUSERNAME` of a cheap authenticated read).
    fn user_of(&self, token: &str) -> Option<String> {
        let request = FetchRequest::get("/rest/api/latest/users", vec![("limit".into(), "1".into())]);
        match self.bitbucket.fetch(request, Some(&PersonalToken::new(token)), &Cancel::new()) {
            FetchOutcome::Response(r) if (200..300).contains(&r.status) => r.user.filter(|u| !u.is_empty()),
            _ => None,
        }
    }

    /// Checks the client's authentication at the token endpoint: a confidential client (one bb
    /// issued a secret) must send it, in the form (`client_secret_post`) or in `Authorization:
    /// Basic` (`client_secret_basic`, RFC 6749 §2.3.1); a public client sends none. The client id.
    fn client_of_token_request(
        &self,
        form: &[(String, String)],
        basic: Option<&(String, String)>,
        now_ms: u64,
    ) -> Result<String, OAuthError> {
        let get = |k: &str| form.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
        let client_id = basic.map(|(id, _)| id.as_str()).or(get("client_id")).unwrap_or_default().to_owned();
        if client_id.starts_with("https://") || client_id.is_empty() {
            return Ok(client_id);
        }
        let Some(client) = self.client(&client_id, now_ms)? else {
            return Err(OAuthError {
                status: 401,
                error: "invalid_client",
                description: "The client is unknown.".into(),
            });
        };
        if let Some(expected) = &client.secret {
            let given = basic.map(|(_, s)| s.as_str()).or(get("client_secret")).unwrap_or_default();
            if !crate::secret::same_secret(pkce::key_of(given).as_bytes(), expected.as_bytes()) {
                return Err(OAuthError {
                    status: 401,
                    error: "invalid_client",
                    description: "The client's secret is missing or wrong.".into(),
                });
            }
        }
        Ok(client_id)
    }

    /// A code or refresh token (`kind`) that was taken already is used again: the grant it came
    /// from ends with every token bb gave for it, and the person logs in again
    /// (docs/reference/oauth.md "Refresh token rotation and replay", "Authorization code replay").
    fn replayed(&self, kind: Kind, secret: &str, now_ms: u64) -> Result<OAuthError, OAuthError> {
        let what = if kind == Kind::Code { "code" } else { "refresh token" };
        let Some(spent) = self.read::<SpentRecord>(Kind::Spent, &pkce::key_of(secret), now_ms, false)? else {
            return Ok(refuse("invalid_grant", format!("The {what} is unknown or expired.")));
        };
        let user = self.read::<GrantRecord>(Kind::Grant, &spent.grant, now_ms, false)?.map(|g| g.user);
        self.options.store.delete(Kind::Grant, &spent.grant).map_err(|e| self.store_failed(&e))?;
        self.logger.log(
            bb_core::Level::Warning,
            &format!(
                "a {what} of {}'s login was used a second time: every token of that login is revoked, and they must log in again",
                user.as_deref().unwrap_or("an ended")
            ),
        );
        Ok(refuse(
            "invalid_grant",
            format!("The {what} was used already: every token of its login is revoked. Log in again."),
        ))
    }

    /// `POST /oauth/token`: a code or a refresh token for bb's own tokens. `basic` is the client's
    /// `Authorization: Basic` id and secret, if it sent one.
    pub(crate) fn token(
        &self,
        form: &[(String, String)],
        basic: Option<&(String, String)>,
        now_ms: u64,
    ) -> Result<Value, OAuthError> {
        let get = |k: &str| form.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
        let client_id = self.client_of_token_request(form, basic, now_ms)?;
        // A code or refresh token taken is marked spent, naming its grant: a second use ends the grant.
        let spend = |secret: &str, grant: &str| {
            let record = SpentRecord { grant: grant.to_owned() };
            self.put(Kind::Spent, &pkce::key_of(secret), &record, SPENT_TTL_MS, now_ms)
        };
        let (grant, resource) = match get("grant_type") {
            Some("authorization_code") => {
                let code = get("code").unwrap_or_default();
                let Some(c) = self.read::<CodeRecord>(Kind::Code, &pkce::key_of(code), now_ms, true)? else {
                    return Err(self.replayed(Kind::Code, code, now_ms)?);
                };
                spend(code, &c.grant)?;
                if c.client_id != client_id {
                    return Err(refuse("invalid_grant", "The code was given to another client."));
                }
                if get("redirect_uri") != Some(c.redirect_uri.as_str()) {
                    return Err(refuse("invalid_grant", "redirect_uri is not the one the code was given for."));
                }
                if !pkce::verifies(get("code_verifier").unwrap_or_default(), &c.challenge) {
                    return Err(refuse("invalid_grant", "PKCE verification failed: the code_verifier does not match."));
                }
                (c.grant, c.resource)
            }
            Some("refresh_token") => {
                let given = get("refresh_token").unwrap_or_default();
                let Some(r) = self.read::<TokenRecord>(Kind::Refresh, &pkce::key_of(given), now_ms, true)? else {
                    return Err(self.replayed(Kind::Refresh, given, now_ms)?);
                };
                spend(given, &r.grant)?;
                if r.client_id != client_id {
                    return Err(refuse("invalid_grant", "The refresh token was given to another client."));
                }
                (r.grant, r.resource)
            }
            Some(_) => {
                return Err(refuse("unsupported_grant_type", "bb accepts authorization_code and refresh_token."));
            }
            None => return Err(refuse("invalid_request", "grant_type is required.")),
        };
        if let Some(r) = get("resource")
            && !same_resource(r, &resource)
        {
            return Err(refuse("invalid_target", "bb's tokens are for its own MCP endpoint only."));
        }
        if self.read::<GrantRecord>(Kind::Grant, &grant, now_ms, false)?.is_none() {
            return Err(refuse("invalid_grant", LOG_IN_AGAIN));
        }
        let (access, refresh) = (pkce::fresh().map_err(unavailable)?, pkce::fresh().map_err(unavailable)?);
        let record = TokenRecord { grant, client_id, resource };
        let ttl = self.options.access_ttl_ms;
        self.put(Kind::Access, &pkce::key_of(&access), &record, ttl, now_ms)?;
        self.put(Kind::Refresh, &pkce::key_of(&refresh), &record, REFRESH_TTL_MS, now_ms)?;
        // The scope granted, always said (RFC 6749 §5.1: required when it differs from the one asked).
        Ok(json!({
            "access_token": access,
            "token_type": "Bearer",
            "expires_in": ttl / 1000,
            "refresh_token": refresh,
            "scope": self.options.scope,
        }))
    }

    /// The person a request to `/mcp` acts for, from bb's access token in its `Authorization`
    /// (blocking: it may refresh the person's Bitbucket token).
    pub(crate) fn authenticate(
        self: &Arc<Self>,
        bearer: Option<&str>,
        now_ms: u64,
    ) -> Result<PersonalToken, Unauthorized> {
        let invalid = |description: &str| Unauthorized {
            error: Some("invalid_token"),
            description: description.to_owned(),
            status: 401,
        };
        let failed = |e: OAuthError| Unauthorized { error: None, description: e.description, status: 503 };
        let Some(token) = bearer else {
            return Err(Unauthorized {
                error: None,
                description: "Log in with Bitbucket: this server needs a bearer token.".into(),
                status: 401,
            });
        };
        let Some(t) = self.read::<TokenRecord>(Kind::Access, &pkce::key_of(token), now_ms, false).map_err(failed)?
        else {
            return Err(invalid("The access token is unknown or expired."));
        };
        if t.resource != self.resource() {
            return Err(invalid("The access token was issued for another resource."));
        }
        let Some(grant) = self.read::<GrantRecord>(Kind::Grant, &t.grant, now_ms, false).map_err(failed)? else {
            return Err(invalid(LOG_IN_AGAIN));
        };
        let grant = if grant.expires_at_ms <= now_ms.saturating_add(REFRESH_AHEAD_MS) {
            match self.refresh(&t.grant, None, now_ms) {
                Ok(g) => g,
                Err(Ended::Ended) => return Err(invalid(LOG_IN_AGAIN)),
                Err(Ended::Unknown(why)) => return Err(Unauthorized { error: None, description: why, status: 503 }),
            }
        } else {
            grant
        };
        let handle: Arc<dyn Grant> = Arc::new(Login { grant: t.grant, authority: Arc::clone(self) });
        Ok(PersonalToken::of_login(grant.access, grant.user, handle))
    }

    /// Refreshes grant `id`'s Bitbucket token, one refresh at a time per grant in this process:
    /// after waiting its turn, a grant another request refreshed meanwhile (here or on another
    /// replica) is taken as it is. `refused`: the token Bitbucket just refused, if that is why.
    fn refresh(&self, id: &str, refused: Option<&str>, now_ms: u64) -> Result<GrantRecord, Ended> {
        let lock = {
            let mut all = self.refreshing.lock().unwrap_or_else(|p| p.into_inner());
            if all.len() > 10_000 {
                all.retain(|_, l| Arc::strong_count(l) > 1);
            }
            Arc::clone(all.entry(id.to_owned()).or_default())
        };
        let _turn = lock.lock().unwrap_or_else(|p| p.into_inner());
        let read =
            |s: &Self| s.read::<GrantRecord>(Kind::Grant, id, now_ms, false).map_err(|e| Ended::Unknown(e.description));
        let Some(grant) = read(self)? else { return Err(Ended::Ended) };
        let still_good = match refused {
            Some(secret) => grant.access != secret,
            None => grant.expires_at_ms > now_ms.saturating_add(REFRESH_AHEAD_MS),
        };
        if still_good {
            return Ok(grant);
        }
        let Some(refresh) = grant.refresh.clone() else {
            let _ = self.options.store.delete(Kind::Grant, id);
            return Err(Ended::Ended);
        };
        match self.options.provider.refresh(&refresh) {
            Ok(tokens) => {
                self.logger.hide(&tokens.access);
                let renewed = GrantRecord {
                    user: grant.user,
                    access: tokens.access,
                    refresh: tokens.refresh.or(Some(refresh)),
                    expires_at_ms: now_ms.saturating_add(tokens.expires_in_s.saturating_mul(1000)),
                };
                self.put(Kind::Grant, id, &renewed, GRANT_TTL_MS, now_ms).map_err(|e| Ended::Unknown(e.description))?;
                Ok(renewed)
            }
            Err(ProviderError::Refused(why)) => {
                // Another replica may have spent this refresh token and kept its successor.
                if let Some(now) = read(self)?
                    && now.refresh.as_deref() != Some(refresh.as_str())
                {
                    return Ok(now);
                }
                self.logger.log(
                    bb_core::Level::Notice,
                    &format!(
                        "{}'s Bitbucket grant ended (Bitbucket refused its refresh: {why}); they must log in again",
                        grant.user
                    ),
                );
                let _ = self.options.store.delete(Kind::Grant, id);
                Err(Ended::Ended)
            }
            Err(ProviderError::Unavailable(why)) => {
                Err(Ended::Unknown(format!("bb could not renew your Bitbucket login ({why}); try again shortly.")))
            }
        }
    }

    /// Bitbucket refused `secret`, grant `id`'s token: the token to send again, or the end of the grant.
    fn renew(&self, id: &str, secret: &str, now_ms: u64) -> Result<String, String> {
        // Refused for want of permission (Bitbucket says 401 for that too) while the token lives: as it is.
        let alive = {
            let request = FetchRequest::get("/rest/api/latest/users", vec![("limit".into(), "1".into())]);
            match self.bitbucket.fetch(request, Some(&PersonalToken::new(secret)), &Cancel::new()) {
                FetchOutcome::Response(r) => r.status != 401,
                FetchOutcome::Failed(_) => true,
            }
        };
        if alive {
            return Ok(secret.to_owned());
        }
        match self.refresh(id, Some(secret), now_ms) {
            Ok(g) => Ok(g.access),
            Err(Ended::Ended) => Err(LOG_IN_AGAIN.to_owned()),
            Err(Ended::Unknown(_)) => Ok(secret.to_owned()),
        }
    }
}

/// Why a grant gave no token.
enum Ended {
    /// Bitbucket refused its refresh, or it is gone: the person must log in again.
    Ended,
    /// The store or Bitbucket did not answer; nothing is decided.
    Unknown(String),
}

/// One grant, as the reads of its person's sessions hold it.
struct Login {
    grant: String,
    authority: Arc<Authority>,
}

impl Grant for Login {
    fn refused(&self, secret: &str) -> Result<String, String> {
        self.authority.renew(&self.grant, secret, bb_drive::now_ms())
    }
}

/// The value of the cookie `name`, if the request carries it.
fn cookie<'a>(cookies: &'a [(String, String)], name: &str) -> Option<&'a str> {
    cookies.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
}

/// Whether two resource indicators name the same resource (a trailing slash aside).
fn same_resource(a: &str, b: &str) -> bool {
    a.trim_end_matches('/') == b.trim_end_matches('/')
}

/// `base` with `pairs` added to its query, percent-encoded; `skip_state` leaves out an empty `state`.
fn with_query(base: &str, pairs: &[(&str, &str)], skip_state: bool) -> String {
    let mut out = base.to_owned();
    let mut sep = if base.contains('?') { '&' } else { '?' };
    for (k, v) in pairs {
        if *k == "state" && skip_state {
            continue;
        }
        out.push(sep);
        out.push_str(k);
        out.push('=');
        out.push_str(&encode(v));
        sep = '&';
    }
    out
}

/// Percent-encodes a query value (RFC 3986 unreserved characters pass).
pub(crate) fn encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn clip(s: &str) -> String {
    s.chars().take(80).collect()
}

#[cfg(test)]
mod tests;
