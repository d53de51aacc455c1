//! The HTTP face of the login: the two metadata documents, registration, the authorization request,
//! Bitbucket's callback, the token endpoint, and the 401 challenge of `/mcp`. What each decides is
//! the [`Authority`]'s; calls that may wait on Bitbucket or a shared store run off the event threads.

use std::sync::Arc;

use bb_drive::now_ms;
use hyper::body::Incoming;
use hyper::header::{CACHE_CONTROL, CONTENT_TYPE, HeaderValue, LOCATION, WWW_AUTHENTICATE};
use hyper::http::request::Parts;
use hyper::{Method, Response, StatusCode};
use serde_json::{Value, json};

use super::admission::{Admission, Ask};
use super::{Authority, Next, OAuthError, Unauthorized};
use crate::peer::Peer;
use crate::reply::{self, Reply, empty, refusal};

const PROTECTED_RESOURCE: &str = "/.well-known/oauth-protected-resource";
const PROTECTED_RESOURCE_MCP: &str = "/.well-known/oauth-protected-resource/mcp";
const AUTHORIZATION_SERVER: &str = "/.well-known/oauth-authorization-server";

/// Whether `path` is one of the login's.
pub(crate) fn is_oauth_path(path: &str) -> bool {
    matches!(
        path,
        PROTECTED_RESOURCE
            | PROTECTED_RESOURCE_MCP
            | AUTHORIZATION_SERVER
            | "/oauth/register"
            | "/oauth/authorize"
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
    match (&parts.method, path) {
        (&Method::GET, PROTECTED_RESOURCE | PROTECTED_RESOURCE_MCP) => document(&authority.resource_metadata()),
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
                    a.authorize(&query, now_ms())
                })
                .await,
            )
        }
        (&Method::GET, "/oauth/callback") => {
            let a = Arc::clone(authority);
            next(smol::unblock(move || a.callback(&query, now_ms())).await)
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
            let a = Arc::clone(authority);
            match smol::unblock(move || a.token(&form, now_ms())).await {
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

/// A JSON document that is never cached (it may carry tokens).
fn document(v: &Value) -> Response<Reply> {
    let mut r = reply::json(v.to_string().into_bytes());
    r.headers_mut().insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}

fn oauth_error(e: &OAuthError) -> Response<Reply> {
    let mut r = document(&json!({ "error": e.error, "error_description": e.description }));
    *r.status_mut() = StatusCode::from_u16(e.status).unwrap_or(StatusCode::BAD_REQUEST);
    r
}

fn next(n: Result<Next, OAuthError>) -> Response<Reply> {
    match n {
        Ok(Next::Redirect(url)) => match HeaderValue::from_str(&url) {
            Ok(v) => {
                let mut r = empty(StatusCode::FOUND);
                r.headers_mut().insert(LOCATION, v);
                r.headers_mut().insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
                r
            }
            Err(_) => page(400, "bb could not send you back: the address is not valid in a header."),
        },
        Ok(Next::Page(status, text)) => page(status, &text),
        Err(e) => page(e.status, &e.description),
    }
}

/// A page for the person's browser: plain text, so nothing in it is ever markup.
fn page(status: u16, text: &str) -> Response<Reply> {
    let mut r = Response::new(Reply::Full(Some(format!("bb: {text}\n").into_bytes().into())));
    *r.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_REQUEST);
    r.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"));
    r.headers_mut().insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}

/// The answer to a request to `/mcp` without a good token: 401 with the challenge that names the
/// protected resource metadata (RFC 9728 §5.1), or 503 when nothing could be decided.
pub(crate) fn challenge(authority: &Authority, why: &Unauthorized) -> Response<Reply> {
    let status = StatusCode::from_u16(why.status).unwrap_or(StatusCode::UNAUTHORIZED);
    let mut r = refusal(status, None, &format!("Unauthorized: {}", why.description));
    if status == StatusCode::UNAUTHORIZED {
        let metadata = format!("{}{PROTECTED_RESOURCE_MCP}", authority.issuer());
        let mut value = format!("Bearer resource_metadata=\"{metadata}\"");
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
        assert!(is_oauth_path("/oauth/token"));
        assert!(!is_oauth_path("/mcp"));
        assert!(!is_oauth_path("/oauth/tokens"));
    }
}
