//! One client's MCP conversation (quinn-proto's `Connection` to the [`crate::Server`]'s `Endpoint`):
//! its handshake, the calls it has in flight, their cancellation and their answers. Split by what
//! each part holds, as quinn's `connection/` folder is:
//!
//! | file | holds |
//! |---|---|
//! | `mod.rs` | the session: decoding a message, answering it, notifications, cancellation, the log |
//! | [`route`] | the one table of methods, for both eras: the handshake's and 2026-07-28's |
//! | [`call`] | tool calls: starting a plan, feeding it outcomes and steps, answering when it does |
//! | [`batch`] | JSON-RPC batches (2025-03-26): answered together once the last request is |
//! | [`read`] | `resources/read` of a `bitbucket://` URI, run as its tool's call; how an answer is dressed |
//! | [`listing`] | `resources/list`: the person's pull requests, one plan of reads |
//! | [`prompt`] | `prompts/get`: each embedded resource read as its own call, the prompt answered with the last |
//! | [`complete`] | `completion/complete`: values from the per-person cache, or one plan of reads |
//! | [`watch`] | resource subscriptions: a watched pull request read as a live card is, its subscribers told of a change |
//!
//! ```text
//!   Server.handle(Message) ─▶ Session: decode, route ──▶ Output::Send (answers), Output::Done
//!                                                    └─▶ Output::Fetch (a plan's reads, via crate::work)
//!   Server.handle(Fetched) ─▶ Session: plan.resume ──▶ Output::Send when the plan answers, then Output::Done
//! ```
//!
//! Lifecycle: before `initialize` only `initialize`, `ping` and 2026-07-28 requests are accepted. A
//! request whose `_meta` names 2026-07-28 (and `server/discover` at any time) is served statelessly
//! ([`crate::stateless`]): its client's capabilities and log level are its own, nothing is kept for
//! the next one, and a session that serves only such requests is never initialized. Every request
//! with an id gets exactly one answer, unless a `notifications/cancelled` for it arrives first, in
//! which case its plan is dropped and it gets none. Notifications are never answered.

mod audit;
mod batch;
mod call;
mod complete;
mod listing;
mod prompt;
mod read;
mod route;
mod scoped;
mod toolsets;
mod watch;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use serde_json::{Value, json};

use crate::contract::{Output, Said, SessionId};
use crate::jsonrpc::{self, Decoded, ErrorReply, INVALID_REQUEST, Id, Message};
use crate::logging::Level;
use crate::made::{Made, MadeOnce};
use crate::protocol::{ClientProfile, ProtocolVersion};
use crate::shared::Shared;
use crate::tool::Exposed;
use crate::toolsets::Toolsets;

use batch::Batch;
use call::Pending;

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
    /// Tool calls waiting on their work ([`crate::work`] holds the tickets).
    pending: BTreeMap<Id, Pending>,
    batches: BTreeMap<u64, Batch>,
    next_batch: u64,
    /// The groups this session turned on (`enable_toolset`).
    widened: Toolsets,
    /// What this session sees and its answers made once, when it may turn groups on; `None`: what
    /// a request without a session sees (the server's).
    sees: Option<Arc<MadeOnce>>,
    /// Who is behind this session's requests, as the shell knows them (a login's Bitbucket user, a
    /// digest of a person's token): what a 2026-07-28 confirmation's state is bound to.
    principal: Option<String>,
    /// The number of bb's last question to this client (`elicitation/create` ids).
    next_ask: u64,
    /// Tool calls the audit trail records when they are answered ([`audit`]).
    calls: BTreeMap<Id, audit::Started>,
    /// `prompts/get` requests waiting on their parts ([`prompt`]), each part a call in `pending`.
    prompts: BTreeMap<Id, prompt::Gathering>,
    /// The pull requests watched for subscribers, and the open `subscriptions/listen` streams ([`watch`]).
    watches: watch::Watches,
}

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
            batches: BTreeMap::new(),
            next_batch: 0,
            widened: Toolsets::NONE,
            sees: None,
            principal: None,
            next_ask: 0,
            calls: BTreeMap::new(),
            prompts: BTreeMap::new(),
            watches: watch::Watches::default(),
        }
    }

    /// Says who is behind this session's requests ([`crate::Server::set_principal`]).
    pub(crate) fn set_principal(&mut self, principal: String) {
        self.principal = Some(principal);
    }

    /// Who is behind this session's requests; the server's own credentials when the shell named nobody.
    pub(crate) fn principal(&self) -> String {
        self.principal.clone().unwrap_or_else(|| "bb's own credentials".into())
    }

    /// Whether `call` waits on the person (its steps are the question's deadline, not CPU work).
    pub(crate) fn asks_in(&self, call: &Id) -> bool {
        self.pending.get(call).is_some_and(|p| p.asking().is_some())
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
        self.pending.values().any(|p| p.tag == tag && p.batch.is_none())
            || self.batches.values().any(|b| b.tag == tag)
            || self.watches.holds_open(tag)
    }

    /// Says the input tagged `tag` is complete, once nothing more is owed for it.
    fn settle(&mut self, tag: u64, sh: &mut Shared) {
        // A watch's reads came with no input.
        if tag != watch::WATCH_TAG && !self.awaits(tag) {
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

    /// Drops every call in flight (the client has gone): their work is cancelled, nothing is answered.
    pub(crate) fn close(&mut self, sh: &mut Shared) {
        let open: Vec<Id> = self.calls.keys().cloned().collect();
        for id in open {
            self.audit_cancelled(&id, "the session ended before the call was answered", sh);
        }
        let mut open_tags: BTreeSet<u64> = std::mem::take(&mut self.pending).into_values().map(|p| p.tag).collect();
        open_tags.extend(std::mem::take(&mut self.prompts).into_values().map(|g| g.tag));
        sh.work.cancel_session(self.id, &mut sh.out);
        open_tags.extend(std::mem::take(&mut self.batches).into_values().map(|b| b.tag));
        open_tags.extend(self.watches.take_streams());
        open_tags.remove(&watch::WATCH_TAG);
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
                    // A made answer (the tool list, the page) is never an error.
                    sh.out.push_back(Output::Send { session: self.id, tag: Some(tag), message, said: Said::Result })
                }
                None => {}
            },
            Decoded::Batch(items) => self.handle_batch(items, tag, sh),
        }
    }

    /// Handles one message; returns the answer when it is ready now.
    fn dispatch(&mut self, message: Message, tag: u64, batch: Option<u64>, sh: &mut Shared) -> Option<Reply> {
        match message {
            Message::Notification { method, params } => {
                self.notification(&method, params.as_ref(), sh);
                None
            }
            Message::Response { id, outcome } => {
                self.responded(&id, outcome, sh);
                None
            }
            Message::Request { id, method, params } => {
                if self.pending.contains_key(&id) || self.prompts.contains_key(&id) {
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
                    Answer::Made(made) => Some(Reply::Bytes(self.made(made, sh).message(&id, made))),
                    Answer::Later => None,
                }
            }
        }
    }

    /// The answers made once that `which` is taken from: this session's for its own requests, the
    /// server's for a request without a session.
    fn made<'a>(&'a self, which: Made, sh: &'a Shared) -> &'a MadeOnce {
        match (which, &self.sees) {
            (Made::ToolsList { .. } | Made::View, Some(mine)) => mine,
            _ => &sh.made,
        }
    }

    /// What this session's own calls see.
    fn exposed(&self, sh: &Shared) -> Arc<Exposed> {
        Arc::clone(self.sees.as_ref().map_or(&sh.config.exposed, |m| m.exposed()))
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

    /// Drops a call the client cancelled: its work is withdrawn and it gets no answer.
    fn cancel(&mut self, id: &Id, sh: &mut Shared) {
        // A listen's stream ends; a watch's own reads are no client's to cancel.
        if self.end_stream(id, sh) || self.cancel_awaiting(id, sh) || self.watches.owns(id) {
            return;
        }
        // A prompt's parts are cancelled with it, and only with it.
        if self.cancel_prompt(id, sh) || self.pending.get(id).is_some_and(Pending::is_part) {
            return;
        }
        let Some(pending) = self.pending.remove(id) else { return };
        self.audit_cancelled(id, "the client cancelled the call", sh);
        // A question still open for the call is withdrawn: the person need not answer it.
        if let Some(ask) = pending.asking().cloned() {
            self.withdraw_question(&ask, "The call was cancelled.", pending.tag, sh);
        }
        sh.work.cancel_steps(self.id, id, &mut sh.out);
        self.log(Level::Debug, format!("cancelled request {id}"), sh);
        sh.work.cancel_call(self.id, id, &mut sh.out);
        if let Some(b) = pending.batch {
            self.batch_lost_one(b, sh);
        }
        self.settle(pending.tag, sh);
    }

    fn send(&mut self, value: Value, tag: Option<u64>, sh: &mut Shared) {
        self.audit_answer(&value, sh);
        match serde_json::to_vec(&value) {
            Ok(message) => sh.out.push_back(Output::Send { session: self.id, tag, message, said: Said::of(&value) }),
            Err(e) => sh
                .out
                .push_back(Output::Log { level: Level::Error, message: format!("could not encode an answer: {e}") }),
        }
    }

    fn log(&mut self, level: Level, message: String, sh: &mut Shared) {
        // A 2026-07-28 request's messages go with its answer, and only when it asked for them.
        let to_client = match self.request_log {
            Some((min, tag)) => (level >= min).then_some(Some(tag)),
            None => self.client_log_level.is_some_and(|min| level >= min).then_some(None),
        };
        if let Some(tag) = to_client {
            let note = jsonrpc::notification_value(
                "notifications/message",
                json!({"level": level.as_str(), "logger": "bb", "data": message}),
            );
            self.send(note, tag, sh);
        }
        sh.out.push_back(Output::Log { level, message });
    }
}

/// How a request is answered.
enum Answer {
    Now(Result<Value, ErrorReply>),
    /// A result that never changes, made once ([`crate::made`]).
    Made(Made),
    /// By a tool call's plan, once its work is done.
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
