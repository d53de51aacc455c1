//! The Bitbucket reads in flight that drivers share: an identical GET asked for while one is in the
//! air, with the same credentials, waits for that one instead of going to Bitbucket again.
//!
//! The decisions are the core's table ([`Coalesce`]); this is its place between threads. Drivers that
//! reach the same Bitbucket share one [`SharedReads`] (the HTTP shell's shards share theirs); the
//! mutex is held only for a map operation, never while a request runs or an outcome is handed on.
//!
//! ```text
//!   Driver::start(GET) ── join ── Lead ───▶ process.reads() runs the request with the leader's queue
//!                               └ Follow ─▶ nothing scheduled
//!   request done (read thread) ── finish ──▶ each waiter's own on_fetched(ticket, outcome)
//!   Driver::cancel ── leave ── others wait ─▶ the request goes on
//!                            └ last one ────▶ its Cancel is set (abandoned on the wire)
//! ```

use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use bb_core::{Coalesce, Flight, Joined, Left, ReadKey};
use bb_core::{FetchOutcome, Ticket};

use crate::cancel::Cancel;
use crate::reach::PersonalToken;

/// Where a read's outcome goes: the callback of the driver that asked for it.
pub(crate) type OnFetched = Arc<dyn Fn(Ticket, FetchOutcome) + Send + Sync>;

/// A waiter, unique among the drivers sharing the reads: the number the driver was given as a member
/// ([`SharedReads::member`]), and its ticket.
pub(crate) type WaiterId = (u64, Ticket);

type Table = Coalesce<WaiterId, OnFetched, Cancel>;

/// The reads in flight of every driver given this one ([`crate::Driver::share_reads`]); cheap to
/// clone, clones share it. Share it only between drivers that reach the same Bitbucket.
#[derive(Clone, Default)]
pub struct SharedReads(Arc<Shared>);

#[derive(Default)]
struct Shared {
    table: Mutex<Table>,
    /// How many drivers have joined, for the next one's number.
    members: AtomicU64,
}

impl std::fmt::Debug for SharedReads {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("SharedReads").field(&*self.lock()).finish()
    }
}

impl SharedReads {
    /// No read in flight yet.
    pub fn new() -> SharedReads {
        SharedReads::default()
    }

    /// A number for a driver that shares these reads, unique among them: the first half of its
    /// waiters' ids.
    pub(crate) fn member(&self) -> u64 {
        self.0.members.fetch_add(1, Ordering::Relaxed)
    }

    /// The reads in flight now (each one Bitbucket request, however many wait for it).
    pub fn in_flight(&self) -> usize {
        self.lock().flights()
    }

    /// Waits for the read `key` as `id`: leads it (the caller runs the request, cancelled through
    /// `cancel`) or follows the one in flight.
    pub(crate) fn join(&self, key: ReadKey, id: WaiterId, on_fetched: OnFetched, cancel: Cancel) -> Joined {
        self.lock().join(key, id, on_fetched, cancel)
    }

    /// The request of `flight` completed: hands `outcome` to every waiter still waiting, leader first.
    /// Called on the read thread, with no lock held while the callbacks run.
    pub(crate) fn finish(&self, flight: Flight, outcome: FetchOutcome) {
        let mut waiters = self.lock().finish(flight);
        let last = waiters.pop();
        for ((_, ticket), on_fetched) in waiters {
            on_fetched(ticket, outcome.clone());
        }
        if let Some(((_, ticket), on_fetched)) = last {
            on_fetched(ticket, outcome);
        }
    }

    /// `id` no longer waits; when nobody does any more, the request is cancelled.
    pub(crate) fn leave(&self, id: &WaiterId) {
        let left = self.lock().leave(id);
        if let Some(Left { abandoned: Some(cancel), .. }) = left {
            cancel.cancel();
        }
    }

    fn lock(&self) -> MutexGuard<'_, Table> {
        self.0.table.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The credentials a read is made with, as an opaque key: 0 for the operator's, else a hash of the
/// person's identity (top bit set): their token, or the user of their login. Stable for a
/// person; never the token itself.
pub(crate) fn credential(person: Option<&PersonalToken>) -> u64 {
    match person {
        Some(p) => {
            let mut h = DefaultHasher::new();
            p.identity().hash(&mut h);
            h.finish() | (1 << 63)
        }
        None => 0,
    }
}
