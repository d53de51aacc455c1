//! The ledger of used confirmations: a 2026-07-28 state the person accepted is honoured once
//! ([`bb_core::Output::Spend`]). Kept in the process by default; the application gives a shared
//! one (the rate store, Valkey or Redis) when replicas must honour each other's states.

use std::collections::HashMap;
use std::sync::Mutex;

use bb_core::Spent;

/// Where used confirmations are remembered until their expiry.
pub trait Ledger: Send + Sync + 'static {
    /// Marks `id` used until `until_ms` (epoch milliseconds), at `now_ms`: `Fresh` when it was not
    /// used before. May block briefly (a store on the network); called off the driver's thread when
    /// [`Ledger::blocks`] says so.
    fn spend(&self, id: &str, until_ms: u64, now_ms: u64) -> Spent;
    /// Whether [`Ledger::spend`] may block on the network.
    fn blocks(&self) -> bool {
        false
    }
}

/// The process's own ledger: what one bb honoured, forgotten at each entry's expiry.
#[derive(Debug, Default)]
pub struct MemoryLedger {
    used: Mutex<HashMap<String, u64>>,
}

/// The most entries the process's ledger keeps (each lives 10 minutes): past it, nothing more is
/// honoured until some expire.
const MAX_ENTRIES: usize = 100_000;

impl Ledger for MemoryLedger {
    fn spend(&self, id: &str, until_ms: u64, now_ms: u64) -> Spent {
        let mut used = self.used.lock().unwrap_or_else(|p| p.into_inner());
        if used.len() >= MAX_ENTRIES / 2 {
            used.retain(|_, until| *until > now_ms);
        }
        if used.get(id).is_some_and(|until| *until > now_ms) {
            return Spent::Used;
        }
        if used.len() >= MAX_ENTRIES {
            return Spent::Unknown("too many confirmations are waiting to expire".into());
        }
        used.insert(id.to_owned(), until_ms);
        Spent::Fresh
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_confirmation_is_honoured_once_until_it_expires() {
        let l = MemoryLedger::default();
        assert_eq!(l.spend("a", 100, 0), Spent::Fresh);
        assert_eq!(l.spend("a", 100, 50), Spent::Used);
        assert_eq!(l.spend("b", 100, 50), Spent::Fresh);
    }
}
