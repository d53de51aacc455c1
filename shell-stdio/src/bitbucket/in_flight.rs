//! The bound on Bitbucket requests in flight: a counting semaphore for blocking threads.
//!
//! `enter` blocks until fewer than `limit` permits are out, or until the waiter's request is cancelled;
//! dropping the [`Permit`] lets the next waiter in. A panic elsewhere never wedges it: a poisoned lock is
//! taken over, since the count stays consistent.

use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

use bb_drive::Cancel;

/// How often a waiter looks at its cancel while no permit is freed.
const CANCEL_CHECK: Duration = Duration::from_millis(20);

/// A counting semaphore with a fixed number of permits.
#[derive(Debug)]
pub struct InFlight {
    state: Mutex<Count>,
    freed: Condvar,
    limit: usize,
}

#[derive(Debug, Default)]
struct Count {
    inside: usize,
    most_inside: usize,
}

/// One permit; released on drop.
#[derive(Debug)]
pub struct Permit<'a>(&'a InFlight);

impl InFlight {
    /// A bound that lets `limit` (at least 1) holders in at once.
    pub fn new(limit: usize) -> Self {
        InFlight { state: Mutex::new(Count::default()), freed: Condvar::new(), limit: limit.max(1) }
    }

    /// Waits for a permit; `None` once `cancel` is set (checked at least every 20 ms while waiting).
    pub fn enter(&self, cancel: &Cancel) -> Option<Permit<'_>> {
        let mut state = self.lock();
        loop {
            if cancel.is_cancelled() {
                return None;
            }
            if state.inside < self.limit {
                break;
            }
            state = self.freed.wait_timeout(state, CANCEL_CHECK).unwrap_or_else(|p| p.into_inner()).0;
        }
        state.inside += 1;
        state.most_inside = state.most_inside.max(state.inside);
        Some(Permit(self))
    }

    /// The most permits that were out at once so far.
    pub fn most_inside(&self) -> usize {
        self.lock().most_inside
    }

    fn lock(&self) -> MutexGuard<'_, Count> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        self.0.lock().inside -= 1;
        self.0.freed.notify_one();
    }
}

#[cfg(test)]
mod tests {
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
                    let _p = bound.enter(&Cancel::new());
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
        let p = bound.enter(&Cancel::new());
        assert!(p.is_some());
        drop(p);
        let _again = bound.enter(&Cancel::new());
        assert_eq!(bound.most_inside(), 1);
    }

    #[test]
    fn a_cancelled_waiter_gives_up_its_place_and_takes_no_permit() {
        let bound = Arc::new(InFlight::new(1));
        let held = bound.enter(&Cancel::new());
        let cancel = Cancel::new();
        let waiter = {
            let (bound, cancel) = (Arc::clone(&bound), cancel.clone());
            std::thread::spawn(move || bound.enter(&cancel).is_some())
        };
        cancel.cancel();
        assert!(!waiter.join().unwrap_or(true));
        assert_eq!(bound.most_inside(), 1);
        drop(held);
    }
}
