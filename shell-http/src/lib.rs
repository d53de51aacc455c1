//! bb-http: the Streamable HTTP transport behind `bb ai mcp serve --http ADDR` (MCP 2025-03-26 to
//! 2025-11-25, `reference/mcp.md` §2), safe to expose by default.
//!
//! It drives the same [`bb_core::Session`] as the stdio transport, one per `Mcp-Session-Id`, and
//! routes each answer to the POST that carried its request by the input tag the session echoes
//! (see [`bb_core::Output::Send`]).
//!
//! ```text
//!   connection ──▶ gate (Host, Origin, bearer, CORS) ──▶ exchange (POST / DELETE / GET / OPTIONS)
//!                                                            │
//!                         registry (ids, expiry, cap) ◀──────┤
//!                                                            ▼
//!                         driver: Session.handle ─▶ poll_output ─▶ answers to the waiting POST
//!                                                                 └▶ fetches on smol's blocking pool
//! ```
//!
//! Module by what it decides: [`options`] (limits and who may call), `gate` (whether a request
//! is admitted), `exchange` (what each method and header combination answers), `registry`
//! (which sessions live), `driver` (one session's pump), `reply` (JSON, SSE and error bodies),
//! `server` (sockets, threads, the connection cap).
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod driver;
mod exchange;
mod gate;
pub mod hyper_smol;
pub mod options;
mod registry;
mod reply;
mod server;

use std::sync::Arc;

use bb_core::{FetchOutcome, FetchRequest, Level};

pub use options::{BearerToken, HttpOptions, Limits};
pub use server::{Running, Server};

/// Carries out one Bitbucket request for a session, blocking (it runs on smol's blocking pool).
///
/// The second argument is the person's own Bitbucket token when the server runs with a per-user
/// token header, or `None` for the operator's configured credentials.
pub type FetchFn = Arc<dyn Fn(FetchRequest, Option<&PersonalToken>) -> FetchOutcome + Send + Sync>;

/// Writes one line of the operator's log.
pub type LogFn = Arc<dyn Fn(Level, &str) + Send + Sync>;

/// A person's own Bitbucket token, as their client sent it on `initialize`.
///
/// It is used for that session's Bitbucket requests only; its `Debug` form hides it, and bb never
/// logs or echoes it.
#[derive(Clone, PartialEq, Eq)]
pub struct PersonalToken(String);

impl PersonalToken {
    /// Wraps a token.
    pub fn new(token: impl Into<String>) -> PersonalToken {
        PersonalToken(token.into())
    }

    /// The token itself, for the `Authorization` header of a Bitbucket request. Never log it.
    pub fn secret(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for PersonalToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PersonalToken(<hidden>)")
    }
}

/// Compares two secrets in time that depends only on their lengths, never on where they differ.
pub(crate) fn same_secret(a: &[u8], b: &[u8]) -> bool {
    let mut diff = u8::from(a.len() != b.len());
    // Walk the expected secret's full length whatever the other holds.
    for (i, x) in b.iter().enumerate() {
        diff |= x ^ a.get(i).copied().unwrap_or(!x);
    }
    std::hint::black_box(diff) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_match_only_when_equal() {
        assert!(same_secret(b"abc", b"abc"));
        assert!(!same_secret(b"abd", b"abc"));
        assert!(!same_secret(b"ab", b"abc"));
        assert!(!same_secret(b"abcd", b"abc"));
        assert!(!same_secret(b"", b"abc"));
        assert!(same_secret(b"", b""));
    }

    #[test]
    fn a_personal_token_never_shows_in_debug_output() {
        let t = PersonalToken::new("s3cret");
        assert!(!format!("{t:?}").contains("s3cret"));
    }
}
