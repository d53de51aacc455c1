//! The flag that tells a Bitbucket request its call no longer needs it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// Set once, when the core cancels a read ([`bb_core::Output::Cancel`]) or its session closes;
/// cheap to clone, every clone sees the same flag. A [`crate::Bitbucket`] checks it before sending
/// and between retries, and sleeps through [`Cancel::sleep`] so a cancel wakes it at once.
#[derive(Debug, Clone, Default)]
pub struct Cancel(Arc<Flag>);

#[derive(Debug, Default)]
struct Flag {
    set: AtomicBool,
    // Held only to wait on `woken`; the flag itself is the atomic.
    lock: Mutex<()>,
    woken: Condvar,
}

impl Cancel {
    /// A flag not yet set.
    pub fn new() -> Cancel {
        Cancel::default()
    }

    /// Sets the flag and wakes every [`Cancel::sleep`] on it.
    pub fn cancel(&self) {
        // Taking the lock orders this with a sleeper between its check and its wait.
        let _guard = self.0.lock.lock().unwrap_or_else(|p| p.into_inner());
        self.0.set.store(true, Ordering::SeqCst);
        self.0.woken.notify_all();
    }

    /// Whether the request is no longer needed.
    pub fn is_cancelled(&self) -> bool {
        self.0.set.load(Ordering::SeqCst)
    }

    /// Blocks this thread for `duration`, or less if the flag is set meanwhile. Returns whether it is set.
    pub fn sleep(&self, duration: Duration) -> bool {
        let deadline = Instant::now() + duration;
        let mut guard = self.0.lock.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            if self.is_cancelled() {
                return true;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            guard = self.0.woken.wait_timeout(guard, left).unwrap_or_else(|p| p.into_inner()).0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sleep_returns_when_the_flag_is_set_from_another_thread() {
        let cancel = Cancel::new();
        let setter = cancel.clone();
        let thread = std::thread::spawn(move || setter.cancel());
        // An hour unless the cancel wakes it: the test would hang if it did not.
        assert!(cancel.sleep(Duration::from_secs(3600)));
        let _ = thread.join();
        assert!(cancel.is_cancelled());
    }

    #[test]
    fn an_unset_flag_sleeps_the_whole_duration() {
        assert!(!Cancel::new().sleep(Duration::from_millis(1)));
    }
}
