//! Which connections the server holds, so that clients without the token cannot take the places of
//! those with it, one peer cannot take them all, and connections that never do any work cannot keep
//! out a person who would.
//!
//! ```text
//!   accept ──▶ waiting ──(first request that passes the gate)──▶ admitted ──(a request answered 2xx/3xx)──▶ proven
//!                 └──(the oldest waiting one, when a newcomer     └──(idle, the oldest such, when a request that
//!                     finds them all taken)──▶ closed                  passes the gate finds the cap taken)──▶ closed
//! ```
//!
//! A connection waits until one of its requests passes the gate (Host, Origin, and the bearer token
//! when there is one); only then does it count against `max_connections`. As many connections again
//! may wait; when they are all taken, a newcomer closes the one waiting longest, so idle or token-less
//! connections cannot lock anyone out (an honest client waits only for the time its first head takes).
//! An admitted connection is *proven* once one of its requests is answered with success: work for a
//! caller the server accepts. Until then it is only admitted: when a request that passes the gate finds
//! the cap taken, the admitted connection that has not proven itself, has no request in flight and was
//! admitted first is closed to make room (a per-person token Bitbucket refused, a session that does not
//! exist, a malformed body: none of them proves a connection). So a person always gets in while the
//! connections that hold the cap only ever get refusals. Every connection, waiting or admitted, counts
//! against its peer's share.

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
}

/// An admitted connection: until it proves itself, the sender that closes it.
#[derive(Debug)]
struct Admitted {
    close: Option<Sender<()>>,
    /// Requests it has in flight.
    busy: usize,
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
/// make room (it fails, instead, once the connection has proven itself).
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
    /// Closes the admitted connection that has not proven itself, is idle and came first; whether
    /// there was one.
    fn make_room(&mut self) -> bool {
        let idle = self.admitted.iter().find(|(_, a)| a.close.is_some() && a.busy == 0).map(|(id, _)| *id);
        let Some(id) = idle else { return false };
        if let Some(Admitted { close: Some(close), .. }) = self.admitted.remove(&id) {
            let _ = close.try_send(());
        }
        true
    }
}

impl Held {
    /// Whether the connection is admitted already.
    pub(crate) fn is_admitted(&self) -> bool {
        self.admitted.load(Ordering::Relaxed)
    }

    /// Admits the connection, if there is room or an admitted connection that never proved itself
    /// makes room (and it was not closed to make room meanwhile). True when it is admitted, now or before.
    pub(crate) fn admit(&self) -> bool {
        if self.is_admitted() {
            return true;
        }
        let mut s = self.pool.lock();
        if !s.waiting.contains_key(&self.id) || (s.admitted.len() >= self.pool.max_admitted && !s.make_room()) {
            return false;
        }
        let close = s.waiting.remove(&self.id);
        s.admitted.insert(self.id, Admitted { close, busy: 0 });
        self.admitted.store(true, Ordering::Relaxed);
        true
    }

    /// A request on the connection begins.
    pub(crate) fn begin(&self) {
        if let Some(a) = self.pool.lock().admitted.get_mut(&self.id) {
            a.busy += 1;
        }
    }

    /// A request on the connection was answered: with success, the connection has proven itself
    /// and is never closed to make room.
    pub(crate) fn end(&self, success: bool) {
        if let Some(a) = self.pool.lock().admitted.get_mut(&self.id) {
            a.busy = a.busy.saturating_sub(1);
            if success {
                a.close = None;
            }
        }
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

    #[test]
    fn only_admitted_connections_count_against_the_cap() {
        let pool = Connections::new(2, 10);
        let (a, _) = pool.arrive(peer("10.0.0.1")).unwrap();
        let (b, _) = pool.arrive(peer("10.0.0.2")).unwrap();
        assert!(a.admit() && b.admit());
        let (c, _) = pool.arrive(peer("10.0.0.3")).unwrap();
        let (_d, d_closed) = pool.arrive(peer("10.0.0.4")).unwrap();
        assert!(d_closed.try_recv().is_err(), "admitted connections leave the waiting places free");
        a.end(true);
        b.end(true);
        assert!(!c.admit(), "the cap is taken by connections that proved themselves");
        drop(a);
        assert!(c.admit(), "a closed connection gives its place back");
        assert!(c.admit() && c.is_admitted());
    }

    #[test]
    fn a_newcomer_closes_the_connection_waiting_longest_when_all_waiting_places_are_taken() {
        let pool = Connections::new(2, 10);
        let (old, old_closed) = pool.arrive(peer("10.0.0.1")).unwrap();
        let (_mid, mid_closed) = pool.arrive(peer("10.0.0.1")).unwrap();
        let (new, _) = pool.arrive(peer("10.0.0.2")).unwrap();
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
    fn a_connection_that_never_proved_itself_makes_room_for_one_that_passes_the_gate_when_idle() {
        let pool = Connections::new(2, 10);
        let (junk, junk_closed) = pool.arrive(peer("10.0.0.1")).unwrap();
        let (busy, busy_closed) = pool.arrive(peer("10.0.0.1")).unwrap();
        assert!(junk.admit() && busy.admit());
        junk.begin();
        junk.end(false);
        busy.begin();
        let (person, _) = pool.arrive(peer("10.0.0.2")).unwrap();
        assert!(person.admit(), "the idle connection that only got refusals makes room");
        assert_eq!(junk_closed.try_recv(), Ok(()));
        person.begin();
        let (next, _) = pool.arrive(peer("10.0.0.3")).unwrap();
        assert!(!next.admit(), "a connection with a request in flight is not closed");
        assert!(busy_closed.try_recv().is_err());
        person.end(true);
        busy.end(true);
        assert!(!next.admit(), "nor one that proved itself");
        drop(junk);
        assert!(!next.admit(), "the closed connection's place was taken already");
    }
}
