//! What the drivers of one application share, made once by the application and handed to each
//! driver, the HTTP server and the Bitbucket client: the metrics ([`Metrics`]), the memory budget
//! for large calls ([`Room`]), and the core's caches ([`Caches`]: people's avatars, the commits pull
//! requests were seen at, the answers made once), which each driver gives its server. Nothing of it is
//! a static: the HTTP shell's eight shards share one because they were given the same, and a test that
//! makes its own sees only what it did.

use std::sync::Arc;

use bb_core::{Caches, limits};

use crate::metrics::Metrics;
use crate::room::Room;

/// The metrics, the memory budget and the core's caches of one application; cloning it shares them
/// (every part is an `Arc`).
#[derive(Clone)]
pub struct Process {
    metrics: Arc<Metrics>,
    room: Arc<Room>,
    caches: Caches,
}

impl Process {
    /// Fresh metrics, empty caches and a memory budget of `memory_budget` bytes (`--memory-budget`).
    pub fn new(memory_budget: u64) -> Process {
        Process { metrics: Arc::new(Metrics::new()), room: Arc::new(Room::new(memory_budget)), caches: Caches::new() }
    }

    /// What every driver, the client and the transport add to; `--metrics` serves it.
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
