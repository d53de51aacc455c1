//! Bitbucket Data Center's OAuth 2.0 provider for incoming application links: the authorization code flow with
//! PKCE (S256), a consent step a test drives, the token endpoint (a code or a refresh token for a new pair), and a
//! person's revocation of an application in their profile (through `/_stack/oauth/revoke`, as Bitbucket has it in
//! the profile page, not in REST).
//!
//! Source: docs/reference/oauth.md "Bitbucket Data Center's OAuth 2.0 provider": the paths
//! `/rest/oauth2/latest/authorize` and `/rest/oauth2/latest/token` [doc], scopes such as `PUBLIC_REPOS`,
//! `REPO_READ`, `REPO_WRITE` [doc], the token answer's fields (RFC 6749 §5.1) [assumed], a refresh that rotates the
//! refresh token [assumed], and codes that live 10 s by default [doc].
//!
//! ```text
//!   GET  authorize?client_id&redirect_uri&response_type=code&scope&state&code_challenge&code_challenge_method=S256
//!        anonymous: 401 (log in first); logged in (basic or token): 200, a consent page with `name="consent"`
//!   POST authorize  consent=ID&decision=allow|deny (the same person)  → 302 redirect_uri?code&state | ?error&state
//!   POST token      grant_type=authorization_code&code&redirect_uri&code_verifier  + the client's id and secret
//!                   grant_type=refresh_token&refresh_token                          + the client's id and secret
//! ```
//! An access token it gives is accepted as `Authorization: Bearer` for its user until the grant is revoked or the
//! token is expired by `/_stack/oauth/expire`.

use serde_json::json;

use crate::auth::{self, Caller};
use crate::exchange::{Request, Response, parse_query};
use crate::grants::{ACCESS_TOKEN_SECONDS, Code, Consent, Grant, SCOPES};
use crate::model::Model;

/// Whether `segs` is a path of the provider.
pub fn is_provider_path(segs: &[&str]) -> bool {
    matches!(segs, ["rest", "oauth2", "latest", ..])
}

/// Serves a provider path.
pub fn serve(m: &mut Model, req: &Request, segs: &[&str], context_path: &str) -> Response {
    match (req.method.as_str(), segs) {
        ("GET", ["rest", "oauth2", "latest", "authorize"]) => authorize(m, req, context_path),
        ("POST", ["rest", "oauth2", "latest", "authorize"]) => consent(m, req),
        ("POST", ["rest", "oauth2", "latest", "token"]) => token(m, req),
        _ => oauth_error(404, "invalid_request", "No such OAuth 2.0 endpoint."),
    }
}

fn authorize(m: &mut Model, req: &Request, context_path: &str) -> Response {
    let client_id = req.param("client_id").unwrap_or_default().to_owned();
    let Some(link) = m.oauth.links.get(&client_id).cloned() else {
        return page(400, "Invalid client: no incoming link has this client ID.");
    };
    let redirect_uri = req.param("redirect_uri").unwrap_or_default();
    if redirect_uri != link.redirect_uri {
        return page(400, "Invalid redirect URI: it is not the one configured for this application.");
    }
    let state = req.param("state").map(str::to_owned);
    if req.param("response_type") != Some("code") {
        return redirect_error(redirect_uri, "unsupported_response_type", state.as_deref());
    }
    let challenge = req.param("code_challenge").map(str::to_owned);
    if challenge.is_some() && req.param("code_challenge_method").unwrap_or("plain") != "S256" {
        return redirect_error(redirect_uri, "invalid_request", state.as_deref());
    }
    let scope = req.param("scope").unwrap_or("PUBLIC_REPOS").to_owned();
    if scope.split_whitespace().any(|s| !SCOPES.contains(&s)) {
        return redirect_error(redirect_uri, "invalid_scope", state.as_deref());
    }
    let user = match auth::caller(m, req) {
        Ok(Caller::User(u)) => u,
        _ => return page(401, "Log in to Bitbucket to authorize this application."),
    };
    let id = m.oauth.fresh("consent-");
    let action = format!("{context_path}/rest/oauth2/latest/authorize");
    let html = format!(
        "<!doctype html><title>Authorize</title><p>Allow {client_id} to act as {user} ({scope})?</p>\
         <form method=\"post\" action=\"{action}\"><input type=\"hidden\" name=\"consent\" value=\"{id}\">\
         <button name=\"decision\" value=\"allow\">Allow</button><button name=\"decision\" value=\"deny\">Deny</button></form>"
    );
    let redirect_uri = redirect_uri.to_owned();
    m.oauth.consents.insert(id, Consent { user, client_id, redirect_uri, state, scope, challenge });
    Response::bytes(200, "text/html;charset=UTF-8", html.into_bytes())
}

fn consent(m: &mut Model, req: &Request) -> Response {
    let form = form(req);
    let get = |k: &str| form.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
    let user = match auth::caller(m, req) {
        Ok(Caller::User(u)) => u,
        _ => return page(401, "Log in to Bitbucket to authorize this application."),
    };
    let Some(c) = get("consent").and_then(|id| m.oauth.consents.get(id)).filter(|c| c.user == user).cloned() else {
        return page(400, "This authorization request is unknown or was answered already.");
    };
    if let Some(id) = get("consent") {
        m.oauth.consents.remove(id);
    }
    if get("decision") != Some("allow") {
        return redirect_error(&c.redirect_uri, "access_denied", c.state.as_deref());
    }
    let grant = m.oauth.next + 1;
    m.oauth.next += 1;
    m.oauth.grants.insert(
        grant,
        Grant {
            user: c.user.clone(),
            client_id: c.client_id.clone(),
            scope: c.scope.clone(),
            access: None,
            refresh: None,
            revoked: false,
        },
    );
    let code = m.oauth.fresh("code-");
    m.oauth.codes.insert(
        code.clone(),
        Code { grant, client_id: c.client_id, redirect_uri: c.redirect_uri.clone(), challenge: c.challenge },
    );
    let mut location = format!("{}{}code={}", c.redirect_uri, sep(&c.redirect_uri), enc(&code));
    if let Some(s) = &c.state {
        location.push_str(&format!("&state={}", enc(s)));
    }
    Response::empty(302).with_header("Location", &location)
}

fn token(m: &mut Model, req: &Request) -> Response {
    let form = form(req);
    let get = |k: &str| form.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    // The client authenticates with its id and secret, in the body or as basic credentials.
    let basic = req
        .header("authorization")
        .and_then(|h| h.strip_prefix("Basic ").or_else(|| h.strip_prefix("basic ")))
        .and_then(|v| auth::decode_base64(v.trim()))
        .and_then(|raw| String::from_utf8(raw).ok())
        .and_then(|pair| pair.split_once(':').map(|(a, b)| (a.to_owned(), b.to_owned())));
    let (client_id, secret) = match basic {
        Some(pair) => pair,
        None => (get("client_id").unwrap_or_default(), get("client_secret").unwrap_or_default()),
    };
    match m.oauth.links.get(&client_id) {
        Some(link) if link.secret == secret => {}
        _ => return oauth_error(401, "invalid_client", "Client authentication failed."),
    }
    m.oauth.token_requests += 1;
    let grant = match get("grant_type").as_deref() {
        Some("authorization_code") => {
            let Some(code) = get("code").and_then(|c| m.oauth.codes.remove(&c)) else {
                return oauth_error(400, "invalid_grant", "The authorization code is invalid or was used already.");
            };
            if code.client_id != client_id || get("redirect_uri").as_deref() != Some(code.redirect_uri.as_str()) {
                return oauth_error(400, "invalid_grant", "The code was issued to another client or redirect URI.");
            }
            if let Some(challenge) = &code.challenge
                && get("code_verifier").map(|v| s256(&v)).as_deref() != Some(challenge.as_str())
            {
                return oauth_error(400, "invalid_grant", "PKCE verification failed.");
            }
            code.grant
        }
        Some("refresh_token") => {
            let given = get("refresh_token").unwrap_or_default();
            let found =
                m.oauth.grants.iter().find(|(_, g)| {
                    !g.revoked && g.client_id == client_id && g.refresh.as_deref() == Some(given.as_str())
                });
            let Some((&grant, _)) = found else {
                return oauth_error(400, "invalid_grant", "The refresh token is invalid, expired or revoked.");
            };
            m.oauth.refreshes += 1;
            grant
        }
        _ => return oauth_error(400, "unsupported_grant_type", "Use authorization_code or refresh_token."),
    };
    let (access, refresh) = (m.oauth.fresh("bbat-"), m.oauth.fresh("bbrt-"));
    let Some(g) = m.oauth.grants.get_mut(&grant) else {
        return oauth_error(400, "invalid_grant", "The grant is gone.");
    };
    g.access = Some(access.clone());
    g.refresh = Some(refresh.clone());
    Response::json(
        200,
        &json!({
            "access_token": access,
            "token_type": "bearer",
            "expires_in": ACCESS_TOKEN_SECONDS,
            "refresh_token": refresh,
            "scope": g.scope,
        }),
    )
}

/// The form fields of a POST body (`application/x-www-form-urlencoded`).
fn form(req: &Request) -> Vec<(String, String)> {
    parse_query(&String::from_utf8_lossy(&req.body))
}

/// BASE64URL(SHA-256(verifier)), without padding (RFC 7636 §4.2).
pub fn s256(verifier: &str) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, verifier.as_bytes());
    auth::encode_base64(digest.as_ref()).trim_end_matches('=').replace('+', "-").replace('/', "_")
}

fn sep(uri: &str) -> char {
    if uri.contains('?') { '&' } else { '?' }
}

/// Percent-encodes a query value.
fn enc(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn redirect_error(redirect_uri: &str, error: &str, state: Option<&str>) -> Response {
    let mut location = format!("{redirect_uri}{}error={error}", sep(redirect_uri));
    if let Some(s) = state {
        location.push_str(&format!("&state={}", enc(s)));
    }
    Response::empty(302).with_header("Location", &location)
}

fn page(status: u16, message: &str) -> Response {
    let html = format!("<!doctype html><title>Bitbucket</title><p>{message}</p>");
    Response::bytes(status, "text/html;charset=UTF-8", html.into_bytes())
}

fn oauth_error(status: u16, error: &str, description: &str) -> Response {
    Response::json(status, &json!({ "error": error, "error_description": description }))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn s256_is_base64url_of_sha256_without_padding() {
        // Computed apart (Python's hashlib and base64.urlsafe_b64encode).
        let v = "the-verifier-of-a-test-0123456789-abcdefghijklmnop";
        assert_eq!(s256(v), "BVvy4CD-OvCFbvT0e0Ez4cvXutBtG3b4Q43biCWs3YQ");
    }
}
