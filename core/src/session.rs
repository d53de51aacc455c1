//! One MCP session: the state machine a transport drives.
//!
//! A session is IO-free. The shell feeds it [`Input`]s with the current time and then drains
//! [`Session::poll_output`] until it returns `None` (after *every* call to `handle`):
//!
//! ```text
//!   shell                                  Session
//!   ─────                                  ───────
//!   line from client ──handle(Message)──▶  decode, dispatch ──▶ Output::Send (answers)
//!                                                           └─▶ Output::Fetch (a plan's requests)
//!   response from Bitbucket ─handle(Fetched)─▶ plan.resume ──▶ Output::Send when the plan answers
//!   drain poll_output() until None
//! ```
//!
//! Method classes, in the order a driver uses them: getters ([`Session::protocol_version`],
//! [`Session::client`], [`Session::in_flight`]); input ([`Session::handle`]); output
//! ([`Session::poll_output`]).
//!
//! Lifecycle: before `initialize` only `initialize` and `ping` are accepted. Every request with
//! an id gets exactly one answer, unless a `notifications/cancelled` for it arrives first, in which
//! case its plan is dropped and it gets none. Notifications are never answered.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::Arc;

use serde_json::{Map, Value, json};

use crate::catalogue::{CallContext, Exposed, VIEW_URI};
use crate::jsonrpc::{
    self, Decoded, ErrorReply, INVALID_PARAMS, INVALID_REQUEST, Id, METHOD_NOT_FOUND, Message, RESOURCE_NOT_FOUND,
};
use crate::logging::Level;
use crate::plan::{FetchOutcome, FetchRequest, Plan, PlanContext, Step, Ticket, ToolResult};
use crate::protocol::{ClientProfile, ProtocolVersion, UI_EXTENSION, VIEW_MIME_TYPE};

/// What every session of one server shares: the exposed tools and the server's identity.
#[derive(Debug)]
pub struct ServerConfig {
    /// The tools this server exposes.
    pub exposed: Arc<Exposed>,
    /// bb's version, for `serverInfo`.
    pub version: &'static str,
    /// How many tools one `tools/list` page holds.
    pub tools_page_size: usize,
    /// The instructions given at initialize, made once from the exposure.
    pub instructions: String,
    /// Bitbucket's base URL (with its context path), for the links views build; `None` when unknown.
    pub base_url: Option<String>,
    /// Avatars fetched for views, shared by every session.
    pub avatars: crate::views::avatars::SharedAvatars,
}

impl ServerConfig {
    /// A configuration for `exposed`, with instructions that match it.
    pub fn new(exposed: Arc<Exposed>, version: &'static str) -> ServerConfig {
        let instructions = crate::instructions::for_exposed(&exposed);
        ServerConfig {
            exposed,
            version,
            tools_page_size: 100,
            instructions,
            base_url: None,
            avatars: Default::default(),
        }
    }
}

/// Something for the session to take in.
#[derive(Debug)]
pub enum Input<'a> {
    /// One message (or batch) from the client. `tag` is the shell's: every answer to this input
    /// carries it back, so a transport can route answers to the request that carried them.
    Message {
        /// The raw bytes of one line (stdio) or one POST body (HTTP).
        bytes: &'a [u8],
        /// The shell's tag for this input.
        tag: u64,
    },
    /// A message longer than the shell accepts was dropped unread.
    Oversized {
        /// The limit it exceeded, in bytes.
        limit: usize,
        /// The shell's tag for this input.
        tag: u64,
    },
    /// The outcome of a Bitbucket request the session asked for.
    Fetched {
        /// The ticket of [`Output::Fetch`].
        ticket: Ticket,
        /// What happened.
        outcome: FetchOutcome,
    },
}

/// Something the shell must do.
#[derive(Debug, Clone, PartialEq)]
pub enum Output {
    /// Send one JSON-RPC message (a single line, no newline) to the client.
    Send {
        /// The serialized message.
        message: Vec<u8>,
        /// The tag of the input this answers, if it answers one.
        tag: Option<u64>,
    },
    /// Make a Bitbucket request and hand its outcome back as [`Input::Fetched`].
    Fetch {
        /// Identifies the request.
        ticket: Ticket,
        /// The request.
        request: FetchRequest,
    },
    /// A request asked for earlier is no longer needed; its outcome will be ignored.
    CancelFetch(Ticket),
    /// A line for the operator's log (stderr).
    Log {
        /// Its severity.
        level: Level,
        /// The text; never holds a secret.
        message: String,
    },
}

/// A tool call waiting on Bitbucket.
#[derive(Debug)]
struct Pending {
    plan: Box<dyn Plan>,
    tickets: BTreeSet<Ticket>,
    tag: u64,
    batch: Option<u64>,
}

/// A batch whose answers are sent together, once the last of its requests has answered.
#[derive(Debug)]
struct Batch {
    tag: u64,
    waiting: usize,
    answers: Vec<Value>,
}

/// One MCP session.
#[derive(Debug)]
pub struct Session {
    config: Arc<ServerConfig>,
    version: Option<ProtocolVersion>,
    client: ClientProfile,
    client_log_level: Option<Level>,
    /// The Bitbucket user bb acts as, learned from the first response that names it.
    bitbucket_user: Option<String>,
    pending: BTreeMap<Id, Pending>,
    tickets: BTreeMap<Ticket, Id>,
    batches: BTreeMap<u64, Batch>,
    next_ticket: u64,
    next_batch: u64,
    now_ms: u64,
    out: VecDeque<Output>,
}

impl Session {
    /// A new session, waiting for `initialize`.
    pub fn new(config: Arc<ServerConfig>) -> Session {
        Session {
            config,
            version: None,
            client: ClientProfile::default(),
            client_log_level: None,
            bitbucket_user: None,
            pending: BTreeMap::new(),
            tickets: BTreeMap::new(),
            batches: BTreeMap::new(),
            next_ticket: 0,
            next_batch: 0,
            now_ms: 0,
            out: VecDeque::new(),
        }
    }

    /// The negotiated protocol revision, once initialized.
    pub fn protocol_version(&self) -> Option<ProtocolVersion> {
        self.version
    }

    /// The client, as it declared itself.
    pub fn client(&self) -> &ClientProfile {
        &self.client
    }

    /// How many tool calls are waiting on Bitbucket.
    pub fn in_flight(&self) -> usize {
        self.pending.len()
    }

    /// Whether the input tagged `tag` still owes an answer (a tool call or a batch waiting on
    /// Bitbucket). A transport that routes answers by tag (HTTP) uses it to tell an input that will
    /// be answered later from one that never will be (a notification, a cancelled call).
    pub fn awaits(&self, tag: u64) -> bool {
        self.pending.values().any(|p| p.tag == tag) || self.batches.values().any(|b| b.tag == tag)
    }

    /// Takes one input at wall-clock time `now_ms` (epoch milliseconds; a clock that steps back
    /// is held at the latest time seen). Drain [`Session::poll_output`] afterwards.
    pub fn handle(&mut self, input: Input<'_>, now_ms: u64) {
        self.now_ms = self.now_ms.max(now_ms);
        match input {
            Input::Message { bytes, tag } => self.handle_bytes(bytes, tag),
            Input::Oversized { limit, tag } => {
                self.log(Level::Warning, format!("dropped a message longer than {limit} bytes"));
                let reply = ErrorReply::new(
                    None,
                    INVALID_REQUEST,
                    format!(
                        "Invalid request: the message is longer than bb's limit of {limit} bytes and was dropped unread."
                    ),
                );
                self.send(reply.to_value(), Some(tag));
            }
            Input::Fetched { ticket, outcome } => self.handle_fetched(ticket, outcome),
        }
    }

    /// The next thing the shell must do, or `None` when there is nothing more until the next input.
    pub fn poll_output(&mut self) -> Option<Output> {
        self.out.pop_front()
    }

    fn handle_bytes(&mut self, bytes: &[u8], tag: u64) {
        match jsonrpc::decode_line(bytes) {
            Decoded::Blank => {}
            Decoded::Invalid(reply) => {
                self.log(Level::Debug, format!("answered an unreadable message: {}", reply.message));
                self.send(reply.to_value(), Some(tag));
            }
            Decoded::Single(message) => {
                if let Some(answer) = self.dispatch(message, tag, None) {
                    self.send(answer, Some(tag));
                }
            }
            Decoded::Batch(items) => self.handle_batch(items, tag),
        }
    }

    fn handle_batch(&mut self, items: Vec<Result<Message, ErrorReply>>, tag: u64) {
        if !self.version.is_some_and(ProtocolVersion::accepts_batches) {
            let reply = ErrorReply::new(
                None,
                INVALID_REQUEST,
                "Invalid request: JSON-RPC batches are accepted only under protocol version 2025-03-26.",
            );
            self.send(reply.to_value(), Some(tag));
            return;
        }
        let batch_id = self.next_batch;
        self.next_batch += 1;
        self.batches.insert(batch_id, Batch { tag, waiting: 0, answers: Vec::new() });
        for item in items {
            let answer = match item {
                Ok(message) => self.dispatch(message, tag, Some(batch_id)),
                Err(reply) => Some(reply.to_value()),
            };
            if let Some(answer) = answer
                && let Some(b) = self.batches.get_mut(&batch_id)
            {
                b.answers.push(answer);
            }
        }
        self.finish_batch_if_done(batch_id);
    }

    fn finish_batch_if_done(&mut self, batch_id: u64) {
        if self.batches.get(&batch_id).is_some_and(|b| b.waiting == 0)
            && let Some(b) = self.batches.remove(&batch_id)
        {
            // A batch of notifications only is answered with nothing at all (JSON-RPC 2.0 §6).
            if !b.answers.is_empty() {
                self.send(Value::Array(b.answers), Some(b.tag));
            }
        }
    }

    /// Handles one message; returns the answer when it is ready now.
    fn dispatch(&mut self, message: Message, tag: u64, batch: Option<u64>) -> Option<Value> {
        match message {
            Message::Notification { method, params } => {
                self.notification(&method, params.as_ref());
                None
            }
            Message::Response { id } => {
                self.log(Level::Debug, format!("ignored a response to id {id}: bb sent no request"));
                None
            }
            Message::Request { id, method, params } => {
                if self.pending.contains_key(&id) {
                    let reply = ErrorReply::new(
                        Some(id),
                        INVALID_REQUEST,
                        "Invalid request: this id belongs to a request still in progress.",
                    );
                    return Some(reply.to_value());
                }
                let answer = self.request(&id, &method, params.unwrap_or(Value::Null), tag, batch);
                match answer {
                    Answer::Now(Ok(result)) => Some(jsonrpc::result_value(&id, result)),
                    Answer::Now(Err(reply)) => Some(reply.to_value()),
                    Answer::Later => None,
                }
            }
        }
    }

    fn notification(&mut self, method: &str, params: Option<&Value>) {
        match method {
            "notifications/initialized" => self.log(Level::Debug, "client initialized".into()),
            "notifications/cancelled" => {
                let Some(id) = params.and_then(|p| p.get("requestId")).and_then(Id::from_value) else {
                    return;
                };
                self.cancel(&id);
            }
            other => self.log(Level::Debug, format!("ignored notification {other}")),
        }
    }

    fn request(&mut self, id: &Id, method: &str, params: Value, tag: u64, batch: Option<u64>) -> Answer {
        if self.version.is_none() && !matches!(method, "initialize" | "ping") {
            return Answer::Now(Err(ErrorReply::new(
                Some(id.clone()),
                INVALID_REQUEST,
                format!("Invalid request: `{method}` before `initialize`; send `initialize` first."),
            )));
        }
        let err = |code: i64, message: String| Answer::Now(Err(ErrorReply::new(Some(id.clone()), code, message)));
        match method {
            "initialize" if batch.is_some() => {
                err(INVALID_REQUEST, "Invalid request: `initialize` must not be part of a batch.".into())
            }
            "initialize" => self.initialize(id, &params),
            "ping" => Answer::Now(Ok(json!({}))),
            "tools/list" => match self.tools_list(&params) {
                Ok(v) => Answer::Now(Ok(v)),
                Err(m) => err(INVALID_PARAMS, m),
            },
            "tools/call" => self.tools_call(id, &params, tag, batch),
            "resources/list" => Answer::Now(Ok(json!({"resources": []}))),
            "resources/templates/list" => Answer::Now(Ok(json!({"resourceTemplates": []}))),
            "resources/read" => self.resources_read(id, &params),
            "logging/setLevel" => match params.get("level").and_then(Value::as_str).and_then(Level::parse) {
                Some(level) => {
                    self.client_log_level = Some(level);
                    Answer::Now(Ok(json!({})))
                }
                None => err(
                    INVALID_PARAMS,
                    "Invalid params: `level` must be one of debug, info, notice, warning, error, critical, alert, emergency."
                        .into(),
                ),
            },
            other => err(METHOD_NOT_FOUND, format!("Method not found: `{}`.", truncate(other, 100))),
        }
    }

    fn initialize(&mut self, id: &Id, params: &Value) -> Answer {
        if self.version.is_some() {
            return Answer::Now(Err(ErrorReply::new(
                Some(id.clone()),
                INVALID_REQUEST,
                "Invalid request: the session is already initialized.",
            )));
        }
        let Some(requested) = params.get("protocolVersion").and_then(Value::as_str) else {
            return Answer::Now(Err(ErrorReply::new(
                Some(id.clone()),
                INVALID_PARAMS,
                "Invalid params: `initialize` needs `protocolVersion`.",
            )));
        };
        let version = ProtocolVersion::negotiate(Some(requested));
        self.version = Some(version);
        self.client = ClientProfile::from_initialize(params);
        self.log(
            Level::Info,
            format!(
                "session initialized: protocol {}, client {:?} {:?}, renders views: {}",
                version.as_str(),
                truncate(&self.client.name, 100),
                truncate(&self.client.version, 40),
                self.client.renders_views
            ),
        );
        Answer::Now(Ok(json!({
            "protocolVersion": version.as_str(),
            "capabilities": {
                "tools": {"listChanged": false},
                "resources": {"listChanged": false},
                "logging": {},
                "extensions": {UI_EXTENSION: {}},
            },
            "serverInfo": {"name": "bb", "title": "bb for Bitbucket Data Center", "version": self.config.version},
            "instructions": self.config.instructions,
        })))
    }

    fn tools_list(&self, params: &Value) -> Result<Value, String> {
        let listed = self.config.exposed.listed();
        let page = self.config.tools_page_size.max(1);
        let start = match params.get("cursor") {
            None | Some(Value::Null) => 0,
            Some(Value::String(c)) => decode_cursor(c)
                .filter(|&n| n < listed.len())
                .ok_or_else(|| "Invalid params: the cursor is not one bb gave out.".to_string())?,
            Some(_) => return Err("Invalid params: `cursor` must be a string.".into()),
        };
        let end = (start + page).min(listed.len());
        let mut result = Map::new();
        result.insert("tools".into(), Value::Array(listed[start..end].to_vec()));
        if end < listed.len() {
            result.insert("nextCursor".into(), Value::String(encode_cursor(end)));
        }
        Ok(Value::Object(result))
    }

    fn tools_call(&mut self, id: &Id, params: &Value, tag: u64, batch: Option<u64>) -> Answer {
        let Some(name) = params.get("name").and_then(Value::as_str) else {
            return Answer::Now(Err(ErrorReply::new(
                Some(id.clone()),
                INVALID_PARAMS,
                "Invalid params: `tools/call` needs the tool's `name`.",
            )));
        };
        let exposed = Arc::clone(&self.config.exposed);
        let Some(tool) = exposed.get(name) else {
            return Answer::Now(Err(ErrorReply::new(
                Some(id.clone()),
                INVALID_PARAMS,
                format!("Unknown tool: `{}`. Call tools/list for the tools this server exposes.", truncate(name, 100)),
            )));
        };
        let args = params.get("arguments");
        if let Err(why) = crate::args::validate(args, &exposed.input_schema(tool)) {
            let result = ToolResult::error(format!("Invalid arguments for {}: {why}", tool.name));
            return Answer::Now(Ok(result.to_value()));
        }
        let empty = Map::new();
        let args = args.and_then(Value::as_object).unwrap_or(&empty);
        let mut cx = PlanContext { next_ticket: self.next_ticket, ..PlanContext::default() };
        let call = CallContext {
            client: &self.client,
            exposed: &exposed,
            now_ms: self.now_ms,
            bitbucket_user: self.bitbucket_user.as_deref(),
            base_url: self.config.base_url.as_deref(),
            avatars: &self.config.avatars,
        };
        let step = (tool.start)(args, &mut cx, &call);
        match step {
            Step::Done(result) => {
                self.next_ticket = cx.next_ticket;
                Answer::Now(Ok(result.to_value()))
            }
            Step::Wait(plan) => {
                self.log(Level::Debug, format!("{} waits on {} Bitbucket request(s)", tool.name, cx.issued.len()));
                let tickets = self.issue(id, &mut cx);
                if tickets.is_empty() {
                    // A plan that asked for nothing can never be resumed: that is a bug in the tool.
                    return Answer::Now(Ok(ToolResult::error(format!(
                        "{} could not run: it waited on nothing. This is a bug in bb.",
                        tool.name
                    ))
                    .to_value()));
                }
                if let Some(b) = batch.and_then(|b| self.batches.get_mut(&b)) {
                    b.waiting += 1;
                }
                self.pending.insert(id.clone(), Pending { plan, tickets, tag, batch });
                Answer::Later
            }
        }
    }

    /// Emits the fetches a plan asked for and files their tickets under the request.
    fn issue(&mut self, id: &Id, cx: &mut PlanContext) -> BTreeSet<Ticket> {
        self.next_ticket = cx.next_ticket;
        let mut tickets = BTreeSet::new();
        for (ticket, request) in cx.issued.drain(..).zip(cx.wanted.drain(..)) {
            self.tickets.insert(ticket, id.clone());
            tickets.insert(ticket);
            self.out.push_back(Output::Fetch { ticket, request });
        }
        tickets
    }

    fn handle_fetched(&mut self, ticket: Ticket, outcome: FetchOutcome) {
        if let FetchOutcome::Response(r) = &outcome
            && let Some(user) = &r.user
            && self.bitbucket_user.as_ref() != Some(user)
        {
            self.bitbucket_user = Some(user.clone());
        }
        let Some(id) = self.tickets.remove(&ticket) else {
            // The call was cancelled or already answered.
            return;
        };
        let Some(mut pending) = self.pending.remove(&id) else { return };
        pending.tickets.remove(&ticket);
        let mut cx = PlanContext { next_ticket: self.next_ticket, ..PlanContext::default() };
        let answer = pending.plan.resume(ticket, outcome, &mut cx);
        let more = self.issue(&id, &mut cx);
        pending.tickets.extend(more);
        match answer {
            Some(result) => {
                for t in std::mem::take(&mut pending.tickets) {
                    self.tickets.remove(&t);
                    self.out.push_back(Output::CancelFetch(t));
                }
                self.answer_later(&id, pending, result.to_value());
            }
            None if pending.tickets.is_empty() => {
                let result =
                    ToolResult::error("The call stopped waiting on Bitbucket without an answer. This is a bug in bb.");
                self.answer_later(&id, pending, result.to_value());
            }
            None => {
                self.pending.insert(id, pending);
            }
        }
    }

    fn answer_later(&mut self, id: &Id, pending: Pending, result: Value) {
        let answer = jsonrpc::result_value(id, result);
        match pending.batch {
            Some(b) => {
                if let Some(batch) = self.batches.get_mut(&b) {
                    batch.waiting = batch.waiting.saturating_sub(1);
                    batch.answers.push(answer);
                }
                self.finish_batch_if_done(b);
            }
            None => self.send(answer, Some(pending.tag)),
        }
    }

    fn cancel(&mut self, id: &Id) {
        let Some(pending) = self.pending.remove(id) else { return };
        self.log(Level::Debug, format!("cancelled request {id}"));
        for t in pending.tickets {
            self.tickets.remove(&t);
            self.out.push_back(Output::CancelFetch(t));
        }
        if let Some(b) = pending.batch {
            if let Some(batch) = self.batches.get_mut(&b) {
                batch.waiting = batch.waiting.saturating_sub(1);
            }
            self.finish_batch_if_done(b);
        }
    }

    fn resources_read(&mut self, id: &Id, params: &Value) -> Answer {
        let Some(uri) = params.get("uri").and_then(Value::as_str) else {
            return Answer::Now(Err(ErrorReply::new(
                Some(id.clone()),
                INVALID_PARAMS,
                "Invalid params: `resources/read` needs a `uri`.",
            )));
        };
        if uri != VIEW_URI {
            let mut reply = ErrorReply::new(
                Some(id.clone()),
                RESOURCE_NOT_FOUND,
                format!("Resource not found: `{}`.", truncate(uri, 200)),
            );
            reply.data = Some(json!({"uri": uri}));
            return Answer::Now(Err(reply));
        }
        // No `csp` key: the page fetches nothing and declares no domains (ADR-101).
        Answer::Now(Ok(json!({"contents": [{
            "uri": VIEW_URI,
            "mimeType": VIEW_MIME_TYPE,
            "text": bb_assets::VIEW_HTML,
            "_meta": {"ui": {"prefersBorder": true}},
        }]})))
    }

    fn send(&mut self, value: Value, tag: Option<u64>) {
        match serde_json::to_vec(&value) {
            Ok(message) => self.out.push_back(Output::Send { message, tag }),
            Err(e) => self
                .out
                .push_back(Output::Log { level: Level::Error, message: format!("could not encode an answer: {e}") }),
        }
    }

    fn log(&mut self, level: Level, message: String) {
        if self.client_log_level.is_some_and(|min| level >= min) {
            let note = jsonrpc::notification_value(
                "notifications/message",
                json!({"level": level.as_str(), "logger": "bb", "data": message}),
            );
            self.send(note, None);
        }
        self.out.push_back(Output::Log { level, message });
    }
}

enum Answer {
    Now(Result<Value, ErrorReply>),
    Later,
}

fn encode_cursor(offset: usize) -> String {
    format!("tools:{offset}")
}

fn decode_cursor(cursor: &str) -> Option<usize> {
    cursor.strip_prefix("tools:")?.parse().ok()
}

/// At most `max` characters of `s`, for echoing client text into messages and logs.
fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_owned()
    } else {
        let mut t: String = s.chars().take(max).collect();
        t.push('…');
        t
    }
}
