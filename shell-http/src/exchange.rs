//! What each request gets, once the gate admitted it: POST carries messages (JSON or SSE answers,
//! 202 for notifications), DELETE ends a session, GET has nothing to push (405), OPTIONS is a CORS
//! preflight. Every refusal is a status with a JSON-RPC error that says what to do; an `Accept`
//! that rules out either answer type gets 406.

use std::sync::Arc;

use bb_core::{Level, ProtocolVersion};
use bb_drive::{Bitbucket, Logger, PersonalToken, Process, now_ms};
use hyper::body::Incoming;
use hyper::header::{
    ACCEPT, ACCESS_CONTROL_ALLOW_HEADERS, ACCESS_CONTROL_ALLOW_METHODS, ACCESS_CONTROL_ALLOW_ORIGIN,
    ACCESS_CONTROL_EXPOSE_HEADERS, ACCESS_CONTROL_MAX_AGE, ALLOW, AUTHORIZATION, CONTENT_LENGTH, HeaderMap, HeaderName,
    HeaderValue, RETRY_AFTER, VARY, WWW_AUTHENTICATE,
};
use hyper::http::request::Parts;
use hyper::{Method, Request, Response, StatusCode};
use serde_json::Value;

use crate::census::{Bound, Owner};
use crate::drain::{self, Drain};
use crate::gate::{Gate, Refusal, bearer, same_secret};
use crate::health::{self, Readiness};
use crate::oauth::{self, Authority};
use crate::observe::Timing;
use crate::options::HttpOptions;
use crate::peer::Peer;
use crate::persons::{Persons, Undecided, Verdict};
use crate::registry::Registry;
use crate::reply::{self, Reply, SseStream, closing, empty, parse_error, refusal};
use crate::request::{BodyError, accepts_json_and_sse, asks_for_progress, initialize_id, is_json, read_body};
use crate::sessionless;
use crate::sessions::{Part, SessionRef, Sessions, WaiterGuard};
use crate::throttle::{Throttle, and_more};

const ENDPOINT: &str = "/mcp";
const SESSION_ID: &str = "mcp-session-id";
const PROTOCOL_VERSION: &str = "mcp-protocol-version";
const METHODS: &str = "GET, POST, DELETE, OPTIONS";
/// The methods of the login's paths.
const OAUTH_METHODS: &str = "GET, POST, OPTIONS";
/// The headers a browser-resident client's script may read: the session id, and the 401's
/// challenge that names the login's metadata (docs/reference/oauth.md "CORS for browser clients").
const EXPOSED: &str = "mcp-session-id, www-authenticate";

/// What every request of one server is answered with.
pub(crate) struct Endpoint {
    /// Whether a request is admitted at all.
    pub(crate) gate: Gate,
    /// The live sessions and their driver.
    pub(crate) sessions: Arc<Sessions>,
    /// The application's metrics and memory budget, which the sessions' drivers were given too.
    pub(crate) process: Process,
    /// The operator's choices and limits.
    pub(crate) options: HttpOptions,
    /// `options.per_user_token_header`, parsed.
    pub(crate) per_user_header: Option<HeaderName>,
    /// The operator's log.
    pub(crate) logger: Logger,
    /// Bitbucket, to ask whether a person's token is accepted (per-person mode).
    pub(crate) bitbucket: Arc<dyn Bitbucket>,
    /// Bitbucket's verdicts on persons' tokens.
    pub(crate) persons: Persons,
    /// How often the log says sessions were ended or refused to make room.
    pub(crate) crowded: Throttle,
    /// How often the log says a request was refused at the gate.
    pub(crate) refusals: Throttle,
    /// Whether the server is stopping, and whether its grace period is over.
    pub(crate) drain: Arc<Drain>,
    /// Whether Bitbucket answered the last probe (`/readyz`).
    pub(crate) readiness: Arc<Readiness>,
    /// The exposed tools' names: the only tool names the metrics carry.
    pub(crate) tools: Vec<&'static str>,
    /// Logging in with Bitbucket (`--oauth`): who each request's token is.
    pub(crate) oauth: Option<Arc<Authority>>,
    /// How much anonymous login traffic is taken: allowances per peer, bodies, metadata fetches.
    pub(crate) admission: oauth::Admission,
}

/// Marks an answer as work for a verified session or person: an `initialize` that started a
/// session, a request of a live session (with its person's token, in per-person mode), a 2026-07-28
/// request whose person's token Bitbucket accepted; always a 2xx. It proves the connection that
/// carried it (see `connections`); the server takes it off before the answer is sent. Health checks,
/// preflights and refusals never carry it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Proven;

/// `r`, marked [`Proven`] if it is a success.
fn proven(mut r: Response<Reply>) -> Response<Reply> {
    if r.status().is_success() {
        r.extensions_mut().insert(Proven);
    }
    r
}

/// Answers one request that arrived from `peer`.
pub(crate) async fn respond(endpoint: Arc<Endpoint>, peer: Peer, req: Request<Incoming>) -> Response<Reply> {
    let endpoint = &*endpoint;
    let (parts, body) = req.into_parts();
    if parts.method == Method::OPTIONS {
        return match endpoint.gate.admit_preflight(&parts.uri, &parts.headers) {
            Err(why) => refused(endpoint, why),
            Ok(origin) => preflight(endpoint, origin, parts.uri.path()),
        };
    }
    if let Some(check) = health_check(&parts) {
        let mut r = match endpoint.gate.admit_preflight(&parts.uri, &parts.headers) {
            Err(why) => return unread(refused(endpoint, why), &parts),
            Ok(origin) => {
                let mut r = check(endpoint);
                if let Some(origin) = origin {
                    cors(r.headers_mut(), origin);
                }
                r
            }
        };
        if parts.method == Method::HEAD {
            *r.body_mut() = Reply::Full(None);
        }
        return unread(r, &parts);
    }
    let origin = match endpoint.gate.admit(&parts.uri, &parts.headers) {
        Err(why) => return unread(refused(endpoint, why), &parts),
        Ok(origin) => origin,
    };
    let mut response = route(endpoint, peer, parts, body).await;
    if let Some(origin) = origin {
        cors(response.headers_mut(), origin);
    }
    response
}

/// `GET` or `HEAD` of `/healthz` or `/readyz`: the answer it gets, which needs no token.
fn health_check(parts: &Parts) -> Option<fn(&Endpoint) -> Response<Reply>> {
    if parts.method != Method::GET && parts.method != Method::HEAD {
        return None;
    }
    match parts.uri.path() {
        "/healthz" => Some(|_| health::healthz()),
        "/readyz" => Some(|e| health::readyz(&e.readiness, &e.drain)),
        _ => None,
    }
}

async fn route(endpoint: &Endpoint, peer: Peer, parts: Parts, body: Incoming) -> Response<Reply> {
    if let Some(authority) = &endpoint.oauth
        && oauth::is_oauth_path(parts.uri.path())
    {
        let r = oauth::serve(authority, &endpoint.admission, peer, &parts, body).await;
        return unread(r, &parts);
    }
    if parts.uri.path() != ENDPOINT {
        return unread(refusal(StatusCode::NOT_FOUND, None, "Not found: bb serves MCP at /mcp."), &parts);
    }
    // With logins, every request to /mcp names its person by bb's access token.
    let login = match &endpoint.oauth {
        None => None,
        Some(authority) => {
            let bearer =
                parts.headers.get(AUTHORIZATION).and_then(|v| v.to_str().ok()).and_then(bearer).map(str::to_owned);
            let a = Arc::clone(authority);
            match smol::unblock(move || a.authenticate(bearer.as_deref(), now_ms())).await {
                Ok(person) => Some(person),
                Err(why) => return unread(oauth::challenge(authority, &why), &parts),
            }
        }
    };
    match parts.method {
        Method::POST => post(endpoint, peer, parts, body, login).await,
        Method::DELETE => delete(endpoint, &parts, login.as_ref()),
        Method::GET if parts.headers.contains_key(SESSION_ID) => get_stream(endpoint, &parts, login.as_ref()),
        _ => {
            let mut r = refusal(
                StatusCode::METHOD_NOT_ALLOWED,
                None,
                "Method not allowed: bb has nothing to push on a GET stream; POST messages to /mcp.",
            );
            r.headers_mut().insert(ALLOW, HeaderValue::from_static(METHODS));
            unread(r, &parts)
        }
    }
}

async fn post(
    endpoint: &Endpoint,
    peer: Peer,
    parts: Parts,
    body: Incoming,
    login: Option<PersonalToken>,
) -> Response<Reply> {
    let h = &parts.headers;
    if endpoint.drain.begun() {
        let mut r = closing(refusal(StatusCode::SERVICE_UNAVAILABLE, None, drain::REFUSED));
        r.headers_mut().insert(RETRY_AFTER, HeaderValue::from_static("1"));
        return r;
    }
    if !accepts_json_and_sse(h) {
        let message = "Not acceptable: the client must accept both application/json and text/event-stream.";
        return unread(refusal(StatusCode::NOT_ACCEPTABLE, None, message), &parts);
    }
    if !is_json(h) {
        let message = "Unsupported media type: POST a JSON-RPC message as application/json.";
        return unread(refusal(StatusCode::UNSUPPORTED_MEDIA_TYPE, None, message), &parts);
    }
    let limits = &endpoint.options.limits;
    let declared = h.get(CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limits.max_body as u64) {
        return closing(too_large(limits.max_body));
    }
    // A 2026-07-28 request's Mcp-Session-Id is ignored: that revision has no sessions.
    let modern = h.get(PROTOCOL_VERSION).is_some_and(|v| v.as_bytes() == sessionless::VERSION.as_bytes());
    let existing = match h.get(SESSION_ID) {
        Some(_) if modern => None,
        None => None,
        Some(id) => match session_for(endpoint, h, id, login.as_ref()) {
            Ok(session) => Some(session),
            Err(r) => return unread(*r, &parts),
        },
    };
    let bytes = match read_body(body, limits.max_body, limits.body_timeout).await {
        Ok(b) => b,
        Err(BodyError::TooLarge) => return closing(too_large(limits.max_body)),
        Err(BodyError::Slow) => {
            let message = "Request timeout: the body did not arrive in time.";
            return closing(refusal(StatusCode::REQUEST_TIMEOUT, None, message));
        }
        Err(BodyError::Broken) => {
            return closing(refusal(StatusCode::BAD_REQUEST, None, "Bad request: the body could not be read."));
        }
    };
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return parse_error("Parse error: the body is empty; POST one JSON-RPC message.");
    }
    match existing {
        Some(session) => proven(answer(endpoint, session, &bytes, false, None).await),
        None => match serde_json::from_slice::<Value>(&bytes) {
            Ok(body) if sessionless::is_stateless(h, &body) => once(endpoint, peer, h, &bytes, &body, login).await,
            _ => initialize(endpoint, peer, h, &bytes, login).await,
        },
    }
}

/// A 2026-07-28 request: its headers checked against its body, the person's token vouched for,
/// then answered by a session of its own that closes with the answer.
async fn once(
    endpoint: &Endpoint,
    peer: Peer,
    h: &HeaderMap,
    bytes: &[u8],
    body: &Value,
    login: Option<PersonalToken>,
) -> Response<Reply> {
    let id = body.get("id").cloned().unwrap_or(Value::Null);
    if let Err(why) = sessionless::check_headers(h, body) {
        return sessionless::mismatch(Some(&id), &why);
    }
    let person = match person_of(endpoint, h, &id, login) {
        Ok(p) => p,
        Err(r) => return *r,
    };
    if let Some(token) = person.as_ref().filter(|p| p.user().is_none())
        && let Err(r) = vouch(endpoint, peer, token, &id).await
    {
        return *r;
    }
    let vouched = person.is_some();
    let session = endpoint.sessions.open_once(person);
    let r = answer(endpoint, session, bytes, true, Some(body)).await;
    if vouched { proven(r) } else { r }
}

/// The person's token a request carries, in per-person mode (`None` otherwise), or their login's;
/// the refusal when it carries none.
fn person_of(
    endpoint: &Endpoint,
    h: &HeaderMap,
    id: &Value,
    login: Option<PersonalToken>,
) -> Result<Option<PersonalToken>, Box<Response<Reply>>> {
    if login.is_some() {
        return Ok(login);
    }
    let Some(header) = &endpoint.per_user_header else { return Ok(None) };
    match h.get(header).and_then(|v| v.to_str().ok()).map(str::trim).filter(|t| !t.is_empty()) {
        Some(token) => Ok(Some(PersonalToken::new(token))),
        None => {
            let name = endpoint.options.per_user_token_header.as_deref().unwrap_or_default();
            let message = format!(
                "Bad request: this server acts with each person's own Bitbucket token; send yours in the `{name}` header."
            );
            Err(Box::new(refusal(StatusCode::BAD_REQUEST, Some(id.clone()), &message)))
        }
    }
}

/// The live session a request names, after checking its protocol version and person (with logins:
/// the same Bitbucket user, whose token as it is now the session takes).
fn session_for(
    endpoint: &Endpoint,
    h: &HeaderMap,
    id: &HeaderValue,
    login: Option<&PersonalToken>,
) -> Result<SessionRef, Box<Response<Reply>>> {
    let (session, person) = id.to_str().ok().and_then(|id| endpoint.sessions.find(id)).ok_or_else(|| {
        let message = "Session not found: it ended or never existed. Send `initialize` without Mcp-Session-Id to start a new one.";
        Box::new(refusal(StatusCode::NOT_FOUND, None, message))
    })?;
    if let Some(v) = h.get(PROTOCOL_VERSION) {
        // Absent means 2025-03-26 (the revision before the header existed), which bb speaks.
        if v.to_str().ok().and_then(ProtocolVersion::parse).is_none() {
            let message = format!(
                "Bad request: unsupported MCP-Protocol-Version `{}`; bb speaks {}.",
                String::from_utf8_lossy(v.as_bytes()).chars().take(40).collect::<String>(),
                ProtocolVersion::ALL.map(ProtocolVersion::as_str).join(", ")
            );
            return Err(Box::new(refusal(StatusCode::BAD_REQUEST, None, &message)));
        }
    }
    if let Some(login) = login {
        if person.as_ref().and_then(PersonalToken::user) != login.user() {
            let message = "Forbidden: this session belongs to another person; send `initialize` to start your own.";
            return Err(Box::new(refusal(StatusCode::FORBIDDEN, None, message)));
        }
        endpoint.sessions.set_person(session, login.clone());
        return Ok(session);
    }
    if let (Some(header), Some(expected)) = (&endpoint.per_user_header, &person) {
        let name = endpoint.options.per_user_token_header.as_deref().unwrap_or_default();
        let given = h.get(header).map(HeaderValue::as_bytes).unwrap_or_default();
        if !same_secret(given, expected.secret().as_bytes()) {
            let message =
                format!("Forbidden: the `{name}` header must carry the Bitbucket token this session started with.");
            return Err(Box::new(refusal(StatusCode::FORBIDDEN, None, &message)));
        }
    }
    Ok(session)
}

/// A POST without a session: it must be `initialize`, which starts one. In per-person mode the
/// person's token is first put to Bitbucket; then the session takes a seat (ending the session idle
/// longest under a cap that is reached), and keeps it only if its `initialize` succeeds.
async fn initialize(
    endpoint: &Endpoint,
    peer: Peer,
    h: &HeaderMap,
    bytes: &[u8],
    login: Option<PersonalToken>,
) -> Response<Reply> {
    let Some(id) = initialize_id(bytes) else {
        let message = "Bad request: Mcp-Session-Id header is required. Send `initialize` first to get one.";
        return refusal(StatusCode::BAD_REQUEST, None, message);
    };
    let person = match person_of(endpoint, h, &id, login) {
        Ok(p) => p,
        Err(r) => return *r,
    };
    if let Some(token) = person.as_ref().filter(|p| p.user().is_none())
        && let Err(r) = vouch(endpoint, peer, token, &id).await
    {
        return *r;
    }
    let owner = Owner { peer, person: person.as_ref().map(|t| endpoint.persons.key(t)) };
    let seat = match endpoint.sessions.seat(owner) {
        Ok((seat, ended)) => {
            if ended > 0 {
                crowded(endpoint, &format!("ended {ended} idle session(s) to make room for a new one"));
            }
            seat
        }
        Err(bound) => {
            crowded(endpoint, &format!("refused a session: {}", limit_reached(endpoint, bound, peer)));
            return busy(endpoint, bound, peer, id);
        }
    };
    let session_id = match Registry::new_id() {
        Ok(s) => s,
        Err(e) => {
            endpoint.logger.log(Level::Error, &e.to_string());
            return refusal(StatusCode::INTERNAL_SERVER_ERROR, Some(id), "Internal error: no secure random source.");
        }
    };
    let session = endpoint.sessions.open(&session_id, person);
    let opening = Opening { sessions: &endpoint.sessions, session, kept: false };
    let mut response = answer(endpoint, opening.session, bytes, false, None).await;
    if !endpoint.sessions.initialized(opening.session) {
        // A failed initialize starts no session (the opening closes it; the seat is given back).
        return response;
    }
    let session = opening.keep();
    let header = HeaderValue::from_str(&session_id);
    endpoint.sessions.admit(session, session_id, seat);
    if let Ok(v) = header {
        response.headers_mut().insert(SESSION_ID, v);
    }
    proven(response)
}

/// Asks Bitbucket (or remembers) whether it accepts `token`; the refusal to send when it does not.
async fn vouch(endpoint: &Endpoint, peer: Peer, token: &PersonalToken, id: &Value) -> Result<(), Box<Response<Reply>>> {
    let name = endpoint.options.per_user_token_header.as_deref().unwrap_or_default();
    let refuse = |status: StatusCode, message: &str| Box::new(refusal(status, Some(id.clone()), message));
    match endpoint.persons.verdict(&endpoint.bitbucket, peer, token).await {
        Ok(Verdict::Accepted) => Ok(()),
        Ok(Verdict::Refused(status)) => {
            endpoint.logger.log(
                Level::Notice,
                &format!("refused a session from {peer}: Bitbucket did not accept the person's token ({status})"),
            );
            let message = format!(
                "Forbidden: Bitbucket did not accept the token in the `{name}` header (it answered {status}). \
                 Send a valid Bitbucket personal access token."
            );
            Err(refuse(StatusCode::FORBIDDEN, &message))
        }
        Err(Undecided::Busy) => {
            let message = "Too many requests: this address is already starting several sessions; try again shortly.";
            let mut r = refuse(StatusCode::TOO_MANY_REQUESTS, message);
            r.headers_mut().insert(RETRY_AFTER, HeaderValue::from_static("1"));
            Err(r)
        }
        Err(why @ (Undecided::Spent(wait_s) | Undecided::Crowded(wait_s))) => {
            let message = if matches!(why, Undecided::Spent(_)) {
                format!(
                    "Too many requests: Bitbucket refused several tokens from this address lately; try again in {wait_s} s."
                )
            } else {
                format!(
                    "Too many requests: Bitbucket refused a token from this address lately, and bb asks it about no more \
                     refused tokens for now (many came from other addresses); try again in {wait_s} s."
                )
            };
            let mut r = refuse(StatusCode::TOO_MANY_REQUESTS, &message);
            if let Ok(v) = HeaderValue::from_str(&wait_s.to_string()) {
                r.headers_mut().insert(RETRY_AFTER, v);
            }
            Err(r)
        }
        Err(Undecided::Unanswered(why)) => {
            endpoint.logger.log(Level::Warning, &format!("could not check a person's Bitbucket token: {why}"));
            let message = format!(
                "Service unavailable: bb could not check the token in the `{name}` header with Bitbucket ({why}); try again later."
            );
            let mut r = refuse(StatusCode::SERVICE_UNAVAILABLE, &message);
            r.headers_mut().insert(RETRY_AFTER, HeaderValue::from_static("5"));
            Err(r)
        }
    }
}

/// A core session opened for an `initialize`: closed when dropped (the initialize failed, or its
/// client went away before the answer), unless [`Opening::keep`] made it a live session.
struct Opening<'a> {
    sessions: &'a Arc<Sessions>,
    session: SessionRef,
    kept: bool,
}

impl Opening<'_> {
    fn keep(mut self) -> SessionRef {
        self.kept = true;
        self.session
    }
}

impl Drop for Opening<'_> {
    fn drop(&mut self) {
        if !self.kept {
            self.sessions.close(self.session);
        }
    }
}

/// Logs a line about sessions ended or refused for room, at most once a second.
fn crowded(endpoint: &Endpoint, line: &str) {
    if let Some(held) = endpoint.crowded.event(now_ms()) {
        endpoint.logger.log(Level::Warning, &format!("{line}{}", and_more(held)));
    }
}

fn limit_reached(endpoint: &Endpoint, bound: Bound, peer: Peer) -> String {
    let cap = endpoint.sessions.cap(bound);
    match bound {
        Bound::Total => format!("bb already serves its limit of {cap} sessions"),
        Bound::Peer => format!("the address {peer} already holds its limit of {cap} sessions"),
        Bound::Person => format!("this person already holds their limit of {cap} sessions"),
    }
}

/// Hands a body to the session and answers: 202 when nothing answers it, JSON when the answer is
/// ready within `sse_after` (and no progress was asked for), SSE otherwise. A `once` session (one
/// 2026-07-28 request) closes when the answer is sent or dropped, and its modern errors are 400.
/// `parsed`: the body, when the caller has parsed it already (a 2026-07-28 request has).
async fn answer(
    endpoint: &Endpoint,
    session: SessionRef,
    bytes: &[u8],
    once: bool,
    parsed: Option<&Value>,
) -> Response<Reply> {
    let wants_progress = asks_for_progress(bytes);
    let (tag, rx) = endpoint.sessions.submit(session, bytes, wants_progress);
    let guard = if once {
        WaiterGuard::closing(&endpoint.sessions, session, tag)
    } else {
        WaiterGuard::new(&endpoint.sessions, session, tag)
    };
    let mut got = Vec::new();
    while let Ok(d) = rx.try_recv() {
        got.push(d);
    }
    let parsed_here = if parsed.is_none() { serde_json::from_slice::<Value>(bytes).ok() } else { None };
    let parsed = parsed.or(parsed_here.as_ref());
    // What a call still running at the end of the stop's grace period is answered with.
    let id = parsed.and_then(|v| v.get("id").cloned()).unwrap_or(Value::Null);
    // A request (not a notification, nor a batch) is timed to its answer for the metrics.
    let mut timing = parsed
        .filter(|v| v.get("id").is_some() && v.get("method").is_some())
        .map(|v| Timing::start(v, &endpoint.tools, &endpoint.logger, endpoint.process.metrics()));
    if !wants_progress {
        if got.is_empty() {
            let wait = endpoint.options.limits.sse_after;
            let first = smol::future::or(async { Some(rx.recv().await.ok()) }, async {
                smol::future::or(
                    async {
                        smol::Timer::after(wait).await;
                        Some(None)
                    },
                    async {
                        endpoint.drain.on_cut().await;
                        None
                    },
                )
                .await
            })
            .await;
            match first {
                Some(part) => got.extend(part),
                None => {
                    if let Some(t) = timing {
                        t.cut();
                    }
                    return closing(refusal(StatusCode::SERVICE_UNAVAILABLE, Some(id), drain::CUT));
                }
            }
        }
        match got.as_slice() {
            [Part::Unanswered] => return empty(StatusCode::ACCEPTED),
            [Part::Final(..)] => {
                if let Some(Part::Final(m, said)) = got.pop() {
                    if let Some(t) = timing.take() {
                        t.answered(said);
                    }
                    let status = if once { sessionless::status_of(&m) } else { StatusCode::OK };
                    let mut r = reply::json(m);
                    *r.status_mut() = status;
                    return r;
                }
            }
            _ => {}
        }
    }
    endpoint.sessions.stream(session, tag);
    let listen = once && parsed.and_then(|v| v.get("method")).and_then(Value::as_str) == Some("subscriptions/listen");
    let ended = listen.then(|| bb_core::listen_ended(&id, endpoint.sessions.version()).to_string().into_bytes());
    let cut = (endpoint.drain.cut_signal(), id);
    let stream = SseStream::new(got, rx, endpoint.options.limits.sse_keepalive, guard, cut, timing);
    // A listen answers no call: at a stop it ends at once, gracefully, rather than hold the stop.
    reply::sse(if listen { stream.ending_at_stop(endpoint.drain.begin_signal(), ended) } else { stream })
}

/// `GET /mcp` with a session: the session's stream of messages tied to no request (a subscription's
/// `notifications/resources/updated`, log messages), as SSE until the client closes it or the session
/// ends. One per session (409 for a second); 406 unless the client accepts `text/event-stream`. A GET
/// without a session has nothing to push (405): 2026-07-28 has no GET stream (`subscriptions/listen`
/// replaces it). [docs/reference/mcp.md "Resource subscriptions"; MCP 2025-11-25 "Transports →
/// Streamable HTTP", "Listening for Messages from the Server"]
fn get_stream(endpoint: &Endpoint, parts: &Parts, login: Option<&PersonalToken>) -> Response<Reply> {
    let accepts = parts
        .headers
        .get_all(ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .any(|v| v.split(',').any(|t| t.trim().split(';').next().is_some_and(|m| m.trim() == "text/event-stream")));
    if !accepts {
        let message = "Not acceptable: a GET stream is sent as text/event-stream; accept it.";
        return unread(refusal(StatusCode::NOT_ACCEPTABLE, None, message), parts);
    }
    let Some(id) = parts.headers.get(SESSION_ID) else {
        return unread(refusal(StatusCode::BAD_REQUEST, None, "Bad request: Mcp-Session-Id is required."), parts);
    };
    let session = match session_for(endpoint, &parts.headers, id, login) {
        Ok(session) => session,
        Err(r) => return unread(*r, parts),
    };
    if !endpoint.sessions.initialized(session) {
        let message = "Bad request: the session is not initialized; send `initialize` first.";
        return unread(refusal(StatusCode::BAD_REQUEST, None, message), parts);
    }
    let Some((tag, rx)) = endpoint.sessions.open_stream(session) else {
        let message = "Conflict: this session's GET stream is open already; its messages go there.";
        return unread(refusal(StatusCode::CONFLICT, None, message), parts);
    };
    let guard = WaiterGuard::new(&endpoint.sessions, session, tag);
    let cut = (endpoint.drain.cut_signal(), Value::Null);
    let stream = SseStream::new(Vec::new(), rx, endpoint.options.limits.sse_keepalive, guard, cut, None)
        .ending_at_stop(endpoint.drain.begin_signal(), None);
    proven(reply::sse(stream))
}

fn delete(endpoint: &Endpoint, parts: &Parts, login: Option<&PersonalToken>) -> Response<Reply> {
    let Some(id) = parts.headers.get(SESSION_ID) else {
        let message = "Bad request: Mcp-Session-Id header is required to end a session.";
        return unread(refusal(StatusCode::BAD_REQUEST, None, message), parts);
    };
    let session = match session_for(endpoint, &parts.headers, id, login) {
        Ok(session) => session,
        Err(r) => return unread(*r, parts),
    };
    let id = id.to_str().unwrap_or_default();
    // Whom the session acted for, for the audit trail: its login's user, or a person's token's.
    let person = endpoint.sessions.find(id).and_then(|(_, p)| p);
    if endpoint.sessions.end(id)
        && let Some(trail) = endpoint.process.audit()
    {
        let person = person.map(|p| p.user().map_or_else(|| bb_drive::principal(&p), str::to_owned));
        trail.shell_event("logout", person, Some(session.id()), Vec::new(), &endpoint.logger, now_ms());
    }
    proven(unread(empty(StatusCode::NO_CONTENT), parts))
}

fn refused(endpoint: &Endpoint, why: Refusal) -> Response<Reply> {
    if let Some(held) = endpoint.refusals.event(now_ms()) {
        endpoint.logger.log(Level::Notice, &format!("refused a request: {why:?}{}", and_more(held)));
    }
    match why {
        Refusal::Target => refusal(
            StatusCode::BAD_REQUEST,
            None,
            "Bad request: the request target names another host than the Host header; send `POST /mcp`.",
        ),
        Refusal::NoToken | Refusal::WrongToken => {
            let mut r = refusal(
                StatusCode::UNAUTHORIZED,
                None,
                "Unauthorized: send the server's token as `Authorization: Bearer <token>`.",
            );
            let challenge = if why == Refusal::WrongToken {
                r#"Bearer realm="bb", error="invalid_token""#
            } else {
                r#"Bearer realm="bb""#
            };
            r.headers_mut().insert(WWW_AUTHENTICATE, HeaderValue::from_static(challenge));
            r
        }
        // Host, Origin, two of either: answered as every listener answers them.
        other => reply::from_elsewhere(&other)
            .unwrap_or_else(|| refusal(StatusCode::BAD_REQUEST, None, "Bad request: the gate refused it.")),
    }
}

/// The answer to a CORS preflight of `path`: the login's paths take GET and POST (a browser
/// client reads the metadata and posts to the token endpoint), `/mcp` its own methods.
fn preflight(endpoint: &Endpoint, origin: Option<HeaderValue>, path: &str) -> Response<Reply> {
    let methods = if endpoint.oauth.is_some() && oauth::is_oauth_path(path) { OAUTH_METHODS } else { METHODS };
    let mut r = empty(StatusCode::NO_CONTENT);
    let h = r.headers_mut();
    h.insert(ALLOW, HeaderValue::from_static(methods));
    if let Some(origin) = origin {
        h.insert(ACCESS_CONTROL_ALLOW_METHODS, HeaderValue::from_static(methods));
        if let Ok(v) = HeaderValue::from_str(endpoint.gate.allowed_headers()) {
            h.insert(ACCESS_CONTROL_ALLOW_HEADERS, v);
        }
        h.insert(ACCESS_CONTROL_MAX_AGE, HeaderValue::from_static("600"));
        cors(h, origin);
    }
    r
}

fn cors(h: &mut HeaderMap, origin: HeaderValue) {
    h.insert(ACCESS_CONTROL_ALLOW_ORIGIN, origin);
    h.insert(ACCESS_CONTROL_EXPOSE_HEADERS, HeaderValue::from_static(EXPOSED));
    h.insert(VARY, HeaderValue::from_static("Origin"));
}

fn too_large(max: usize) -> Response<Reply> {
    let message = format!("Content too large: bb accepts request bodies of at most {max} bytes.");
    refusal(StatusCode::PAYLOAD_TOO_LARGE, None, &message)
}

fn busy(endpoint: &Endpoint, bound: Bound, peer: Peer, id: Value) -> Response<Reply> {
    let message = format!(
        "Server busy: {}, each with a request in progress. Try again later, or end unused sessions (DELETE).",
        limit_reached(endpoint, bound, peer)
    );
    let mut r = refusal(StatusCode::SERVICE_UNAVAILABLE, Some(id), &message);
    r.headers_mut().insert(RETRY_AFTER, HeaderValue::from_static("30"));
    r
}

/// Marks a response sent before the request's body was read as the connection's last.
fn unread(r: Response<Reply>, parts: &Parts) -> Response<Reply> {
    let has_body = parts.headers.get(CONTENT_LENGTH).is_some_and(|v| v.as_bytes() != b"0")
        || parts.headers.contains_key(hyper::header::TRANSFER_ENCODING);
    if has_body { closing(r) } else { r }
}
