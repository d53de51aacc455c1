//! Which connections the server holds, so that clients without the token cannot take the places of
//! those with it, one peer cannot take them all, and connections that hold a place without a
//! request in flight cannot keep out a person who would send one.
//!
//! ```text
//!                ┌─(a login request, --oauth: served under the anonymous share; beyond it 503, closed)─┐
//!                ▼                                                                                     │
//!   accept ──▶ waiting ──(a request passes the gate)──▶ admitted ──(an MCP request of a verified session
//!     │           │                                       │          or person answered with success)──▶ proven
//!     │           │                                       │                                                │
//!     │           └─(the oldest with no login request     └─(idle, the first admitted such, when a         │
//!     │              in flight, when a newcomer finds        newcomer that passes the gate finds the       │
//!     │              every waiting place taken) ──▶ closed   cap taken)──▶ closed                          │
//!     │                                                                                                    │
//!     └─(its peer holds its share)──▶ 503, closed      closed ◀──(idle the longest, when no admitted one ──┘
//!                                                                 that never proved itself is idle and a
//!                                                                 newcomer that passes the gate finds the
//!                                                                 cap taken)
//! ```
//!
//! A connection waits until one of its requests passes the gate (Host, Origin, and the bearer token
//! when there is one); only then does it count against `max_connections`. As many connections again
//! may wait; when they are all taken, a newcomer closes the one waiting longest (of those with no
//! login request in flight, below), so idle or token-less connections cannot lock anyone out (an
//! honest client waits only for the time its first head takes).
//!
//! With `--oauth` anyone may log in, so a login request (`oauth::is_oauth_path`) on a waiting
//! connection does not admit it: it is served under the anonymous share, at most
//! `Limits::anonymous_logins` such requests in flight at once ([`Held::begin_anonymous`]), and its
//! connection stays waiting. So slow anonymous login bodies or metadata documents hold no admitted
//! place, and a person's `/mcp` finds one; a connection admitted by an `/mcp` request makes its login
//! requests as admitted requests. A newcomer closes a waiting connection with a login request in
//! flight only when every waiting one has one (the share is a quarter of the waiting places, so only
//! with the smallest caps): a login under way is bounded by its own deadlines, and finishes.
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
//! a request in flight (an SSE answer counts until its last event) is the newcomer told "busy"; and
//! a newcomer whose request is someone's already in (it names a live session, or carries a token
//! Bitbucket accepted) is not even then, while an unproven connection is admitted: that one is closed,
//! whatever it waits for (an `initialize` stalled on its token check), [`Held::admit_as_known`]. So
//! bb refuses only new, unproven connections. So a
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
    max_anonymous: usize,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// The admitted connections, by the order they arrived in.
    admitted: BTreeMap<u64, Admitted>,
    /// The connections not yet admitted, oldest first.
    waiting: BTreeMap<u64, Waiting>,
    peers: HashMap<Peer, usize>,
    /// Login requests in flight on waiting connections.
    anonymous: usize,
    next: u64,
    /// Counts the beginnings and ends of requests: the order in which connections were last active.
    tick: u64,
}

/// A connection not yet admitted.
#[derive(Debug)]
struct Waiting {
    /// The sender that closes it.
    close: Sender<()>,
    /// Whether a login request of it is in flight, under the anonymous share.
    logging_in: bool,
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
    /// `max_admitted` admitted connections at once, as many waiting, `per_peer` per peer, and
    /// `max_anonymous` login requests in flight on waiting connections.
    pub(crate) fn new(max_admitted: usize, per_peer: usize, max_anonymous: usize) -> Arc<Connections> {
        Arc::new(Connections {
            max_admitted,
            max_waiting: max_admitted.max(1),
            per_peer,
            max_anonymous,
            state: Mutex::default(),
        })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A connection from `peer` arrives: it waits (closing the longest-waiting one with no login
    /// request in flight, else the longest-waiting one, if every waiting place is taken), unless its
    /// peer holds its share already.
    pub(crate) fn arrive(self: &Arc<Self>, peer: Peer) -> Result<Arrival, PeerFull> {
        self.enter(peer, self.per_peer)
    }

    /// A connection from a trusted proxy arrives: as [`Connections::arrive`], but the proxy carries
    /// many people, so its address holds no share (the caps still hold).
    pub(crate) fn arrive_from_proxy(self: &Arc<Self>, proxy: Peer) -> Result<Arrival, PeerFull> {
        self.enter(proxy, usize::MAX)
    }

    fn enter(self: &Arc<Self>, peer: Peer, share: usize) -> Result<Arrival, PeerFull> {
        let mut s = self.lock();
        let held = s.peers.get(&peer).copied().unwrap_or(0);
        if held >= share {
            return Err(PeerFull);
        }
        *s.peers.entry(peer).or_default() += 1;
        if s.waiting.len() >= self.max_waiting {
            let idle = s.waiting.iter().find(|(_, w)| !w.logging_in).map(|(id, _)| *id);
            let oldest = idle.or_else(|| s.waiting.keys().next().copied());
            if let Some(w) = oldest.and_then(|id| s.waiting.remove(&id)) {
                let _ = w.close.try_send(());
            }
        }
        let id = s.next;
        s.next += 1;
        let (tx, rx) = smol::channel::bounded(1);
        s.waiting.insert(id, Waiting { close: tx, logging_in: false });
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
        let Some(Waiting { close, .. }) = s.waiting.remove(&self.id) else { return false };
        let active = s.touch();
        s.admitted.insert(self.id, Admitted { close, busy: 0, proven: false, active });
        self.admitted.store(true, Ordering::Relaxed);
        true
    }

    /// Admits the connection for a request of someone already in (a live session's, or a person's
    /// whose token Bitbucket accepted): as [`Held::admit`], and when every admitted connection has a
    /// request in flight, by closing the first admitted one that never proved itself, whatever it is
    /// doing (an `initialize` stalled on its token check, a client holding a slow request): a
    /// connection stalled on admission never keeps out one that carries a session (issue 58). Only
    /// when every admitted connection is proven and busy is the newcomer refused.
    pub(crate) fn admit_as_known(&self) -> bool {
        if self.admit() {
            return true;
        }
        let mut s = self.pool.lock();
        if !s.waiting.contains_key(&self.id) {
            return false;
        }
        let Some(id) = s.admitted.iter().find(|(_, a)| !a.proven).map(|(id, _)| *id) else { return false };
        if let Some(a) = s.admitted.remove(&id) {
            let _ = a.close.try_send(());
        }
        let Some(Waiting { close, .. }) = s.waiting.remove(&self.id) else { return false };
        let active = s.touch();
        // It carries someone already in: proven from the start, so the next such newcomer does not
        // close it in turn while its first request is in flight.
        s.admitted.insert(self.id, Admitted { close, busy: 0, proven: true, active });
        self.admitted.store(true, Ordering::Relaxed);
        true
    }

    /// A request on the connection begins: until the [`InFlight`] is dropped (its answer sent, or
    /// given up), the connection is not closed to make room.
    pub(crate) fn begin(self: &Arc<Self>) -> InFlight {
        self.started();
        InFlight { held: Arc::clone(self), proves: false, anonymous: false }
    }

    /// A login request on a connection not admitted begins, under the anonymous share: the
    /// connection stays waiting (closed to make room only when every waiting one has a login request
    /// in flight), and the share's place is given back when the [`InFlight`] is dropped. `None` when
    /// the share is taken, or the connection was closed to make room.
    pub(crate) fn begin_anonymous(self: &Arc<Self>) -> Option<InFlight> {
        let mut s = self.pool.lock();
        if s.anonymous >= self.pool.max_anonymous {
            return None;
        }
        let w = s.waiting.get_mut(&self.id)?;
        w.logging_in = true;
        s.anonymous += 1;
        Some(InFlight { held: Arc::clone(self), proves: false, anonymous: true })
    }

    fn started(&self) {
        let mut s = self.pool.lock();
        let now = s.touch();
        if let Some(a) = s.admitted.get_mut(&self.id) {
            a.busy += 1;
            a.active = now;
        }
    }

    fn ended(&self, proves: bool, anonymous: bool) {
        let mut s = self.pool.lock();
        if anonymous {
            s.anonymous = s.anonymous.saturating_sub(1);
            if let Some(w) = s.waiting.get_mut(&self.id) {
                w.logging_in = false;
            }
            return;
        }
        let now = s.touch();
        if let Some(a) = s.admitted.get_mut(&self.id) {
            a.busy = a.busy.saturating_sub(1);
            a.active = now;
            a.proven |= proves;
        }
    }
}

/// A request in flight on an admitted connection, or a login request under the anonymous share.
#[derive(Debug)]
pub(crate) struct InFlight {
    held: Arc<Held>,
    proves: bool,
    /// Whether it holds a place of the anonymous share (and proves nothing).
    anonymous: bool,
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
        self.held.ended(self.proves, self.anonymous);
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
        let pool = Connections::new(2, 10, 1);
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
        let pool = Connections::new(2, 10, 1);
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
        let pool = Connections::new(100, 2, 1);
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
        let pool = Connections::new(3, 10, 1);
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
        let pool = Connections::new(2, 10, 1);
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
        let pool = Connections::new(2, 10, 1);
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

    #[test]
    fn login_requests_on_waiting_connections_take_the_anonymous_share_and_no_admitted_place() {
        let pool = Connections::new(2, 10, 1);
        let (a, _) = arrive(&pool, "10.0.0.1");
        let a_login = a.begin_anonymous();
        assert!(a_login.is_some());
        assert!(!a.is_admitted(), "a login request admits no connection");
        let (b, _) = arrive(&pool, "10.0.0.2");
        assert!(b.begin_anonymous().is_none(), "the share is taken");
        assert!(b.admit());
        let (person, _) = arrive(&pool, "10.0.0.3");
        assert!(person.admit(), "both admitted places were free for /mcp");
        drop(a_login);
        let (c, _) = arrive(&pool, "10.0.0.4");
        assert!(c.begin_anonymous().is_some(), "a login request that ended gives its place back");
    }

    #[test]
    fn a_newcomer_closes_a_waiting_connection_with_a_login_in_flight_only_when_every_waiting_one_has_one() {
        let pool = Connections::new(2, 10, 4);
        let (logging_in, logging_in_closed) = arrive(&pool, "10.0.0.1");
        let (_idle, idle_closed) = arrive(&pool, "10.0.0.2");
        let login = logging_in.begin_anonymous();
        assert!(login.is_some());
        let (newer, _) = arrive(&pool, "10.0.0.3");
        assert_eq!(idle_closed.try_recv(), Ok(()), "the idle one made room, though it arrived later");
        assert!(logging_in_closed.try_recv().is_err());
        let newer_login = newer.begin_anonymous();
        assert!(newer_login.is_some());
        let (_newest, _) = arrive(&pool, "10.0.0.4");
        assert_eq!(logging_in_closed.try_recv(), Ok(()), "every waiting one logs in: the oldest made room");
        assert!(logging_in.begin_anonymous().is_none(), "a connection closed to make room begins nothing");
        // The connection's task ends with it, and with the task its request; every place comes back.
        drop((login, logging_in));
        drop(newer_login);
        let (other, _) = arrive(&pool, "10.0.0.5");
        let places: Vec<InFlight> = (0..5).filter_map(|_| other.begin_anonymous()).collect();
        assert_eq!(places.len(), 4, "every place came back, and no more");
    }

    #[test]
    fn a_request_of_someone_already_in_closes_a_busy_unproven_connection_rather_than_be_refused() {
        let pool = Connections::new(2, 10, 1);
        let (stalled, stalled_closed) = arrive(&pool, "10.0.0.1");
        let (proven, proven_closed) = arrive(&pool, "10.0.0.2");
        assert!(stalled.admit() && proven.admit());
        request(&proven, true);
        // Both busy: an initialize waiting for its token check, and a person's SSE answer.
        let _initialize = stalled.begin();
        let _stream = proven.begin();
        let (newcomer, _) = arrive(&pool, "10.0.0.3");
        assert!(!newcomer.admit(), "a new, unproven connection is refused");
        let (known, _) = arrive(&pool, "10.0.0.4");
        assert!(known.admit_as_known(), "a live session's request gets in");
        assert!(stalled_closed.try_recv().is_ok(), "the unproven connection made room, busy as it was");
        assert!(proven_closed.try_recv().is_err(), "the proven one is kept");
        // Now every admitted connection is proven and busy: even someone already in is told busy.
        let _busy = known.begin();
        let (another, _) = arrive(&pool, "10.0.0.5");
        assert!(!another.admit_as_known());
    }
}
