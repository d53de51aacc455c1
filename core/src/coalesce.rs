//! Which Bitbucket reads are shared: an identical read already in flight for the same credentials is
//! not made again; whoever asks for it follows the one in flight and gets the same outcome.
//!
//! Several views of one pull request, or several people on one HTTP server behind one operator token,
//! refresh the same reads at the same moments. Each read in flight is a *flight*: the first waiter
//! leads it (the shell makes the one real request), later ones follow. When the request completes,
//! [`Coalesce::finish`] hands back every waiter still there, leader first, so each gets the outcome
//! once. A waiter that stops waiting [`Coalesce::leave`]s; the real request is abandoned only when the
//! last one leaves, never while someone still waits (so cancelling the leader does not starve the
//! followers).
//!
//! ```text
//!   join(key) ── no flight for key ──▶ Lead(flight): make the request ─┐
//!             └─ flight in the air ──▶ Follow(flight): make nothing     │
//!   leave(id) ── others still wait ──▶ nothing more                     │
//!             └─ last one ───────────▶ the flight's handle: abandon it  │
//!   finish(flight) ◀── the request completed ──────────────────────────┘
//!             └──▶ every waiter still there, leader first (none if abandoned)
//! ```
//!
//! Only GETs are shared ([`ReadKey::of`] is `None` for a write): a write has an effect each time.
//! The credentials are an opaque key the shell derives (never the secret itself): reads made with
//! different tokens are never shared, since Bitbucket may answer them differently.
//!
//! The table is sans-IO and lock-free; a shell that shares it between threads puts it behind one
//! mutex held only for these map operations, never while a request runs.

use std::collections::BTreeMap;

use crate::fetch::{FetchRequest, Keep, Method};

/// What makes two reads the same read: whose credentials, the path and the query.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ReadKey {
    who: u64,
    path: String,
    query: Vec<(String, String)>,
    /// A read keeping another share (of a diff, of a window) is another read: its answer differs.
    keep: Option<Keep>,
    /// A refresh's read may be deferred where the model's is sent: they are not shared, so the
    /// model's call never gets a refresh's "not sent".
    refresh: bool,
}

impl ReadKey {
    /// The key of `request` made with the credentials `who` stands for; `None` for a write, which
    /// is never shared.
    pub fn of(who: u64, request: &FetchRequest) -> Option<ReadKey> {
        (request.method == Method::Get && request.body.is_none()).then(|| ReadKey {
            who,
            path: request.path.clone(),
            query: request.query.clone(),
            keep: request.keep,
            refresh: request.refresh.is_some(),
        })
    }
}

/// One read in flight, as the table names it: a key may have several flights over time, never two
/// at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Flight(u64);

/// What [`Coalesce::join`] decided for a waiter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Joined {
    /// No identical read was in flight: the caller makes the request and calls
    /// [`Coalesce::finish`] with this flight when it completes.
    Lead(Flight),
    /// The read is in flight already: the caller makes nothing and waits for its outcome.
    Follow(Flight),
}

/// A waiter that left ([`Coalesce::leave`]).
#[derive(Debug, PartialEq, Eq)]
pub struct Left<W, R> {
    /// The payload it joined with.
    pub waiter: W,
    /// The flight's handle when nobody waits for it any more: the caller abandons the request.
    pub abandoned: Option<R>,
}

struct InFlight<I, W, R> {
    key: ReadKey,
    /// The handle the leader joined with (the shell's cancel of the real request).
    handle: R,
    /// Leader first, then followers in the order they joined.
    waiters: Vec<(I, W)>,
}

/// The reads in flight and who waits for each. `I` names a waiter (unique among those waiting),
/// `W` is what the caller needs to hand it the outcome, `R` the handle of the real request.
pub struct Coalesce<I, W, R> {
    by_key: BTreeMap<ReadKey, Flight>,
    flights: BTreeMap<Flight, InFlight<I, W, R>>,
    by_waiter: BTreeMap<I, Flight>,
    next: u64,
}

impl<I, W, R> Default for Coalesce<I, W, R> {
    fn default() -> Self {
        Coalesce { by_key: BTreeMap::new(), flights: BTreeMap::new(), by_waiter: BTreeMap::new(), next: 0 }
    }
}

impl<I, W, R> std::fmt::Debug for Coalesce<I, W, R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Coalesce")
            .field("flights", &self.flights.len())
            .field("waiters", &self.by_waiter.len())
            .finish()
    }
}

impl<I: Ord + Clone, W, R> Coalesce<I, W, R> {
    /// An empty table.
    pub fn new() -> Self {
        Coalesce::default()
    }

    /// Reads in flight now.
    pub fn flights(&self) -> usize {
        self.flights.len()
    }

    /// Waiters waiting now, leaders and followers.
    pub fn waiters(&self) -> usize {
        self.by_waiter.len()
    }

    /// Whether `id` waits for a read.
    pub fn is_waiting(&self, id: &I) -> bool {
        self.by_waiter.contains_key(id)
    }

    /// Adds waiter `id` to the read `key`: it leads a new flight (keeping `handle` as the request's)
    /// when none is in flight, else follows the one in flight (and `handle` is dropped). An `id`
    /// already waiting leaves its old read first.
    pub fn join(&mut self, key: ReadKey, id: I, waiter: W, handle: R) -> Joined {
        // A caller never reuses an id that waits; if one did, its first wait must not get two outcomes.
        if self.by_waiter.contains_key(&id) {
            let _ = self.leave(&id);
        }
        if let Some(&flight) = self.by_key.get(&key)
            && let Some(read) = self.flights.get_mut(&flight)
        {
            read.waiters.push((id.clone(), waiter));
            self.by_waiter.insert(id, flight);
            return Joined::Follow(flight);
        }
        let flight = Flight(self.next);
        self.next += 1;
        self.by_key.insert(key.clone(), flight);
        self.by_waiter.insert(id.clone(), flight);
        self.flights.insert(flight, InFlight { key, handle, waiters: vec![(id, waiter)] });
        Joined::Lead(flight)
    }

    /// The request of `flight` completed: every waiter still waiting for it, leader first (none
    /// when it was abandoned). The flight ends; the next identical read leads a new one.
    pub fn finish(&mut self, flight: Flight) -> Vec<(I, W)> {
        let Some(read) = self.flights.remove(&flight) else { return Vec::new() };
        self.by_key.remove(&read.key);
        for (id, _) in &read.waiters {
            self.by_waiter.remove(id);
        }
        read.waiters
    }

    /// Waiter `id` no longer waits. `None` when it was not waiting (never joined, left, or its
    /// flight finished). When it was the last, the flight ends and its handle comes back in
    /// [`Left::abandoned`]: the caller abandons the request.
    pub fn leave(&mut self, id: &I) -> Option<Left<W, R>> {
        let flight = self.by_waiter.remove(id)?;
        let read = self.flights.get_mut(&flight)?;
        let at = read.waiters.iter().position(|(w, _)| w == id)?;
        let (_, waiter) = read.waiters.remove(at);
        if !read.waiters.is_empty() {
            return Some(Left { waiter, abandoned: None });
        }
        let read = self.flights.remove(&flight)?;
        self.by_key.remove(&read.key);
        Some(Left { waiter, abandoned: Some(read.handle) })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]
    use super::*;

    fn key(who: u64, path: &str) -> ReadKey {
        ReadKey::of(who, &FetchRequest::get(path, vec![])).unwrap()
    }

    fn table() -> Coalesce<u32, &'static str, &'static str> {
        Coalesce::new()
    }

    #[test]
    fn the_first_waiter_leads_and_the_next_identical_read_follows() {
        let mut t = table();
        let Joined::Lead(f) = t.join(key(0, "/pr/1"), 1, "a", "cancel-1") else { panic!("leads") };
        assert_eq!(t.join(key(0, "/pr/1"), 2, "b", "cancel-2"), Joined::Follow(f));
        assert_eq!(t.flights(), 1);
        assert_eq!(t.finish(f), vec![(1, "a"), (2, "b")]);
        assert_eq!(t.waiters(), 0);
    }

    #[test]
    fn reads_differing_in_credentials_path_or_query_are_not_shared() {
        let mut t = table();
        let q = |v: &str| ReadKey::of(0, &FetchRequest::get("/pr/1", vec![("limit".into(), v.into())])).unwrap();
        assert!(matches!(t.join(key(0, "/pr/1"), 1, "a", "c"), Joined::Lead(_)));
        assert!(matches!(t.join(key(1, "/pr/1"), 2, "b", "c"), Joined::Lead(_)));
        assert!(matches!(t.join(key(0, "/pr/2"), 3, "c", "c"), Joined::Lead(_)));
        assert!(matches!(t.join(q("25"), 4, "d", "c"), Joined::Lead(_)));
        assert!(matches!(t.join(q("50"), 5, "e", "c"), Joined::Lead(_)));
        assert_eq!(t.flights(), 5);
    }

    #[test]
    fn a_write_has_no_read_key() {
        for method in [Method::Post, Method::Put, Method::Delete] {
            let request = FetchRequest {
                method,
                path: "/pr/1/comments".into(),
                query: vec![],
                body: None,
                keep: None,
                refresh: None,
            };
            assert_eq!(ReadKey::of(0, &request), None);
        }
    }

    #[test]
    fn the_leader_leaving_while_a_follower_waits_does_not_abandon_the_request() {
        let mut t = table();
        let Joined::Lead(f) = t.join(key(0, "/pr/1"), 1, "a", "cancel") else { panic!("leads") };
        t.join(key(0, "/pr/1"), 2, "b", "unused");
        assert_eq!(t.leave(&1), Some(Left { waiter: "a", abandoned: None }));
        assert_eq!(t.finish(f), vec![(2, "b")]);
    }

    #[test]
    fn the_last_waiter_leaving_abandons_the_request_with_the_leaders_handle() {
        let mut t = table();
        let Joined::Lead(f) = t.join(key(0, "/pr/1"), 1, "a", "cancel") else { panic!("leads") };
        t.join(key(0, "/pr/1"), 2, "b", "unused");
        assert_eq!(t.leave(&2).unwrap().abandoned, None);
        assert_eq!(t.leave(&1), Some(Left { waiter: "a", abandoned: Some("cancel") }));
        assert_eq!(t.leave(&1), None);
        // The abandoned request completing hands nobody an outcome.
        assert_eq!(t.finish(f), vec![]);
    }

    #[test]
    fn after_an_abandoned_flight_the_same_read_leads_a_new_one_that_the_old_cannot_finish() {
        let mut t = table();
        let Joined::Lead(old) = t.join(key(0, "/pr/1"), 1, "a", "c1") else { panic!("leads") };
        t.leave(&1);
        let Joined::Lead(new) = t.join(key(0, "/pr/1"), 2, "b", "c2") else { panic!("leads anew") };
        assert_ne!(old, new);
        assert_eq!(t.finish(old), vec![]);
        assert_eq!(t.finish(new), vec![(2, "b")]);
    }

    #[test]
    fn a_finished_waiter_cannot_leave() {
        let mut t = table();
        let Joined::Lead(f) = t.join(key(0, "/pr/1"), 1, "a", "c") else { panic!("leads") };
        t.finish(f);
        assert_eq!(t.leave(&1), None);
        assert!(!t.is_waiting(&1));
    }
}
