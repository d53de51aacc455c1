//! What the operator decides: who may call (origins, hosts, the bearer token, per-person
//! Bitbucket tokens, logins with Bitbucket) and the limits that keep one client from exhausting the server.

use std::time::Duration;

/// How the HTTP server admits requests. [`HttpOptions::default`] is the safe loopback setup.
#[derive(Debug, Clone, Default)]
pub struct HttpOptions {
    /// Extra origins allowed to call (and to get CORS headers), such as `https://host.example:8443`.
    /// The loopback origins of the bound port are always allowed.
    pub allow_origins: Vec<String>,
    /// Extra `Host` values allowed, as `name` (any port) or `name:port`. The loopback names with the
    /// bound port, and the bound address itself, are always allowed; anything else is refused (403)
    /// as a DNS-rebinding attempt.
    pub allow_hosts: Vec<String>,
    /// The bearer token every request must carry, if any (see [`BearerToken::resolve`]).
    pub token: Option<String>,
    /// When set, each session supplies its own Bitbucket token in this header on `initialize`
    /// (and the same value on every later request of the session).
    pub per_user_token_header: Option<String>,
    /// Sizes, timeouts and counts of connections and sessions, per peer, per person and in all.
    pub limits: Limits,
    /// When set, people log in with Bitbucket (`--oauth`): every request to `/mcp` carries bb's own
    /// access token, and each session acts with its person's Bitbucket grant.
    pub oauth: Option<crate::oauth::OAuthOptions>,
    /// The proxies whose PROXY protocol v2 header and `X-Forwarded-For` name the person
    /// (`--trusted-proxy`); their own addresses hold no connection share. Empty: none.
    pub trusted_proxies: crate::proxies::TrustedProxies,
}

/// Bounds on what one client can make the server hold.
#[derive(Debug, Clone)]
pub struct Limits {
    /// The largest request body accepted; larger ones get 413.
    pub max_body: usize,
    /// The largest request head (start line and headers) accepted; larger ones get 431.
    pub max_header: usize,
    /// How long a client may take to send a request head, from its first byte; then the connection is
    /// closed.
    pub header_timeout: Duration,
    /// How long a keep-alive connection may sit idle between requests, before the next head begins
    /// (`--keep-alive-idle`): a client between two refreshes keeps its connection (issue 58).
    pub keepalive_idle: Duration,
    /// How long a client may take to send a request body; then 408 and the connection is closed.
    pub body_timeout: Duration,
    /// The largest body of a login request (`POST /oauth/register`, `/oauth/token`; `--oauth`), and
    /// never more than `max_body`: a larger declared `Content-Length` gets 413 before any of it is
    /// read, as does a body that grows past it, and the connection is closed.
    pub oauth_max_body: usize,
    /// How long a login request's body may take to arrive whole, and never longer than
    /// `body_timeout`: a deadline rather than a rate, so at the default cap and time a body must
    /// come at 3.2 KiB/s at least, and one byte a second holds a place for this long only; then 408
    /// with `invalid_request` and the connection is closed.
    pub oauth_body_timeout: Duration,
    /// How long an answer may wait to be written while the client reads less than 64 KiB of it
    /// (`bb_hyper_smol::PROGRESS`); then the connection is closed and the answer's bytes are given back. An answer's bytes count against
    /// the process's memory budget (`--memory-budget`) until written.
    pub write_timeout: Duration,
    /// Connections admitted at once (a connection is admitted by its first request that passes the
    /// gate: Host, Origin, and the bearer token when there is one). At the cap, an admitted connection
    /// with no request in flight is closed to make room (one that never carried work for a verified
    /// session or person first, else the one idle longest); only when every admitted connection has
    /// a request in flight does the newcomer get 503, and its connection is closed. As many again
    /// may wait, not yet admitted; when they are all taken, the oldest of them is closed to make room
    /// for a newcomer. With `--oauth`, a login request on a connection not admitted does not admit
    /// it: it is served under a share of its own ([`Limits::anonymous_logins`]).
    pub max_connections: usize,
    /// Connections one peer (an IPv4 address, or an IPv6 /64) may hold, admitted or not; more are
    /// answered 503 and closed. `None`: a quarter of `max_connections`. Behind a reverse proxy every
    /// client is the proxy's address: name it in [`HttpOptions::trusted_proxies`].
    pub max_connections_per_peer: Option<usize>,
    /// Sessions alive at once. At the limit, an `initialize` ends the session idle longest (no
    /// POST waiting on it) to make room, or gets 503 with a JSON-RPC error when every session is busy.
    pub max_sessions: usize,
    /// Sessions one peer may hold (the same rule: its own idle-longest session makes room).
    /// `None`: a quarter of `max_sessions`.
    pub max_sessions_per_peer: Option<usize>,
    /// Sessions one person may hold in per-person mode (keyed by their Bitbucket token).
    /// `None`: a sixteenth of `max_sessions`.
    pub max_sessions_per_person: Option<usize>,
    /// How long Bitbucket's verdict on a person's token (per-person mode) is remembered.
    pub token_verdict_ttl: Duration,
    /// A session unused for this long is ended (its id then gets 404).
    pub session_idle: Duration,
    /// A request whose answer is not ready after this long is answered as an SSE stream, so the
    /// client sees that bb is working.
    pub sse_after: Duration,
    /// How often an open SSE stream carries a comment, so proxies keep it open.
    pub sse_keepalive: Duration,
    /// How often bb asks Bitbucket one cheap read for `/readyz` (which reads the last answer and
    /// fails once none came within two intervals).
    pub ready_interval: Duration,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_body: 4 * 1024 * 1024,
            max_header: 16 * 1024,
            header_timeout: Duration::from_secs(15),
            keepalive_idle: Duration::from_secs(75),
            body_timeout: Duration::from_secs(30),
            oauth_max_body: 16 * 1024,
            oauth_body_timeout: Duration::from_secs(5),
            write_timeout: Duration::from_secs(30),
            max_connections: 512,
            max_connections_per_peer: None,
            max_sessions: 4096,
            max_sessions_per_peer: None,
            max_sessions_per_person: None,
            token_verdict_ttl: Duration::from_secs(60),
            session_idle: Duration::from_secs(30 * 60),
            sse_after: Duration::from_secs(1),
            sse_keepalive: Duration::from_secs(15),
            ready_interval: Duration::from_secs(10),
        }
    }
}

impl Limits {
    /// Connections one peer may hold: [`Limits::max_connections_per_peer`], or a quarter of the cap.
    pub fn connections_per_peer(&self) -> usize {
        self.max_connections_per_peer.unwrap_or(self.max_connections / 4).max(1)
    }

    /// Login requests (`--oauth`: the metadata documents, `/oauth/…`) served at once on connections
    /// not admitted: a quarter of `max_connections`, at least one. Beyond it a login request gets 503
    /// with `Retry-After` and its connection is closed; the admitted places stay for `/mcp`.
    pub fn anonymous_logins(&self) -> usize {
        (self.max_connections / 4).max(1)
    }

    /// Sessions one peer may hold: [`Limits::max_sessions_per_peer`], or a quarter of the cap.
    pub fn sessions_per_peer(&self) -> usize {
        self.max_sessions_per_peer.unwrap_or(self.max_sessions / 4).max(1)
    }

    /// Sessions one person may hold: [`Limits::max_sessions_per_person`], or a sixteenth of the cap.
    pub fn sessions_per_person(&self) -> usize {
        self.max_sessions_per_person.unwrap_or(self.max_sessions / 16).max(1)
    }
}

/// The shortest bearer token accepted off loopback: 32 characters (a 128-bit random hex string).
pub const MIN_TOKEN_CHARS: usize = 32;

/// Where the server's bearer token came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BearerToken {
    /// No token: the server listens on loopback only and `BB_HTTP_TOKEN` is not set.
    None,
    /// The operator's token from `BB_HTTP_TOKEN`.
    FromEnvironment(String),
    /// A token made at start because the address is not loopback and none was given; print it once.
    Generated(String),
}

impl BearerToken {
    /// Decides the token: `BB_HTTP_TOKEN`'s value when set (then always required), else a fresh
    /// random token when the address is not loopback, else none. Off loopback a token from the
    /// environment shorter than [`MIN_TOKEN_CHARS`] is an error that says what to set.
    pub fn resolve(from_env: Option<String>, loopback: bool) -> std::io::Result<BearerToken> {
        match from_env.filter(|t| !t.trim().is_empty()) {
            Some(t) if !loopback => strong_enough(t.trim()).map(|()| BearerToken::FromEnvironment(t.trim().to_owned())),
            Some(t) => Ok(BearerToken::FromEnvironment(t.trim().to_owned())),
            None if loopback => Ok(BearerToken::None),
            None => Ok(BearerToken::Generated(random_hex(32)?)),
        }
    }

    /// The token requests must carry, if any.
    pub fn token(&self) -> Option<&str> {
        match self {
            BearerToken::None => None,
            BearerToken::FromEnvironment(t) | BearerToken::Generated(t) => Some(t),
        }
    }
}

/// Whether a bearer token is long enough to guard an address others can reach.
pub(crate) fn strong_enough(token: &str) -> std::io::Result<()> {
    let n = token.chars().count();
    if n >= MIN_TOKEN_CHARS {
        return Ok(());
    }
    Err(std::io::Error::new(
        std::io::ErrorKind::InvalidInput,
        format!(
            "BB_HTTP_TOKEN is too short ({n} of at least {MIN_TOKEN_CHARS} characters needed off loopback): \
             set it to a random value such as the output of `openssl rand -hex 32`, or unset it and bb makes one"
        ),
    ))
}

/// `bytes` bytes from the operating system's secure random source, as lowercase hex.
pub(crate) fn random_hex(bytes: usize) -> std::io::Result<String> {
    let mut buf = vec![0u8; bytes];
    getrandom::fill(&mut buf).map_err(|e| std::io::Error::other(format!("no secure random source: {e}")))?;
    let mut out = String::with_capacity(bytes * 2);
    for b in buf {
        out.push(char::from(HEX[usize::from(b >> 4)]));
        out.push(char::from(HEX[usize::from(b & 15)]));
    }
    Ok(out)
}

const HEX: &[u8; 16] = b"0123456789abcdef";

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_token_is_required_off_loopback_and_whenever_the_operator_sets_one() {
        assert_eq!(BearerToken::resolve(None, true).unwrap(), BearerToken::None);
        assert!(matches!(BearerToken::resolve(None, false).unwrap(), BearerToken::Generated(t) if t.len() == 64));
        assert_eq!(BearerToken::resolve(Some("abc".into()), true).unwrap(), BearerToken::FromEnvironment("abc".into()));
        assert_eq!(BearerToken::resolve(Some("  ".into()), true).unwrap(), BearerToken::None);
        let long = "0123456789abcdef0123456789abcdef".to_owned();
        assert_eq!(BearerToken::resolve(Some(long.clone()), false).unwrap(), BearerToken::FromEnvironment(long));
    }

    #[test]
    fn a_short_token_is_refused_off_loopback_with_a_message_that_says_what_to_set() {
        let e = BearerToken::resolve(Some("x".into()), false).unwrap_err();
        assert!(e.to_string().contains("BB_HTTP_TOKEN is too short (1 of at least 32"), "{e}");
        assert!(e.to_string().contains("set it to"), "{e}");
        assert!(BearerToken::resolve(Some("a".repeat(31)), false).is_err());
    }

    #[test]
    fn per_peer_limits_default_to_shares_of_the_caps() {
        let l = Limits::default();
        assert_eq!((l.connections_per_peer(), l.sessions_per_peer(), l.sessions_per_person()), (128, 1024, 256));
        let l = Limits { max_connections: 2, max_sessions: 3, max_sessions_per_person: Some(9), ..Limits::default() };
        assert_eq!((l.connections_per_peer(), l.sessions_per_peer(), l.sessions_per_person()), (1, 1, 9));
        assert_eq!((Limits::default().anonymous_logins(), l.anonymous_logins()), (128, 1));
    }

    #[test]
    fn random_hex_is_hex_of_the_asked_length_and_differs_each_time() {
        let a = random_hex(16).unwrap();
        assert_eq!(a.len(), 32);
        assert!(a.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_ne!(a, random_hex(16).unwrap());
    }
}
