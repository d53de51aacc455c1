//! The threads Bitbucket reads block on: a bounded pool whose idle threads exit.
//!
//! smol's blocking pool grows to 500 threads and keeps them a while; a burst of slow or cancelled
//! reads left bb at 504 threads and 55 MB. Reads need far fewer: the Bitbucket client lets a
//! handful in flight at once (6 by default), so [`READ_THREADS`] threads let every slot be used
//! while a few more wait for a slot or sleep before a retry. Jobs queue by [`Requester::queue`]
//! and threads take them round-robin over the queues, like the client's slots: a session with many
//! reads queued cannot keep another's read from a thread.
//!
//! A thread is started only when a job finds no idle thread and fewer than the bound run; a thread
//! idle for [`IDLE`] exits.
//!
//! [`Requester::queue`]: crate::Requester::queue

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::time::Duration;

/// The most threads bb's reads run on.
pub const READ_THREADS: usize = 16;

/// How long a thread with nothing to do stays.
pub const IDLE: Duration = Duration::from_secs(5);

type Job = Box<dyn FnOnce() + Send>;

/// A bounded pool of threads; cheap to clone, clones share it.
#[derive(Clone)]
pub struct Pool(Arc<Shared>);

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.lock();
        f.debug_struct("Pool").field("threads", &state.threads).field("queued", &state.queued).finish()
    }
}

struct Shared {
    state: Mutex<State>,
    work: Condvar,
    max: usize,
    idle: Duration,
}

#[derive(Default)]
struct State {
    queues: BTreeMap<u64, VecDeque<Job>>,
    turns: VecDeque<u64>,
    queued: usize,
    threads: usize,
    idle: usize,
    most_threads: usize,
}

impl State {
    /// The next job, round-robin over the queues.
    fn next(&mut self) -> Option<Job> {
        let queue = self.turns.pop_front()?;
        let jobs = self.queues.get_mut(&queue)?;
        let job = jobs.pop_front()?;
        if jobs.is_empty() {
            self.queues.remove(&queue);
        } else {
            self.turns.push_back(queue);
        }
        self.queued -= 1;
        Some(job)
    }
}

impl Pool {
    /// The pool every driver in the process runs its reads on.
    pub fn reads() -> &'static Pool {
        static POOL: OnceLock<Pool> = OnceLock::new();
        POOL.get_or_init(|| Pool::new(READ_THREADS, IDLE))
    }

    /// A pool of at most `max` (at least 1) threads, each exiting after `idle` with nothing to do.
    pub fn new(max: usize, idle: Duration) -> Pool {
        Pool(Arc::new(Shared { state: Mutex::new(State::default()), work: Condvar::new(), max: max.max(1), idle }))
    }

    /// Runs `job` on a thread of the pool, after the jobs queued before it in `queue` and in turn
    /// with the other queues.
    pub fn run(&self, queue: u64, job: impl FnOnce() + Send + 'static) {
        let mut state = self.lock();
        let jobs = state.queues.entry(queue).or_default();
        jobs.push_back(Box::new(job));
        if jobs.len() == 1 {
            state.turns.push_back(queue);
        }
        state.queued += 1;
        // Every queued job has an idle thread to wake, or starts one while the bound allows.
        let start = state.queued > state.idle && state.threads < self.0.max;
        if start {
            state.threads += 1;
            state.most_threads = state.most_threads.max(state.threads);
        }
        drop(state);
        self.0.work.notify_one();
        if start {
            let pool = self.clone();
            let spawned = std::thread::Builder::new().name("bb-read".into()).spawn(move || pool.work());
            if spawned.is_err() {
                // No thread now: the job waits for one of those running, or the next job's.
                self.lock().threads -= 1;
            }
        }
    }

    /// The threads running now.
    pub fn threads(&self) -> usize {
        self.lock().threads
    }

    /// The most threads that ran at once so far.
    pub fn most_threads(&self) -> usize {
        self.lock().most_threads
    }

    fn work(&self) {
        let mut state = self.lock();
        loop {
            if let Some(job) = state.next() {
                drop(state);
                // A job that panics must not take the thread's count with it.
                let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
                state = self.lock();
                continue;
            }
            state.idle += 1;
            let (next, waited) = self.0.work.wait_timeout(state, self.0.idle).unwrap_or_else(|p| p.into_inner());
            state = next;
            state.idle -= 1;
            if waited.timed_out() && state.queued == 0 {
                state.threads -= 1;
                return;
            }
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.0.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::sync::mpsc;

    #[test]
    fn a_burst_of_blocked_jobs_never_runs_on_more_threads_than_the_bound_and_every_job_runs() {
        let pool = Pool::new(4, Duration::from_secs(60));
        let (release, held) = mpsc::channel::<()>();
        let held = Arc::new(Mutex::new(held));
        let (done_tx, done) = mpsc::channel();
        for i in 0..100 {
            let (held, done_tx) = (Arc::clone(&held), done_tx.clone());
            pool.run(i % 7, move || {
                let _ = held.lock().unwrap().recv();
                done_tx.send(()).unwrap();
            });
        }
        for _ in 0..100 {
            release.send(()).unwrap();
        }
        for _ in 0..100 {
            done.recv().unwrap();
        }
        assert_eq!(pool.most_threads(), 4);
    }

    #[test]
    fn idle_threads_exit() {
        let pool = Pool::new(4, Duration::from_millis(1));
        let (tx, rx) = mpsc::channel();
        pool.run(0, move || tx.send(()).unwrap());
        rx.recv().unwrap();
        while pool.threads() > 0 {
            std::thread::yield_now();
        }
    }

    #[test]
    fn queued_jobs_are_taken_round_robin_over_queues() {
        let pool = Pool::new(1, Duration::from_secs(60));
        let (release, held) = mpsc::channel::<()>();
        let (order_tx, order) = mpsc::channel();
        // The one thread is busy while session 1 queues three jobs and session 2 one.
        pool.run(9, move || {
            let _ = held.recv();
        });
        for (queue, label) in [(1, "A"), (1, "A"), (1, "A"), (2, "B")] {
            let order_tx = order_tx.clone();
            pool.run(queue, move || order_tx.send(label).unwrap());
        }
        release.send(()).unwrap();
        let seen: Vec<&str> = (0..4).map(|_| order.recv().unwrap()).collect();
        assert_eq!(seen, ["A", "B", "A", "A"]);
    }
}
