//! What the sessions of one server share, and the sessions themselves (quinn-proto's `Endpoint`
//! to its `Connection`s): the exposed tools and instructions, the caches, the table of every call's
//! work in flight ([`crate::work`]). The shell owns the one `Server` and drives it; nothing in it is
//! shared behind a lock.
//!
//! ```text
//!   shell                                   Server
//!   ─────                                   ──────
//!   open()                           ──▶    a new Session (waiting for `initialize`)
//!   handle(Message{session, tag}, now) ──▶  the session decodes and dispatches
//!   handle(Fetched{ticket}, now)     ──▶    routed to the session whose plan asked for it
//!   close(session)                   ──▶    its calls dropped, their reads cancelled
//!   poll_output() until None         ◀──    Send, Done, Fetch, Compute, Work, Cancel, Log
//! ```
//!
//! After *every* call to `open`, `handle` or `close`, drain [`Server::poll_output`] (str0m's rule).
//! Every input tagged by the shell ends in exactly one [`Output::Done`] for its tag, after every
//! [`Output::Send`] that answers it: a transport that answers one request per input (HTTP) knows
//! from it that nothing more will come.

use std::collections::BTreeMap;

use crate::caches::Caches;
use crate::config::ServerConfig;
use crate::contract::{Input, Output, SessionId};
use crate::session::Session;
use crate::shared::Shared;
use crate::work::Kind;

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
    /// A server with no session yet, sharing `caches` with every server given the same (or a clone):
    /// whoever makes servers decides which share (the drive: all of one application's).
    pub fn new(config: ServerConfig, caches: Caches) -> Server {
        Server { shared: Shared::new(config, caches), sessions: BTreeMap::new(), next_session: 0 }
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

    /// Says who is behind `session`'s requests (a login's Bitbucket user, or a digest of the person's
    /// token; never a secret): what a 2026-07-28 confirmation's sealed state is bound to, so that one
    /// person's acceptance cannot be replayed by another.
    pub fn set_principal(&mut self, session: SessionId, principal: String) {
        if let Some(s) = self.sessions.get_mut(&session) {
            s.set_principal(principal);
        }
    }

    /// Says whether the audit trail fails to be written: while it does, every tool call is refused
    /// ("it could not be recorded") and its refusal is itself offered to the trail.
    pub fn set_audit_failing(&mut self, failing: bool) {
        self.shared.audit_failing = failing;
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
            // An outcome is routed by the table of calls' work; one the core no longer waits on (its
            // call answered or cancelled, its session closed) is dropped.
            // A step is the call's last once the time has reached the deadline its steps were asked with.
            Input::Work { ticket } => {
                if let Some((owner, call, deadline_ms)) = self.shared.work.steps(ticket)
                    && let Some(s) = self.sessions.get_mut(&owner)
                {
                    let last = self.shared.now_ms >= deadline_ms;
                    // A question's deadline passing is no CPU work stopped short.
                    if last && !s.asks_in(&call) {
                        self.shared.out.push_back(Output::PastDeadline { session: owner, ticket });
                    }
                    s.worked(call, last, &mut self.shared);
                }
            }
            Input::Computed { ticket, done } => {
                // A warm-up's outcome holds no marks: nothing to keep.
                if !done.marks.is_empty() {
                    self.shared.highlights.put(done.key, done.marks.clone());
                }
                if let Some((owner, call)) = self.shared.work.complete(ticket, Kind::Job, &mut self.shared.out)
                    && let Some(s) = self.sessions.get_mut(&owner)
                {
                    s.computed(call, ticket, done, &mut self.shared);
                }
            }
            Input::Admitted { ticket, granted } => {
                if let Some((owner, call, false)) = self.shared.work.admitted(ticket, granted, &mut self.shared.out)
                    && let Some(s) = self.sessions.get_mut(&owner)
                {
                    s.refused_room(call, &mut self.shared);
                }
            }
            Input::Timer { ticket } => {
                if let Some((owner, call)) = self.shared.work.complete(ticket, Kind::Timer, &mut self.shared.out)
                    && let Some(s) = self.sessions.get_mut(&owner)
                {
                    s.timer(call, &mut self.shared);
                }
            }
            Input::Spent { ticket, spent } => {
                if let Some((owner, call)) = self.shared.work.complete(ticket, Kind::Spend, &mut self.shared.out)
                    && let Some(s) = self.sessions.get_mut(&owner)
                {
                    s.spent(call, spent, &mut self.shared);
                }
            }
            Input::Fetched { ticket, outcome } => {
                if let Some((owner, call)) = self.shared.work.complete(ticket, Kind::Read, &mut self.shared.out)
                    && let Some(s) = self.sessions.get_mut(&owner)
                {
                    s.fetched(call, ticket, outcome, &mut self.shared);
                }
            }
        }
    }

    /// The next thing the shell must do, or `None` when there is nothing more until the next input.
    pub fn poll_output(&mut self) -> Option<Output> {
        self.shared.out.pop_front()
    }
}
