//! Whether Bitbucket accepts a person's token (per-person mode), asked once before their first
//! session and remembered briefly; and the key a person is counted by, which is a keyed hash of the
//! token (the token itself is never kept here, nor logged).
//!
//! The question is `GET /rest/api/latest/users?limit=1`: it needs a logged-in user (anonymous gets
//! 401, reference/bitbucket-dc.md "Errors"), is cheap, and reads nothing of the person's work.
//! `application-properties` would not do: it answers anonymous callers too, so it would vouch for a
//! token only if Bitbucket refused bad credentials on a public endpoint, which the reference does not
//! say. The price: a project or repository access token (no person, no licence) is refused too;
//! per-person mode is for personal access tokens. 2xx means accepted;
//! 401 or 403 means refused; anything else (a 5xx, a timeout, no server) decides nothing and is not
//! remembered. One peer may have a few questions in flight at once, so a flood of made-up tokens
//! costs Bitbucket a few requests at a time, not one per initialize at once.

use std::collections::HashMap;
use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bb_core::{FetchOutcome, FetchRequest};
use bb_drive::{Bitbucket, Cancel, PersonalToken, now_ms};

use crate::peer::Peer;

/// A person, as a 128-bit keyed hash of their token (the keys are random per process).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct PersonKey(u64, u64);

impl PersonKey {
    /// A key made of a number, for tests.
    #[cfg(test)]
    pub(crate) fn from_raw(n: u64) -> PersonKey {
        PersonKey(n, n)
    }
}

/// What Bitbucket said of a token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// It answered an authenticated request.
    Accepted,
    /// It refused it with this status (401 or 403).
    Refused(u16),
}

/// Why no verdict was reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Undecided {
    /// The peer has its share of questions in flight already.
    Busy,
    /// Bitbucket gave no verdict; the words say what happened and name no secret.
    Unanswered(String),
}

/// The most verdicts remembered; beyond it the expired ones go, then any.
const MAX_REMEMBERED: usize = 8192;

/// Questions one peer may have in flight at once.
const PER_PEER_IN_FLIGHT: usize = 4;

/// The verdicts of one server.
pub(crate) struct Persons {
    hashers: (RandomState, RandomState),
    ttl_ms: u64,
    verdicts: Mutex<HashMap<PersonKey, (Verdict, u64)>>,
    in_flight: Mutex<HashMap<Peer, usize>>,
}

impl Persons {
    /// Verdicts remembered for `ttl`.
    pub(crate) fn new(ttl: Duration) -> Persons {
        Persons {
            hashers: (RandomState::new(), RandomState::new()),
            ttl_ms: u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX),
            verdicts: Mutex::default(),
            in_flight: Mutex::default(),
        }
    }

    /// The key `token`'s person is counted by.
    pub(crate) fn key(&self, token: &PersonalToken) -> PersonKey {
        let t = token.secret().as_bytes();
        PersonKey(self.hashers.0.hash_one(t), self.hashers.1.hash_one(t))
    }

    /// Bitbucket's verdict on `token`, remembered or asked for now (through `bitbucket`, on a
    /// blocking thread; dropping the future cancels the question).
    pub(crate) async fn verdict(
        &self,
        bitbucket: &Arc<dyn Bitbucket>,
        peer: Peer,
        token: &PersonalToken,
    ) -> Result<Verdict, Undecided> {
        let key = self.key(token);
        if let Some(v) = self.remembered(key, now_ms()) {
            return Ok(v);
        }
        let _turn = InFlight::take(&self.in_flight, peer).ok_or(Undecided::Busy)?;
        let cancel = CancelOnDrop(Cancel::new());
        let (bitbucket, person, flag) = (Arc::clone(bitbucket), token.clone(), cancel.0.clone());
        let request = FetchRequest::get("/rest/api/latest/users", vec![("limit".into(), "1".into())]);
        let outcome = smol::unblock(move || bitbucket.fetch(request, Some(&person), &flag)).await;
        let verdict = match outcome {
            FetchOutcome::Response(r) if (200..300).contains(&r.status) => Verdict::Accepted,
            FetchOutcome::Response(r) if matches!(r.status, 401 | 403) => Verdict::Refused(r.status),
            FetchOutcome::Response(r) => {
                return Err(Undecided::Unanswered(format!("Bitbucket answered {}", r.status)));
            }
            FetchOutcome::Failed(e) => return Err(Undecided::Unanswered(e.detail)),
        };
        self.remember(key, verdict, now_ms());
        Ok(verdict)
    }

    fn remembered(&self, key: PersonKey, now_ms: u64) -> Option<Verdict> {
        let verdicts = self.verdicts.lock().unwrap_or_else(|p| p.into_inner());
        verdicts.get(&key).filter(|(_, until)| now_ms < *until).map(|(v, _)| *v)
    }

    fn remember(&self, key: PersonKey, verdict: Verdict, now_ms: u64) {
        let mut verdicts = self.verdicts.lock().unwrap_or_else(|p| p.into_inner());
        if verdicts.len() >= MAX_REMEMBERED {
            verdicts.retain(|_, (_, until)| now_ms < *until);
            if verdicts.len() >= MAX_REMEMBERED {
                verdicts.clear();
            }
        }
        verdicts.insert(key, (verdict, now_ms.saturating_add(self.ttl_ms)));
    }
}

/// One of a peer's questions in flight.
struct InFlight<'a> {
    map: &'a Mutex<HashMap<Peer, usize>>,
    peer: Peer,
}

impl<'a> InFlight<'a> {
    fn take(map: &'a Mutex<HashMap<Peer, usize>>, peer: Peer) -> Option<InFlight<'a>> {
        let mut m = map.lock().unwrap_or_else(|p| p.into_inner());
        let n = m.entry(peer).or_default();
        if *n >= PER_PEER_IN_FLIGHT {
            return None;
        }
        *n += 1;
        Some(InFlight { map, peer })
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        let mut m = self.map.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(n) = m.get_mut(&self.peer) {
            *n -= 1;
            if *n == 0 {
                m.remove(&self.peer);
            }
        }
    }
}

/// Cancels the question when the initialize that asked it is dropped (its client went away).
struct CancelOnDrop(Cancel);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_verdict_is_remembered_until_its_time_is_up() {
        let p = Persons::new(Duration::from_secs(60));
        let k = p.key(&PersonalToken::new("t"));
        p.remember(k, Verdict::Refused(401), 1_000);
        assert_eq!(p.remembered(k, 60_999), Some(Verdict::Refused(401)));
        assert_eq!(p.remembered(k, 61_000), None);
    }

    #[test]
    fn the_key_depends_on_the_token_and_shows_nothing_of_it() {
        let p = Persons::new(Duration::from_secs(60));
        let (a, b) = (p.key(&PersonalToken::new("secret-a")), p.key(&PersonalToken::new("secret-b")));
        assert_eq!(a, p.key(&PersonalToken::new("secret-a")));
        assert_ne!(a, b);
        assert!(!format!("{a:?}").contains("secret"));
    }

    #[test]
    fn a_peer_has_only_a_few_questions_in_flight() {
        let map = Mutex::default();
        let peer = Peer::of("10.0.0.1:1".parse().unwrap());
        let turns: Vec<_> = (0..PER_PEER_IN_FLIGHT).map(|_| InFlight::take(&map, peer).unwrap()).collect();
        assert!(InFlight::take(&map, peer).is_none());
        assert!(InFlight::take(&map, Peer::of("10.0.0.2:1".parse().unwrap())).is_some());
        drop(turns);
        assert!(InFlight::take(&map, peer).is_some());
    }
}
