//! Which sessions are alive: their ids (128 random bits from the operating system, as hex), the
//! core session each names, whom each counts against, when each was last used, which have idled
//! past the limit, and which has idled longest.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use bb_core::SessionId;

use crate::census::Owner;

/// The live sessions, by `Mcp-Session-Id`.
#[derive(Debug, Default)]
pub(crate) struct Registry {
    by_id: HashMap<String, SessionId>,
    // Each session by the core's id.
    live: BTreeMap<SessionId, Entry>,
}

#[derive(Debug)]
struct Entry {
    id: String,
    owner: Owner,
    // Last use, epoch ms.
    used: u64,
    // Last use as a place in the order of all uses (milliseconds tie too often to order by).
    turn: u64,
}

impl Registry {
    /// A fresh session id: 16 bytes from the OS's secure random source, as 32 hex characters.
    pub(crate) fn new_id() -> std::io::Result<String> {
        crate::options::random_hex(16)
    }

    /// The core session an id names, while it is alive.
    pub(crate) fn session(&self, id: &str) -> Option<SessionId> {
        self.by_id.get(id).copied()
    }

    /// Adds a session under `id`, counted against `owner`, used at `now_ms` in use `turn`.
    pub(crate) fn insert(&mut self, id: String, session: SessionId, owner: Owner, now_ms: u64, turn: u64) {
        self.by_id.insert(id.clone(), session);
        self.live.insert(session, Entry { id, owner, used: now_ms, turn });
    }

    /// Records a use of `session` at `now_ms` (use `turn`), which restarts its idle time.
    pub(crate) fn touch(&mut self, session: SessionId, now_ms: u64, turn: u64) {
        if let Some(e) = self.live.get_mut(&session) {
            e.used = now_ms;
            e.turn = turn;
        }
    }

    /// The turn of `session`'s last use.
    pub(crate) fn last_turn(&self, session: SessionId) -> Option<u64> {
        self.live.get(&session).map(|e| e.turn)
    }

    /// Forgets the session with this id, returning it and whom it counted against.
    pub(crate) fn remove(&mut self, id: &str) -> Option<(SessionId, Owner)> {
        let session = self.by_id.remove(id)?;
        let e = self.live.remove(&session)?;
        Some((session, e.owner))
    }

    /// Forgets every session unused for longer than `idle` at `now_ms` for which `busy` is false,
    /// returning them and whom each counted against.
    pub(crate) fn expire(
        &mut self,
        idle: Duration,
        now_ms: u64,
        busy: impl Fn(SessionId) -> bool,
    ) -> Vec<(SessionId, Owner)> {
        let idle_ms = u64::try_from(idle.as_millis()).unwrap_or(u64::MAX);
        let expired: Vec<SessionId> = self
            .live
            .iter()
            .filter(|(s, e)| now_ms.saturating_sub(e.used) > idle_ms && !busy(**s))
            .map(|(s, _)| *s)
            .collect();
        let mut out = Vec::with_capacity(expired.len());
        for s in expired {
            if let Some(e) = self.live.remove(&s) {
                self.by_id.remove(&e.id);
                out.push((s, e.owner));
            }
        }
        out
    }

    /// The session unused longest among those `counts` takes and `busy` does not: the turn of its
    /// last use, and its id.
    pub(crate) fn idle_longest(
        &self,
        counts: impl Fn(&Owner) -> bool,
        busy: impl Fn(SessionId) -> bool,
    ) -> Option<(u64, &str)> {
        self.live
            .iter()
            .filter(|(s, e)| counts(&e.owner) && !busy(**s))
            .min_by_key(|(_, e)| e.turn)
            .map(|(_, e)| (e.turn, e.id.as_str()))
    }

    /// How many sessions are alive.
    pub(crate) fn len(&self) -> usize {
        self.by_id.len()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::peer::Peer;

    fn owner(peer: &str) -> Owner {
        Owner { peer: Peer::of(format!("{peer}:1").parse().unwrap()), person: None }
    }

    #[test]
    fn only_sessions_idle_past_the_limit_and_not_busy_expire() {
        let mut r = Registry::default();
        let o = owner("10.0.0.1");
        r.insert("a".into(), SessionId(1), o, 0, 1);
        r.insert("b".into(), SessionId(2), o, 0, 2);
        r.insert("c".into(), SessionId(3), o, 0, 3);
        r.touch(SessionId(2), 900, 4);
        let expired = r.expire(Duration::from_millis(500), 1000, |s| s == SessionId(3));
        assert_eq!(expired, [(SessionId(1), o)]);
        assert_eq!((r.session("a"), r.session("b"), r.len()), (None, Some(SessionId(2)), 2));
        assert_eq!(r.remove("b"), Some((SessionId(2), o)));
        assert_eq!(r.remove("b"), None);
    }

    #[test]
    fn the_session_idle_longest_is_the_oldest_use_among_those_counted_and_not_busy() {
        let mut r = Registry::default();
        r.insert("a".into(), SessionId(1), owner("10.0.0.1"), 0, 100);
        r.insert("b".into(), SessionId(2), owner("10.0.0.2"), 0, 50);
        r.insert("c".into(), SessionId(3), owner("10.0.0.1"), 0, 10);
        r.insert("d".into(), SessionId(4), owner("10.0.0.1"), 0, 70);
        let any = |_: &Owner| true;
        assert_eq!(r.idle_longest(any, |_| false), Some((10, "c")));
        assert_eq!(r.idle_longest(any, |s| s == SessionId(3)), Some((50, "b")));
        let first = owner("10.0.0.1");
        assert_eq!(r.idle_longest(|o| *o == first, |s| s == SessionId(3)), Some((70, "d")));
        assert_eq!(r.idle_longest(|o| *o == first, |_| true), None);
    }
}
