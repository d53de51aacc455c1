//! The process's memory budget for large calls: every driver's large calls (a diff view, a diff for
//! the model) ask here for their room ([`bb_core::Output::Admit`]) before their reads go out, and give
//! it back when they end ([`bb_core::Output::Cancel`] of the same ticket).
//!
//! ```text
//!   ask(bytes) ── fits in what is left ──────────────▶ granted now
//!             ├─ does not fit ──▶ waits in its queue ──(room given back, its turn)──▶ granted later
//!             └─ LARGE_CALLS_WAITING wait already ─────────────────────────────────▶ refused now
//!   give_back ── held: the room returns, and the waiters whose turn it is get theirs
//!             └─ still waiting: it leaves the queue
//! ```
//!
//! Waiters queue by [`crate::Requester::queue`] (a person, or a session) and are served round robin,
//! as reads and CPU jobs are: one person's batch of a hundred diffs waits behind another person's one.
//! A call larger than the whole budget runs when nothing else holds room, so it is never starved.
//!
//! An answer made but not yet written to its client holds its bytes too ([`Room::hold`]): it is never
//! refused (it exists already), but while answers nobody reads fill the budget, large calls wait, so
//! a client that stops reading cannot make bb hold more than the budget on its behalf.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};

use bb_core::{Ticket, limits};

use crate::timer::Timer;

/// Which call's room: its driver and its ticket.
pub(crate) type Key = (u64, Ticket);

/// Called once, on the drive's timer thread, when a waiter gets its room.
pub(crate) type Grant = Arc<dyn Fn(Ticket, bool) + Send + Sync>;

struct Waiter {
    key: Key,
    bytes: u64,
    grant: Grant,
}

/// The application's room for large calls, made once ([`crate::Process`]) and shared by every driver
/// it is handed to.
pub struct Room {
    state: Mutex<State>,
    /// Where grants are handed out: the application's timer ([`crate::Process`]), or a room's own.
    timer: Timer,
}

#[derive(Default)]
struct State {
    capacity: u64,
    in_use: u64,
    /// Of `in_use`, the bytes of answers not yet written ([`Room::hold`]).
    unsent: u64,
    held: HashMap<Key, u64>,
    queues: BTreeMap<u64, VecDeque<Waiter>>,
    turns: VecDeque<u64>,
    waiting: usize,
}

/// What became of an ask.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Asked {
    /// The room is set aside.
    Granted,
    /// It waits; its grant comes later.
    Waits,
    /// Too many calls wait already.
    Refused,
}

impl Room {
    /// A room of `capacity` bytes (the application's is [`crate::Process::room`]).
    pub fn new(capacity: u64) -> Room {
        Room::with_timer(capacity, Timer::default())
    }

    /// A room of `capacity` bytes whose grants are handed out on `timer`'s thread.
    pub(crate) fn with_timer(capacity: u64, timer: Timer) -> Room {
        Room { state: Mutex::new(State { capacity, ..State::default() }), timer }
    }

    /// Sets the budget (`--memory-budget`); calls holding room keep it.
    pub fn set_budget(&self, bytes: u64) {
        let granted = {
            let mut s = self.lock();
            s.capacity = bytes;
            s.grant_waiters()
        };
        self.deliver(granted);
    }

    /// How many bytes are set aside now, and how many calls wait.
    pub fn usage(&self) -> (u64, usize) {
        let s = self.lock();
        (s.in_use, s.waiting)
    }

    /// How many of the bytes set aside are answers not yet written.
    pub fn unsent(&self) -> u64 {
        self.lock().unsent
    }

    /// Sets `bytes` aside for an answer until it is written (the [`Unsent`] dropped): never refused nor
    /// waited for, but counted, so large calls wait while unread answers fill the budget.
    pub fn hold(self: &Arc<Self>, bytes: u64) -> Unsent {
        let mut s = self.lock();
        s.in_use += bytes;
        s.unsent += bytes;
        Unsent { room: Arc::clone(self), bytes }
    }

    /// Asks for `bytes` for `key`, waiting in `queue`; `grant` is called when a waiter gets its room.
    pub(crate) fn ask(&self, key: Key, queue: u64, bytes: u64, grant: Grant) -> Asked {
        let mut s = self.lock();
        if s.fits(bytes) && s.waiting == 0 {
            s.take(key, bytes);
            return Asked::Granted;
        }
        if s.waiting >= limits::LARGE_CALLS_WAITING {
            return Asked::Refused;
        }
        let waiters = s.queues.entry(queue).or_default();
        waiters.push_back(Waiter { key, bytes, grant });
        if waiters.len() == 1 {
            s.turns.push_back(queue);
        }
        s.waiting += 1;
        Asked::Waits
    }

    /// Gives `key`'s room back (or takes it out of the queue), and grants the waiters that now fit.
    pub(crate) fn give_back(&self, key: Key) {
        let granted = {
            let mut s = self.lock();
            if let Some(bytes) = s.held.remove(&key) {
                s.in_use -= bytes;
            } else {
                let before: usize = s.queues.values().map(VecDeque::len).sum();
                for q in s.queues.values_mut() {
                    q.retain(|w| w.key != key);
                }
                let after: usize = s.queues.values().map(VecDeque::len).sum();
                s.waiting -= before - after;
                s.queues.retain(|_, q| !q.is_empty());
                let queues = &s.queues;
                let turns: VecDeque<u64> = s.turns.iter().copied().filter(|q| queues.contains_key(q)).collect();
                s.turns = turns;
            }
            s.grant_waiters()
        };
        self.deliver(granted);
    }

    /// Hands each waiter its grant on the timer's thread, never on the caller's: the caller is a
    /// driver giving room back, which a shell may hold behind a lock that the grant's wake takes too.
    fn deliver(&self, granted: Vec<(Waiter, u64)>) {
        for (w, _) in granted {
            self.timer.at(std::time::Instant::now(), move || (w.grant)(w.key.1, true));
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// An answer's bytes in the room until it is written; dropping it gives them back.
pub struct Unsent {
    room: Arc<Room>,
    bytes: u64,
}

impl std::fmt::Debug for Unsent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Unsent({} bytes)", self.bytes)
    }
}

impl Drop for Unsent {
    fn drop(&mut self) {
        let granted = {
            let mut s = self.room.lock();
            s.in_use = s.in_use.saturating_sub(self.bytes);
            s.unsent = s.unsent.saturating_sub(self.bytes);
            s.grant_waiters()
        };
        self.room.deliver(granted);
    }
}

impl State {
    /// Whether `bytes` fit now: in what is left, or as the only call holding room.
    fn fits(&self, bytes: u64) -> bool {
        self.in_use + bytes <= self.capacity || self.in_use == 0
    }

    fn take(&mut self, key: Key, bytes: u64) {
        self.in_use += bytes;
        self.held.insert(key, bytes);
    }

    /// Grants, round robin over the queues, every waiter whose turn it is and who fits; stops at the
    /// first that does not (its turn stays first).
    fn grant_waiters(&mut self) -> Vec<(Waiter, u64)> {
        let mut granted = Vec::new();
        while let Some(&queue) = self.turns.front() {
            let Some(w) = self.queues.get(&queue).and_then(VecDeque::front) else {
                self.turns.pop_front();
                continue;
            };
            if !self.fits(w.bytes) {
                break;
            }
            self.turns.pop_front();
            let Some(w) = self.queues.get_mut(&queue).and_then(VecDeque::pop_front) else { continue };
            if self.queues.get(&queue).is_some_and(|q| !q.is_empty()) {
                self.turns.push_back(queue);
            } else {
                self.queues.remove(&queue);
            }
            self.waiting -= 1;
            self.take(w.key, w.bytes);
            let bytes = w.bytes;
            granted.push((w, bytes));
        }
        granted
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::sync::mpsc;
    use std::time::Duration;

    /// A grant that reports each granted ticket, and the receiver of the reports.
    fn recorder() -> (mpsc::Receiver<u64>, Grant) {
        let (tx, rx) = mpsc::channel();
        let tx = Mutex::new(tx);
        (
            rx,
            Arc::new(move |t: Ticket, ok: bool| {
                if ok {
                    let _ = tx.lock().unwrap().send(t.0);
                }
            }),
        )
    }

    /// The next `n` grants, in the order they came (they come on the timer thread).
    fn grants(rx: &mpsc::Receiver<u64>, n: usize) -> Vec<u64> {
        (0..n).map(|_| rx.recv_timeout(Duration::from_secs(60)).unwrap()).collect()
    }

    #[test]
    fn calls_past_the_budget_wait_and_get_their_room_in_turn_as_others_give_theirs_back() {
        let room = Room::new(100);
        let (got, grant) = recorder();
        let key = |n| (0, Ticket(n));
        assert_eq!(room.ask(key(1), 1, 60, Arc::clone(&grant)), Asked::Granted);
        assert_eq!(room.ask(key(2), 1, 60, Arc::clone(&grant)), Asked::Waits);
        assert_eq!(room.ask(key(3), 1, 10, Arc::clone(&grant)), Asked::Waits, "nobody passes the queue");
        assert_eq!(room.ask(key(4), 2, 10, Arc::clone(&grant)), Asked::Waits);
        room.give_back(key(1));
        // Queue 1's first (60), then queue 2's (10) in turn; queue 1's second (10) fits too.
        assert_eq!(grants(&got, 3), [2, 4, 3]);
        assert_eq!(room.usage(), (80, 0));
    }

    #[test]
    fn a_call_larger_than_the_budget_runs_alone_and_one_that_stops_waiting_leaves_the_queue() {
        let room = Room::new(100);
        let (got, grant) = recorder();
        assert_eq!(room.ask((0, Ticket(1)), 1, 500, Arc::clone(&grant)), Asked::Granted, "nothing else holds room");
        assert_eq!(room.ask((0, Ticket(2)), 2, 10, Arc::clone(&grant)), Asked::Waits);
        assert_eq!(room.ask((0, Ticket(3)), 3, 10, Arc::clone(&grant)), Asked::Waits);
        room.give_back((0, Ticket(2)));
        assert_eq!(room.usage(), (500, 1));
        room.give_back((0, Ticket(1)));
        assert_eq!(grants(&got, 1), [3]);
        assert_eq!(room.usage(), (10, 0), "the one that left was never granted");
    }

    #[test]
    fn unsent_answers_hold_their_bytes_so_large_calls_wait_until_they_are_written() {
        let room = Arc::new(Room::new(100));
        let (got, grant) = recorder();
        let unread = room.hold(90);
        assert_eq!((room.usage(), room.unsent()), ((90, 0), 90));
        assert_eq!(room.ask((0, Ticket(1)), 1, 20, Arc::clone(&grant)), Asked::Waits, "the budget holds the answer");
        let more = room.hold(90);
        assert_eq!(room.usage(), (180, 1), "an answer is never refused");
        drop(unread);
        assert_eq!(room.usage(), (90, 1));
        drop(more);
        assert_eq!(grants(&got, 1), [1], "written, the answers make room");
        assert_eq!((room.usage(), room.unsent()), ((20, 0), 0));
    }

    #[test]
    fn past_the_most_waiting_a_call_is_refused_at_once() {
        let room = Room::new(10);
        let (_, grant) = recorder();
        assert_eq!(room.ask((0, Ticket(0)), 0, 10, Arc::clone(&grant)), Asked::Granted);
        for n in 1..=limits::LARGE_CALLS_WAITING as u64 {
            assert_eq!(room.ask((0, Ticket(n)), n, 10, Arc::clone(&grant)), Asked::Waits);
        }
        assert_eq!(room.ask((0, Ticket(999)), 999, 10, grant), Asked::Refused);
    }
}
