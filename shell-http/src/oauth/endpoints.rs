//! The HTTP face of the login: the two metadata documents, registration, the authorization request,
//! Bitbucket's callback, the token endpoint, and the 401 challenge of `/mcp`. What each decides is
//! the [`Authority`]'s; calls that may wait on Bitbucket or a shared store run off the event threads.

use std::sync::Arc;

use bb_drive::now_ms;
use hyper::body::Incoming;
use hyper::header::{
    AUTHORIZATION, CACHE_CONTROL, CONTENT_SECURITY_POLICY, CONTENT_TYPE, COOKIE, HeaderValue, LOCATION, RETRY_AFTER,
    SET_COOKIE, WWW_AUTHENTICATE, X_FRAME_OPTIONS,
};
use hyper::http::request::Parts;
use hyper::{Method, Response, StatusCode};
use serde_json::{Value, json};

use super::admission::{Admission, Ask};
use super::{Authority, Next, OAuthError, Step, Unauthorized, consent};
use crate::peer::Peer;
use crate::reply::{self, Reply, empty, refusal};

const PROTECTED_RESOURCE_MCP: &str = "/.well-known/oauth-protected-resource/mcp";
const AUTHORIZATION_SERVER: &str = "/.well-known/oauth-authorization-server";

/// Whether `path` is one of the login's.
pub(crate) fn is_oauth_path(path: &str) -> bool {
    matches!(
        path,
        PROTECTED_RESOURCE_MCP
            | AUTHORIZATION_SERVER
            | "/oauth/register"
            | "/oauth/authorize"
            | "/oauth/consent"
            | "/oauth/callback"
            | "/oauth/token"
    )
}

/// Answers a request to one of the login's paths from `peer`, within `admission`'s allowances and bounds.
pub(crate) async fn serve(
    authority: &Arc<Authority>,
    admission: &Admission,
    peer: Peer,
    parts: &Parts,
    body: Incoming,
) -> Response<Reply> {
    let path = parts.uri.path();
    let query = parse_form(parts.uri.query().unwrap_or_default());
    let cookies = request_cookies(parts);
    match (&parts.method, path) {
        // Only the document of the resource bb protects, `/mcp`: a document at the root would name a
        // resource other than the one it was formed from (RFC 9728 §3.3).
        (&Method::GET, PROTECTED_RESOURCE_MCP) => document(&authority.resource_metadata()),
        (&Method::GET, AUTHORIZATION_SERVER) => document(&authority.server_metadata()),
        (&Method::GET, "/oauth/authorize") => {
            if let Err(r) = admission.admit(Ask::Authorize, peer, now_ms()) {
                return *r;
            }
            let fetching = match admission.fetch_for(&query) {
                Ok(f) => f,
                Err(r) => return *r,
            };
            let a = Arc::clone(authority);
            next(
                smol::unblock(move || {
                    let _fetching = fetching;
                    a.authorize(&query, &cookies, now_ms())
                })
                .await,
            )
        }
        (&Method::POST, "/oauth/consent") => {
            let bytes = match admission.body(parts, body).await {
                Ok(b) => b,
                Err(r) => return *r,
            };
            let form = parse_form(&String::from_utf8_lossy(&bytes));
            let a = Arc::clone(authority);
            next(smol::unblock(move || a.consent(&form, &cookies, now_ms())).await)
        }
        (&Method::GET, "/oauth/callback") => {
            let a = Arc::clone(authority);
            next(smol::unblock(move || a.callback(&query, &cookies, now_ms())).await)
        }
        (&Method::POST, "/oauth/register") => {
            if let Err(r) = admission.admit(Ask::Register, peer, now_ms()) {
                return *r;
            }
            let bytes = match admission.body(parts, body).await {
                Ok(b) => b,
                Err(r) => return *r,
            };
            let a = Arc::clone(authority);
            match smol::unblock(move || a.register(&bytes, now_ms())).await {
                Ok(v) => {
                    let mut r = document(&v);
                    *r.status_mut() = StatusCode::CREATED;
                    r
                }
                Err(e) => oauth_error(&e),
            }
        }
        (&Method::POST, "/oauth/token") => {
            if let Err(r) = admission.admit(Ask::Token, peer, now_ms()) {
                return *r;
            }
            let bytes = match admission.body(parts, body).await {
                Ok(b) => b,
                Err(r) => return *r,
            };
            let form = parse_form(&String::from_utf8_lossy(&bytes));
            let basic = basic_credentials(parts);
            let a = Arc::clone(authority);
            match smol::unblock(move || a.token(&form, basic.as_ref(), now_ms())).await {
                Ok(v) => document(&v),
                Err(e) => oauth_error(&e),
            }
        }
        _ => {
            let mut r = refusal(StatusCode::METHOD_NOT_ALLOWED, None, "Method not allowed on this path.");
            r.headers_mut().insert(hyper::header::ALLOW, HeaderValue::from_static("GET, POST"));
            r
        }
    }
}

/// The cookies the request carries.
fn request_cookies(parts: &Parts) -> Vec<(String, String)> {
    let values: Vec<&str> = parts.headers.get_all(COOKIE).iter().filter_map(|v| v.to_str().ok()).collect();
    consent::cookies(&values)
}

/// The client id and secret of an `Authorization: Basic` header (RFC 6749 §2.3.1: each
/// form-encoded before it was joined with `:`).
fn basic_credentials(parts: &Parts) -> Option<(String, String)> {
    let value = parts.headers.get(AUTHORIZATION)?.to_str().ok()?;
    let (scheme, encoded) = value.trim().split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let encoded = encoded.trim();
    if encoded.len() > 4096 {
        return None;
    }
    let bytes = bb_core::base64_decode(encoded)?;
    let text = String::from_utf8(bytes).ok()?;
    let (id, secret) = text.split_once(':')?;
    Some((decode(id), decode(secret)))
}

/// A JSON document that is never cached (it may carry tokens).
fn document(v: &Value) -> Response<Reply> {
    let mut r = reply::json(v.to_string().into_bytes());
    r.headers_mut().insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}

fn oauth_error(e: &OAuthError) -> Response<Reply> {
    let mut r = document(&json!({ "error": e.error, "error_description": e.description }));
    *r.status_mut() = StatusCode::from_u16(e.status).unwrap_or(StatusCode::BAD_REQUEST);
    if e.status == 401 {
        // RFC 6749 §5.2: a client that failed to authenticate is told how it may.
        r.headers_mut().insert(WWW_AUTHENTICATE, HeaderValue::from_static("Basic realm=\"bb\""));
    }
    retry_later(&mut r);
    r
}

/// A 429 or 503 says when to try again (RFC 9110 §10.2.3).
fn retry_later(r: &mut Response<Reply>) {
    if matches!(r.status().as_u16(), 429 | 503) && !r.headers().contains_key(RETRY_AFTER) {
        r.headers_mut().insert(RETRY_AFTER, HeaderValue::from_static("30"));
    }
}

fn next(n: Result<Step, OAuthError>) -> Response<Reply> {
    let (next, cookies) = match n {
        Ok(Step { next, cookies }) => (next, cookies),
        Err(e) => (Next::Page(e.status, e.description), Vec::new()),
    };
    let mut r = match next {
        Next::Redirect(url) => match HeaderValue::from_str(&url) {
            Ok(v) => {
                // 303: the consent form's POST is followed by a GET wherever it leads.
                let mut r = empty(StatusCode::SEE_OTHER);
                r.headers_mut().insert(LOCATION, v);
                r.headers_mut().insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
                r
            }
            Err(_) => page(400, "bb could not send you on: the address is not valid in a header."),
        },
        Next::Page(status, text) => page(status, &text),
        Next::Consent(html) => {
            let mut r = Response::new(Reply::Full(Some(html.into_bytes().into())));
            r.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8"));
            r.headers_mut().insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
            page_headers(&mut r);
            r
        }
    };
    for c in cookies {
        if let Ok(v) = HeaderValue::from_str(&c) {
            r.headers_mut().append(SET_COOKIE, v);
        }
    }
    retry_later(&mut r);
    r
}

/// A page for the person's browser: plain text, so nothing in it is ever markup.
fn page(status: u16, text: &str) -> Response<Reply> {
    let mut r = Response::new(Reply::Full(Some(format!("bb: {text}\n").into_bytes().into())));
    *r.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_REQUEST);
    r.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"));
    r.headers_mut().insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    page_headers(&mut r);
    r
}

/// What every page of the login carries: it may not be framed (a consent clicked through a frame is
/// no consent), runs nothing, and sends no referrer (the query holds the login's state).
pub(crate) fn page_headers(r: &mut Response<Reply>) {
    let h = r.headers_mut();
    h.insert(CONTENT_SECURITY_POLICY, HeaderValue::from_static(consent::PAGE_POLICY));
    h.insert(X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(hyper::header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    h.insert(hyper::header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
}

/// The answer to a request to `/mcp` without a good token: 401 with the challenge that names the
/// protected resource metadata (RFC 9728 §5.1), or 503 when nothing could be decided.
pub(crate) fn challenge(authority: &Authority, why: &Unauthorized) -> Response<Reply> {
    let status = StatusCode::from_u16(why.status).unwrap_or(StatusCode::UNAUTHORIZED);
    let mut r = refusal(status, None, &format!("Unauthorized: {}", why.description));
    if status == StatusCode::UNAUTHORIZED {
        let metadata = format!("{}{PROTECTED_RESOURCE_MCP}", authority.issuer());
        let mut value = format!("Bearer resource_metadata=\"{metadata}\", scope=\"{}\"", authority.scopes().join(" "));
        if let Some(error) = why.error {
            let description: String = why.description.chars().filter(|c| *c != '"' && *c != '\\').collect();
            value.push_str(&format!(", error=\"{error}\", error_description=\"{description}\""));
        }
        if let Ok(v) = HeaderValue::from_str(&value) {
            r.headers_mut().insert(WWW_AUTHENTICATE, v);
        }
    } else {
        r.headers_mut().insert(hyper::header::RETRY_AFTER, HeaderValue::from_static("5"));
    }
    r
}

/// The pairs of a query string or a form body, percent-decoded (`+` is a space); at most 64.
pub(crate) fn parse_form(s: &str) -> Vec<(String, String)> {
    s.split('&')
        .filter(|kv| !kv.is_empty())
        .take(64)
        .map(|kv| {
            let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
            (decode(k), decode(v))
        })
        .collect()
}

fn decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < b.len() => {
                match std::str::from_utf8(&b[i + 1..i + 3]).ok().and_then(|h| u8::from_str_radix(h, 16).ok()) {
                    Some(v) => {
                        out.push(v);
                        i += 2;
                    }
                    None => out.push(b'%'),
                }
            }
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_form_is_decoded_pair_by_pair() {
        let f = parse_form("a=1&b=x%20y+z&c=%E2%9C%93&d&e=%zz&f=%4");
        let get = |k: &str| f.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
        assert_eq!(get("b"), Some("x y z"));
        assert_eq!(get("c"), Some("✓"));
        assert_eq!(get("d"), Some(""));
        assert_eq!(get("e"), Some("%zz"));
        assert_eq!(get("f"), Some("%4"));
    }

    #[test]
    fn the_login_paths_are_known_and_others_are_not() {
        assert!(is_oauth_path("/.well-known/oauth-protected-resource/mcp"));
        assert!(!is_oauth_path("/.well-known/oauth-protected-resource"), "no document for the root");
        assert!(is_oauth_path("/oauth/token"));
        assert!(!is_oauth_path("/mcp"));
        assert!(!is_oauth_path("/oauth/tokens"));
    }
}
