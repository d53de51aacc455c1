//! What the drivers of one application share, made once by the application and handed to each
//! driver, the HTTP server and the Bitbucket client: the metrics ([`Metrics`]), the memory budget
//! for large calls ([`Room`]), the core's caches ([`Caches`]: people's avatars, the commits pull
//! requests were seen at, the answers made once), which each driver gives its server, and the threads
//! reads and CPU work run on ([`Pool`]) with the count of jobs waiting for them, and the thread that
//! runs deadlines and grants at their instant (`timer.rs`). Nothing of it is a static: the HTTP
//! shell's eight shards share one because they were given the same, and a test that makes its own
//! sees only what it did and only its own threads. It also numbers the drivers and their read queues
//! (`Process::number`), so numbers are unique where they are used: its room, pools and client.
//! (Drivers sharing reads are numbered there by their [`crate::SharedReads`].) The drive has no static.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use bb_core::{Caches, limits};

use crate::metrics::Metrics;
use crate::pool::Pool;
use crate::room::Room;
use crate::timer::Timer;

/// The metrics, the memory budget, the core's caches and the threads of one application; cloning it
/// shares them (every part is an `Arc`).
#[derive(Clone)]
pub struct Process {
    metrics: Arc<Metrics>,
    room: Arc<Room>,
    caches: Caches,
    reads: Pool,
    compute: Pool,
    jobs: Arc<Jobs>,
    timer: Timer,
    numbers: Arc<AtomicU64>,
    ledger: Arc<dyn crate::ledger::Ledger>,
    audit: Option<crate::audit::AuditTrail>,
}

/// The CPU jobs of every driver of a process, counted together.
#[derive(Default, Debug)]
pub(crate) struct Jobs {
    /// Jobs queued on the compute pool and not yet taken by a thread.
    pub(crate) queued: AtomicU64,
    /// How many jobs were stuck when last looked at, so that each new one is logged once.
    pub(crate) stuck_seen: AtomicU64,
}

impl Process {
    /// Fresh metrics, empty caches and a memory budget of `memory_budget` bytes (`--memory-budget`).
    pub fn new(memory_budget: u64) -> Process {
        let timer = Timer::default();
        Process {
            metrics: Arc::new(Metrics::new()),
            room: Arc::new(Room::with_timer(memory_budget, timer.clone())),
            caches: Caches::new(),
            reads: Pool::for_reads(),
            compute: Pool::for_compute(),
            jobs: Arc::default(),
            ledger: Arc::new(crate::ledger::MemoryLedger::default()),
            audit: None,
            timer,
            numbers: Arc::default(),
        }
    }

    /// The same process, remembering used confirmations in `ledger` (a store replicas share) instead
    /// of in the process. Call it before handing the process to anything.
    pub fn with_ledger(mut self, ledger: Arc<dyn crate::ledger::Ledger>) -> Process {
        self.ledger = ledger;
        self
    }

    /// The same process, writing the audit trail to `trail` from every driver made with it after.
    pub fn with_audit(mut self, trail: crate::audit::AuditTrail) -> Process {
        self.audit = Some(trail);
        self
    }

    /// The audit trail its drivers write, when one is kept.
    pub fn audit(&self) -> Option<&crate::audit::AuditTrail> {
        self.audit.as_ref()
    }

    /// Where used confirmations are remembered ([`crate::ledger`]).
    pub fn ledger(&self) -> &Arc<dyn crate::ledger::Ledger> {
        &self.ledger
    }

    /// The process's metrics.
    pub fn metrics(&self) -> &Arc<Metrics> {
        &self.metrics
    }

    /// The memory budget large calls ask room of, and unwritten answers hold.
    pub fn room(&self) -> &Arc<Room> {
        &self.room
    }

    /// The caches every driver's server is made with, so that servers share them.
    pub fn caches(&self) -> &Caches {
        &self.caches
    }

    /// The threads every driver's Bitbucket reads run on ([`Pool::for_reads`]); threads start when
    /// a read finds none idle, and exit when idle.
    pub fn reads(&self) -> &Pool {
        &self.reads
    }

    /// The threads every driver's CPU work (highlighting) runs on ([`Pool::for_compute`]).
    pub fn compute(&self) -> &Pool {
        &self.compute
    }

    pub(crate) fn jobs(&self) -> &Arc<Jobs> {
        &self.jobs
    }

    /// A number unique in this process: a driver's, or an anonymous session's read queue.
    pub(crate) fn number(&self) -> u64 {
        self.numbers.fetch_add(1, Ordering::Relaxed)
    }

    /// The thread calls' deadlines and the room's grants run on, shared with [`Process::room`].
    pub(crate) fn timer(&self) -> &Timer {
        &self.timer
    }
}

impl Default for Process {
    /// Fresh metrics and the default budget, [`limits::MEMORY_BUDGET`].
    fn default() -> Process {
        Process::new(limits::MEMORY_BUDGET)
    }
}

impl std::fmt::Debug for Process {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (in_use, waiting) = self.room.usage();
        f.debug_struct("Process").field("room_in_use", &in_use).field("room_waiting", &waiting).finish_non_exhaustive()
    }
}
