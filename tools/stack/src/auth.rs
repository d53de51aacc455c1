//! Who is asking: a personal access token as `Authorization: Bearer <token>`, or basic `user:password`
//! (a token also works as the password), an access token the OAuth 2.0 provider gave (`crate::oauth`), or nobody.
//!
//! Source: reference "Conventions" [rec]: personal access tokens as Bearer, or basic auth user:password;
//! 401 for "not logged in" and "not permitted" alike, with Bitbucket's error JSON.

use crate::errors::{self, exception};
use crate::exchange::{Request, Response};
use crate::model::Model;

/// The outcome of reading a request's credentials.
#[derive(Debug, Clone, PartialEq)]
pub enum Caller {
    /// Credentials named this user (slug).
    User(String),
    /// No credentials were sent.
    Anonymous,
}

/// Reads the caller from the `Authorization` header; wrong credentials are a 401 response.
pub fn caller(m: &Model, req: &Request) -> Result<Caller, Response> {
    let Some(header) = req.header("authorization") else {
        return Ok(Caller::Anonymous);
    };
    let (scheme, value) = header.trim().split_once(' ').unwrap_or((header, ""));
    let found = match scheme.to_ascii_lowercase().as_str() {
        "bearer" => m
            .users
            .values()
            .find(|u| u.token == value.trim())
            .map(|u| u.slug.clone())
            .or_else(|| m.oauth.user_of(value.trim()).map(str::to_owned)),
        "basic" => decode_base64(value.trim()).and_then(|raw| String::from_utf8(raw).ok()).and_then(|pair| {
            let (name, secret) = pair.split_once(':')?;
            let u = m.users.get(name)?;
            (u.password == secret || u.token == secret).then(|| u.slug.clone())
        }),
        _ => None,
    };
    found.map(Caller::User).ok_or_else(|| {
        errors::error(
            401,
            Some(exception::BAD_CREDENTIALS),
            "Authentication failed. Please check your credentials and try again.",
        )
    })
}

/// The 401 an anonymous request gets where it must log in.
pub fn not_logged_in() -> Response {
    errors::error(
        401,
        Some(exception::NOT_PERMITTED),
        "You are not permitted to access this resource. You must be logged in.",
    )
}

/// Decodes standard base64 (padding optional); `None` for anything else.
pub fn decode_base64(s: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let mut acc: u32 = 0;
    let mut bits = 0;
    for c in s.bytes().filter(|&c| c != b'=') {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

/// Encodes standard base64 with padding (for tests and clients of the stack).
pub fn encode_base64(data: &[u8]) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in data.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ABC[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_round_trips() {
        for s in ["", "a", "ab", "abc", "alice:pässword"] {
            assert_eq!(decode_base64(&encode_base64(s.as_bytes())).as_deref(), Some(s.as_bytes()));
        }
        assert_eq!(encode_base64(b"ab"), "YWI=");
        assert_eq!(decode_base64("!!"), None);
    }
}
