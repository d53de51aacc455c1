//! Which connections the server holds, so that clients without the token cannot take the places of
//! those with it, and one peer cannot take them all.
//!
//! ```text
//!   accept ──▶ waiting ──(first request that passes the gate)──▶ admitted ──▶ closed
//!                 └──(the oldest waiting one, when a newcomer finds them all taken)──▶ closed
//! ```
//!
//! A connection waits until one of its requests passes the gate (Host, Origin, and the bearer token
//! when there is one); only then does it count against `max_connections`. As many connections again
//! may wait; when they are all taken, a newcomer closes the one waiting longest, so idle or token-less
//! connections cannot lock anyone out (an honest client waits only for the time its first head takes).
//! Every connection, waiting or admitted, counts against its peer's share.

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
    admitted: usize,
    // The connections not yet admitted, oldest first, each with the sender that closes it.
    waiting: BTreeMap<u64, Sender<()>>,
    peers: HashMap<Peer, usize>,
    next: u64,
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
/// make room (it fails, instead, once the connection is admitted).
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

impl Held {
    /// Whether the connection is admitted already.
    pub(crate) fn is_admitted(&self) -> bool {
        self.admitted.load(Ordering::Relaxed)
    }

    /// Admits the connection, if there is room (and it was not closed to make room meanwhile).
    /// True when it is admitted, now or before.
    pub(crate) fn admit(&self) -> bool {
        if self.is_admitted() {
            return true;
        }
        let mut s = self.pool.lock();
        if s.admitted >= self.pool.max_admitted || !s.waiting.contains_key(&self.id) {
            return false;
        }
        s.waiting.remove(&self.id);
        s.admitted += 1;
        self.admitted.store(true, Ordering::Relaxed);
        true
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        let mut s = self.pool.lock();
        if self.is_admitted() {
            s.admitted -= 1;
        } else {
            s.waiting.remove(&self.id);
        }
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
        assert!(!c.admit(), "the cap is taken");
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
}
