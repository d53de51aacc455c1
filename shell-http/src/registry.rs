//! Which sessions are alive: their ids (128 random bits from the operating system, as hex), the
//! core session each names, when each was last used, and which have idled past the limit.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use bb_core::SessionId;

/// The live sessions, by `Mcp-Session-Id`.
#[derive(Debug, Default)]
pub(crate) struct Registry {
    by_id: HashMap<String, SessionId>,
    // The id and last use (epoch ms) of each session, by the core's id.
    live: BTreeMap<SessionId, (String, u64)>,
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

    /// Adds a session under `id`, used at `now_ms`.
    pub(crate) fn insert(&mut self, id: String, session: SessionId, now_ms: u64) {
        self.by_id.insert(id.clone(), session);
        self.live.insert(session, (id, now_ms));
    }

    /// Records a use of `session` at `now_ms`, which restarts its idle time.
    pub(crate) fn touch(&mut self, session: SessionId, now_ms: u64) {
        if let Some((_, used)) = self.live.get_mut(&session) {
            *used = now_ms;
        }
    }

    /// Forgets the session with this id, returning it.
    pub(crate) fn remove(&mut self, id: &str) -> Option<SessionId> {
        let session = self.by_id.remove(id)?;
        self.live.remove(&session);
        Some(session)
    }

    /// Forgets every session unused for longer than `idle` at `now_ms` for which `busy` is false,
    /// returning them.
    pub(crate) fn expire(&mut self, idle: Duration, now_ms: u64, busy: impl Fn(SessionId) -> bool) -> Vec<SessionId> {
        let idle_ms = u64::try_from(idle.as_millis()).unwrap_or(u64::MAX);
        let expired: Vec<SessionId> = self
            .live
            .iter()
            .filter(|(s, (_, used))| now_ms.saturating_sub(*used) > idle_ms && !busy(**s))
            .map(|(s, _)| *s)
            .collect();
        for s in &expired {
            if let Some((id, _)) = self.live.remove(s) {
                self.by_id.remove(&id);
            }
        }
        expired
    }

    /// How many sessions are alive.
    pub(crate) fn len(&self) -> usize {
        self.by_id.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_sessions_idle_past_the_limit_and_not_busy_expire() {
        let mut r = Registry::default();
        r.insert("a".into(), SessionId(1), 0);
        r.insert("b".into(), SessionId(2), 0);
        r.insert("c".into(), SessionId(3), 0);
        r.touch(SessionId(2), 900);
        let expired = r.expire(Duration::from_millis(500), 1000, |s| s == SessionId(3));
        assert_eq!(expired, [SessionId(1)]);
        assert_eq!((r.session("a"), r.session("b"), r.len()), (None, Some(SessionId(2)), 2));
        assert_eq!(r.remove("b"), Some(SessionId(2)));
        assert_eq!(r.remove("b"), None);
    }
}
