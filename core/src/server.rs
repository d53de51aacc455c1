//! What the sessions of one server share, and the sessions themselves (quinn-proto's `Endpoint`
//! to its `Connection`s): the exposed tools and instructions, the avatar cache, the tickets of
//! every Bitbucket read in flight. The shell owns the one `Server` and drives it; nothing in it is
//! shared behind a lock.
//!
//! ```text
//!   shell                                   Server
//!   ─────                                   ──────
//!   open()                           ──▶    a new Session (waiting for `initialize`)
//!   handle(Message{session, tag}, now) ──▶  the session decodes and dispatches
//!   handle(Fetched{ticket}, now)     ──▶    routed to the session whose plan asked for it
//!   close(session)                   ──▶    its calls dropped, their reads cancelled
//!   poll_output() until None         ◀──    Send, Done, Fetch, CancelFetch, Log
//! ```
//!
//! After *every* call to `open`, `handle` or `close`, drain [`Server::poll_output`] (str0m's rule).
//! Every input tagged by the shell ends in exactly one [`Output::Done`] for its tag, after every
//! [`Output::Send`] that answers it: a transport that answers one request per input (HTTP) knows
//! from it that nothing more will come.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use crate::avatar_cache::AvatarCache;
use crate::fetch::{FetchOutcome, FetchRequest, Ticket};
use crate::logging::Level;
use crate::plan::Desk;
use crate::session::Session;
use crate::tool::Exposed;

/// The server's identity and exposure, fixed at start.
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
}

impl ServerConfig {
    /// A configuration for `exposed`, with instructions that match it.
    pub fn new(exposed: Arc<Exposed>, version: &'static str) -> ServerConfig {
        let instructions = crate::instructions::for_exposed(&exposed);
        ServerConfig { exposed, version, tools_page_size: 100, instructions, base_url: None }
    }
}

/// A session of a server; the shell keeps it to feed the session's messages and route its answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SessionId(pub u64);

/// Something for the server to take in.
#[derive(Debug)]
pub enum Input<'a> {
    /// One message (or batch) from a session's client. `tag` is the shell's: every answer to this
    /// input carries it back, and [`Output::Done`] closes it.
    Message {
        /// The session it came on.
        session: SessionId,
        /// The raw bytes of one line (stdio) or one POST body (HTTP).
        bytes: &'a [u8],
        /// The shell's tag for this input.
        tag: u64,
    },
    /// A message longer than the shell accepts was dropped unread.
    Oversized {
        /// The session it came on.
        session: SessionId,
        /// The limit it exceeded, in bytes.
        limit: usize,
        /// The shell's tag for this input.
        tag: u64,
    },
    /// The outcome of a Bitbucket read the server asked for.
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
    /// Send one JSON-RPC message (a single line, no newline) to a session's client.
    Send {
        /// The session whose client gets it.
        session: SessionId,
        /// The tag of the input this answers, or `None` for a message tied to no input (a log notification).
        tag: Option<u64>,
        /// The serialized message.
        message: Vec<u8>,
    },
    /// The input tagged `tag` is complete: every message that answers it has been sent (possibly none:
    /// a notification, a cancelled call).
    Done {
        /// The session the input came on.
        session: SessionId,
        /// The input's tag.
        tag: u64,
    },
    /// Make a Bitbucket request for a session and hand its outcome back as [`Input::Fetched`].
    Fetch {
        /// The session whose call needs it (in per-person mode, whose credentials it carries).
        session: SessionId,
        /// Identifies the request.
        ticket: Ticket,
        /// What to ask Bitbucket; the shell adds the base URL, credentials and timeouts.
        request: FetchRequest,
    },
    /// A request asked for earlier is no longer needed: do not send it if it has not gone yet,
    /// stop its retries, and drop its outcome.
    CancelFetch(Ticket),
    /// A line for the operator's log (stderr).
    Log {
        /// Its severity.
        level: Level,
        /// The text; never holds a secret.
        message: String,
    },
}

/// What the sessions of a server share while one of them runs.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) config: ServerConfig,
    pub(crate) avatars: AvatarCache,
    /// Which session each read in flight belongs to.
    pub(crate) tickets: BTreeMap<Ticket, SessionId>,
    next_ticket: u64,
    /// The latest wall-clock time seen, epoch milliseconds.
    pub(crate) now_ms: u64,
    pub(crate) out: VecDeque<Output>,
}

impl Shared {
    /// Where a plan files its reads, with the avatar cache.
    pub(crate) fn desk(&mut self) -> Desk<'_> {
        Desk { issued: Vec::new(), next_ticket: &mut self.next_ticket, avatars: &mut self.avatars }
    }
}

/// The sessions of one server and what they share. Method classes, in the order a driver uses them:
/// getters ([`Server::session`], [`Server::sessions`]); input ([`Server::open`], [`Server::handle`],
/// [`Server::close`]); output ([`Server::poll_output`]).
#[derive(Debug)]
pub struct Server {
    shared: Shared,
    sessions: BTreeMap<SessionId, Session>,
    next_session: u64,
}

impl Server {
    /// A server with no session yet.
    pub fn new(config: ServerConfig) -> Server {
        Server {
            shared: Shared {
                config,
                avatars: AvatarCache::default(),
                tickets: BTreeMap::new(),
                next_ticket: 0,
                now_ms: 0,
                out: VecDeque::new(),
            },
            sessions: BTreeMap::new(),
            next_session: 0,
        }
    }

    /// The server's configuration.
    pub fn config(&self) -> &ServerConfig {
        &self.shared.config
    }

    /// The session `id`, while it is open.
    pub fn session(&self, id: SessionId) -> Option<&Session> {
        self.sessions.get(&id)
    }

    /// How many sessions are open.
    pub fn sessions(&self) -> usize {
        self.sessions.len()
    }

    /// Opens a session, waiting for `initialize`.
    pub fn open(&mut self) -> SessionId {
        let id = SessionId(self.next_session);
        self.next_session += 1;
        self.sessions.insert(id, Session::new(id));
        id
    }

    /// Closes a session: its calls are dropped unanswered and their reads cancelled.
    pub fn close(&mut self, id: SessionId) {
        if let Some(mut session) = self.sessions.remove(&id) {
            session.close(&mut self.shared);
        }
    }

    /// Takes one input at wall-clock time `now_ms` (epoch milliseconds; a clock that steps back is
    /// held at the latest time seen). Drain [`Server::poll_output`] afterwards.
    pub fn handle(&mut self, input: Input<'_>, now_ms: u64) {
        self.shared.now_ms = self.shared.now_ms.max(now_ms);
        match input {
            Input::Message { session, bytes, tag } => match self.sessions.get_mut(&session) {
                Some(s) => s.message(bytes, tag, &mut self.shared),
                None => self.shared.out.push_back(Output::Done { session, tag }),
            },
            Input::Oversized { session, limit, tag } => match self.sessions.get_mut(&session) {
                Some(s) => s.oversized(limit, tag, &mut self.shared),
                None => self.shared.out.push_back(Output::Done { session, tag }),
            },
            Input::Fetched { ticket, outcome } => {
                // A read of a closed session, or of a call already answered or cancelled, is dropped.
                let Some(owner) = self.shared.tickets.remove(&ticket) else { return };
                if let Some(s) = self.sessions.get_mut(&owner) {
                    s.fetched(ticket, outcome, &mut self.shared);
                }
            }
        }
    }

    /// The next thing the shell must do, or `None` when there is nothing more until the next input.
    pub fn poll_output(&mut self) -> Option<Output> {
        self.shared.out.pop_front()
    }
}
