//! A Bitbucket request as the core asks for it, and its outcome as the shell observed it. The shell
//! adds the base URL, credentials, timeouts and retries; the core never sees a socket.

use serde_json::Value;

/// An HTTP method bb uses against Bitbucket.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Method {
    /// GET: reads; safe to retry.
    Get,
    /// POST: creates; never retried blindly.
    Post,
    /// PUT: updates.
    Put,
    /// DELETE: removes.
    Delete,
}

impl Method {
    /// The method's name on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
            Method::Put => "PUT",
            Method::Delete => "DELETE",
        }
    }
}

/// One Bitbucket request a plan needs. The shell adds the base URL, credentials and timeouts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FetchRequest {
    /// The HTTP method; it also decides whether the shell may retry ([`crate::retry::decide`]).
    pub method: Method,
    /// The path below the server's base URL, starting with `/` (e.g. `/rest/api/latest/...`).
    pub path: String,
    /// Query parameters, in order.
    pub query: Vec<(String, String)>,
    /// A JSON body, for writes.
    pub body: Option<Value>,
}

impl FetchRequest {
    /// A GET of `path` with `query`.
    pub fn get(path: impl Into<String>, query: Vec<(String, String)>) -> Self {
        FetchRequest { method: Method::Get, path: path.into(), query, body: None }
    }
}

/// The outcome of a Bitbucket request, as the shell observed it (after the shell's retries).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FetchOutcome {
    /// Bitbucket answered (any status).
    Response(FetchResponse),
    /// No (complete) answer.
    Failed(FetchError),
}

impl FetchOutcome {
    /// A response with this status and body and no `Retry-After`.
    pub fn response(status: u16, body: impl Into<Vec<u8>>) -> FetchOutcome {
        FetchOutcome::Response(FetchResponse { status, body: body.into(), retry_after_s: None, user: None })
    }

    /// A failure of this kind, with a detail that names no secret.
    pub fn failed(kind: FetchErrorKind, detail: impl Into<String>) -> FetchOutcome {
        FetchOutcome::Failed(FetchError { kind, detail: detail.into(), may_have_arrived: false })
    }
}

/// A complete HTTP answer from Bitbucket.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FetchResponse {
    /// The HTTP status.
    pub status: u16,
    /// The whole body: an answer larger than the shell accepts comes as [`FetchErrorKind::BrokenResponse`]
    /// instead, never cut.
    pub body: Vec<u8>,
    /// `Retry-After` in seconds, when Bitbucket sent one (429, 503).
    pub retry_after_s: Option<u64>,
    /// The slug of the user Bitbucket authenticated, from the `X-AUSERNAME` header of an
    /// authenticated response (reference/bitbucket-dc.md "Users": [rec in third-party clients;
    /// assumed for 9.x]). The session remembers it for tools that act as the current user.
    pub user: Option<String>,
}

/// Why a Bitbucket request got no complete answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FetchError {
    /// What failed: decides whether the shell retries ([`crate::retry::decide`]) and how a tool words it.
    pub kind: FetchErrorKind,
    /// What happened, in words that name no secret (no token, no password, no Authorization header).
    pub detail: String,
    /// Whether the request may have reached Bitbucket (it was sent, then the answer failed):
    /// a write in this state has an unknown outcome and must not be retried blindly.
    pub may_have_arrived: bool,
}

/// The kinds of [`FetchError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FetchErrorKind {
    /// bb has no Bitbucket server configured.
    NotConfigured,
    /// No connection: name resolution, refused, reset, proxy.
    Unreachable,
    /// TLS failed: an untrusted certificate, or a client certificate refused.
    Tls,
    /// No answer in time.
    Timeout,
    /// The answer broke off, or was larger than bb accepts.
    BrokenResponse,
}

/// Identifies one outstanding Bitbucket request across the session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Ticket(pub u64);
