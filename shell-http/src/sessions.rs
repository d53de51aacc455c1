//! The live sessions, spread over [`SHARDS`] shards, each a [`Driver`] (over a core server of its own)
//! behind a mutex of its own (the core has no lock); and which waiting POST each message goes to.
//!
//! A session lives in the shard its `Mcp-Session-Id` names (the id's first byte), so a request finds
//! it without a global lock, and sessions in different shards run at the same time on different
//! threads. A mutex is held only while its driver runs (never across an await); Bitbucket requests
//! run concurrently on bb's pool of read threads. The shards share one avatar cache (the configuration's:
//! a person's avatar is fetched once, whichever shard asks) and their reads in flight
//! ([`SharedReads`]): an identical read for the same credentials, asked by sessions in any shards at
//! the same time, is made once.
//!
//! Routing: every POST body is an input with a fresh tag and a waiter (a channel). What the core
//! sends with that tag goes to that waiter; when the core says the input is done, the last message
//! is the answer ([`Part::Final`]), or, when none came, the input needed none ([`Part::Unanswered`]:
//! a notification, a response, a cancelled call). Messages tied to no input (log notifications) go
//! to a waiter of the session that answers by SSE, if one is open, and are otherwise dropped.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Duration;

use bb_core::{FetchOutcome, Input, Said, ServerConfig, SessionId, Ticket};
use bb_drive::{Bitbucket, Delivery, Driver, Logger, PersonalToken, Process, SharedReads, Wake, now_ms};
use hyper::body::Bytes;
use smol::channel::{Receiver, Sender};

use crate::census::{Bound, Census, Owner, Seat};
use crate::registry::Registry;
use crate::unsent::charged;

/// One part of a POST's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Part {
    /// A message that is not the answer (a progress or log notification).
    Interim(Bytes),
    /// The answer, and what it says (for the metrics and the log); nothing follows.
    Final(Bytes, Said),
    /// No answer will come.
    Unanswered,
}

/// How many shards the sessions are spread over: enough that two busy sessions rarely share one on a
/// machine of a few cores.
pub(crate) const SHARDS: usize = 8;

/// A session of the HTTP server: its shard and its id in that shard's core server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SessionRef {
    shard: usize,
    id: SessionId,
}

impl SessionRef {
    /// The core's number for the session (what the audit trail names it by).
    pub(crate) fn id(&self) -> SessionId {
        self.id
    }
}

/// The live sessions of one HTTP server.
pub(crate) struct Sessions {
    shards: Vec<Mutex<State>>,
    census: Arc<Census>,
    // Counts every use of every session, so the one used longest ago is known even within a millisecond.
    turns: AtomicU64,
}

struct State {
    driver: Driver,
    registry: Registry,
    waiters: BTreeMap<(SessionId, u64), Waiter>,
    next_tag: u64,
}

/// A POST waiting for its answer, or a session's GET stream.
struct Waiter {
    tx: Sender<Part>,
    // Answers by SSE, so messages tied to no input may join it.
    streaming: bool,
    /// The session's GET stream: it answers no input, and takes the messages tied to none first.
    get: bool,
}

impl Sessions {
    /// No session yet; sessions run over `config`, count in and take room of `process`, reach
    /// Bitbucket through `bitbucket`, log to `logger`, and take their seats in `census`.
    pub(crate) fn new(
        config: ServerConfig,
        process: &Process,
        bitbucket: Arc<dyn Bitbucket>,
        logger: Logger,
        census: Arc<Census>,
    ) -> Arc<Sessions> {
        let reads = SharedReads::new();
        Arc::new_cyclic(|me: &Weak<Sessions>| {
            let shards = (0..SHARDS)
                .map(|shard| {
                    let woken = me.clone();
                    let me = me.clone();
                    let on_fetched = move |ticket: Ticket, outcome: FetchOutcome| {
                        if let Some(sessions) = me.upgrade() {
                            sessions.lock(shard).feed(Input::Fetched { ticket, outcome });
                        }
                    };
                    let on_wake = move |w: Wake| {
                        if let Some(sessions) = woken.upgrade() {
                            sessions.lock(shard).wake(w);
                        }
                    };
                    let config = config.clone();
                    let driver =
                        Driver::new(config, process.clone(), Arc::clone(&bitbucket), logger.clone(), on_fetched)
                            .share_reads(&reads)
                            .on_wake(on_wake);
                    Mutex::new(State { driver, registry: Registry::default(), waiters: BTreeMap::new(), next_tag: 0 })
                })
                .collect();
            Sessions { shards, census, turns: AtomicU64::new(0) }
        })
    }

    /// Sessions alive (with an id), over every shard.
    pub(crate) fn count(&self) -> usize {
        (0..SHARDS).map(|shard| self.lock(shard).registry.len()).sum()
    }

    fn lock(&self, shard: usize) -> MutexGuard<'_, State> {
        let state = &self.shards[shard % SHARDS];
        state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The shard a session id names.
    fn shard_of(id: &str) -> usize {
        id.bytes().next().map_or(0, usize::from) % SHARDS
    }

    /// Opens a session that will be reachable as `id` once admitted, acting for `person` (in
    /// per-person mode).
    pub(crate) fn open(&self, id: &str, person: Option<PersonalToken>) -> SessionRef {
        let shard = Sessions::shard_of(id);
        let mut state = self.lock(shard);
        let mut out = Vec::new();
        let session = state.driver.open(person, &mut |d| out.push(d));
        state.route(out);
        SessionRef { shard, id: session }
    }

    /// Opens a session for one 2026-07-28 request, acting for `person`: no id names it, it takes no
    /// seat, and its [`WaiterGuard::closing`] closes it once the answer is sent or dropped. Such
    /// sessions are spread over the shards in turn.
    pub(crate) fn open_once(&self, person: Option<PersonalToken>) -> SessionRef {
        let shard = (self.turn() % SHARDS as u64) as usize;
        let mut state = self.lock(shard);
        let mut out = Vec::new();
        let session = state.driver.open(person, &mut |d| out.push(d));
        state.route(out);
        SessionRef { shard, id: session }
    }

    /// The session an `Mcp-Session-Id` names, and the person it acts for.
    pub(crate) fn find(&self, id: &str) -> Option<(SessionRef, Option<PersonalToken>)> {
        let shard = Sessions::shard_of(id);
        let state = self.lock(shard);
        let session = state.registry.session(id)?;
        Some((SessionRef { shard, id: session }, state.driver.person(session).cloned()))
    }

    /// Gives `session` its person's token as it is now (a login's, renewed).
    pub(crate) fn set_person(&self, session: SessionRef, person: PersonalToken) {
        self.lock(session.shard).driver.set_person(session.id, person);
    }

    /// Hands one POST body to `session`. The receiver yields the parts of its answer; `stream`
    /// says the answer is an SSE stream from the start (so log notifications may join it).
    pub(crate) fn submit(&self, session: SessionRef, body: &[u8], stream: bool) -> (u64, Receiver<Part>) {
        let (tx, rx) = smol::channel::unbounded();
        let turn = self.turn();
        let mut state = self.lock(session.shard);
        let tag = state.next_tag;
        state.next_tag += 1;
        state.registry.touch(session.id, now_ms(), turn);
        state.waiters.insert((session.id, tag), Waiter { tx, streaming: stream, get: false });
        state.feed(Input::Message { session: session.id, bytes: body, tag });
        (tag, rx)
    }

    /// Opens `session`'s GET stream: the messages tied to no input (a subscription's
    /// `notifications/resources/updated`, log messages) go on it while it is open. `None` when the
    /// session already has one (a session gets one: the next would only ever stay silent).
    pub(crate) fn open_stream(&self, session: SessionRef) -> Option<(u64, Receiver<Part>)> {
        let mut state = self.lock(session.shard);
        if state.waiters.range((session.id, 0)..=(session.id, u64::MAX)).any(|(_, w)| w.get) {
            return None;
        }
        let (tx, rx) = smol::channel::unbounded();
        let tag = state.next_tag;
        state.next_tag += 1;
        state.waiters.insert((session.id, tag), Waiter { tx, streaming: true, get: true });
        Some((tag, rx))
    }

    /// bb's version, as its answers name it.
    pub(crate) fn version(&self) -> &'static str {
        self.lock(0).driver.server().config().version
    }

    /// Whether the session negotiated a protocol version (its `initialize` succeeded).
    pub(crate) fn initialized(&self, session: SessionRef) -> bool {
        self.lock(session.shard).driver.server().session(session.id).is_some_and(|s| s.protocol_version().is_some())
    }

    /// Marks the waiter of `tag` as answering by SSE, so messages tied to no input reach it.
    pub(crate) fn stream(&self, session: SessionRef, tag: u64) {
        if let Some(w) = self.lock(session.shard).waiters.get_mut(&(session.id, tag)) {
            w.streaming = true;
        }
    }

    /// A seat for a new session of `owner`. At a cap, the session idle longest (no POST waiting)
    /// among those the cap counts is ended to make room; `Err` names the cap when every one of
    /// them is busy. On success, also says how many sessions were ended.
    pub(crate) fn seat(&self, owner: Owner) -> Result<(Seat, usize), Bound> {
        let mut ended = 0;
        loop {
            let bound = match self.census.take(owner) {
                Ok(seat) => return Ok((seat, ended)),
                Err(bound) => bound,
            };
            // Each pass ends one session or gives up, and a cap is at most a few thousand sessions.
            let made_room = match bound {
                Bound::Total => self.end_idle_longest(|_| true),
                Bound::Peer => self.end_idle_longest(|o| o.peer == owner.peer),
                Bound::Person => self.end_idle_longest(|o| o.person.is_some() && o.person == owner.person),
            };
            if !made_room {
                return Err(bound);
            }
            ended += 1;
        }
    }

    /// The cap a [`Bound`] names.
    pub(crate) fn cap(&self, bound: Bound) -> usize {
        self.census.cap(bound)
    }

    /// Makes `session` reachable as `id`, in the seat taken for it.
    pub(crate) fn admit(&self, session: SessionRef, id: String, seat: Seat) {
        let owner = seat.keep();
        let turn = self.turn();
        self.lock(session.shard).registry.insert(id, session.id, owner, now_ms(), turn);
    }

    fn turn(&self) -> u64 {
        self.turns.fetch_add(1, Ordering::Relaxed)
    }

    /// Ends the session with this id: its Bitbucket requests stop and every open answer closes.
    /// False if there was none.
    pub(crate) fn end(&self, id: &str) -> bool {
        let mut state = self.lock(Sessions::shard_of(id));
        let Some((session, owner)) = state.registry.remove(id) else { return false };
        state.close(session);
        drop(state);
        self.census.release(&owner);
        true
    }

    /// Ends the session unused longest, among those `counts` takes, that has no POST waiting.
    /// False when there is none.
    fn end_idle_longest(&self, counts: impl Fn(&Owner) -> bool) -> bool {
        // Each shard is looked at under its own lock; the one chosen may be used meanwhile, so
        // the choice is checked again before it is ended.
        for _ in 0..4 {
            let oldest = (0..SHARDS)
                .filter_map(|shard| {
                    let state = self.lock(shard);
                    state.registry.idle_longest(&counts, |s| state.busy(s)).map(|(used, id)| (used, id.to_owned()))
                })
                .min();
            let Some((turn, id)) = oldest else { return false };
            let mut state = self.lock(Sessions::shard_of(&id));
            let still = state
                .registry
                .session(&id)
                .is_some_and(|s| !state.busy(s) && state.registry.last_turn(s) == Some(turn));
            if !still {
                continue;
            }
            let Some((session, owner)) = state.registry.remove(&id) else { continue };
            state.close(session);
            drop(state);
            self.census.release(&owner);
            return true;
        }
        false
    }

    /// Closes a session no id names (its `initialize` failed, or found no room).
    pub(crate) fn close(&self, session: SessionRef) {
        self.lock(session.shard).close(session.id);
    }

    /// Ends every session unused for longer than `idle` with no POST waiting. Returns how many.
    pub(crate) fn expire(&self, idle: Duration) -> usize {
        let mut n = 0;
        for shard in 0..SHARDS {
            let owners = self.lock(shard).expire(idle);
            n += owners.len();
            for owner in &owners {
                self.census.release(owner);
            }
        }
        n
    }

    fn forget(&self, session: SessionRef, tag: u64) {
        self.lock(session.shard).waiters.remove(&(session.id, tag));
    }
}

impl State {
    fn wake(&mut self, w: Wake) {
        let mut out = Vec::new();
        self.driver.wake(w, &mut |d| out.push(d));
        self.route(out);
    }

    fn feed(&mut self, input: Input<'_>) {
        let mut out = Vec::new();
        self.driver.feed(input, &mut |d| out.push(d));
        self.route(out);
    }

    fn close(&mut self, session: SessionId) {
        let mut out = Vec::new();
        self.driver.close(session, &mut |d| out.push(d));
        self.route(out);
        // The core completes what it still owed; a waiter it never saw (a race with the close) ends here.
        let open: Vec<(SessionId, u64)> =
            self.waiters.range((session, 0)..=(session, u64::MAX)).map(|(k, _)| *k).collect();
        for key in open {
            if let Some(w) = self.waiters.remove(&key) {
                let _ = w.tx.try_send(Part::Unanswered);
            }
        }
    }

    /// Whether a POST of `session` waits for its answer.
    fn busy(&self, session: SessionId) -> bool {
        self.waiters.range((session, 0)..=(session, u64::MAX)).next().is_some()
    }

    /// Ends the sessions idle past `idle`, returning whom each counted against.
    fn expire(&mut self, idle: Duration) -> Vec<Owner> {
        let waiters = &self.waiters;
        let busy = |s: SessionId| waiters.range((s, 0)..=(s, u64::MAX)).next().is_some();
        let expired = self.registry.expire(idle, now_ms(), busy);
        for &(session, _) in &expired {
            self.close(session);
        }
        expired.into_iter().map(|(_, owner)| owner).collect()
    }

    /// Hands what the driver delivered to the waiters. Messages of one input are held until the
    /// end of the drain, when it is known whether the input is done and so which is the answer.
    fn route(&mut self, out: Vec<Delivery>) {
        // Each input's messages, with what each says (the last is the answer).
        type Written = (Vec<u8>, Said);
        let room = Arc::clone(self.driver.process().room());
        let mut sent: BTreeMap<(SessionId, u64), Vec<Written>> = BTreeMap::new();
        let mut done: BTreeSet<(SessionId, u64)> = BTreeSet::new();
        for d in out {
            match d {
                Delivery::Send { session, tag: Some(tag), message, said } => {
                    sent.entry((session, tag)).or_default().push((message, said))
                }
                Delivery::Send { session, tag: None, message, .. } => {
                    let mut open = self.waiters.range((session, 0)..=(session, u64::MAX)).filter(|(_, w)| w.streaming);
                    let get = self.waiters.range((session, 0)..=(session, u64::MAX)).find(|(_, w)| w.get);
                    if let Some((_, w)) = get.or_else(|| open.next()) {
                        let _ = w.tx.try_send(Part::Interim(charged(message, &room)));
                    }
                }
                Delivery::Done { session, tag } => {
                    done.insert((session, tag));
                }
            }
        }
        for (key, messages) in &mut sent {
            if done.contains(key) {
                continue;
            }
            if let Some(w) = self.waiters.get(key) {
                for (m, _) in messages.drain(..) {
                    let _ = w.tx.try_send(Part::Interim(charged(m, &room)));
                }
            }
        }
        for key in done {
            // A POST whose client went away has no waiter; its answer is dropped.
            let Some(w) = self.waiters.remove(&key) else { continue };
            let mut messages = sent.remove(&key).unwrap_or_default();
            let last = messages.pop();
            for (m, _) in messages {
                let _ = w.tx.try_send(Part::Interim(charged(m, &room)));
            }
            let _ = w.tx.try_send(last.map_or(Part::Unanswered, |(m, said)| Part::Final(charged(m, &room), said)));
        }
    }
}

/// Unregisters a POST's waiter when its answer is dropped (sent, or the client went away). The
/// call itself goes on: a dropped connection is not a cancellation.
pub(crate) struct WaiterGuard {
    sessions: Weak<Sessions>,
    session: SessionRef,
    tag: u64,
    closes: bool,
}

impl WaiterGuard {
    /// A guard for the waiter of `tag` in `session`.
    pub(crate) fn new(sessions: &Arc<Sessions>, session: SessionRef, tag: u64) -> WaiterGuard {
        WaiterGuard { sessions: Arc::downgrade(sessions), session, tag, closes: false }
    }

    /// A guard that also closes `session` (opened by [`Sessions::open_once`]): in 2026-07-28 a
    /// dropped answer stream is the request's cancellation, so its Bitbucket reads stop.
    pub(crate) fn closing(sessions: &Arc<Sessions>, session: SessionRef, tag: u64) -> WaiterGuard {
        WaiterGuard { sessions: Arc::downgrade(sessions), session, tag, closes: true }
    }
}

impl Drop for WaiterGuard {
    fn drop(&mut self) {
        if let Some(sessions) = self.sessions.upgrade() {
            sessions.forget(self.session, self.tag);
            if self.closes {
                sessions.close(self.session);
            }
        }
    }
}
