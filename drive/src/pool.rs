//! The threads Bitbucket reads block on: a bounded pool whose idle threads exit.
//!
//! smol's blocking pool grows to 500 threads and keeps them a while; a burst of slow or cancelled
//! reads left bb at 504 threads and 55 MB. Reads need far fewer: the Bitbucket client lets a
//! bounded number in flight at once (48 by default), so [`READ_THREADS`] threads let every slot be used
//! while a few more wait for a slot or sleep before a retry. Jobs queue by lane and by
//! [`Requester::queue`], and threads take them like the client's slots: a call's job before a
//! refresh's, refreshes on at most all but a quarter of the threads (so a refresh burst waiting for
//! connections never holds every thread and a model's read finds one, [`Lane`]), and within a lane
//! round-robin over the queues: a session with many reads queued cannot keep another's read from a
//! thread.
//!
//! A thread is started only when a job finds no idle thread and fewer than the bound run; a thread
//! idle for [`IDLE`] exits.
//!
//! A pool may also count a job that has run far longer than any should as stuck ([`Pool::stuck_after`]):
//! a thread cannot be stopped, so each stuck job raises the bound by one, up to a limit, for the other
//! jobs to go on. bb's highlighting runs there: syntect's parser can loop forever on a grammar's
//! rules (see `core/build.rs`), and one such file must not end highlighting for the process.
//!
//! [`Requester::queue`]: crate::Requester::queue

use std::collections::BTreeMap;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use bb_core::limits;
use std::time::{Duration, Instant};

use crate::lanes::Lanes;
use crate::reach::Lane;

/// The most threads bb's reads run on ([`limits::READ_THREADS`]).
pub const READ_THREADS: usize = limits::READ_THREADS;

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
    /// After how long a running job counts as stuck, and how many stuck jobs may raise the bound.
    stuck: Option<(Duration, usize)>,
    /// The threads' name, as `top -H` and a debugger show them.
    name: &'static str,
}

#[derive(Default)]
struct State {
    /// The jobs waiting, by lane and queue; and how many of each lane run.
    lanes: Lanes<Job>,
    queued: usize,
    threads: usize,
    idle: usize,
    most_threads: usize,
    /// When each running job started, by the order it started in.
    running: BTreeMap<u64, Instant>,
    started: u64,
}

impl Pool {
    /// A pool for Bitbucket reads: [`READ_THREADS`] threads at most. The application makes one
    /// ([`crate::Process::reads`]) and every driver runs its reads there.
    pub fn for_reads() -> Pool {
        Pool::new(READ_THREADS, IDLE)
    }

    /// A pool for CPU work (highlighting): one thread fewer than the machine runs at once (at least
    /// one), so the threads that answer (the shells' and the timer's) always find a core free when a
    /// deadline comes; plus one for each job stuck past [`limits::JOB_STUCK_AFTER_MS`], up to
    /// [`limits::MOST_STUCK_JOBS`]. The application makes one ([`crate::Process::compute`]).
    pub fn for_compute() -> Pool {
        let n = std::thread::available_parallelism().map_or(2, std::num::NonZero::get);
        Pool::stuck_after(
            "bb-compute",
            n.saturating_sub(1).max(1),
            Duration::from_secs(30),
            Duration::from_millis(limits::JOB_STUCK_AFTER_MS),
            limits::MOST_STUCK_JOBS,
        )
    }

    /// A pool of at most `max` (at least 1) threads, each exiting after `idle` with nothing to do.
    pub fn new(max: usize, idle: Duration) -> Pool {
        Pool::with("bb-read", max, idle, None)
    }

    /// A pool of threads named `name`, at most `max` of them, plus one for each job that has run longer
    /// than `after`, up to `most` more: a job that never returns holds its thread forever, and the others
    /// go on.
    pub fn stuck_after(name: &'static str, max: usize, idle: Duration, after: Duration, most: usize) -> Pool {
        Pool::with(name, max, idle, Some((after, most)))
    }

    fn with(name: &'static str, max: usize, idle: Duration, stuck: Option<(Duration, usize)>) -> Pool {
        let state = Mutex::new(State::default());
        Pool(Arc::new(Shared { state, work: Condvar::new(), max: max.max(1), idle, stuck, name }))
    }

    /// How many running jobs count as stuck now (0 for a pool that does not count them).
    pub fn stuck(&self) -> usize {
        let state = self.lock();
        self.stuck_in(&state)
    }

    fn stuck_in(&self, state: &State) -> usize {
        let Some((after, _)) = self.0.stuck else { return 0 };
        state.running.values().filter(|since| since.elapsed() >= after).count()
    }

    /// The bound on threads now: `max`, raised by the stuck jobs up to the pool's limit.
    fn bound(&self, state: &State) -> usize {
        let most = self.0.stuck.map_or(0, |(_, most)| most);
        self.0.max + self.stuck_in(state).min(most)
    }

    /// Runs `job` on a thread of the pool, after the jobs queued before it in `queue` and in turn
    /// with the other queues.
    pub fn run(&self, queue: u64, job: impl FnOnce() + Send + 'static) {
        self.run_in(Lane::Call, queue, job);
    }

    /// Runs `job` on a thread of the pool in `lane`: after the jobs of the lanes before it, within
    /// the lane's share of the threads, after the jobs queued before it in `queue` and in turn with
    /// the lane's other queues.
    pub fn run_in(&self, lane: Lane, queue: u64, job: impl FnOnce() + Send + 'static) {
        let mut state = self.lock();
        state.lanes.push(lane, queue, Box::new(job));
        state.queued += 1;
        // Every queued job has an idle thread to wake, or starts one while the bound allows.
        let start = state.queued > state.idle && state.threads < self.bound(&state);
        if start {
            state.threads += 1;
            state.most_threads = state.most_threads.max(state.threads);
        }
        drop(state);
        self.0.work.notify_one();
        if start {
            let pool = self.clone();
            let spawned = std::thread::Builder::new().name(self.0.name.into()).spawn(move || pool.work());
            if spawned.is_err() {
                // No thread now: the job waits for one of those running, or the next job's.
                self.lock().threads -= 1;
            }
        }
    }

    /// How many jobs wait in `queue`, in any lane.
    pub fn queued_in(&self, queue: u64) -> usize {
        self.lock().lanes.waiting_in(queue)
    }

    /// How many threads the pool runs now: 0 once each has been idle for `IDLE` (5 s).
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
            let bound = self.bound(&state);
            if let Some((lane, _, job)) = state.lanes.next(bound, |_| true) {
                state.queued -= 1;
                let started = state.started;
                state.started += 1;
                if self.0.stuck.is_some() {
                    state.running.insert(started, Instant::now());
                }
                drop(state);
                // A job that panics must not take the thread's count with it.
                let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
                state = self.lock();
                state.running.remove(&started);
                state.lanes.done(lane);
                // A job of a lane that was at its share may go now, on a thread that waits.
                self.0.work.notify_one();
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

    #[test]
    fn a_stuck_job_lets_the_next_jobs_run_on_a_thread_of_their_own_up_to_the_limit() {
        let pool = Pool::stuck_after("test", 1, Duration::from_secs(60), Duration::from_millis(20), 1);
        let (release, held) = mpsc::channel::<()>();
        let held = Arc::new(Mutex::new(held));
        let (done_tx, done) = mpsc::channel();
        // A job that does not return (until the end of the test) on the pool's one thread.
        let stuck = Arc::clone(&held);
        pool.run(0, move || {
            let _ = stuck.lock().unwrap().recv();
        });
        while pool.stuck() == 0 {
            std::thread::sleep(Duration::from_millis(5));
        }
        // It counts as stuck: the next job gets a thread of its own and runs.
        let tx = done_tx.clone();
        pool.run(1, move || tx.send("second").unwrap());
        assert_eq!(done.recv_timeout(Duration::from_secs(60)), Ok("second"));
        // A second stuck job takes the extra thread; the limit is one, so no third thread starts.
        let stuck = Arc::clone(&held);
        pool.run(2, move || {
            let _ = stuck.lock().unwrap().recv();
        });
        while pool.stuck() < 2 {
            std::thread::sleep(Duration::from_millis(5));
        }
        let tx = done_tx.clone();
        pool.run(3, move || tx.send("fourth").unwrap());
        assert!(done.recv_timeout(Duration::from_millis(200)).is_err(), "a third thread started");
        assert_eq!(pool.most_threads(), 2);
        // Once a stuck job returns, the waiting job runs.
        release.send(()).unwrap();
        assert_eq!(done.recv_timeout(Duration::from_secs(60)), Ok("fourth"));
        release.send(()).unwrap();
    }

    #[test]
    fn refreshes_run_on_at_most_three_quarters_of_the_threads_and_a_call_finds_one() {
        let pool = Pool::new(4, Duration::from_secs(60));
        let (release, held) = mpsc::channel::<()>();
        let held = Arc::new(Mutex::new(held));
        let (started_tx, started) = mpsc::channel();
        // Ten refreshes that block (as reads waiting for a connection would).
        for i in 0..10 {
            let (held, started_tx) = (Arc::clone(&held), started_tx.clone());
            pool.run_in(Lane::Refresh, i, move || {
                started_tx.send("refresh").unwrap();
                let _ = held.lock().unwrap().recv();
            });
        }
        for _ in 0..3 {
            assert_eq!(started.recv().unwrap(), "refresh");
        }
        // The fourth thread is the calls': a call's job runs while every refresh still blocks.
        let tx = started_tx.clone();
        pool.run(42, move || tx.send("call").unwrap());
        assert_eq!(started.recv().unwrap(), "call");
        for _ in 0..10 {
            release.send(()).unwrap();
        }
        for _ in 0..7 {
            assert_eq!(started.recv().unwrap(), "refresh");
        }
        assert!(pool.most_threads() <= 4);
    }
}
