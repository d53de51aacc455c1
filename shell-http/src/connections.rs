//! Which connections the server holds, so that clients without the token cannot take the places of
//! those with it, one peer cannot take them all, and connections that hold a place without a
//! request in flight cannot keep out a person who would send one.
//!
//! ```text
//!   accept ──▶ waiting ──(a request passes the gate)──▶ admitted ──(an MCP request of a verified session
//!     │           │                                       │          or person answered with success)──▶ proven
//!     │           │                                       │                                                │
//!     │           └─(the oldest, when a newcomer finds    └─(idle, the first admitted such, when a         │
//!     │              every waiting place taken)              newcomer that passes the gate finds the       │
//!     │              ──▶ closed                              cap taken)──▶ closed                          │
//!     │                                                                                                    │
//!     └─(its peer holds its share)──▶ 503, closed      closed ◀──(idle the longest, when no admitted one ──┘
//!                                                                 that never proved itself is idle and a
//!                                                                 newcomer that passes the gate finds the
//!                                                                 cap taken)
//! ```
//!
//! A connection waits until one of its requests passes the gate (Host, Origin, and the bearer token
//! when there is one); only then does it count against `max_connections`. As many connections again
//! may wait; when they are all taken, a newcomer closes the one waiting longest, so idle or token-less
//! connections cannot lock anyone out (an honest client waits only for the time its first head takes).
//!
//! An admitted connection is *proven* once it carries an MCP request of a verified session or person
//! that is answered with success: an `initialize` that started a session, a request of a live
//! session (with its person's token, in per-person mode), a 2026-07-28 request whose person's token
//! Bitbucket accepted. `/healthz`, `/readyz`, preflights, refusals and 4xx answers never prove one
//! (the shell decides, `exchange::Proven`), so probes that anyone may send hold no better place than
//! a connection that only got refusals.
//!
//! When a request that passes the gate finds the cap taken, a connection with no request in flight
//! makes room: the admitted one that has not proven itself and was admitted first; if there is none,
//! the proven one idle the longest (least recently active). Only when every admitted connection has
//! a request in flight (an SSE answer counts until its last event) is the newcomer told "busy". So a
//! client that holds places without using them never keeps out one that passes the gate; a proven
//! connection closed this way loses nothing but the connection (its sessions live on, and its client
//! connects again). Every connection, waiting or admitted, counts against its peer's share.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use smol::channel::{Receiver, Sender};

use crate::peer::Peer;

/// The connections of one server.
#[derive(Debug)]
pub(crate) struct Connections {
    max_admitted: usize,
    max_waiting: usize,
    per_peer: usize,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// The admitted connections, by the order they arrived in.
    admitted: BTreeMap<u64, Admitted>,
    // The connections not yet admitted, oldest first, each with the sender that closes it.
    waiting: BTreeMap<u64, Sender<()>>,
    peers: HashMap<Peer, usize>,
    next: u64,
    /// Counts the beginnings and ends of requests: the order in which connections were last active.
    tick: u64,
}

/// An admitted connection.
#[derive(Debug)]
struct Admitted {
    /// The sender that closes it.
    close: Sender<()>,
    /// Requests it has in flight.
    busy: usize,
    /// Whether it has carried work for a verified session or person.
    proven: bool,
    /// When a request of it last began or ended, by the pool's [`State::tick`].
    active: u64,
}

/// A peer already holds its share of connections.
#[derive(Debug)]
pub(crate) struct PeerFull;

/// A connection the server holds; dropping it gives its place back.
#[derive(Debug)]
pub(crate) struct Held {
    pool: Arc<Connections>,
    id: u64,
    peer: Peer,
    admitted: AtomicBool,
}

/// What an arriving connection gets: its place, and a receiver that yields when it is closed to
/// make room.
pub(crate) type Arrival = (Held, Receiver<()>);

impl Connections {
    /// `max_admitted` admitted connections at once, as many waiting, `per_peer` per peer.
    pub(crate) fn new(max_admitted: usize, per_peer: usize) -> Arc<Connections> {
        Arc::new(Connections { max_admitted, max_waiting: max_admitted.max(1), per_peer, state: Mutex::default() })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A connection from `peer` arrives: it waits (closing the longest-waiting one if every waiting
    /// place is taken), unless its peer holds its share already.
    pub(crate) fn arrive(self: &Arc<Self>, peer: Peer) -> Result<Arrival, PeerFull> {
        let mut s = self.lock();
        let held = s.peers.get(&peer).copied().unwrap_or(0);
        if held >= self.per_peer {
            return Err(PeerFull);
        }
        *s.peers.entry(peer).or_default() += 1;
        if s.waiting.len() >= self.max_waiting
            && let Some((_, close)) = s.waiting.pop_first()
        {
            let _ = close.try_send(());
        }
        let id = s.next;
        s.next += 1;
        let (tx, rx) = smol::channel::bounded(1);
        s.waiting.insert(id, tx);
        drop(s);
        Ok((Held { pool: Arc::clone(self), id, peer, admitted: AtomicBool::new(false) }, rx))
    }
}

impl State {
    /// Closes an idle admitted connection to make room: the first admitted one that has not proven
    /// itself, else the proven one idle the longest; whether there was one.
    fn make_room(&mut self) -> bool {
        let idle = self.admitted.iter().filter(|(_, a)| a.busy == 0);
        let unproven = idle.clone().find(|(_, a)| !a.proven);
        let chosen = unproven.or_else(|| idle.min_by_key(|(_, a)| a.active)).map(|(id, _)| *id);
        let Some(a) = chosen.and_then(|id| self.admitted.remove(&id)) else { return false };
        let _ = a.close.try_send(());
        true
    }

    fn touch(&mut self) -> u64 {
        self.tick += 1;
        self.tick
    }
}

impl Held {
    /// Whether the connection is admitted already.
    pub(crate) fn is_admitted(&self) -> bool {
        self.admitted.load(Ordering::Relaxed)
    }

    /// Admits the connection, if there is room or an idle admitted connection makes room (and it was
    /// not closed to make room meanwhile). True when it is admitted, now or before.
    pub(crate) fn admit(&self) -> bool {
        if self.is_admitted() {
            return true;
        }
        let mut s = self.pool.lock();
        if !s.waiting.contains_key(&self.id) || (s.admitted.len() >= self.pool.max_admitted && !s.make_room()) {
            return false;
        }
        let Some(close) = s.waiting.remove(&self.id) else { return false };
        let active = s.touch();
        s.admitted.insert(self.id, Admitted { close, busy: 0, proven: false, active });
        self.admitted.store(true, Ordering::Relaxed);
        true
    }

    /// A request on the connection begins: until the [`InFlight`] is dropped (its answer sent, or
    /// given up), the connection is not closed to make room.
    pub(crate) fn begin(self: &Arc<Self>) -> InFlight {
        self.started();
        InFlight { held: Arc::clone(self), proves: false }
    }

    fn started(&self) {
        let mut s = self.pool.lock();
        let now = s.touch();
        if let Some(a) = s.admitted.get_mut(&self.id) {
            a.busy += 1;
            a.active = now;
        }
    }

    fn ended(&self, proves: bool) {
        let mut s = self.pool.lock();
        let now = s.touch();
        if let Some(a) = s.admitted.get_mut(&self.id) {
            a.busy = a.busy.saturating_sub(1);
            a.active = now;
            a.proven |= proves;
        }
    }
}

/// A request in flight on an admitted connection.
#[derive(Debug)]
pub(crate) struct InFlight {
    held: Arc<Held>,
    proves: bool,
}

impl InFlight {
    /// The request is work for a verified session or person: when it ends, its connection has
    /// proven itself.
    pub(crate) fn proves(&mut self) {
        self.proves = true;
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.held.ended(self.proves);
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        let mut s = self.pool.lock();
        s.admitted.remove(&self.id);
        s.waiting.remove(&self.id);
        if let Some(n) = s.peers.get_mut(&self.peer) {
            *n -= 1;
            if *n == 0 {
                s.peers.remove(&self.peer);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn peer(s: &str) -> Peer {
        Peer::of(format!("{s}:1").parse().unwrap())
    }

    /// A connection from `ip` arrives; its place (shared, as the server holds it) and its close signal.
    fn arrive(pool: &Arc<Connections>, ip: &str) -> (Arc<Held>, Receiver<()>) {
        let (held, closed) = pool.arrive(peer(ip)).unwrap();
        (Arc::new(held), closed)
    }

    /// One request on `held`, answered: work for a verified session or person when `proves`.
    fn request(held: &Arc<Held>, proves: bool) {
        let mut r = held.begin();
        if proves {
            r.proves();
        }
    }

    #[test]
    fn only_admitted_connections_count_against_the_cap() {
        let pool = Connections::new(2, 10);
        let (a, _) = arrive(&pool, "10.0.0.1");
        let (b, _) = arrive(&pool, "10.0.0.2");
        assert!(a.admit() && b.admit());
        let (c, _) = arrive(&pool, "10.0.0.3");
        let (_d, d_closed) = arrive(&pool, "10.0.0.4");
        assert!(d_closed.try_recv().is_err(), "admitted connections leave the waiting places free");
        let busy = (a.begin(), b.begin());
        assert!(!c.admit(), "the cap is taken by connections with requests in flight");
        drop(busy);
        drop(a);
        assert!(c.admit(), "a closed connection gives its place back");
        assert!(c.admit() && c.is_admitted());
    }

    #[test]
    fn a_newcomer_closes_the_connection_waiting_longest_when_all_waiting_places_are_taken() {
        let pool = Connections::new(2, 10);
        let (old, old_closed) = arrive(&pool, "10.0.0.1");
        let (_mid, mid_closed) = arrive(&pool, "10.0.0.1");
        let (new, _) = arrive(&pool, "10.0.0.2");
        assert_eq!(old_closed.try_recv(), Ok(()));
        assert!(mid_closed.try_recv().is_err());
        assert!(!old.admit(), "a connection closed to make room is not admitted");
        assert!(new.admit());
        assert!(mid_closed.try_recv().is_err());
    }

    #[test]
    fn one_peer_holds_at_most_its_share_and_gets_it_back_as_connections_close() {
        let pool = Connections::new(100, 2);
        let (a, _) = pool.arrive(peer("10.0.0.1")).unwrap();
        let (b, _) = pool.arrive(peer("10.0.0.1")).unwrap();
        assert!(a.admit());
        assert!(pool.arrive(peer("10.0.0.1")).is_err());
        assert!(pool.arrive(peer("10.0.0.2")).is_ok());
        drop(b);
        assert!(pool.arrive(peer("10.0.0.1")).is_ok());
    }

    #[test]
    fn an_idle_connection_that_never_proved_itself_makes_room_before_any_proven_one() {
        let pool = Connections::new(3, 10);
        let (person, person_closed) = arrive(&pool, "10.0.0.1");
        let (probe, probe_closed) = arrive(&pool, "10.0.0.2");
        let (busy, busy_closed) = arrive(&pool, "10.0.0.2");
        assert!(person.admit() && probe.admit() && busy.admit());
        request(&person, true);
        // A health probe, a refusal: answered, but no work for a verified session or person.
        request(&probe, false);
        let _in_flight = busy.begin();
        let (newcomer, _) = arrive(&pool, "10.0.0.3");
        assert!(newcomer.admit());
        assert_eq!(probe_closed.try_recv(), Ok(()), "the connection that only answered a probe made room");
        assert!(person_closed.try_recv().is_err(), "though the person's was idle longer");
        assert!(busy_closed.try_recv().is_err());
    }

    #[test]
    fn the_proven_connection_idle_longest_makes_room_when_no_unproven_one_is_idle() {
        let pool = Connections::new(2, 10);
        let (older, older_closed) = arrive(&pool, "10.0.0.1");
        let (newer, newer_closed) = arrive(&pool, "10.0.0.2");
        assert!(older.admit() && newer.admit());
        request(&older, true);
        request(&newer, true);
        // The connection admitted first was active last: the other one is idle longest.
        request(&older, true);
        let (newcomer, _) = arrive(&pool, "10.0.0.3");
        assert!(newcomer.admit(), "an idle proven connection yields its place");
        assert_eq!(newer_closed.try_recv(), Ok(()));
        assert!(older_closed.try_recv().is_err());
    }

    #[test]
    fn a_connection_with_a_request_in_flight_is_never_closed_to_make_room() {
        let pool = Connections::new(2, 10);
        let (a, a_closed) = arrive(&pool, "10.0.0.1");
        let (b, b_closed) = arrive(&pool, "10.0.0.2");
        assert!(a.admit() && b.admit());
        let a_streams = a.begin();
        let mut b_works = b.begin();
        b_works.proves();
        let (newcomer, _) = arrive(&pool, "10.0.0.3");
        assert!(!newcomer.admit(), "busy: every admitted connection has a request in flight");
        assert!(a_closed.try_recv().is_err() && b_closed.try_recv().is_err());
        drop(b_works);
        assert!(newcomer.admit(), "the request ended: its connection is idle and makes room");
        assert_eq!(b_closed.try_recv(), Ok(()));
        drop(a_streams);
    }
}
