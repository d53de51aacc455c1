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
    /// A login begun and not yet back from Bitbucket (keyed by bb's `state` towards Bitbucket).
    Pending,
    /// An authorization code bb gave a client, single-use.
    Code,
    /// An access token bb gave a client.
    Access,
    /// A refresh token bb gave a client, single-use (each use gives a new one).
    Refresh,
    /// A person's Bitbucket grant: their Bitbucket tokens and user.
    Grant,
    /// A code or refresh token already used, naming its grant: used again, it ends the grant.
    Spent,
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
            Kind::Spent => "spent",
        }
    }

    /// Whether anyone may make records of this kind without having logged in (a registration, a
    /// login begun): such records have a quota of their own and never push out a person's.
    pub fn is_anonymous(self) -> bool {
        matches!(self, Kind::Client | Kind::Pending)
    }
}

/// Why the store did not do what it was asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreError {
    /// The quota of records of this kind is taken: nothing was kept; ask again later.
    Full(Kind),
    /// The store failed (it names no secret).
    Failed(String),
}

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreError::Full(kind) => write!(f, "the store holds its limit of {} records", kind.name()),
            StoreError::Failed(why) => f.write_str(why),
        }
    }
}

impl From<String> for StoreError {
    fn from(why: String) -> StoreError {
        StoreError::Failed(why)
    }
}

/// Records by kind and key, each with a time to live. Calls block (a shared store is a network
/// away); errors say what failed and name no secret.
pub trait Store: Send + Sync + 'static {
    /// Keeps `value` under `key` for `ttl_ms` from `now_ms`, replacing any.
    fn put(&self, kind: Kind, key: &str, value: &[u8], ttl_ms: u64, now_ms: u64) -> Result<(), StoreError>;
    /// The value under `key`, unless it expired.
    fn get(&self, kind: Kind, key: &str, now_ms: u64) -> Result<Option<Vec<u8>>, StoreError>;
    /// The value under `key`, removed in the same step: of two takers only one gets it.
    fn take(&self, kind: Kind, key: &str, now_ms: u64) -> Result<Option<Vec<u8>>, StoreError>;
    /// Removes `key`.
    fn delete(&self, kind: Kind, key: &str) -> Result<(), StoreError>;
}

/// The most records of people's kinds (codes, tokens, grants, spent markers) the memory store
/// holds; beyond it the expired go, then the one of the new record's kind that expires soonest.
pub const MAX_RECORDS: usize = 100_000;

/// The most records of each anonymous kind (registered clients, logins begun) the memory store
/// holds; beyond it (the expired gone) a new one is refused, and no other record is pushed out.
pub const MAX_ANONYMOUS_RECORDS: usize = 20_000;

/// The most bytes of each anonymous kind's records the memory store holds.
pub const MAX_ANONYMOUS_BYTES: usize = 16 * 1024 * 1024;

/// Records by kind and key: each value with the time it expires at.
type Records = HashMap<(Kind, String), (Vec<u8>, u64)>;

/// The records, and how many of each kind and their bytes.
#[derive(Debug, Default)]
struct Held {
    records: Records,
    /// Records and bytes by kind.
    tally: HashMap<Kind, (usize, usize)>,
    /// People's records (all kinds but the anonymous).
    people: usize,
    /// When a full quota last swept its expired records: at most once a second, so a flood that
    /// meets a full quota costs no walk over every record per request.
    swept_ms: Option<u64>,
}

impl Held {
    fn insert(&mut self, kind: Kind, key: String, value: Vec<u8>, until: u64) {
        let (size, key_len) = (value.len() + key.len(), key.len());
        if let Some(old) = self.records.insert((kind, key), (value, until)) {
            self.forget(kind, old.0.len() + key_len);
        }
        let t = self.tally.entry(kind).or_default();
        t.0 += 1;
        t.1 += size;
        if !kind.is_anonymous() {
            self.people += 1;
        }
    }

    fn remove(&mut self, kind: Kind, key: &str) -> Option<(Vec<u8>, u64)> {
        let gone = self.records.remove(&(kind, key.to_owned()))?;
        self.forget(kind, gone.0.len() + key.len());
        Some(gone)
    }

    fn forget(&mut self, kind: Kind, size: usize) {
        let t = self.tally.entry(kind).or_default();
        t.0 = t.0.saturating_sub(1);
        t.1 = t.1.saturating_sub(size);
        if !kind.is_anonymous() {
            self.people = self.people.saturating_sub(1);
        }
    }

    /// Removes the records `drop` picks.
    fn remove_where(&mut self, drop: impl Fn(Kind, u64) -> bool) {
        let gone: Vec<(Kind, String)> =
            self.records.iter().filter(|((k, _), (_, until))| drop(*k, *until)).map(|(k, _)| k.clone()).collect();
        for (kind, key) in gone {
            self.remove(kind, &key);
        }
    }

    fn count(&self, kind: Kind) -> (usize, usize) {
        self.tally.get(&kind).copied().unwrap_or_default()
    }
}

/// Records in the process.
#[derive(Debug, Default)]
pub struct MemoryStore {
    held: Mutex<Held>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> MemoryStore {
        MemoryStore::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Held> {
        self.held.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Store for MemoryStore {
    fn put(&self, kind: Kind, key: &str, value: &[u8], ttl_ms: u64, now_ms: u64) -> Result<(), StoreError> {
        let mut held = self.lock();
        let replaces = held.records.contains_key(&(kind, key.to_owned()));
        if kind.is_anonymous() && !replaces {
            let full = |h: &Held| {
                let (n, bytes) = h.count(kind);
                n >= MAX_ANONYMOUS_RECORDS || bytes + value.len() + key.len() > MAX_ANONYMOUS_BYTES
            };
            if full(&held) && held.swept_ms.is_none_or(|t| now_ms.saturating_sub(t) >= 1_000) {
                held.swept_ms = Some(now_ms);
                held.remove_where(|k, until| k == kind && until <= now_ms);
            }
            if full(&held) {
                return Err(StoreError::Full(kind));
            }
        } else if !kind.is_anonymous() && !replaces && held.people >= MAX_RECORDS {
            held.remove_where(|k, until| !k.is_anonymous() && until <= now_ms);
            // Still full: a record of the same kind goes (the one that expires soonest); never an
            // anonymous record's quota, so no flood of registrations or logins begun reaches here.
            if held.people >= MAX_RECORDS {
                let soonest = |same: bool| {
                    held.records
                        .iter()
                        .filter(|((k, _), _)| !k.is_anonymous() && (!same || *k == kind))
                        .min_by_key(|(_, (_, until))| *until)
                        .map(|(k, _)| k.clone())
                };
                if let Some((k, gone)) = soonest(true).or_else(|| soonest(false)) {
                    held.remove(k, &gone);
                }
            }
        }
        held.insert(kind, key.to_owned(), value.to_vec(), now_ms.saturating_add(ttl_ms));
        Ok(())
    }

    fn get(&self, kind: Kind, key: &str, now_ms: u64) -> Result<Option<Vec<u8>>, StoreError> {
        let held = self.lock();
        Ok(held.records.get(&(kind, key.to_owned())).filter(|(_, until)| now_ms < *until).map(|(v, _)| v.clone()))
    }

    fn take(&self, kind: Kind, key: &str, now_ms: u64) -> Result<Option<Vec<u8>>, StoreError> {
        let taken = self.lock().remove(kind, key);
        Ok(taken.filter(|(_, until)| now_ms < *until).map(|(v, _)| v))
    }

    fn delete(&self, kind: Kind, key: &str) -> Result<(), StoreError> {
        self.lock().remove(kind, key);
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
    fn anonymous_records_are_refused_at_their_quota_and_push_out_nobody() {
        let s = MemoryStore::new();
        s.put(Kind::Grant, "g", b"grant", 1_000_000, 0).unwrap();
        s.put(Kind::Refresh, "r", b"refresh", 1_000_000, 0).unwrap();
        for i in 0..MAX_ANONYMOUS_RECORDS {
            s.put(Kind::Client, &i.to_string(), b"c", 10 + i as u64, 0).unwrap();
        }
        assert_eq!(s.put(Kind::Client, "one more", b"c", 1_000, 0), Err(StoreError::Full(Kind::Client)));
        assert!(s.put(Kind::Pending, "a login", b"p", 1_000, 0).is_ok(), "each anonymous kind has its own quota");
        assert!(s.get(Kind::Grant, "g", 1).unwrap().is_some(), "registrations never push out a grant");
        assert!(s.get(Kind::Refresh, "r", 1).unwrap().is_some(), "nor a token");
        assert!(s.put(Kind::Client, "0", b"again", 1_000, 5).is_ok(), "a record replaced takes no new place");
        assert!(s.put(Kind::Client, "late", b"c", 1_000, 2_000).is_ok(), "expired records make room");
    }

    #[test]
    fn anonymous_records_are_bounded_by_their_bytes_too() {
        let s = MemoryStore::new();
        let big = vec![b'x'; 1024 * 1024];
        for i in 0..15 {
            s.put(Kind::Pending, &i.to_string(), &big, 1_000, 0).unwrap();
        }
        assert_eq!(s.put(Kind::Pending, "16", &big, 1_000, 0), Err(StoreError::Full(Kind::Pending)));
        s.delete(Kind::Pending, "0").unwrap();
        assert!(s.put(Kind::Pending, "16", &big, 1_000, 0).is_ok(), "a record gone gives its bytes back");
    }

    #[test]
    fn a_full_store_makes_room_within_the_new_records_kind() {
        let s = MemoryStore::new();
        s.put(Kind::Grant, "g", b"grant", 1_000_000, 0).unwrap();
        for i in 0..MAX_RECORDS - 1 {
            s.put(Kind::Access, &i.to_string(), b"a", 10 + i as u64, 0).unwrap();
        }
        s.put(Kind::Access, "new", b"a", 1_000_000, 0).unwrap();
        assert_eq!(s.lock().people, MAX_RECORDS);
        assert!(s.get(Kind::Grant, "g", 1).unwrap().is_some(), "a grant is not pushed out by tokens");
        assert_eq!(s.get(Kind::Access, "0", 1).unwrap(), None, "the token expiring soonest went");
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
