//! Which sessions are alive: their ids (128 random bits from the operating system, as hex), the
//! cap on how many live at once, and idle expiry.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use crate::driver::SessionEntry;

/// The live sessions, by id.
#[derive(Default)]
pub(crate) struct Registry {
    sessions: Mutex<HashMap<String, Arc<SessionEntry>>>,
}

/// Why a session could not be added.
#[derive(Debug)]
pub(crate) enum Full {
    /// The cap is reached and no session is idle enough to end.
    AtCapacity,
}

impl Registry {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, Arc<SessionEntry>>> {
        self.sessions.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// A fresh session id: 16 bytes from the OS's secure random source, as 32 hex characters.
    pub(crate) fn new_id() -> std::io::Result<String> {
        crate::options::random_hex(16)
    }

    /// The session with this id, if it is alive.
    pub(crate) fn get(&self, id: &str) -> Option<Arc<SessionEntry>> {
        self.lock().get(id).cloned()
    }

    /// Adds a session unless `max` are alive; idle ones past `idle` are ended first to make room.
    pub(crate) fn add(&self, entry: Arc<SessionEntry>, max: usize, idle: Duration, now_ms: u64) -> Result<(), Full> {
        if self.lock().len() >= max {
            self.expire(idle, now_ms);
        }
        let mut sessions = self.lock();
        if sessions.len() >= max {
            return Err(Full::AtCapacity);
        }
        sessions.insert(entry.id.clone(), entry);
        Ok(())
    }

    /// Ends and forgets the session with this id; false if there was none.
    pub(crate) fn remove(&self, id: &str) -> bool {
        let removed = self.lock().remove(id);
        match removed {
            Some(entry) => {
                entry.end();
                true
            }
            None => false,
        }
    }

    /// Ends every session unused for longer than `idle` with no request waiting. Returns how many.
    pub(crate) fn expire(&self, idle: Duration, now_ms: u64) -> usize {
        let idle_ms = u64::try_from(idle.as_millis()).unwrap_or(u64::MAX);
        let expired: Vec<Arc<SessionEntry>> = {
            let mut sessions = self.lock();
            let ids: Vec<String> = sessions
                .values()
                .filter(|e| now_ms.saturating_sub(e.last_used_ms.load(Ordering::Relaxed)) > idle_ms && !e.busy())
                .map(|e| e.id.clone())
                .collect();
            ids.iter().filter_map(|id| sessions.remove(id)).collect()
        };
        for e in &expired {
            e.end();
        }
        expired.len()
    }

    /// How many sessions are alive.
    pub(crate) fn len(&self) -> usize {
        self.lock().len()
    }
}
