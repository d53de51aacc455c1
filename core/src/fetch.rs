//! A Bitbucket request as the core asks for it, and its outcome as the shell observed it. The shell
//! adds the base URL, credentials, timeouts and retries; the core never sees a socket.

use std::sync::Arc;

use serde_json::Value;

pub use crate::bitbucket::budget::Share;
use crate::bitbucket::model::DiffSet;
use crate::bitbucket::window::BrowseJson;
pub use crate::bitbucket::window::LineShare;

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
    /// For an answer that is one file's diff or a window of a file's lines: how much of it the call
    /// keeps. A shell that reads the body as it arrives decodes it with [`crate::decode`] on its own
    /// thread, keeping only this share, and hands back a [`Decoded`] instead of the bytes; any other
    /// shell hands the bytes, and the core cuts them the same way.
    pub keep: Option<Keep>,
    /// A live view's refresh (`refresh_view`), not the model's call: a shell that keeps to Bitbucket's
    /// rate limit spends its budget on the model's requests first and may answer this one
    /// [`FetchErrorKind::Deferred`] instead of sending it. The reads a refresh asks for together are
    /// one [`Batch`]: a shell sends all of them or none, so a held-back refresh spends nothing.
    pub refresh: Option<Batch>,
}

/// The reads of one refresh asked for together: which batch, and how many reads it holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Batch {
    /// Unique among the batches of every server given the same [`crate::Caches`] (the HTTP shell's shards).
    pub id: u64,
    /// How many reads the batch holds.
    pub reads: u32,
}

impl FetchRequest {
    /// A GET of `path` with `query`.
    pub fn get(path: impl Into<String>, query: Vec<(String, String)>) -> Self {
        FetchRequest { method: Method::Get, path: path.into(), query, body: None, keep: None, refresh: None }
    }

    /// The same request, its answer one file's diff of which the call keeps `share`.
    pub fn keeping(mut self, share: Share) -> Self {
        self.keep = Some(Keep::Diff(share));
        self
    }

    /// The same request, its answer a window of a file's lines of which the call keeps `share`.
    pub fn keeping_lines(mut self, share: LineShare) -> Self {
        self.keep = Some(Keep::Lines(share));
        self
    }
}

/// What a call keeps of an answer the shell may decode as it reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Keep {
    /// One file's diff (`…/diff/{path}`): this share of its lines.
    Diff(Share),
    /// A browse answer (`…/browse/{path}`): this share of a window's lines.
    Lines(LineShare),
    /// A file's bytes (`…/raw/{path}`): at most this many; a longer file is said to be, its bytes past
    /// the cap never read.
    Bytes(usize),
}

/// An answer the shell decoded while it read it, keeping the request's [`Keep`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decoded {
    /// One file's diff.
    Diff(DiffAnswer),
    /// A browse answer: a window of lines, a folder's page, or a binary file.
    Lines(LinesAnswer),
    /// A file's first bytes, within [`Keep::Bytes`]' cap.
    Bytes(BytesAnswer),
}

impl Decoded {
    /// Runs `scrub` over every text the answer carries: a shell removes its credentials from it as it
    /// does from a body's bytes.
    pub fn scrub(self, scrub: impl Fn(&str) -> Option<String>) -> Decoded {
        match self {
            Decoded::Diff(d) => Decoded::Diff(d.scrub(scrub)),
            Decoded::Lines(l) => Decoded::Lines(l.scrub(scrub)),
            Decoded::Bytes(b) => Decoded::Bytes(b.scrub(scrub)),
        }
    }
}

/// A file's bytes as the shell read them, within the request's cap: the bytes, and whether the file
/// ended within it (`false`: it is longer, and the bytes past the cap were not read). Cheap to clone.
#[derive(Clone, PartialEq, Eq)]
pub struct BytesAnswer {
    /// The bytes read, at most the cap.
    pub bytes: Arc<Vec<u8>>,
    /// The file ended within the cap.
    pub whole: bool,
}

impl std::fmt::Debug for BytesAnswer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "BytesAnswer({} byte(s), whole: {})", self.bytes.len(), self.whole)
    }
}

impl BytesAnswer {
    /// Runs `scrub` over the bytes when they are text (an SVG): a credential in a file is removed as from
    /// any answer; bytes that are not UTF-8 carry no text a credential could be read in.
    pub fn scrub(self, scrub: impl Fn(&str) -> Option<String>) -> BytesAnswer {
        match std::str::from_utf8(&self.bytes).ok().and_then(&scrub) {
            Some(clean) => BytesAnswer { bytes: Arc::new(clean.into_bytes()), whole: self.whole },
            None => self,
        }
    }

    /// The first `cap` bytes of a whole body (a shell that hands bytes, not a decode).
    pub fn of(body: &[u8], cap: usize) -> BytesAnswer {
        BytesAnswer { bytes: Arc::new(body[..body.len().min(cap)].to_vec()), whole: body.len() <= cap }
    }
}

/// A browse answer as the shell decoded it while it read it: the window's lines the share kept (the
/// rest skipped and counted), or why the JSON could not be read. Cheap to clone.
#[derive(Clone)]
pub struct LinesAnswer(pub(crate) Arc<Result<BrowseJson, String>>);

impl PartialEq for LinesAnswer {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for LinesAnswer {}

impl std::fmt::Debug for LinesAnswer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &*self.0 {
            Ok(b) => match &b.lines {
                Some(k) => {
                    write!(f, "LinesAnswer({} line(s) kept, {} cut, {} dropped)", k.lines.len(), k.cut.len(), k.dropped)
                }
                None => write!(f, "LinesAnswer(no lines)"),
            },
            Err(e) => write!(f, "LinesAnswer(unreadable: {e})"),
        }
    }
}

impl LinesAnswer {
    /// Runs `scrub` over every line kept.
    pub fn scrub(self, scrub: impl Fn(&str) -> Option<String>) -> LinesAnswer {
        let inner = match Arc::try_unwrap(self.0).unwrap_or_else(|shared| (*shared).clone()) {
            Ok(mut b) => {
                for line in b.lines.iter_mut().flat_map(|k| k.lines.iter_mut()) {
                    if let Some(clean) = scrub(line) {
                        *line = clean;
                    }
                }
                Ok(b)
            }
            Err(e) => Err(scrub(&e).unwrap_or(e)),
        };
        LinesAnswer(Arc::new(inner))
    }
}

/// One file's diff as the shell decoded it while it read the answer: what the share kept and how many
/// lines it skipped, or why the JSON could not be read. Cheap to clone (a shared read's followers get
/// the same one).
#[derive(Clone)]
pub struct DiffAnswer(pub(crate) Arc<Result<(DiffSet, usize), String>>);

impl PartialEq for DiffAnswer {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for DiffAnswer {}

impl std::fmt::Debug for DiffAnswer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &*self.0 {
            Ok((set, skipped)) => write!(f, "DiffAnswer({} file(s), {skipped} line(s) skipped)", set.diffs.len()),
            Err(e) => write!(f, "DiffAnswer(unreadable: {e})"),
        }
    }
}

impl DiffAnswer {
    /// Runs `scrub` over every text the diff carries (lines, comments): a shell removes its credentials
    /// from it as it does from a body's bytes.
    pub fn scrub(self, scrub: impl Fn(&str) -> Option<String>) -> DiffAnswer {
        let inner = match Arc::try_unwrap(self.0).unwrap_or_else(|shared| (*shared).clone()) {
            Ok((mut set, skipped)) => {
                for d in &mut set.diffs {
                    d.scrub(&scrub);
                }
                Ok((set, skipped))
            }
            Err(e) => Err(scrub(&e).unwrap_or(e)),
        };
        DiffAnswer(Arc::new(inner))
    }
}

/// Reads an answer from `body` as it arrives, keeping `keep` of it: one file's diff's lines, or a
/// window's lines (the rest are parsed and dropped, never held). An error reading `body` (the answer
/// broke off) is the error; JSON that cannot be read is a [`Decoded`] that says so. Runs on the shell's
/// thread, never the driver's.
pub fn decode(keep: Keep, body: &mut dyn std::io::Read) -> std::io::Result<Decoded> {
    let reader = std::io::BufReader::with_capacity(64 * 1024, body);
    let unreadable = |e: serde_json::Error| format!("Bitbucket's answer could not be read ({e}).");
    match keep {
        Keep::Diff(share) => {
            let (read, skipped) =
                crate::bitbucket::budget::keep(share, || serde_json::from_reader::<_, DiffSet>(reader));
            match read {
                Ok(set) => Ok(Decoded::Diff(DiffAnswer(Arc::new(Ok((set, skipped)))))),
                Err(e) if e.is_io() => Err(std::io::Error::from(e)),
                Err(e) => Ok(Decoded::Diff(DiffAnswer(Arc::new(Err(unreadable(e)))))),
            }
        }
        Keep::Lines(share) => {
            match crate::bitbucket::window::keep(share, || serde_json::from_reader::<_, BrowseJson>(reader)) {
                Ok(b) => Ok(Decoded::Lines(LinesAnswer(Arc::new(Ok(b))))),
                Err(e) if e.is_io() => Err(std::io::Error::from(e)),
                Err(e) => Ok(Decoded::Lines(LinesAnswer(Arc::new(Err(unreadable(e)))))),
            }
        }
        Keep::Bytes(cap) => {
            // One byte past the cap tells a longer file from one that fills it; the rest is never read.
            let mut bytes = Vec::new();
            std::io::Read::read_to_end(&mut std::io::Read::take(reader, cap as u64 + 1), &mut bytes)?;
            let whole = bytes.len() <= cap;
            bytes.truncate(cap);
            Ok(Decoded::Bytes(BytesAnswer { bytes: Arc::new(bytes), whole }))
        }
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
        FetchOutcome::Response(FetchResponse {
            status,
            body: body.into(),
            retry_after_s: None,
            user: None,
            decoded: None,
            credential: Credential::Unknown,
        })
    }

    /// A failure of this kind, with a detail that names no secret.
    pub fn failed(kind: FetchErrorKind, detail: impl Into<String>) -> FetchOutcome {
        FetchOutcome::Failed(FetchError { kind, detail: detail.into(), may_have_arrived: false })
    }

    /// A live view's refresh read put off, unsent, because the refreshes going left its batch no room
    /// among the connections to Bitbucket: asked again after
    /// [`crate::limits::REFRESH_PUT_OFF_MS`] and `spread` (out of `u16::MAX`) of as much again, so the
    /// views put off together come back apart.
    pub fn put_off(spread: u16) -> FetchOutcome {
        let base = crate::limits::REFRESH_PUT_OFF_MS;
        let after_ms = base + base * u64::from(spread) / u64::from(u16::MAX);
        FetchOutcome::failed(
            FetchErrorKind::Deferred { after_ms },
            "put off while Bitbucket is busy (a refresh; the model's calls come first for its connections)",
        )
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
    /// For a request with [`FetchRequest::keep`] answered 2xx, what the shell decoded as it read it
    /// ([`decode`]); `body` is then empty.
    pub decoded: Option<Decoded>,
    /// The kind of credential the request carried, so that a refusal's sentence sends the person to
    /// the right one (never the credential itself).
    pub credential: Credential,
}

/// The kind of credential a request carried, as the shell that sent it knows: what Bitbucket's
/// 401 or 403 is about.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum Credential {
    /// The shell did not say (a test, a stand-in).
    #[default]
    Unknown,
    /// None: bb is configured with no credentials.
    Anonymous,
    /// The operator's HTTP access token (`BITBUCKET_TOKEN`), as `Authorization: Bearer`.
    Token,
    /// The operator's user and password (`BITBUCKET_USER`, `BITBUCKET_PASSWORD`), as `Authorization: Basic`.
    Password,
    /// The person's own token, as their client gave it to bb (the HTTP transport's per-person mode).
    PersonalToken,
    /// The token of the person's Bitbucket login (`--oauth`).
    Login,
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
    /// Not sent: a live view's refresh the shell held back to keep within the Bitbucket user's rate
    /// limit ([`FetchRequest::refresh`]); there is room for it again after this long.
    Deferred {
        /// How long from now, in milliseconds.
        after_ms: u64,
    },
}

/// Identifies one outstanding Bitbucket request across the session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Ticket(pub u64);
