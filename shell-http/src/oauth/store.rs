//! Where logins live: bb's codes, tokens, grants, clients and logins in progress, each a record
//! under a key that is never a secret (a secret's SHA-256, or a random id), with a time to live.
//!
//! The default [`MemoryStore`] keeps them in the process (a restart logs everyone out); the
//! application gives a shared one (`--rate-store`'s Valkey or Redis, encrypted at rest) so that
//! replicas behind one load balancer honour each other's logins. Time is an argument: the memory
//! store forgets a record at `now_ms` past its expiry, and tests drive it by hand.

use std::collections::HashMap;
use std::sync::Mutex;

/// What a record is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// A registered client (dynamic registration) or a fetched Client ID Metadata Document.
    Client,
    /// A login sent to Bitbucket and not yet back (keyed by bb's `state` towards Bitbucket).
    Pending,
    /// An authorization code bb gave a client, single-use.
    Code,
    /// An access token bb gave a client.
    Access,
    /// A refresh token bb gave a client, single-use (each use gives a new one).
    Refresh,
    /// A person's Bitbucket grant: their Bitbucket tokens and user.
    Grant,
}

impl Kind {
    /// The kind's name in a shared store's keys.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Client => "client",
            Kind::Pending => "pending",
            Kind::Code => "code",
            Kind::Access => "access",
            Kind::Refresh => "refresh",
            Kind::Grant => "grant",
        }
    }
}

/// Records by kind and key, each with a time to live. Calls block (a shared store is a network
/// away); errors say what failed and name no secret.
pub trait Store: Send + Sync + 'static {
    /// Keeps `value` under `key` for `ttl_ms` from `now_ms`, replacing any.
    fn put(&self, kind: Kind, key: &str, value: &[u8], ttl_ms: u64, now_ms: u64) -> Result<(), String>;
    /// The value under `key`, unless it expired.
    fn get(&self, kind: Kind, key: &str, now_ms: u64) -> Result<Option<Vec<u8>>, String>;
    /// The value under `key`, removed in the same step: of two takers only one gets it.
    fn take(&self, kind: Kind, key: &str, now_ms: u64) -> Result<Option<Vec<u8>>, String>;
    /// Removes `key`.
    fn delete(&self, kind: Kind, key: &str) -> Result<(), String>;
}

/// The most records the memory store holds; beyond it the expired go, then the one of the new
/// record's kind that expires soonest.
pub const MAX_RECORDS: usize = 100_000;

/// Records by kind and key: each value with the time it expires at.
type Records = HashMap<(Kind, String), (Vec<u8>, u64)>;

/// Records in the process.
#[derive(Debug, Default)]
pub struct MemoryStore {
    records: Mutex<Records>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> MemoryStore {
        MemoryStore::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Records> {
        self.records.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Store for MemoryStore {
    fn put(&self, kind: Kind, key: &str, value: &[u8], ttl_ms: u64, now_ms: u64) -> Result<(), String> {
        let mut records = self.lock();
        if records.len() >= MAX_RECORDS && !records.contains_key(&(kind, key.to_owned())) {
            records.retain(|_, (_, until)| now_ms < *until);
            // Still full: a record of the same kind goes (the one that expires soonest), so a flood of
            // registrations or of logins begun never pushes out anyone's grant or tokens.
            let same = records.iter().filter(|((k, _), _)| *k == kind).min_by_key(|(_, (_, until))| *until);
            let any = || records.iter().min_by_key(|(_, (_, until))| *until);
            if records.len() >= MAX_RECORDS
                && let Some(gone) = same.or_else(any).map(|(k, _)| k.clone())
            {
                records.remove(&gone);
            }
        }
        records.insert((kind, key.to_owned()), (value.to_vec(), now_ms.saturating_add(ttl_ms)));
        Ok(())
    }

    fn get(&self, kind: Kind, key: &str, now_ms: u64) -> Result<Option<Vec<u8>>, String> {
        let records = self.lock();
        Ok(records.get(&(kind, key.to_owned())).filter(|(_, until)| now_ms < *until).map(|(v, _)| v.clone()))
    }

    fn take(&self, kind: Kind, key: &str, now_ms: u64) -> Result<Option<Vec<u8>>, String> {
        let taken = self.lock().remove(&(kind, key.to_owned()));
        Ok(taken.filter(|(_, until)| now_ms < *until).map(|(v, _)| v))
    }

    fn delete(&self, kind: Kind, key: &str) -> Result<(), String> {
        self.lock().remove(&(kind, key.to_owned()));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_record_lives_until_its_time_is_up() {
        let s = MemoryStore::new();
        s.put(Kind::Access, "k", b"v", 1_000, 5_000).unwrap();
        assert_eq!(s.get(Kind::Access, "k", 5_999).unwrap().as_deref(), Some(&b"v"[..]));
        assert_eq!(s.get(Kind::Access, "k", 6_000).unwrap(), None);
        assert_eq!(s.get(Kind::Refresh, "k", 5_000).unwrap(), None, "kinds are apart");
    }

    #[test]
    fn a_full_store_makes_room_within_the_new_records_kind() {
        let s = MemoryStore::new();
        s.put(Kind::Grant, "g", b"grant", 1_000_000, 0).unwrap();
        for i in 0..MAX_RECORDS {
            s.put(Kind::Client, &i.to_string(), b"c", 10 + i as u64, 0).unwrap();
        }
        assert_eq!(s.lock().len(), MAX_RECORDS);
        assert!(s.get(Kind::Grant, "g", 1).unwrap().is_some(), "registrations never push out a grant");
        assert_eq!(s.get(Kind::Client, "0", 1).unwrap(), None, "the registration expiring soonest went");
    }

    #[test]
    fn a_taken_record_is_gone_for_the_next_taker() {
        let s = MemoryStore::new();
        s.put(Kind::Code, "c", b"v", 1_000, 0).unwrap();
        assert!(s.take(Kind::Code, "c", 10).unwrap().is_some());
        assert_eq!(s.take(Kind::Code, "c", 10).unwrap(), None);
        s.put(Kind::Code, "late", b"v", 1_000, 0).unwrap();
        assert_eq!(s.take(Kind::Code, "late", 1_000).unwrap(), None, "an expired record is not given");
    }
}
