//! One thread that runs small jobs at given instants: the deadlines of calls whose CPU work runs on
//! other threads. Started on first use; a job runs on it, so it must be quick (it hands an event to
//! a shell and returns).

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;
use std::sync::{Condvar, Mutex, OnceLock};
use std::time::Instant;

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
}

struct Timer {
    state: Mutex<State>,
    changed: Condvar,
}

fn timer() -> &'static Timer {
    static TIMER: OnceLock<&'static Timer> = OnceLock::new();
    TIMER.get_or_init(|| {
        let t: &'static Timer =
            Box::leak(Box::new(Timer { state: Mutex::new(State::default()), changed: Condvar::new() }));
        // If the thread cannot start, jobs are never run: a call then answers when its jobs come back.
        let _ = std::thread::Builder::new().name("bb-timer".into()).spawn(move || run(t));
        t
    })
}

fn run(t: &'static Timer) {
    let mut state = t.state.lock().unwrap_or_else(|p| p.into_inner());
    loop {
        let now = Instant::now();
        let wait = match state.due.peek() {
            None => None,
            Some(Reverse(e)) if e.at <= now => {
                if let Some(Reverse(e)) = state.due.pop() {
                    drop(state);
                    (e.job)();
                    state = t.state.lock().unwrap_or_else(|p| p.into_inner());
                }
                continue;
            }
            Some(Reverse(e)) => Some(e.at - now),
        };
        state = match wait {
            None => t.changed.wait(state).unwrap_or_else(|p| p.into_inner()),
            Some(d) => t.changed.wait_timeout(state, d).unwrap_or_else(|p| p.into_inner()).0,
        };
    }
}

/// Runs `job` on the timer's thread at `at` (at once if it has passed).
pub(crate) fn at(at: Instant, job: impl FnOnce() + Send + 'static) {
    let t = timer();
    let mut state = t.state.lock().unwrap_or_else(|p| p.into_inner());
    state.seq += 1;
    let seq = state.seq;
    state.due.push(Reverse(Entry { at, seq, job: Box::new(job) }));
    t.changed.notify_one();
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;
    use std::time::Duration;

    #[test]
    fn jobs_run_in_the_order_of_their_instants() {
        let (tx, rx) = mpsc::channel();
        let now = Instant::now();
        for (i, ms) in [(1, 60), (2, 20), (3, 40)] {
            let tx = tx.clone();
            at(now + Duration::from_millis(ms), move || {
                let _ = tx.send(i);
            });
        }
        let got: Vec<i32> = (0..3).map(|_| rx.recv_timeout(Duration::from_secs(10)).unwrap_or(0)).collect();
        assert_eq!(got, [2, 3, 1]);
    }
}
