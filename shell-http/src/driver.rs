//! One HTTP session's pump: feeds POST bodies and Bitbucket outcomes to its [`Session`], drains
//! [`Session::poll_output`] after every input, and delivers each message to the POST it answers.
//!
//! The session sits behind a mutex held only while it runs (never across an await), so requests
//! of one session are handled one at a time while their Bitbucket requests run concurrently on
//! smol's blocking pool, as in the stdio driver.
//!
//! Routing: every POST body is an input with a fresh tag and a waiter (a channel). Messages the
//! session sends with that tag go to that waiter; once the session no longer
//! [awaits](Session::awaits) the tag, the last of them is the answer ([`Delivery::Final`]) and the
//! waiter is done; when none came at all, the input needed no answer ([`Delivery::Unanswered`]:
//! a notification, a response, or a cancelled call). Messages tied to no input (log notifications)
//! go to a waiter that answers by SSE, if one is open, and are otherwise dropped.

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use bb_core::{Input, Output, Session, Ticket};
use smol::channel::{Receiver, Sender};

use crate::PersonalToken;
use crate::server::Shared;

/// One message for a waiting POST.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Delivery {
    /// A message that is not the answer (a progress or log notification).
    Interim(Vec<u8>),
    /// The answer; nothing follows.
    Final(Vec<u8>),
    /// No answer will come.
    Unanswered,
}

/// A live session and what it needs to run.
pub(crate) struct SessionEntry {
    /// The `Mcp-Session-Id`.
    pub(crate) id: String,
    /// The person's own Bitbucket token, in per-user mode.
    pub(crate) person: Option<PersonalToken>,
    /// When it was last used, in epoch milliseconds.
    pub(crate) last_used_ms: AtomicU64,
    driver: Mutex<Driver>,
}

struct Driver {
    session: Session,
    next_tag: u64,
    waiters: HashMap<u64, Sender<Delivery>>,
    streaming: BTreeSet<u64>,
    fetches: HashMap<Ticket, smol::Task<()>>,
    ended: bool,
}

impl SessionEntry {
    /// A session entry around `session`.
    pub(crate) fn new(id: String, person: Option<PersonalToken>, session: Session, now_ms: u64) -> SessionEntry {
        SessionEntry {
            id,
            person,
            last_used_ms: AtomicU64::new(now_ms),
            driver: Mutex::new(Driver {
                session,
                next_tag: 0,
                waiters: HashMap::new(),
                streaming: BTreeSet::new(),
                fetches: HashMap::new(),
                ended: false,
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Driver> {
        self.driver.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Hands one POST body to the session. The receiver yields what the session sends for it;
    /// `stream` says the answer is an SSE stream from the start (so log notifications may join it).
    pub(crate) fn submit(
        self: &Arc<Self>,
        shared: &Arc<Shared>,
        body: &[u8],
        stream: bool,
    ) -> (u64, Receiver<Delivery>) {
        let now = crate::server::now_ms();
        self.last_used_ms.store(now, Ordering::Relaxed);
        let (tx, rx) = smol::channel::unbounded();
        let mut d = self.lock();
        let tag = d.next_tag;
        d.next_tag += 1;
        if d.ended {
            let _ = tx.try_send(Delivery::Unanswered);
            return (tag, rx);
        }
        d.waiters.insert(tag, tx);
        if stream {
            d.streaming.insert(tag);
        }
        d.session.handle(Input::Message { bytes: body, tag }, now);
        self.pump(&mut d, shared);
        (tag, rx)
    }

    /// Whether the session negotiated a protocol version (its `initialize` succeeded).
    pub(crate) fn initialized(&self) -> bool {
        self.lock().session.protocol_version().is_some()
    }

    /// Marks the waiter of `tag` as answering by SSE, so messages tied to no input reach it.
    pub(crate) fn stream(&self, tag: u64) {
        let mut d = self.lock();
        if d.waiters.contains_key(&tag) {
            d.streaming.insert(tag);
        }
    }

    /// Whether a POST of this session is still waiting for its answer (such a session never idles out).
    pub(crate) fn busy(&self) -> bool {
        self.driver.try_lock().map_or(true, |d| !d.waiters.is_empty())
    }

    /// Ends the session: stops its Bitbucket requests and closes every open answer.
    pub(crate) fn end(&self) {
        let mut d = self.lock();
        d.ended = true;
        d.fetches.clear();
        d.streaming.clear();
        for (_, tx) in d.waiters.drain() {
            let _ = tx.try_send(Delivery::Unanswered);
        }
    }

    fn forget(&self, tag: u64) {
        let mut d = self.lock();
        d.waiters.remove(&tag);
        d.streaming.remove(&tag);
    }

    fn fetched(self: &Arc<Self>, shared: &Arc<Shared>, ticket: Ticket, outcome: bb_core::FetchOutcome) {
        let mut d = self.lock();
        // This runs inside that very task: let it finish rather than cancel it.
        if let Some(task) = d.fetches.remove(&ticket) {
            task.detach();
        }
        if d.ended {
            return;
        }
        d.session.handle(Input::Fetched { ticket, outcome }, crate::server::now_ms());
        self.pump(&mut d, shared);
    }

    /// Carries out everything the session asked for, then settles the waiters.
    fn pump(self: &Arc<Self>, d: &mut Driver, shared: &Arc<Shared>) {
        let mut sent: HashMap<u64, Vec<Vec<u8>>> = HashMap::new();
        while let Some(out) = d.session.poll_output() {
            match out {
                Output::Send { message, tag: Some(tag) } => sent.entry(tag).or_default().push(message),
                Output::Send { message, tag: None } => {
                    let open = d.streaming.iter().copied().find(|t| d.waiters.contains_key(t));
                    if let Some(tx) = open.and_then(|t| d.waiters.get(&t)) {
                        let _ = tx.try_send(Delivery::Interim(message));
                    }
                }
                Output::Fetch { ticket, request } => {
                    let entry = Arc::downgrade(self);
                    let person = self.person.clone();
                    let fetch = Arc::clone(&shared.fetch);
                    let owner = Arc::downgrade(shared);
                    let task = shared.spawn(async move {
                        let outcome = smol::unblock(move || fetch(request, person.as_ref())).await;
                        if let (Some(entry), Some(shared)) = (entry.upgrade(), owner.upgrade()) {
                            entry.fetched(&shared, ticket, outcome);
                        }
                    });
                    if let Some(task) = task {
                        d.fetches.insert(ticket, task);
                    }
                }
                Output::CancelFetch(ticket) => {
                    // Dropping the task stops waiting; a request already sent finishes unseen.
                    d.fetches.remove(&ticket);
                }
                Output::Log { level, message } => (shared.log)(level, &message),
            }
        }
        let tags: Vec<u64> = d.waiters.keys().copied().collect();
        for tag in tags {
            if d.session.awaits(tag) {
                for m in sent.remove(&tag).unwrap_or_default() {
                    if let Some(tx) = d.waiters.get(&tag) {
                        let _ = tx.try_send(Delivery::Interim(m));
                    }
                }
                continue;
            }
            let Some(tx) = d.waiters.remove(&tag) else { continue };
            d.streaming.remove(&tag);
            let mut messages = sent.remove(&tag).unwrap_or_default();
            let last = messages.pop();
            for m in messages {
                let _ = tx.try_send(Delivery::Interim(m));
            }
            let _ = tx.try_send(last.map_or(Delivery::Unanswered, Delivery::Final));
        }
    }
}

/// Unregisters a POST's waiter when its answer is dropped (sent, or the client went away). The
/// call itself goes on: a dropped connection is not a cancellation.
pub(crate) struct WaiterGuard {
    entry: Weak<SessionEntry>,
    tag: u64,
}

impl WaiterGuard {
    /// A guard for the waiter of `tag`.
    pub(crate) fn new(entry: &Arc<SessionEntry>, tag: u64) -> WaiterGuard {
        WaiterGuard { entry: Arc::downgrade(entry), tag }
    }
}

impl Drop for WaiterGuard {
    fn drop(&mut self) {
        if let Some(entry) = self.entry.upgrade() {
            entry.forget(self.tag);
        }
    }
}
