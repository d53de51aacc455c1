//! How many sessions each peer and each person holds, against the caps: a session takes a seat
//! before its `initialize` runs (so a burst of initializes cannot overshoot a cap) and gives it back
//! when it ends or its `initialize` fails.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use crate::peer::Peer;
use crate::persons::PersonKey;

/// Whom a session counts against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Owner {
    /// The peer that started it.
    pub(crate) peer: Peer,
    /// The person it acts for, in per-person mode.
    pub(crate) person: Option<PersonKey>,
}

/// Which cap a new session would exceed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Bound {
    /// The server's.
    Total,
    /// Its peer's share.
    Peer,
    /// Its person's share.
    Person,
}

/// The caps, and the seats taken.
#[derive(Debug)]
pub(crate) struct Census {
    total: usize,
    per_peer: usize,
    per_person: usize,
    counts: Mutex<Counts>,
}

#[derive(Debug, Default)]
struct Counts {
    total: usize,
    peers: HashMap<Peer, usize>,
    persons: HashMap<PersonKey, usize>,
}

/// A seat taken for a session; dropped, it is given back, unless [`Seat::keep`] handed it to a
/// live session (which gives it back through [`Census::release`] when it ends).
#[derive(Debug)]
pub(crate) struct Seat {
    census: Arc<Census>,
    owner: Owner,
    kept: bool,
}

impl Census {
    /// `total` sessions at once, `per_peer` for one peer, `per_person` for one person.
    pub(crate) fn new(total: usize, per_peer: usize, per_person: usize) -> Arc<Census> {
        Arc::new(Census { total, per_peer, per_person, counts: Mutex::default() })
    }

    fn lock(&self) -> MutexGuard<'_, Counts> {
        self.counts.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Takes a seat for `owner`, or says which cap is reached (the narrowest first: the person's,
    /// then the peer's, then the server's).
    pub(crate) fn take(self: &Arc<Self>, owner: Owner) -> Result<Seat, Bound> {
        let mut c = self.lock();
        if let Some(p) = owner.person
            && c.persons.get(&p).copied().unwrap_or(0) >= self.per_person
        {
            return Err(Bound::Person);
        }
        if c.peers.get(&owner.peer).copied().unwrap_or(0) >= self.per_peer {
            return Err(Bound::Peer);
        }
        if c.total >= self.total {
            return Err(Bound::Total);
        }
        c.total += 1;
        *c.peers.entry(owner.peer).or_default() += 1;
        if let Some(p) = owner.person {
            *c.persons.entry(p).or_default() += 1;
        }
        Ok(Seat { census: Arc::clone(self), owner, kept: false })
    }

    /// Gives back the seat of a session that ended.
    pub(crate) fn release(&self, owner: &Owner) {
        let mut c = self.lock();
        c.total = c.total.saturating_sub(1);
        decrement(&mut c.peers, &owner.peer);
        if let Some(p) = &owner.person {
            decrement(&mut c.persons, p);
        }
    }

    /// The cap `bound` names.
    pub(crate) fn cap(&self, bound: Bound) -> usize {
        match bound {
            Bound::Total => self.total,
            Bound::Peer => self.per_peer,
            Bound::Person => self.per_person,
        }
    }
}

fn decrement<K: std::hash::Hash + Eq>(map: &mut HashMap<K, usize>, key: &K) {
    if let Some(n) = map.get_mut(key) {
        *n -= 1;
        if *n == 0 {
            map.remove(key);
        }
    }
}

impl Seat {
    /// Hands the seat to a live session: from now on, [`Census::release`] gives it back.
    pub(crate) fn keep(mut self) -> Owner {
        self.kept = true;
        self.owner
    }
}

impl Drop for Seat {
    fn drop(&mut self) {
        if !self.kept {
            self.census.release(&self.owner);
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn owner(peer: &str, person: Option<u64>) -> Owner {
        Owner { peer: Peer::of(format!("{peer}:1").parse().unwrap()), person: person.map(PersonKey::from_raw) }
    }

    #[test]
    fn each_cap_holds_and_a_dropped_seat_is_given_back() {
        let census = Census::new(3, 2, 1);
        let a = census.take(owner("10.0.0.1", Some(1))).unwrap();
        assert_eq!(census.take(owner("10.0.0.2", Some(1))).unwrap_err(), Bound::Person);
        let _b = census.take(owner("10.0.0.1", Some(2))).unwrap();
        assert_eq!(census.take(owner("10.0.0.1", Some(3))).unwrap_err(), Bound::Peer);
        let kept = census.take(owner("10.0.0.2", None)).unwrap().keep();
        assert_eq!(census.take(owner("10.0.0.3", None)).unwrap_err(), Bound::Total);
        drop(a);
        assert!(census.take(owner("10.0.0.3", Some(1))).is_ok(), "a dropped seat is given back");
        census.release(&kept);
        assert!(census.take(owner("10.0.0.3", None)).is_ok(), "a released seat is given back");
    }
}
