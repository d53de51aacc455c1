//! One thread that runs small jobs at given instants: the deadlines of calls whose CPU work runs on
//! other threads, and the grants of room given back. The application makes one
//! ([`crate::Process`]) and every driver and its memory budget share it; the thread starts on first
//! use and exits after [`IDLE`] with nothing due, as the pools' threads do, so an idle server holds
//! none. A job runs on the thread, so it must be quick (it hands an event to a shell and returns).

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// How long the thread waits with nothing due before it exits.
const IDLE: Duration = Duration::from_secs(30);

type Job = Box<dyn FnOnce() + Send>;

struct Entry {
    at: Instant,
    seq: u64,
    job: Job,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.seq) == (other.at, other.seq)
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.at, self.seq).cmp(&(other.at, other.seq))
    }
}

#[derive(Default)]
struct State {
    due: BinaryHeap<Reverse<Entry>>,
    seq: u64,
    /// Whether the thread is alive (it clears this under the lock as it exits).
    running: bool,
}

#[derive(Default)]
struct Shared {
    state: Mutex<State>,
    changed: Condvar,
}

/// The application's timer; cloning it shares the one thread and its jobs.
#[derive(Clone, Default)]
pub(crate) struct Timer(Arc<Shared>);

impl Timer {
    /// Runs `job` on the timer's thread at `at` (at once if it has passed).
    pub(crate) fn at(&self, at: Instant, job: impl FnOnce() + Send + 'static) {
        let mut state = self.lock();
        state.seq += 1;
        let seq = state.seq;
        state.due.push(Reverse(Entry { at, seq, job: Box::new(job) }));
        if !state.running {
            let shared = Arc::clone(&self.0);
            // If the thread cannot start, the job waits for the next `at` to try again: a call then
            // answers when its jobs come back, as it would with no deadline.
            state.running = std::thread::Builder::new().name("bb-timer".into()).spawn(move || run(&shared)).is_ok();
        }
        self.0.changed.notify_one();
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.0.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether the thread is alive now.
    #[cfg(test)]
    fn running(&self) -> bool {
        self.lock().running
    }
}

fn run(t: &Shared) {
    let mut state = t.state.lock().unwrap_or_else(|p| p.into_inner());
    loop {
        let now = Instant::now();
        let wait = match state.due.peek() {
            None => IDLE,
            Some(Reverse(e)) if e.at <= now => {
                if let Some(Reverse(e)) = state.due.pop() {
                    drop(state);
                    (e.job)();
                    state = t.state.lock().unwrap_or_else(|p| p.into_inner());
                }
                continue;
            }
            Some(Reverse(e)) => e.at - now,
        };
        let (next, timed_out) = t.changed.wait_timeout(state, wait).unwrap_or_else(|p| p.into_inner());
        state = next;
        if timed_out.timed_out() && state.due.is_empty() {
            state.running = false;
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    #[test]
    fn jobs_run_in_the_order_of_their_instants() {
        let timer = Timer::default();
        let (tx, rx) = mpsc::channel();
        let now = Instant::now();
        for (i, ms) in [(1, 60), (2, 20), (3, 40)] {
            let tx = tx.clone();
            timer.at(now + Duration::from_millis(ms), move || {
                let _ = tx.send(i);
            });
        }
        let got: Vec<i32> = (0..3).map(|_| rx.recv_timeout(Duration::from_secs(10)).unwrap_or(0)).collect();
        assert_eq!(got, [2, 3, 1]);
    }

    #[test]
    fn a_timer_starts_its_thread_only_when_given_a_job_and_clones_share_it() {
        let timer = Timer::default();
        assert!(!timer.running(), "no thread before the first job");
        let (tx, rx) = mpsc::channel();
        let other = timer.clone();
        other.at(Instant::now(), move || {
            let _ = tx.send(());
        });
        assert!(timer.running(), "the clone's job started the shared thread");
        assert!(rx.recv_timeout(Duration::from_secs(10)).is_ok());
    }
}
