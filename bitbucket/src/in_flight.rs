//! The bound on Bitbucket requests in flight: a counting semaphore for blocking threads that hands
//! its permits out fairly.
//!
//! Each waiter names a queue (a session, or a person in per-person mode). A freed permit goes to the
//! queue whose turn it is, round-robin over the queues that wait, oldest waiter first within a queue:
//! one session's many requests cannot starve another's one. It is work-conserving: a queue alone
//! takes every permit but one ([`InFlight::per_queue`]); the one it may not take is the reserve that
//! lets another queue's request in at once, even while the first queue's requests hang until their
//! timeout (a permit cannot be taken back from a request on the wire). `enter` blocks until the waiter is
//! granted a permit, or until its request is cancelled; dropping the [`Permit`] grants the next. A
//! panic elsewhere never wedges it: a poisoned lock is taken over, since the state stays consistent.
//!
//! ```text
//!   queues  A: a1 a2 a3      turn: A → B → C → A …     a permit freed ──▶ grant the turn's oldest
//!           B: b1                                       the queue goes to the back if it still waits
//!           C: c1 c2
//! ```

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

use bb_drive::Cancel;

/// How often a waiter looks at its cancel while no permit is granted to it.
const CANCEL_CHECK: Duration = Duration::from_millis(20);

/// A counting semaphore with a fixed number of permits, granted round-robin over queues.
#[derive(Debug)]
pub struct InFlight {
    state: Mutex<State>,
    granted: Condvar,
    limit: usize,
    per_queue: usize,
}

#[derive(Debug, Default)]
struct State {
    inside: usize,
    /// Permits out, by queue (only queues that hold one).
    held: BTreeMap<u64, usize>,
    most_inside: usize,
    next_waiter: u64,
    /// Waiters by queue, oldest first; a queue is here only while it has waiters.
    queues: BTreeMap<u64, VecDeque<u64>>,
    /// The queues that wait, in the order of their turns.
    turns: VecDeque<u64>,
    /// Waiters granted a permit that have not yet taken it.
    granted: BTreeSet<u64>,
}

impl State {
    /// Grants free permits to the waiters whose turn it is; a queue holding `per_queue` permits
    /// keeps its turn for later.
    fn grant(&mut self, limit: usize, per_queue: usize) -> bool {
        let mut any = false;
        while self.inside < limit {
            let held = &self.held;
            let Some(at) = self.turns.iter().position(|q| held.get(q).copied().unwrap_or(0) < per_queue) else {
                break;
            };
            let Some(queue) = self.turns.remove(at) else { break };
            let Some(waiters) = self.queues.get_mut(&queue) else { continue };
            let Some(waiter) = waiters.pop_front() else { continue };
            if waiters.is_empty() {
                self.queues.remove(&queue);
            } else {
                self.turns.push_back(queue);
            }
            self.granted.insert(waiter);
            *self.held.entry(queue).or_default() += 1;
            self.inside += 1;
            self.most_inside = self.most_inside.max(self.inside);
            any = true;
        }
        any
    }

    /// Takes a waiter that gave up out of its queue.
    fn forget(&mut self, queue: u64, waiter: u64) {
        if let Some(waiters) = self.queues.get_mut(&queue) {
            waiters.retain(|w| *w != waiter);
            if waiters.is_empty() {
                self.queues.remove(&queue);
                self.turns.retain(|q| *q != queue);
            }
        }
    }
}

/// One permit of a queue; released on drop.
#[derive(Debug)]
pub struct Permit<'a>(&'a InFlight, u64);

impl InFlight {
    /// A bound that lets `limit` (at least 1) holders in at once, each queue all but one of them.
    pub fn new(limit: usize) -> Self {
        let limit = limit.max(1);
        let per_queue = if limit > 1 { limit - 1 } else { 1 };
        InFlight { state: Mutex::new(State::default()), granted: Condvar::new(), limit, per_queue }
    }

    /// The most permits one queue holds at once: all but one (the reserve for another queue), or the
    /// only one.
    pub fn per_queue(&self) -> usize {
        self.per_queue
    }

    /// Waits in `queue` for a permit; `None` once `cancel` is set (checked at least every 20 ms while waiting).
    pub fn enter(&self, queue: u64, cancel: &Cancel) -> Option<Permit<'_>> {
        let mut state = self.lock();
        let waiter = state.next_waiter;
        state.next_waiter += 1;
        let waiters = state.queues.entry(queue).or_default();
        waiters.push_back(waiter);
        if waiters.len() == 1 {
            state.turns.push_back(queue);
        }
        if state.grant(self.limit, self.per_queue) {
            self.granted.notify_all();
        }
        loop {
            if state.granted.remove(&waiter) {
                return Some(Permit(self, queue));
            }
            if cancel.is_cancelled() {
                state.forget(queue, waiter);
                return None;
            }
            state = self.granted.wait_timeout(state, CANCEL_CHECK).unwrap_or_else(|p| p.into_inner()).0;
        }
    }

    /// The most permits that were out at once so far.
    pub fn most_inside(&self) -> usize {
        self.lock().most_inside
    }

    /// How many wait for a permit now.
    pub fn waiting(&self) -> usize {
        self.lock().queues.values().map(VecDeque::len).sum()
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        let mut state = self.0.lock();
        state.inside -= 1;
        if let Some(held) = state.held.get_mut(&self.1) {
            *held -= 1;
            if *held == 0 {
                state.held.remove(&self.1);
            }
        }
        state.grant(self.0.limit, self.0.per_queue);
        drop(state);
        self.0.granted.notify_all();
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn no_more_than_the_limit_hold_permits_at_once_and_every_waiter_gets_in() {
        let bound = Arc::new(InFlight::new(3));
        let done = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..12)
            .map(|_| {
                let (bound, done) = (bound.clone(), done.clone());
                std::thread::spawn(move || {
                    let _p = bound.enter(0, &Cancel::new());
                    std::thread::yield_now();
                    done.fetch_add(1, Ordering::SeqCst);
                })
            })
            .collect();
        for t in threads {
            let _ = t.join();
        }
        assert_eq!(done.load(Ordering::SeqCst), 12);
        assert!(bound.most_inside() <= 3, "{}", bound.most_inside());
        assert!(bound.most_inside() >= 1);
    }

    #[test]
    fn a_zero_limit_still_lets_one_in() {
        let bound = InFlight::new(0);
        let p = bound.enter(0, &Cancel::new());
        assert!(p.is_some());
        drop(p);
        let _again = bound.enter(0, &Cancel::new());
        assert_eq!(bound.most_inside(), 1);
    }

    #[test]
    fn a_cancelled_waiter_gives_up_its_place_and_takes_no_permit() {
        let bound = Arc::new(InFlight::new(1));
        let held = bound.enter(0, &Cancel::new());
        let cancel = Cancel::new();
        let waiter = {
            let (bound, cancel) = (Arc::clone(&bound), cancel.clone());
            std::thread::spawn(move || bound.enter(0, &cancel).is_some())
        };
        cancel.cancel();
        assert!(!waiter.join().unwrap_or(true));
        assert_eq!(bound.most_inside(), 1);
        assert_eq!(bound.waiting(), 0);
        drop(held);
    }

    #[test]
    fn freed_permits_go_round_robin_between_queues_not_to_the_longest_queue() {
        let bound = Arc::new(InFlight::new(1));
        let held = bound.enter(9, &Cancel::new());
        let order = Arc::new(std::sync::Mutex::new(Vec::new()));
        let wait_in = |queue: u64, label: &'static str| {
            let (bound, order) = (Arc::clone(&bound), Arc::clone(&order));
            std::thread::spawn(move || {
                let permit = bound.enter(queue, &Cancel::new());
                order.lock().unwrap().push(label);
                drop(permit);
            })
        };
        // Session A queues five requests before session B queues its one.
        let mut threads: Vec<_> = (0..5).map(|_| wait_in(1, "A")).collect();
        while bound.waiting() < 5 {
            std::thread::yield_now();
        }
        threads.push(wait_in(2, "B"));
        while bound.waiting() < 6 {
            std::thread::yield_now();
        }
        drop(held);
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(*order.lock().unwrap(), ["A", "B", "A", "A", "A", "A"]);
    }

    #[test]
    fn a_queue_alone_takes_all_permits_but_one_and_another_queue_gets_the_reserve_at_once() {
        let bound = Arc::new(InFlight::new(4));
        // Queue 1 holds three permits (as requests that hang would) and waits for more.
        let held: Vec<_> = (0..3).map(|_| bound.enter(1, &Cancel::new()).unwrap()).collect();
        let more = {
            let bound = Arc::clone(&bound);
            std::thread::spawn(move || bound.enter(1, &Cancel::new()).is_some())
        };
        while bound.waiting() < 1 {
            std::thread::yield_now();
        }
        assert_eq!(bound.most_inside(), 3, "the fourth permit is kept for another queue");
        // Queue 2 gets it without anyone leaving.
        let other = bound.enter(2, &Cancel::new());
        assert!(other.is_some());
        assert_eq!(bound.most_inside(), 4);
        drop(other);
        drop(held);
        assert!(more.join().unwrap());
    }

    /// The grants alone, without threads: queues that wait get permits in turn, each within one
    /// permit of its fair share at every moment, whatever their backlog.
    #[test]
    fn contending_queues_each_get_within_one_permit_of_a_fair_share() {
        let (limit, per_queue) = (4, 3);
        let mut state = State::default();
        let mut next = 0;
        // Queue 1 has 100 waiting, queue 2 has 10, queue 3 has 40.
        for (queue, n) in [(1u64, 100), (2, 10), (3, 40)] {
            for _ in 0..n {
                state.queues.entry(queue).or_default().push_back(next);
                if state.queues[&queue].len() == 1 {
                    state.turns.push_back(queue);
                }
                next += 1;
            }
        }
        let owner = |w: u64| {
            if w < 100 {
                1
            } else if w < 110 {
                2
            } else {
                3
            }
        };
        let mut granted: BTreeMap<u64, u64> = BTreeMap::new();
        let mut holding: VecDeque<u64> = VecDeque::new();
        state.grant(limit, per_queue);
        for _ in 0..150 {
            for w in std::mem::take(&mut state.granted) {
                *granted.entry(owner(w)).or_default() += 1;
                holding.push_back(w);
            }
            // While all three wait, none is more than one grant ahead of another.
            if state.queues.len() == 3 {
                let (lo, hi) = (granted.values().min().unwrap(), granted.values().max().unwrap());
                assert!(hi - lo <= 1, "{granted:?}");
            }
            // The oldest holder's request ends; its permit goes to the queue whose turn it is.
            let Some(done) = holding.pop_front() else { break };
            let queue = owner(done);
            state.inside -= 1;
            *state.held.get_mut(&queue).unwrap() -= 1;
            if state.held[&queue] == 0 {
                state.held.remove(&queue);
            }
            state.grant(limit, per_queue);
        }
        assert_eq!(granted.values().sum::<u64>(), 150, "every waiter got in: {granted:?}");
        assert_eq!(granted[&2], 10);
    }
}
