//! An optional instant that threads share without a lock: what the connection clocks keep (the
//! deadline of the head hyper waits for, since when writes wait for the client).

use std::sync::atomic::AtomicU64;
use std::time::{Duration, Instant};

/// An `Option<Instant>` in one atomic word: nanoseconds after a base plus one, 0 for none.
#[derive(Debug)]
pub(crate) struct AtomicInstant {
    base: Instant,
    mark: AtomicU64,
}

impl AtomicInstant {
    /// None yet.
    pub(crate) fn none() -> AtomicInstant {
        AtomicInstant { base: Instant::now(), mark: AtomicU64::new(0) }
    }

    /// `at` as the word stores it: never 0 (an instant before the base is the base).
    pub(crate) fn mark(&self, at: Instant) -> u64 {
        u64::try_from(at.saturating_duration_since(self.base).as_nanos()).unwrap_or(u64::MAX - 1).saturating_add(1)
    }

    /// The instant a word holds, if any.
    pub(crate) fn instant(&self, mark: u64) -> Option<Instant> {
        (mark != 0).then(|| self.base + Duration::from_nanos(mark - 1))
    }

    /// The word, for the caller's own loads, stores and exchanges of marks.
    pub(crate) fn word(&self) -> &AtomicU64 {
        &self.mark
    }
}
