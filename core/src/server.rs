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

use crate::avatar_cache::AvatarCache;
use crate::fetch::{FetchOutcome, Ticket};
use crate::highlight::Highlighted;
use crate::highlight_cache::HighlightCache;
use crate::session::Session;
use crate::shared::{Output, ServerConfig, SessionId, Shared};

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
    /// A step of the CPU work asked for with [`Output::Work`]; `last` once the shell's deadline for it has passed.
    Work {
        /// The ticket of [`Output::Work`].
        ticket: Ticket,
        /// The deadline has passed: finish with what is done.
        last: bool,
    },
    /// The outcome of a job asked for with [`Output::Compute`]. It is kept in the highlight cache even
    /// when the call that asked for it has answered meanwhile (the next read of the file gets it).
    Computed {
        /// The ticket of [`Output::Compute`].
        ticket: Ticket,
        /// What the job made.
        done: Highlighted,
    },
    /// The outcome of a Bitbucket read the server asked for.
    Fetched {
        /// The ticket of [`Output::Fetch`].
        ticket: Ticket,
        /// What happened.
        outcome: FetchOutcome,
    },
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
                made: config.made_once(),
                avatars: AvatarCache::with_cap(config.avatar_cache_bytes),
                highlights: HighlightCache::default(),
                config,
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
            Input::Work { ticket, last } => {
                let Some(owner) = self.shared.tickets.remove(&ticket) else { return };
                if let Some(s) = self.sessions.get_mut(&owner) {
                    s.worked(ticket, last, &mut self.shared);
                }
            }
            Input::Computed { ticket, done } => {
                self.shared.highlights.put(done.key, done.marks.clone());
                let Some(owner) = self.shared.tickets.remove(&ticket) else { return };
                if let Some(s) = self.sessions.get_mut(&owner) {
                    s.computed(ticket, done, &mut self.shared);
                }
            }
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
