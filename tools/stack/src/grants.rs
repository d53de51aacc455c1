//! What people granted applications through the OAuth 2.0 provider ([`crate::oauth`] serves it): incoming links,
//! consents waiting, codes, grants and their tokens. Plain data, so the model holds it and the handlers and the
//! authentication read it.

use std::collections::BTreeMap;
use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;

use serde_json::{Value, json};

/// The scopes an incoming link may grant, weakest first. [doc]
pub const SCOPES: [&str; 6] =
    ["PUBLIC_REPOS", "ACCOUNT_WRITE", "REPO_READ", "REPO_WRITE", "REPO_ADMIN", "PROJECT_ADMIN"];

/// How long an access token lives, in seconds, as Bitbucket's default says (`expires_in`). [doc]
pub const ACCESS_TOKEN_SECONDS: u64 = 3600;

/// An incoming application link: the client's id, secret and its one redirect URL.
#[derive(Debug, Clone)]
pub struct Link {
    /// The client secret Bitbucket showed the administrator.
    pub secret: String,
    /// The redirect URL the administrator entered, matched exactly.
    pub redirect_uri: String,
}

/// A request waiting for its person's consent.
#[derive(Debug, Clone)]
pub struct Consent {
    /// The person asked (logged in to Bitbucket).
    pub user: String,
    /// The application asking.
    pub client_id: String,
    /// Where the answer goes (the link's own, checked).
    pub redirect_uri: String,
    /// The application's `state`, given back.
    pub state: Option<String>,
    /// The scopes asked, space-separated.
    pub scope: String,
    /// The PKCE S256 challenge, if the application sent one.
    pub challenge: Option<String>,
}

/// A code given on consent, not yet exchanged.
#[derive(Debug, Clone)]
pub struct Code {
    /// The grant it gives tokens of.
    pub grant: u64,
    /// The application it was given to.
    pub client_id: String,
    /// The redirect URI it was given at (the exchange names it again).
    pub redirect_uri: String,
    /// The PKCE S256 challenge the exchange's verifier must meet.
    pub challenge: Option<String>,
}

/// What a person granted an application: its live tokens.
#[derive(Debug, Clone)]
pub struct Grant {
    /// The person.
    pub user: String,
    /// The application.
    pub client_id: String,
    /// The scopes granted, space-separated.
    pub scope: String,
    /// The access token, while it is live.
    pub access: Option<String>,
    /// The refresh token, while the grant stands.
    pub refresh: Option<String>,
    /// The person revoked it.
    pub revoked: bool,
}

/// The provider's state: links, consents waiting, codes, grants.
#[derive(Debug, Clone, Default)]
pub struct Provider {
    /// Incoming links by client id.
    pub links: BTreeMap<String, Link>,
    /// Consents waiting, by id.
    pub consents: BTreeMap<String, Consent>,
    /// Codes not yet exchanged.
    pub codes: BTreeMap<String, Code>,
    /// Grants by number.
    pub grants: BTreeMap<u64, Grant>,
    /// Token requests answered (codes and refreshes), for tests.
    pub token_requests: u64,
    /// Refreshes answered.
    pub refreshes: u64,
    /// The last number handed out (grants and fresh values).
    pub next: u64,
    hasher: RandomState,
}

impl Provider {
    /// The user an access token names, while it is live.
    pub fn user_of(&self, token: &str) -> Option<&str> {
        self.grants.values().find(|g| !g.revoked && g.access.as_deref() == Some(token)).map(|g| g.user.as_str())
    }

    /// A fresh unguessable value (unique in the stack; unpredictable enough for a test server).
    pub fn fresh(&mut self, prefix: &str) -> String {
        self.next += 1;
        let a = self.hasher.hash_one((self.next, prefix));
        let b = self.hasher.hash_one((a, self.next));
        format!("{prefix}{a:016x}{b:016x}")
    }

    /// The person revoked every grant they gave (their profile's "Authorized applications"); how many.
    pub fn revoke(&mut self, user: &str) -> usize {
        let mut n = 0;
        for g in self.grants.values_mut().filter(|g| g.user == user && !g.revoked) {
            g.revoked = true;
            g.access = None;
            g.refresh = None;
            n += 1;
        }
        n
    }

    /// The person's access tokens stop working (as when their hour is up); refresh tokens still work.
    pub fn expire(&mut self, user: &str) -> usize {
        let mut n = 0;
        for g in self.grants.values_mut().filter(|g| g.user == user && g.access.is_some()) {
            g.access = None;
            n += 1;
        }
        n
    }

    /// The state for `GET /_stack/oauth`.
    pub fn json(&self) -> Value {
        let grants: Vec<Value> = self
            .grants
            .values()
            .map(|g| json!({ "user": g.user, "clientId": g.client_id, "scope": g.scope, "revoked": g.revoked }))
            .collect();
        json!({
            "links": self.links.keys().collect::<Vec<_>>(),
            "grants": grants,
            "tokenRequests": self.token_requests,
            "refreshes": self.refreshes,
        })
    }
}
