//! The bound on Bitbucket requests in flight: a counting semaphore for blocking threads.
//!
//! `enter` blocks until fewer than `limit` permits are out; dropping the [`Permit`] lets the next waiter in.
//! A panic elsewhere never wedges it: a poisoned lock is taken over, since the count stays consistent.

use std::sync::{Condvar, Mutex, MutexGuard};

/// A counting semaphore with a fixed number of permits.
#[derive(Debug)]
pub struct Gate {
    state: Mutex<GateState>,
    freed: Condvar,
    limit: usize,
}

#[derive(Debug, Default)]
struct GateState {
    inside: usize,
    most_inside: usize,
}

/// One of the gate's permits; released on drop.
#[derive(Debug)]
pub struct Permit<'a>(&'a Gate);

impl Gate {
    /// A gate that lets `limit` (at least 1) holders in at once.
    pub fn new(limit: usize) -> Self {
        Gate { state: Mutex::new(GateState::default()), freed: Condvar::new(), limit: limit.max(1) }
    }

    /// Waits for a permit.
    pub fn enter(&self) -> Permit<'_> {
        let mut state = self.lock();
        while state.inside >= self.limit {
            state = self.freed.wait(state).unwrap_or_else(|p| p.into_inner());
        }
        state.inside += 1;
        state.most_inside = state.most_inside.max(state.inside);
        Permit(self)
    }

    /// The most permits that were out at once so far.
    pub fn most_inside(&self) -> usize {
        self.lock().most_inside
    }

    fn lock(&self) -> MutexGuard<'_, GateState> {
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
        let gate = Arc::new(Gate::new(3));
        let done = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..12)
            .map(|_| {
                let (gate, done) = (gate.clone(), done.clone());
                std::thread::spawn(move || {
                    let _p = gate.enter();
                    std::thread::yield_now();
                    done.fetch_add(1, Ordering::SeqCst);
                })
            })
            .collect();
        for t in threads {
            let _ = t.join();
        }
        assert_eq!(done.load(Ordering::SeqCst), 12);
        assert!(gate.most_inside() <= 3, "{}", gate.most_inside());
        assert!(gate.most_inside() >= 1);
    }

    #[test]
    fn a_zero_limit_still_lets_one_in() {
        let gate = Gate::new(0);
        let p = gate.enter();
        drop(p);
        let _again = gate.enter();
        assert_eq!(gate.most_inside(), 1);
    }
}
