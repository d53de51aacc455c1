//! The bound on Bitbucket requests in flight: a counting semaphore for blocking threads that hands
//! its permits out fairly, by lane and then by queue.
//!
//! Each waiter names a lane ([`Lane`]) and a queue (a session, or a person in per-person mode). A
//! freed permit goes first to a new person's token check (while checks hold fewer than a quarter of
//! the permits), then to a model's call, then to a refresh (while refreshes hold fewer than all but a
//! quarter): so a refresh burst never holds every connection, and a model's call or a first check
//! waits for the next permit to come free, not behind the burst (issue 58). Within a lane, the queue
//! whose turn it is, round-robin over the queues that wait, oldest waiter first within a queue: one
//! session's many requests cannot starve another's one. It is work-conserving within those shares: a
//! queue alone takes every permit but one ([`InFlight::per_queue`]); the one it may not take is the
//! reserve that lets another queue's request in at once, even while the first queue's requests hang
//! until their timeout (a permit cannot be taken back from a request on the wire). `enter` blocks until
//! the waiter is granted a permit, or until its request is cancelled; dropping the [`Permit`] grants
//! the next. A panic elsewhere never wedges it: a poisoned lock is taken over, since the state stays
//! consistent.
//!
//! ```text
//!   lanes   Check   (≤ ¼ of the permits)   a permit freed ──▶ the first lane with a waiter and room in its share
//!           Call    A: a1 a2 a3             ──▶ in it, the turn's oldest (turn: A → B → C → A …)
//!                   B: b1                    the queue goes to the back if it still waits
//!           Refresh C: c1 c2 (≤ ¾)
//! ```

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

use bb_core::Batch;
use bb_drive::{Cancel, Lane, Lanes};

/// How often a waiter looks at its cancel while no permit is granted to it.
const CANCEL_CHECK: Duration = Duration::from_millis(20);

/// A counting semaphore with a fixed number of permits, granted by lane, then round-robin over queues.
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
    /// Permits out, by queue (only queues that hold one), whatever their lane.
    held: BTreeMap<u64, usize>,
    most_inside: usize,
    next_waiter: u64,
    /// The waiters by lane and queue, and the permits each lane holds.
    lanes: Lanes<u64>,
    /// Waiters granted a permit that have not yet taken it.
    granted: BTreeSet<u64>,
    /// The refresh batches that go, by id.
    going: HashMap<u64, Going>,
    /// Their reads not yet done.
    going_reads: usize,
    /// The refresh batches put off lately, by id, and when.
    put_off: HashMap<u64, std::time::Instant>,
}

impl State {
    /// Grants free permits: to the first lane with a waiter and room in its share, in it to the
    /// waiter whose queue's turn it is; a queue holding `per_queue` permits keeps its turn for later.
    fn grant(&mut self, limit: usize, per_queue: usize) -> bool {
        let mut any = false;
        while self.inside < limit {
            let held = &self.held;
            let may = |q: u64| held.get(&q).copied().unwrap_or(0) < per_queue;
            let Some((_, queue, waiter)) = self.lanes.next(limit, may) else { break };
            self.granted.insert(waiter);
            *self.held.entry(queue).or_default() += 1;
            self.inside += 1;
            self.most_inside = self.most_inside.max(self.inside);
            any = true;
        }
        any
    }

    /// Takes a waiter that gave up out of its queue.
    fn forget(&mut self, lane: Lane, queue: u64, waiter: u64) {
        self.lanes.remove(lane, queue, |w| *w == waiter);
    }

    /// A read of going batch `id` is done (answered, or cancelled): the batch ends with its last.
    fn read_done(&mut self, id: u64) {
        if let Some(g) = self.going.get_mut(&id) {
            g.left = g.left.saturating_sub(1);
            self.going_reads = self.going_reads.saturating_sub(1);
            if g.left == 0 {
                self.going.remove(&id);
            }
        }
    }

    /// Forgets batches put off long ago, and going ones past [`GOING_AT_MOST`] (their reads left no
    /// longer count).
    fn forget_old_batches(&mut self, now: std::time::Instant) {
        self.put_off.retain(|_, at| now.duration_since(*at) < PUT_OFF_FOR);
        let old: Vec<u64> = self
            .going
            .iter()
            .filter(|(_, g)| now.duration_since(g.since) >= GOING_AT_MOST)
            .map(|(id, _)| *id)
            .collect();
        for id in old {
            if let Some(g) = self.going.remove(&id) {
                self.going_reads = self.going_reads.saturating_sub(g.left);
            }
        }
    }

    /// Gives back a permit of `queue` in `lane`.
    fn release(&mut self, lane: Lane, queue: u64) {
        self.inside -= 1;
        self.lanes.done(lane);
        if let Some(held) = self.held.get_mut(&queue) {
            *held -= 1;
            if *held == 0 {
                self.held.remove(&queue);
            }
        }
    }
}

/// One permit of a queue in a lane (and, for a refresh's read, of its batch); released on drop.
#[derive(Debug)]
pub struct Permit<'a> {
    bound: &'a InFlight,
    lane: Lane,
    queue: u64,
    batch: Option<u64>,
}

/// Why a refresh's read got no permit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// Its batch did not fit beside the refreshes going now: it is put off, unsent.
    PutOff,
    /// Its request was cancelled while it waited.
    Cancelled,
}

/// A refresh batch that goes: how many of its reads are not yet done, and since when it goes.
#[derive(Debug)]
struct Going {
    left: usize,
    since: std::time::Instant,
}

/// How long a going batch counts, at most: a read of it cancelled before it reached the client (its
/// call ended) never says it is done.
const GOING_AT_MOST: Duration = Duration::from_secs(30);

/// How long a batch put off is remembered, so that its later reads are put off too.
const PUT_OFF_FOR: Duration = Duration::from_secs(30);

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

    /// Waits in `lane`, in `queue`, for a permit; `None` once `cancel` is set (checked at least every
    /// 20 ms while waiting).
    pub fn enter(&self, lane: Lane, queue: u64, cancel: &Cancel) -> Option<Permit<'_>> {
        let state = self.lock();
        self.wait_in(state, lane, queue, None, cancel)
    }

    /// Waits in the refresh lane, in `queue`, for a permit for a read of a live view's refresh
    /// `batch`, which goes whole or not at all: its first read decides at once, without waiting,
    /// whether the reads of the batches going now leave room for all of this one's
    /// ([`InFlight::most_going`]); if they do, the batch goes and each of its reads waits its turn for
    /// a permit; if not, it is put off, and so is every later read of it, unsent.
    pub fn enter_refresh(&self, queue: u64, batch: Batch, cancel: &Cancel) -> Result<Permit<'_>, Refused> {
        let mut state = self.lock();
        let now = std::time::Instant::now();
        state.forget_old_batches(now);
        if state.put_off.contains_key(&batch.id) {
            return Err(Refused::PutOff);
        }
        if !state.going.contains_key(&batch.id) {
            let reads = usize::try_from(batch.reads.max(1)).unwrap_or(usize::MAX);
            if state.going_reads > 0 && state.going_reads.saturating_add(reads) > self.most_going() {
                state.put_off.insert(batch.id, now);
                return Err(Refused::PutOff);
            }
            state.going.insert(batch.id, Going { left: reads, since: now });
            state.going_reads += reads;
        }
        self.wait_in(state, Lane::Refresh, queue, Some(batch.id), cancel).ok_or(Refused::Cancelled)
    }

    /// The most reads of going refresh batches not yet done: twice the permits refreshes may hold,
    /// so the permits stay busy while a batch's reads take turns, and a batch that goes is read in
    /// about two rounds of them (issue 58: put off read by read, a slow Bitbucket's refreshes were
    /// sent in part and then put off, 6,142 of 6,313 at 1,000 people, the reads sent wasted).
    pub fn most_going(&self) -> usize {
        Lane::Refresh.most_of(self.limit).saturating_mul(2)
    }

    fn wait_in<'a>(
        &'a self,
        mut state: MutexGuard<'a, State>,
        lane: Lane,
        queue: u64,
        batch: Option<u64>,
        cancel: &Cancel,
    ) -> Option<Permit<'a>> {
        let waiter = state.next_waiter;
        state.next_waiter += 1;
        state.lanes.push(lane, queue, waiter);
        if state.grant(self.limit, self.per_queue) {
            self.granted.notify_all();
        }
        loop {
            if state.granted.remove(&waiter) {
                return Some(Permit { bound: self, lane, queue, batch });
            }
            if cancel.is_cancelled() {
                state.forget(lane, queue, waiter);
                if let Some(id) = batch {
                    state.read_done(id);
                }
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
        self.lock().lanes.waiting()
    }

    /// How many permits `lane` holds now.
    pub fn inside(&self, lane: Lane) -> usize {
        self.lock().lanes.inside(lane)
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        let mut state = self.bound.lock();
        state.release(self.lane, self.queue);
        if let Some(id) = self.batch {
            state.read_done(id);
        }
        state.grant(self.bound.limit, self.bound.per_queue);
        drop(state);
        self.bound.granted.notify_all();
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
                    let _p = bound.enter(Lane::Call, 0, &Cancel::new());
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
        let p = bound.enter(Lane::Call, 0, &Cancel::new());
        assert!(p.is_some());
        drop(p);
        let _again = bound.enter(Lane::Call, 0, &Cancel::new());
        assert_eq!(bound.most_inside(), 1);
    }

    #[test]
    fn a_cancelled_waiter_gives_up_its_place_and_takes_no_permit() {
        let bound = Arc::new(InFlight::new(1));
        let held = bound.enter(Lane::Call, 0, &Cancel::new());
        let cancel = Cancel::new();
        let waiter = {
            let (bound, cancel) = (Arc::clone(&bound), cancel.clone());
            std::thread::spawn(move || bound.enter(Lane::Call, 0, &cancel).is_some())
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
        let held = bound.enter(Lane::Call, 9, &Cancel::new());
        let order = Arc::new(std::sync::Mutex::new(Vec::new()));
        let wait_in = |queue: u64, label: &'static str| {
            let (bound, order) = (Arc::clone(&bound), Arc::clone(&order));
            std::thread::spawn(move || {
                let permit = bound.enter(Lane::Call, queue, &Cancel::new());
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
        let held: Vec<_> = (0..3).map(|_| bound.enter(Lane::Call, 1, &Cancel::new()).unwrap()).collect();
        let more = {
            let bound = Arc::clone(&bound);
            std::thread::spawn(move || bound.enter(Lane::Call, 1, &Cancel::new()).is_some())
        };
        while bound.waiting() < 1 {
            std::thread::yield_now();
        }
        assert_eq!(bound.most_inside(), 3, "the fourth permit is kept for another queue");
        // Queue 2 gets it without anyone leaving.
        let other = bound.enter(Lane::Call, 2, &Cancel::new());
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
                state.lanes.push(Lane::Call, queue, next);
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
        let mut holding: std::collections::VecDeque<u64> = std::collections::VecDeque::new();
        state.grant(limit, per_queue);
        for _ in 0..150 {
            for w in std::mem::take(&mut state.granted) {
                *granted.entry(owner(w)).or_default() += 1;
                holding.push_back(w);
            }
            // While all three wait, none is more than one grant ahead of another.
            if state.lanes.queues_waiting(Lane::Call) == 3 {
                let (lo, hi) = (granted.values().min().unwrap(), granted.values().max().unwrap());
                assert!(hi - lo <= 1, "{granted:?}");
            }
            // The oldest holder's request ends; its permit goes to the queue whose turn it is.
            let Some(done) = holding.pop_front() else { break };
            let queue = owner(done);
            state.release(Lane::Call, queue);
            state.grant(limit, per_queue);
        }
        assert_eq!(granted.values().sum::<u64>(), 150, "every waiter got in: {granted:?}");
        assert_eq!(granted[&2], 10);
    }

    /// Grants alone, without threads: `waiting` waiters queued in the order given, each `(lane, queue)`.
    fn queued(waiting: &[(Lane, u64)]) -> State {
        let mut state = State::default();
        for (waiter, (lane, queue)) in waiting.iter().enumerate() {
            state.lanes.push(*lane, *queue, waiter as u64);
        }
        state
    }

    #[test]
    fn refreshes_never_hold_every_permit_and_a_call_takes_the_next_one_free() {
        let (limit, per_queue) = (48, 47);
        // A burst: 1,000 people's refreshes, 9 reads each, queued before one model's call.
        let mut waiting: Vec<(Lane, u64)> = (0..9_000).map(|i| (Lane::Refresh, i / 9)).collect();
        waiting.push((Lane::Call, 7));
        let mut state = queued(&waiting);
        state.grant(limit, per_queue);
        assert_eq!(state.lanes.inside(Lane::Refresh), 36, "a quarter stays for calls and checks");
        assert!(state.granted.contains(&9_000), "the call went in at once, beside the burst");
        assert_eq!(state.inside, 37);
        // Another call comes while the burst waits: it too goes in at once.
        state.lanes.push(Lane::Call, 8, 9_001);
        state.grant(limit, per_queue);
        assert!(state.granted.contains(&9_001));
        // A refresh ends: its permit goes to the next refresh, and the refreshes hold 36 again.
        state.release(Lane::Refresh, 0);
        state.grant(limit, per_queue);
        assert_eq!(state.lanes.inside(Lane::Refresh), 36);
    }

    #[test]
    fn a_freed_permit_goes_to_a_waiting_check_then_a_call_before_any_refresh() {
        let (limit, per_queue) = (4, 3);
        let mut state = queued(&[(Lane::Refresh, 1), (Lane::Refresh, 2), (Lane::Refresh, 3), (Lane::Refresh, 4)]);
        state.grant(limit, per_queue);
        assert_eq!(state.inside, 3, "the fourth permit is kept from refreshes");
        // Two calls and a check wait now; the free permit goes to the check.
        let mut order = Vec::new();
        for (waiter, lane, queue) in [(10, Lane::Call, 5), (11, Lane::Call, 6), (12, Lane::Check, 0)] {
            state.lanes.push(lane, queue, waiter);
        }
        state.granted.clear();
        state.grant(limit, per_queue);
        order.extend(std::mem::take(&mut state.granted));
        for queue in [1, 2] {
            state.release(Lane::Refresh, queue);
            state.grant(limit, per_queue);
            order.extend(std::mem::take(&mut state.granted));
        }
        assert_eq!(order, [12, 10, 11], "the check, then the calls, while a refresh still waits");
        assert_eq!(state.lanes.queues_waiting(Lane::Refresh), 1);
    }

    #[test]
    fn checks_take_at_most_a_quarter_of_the_permits() {
        let (limit, per_queue) = (8, 7);
        let mut waiting: Vec<(Lane, u64)> = (0..20).map(|_| (Lane::Check, 0)).collect();
        waiting.extend((0..20).map(|i| (Lane::Call, 1 + i % 3)));
        let mut state = queued(&waiting);
        state.grant(limit, per_queue);
        assert_eq!(state.lanes.inside(Lane::Check), 2);
        assert_eq!(state.lanes.inside(Lane::Call), 6, "calls take the rest");
    }

    #[test]
    fn a_lane_alone_is_work_conserving_within_its_share() {
        let bound = InFlight::new(4);
        let refreshes: Vec<_> = (0..3).map(|q| bound.enter(Lane::Refresh, q, &Cancel::new()).unwrap()).collect();
        assert_eq!(bound.inside(Lane::Refresh), 3);
        let call = bound.enter(Lane::Call, 9, &Cancel::new());
        assert!(call.is_some(), "the quarter kept from refreshes lets a call in without waiting");
        drop(refreshes);
        drop(call);
        // With nothing else waiting, calls may take every permit but one per queue.
        let calls: Vec<_> = (0..4).map(|q| bound.enter(Lane::Call, q, &Cancel::new()).unwrap()).collect();
        assert_eq!(bound.inside(Lane::Call), 4);
        drop(calls);
    }

    #[test]
    fn a_refresh_batch_goes_whole_or_is_put_off_whole() {
        let bound = InFlight::new(8);
        assert_eq!(bound.most_going(), 12, "twice the six permits refreshes may hold");
        let card = |id| Batch { id, reads: 5 };
        let c = Cancel::new();
        // Two cards of five reads go (10 of 12); a third does not fit and is put off at once.
        let first: Vec<_> = (0..3).map(|_| bound.enter_refresh(1, card(1), &c).unwrap()).collect();
        let second: Vec<_> = (0..3).map(|_| bound.enter_refresh(2, card(2), &c).unwrap()).collect();
        assert_eq!(bound.enter_refresh(3, card(3), &c).err(), Some(Refused::PutOff));
        // The first card's reads finish: there is room again, but the third card stays put off, every read
        // of it, while the two going cards' other reads still go.
        drop(first);
        assert_eq!(bound.enter_refresh(3, card(3), &c).err(), Some(Refused::PutOff));
        let rest: Vec<_> = (0..2).map(|_| bound.enter_refresh(1, card(1), &c).unwrap()).collect();
        drop(rest);
        // The first card is done; a new card fits beside the second.
        let fourth = bound.enter_refresh(4, card(4), &c);
        assert!(fourth.is_ok());
        drop(fourth);
        drop(second);
        assert_eq!(bound.inside(Lane::Refresh), 0);
    }

    #[test]
    fn a_going_batch_s_cancelled_read_counts_as_done() {
        let bound = Arc::new(InFlight::new(2));
        assert_eq!(bound.most_going(), 2);
        let held = bound.enter_refresh(1, Batch { id: 1, reads: 2 }, &Cancel::new()).unwrap();
        // The batch's second read waits (refreshes hold one permit of two), then its call ends.
        let cancel = Cancel::new();
        let waiter = {
            let (bound, cancel) = (Arc::clone(&bound), cancel.clone());
            std::thread::spawn(move || bound.enter_refresh(1, Batch { id: 1, reads: 2 }, &cancel).err())
        };
        while bound.waiting() < 1 {
            std::thread::yield_now();
        }
        cancel.cancel();
        assert_eq!(waiter.join().unwrap(), Some(Refused::Cancelled));
        drop(held);
        // Both reads are done: another batch of two fits.
        assert!(bound.enter_refresh(2, Batch { id: 2, reads: 2 }, &Cancel::new()).is_ok());
    }
}
