//! One client's MCP conversation (quinn-proto's `Connection` to the [`crate::Server`]'s `Endpoint`):
//! its handshake, the calls it has in flight, their cancellation and their answers.
//!
//! ```text
//!   Server.handle(Message) ─▶ Session: decode, dispatch ──▶ Output::Send (answers), Output::Done
//!                                                       └─▶ Output::Fetch (a plan's reads)
//!   Server.handle(Fetched) ─▶ Session: plan.on ──▶ Output::Send when the plan answers, then Output::Done
//! ```
//!
//! Lifecycle: before `initialize` only `initialize`, `ping` and 2026-07-28 requests are accepted. A
//! request whose `_meta` names 2026-07-28 (and `server/discover` at any time) is served statelessly
//! ([`crate::stateless`]): its client's capabilities and log level are its own, nothing is kept for
//! the next one, and a session that serves only such requests is never initialized. Every request
//! with an id gets exactly one answer, unless a `notifications/cancelled` for it arrives first, in
//! which case its plan is dropped and it gets none. Notifications are never answered.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use serde_json::{Map, Value, json};

use crate::fetch::{FetchOutcome, FetchRequest, Ticket};
use crate::highlight::{HighlightJob, Highlighted};

/// What a plan's step asked for: reads, and jobs for the shell's CPU threads.
type Issued = (Vec<(Ticket, FetchRequest)>, Vec<(Ticket, HighlightJob)>);
use crate::jsonrpc::{
    self, Decoded, ErrorReply, INVALID_PARAMS, INVALID_REQUEST, Id, METHOD_NOT_FOUND, Message, RESOURCE_NOT_FOUND,
};
use crate::logging::Level;
use crate::plan::{Step, ToolResult, Waiting};
use crate::protocol::{ClientProfile, ProtocolVersion};
use crate::shared::{Made, Output, SessionId, Shared};
use crate::stateless::{self, Era, RequestMeta};
use crate::tool::{Call, VIEW_URI};

/// A tool call waiting on Bitbucket.
#[derive(Debug)]
struct Pending {
    plan: Box<dyn Waiting>,
    tickets: BTreeSet<Ticket>,
    /// The ticket of the CPU work the plan asked the shell to run, while it is asked for.
    work: Option<Ticket>,
    tag: u64,
    batch: Option<u64>,
    /// A 2026-07-28 call: its answer is completed ([`stateless::complete`]).
    stateless: bool,
}

/// A batch whose answers are sent together, once the last of its requests has answered.
#[derive(Debug)]
struct Batch {
    tag: u64,
    waiting: usize,
    answers: Vec<Value>,
}

/// One client's conversation: its handshake, its calls in flight, their cancellation. Owned and
/// driven by the [`crate::Server`], which hands it what sessions share.
#[derive(Debug)]
pub struct Session {
    id: SessionId,
    version: Option<ProtocolVersion>,
    client: ClientProfile,
    client_log_level: Option<Level>,
    /// While a 2026-07-28 request that asked for log messages is handled: its level and tag.
    request_log: Option<(Level, u64)>,
    /// The Bitbucket user bb acts as, learned from the first response that names it.
    bitbucket_user: Option<String>,
    pending: BTreeMap<Id, Pending>,
    tickets: BTreeMap<Ticket, Id>,
    batches: BTreeMap<u64, Batch>,
    next_batch: u64,
    /// Reads handed to the shell and not yet answered: at most [`MAX_READS_IN_FLIGHT`].
    sent: BTreeSet<Ticket>,
    /// Reads waiting for one of those to end, oldest first; a cancelled call's are dropped unsent.
    queued: VecDeque<(Ticket, FetchRequest)>,
    /// Jobs handed to the shell ([`Output::Compute`]) whose outcome a call still waits for.
    jobs: BTreeSet<Ticket>,
}

/// The most Bitbucket reads one session has in flight at once; the rest wait in the session, in order.
/// Below the shell's own bound on requests in flight (6), so one session (one person's agent, one
/// 3,000-call batch) never holds every slot and another session's call always gets one.
pub const MAX_READS_IN_FLIGHT: usize = 4;
/// The most messages one JSON-RPC batch may hold (2025-03-26 only); a larger batch is refused whole.
pub const MAX_BATCH: usize = 100;

impl Session {
    pub(crate) fn new(id: SessionId) -> Session {
        Session {
            id,
            version: None,
            client: ClientProfile::default(),
            client_log_level: None,
            request_log: None,
            bitbucket_user: None,
            pending: BTreeMap::new(),
            tickets: BTreeMap::new(),
            batches: BTreeMap::new(),
            next_batch: 0,
            sent: BTreeSet::new(),
            queued: VecDeque::new(),
            jobs: BTreeSet::new(),
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

    /// Whether the input tagged `tag` still owes an answer (a tool call or a batch waiting on Bitbucket).
    fn awaits(&self, tag: u64) -> bool {
        self.pending.values().any(|p| p.tag == tag && p.batch.is_none()) || self.batches.values().any(|b| b.tag == tag)
    }

    /// Says the input tagged `tag` is complete, once nothing more is owed for it.
    fn settle(&mut self, tag: u64, sh: &mut Shared) {
        if !self.awaits(tag) {
            sh.out.push_back(Output::Done { session: self.id, tag });
        }
    }

    pub(crate) fn message(&mut self, bytes: &[u8], tag: u64, sh: &mut Shared) {
        self.handle_bytes(bytes, tag, sh);
        self.settle(tag, sh);
    }

    pub(crate) fn oversized(&mut self, limit: usize, tag: u64, sh: &mut Shared) {
        self.log(Level::Warning, format!("dropped a message longer than {limit} bytes"), sh);
        let reply = ErrorReply::new(
            None,
            INVALID_REQUEST,
            format!("Invalid request: the message is longer than bb's limit of {limit} bytes and was dropped unread."),
        );
        self.send(reply.to_value(), Some(tag), sh);
        self.settle(tag, sh);
    }

    /// Drops every call in flight (the client has gone): their reads are cancelled, nothing is answered.
    pub(crate) fn close(&mut self, sh: &mut Shared) {
        let mut open_tags = BTreeSet::new();
        for (_, mut pending) in std::mem::take(&mut self.pending) {
            open_tags.insert(pending.tag);
            self.drop_work(&mut pending, sh);
            for t in pending.tickets {
                self.drop_read(t, sh);
            }
        }
        open_tags.extend(std::mem::take(&mut self.batches).into_values().map(|b| b.tag));
        self.tickets.clear();
        // An input still owed an answer is complete now: none will come.
        for tag in open_tags {
            sh.out.push_back(Output::Done { session: self.id, tag });
        }
    }

    fn handle_bytes(&mut self, bytes: &[u8], tag: u64, sh: &mut Shared) {
        match jsonrpc::decode_line(bytes) {
            Decoded::Blank => {}
            Decoded::Invalid(reply) => {
                self.log(Level::Debug, format!("answered an unreadable message: {}", reply.message), sh);
                self.send(reply.to_value(), Some(tag), sh);
            }
            Decoded::Single(message) => match self.dispatch(message, tag, None, sh) {
                Some(Reply::Value(answer)) => self.send(answer, Some(tag), sh),
                Some(Reply::Bytes(message)) => {
                    sh.out.push_back(Output::Send { session: self.id, tag: Some(tag), message })
                }
                None => {}
            },
            Decoded::Batch(items) => self.handle_batch(items, tag, sh),
        }
    }

    fn handle_batch(&mut self, items: Vec<Result<Message, ErrorReply>>, tag: u64, sh: &mut Shared) {
        if !self.version.is_some_and(ProtocolVersion::accepts_batches) {
            let reply = ErrorReply::new(
                None,
                INVALID_REQUEST,
                "Invalid request: JSON-RPC batches are accepted only under protocol version 2025-03-26.",
            );
            self.send(reply.to_value(), Some(tag), sh);
            return;
        }
        if items.len() > MAX_BATCH {
            let reply = ErrorReply::new(
                None,
                INVALID_REQUEST,
                format!(
                    "Invalid request: a batch may hold at most {MAX_BATCH} messages; send them in smaller batches."
                ),
            );
            self.send(reply.to_value(), Some(tag), sh);
            return;
        }
        let batch_id = self.next_batch;
        self.next_batch += 1;
        self.batches.insert(batch_id, Batch { tag, waiting: 0, answers: Vec::new() });
        for item in items {
            let answer = match item {
                Ok(message) => match self.dispatch(message, tag, Some(batch_id), sh) {
                    Some(Reply::Value(v)) => Some(v),
                    // A batch's answers are values: only a single request gets a message made once.
                    Some(Reply::Bytes(bytes)) => serde_json::from_slice(&bytes).ok(),
                    None => None,
                },
                Err(reply) => Some(reply.to_value()),
            };
            if let Some(answer) = answer
                && let Some(b) = self.batches.get_mut(&batch_id)
            {
                b.answers.push(answer);
            }
        }
        self.finish_batch_if_done(batch_id, sh);
    }

    fn finish_batch_if_done(&mut self, batch_id: u64, sh: &mut Shared) {
        if self.batches.get(&batch_id).is_some_and(|b| b.waiting == 0)
            && let Some(b) = self.batches.remove(&batch_id)
        {
            // A batch of notifications only is answered with nothing at all (JSON-RPC 2.0 §6).
            if !b.answers.is_empty() {
                self.send(Value::Array(b.answers), Some(b.tag), sh);
            }
        }
    }

    /// Handles one message; returns the answer when it is ready now.
    fn dispatch(&mut self, message: Message, tag: u64, batch: Option<u64>, sh: &mut Shared) -> Option<Reply> {
        match message {
            Message::Notification { method, params } => {
                self.notification(&method, params.as_ref(), sh);
                None
            }
            Message::Response { id } => {
                self.log(Level::Debug, format!("ignored a response to id {id}: bb sent no request"), sh);
                None
            }
            Message::Request { id, method, params } => {
                if self.pending.contains_key(&id) {
                    let reply = ErrorReply::new(
                        Some(id),
                        INVALID_REQUEST,
                        "Invalid request: this id belongs to a request still in progress.",
                    );
                    return Some(Reply::Value(reply.to_value()));
                }
                let answer = self.request(&id, &method, params.unwrap_or(Value::Null), tag, batch, sh);
                match answer {
                    Answer::Now(Ok(result)) => Some(Reply::Value(jsonrpc::result_value(&id, result))),
                    Answer::Now(Err(reply)) => Some(Reply::Value(reply.to_value())),
                    Answer::Made(made) if batch.is_none() => Some(Reply::Bytes(sh.made.message(&id, made))),
                    Answer::Made(made) => Some(Reply::Value(jsonrpc::result_value(&id, sh.made.value(made)))),
                    Answer::Later => None,
                }
            }
        }
    }

    fn notification(&mut self, method: &str, params: Option<&Value>, sh: &mut Shared) {
        match method {
            "notifications/initialized" => self.log(Level::Debug, "client initialized".into(), sh),
            "notifications/cancelled" => {
                let Some(id) = params.and_then(|p| p.get("requestId")).and_then(Id::from_value) else {
                    return;
                };
                self.cancel(&id, sh);
            }
            other => self.log(Level::Debug, format!("ignored notification {other}"), sh),
        }
    }

    fn request(
        &mut self,
        id: &Id,
        method: &str,
        params: Value,
        tag: u64,
        batch: Option<u64>,
        sh: &mut Shared,
    ) -> Answer {
        if method == "server/discover" || (self.version.is_none() && method != "initialize") {
            match stateless::era_of(&params) {
                Era::Stateless(meta) => return self.stateless(id, method, &params, meta, tag, sh),
                Era::Unsupported(requested) => return Answer::Now(Err(stateless::unsupported(id, &requested))),
                // Discovery is how a client learns the revisions; it needs none named.
                Era::Handshake if method == "server/discover" => {
                    let meta = RequestMeta { client: ClientProfile::default(), log_level: None };
                    return self.stateless(id, method, &params, meta, tag, sh);
                }
                Era::Handshake => {}
            }
        }
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
            "initialize" => self.initialize(id, &params, sh),
            "ping" => Answer::Now(Ok(json!({}))),
            "tools/list" if matches!(params.get("cursor"), None | Some(Value::Null)) => Answer::Made(Made::ToolsList),
            "tools/list" => match self.tools_list(&params, sh) {
                Ok(v) => Answer::Now(Ok(v)),
                Err(m) => err(INVALID_PARAMS, m),
            },
            "tools/call" => self.tools_call(id, &params, None, tag, batch, sh),
            "resources/list" => Answer::Now(Ok(json!({"resources": []}))),
            "resources/templates/list" => Answer::Now(Ok(json!({"resourceTemplates": []}))),
            "resources/read" => self.resources_read(id, &params, false),
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

    fn initialize(&mut self, id: &Id, params: &Value, sh: &mut Shared) -> Answer {
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
            sh,
        );
        Answer::Now(Ok(json!({
            "protocolVersion": version.as_str(),
            "capabilities": stateless::capabilities(),
            "serverInfo": stateless::server_info(sh.config.version),
            "instructions": sh.made.instructions(),
        })))
    }

    /// Answers a 2026-07-28 request from itself alone: its client is the one its `_meta` declares,
    /// its log messages go with its answer only when it asked for them, and its result is complete.
    fn stateless(
        &mut self,
        id: &Id,
        method: &str,
        params: &Value,
        meta: RequestMeta,
        tag: u64,
        sh: &mut Shared,
    ) -> Answer {
        self.request_log = meta.log_level.map(|level| (level, tag));
        let version = sh.config.version;
        let done = |v: Value, ttl: Option<u64>| {
            let v = stateless::complete(v, version);
            Answer::Now(Ok(match ttl {
                Some(ttl) => stateless::cacheable(v, ttl),
                None => v,
            }))
        };
        let err = |code: i64, message: String| Answer::Now(Err(ErrorReply::new(Some(id.clone()), code, message)));
        let answer = match method {
            "server/discover" => Answer::Now(Ok(stateless::discover(version, sh.made.instructions()))),
            "tools/list" if matches!(params.get("cursor"), None | Some(Value::Null)) => {
                Answer::Made(Made::StatelessToolsList)
            }
            "tools/list" => match self.tools_list(params, sh) {
                Ok(v) => done(v, Some(stateless::LIST_TTL_MS)),
                Err(m) => err(INVALID_PARAMS, m),
            },
            "tools/call" => self.tools_call(id, params, Some(meta.client), tag, None, sh),
            "resources/list" => done(json!({"resources": []}), Some(stateless::LIST_TTL_MS)),
            "resources/templates/list" => done(json!({"resourceTemplates": []}), Some(stateless::LIST_TTL_MS)),
            "resources/read" => self.resources_read(id, params, true),
            "ping" | "logging/setLevel" => err(
                METHOD_NOT_FOUND,
                format!(
                    "Method not found: `{method}` is not part of 2026-07-28 (set `io.modelcontextprotocol/logLevel` in a request's `_meta` for its log messages)."
                ),
            ),
            "subscriptions/listen" => err(
                METHOD_NOT_FOUND,
                "Method not found: bb's tools and resources never change while it runs, so it has nothing to send on `subscriptions/listen`.".into(),
            ),
            other => err(METHOD_NOT_FOUND, format!("Method not found: `{}`.", truncate(other, 100))),
        };
        self.request_log = None;
        answer
    }

    fn tools_list(&self, params: &Value, sh: &Shared) -> Result<Value, String> {
        let start = match params.get("cursor") {
            None | Some(Value::Null) => 0,
            Some(Value::String(c)) => crate::shared::decode_cursor(c)
                .filter(|&n| n < sh.config.exposed.tools().len())
                .ok_or_else(|| "Invalid params: the cursor is not one bb gave out.".to_string())?,
            Some(_) => return Err("Invalid params: `cursor` must be a string.".into()),
        };
        Ok(crate::shared::tools_page(&sh.config.exposed, sh.config.tools_page_size, start))
    }

    /// Starts a tool call. `stateless` is the client a 2026-07-28 request declared; `None` for the
    /// session's own.
    fn tools_call(
        &mut self,
        id: &Id,
        params: &Value,
        stateless: Option<ClientProfile>,
        tag: u64,
        batch: Option<u64>,
        sh: &mut Shared,
    ) -> Answer {
        let version = sh.config.version;
        let is_stateless = stateless.is_some();
        let finish = |result: ToolResult| {
            let v = result.to_value();
            Answer::Now(Ok(if is_stateless { stateless::complete(v, version) } else { v }))
        };
        let Some(name) = params.get("name").and_then(Value::as_str) else {
            return Answer::Now(Err(ErrorReply::new(
                Some(id.clone()),
                INVALID_PARAMS,
                "Invalid params: `tools/call` needs the tool's `name`.",
            )));
        };
        let exposed = std::sync::Arc::clone(&sh.config.exposed);
        let Some(tool) = exposed.get(name) else {
            return Answer::Now(Err(ErrorReply::new(
                Some(id.clone()),
                INVALID_PARAMS,
                format!("Unknown tool: `{}`. Call tools/list for the tools this server exposes.", truncate(name, 100)),
            )));
        };
        let args = params.get("arguments");
        if let Err(why) = crate::args::validate(args, &exposed.input_schema(tool)) {
            return finish(ToolResult::error(format!("Invalid arguments for {}: {why}", tool.name)));
        }
        let empty = Map::new();
        let args = args.and_then(Value::as_object).unwrap_or(&empty);
        if let Err(why) = crate::args::check_places(args) {
            return finish(ToolResult::error(format!("Invalid arguments for {}: {why}", tool.name)));
        }
        let client = stateless.unwrap_or_else(|| self.client.clone());
        let call = Call {
            client: &client,
            exposed: &exposed,
            now_ms: sh.now_ms,
            bitbucket_user: self.bitbucket_user.as_deref(),
            base_url: sh.config.base_url.as_deref(),
            highlight_templates: sh.config.highlight_templates,
        };
        match (tool.start)(args, &call) {
            Step::Done(result) => finish(result),
            Step::Wait(mut plan) => {
                let mut desk = sh.desk();
                plan.begin(&mut desk);
                let issued = std::mem::take(&mut desk.issued);
                if issued.is_empty() {
                    // A plan that asked for nothing can never be resumed: that is a bug in the tool.
                    return finish(ToolResult::error(format!(
                        "{} could not run: it waited on nothing. This is a bug in bb.",
                        tool.name
                    )));
                }
                self.log(Level::Debug, format!("{} waits on {} Bitbucket request(s)", tool.name, issued.len()), sh);
                let tickets = self.issue(id, issued, sh);
                if let Some(b) = batch.and_then(|b| self.batches.get_mut(&b)) {
                    b.waiting += 1;
                }
                let pending = Pending { plan, tickets, work: None, tag, batch, stateless: is_stateless };
                self.pending.insert(id.clone(), pending);
                Answer::Later
            }
        }
    }

    /// Emits the reads a plan asked for and files their tickets under the request.
    fn issue(
        &mut self,
        id: &Id,
        issued: Vec<(Ticket, crate::fetch::FetchRequest)>,
        sh: &mut Shared,
    ) -> BTreeSet<Ticket> {
        let mut tickets = BTreeSet::new();
        for (ticket, request) in issued {
            self.tickets.insert(ticket, id.clone());
            sh.tickets.insert(ticket, self.id);
            tickets.insert(ticket);
            self.queued.push_back((ticket, request));
        }
        self.send_queued(sh);
        tickets
    }

    /// Hands queued reads to the shell while fewer than [`MAX_READS_IN_FLIGHT`] are out.
    fn send_queued(&mut self, sh: &mut Shared) {
        while self.sent.len() < MAX_READS_IN_FLIGHT {
            let Some((ticket, request)) = self.queued.pop_front() else { break };
            self.sent.insert(ticket);
            sh.out.push_back(Output::Fetch { session: self.id, ticket, request });
        }
    }

    /// Drops a read no call needs any more: a queued one is never sent; a sent one is cancelled, and
    /// its place goes to the next queued read.
    fn drop_read(&mut self, ticket: Ticket, sh: &mut Shared) {
        self.jobs.remove(&ticket);
        self.tickets.remove(&ticket);
        sh.tickets.remove(&ticket);
        if self.sent.remove(&ticket) {
            sh.out.push_back(Output::CancelFetch(ticket));
        } else {
            self.queued.retain(|(t, _)| *t != ticket);
        }
    }

    pub(crate) fn fetched(&mut self, ticket: Ticket, outcome: FetchOutcome, sh: &mut Shared) {
        if let FetchOutcome::Response(r) = &outcome
            && let Some(user) = &r.user
            && self.bitbucket_user.as_ref() != Some(user)
        {
            self.bitbucket_user = Some(user.clone());
        }
        self.sent.remove(&ticket);
        self.send_queued(sh);
        let Some(id) = self.tickets.remove(&ticket) else {
            // The call was cancelled or already answered.
            return;
        };
        let Some(mut pending) = self.pending.remove(&id) else { return };
        pending.tickets.remove(&ticket);
        let mut desk = sh.desk();
        let answer = pending.plan.resume(ticket, outcome, &mut desk);
        let issued = (std::mem::take(&mut desk.issued), std::mem::take(&mut desk.computes));
        self.after_step(id, pending, answer, issued, sh);
    }

    /// Takes the outcome of a job a call's plan asked for.
    pub(crate) fn computed(&mut self, ticket: Ticket, done: Highlighted, sh: &mut Shared) {
        self.jobs.remove(&ticket);
        let Some(id) = self.tickets.remove(&ticket) else { return };
        let Some(mut pending) = self.pending.remove(&id) else { return };
        pending.tickets.remove(&ticket);
        let mut desk = sh.desk();
        let answer = pending.plan.computed(ticket, done, &mut desk);
        let issued = (std::mem::take(&mut desk.issued), std::mem::take(&mut desk.computes));
        self.after_step(id, pending, answer, issued, sh);
    }

    /// Takes a step of a call's CPU work (`last` once the shell's deadline has passed).
    pub(crate) fn worked(&mut self, ticket: Ticket, last: bool, sh: &mut Shared) {
        let Some(id) = self.tickets.get(&ticket).cloned() else { return };
        let Some(mut pending) = self.pending.remove(&id) else { return };
        // The server forgot the ticket when it routed this step; it is asked for again below if need be.
        sh.tickets.insert(ticket, self.id);
        let mut desk = sh.desk();
        let answer = pending.plan.work(last, &mut desk);
        let issued = (std::mem::take(&mut desk.issued), std::mem::take(&mut desk.computes));
        self.after_step(id, pending, answer, issued, sh);
    }

    /// After a plan's step: files the reads it asked for, asks the shell for work when the plan wants
    /// it, and answers the call when the plan did (dropping what it no longer needs).
    fn after_step(
        &mut self,
        id: Id,
        mut pending: Pending,
        answer: Option<ToolResult>,
        issued: Issued,
        sh: &mut Shared,
    ) {
        let more = self.issue(&id, issued.0, sh);
        pending.tickets.extend(more);
        // Jobs go to the shell at once: they hold no Bitbucket slot.
        for (ticket, job) in issued.1 {
            self.tickets.insert(ticket, id.clone());
            sh.tickets.insert(ticket, self.id);
            pending.tickets.insert(ticket);
            self.jobs.insert(ticket);
            sh.out.push_back(Output::Compute { session: self.id, ticket, job: Box::new(job) });
        }
        // While a call waits on jobs its work ticket stays: it is the call's deadline.
        let on_jobs = pending.tickets.iter().any(|t| self.jobs.contains(t));
        if answer.is_none() && pending.plan.wants_work() {
            // One ticket for all of a call's work, so the shell keeps one deadline for it.
            let ticket = *pending.work.get_or_insert_with(|| sh.new_ticket());
            self.tickets.insert(ticket, id.clone());
            sh.tickets.insert(ticket, self.id);
            sh.out.push_back(Output::Work { session: self.id, ticket });
        } else if answer.is_some() || !on_jobs {
            self.drop_work(&mut pending, sh);
        }
        let tag = pending.tag;
        match answer {
            Some(result) => {
                for t in std::mem::take(&mut pending.tickets) {
                    self.drop_read(t, sh);
                }
                self.drop_work(&mut pending, sh);
                self.send_queued(sh);
                self.answer_later(&id, pending, result.to_value(), sh);
            }
            None if pending.tickets.is_empty() && pending.work.is_none() => {
                let result =
                    ToolResult::error("The call stopped waiting on Bitbucket without an answer. This is a bug in bb.");
                self.answer_later(&id, pending, result.to_value(), sh);
            }
            None => {
                self.pending.insert(id, pending);
                return;
            }
        }
        self.settle(tag, sh);
    }

    /// Stops the CPU work a call asked for: the shell drops it.
    fn drop_work(&mut self, pending: &mut Pending, sh: &mut Shared) {
        if let Some(t) = pending.work.take() {
            self.tickets.remove(&t);
            sh.tickets.remove(&t);
            sh.out.push_back(Output::CancelFetch(t));
        }
    }

    fn answer_later(&mut self, id: &Id, pending: Pending, result: Value, sh: &mut Shared) {
        let result = if pending.stateless { stateless::complete(result, sh.config.version) } else { result };
        let answer = jsonrpc::result_value(id, result);
        match pending.batch {
            Some(b) => {
                if let Some(batch) = self.batches.get_mut(&b) {
                    batch.waiting = batch.waiting.saturating_sub(1);
                    batch.answers.push(answer);
                }
                self.finish_batch_if_done(b, sh);
            }
            None => self.send(answer, Some(pending.tag), sh),
        }
    }

    fn cancel(&mut self, id: &Id, sh: &mut Shared) {
        let Some(mut pending) = self.pending.remove(id) else { return };
        self.drop_work(&mut pending, sh);
        self.log(Level::Debug, format!("cancelled request {id}"), sh);
        for t in pending.tickets {
            self.drop_read(t, sh);
        }
        self.send_queued(sh);
        if let Some(b) = pending.batch {
            if let Some(batch) = self.batches.get_mut(&b) {
                batch.waiting = batch.waiting.saturating_sub(1);
            }
            self.finish_batch_if_done(b, sh);
        }
        self.settle(pending.tag, sh);
    }

    /// Reads the view page; `stateless` answers as 2026-07-28 does (complete and cacheable, and an
    /// unknown URI is invalid params rather than -32002).
    fn resources_read(&mut self, id: &Id, params: &Value, stateless: bool) -> Answer {
        let Some(uri) = params.get("uri").and_then(Value::as_str) else {
            return Answer::Now(Err(ErrorReply::new(
                Some(id.clone()),
                INVALID_PARAMS,
                "Invalid params: `resources/read` needs a `uri`.",
            )));
        };
        if uri != VIEW_URI {
            let code = if stateless { INVALID_PARAMS } else { RESOURCE_NOT_FOUND };
            let mut reply =
                ErrorReply::new(Some(id.clone()), code, format!("Resource not found: `{}`.", truncate(uri, 200)));
            reply.data = Some(json!({"uri": uri}));
            return Answer::Now(Err(reply));
        }
        Answer::Made(if stateless { Made::StatelessView } else { Made::View })
    }

    fn send(&mut self, value: Value, tag: Option<u64>, sh: &mut Shared) {
        match serde_json::to_vec(&value) {
            Ok(message) => sh.out.push_back(Output::Send { session: self.id, tag, message }),
            Err(e) => sh
                .out
                .push_back(Output::Log { level: Level::Error, message: format!("could not encode an answer: {e}") }),
        }
    }

    fn log(&mut self, level: Level, message: String, sh: &mut Shared) {
        if let Some((min, tag)) = self.request_log {
            // A 2026-07-28 request's messages go with its answer, and only when it asked for them.
            if level >= min {
                let note = jsonrpc::notification_value(
                    "notifications/message",
                    json!({"level": level.as_str(), "logger": "bb", "data": message}),
                );
                self.send(note, Some(tag), sh);
            }
        } else if self.client_log_level.is_some_and(|min| level >= min) {
            let note = jsonrpc::notification_value(
                "notifications/message",
                json!({"level": level.as_str(), "logger": "bb", "data": message}),
            );
            self.send(note, None, sh);
        }
        sh.out.push_back(Output::Log { level, message });
    }
}

enum Answer {
    Now(Result<Value, ErrorReply>),
    /// A result that never changes, made once when the server started.
    Made(Made),
    Later,
}

/// An answer to a request: a value, or a message already serialized.
enum Reply {
    Value(Value),
    Bytes(Vec<u8>),
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
