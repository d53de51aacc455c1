//! bb's own share of each Bitbucket user's rate limit: a token bucket per identity, spent on the
//! model's calls first and on live views' refreshes after.
//!
//! Bitbucket Data Center (Data Center licence, 6.6+) limits every user with a token bucket: each
//! request with basic or bearer authentication takes a token, tokens come back at the refill rate
//! until the bucket is full, and an empty bucket answers 429 with `Retry-After` seconds. The admin
//! page's defaults are a bucket of 60 and a refill of 5 a second; every node of a cluster keeps its
//! own buckets. (Atlassian, "Improving instance stability with rate limiting", Bitbucket Data Center
//! administration docs, 7.x–9.x; reference/bitbucket-dc.md "Rate limiting".)
//!
//! The person's views, the model and the person's own browser share that bucket. So bb keeps one of
//! its own per identity (the configured credentials, or each person's token in per-person mode),
//! Atlassian's defaults unless `--rate-limit` says otherwise, and spends it in this order:
//!
//! | request | the bucket holds a token | it does not | a 429 said wait |
//! |---|---|---|---|
//! | the model's (any tool, `show`) | taken, sent | waits for a token, in turn over the sessions (persons) that wait | waits the `Retry-After`, then as before |
//! | a live view's refresh | its batch's tokens taken only while more than half the bucket is left after them | not sent: [`Entry::Defer`] | not sent until the `Retry-After` has passed |
//!
//! A refresh's reads come as one batch ([`bb_core::Batch`]): the first of them decides for all, taking
//! every token the batch needs at once, so a refresh is sent whole or not at all and a held-back one
//! spends nothing (decided read by read, 20 busy cards sent parts of refreshes that were then dropped:
//! 14 of 4,482 refreshes read in `examples/rate_load.rs`).
//!
//! A deferred refresh comes back to the core as [`bb_core::FetchErrorKind::Deferred`], which answers
//! the view "unchanged, ask again later" with a later `next`: the view never shows an error for it,
//! and no model call waits behind a refresh. A 429 from Bitbucket (someone else spent the bucket: the
//! person's browser, a script with the same token) empties bb's bucket and pauses the identity for the
//! `Retry-After` it gave, so every view of that identity slows down at once.
//!
//! The arithmetic is [`Bucket`], driven with explicit times so it is tested without a clock.
//!
//! Replicas behind a load balancer share one budget per user through Valkey or Redis (`--rate-store`,
//! [`super::rate_store`]): the tokens, a batch's decision and a 429's pause come from the store's
//! bucket, in one atomic step each; the order in which this process's waiting requests get them stays
//! here. When the store does not answer, each replica decides from its own [`Bucket`] at 1/N of the
//! limit (`--replicas N`), kept empty while the store answers so a fallback never starts with a burst.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use bb_core::Batch;
use std::sync::{Condvar, Mutex};

use bb_drive::Cancel;

use super::rate_store::{Step, Store};
use std::time::{Duration, Instant};

pub use crate::options::RateLimit;

/// One identity's bucket.
#[derive(Debug, Clone)]
pub struct Bucket {
    /// Below zero only after a refresh batch larger than the upper half (see [`Bucket::take_batch`]).
    tokens: f64,
    at: Instant,
    paused_until: Option<Instant>,
    /// The latest refreshes' batches, as their first read decided them.
    batches: VecDeque<(u64, Decided)>,
    /// When the shared store said its next token comes: it is not asked again before.
    store_next: Option<Instant>,
}

/// What the first read of a refresh's batch decided for the rest of it.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Decided {
    /// Sent, with this many reads' tokens already taken.
    Sent(u32),
    /// Held back; room again after this long.
    Held(Duration),
}

/// The longest any wait of a bucket is said to be: a day. `--rate-limit` keeps its waits far below
/// (at most 1,000 s for a token); this bounds a [`RateLimit`] made any other way, whose arithmetic
/// must never panic.
pub const LONGEST_WAIT: Duration = Duration::from_secs(86_400);

/// How long until `tokens` more come back at `limit`'s refill: never negative, never past
/// [`LONGEST_WAIT`], whatever the numbers (NaN, infinite, a refill of 1e-300) — no panic.
pub fn wait_for(tokens: f64, limit: RateLimit) -> Duration {
    let seconds = tokens / limit.refill_per_s;
    if seconds.is_nan() {
        return LONGEST_WAIT;
    }
    Duration::try_from_secs_f64(seconds.max(0.0)).map_or(LONGEST_WAIT, |d| d.min(LONGEST_WAIT))
}

/// How many batches a bucket remembers: far more than are in flight at once.
const BATCHES_REMEMBERED: usize = 256;

impl Bucket {
    /// A full bucket at `now`.
    pub fn full(limit: RateLimit, now: Instant) -> Bucket {
        Bucket { tokens: limit.capacity, at: now, paused_until: None, batches: VecDeque::new(), store_next: None }
    }

    fn refill(&mut self, limit: RateLimit, now: Instant) {
        let elapsed = now.saturating_duration_since(self.at).as_secs_f64();
        self.tokens = (self.tokens + elapsed * limit.refill_per_s).min(limit.capacity);
        self.at = self.at.max(now);
    }

    /// Decides a read of a live view's refresh at `now`: `Ok` to send it, or `Err` with how long until
    /// the bucket has room for its batch again. The batch's first read decides for all of it.
    pub fn take_batch(&mut self, limit: RateLimit, now: Instant, batch: Batch) -> Result<(), Duration> {
        self.refill(limit, now);
        if let Some(decided) = self.prepaid(batch.id) {
            return decided;
        }
        let decided = self.decide_batch(limit, now, batch);
        self.record(batch, decided)
    }

    /// What the first read of batch `id` decided for this one, if it decided.
    fn prepaid(&mut self, id: u64) -> Option<Result<(), Duration>> {
        let at = self.batches.iter().position(|(b, _)| *b == id)?;
        match &mut self.batches[at].1 {
            Decided::Sent(prepaid) if *prepaid > 0 => {
                *prepaid -= 1;
                Some(Ok(()))
            }
            Decided::Held(wait) => Some(Err(*wait)),
            // More reads than the batch said: each decides for itself.
            Decided::Sent(_) => None,
        }
    }

    /// Remembers what the first read of `batch` decided for the rest of it.
    fn record(&mut self, batch: Batch, decided: Result<(), Duration>) -> Result<(), Duration> {
        match decided {
            Ok(()) => self.remember(batch.id, Decided::Sent(batch.reads.saturating_sub(1))),
            Err(wait) => self.remember(batch.id, Decided::Held(wait)),
        }
        decided
    }

    /// Takes `batch`'s tokens from the upper half, or says how long until they fit (the bucket refilled).
    fn decide_batch(&mut self, limit: RateLimit, now: Instant, batch: Batch) -> Result<(), Duration> {
        if let Some(until) = self.paused_until.filter(|u| *u > now) {
            return Err(until - now);
        }
        // Half the bucket stays for the model's calls; the batch goes whole or not at all. A batch
        // larger than the upper half (a diff view of 21 reads under `--rate-limit 20/1`) goes when the
        // bucket is full, and dips below the half by its excess, rather than never.
        let floor = limit.capacity / 2.0;
        let reads = f64::from(batch.reads.max(1));
        let need = reads.min(limit.capacity - floor);
        if self.tokens - need >= floor {
            self.tokens -= reads;
            return Ok(());
        }
        Err(wait_for(floor + need - self.tokens, limit))
    }

    /// Spends what the bucket holds: while the shared store decides, this process's own bucket stays
    /// empty, so falling back to it starts from nothing rather than with a burst on a spent budget.
    fn drain(&mut self, now: Instant) {
        self.tokens = self.tokens.min(0.0);
        self.at = self.at.max(now);
    }

    /// For one of the model's requests: takes a token if the bucket holds one (and Bitbucket asked for
    /// no pause), else says how long until it will; [`Rate`] serves the waiting requests in turn.
    pub fn try_take(&mut self, limit: RateLimit, now: Instant) -> Result<(), Duration> {
        self.refill(limit, now);
        if let Some(until) = self.paused_until {
            if until > now {
                return Err(until - now);
            }
            self.paused_until = None;
        }
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            return Ok(());
        }
        Err(wait_for(1.0 - self.tokens, limit))
    }

    /// Whether the first read of batch `id` has decided it.
    fn decided(&self, id: u64) -> bool {
        self.batches.iter().any(|(b, _)| *b == id)
    }

    fn remember(&mut self, id: u64, decided: Decided) {
        if self.batches.len() >= BATCHES_REMEMBERED {
            self.batches.pop_front();
        }
        self.batches.push_back((id, decided));
    }

    /// Gives back a token taken for a request that was not sent (cancelled while it waited).
    pub fn give_back(&mut self, limit: RateLimit) {
        self.tokens = (self.tokens + 1.0).min(limit.capacity);
    }

    /// Bitbucket answered 429 at `now`, asking for `retry_after`: the bucket is spent, and nothing of
    /// this identity's goes before the pause ends.
    pub fn limited(&mut self, limit: RateLimit, now: Instant, retry_after: Duration) {
        self.refill(limit, now);
        self.tokens = self.tokens.min(0.0);
        let until = now.checked_add(retry_after.min(LONGEST_WAIT)).unwrap_or(now);
        self.paused_until = Some(self.paused_until.map_or(until, |u| u.max(until)));
    }

    /// Whether nothing is owed or paused and the bucket is full again: it may be forgotten.
    fn idle(&self, limit: RateLimit, now: Instant) -> bool {
        let elapsed = now.saturating_duration_since(self.at).as_secs_f64();
        self.tokens + elapsed * limit.refill_per_s >= limit.capacity && self.paused_until.is_none_or(|u| u <= now)
    }
}

/// Past this many identities, buckets that are full again are forgotten.
const MAX_BUCKETS: usize = 1024;

/// Every identity's bucket, for one client (shared by every session of the process), and the
/// model's requests waiting for a token: served in turn over their queues (sessions, or persons in
/// per-person mode), oldest first within a queue, as the connections are ([`super::InFlight`]); one
/// session's burst of reads cannot keep another session of the same Bitbucket user waiting behind it.
/// With a shared store the tokens come from it, and the order stays here.
#[derive(Debug)]
pub struct Rate {
    limit: Option<RateLimit>,
    /// This process's share of `limit` when it decides alone: 1/N of it (`--replicas N`).
    own: Option<RateLimit>,
    state: Mutex<State>,
    granted: Condvar,
}

#[derive(Debug, Default)]
struct State {
    buckets: BTreeMap<u64, Bucket>,
    /// The model's requests waiting for a token, by identity.
    lines: BTreeMap<u64, Line>,
    next_waiter: u64,
    /// The replicas' shared buckets (`--rate-store`). Asked under this state's lock: one step at a
    /// time per process, each bounded by the store's timeout.
    store: Option<Store>,
}

/// Whose budget a request spends: this process's name for the identity, and the store's.
#[derive(Debug, Clone, Copy)]
pub struct Identity<'a> {
    /// The identity's number in this process (0: the configured credentials; else [`local_of`] its key).
    pub local: u64,
    /// Its key in the shared store ([`super::rate_store::identity_key`]).
    pub key: &'a str,
}

/// The number in this process of the identity whose store key is `key` (never 0, the configured
/// credentials'): the first 64 bits of its digest, so every request of one person or Bitbucket user
/// counts in one bucket whichever queue it waits in.
pub fn local_of(key: &str) -> u64 {
    let hex = key.strip_prefix("bb:rate:").unwrap_or(key);
    let n = hex.get(..16).and_then(|h| u64::from_str_radix(h, 16).ok()).unwrap_or_else(|| {
        // Not a digest (a test's key): FNV-1a over its bytes.
        key.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
    });
    n | 1 << 63
}

/// Where a take's tokens come from: the shared store while it answers, else the process's own bucket
/// at its share of the limit.
struct Source<'a> {
    store: &'a mut Option<Store>,
    key: &'a str,
    limit: RateLimit,
    own: RateLimit,
}

impl Source<'_> {
    /// Runs `step` in the store; `None` when there is none or it does not answer (then the caller
    /// decides from `bucket` alone). While the store decides, `bucket` is kept empty.
    fn shared(&mut self, bucket: &mut Bucket, now: Instant, step: Step) -> Option<Result<(), Duration>> {
        let store = self.store.as_mut()?;
        let decided = store.run(self.key, self.limit, step);
        store.metrics().rate_store_decision(decided.is_some());
        if decided.is_some() {
            bucket.drain(now);
        }
        decided
    }

    /// A token for one of the model's requests. Waiting requests look every few ms; the store is
    /// asked again only once the wait it gave has passed.
    fn take(&mut self, bucket: &mut Bucket, now: Instant) -> Result<(), Duration> {
        if let Some(next) = bucket.store_next.filter(|t| *t > now && self.store.is_some()) {
            return Err(next - now);
        }
        match self.shared(bucket, now, Step::Take) {
            Some(decided) => {
                bucket.store_next = decided.err().map(|wait| now + wait);
                decided
            }
            None => bucket.try_take(self.own, now),
        }
    }
}

/// One identity's waiting requests.
#[derive(Debug, Default)]
struct Line {
    queues: BTreeMap<u64, VecDeque<u64>>,
    turns: VecDeque<u64>,
    granted: BTreeSet<u64>,
}

impl Line {
    fn forget(&mut self, queue: u64, waiter: u64) {
        if let Some(w) = self.queues.get_mut(&queue) {
            w.retain(|x| *x != waiter);
            if w.is_empty() {
                self.queues.remove(&queue);
                self.turns.retain(|q| *q != queue);
            }
        }
    }

    /// Hands the tokens `take` gives to the waiters whose turn it is; how long until the next one.
    fn grant(&mut self, mut take: impl FnMut() -> Result<(), Duration>) -> Option<Duration> {
        while let Some(&queue) = self.turns.front() {
            if let Err(wait) = take() {
                return Some(wait);
            }
            self.turns.pop_front();
            let Some(waiters) = self.queues.get_mut(&queue) else { continue };
            if let Some(w) = waiters.pop_front() {
                self.granted.insert(w);
            }
            if waiters.is_empty() {
                self.queues.remove(&queue);
            } else {
                self.turns.push_back(queue);
            }
        }
        None
    }
}

/// What [`Rate::enter`] decided.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Entry {
    /// Its token is taken: send it.
    Go,
    /// A refresh held back: room again after this long.
    Defer(Duration),
    /// Cancelled while it waited: nothing taken.
    Cancelled,
}

/// How often a waiting request looks at its cancel.
const CANCEL_CHECK: Duration = Duration::from_millis(20);

/// bb refills its buckets at this share of the rate it was given. Two requests bb sends a refill apart
/// may reach Bitbucket closer together (the network's jitter, a slow connection before a fast one):
/// at exactly Bitbucket's rate the second would find its bucket a little short and meet a 429. At 90%,
/// 5 a second leaves 22 ms of slack between two requests. Measured against the stand-in's limiter
/// (`tests/bitbucket_rate_limit.rs`): at 100% one request in a sustained run met a 429, at 90% none.
pub const REFILL_SHARE: f64 = 0.9;

impl Rate {
    /// Buckets of `limit`, refilled at [`REFILL_SHARE`] of its rate; `None` spends nothing and never
    /// defers (`--rate-limit off`).
    pub fn new(limit: Option<RateLimit>) -> Rate {
        Rate::shared(limit, 1, None)
    }

    /// [`Rate::new`] for one of `replicas` processes: the buckets live in `store` while it answers,
    /// and this process keeps 1/`replicas` of the limit when it does not (or when there is none).
    pub fn shared(limit: Option<RateLimit>, replicas: u32, store: Option<Store>) -> Rate {
        let limit = limit.map(|l| RateLimit { refill_per_s: l.refill_per_s * REFILL_SHARE, ..l });
        let n = f64::from(replicas.max(1));
        let own = limit.map(|l| RateLimit { capacity: (l.capacity / n).max(1.0), refill_per_s: l.refill_per_s / n });
        Rate { limit, own, state: Mutex::new(State { store, ..State::default() }), granted: Condvar::new() }
    }

    /// Where the store's coming and going is said.
    pub fn set_log(&self, log: bb_drive::Logger) {
        if let Some(store) = self.lock().store.as_mut() {
            store.set_log(log);
        }
    }

    /// Where the store's coming and going and its decisions are counted (the application's metrics).
    pub fn count_in(&self, metrics: std::sync::Arc<bb_drive::metrics::Metrics>) {
        if let Some(store) = self.lock().store.as_mut() {
            store.count_in(metrics);
        }
    }

    /// Waits for a token of identity `who` in `queue`'s turn (the model's requests), or decides at
    /// once (a refresh's batch: sent whole from the upper half of the bucket, or held back).
    pub fn enter(&self, who: Identity<'_>, queue: u64, refresh: Option<Batch>, cancel: &Cancel) -> Entry {
        let (Some(limit), Some(own)) = (self.limit, self.own) else { return Entry::Go };
        let id = who.local;
        let mut state = self.lock();
        let now = Instant::now();
        if state.buckets.len() >= MAX_BUCKETS {
            let lines = &state.lines;
            let idle: Vec<u64> = state
                .buckets
                .iter()
                .filter(|(id, b)| b.idle(own, now) && !lines.contains_key(id))
                .map(|(id, _)| *id)
                .collect();
            for id in idle {
                state.buckets.remove(&id);
            }
        }
        state.buckets.entry(id).or_insert_with(|| Bucket::full(own, now));
        if let Some(batch) = refresh {
            // The model's requests come first: while any waits, no refresh goes.
            let models_wait = state.lines.get(&id).is_some_and(|l| !l.turns.is_empty());
            let State { buckets, store, .. } = &mut *state;
            let Some(bucket) = buckets.get_mut(&id) else { return Entry::Go };
            if models_wait && !bucket.decided(batch.id) {
                let wait = wait_for(f64::from(batch.reads.max(1)), limit);
                bucket.remember(batch.id, Decided::Held(wait));
            }
            bucket.refill(own, now);
            let decided = match bucket.prepaid(batch.id) {
                Some(decided) => decided,
                None => {
                    let mut source = Source { store, key: who.key, limit, own };
                    let decided = match source.shared(bucket, now, Step::Batch(batch.reads)) {
                        Some(decided) => decided,
                        None => bucket.decide_batch(own, now, batch),
                    };
                    bucket.record(batch, decided)
                }
            };
            return match decided {
                Ok(()) => Entry::Go,
                Err(wait) => Entry::Defer(wait),
            };
        }
        let waiter = state.next_waiter;
        state.next_waiter += 1;
        let line = state.lines.entry(id).or_default();
        let first = !line.queues.contains_key(&queue);
        line.queues.entry(queue).or_default().push_back(waiter);
        if first {
            line.turns.push_back(queue);
        }
        loop {
            let now = Instant::now();
            let State { buckets, lines, store, .. } = &mut *state;
            let (Some(bucket), Some(line)) = (buckets.get_mut(&id), lines.get_mut(&id)) else { return Entry::Go };
            let mut source = Source { store, key: who.key, limit, own };
            let next = line.grant(|| source.take(bucket, now));
            if !line.granted.is_empty() {
                self.granted.notify_all();
            }
            if line.granted.remove(&waiter) {
                if line.turns.is_empty() && line.granted.is_empty() {
                    lines.remove(&id);
                }
                return Entry::Go;
            }
            if cancel.is_cancelled() {
                line.forget(queue, waiter);
                if line.turns.is_empty() && line.granted.is_empty() {
                    lines.remove(&id);
                }
                return Entry::Cancelled;
            }
            let wait = next.unwrap_or(CANCEL_CHECK).clamp(Duration::from_millis(1), CANCEL_CHECK);
            state = self.granted.wait_timeout(state, wait).unwrap_or_else(|p| p.into_inner()).0;
        }
    }

    /// Gives back the token of a request of `who` that was not sent.
    pub fn give_back(&self, who: Identity<'_>) {
        let (Some(limit), Some(own)) = (self.limit, self.own) else { return };
        let mut state = self.lock();
        let now = Instant::now();
        let State { buckets, store, .. } = &mut *state;
        if let Some(b) = buckets.get_mut(&who.local) {
            let mut source = Source { store, key: who.key, limit, own };
            b.store_next = None;
            if source.shared(b, now, Step::Give).is_none() {
                b.give_back(own);
            }
        }
        drop(state);
        self.granted.notify_all();
    }

    /// Bitbucket answered a request of `who` with 429 and `Retry-After` (1 s when it gave none): the
    /// identity pauses here, and on every replica through the store.
    pub fn limited(&self, who: Identity<'_>, retry_after: Duration) {
        let (Some(limit), Some(own)) = (self.limit, self.own) else { return };
        let now = Instant::now();
        let mut state = self.lock();
        let State { buckets, store, .. } = &mut *state;
        let bucket = buckets.entry(who.local).or_insert_with(|| Bucket::full(own, now));
        let mut source = Source { store, key: who.key, limit, own };
        let _ = source.shared(bucket, now, Step::Pause(retry_after));
        bucket.limited(own, now, retry_after);
    }

    /// How many of `who`'s requests wait for a token now.
    pub fn waiting(&self, who: u64) -> usize {
        self.lock().lines.get(&who).map_or(0, |l| l.queues.values().map(VecDeque::len).sum())
    }

    /// Whether the shared store answered when last asked (`true` without a store).
    pub fn store_answering(&self) -> bool {
        self.lock().store.as_ref().is_none_or(Store::answering)
    }

    /// When the shared store, which did not answer, is asked again.
    #[cfg(test)]
    pub(crate) fn store_asked_again_at(&self) -> Option<Instant> {
        self.lock().store.as_ref().and_then(Store::asked_again_at)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    const L: RateLimit = RateLimit::BITBUCKET_DEFAULT;
    const K0: Identity<'static> = Identity { local: 0, key: "bb:rate:test" };

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn one_read(id: u64) -> Batch {
        Batch { id, reads: 1 }
    }

    #[test]
    fn a_refreshs_batch_goes_whole_or_not_at_all() {
        let t0 = Instant::now();
        let mut b = Bucket::full(L, t0);
        let card = |id| Batch { id, reads: 6 };
        // 60 tokens: five cards' batches of six fit down to the half (60 - 30 = 30), the sixth does not.
        for id in 0..5 {
            for _ in 0..6 {
                assert_eq!(b.take_batch(L, t0, card(id)), Ok(()));
            }
        }
        let sixth = b.take_batch(L, t0, card(5));
        assert!(sixth.is_err(), "{sixth:?}");
        for _ in 1..6 {
            assert_eq!(b.take_batch(L, t0, card(5)), sixth, "the rest of a held-back batch is held back, unspent");
        }
        // The model's 30 are all there.
        for _ in 0..30 {
            assert_eq!(b.try_take(L, t0), Ok(()));
        }
        assert_eq!(b.try_take(L, t0), Err(ms(200)));
    }

    #[test]
    fn the_model_spends_the_whole_bucket_then_each_token_as_it_comes() {
        let t0 = Instant::now();
        let mut b = Bucket::full(L, t0);
        for _ in 0..60 {
            assert_eq!(b.try_take(L, t0), Ok(()));
        }
        assert_eq!(b.try_take(L, t0), Err(ms(200)), "the next token in 200 ms");
        // A second later five tokens have come.
        let t1 = t0 + ms(1000);
        for _ in 0..5 {
            assert_eq!(b.try_take(L, t1), Ok(()));
        }
        assert_eq!(b.try_take(L, t1), Err(ms(200)));
    }

    #[test]
    fn refreshes_spend_only_the_upper_half_and_are_deferred_below_it() {
        let t0 = Instant::now();
        let mut b = Bucket::full(L, t0);
        for id in 0..30 {
            assert_eq!(b.take_batch(L, t0, one_read(id)), Ok(()));
        }
        // 30 left: a refresh would take the model's half.
        assert_eq!(b.take_batch(L, t0, one_read(30)), Err(ms(200)));
        // The model still has its 30.
        for _ in 0..30 {
            assert_eq!(b.try_take(L, t0), Ok(()));
        }
        // Empty: a refresh waits until the bucket is past half again (31 tokens, 6.2 s).
        assert_eq!(b.take_batch(L, t0, one_read(31)), Err(ms(6200)));
        assert_eq!(b.take_batch(L, t0 + ms(6200), one_read(32)), Ok(()));
    }

    #[test]
    fn a_429_pauses_every_request_of_the_identity_for_its_retry_after() {
        let t0 = Instant::now();
        let mut b = Bucket::full(L, t0);
        b.limited(L, t0, Duration::from_secs(3));
        assert_eq!(b.take_batch(L, t0 + ms(1000), one_read(1)), Err(ms(2000)));
        assert_eq!(b.try_take(L, t0 + ms(1000)), Err(ms(2000)));
        // After the pause the bucket has refilled for 3 s from empty: 15 tokens, below half.
        let t3 = t0 + ms(3000);
        assert!(b.take_batch(L, t3, one_read(2)).is_err());
        assert_eq!(b.try_take(L, t3), Ok(()));
    }

    #[test]
    fn a_token_given_back_is_the_next_ones() {
        let one = RateLimit { capacity: 1.0, refill_per_s: 1.0 };
        let t0 = Instant::now();
        let mut b = Bucket::full(one, t0);
        assert_eq!(b.try_take(one, t0), Ok(()));
        assert_eq!(b.try_take(one, t0), Err(ms(1000)));
        b.give_back(one);
        assert_eq!(b.try_take(one, t0), Ok(()));
    }

    #[test]
    fn off_spends_nothing() {
        let r = Rate::new(None);
        for id in 0..1000 {
            assert_eq!(r.enter(K0, 0, Some(one_read(id)), &Cancel::new()), Entry::Go);
            assert_eq!(r.enter(K0, 0, None, &Cancel::new()), Entry::Go);
        }
    }

    #[test]
    fn a_session_waiting_for_a_token_is_served_in_turn_not_behind_anothers_burst() {
        use std::sync::{Arc, Mutex as M};
        // One token at a time, 50 a second (45 at bb's share).
        let rate = Arc::new(Rate::new(Some(RateLimit { capacity: 1.0, refill_per_s: 50.0 })));
        assert_eq!(rate.enter(K0, 1, None, &Cancel::new()), Entry::Go, "the bucket's one token");
        let order = Arc::new(M::new(Vec::new()));
        let wait_in = |queue: u64, label: &'static str| {
            let (rate, order) = (Arc::clone(&rate), Arc::clone(&order));
            std::thread::spawn(move || {
                assert_eq!(rate.enter(K0, queue, None, &Cancel::new()), Entry::Go);
                order.lock().unwrap().push(label);
            })
        };
        // Session A's burst of six waits before session B's one read.
        let mut threads: Vec<_> = (0..6).map(|_| wait_in(1, "A")).collect();
        let entered = || rate.waiting(0) + order.lock().unwrap().len();
        while entered() < 6 {
            std::thread::yield_now();
        }
        threads.push(wait_in(2, "B"));
        while entered() < 7 {
            std::thread::yield_now();
        }
        // A's served before B joined (a token comes every 22 ms, so a slow machine may serve some).
        let before = order.lock().unwrap().len();
        for t in threads {
            t.join().unwrap();
        }
        let order = order.lock().unwrap();
        let b = order.iter().position(|l| *l == "B").unwrap();
        assert!(b <= before + 2, "B is served within a turn, not after A's burst: {order:?} ({before} before it)");
    }

    #[test]
    fn a_cancelled_wait_takes_no_token_and_leaves_the_line() {
        let rate = Rate::new(Some(RateLimit { capacity: 1.0, refill_per_s: 0.001 }));
        assert_eq!(rate.enter(K0, 1, None, &Cancel::new()), Entry::Go);
        let cancel = Cancel::new();
        cancel.cancel();
        assert_eq!(rate.enter(K0, 1, None, &cancel), Entry::Cancelled);
        assert_eq!(rate.waiting(0), 0);
    }

    #[test]
    fn a_batch_larger_than_the_upper_half_goes_when_the_bucket_is_full() {
        let small = RateLimit { capacity: 20.0, refill_per_s: 1.0 };
        let t0 = Instant::now();
        let mut b = Bucket::full(small, t0);
        let diff = |id| Batch { id, reads: 21 };
        for _ in 0..21 {
            assert_eq!(b.take_batch(small, t0, diff(1)), Ok(()));
        }
        // Spent past empty: the next one waits for a full bucket again (21 s at 1 a second).
        assert_eq!(b.take_batch(small, t0, diff(2)), Err(ms(21_000)));
        assert_eq!(b.take_batch(small, t0 + ms(21_000), diff(3)), Ok(()));
    }

    #[test]
    fn the_third_request_at_a_refill_of_1e_minus_300_waits_rather_than_aborting_bb() {
        // `--rate-limit 2/1e-300` is refused at start now; a limit made any other way still cannot panic.
        let rate = Rate::new(Some(RateLimit { capacity: 2.0, refill_per_s: 1e-300 }));
        assert_eq!(rate.enter(K0, 1, None, &Cancel::new()), Entry::Go);
        assert_eq!(rate.enter(K0, 1, None, &Cancel::new()), Entry::Go);
        let cancel = Cancel::new();
        cancel.cancel();
        assert_eq!(rate.enter(K0, 1, None, &cancel), Entry::Cancelled);
        assert_eq!(rate.enter(K0, 1, Some(one_read(9)), &Cancel::new()), Entry::Defer(LONGEST_WAIT));
    }

    #[test]
    fn no_limit_however_extreme_makes_a_bucket_panic_or_wait_past_a_day() {
        let t0 = Instant::now();
        let extremes = [
            0.0,
            -1.0,
            -0.0,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            1e-300,
            1e300,
            f64::MIN_POSITIVE,
            u64::MAX as f64,
        ];
        let bounded = |r: Result<(), Duration>| r.err().is_none_or(|w| w <= LONGEST_WAIT);
        for capacity in extremes.into_iter().chain([1.0, 2.0, 60.0]) {
            for refill_per_s in extremes.into_iter().chain([0.001, 5.0]) {
                let l = RateLimit { capacity, refill_per_s };
                let mut b = Bucket::full(l, t0);
                for i in 0..4 {
                    assert!(bounded(b.try_take(l, t0 + ms(i))), "{l:?}");
                }
                for (id, reads) in [(1, 1), (2, u32::MAX), (3, 0)] {
                    assert!(bounded(b.take_batch(l, t0, Batch { id, reads })), "{l:?}");
                }
                b.give_back(l);
                b.limited(l, t0, Duration::MAX);
                assert!(bounded(b.try_take(l, t0)), "{l:?}");
                let _ = b.idle(l, t0 + Duration::from_secs(u64::from(u32::MAX)));
            }
        }
    }

    #[test]
    fn a_wait_is_never_negative_nor_past_a_day() {
        let l = |refill_per_s| RateLimit { capacity: 1.0, refill_per_s };
        assert_eq!(wait_for(1.0, l(1e-300)), LONGEST_WAIT);
        assert_eq!(wait_for(1.0, l(0.0)), LONGEST_WAIT);
        assert_eq!(wait_for(0.0, l(0.0)), LONGEST_WAIT);
        assert_eq!(wait_for(1.0, l(f64::NAN)), LONGEST_WAIT);
        assert_eq!(wait_for(f64::INFINITY, l(5.0)), LONGEST_WAIT);
        assert_eq!(wait_for(-3.0, l(5.0)), Duration::ZERO);
        assert_eq!(wait_for(1.0, l(-5.0)), Duration::ZERO);
        assert_eq!(wait_for(1.0, l(f64::INFINITY)), Duration::ZERO);
        assert_eq!(wait_for(1.0, l(0.5)), Duration::from_secs(2));
    }

    /// Issue 58: a hundred people's token checks, all in one queue (the checks' lane), each spend from
    /// their own person's bucket; before, they shared the one of bb's own credentials and the second
    /// had to wait.
    #[test]
    fn each_person_s_requests_count_in_their_own_bucket_whatever_queue_they_wait_in() {
        let rate = Rate::new(Some(RateLimit { capacity: 1.0, refill_per_s: 0.001 }));
        let given_up = Cancel::new();
        given_up.cancel();
        let keys: Vec<String> =
            (0..100).map(|n| crate::rate_store::identity_key("http://bb.test", &format!("Bearer t{n}"))).collect();
        for key in &keys {
            let who = Identity { local: local_of(key), key };
            assert_eq!(rate.enter(who, 0, None, &given_up), Entry::Go, "a token of its own bucket, at once");
        }
        // The same person again, from another queue (their session's): their bucket is spent.
        let who = Identity { local: local_of(&keys[7]), key: &keys[7] };
        assert_eq!(rate.enter(who, 42, None, &given_up), Entry::Cancelled);
        // Numbers are never the configured credentials', and differ per person.
        let locals: std::collections::BTreeSet<u64> = keys.iter().map(|k| local_of(k)).collect();
        assert_eq!(locals.len(), 100);
        assert!(!locals.contains(&0) && local_of("a test key") != 0);
    }
}
