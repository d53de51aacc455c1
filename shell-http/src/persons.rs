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
//! remembered as a verdict, but the same token is not asked about again for [`UNANSWERED_MS`].
//!
//! Made-up tokens are charged to the address that sent them ([`Allowance`]): every question that
//! does not end in "accepted" goes on its address's record for [`RECORD_MS`], and spends from that
//! address's allowance and from the server's. An address with a clean record is never refused for
//! another's tokens: its questions are asked (a few at once, [`PER_PEER_IN_FLIGHT`]), whatever the
//! rest of the world sent. The server's allowance limits only addresses with refused tokens on
//! their record, so a flood of made-up tokens costs Bitbucket a few requests per address every ten
//! minutes, and beyond them one a second for all those addresses together, never one per
//! initialize; a person whose token was accepted is remembered and asks nothing.

use std::collections::HashMap;
use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bb_core::{FetchOutcome, FetchRequest};
use bb_drive::{Bitbucket, Cancel, Lane, PersonalToken, Requester, now_ms};

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
    /// Bitbucket did not accept several tokens from this peer lately; the seconds until it may ask again.
    Spent(u64),
    /// Bitbucket did not accept a token from this peer lately, and the server asks about no more such
    /// tokens for now (many came from other peers); the seconds until it may ask again.
    Crowded(u64),
    /// Bitbucket gave no verdict; the words say what happened and name no secret.
    Unanswered(String),
}

/// The most verdicts, tokens without a verdict and peers' records remembered; beyond it the expired
/// ones go, then any (records: the oldest).
const MAX_REMEMBERED: usize = 8192;

/// Questions one peer may have in flight at once.
const PER_PEER_IN_FLIGHT: usize = 4;

/// How long a token Bitbucket gave no verdict on (a 5xx, a timeout) is not asked about again.
const UNANSWERED_MS: u64 = 5_000;

/// Questions that did not end in "accepted": how many one peer may ask at once, then one per this
/// many milliseconds.
const PEER_ALLOWANCE: (f64, u64) = (10.0, 6_000);
/// The same for every peer with such a question on its record, together.
const SERVER_ALLOWANCE: (f64, u64) = (60.0, 1_000);
/// How long a question that did not end in "accepted" stays on its peer's record.
const RECORD_MS: u64 = 10 * 60_000;

/// The verdicts of one server.
pub(crate) struct Persons {
    hashers: (RandomState, RandomState),
    ttl_ms: u64,
    verdicts: Mutex<HashMap<PersonKey, (Verdict, u64)>>,
    /// Tokens Bitbucket gave no verdict on, with what happened, until they may be asked about again.
    unanswered: Mutex<HashMap<PersonKey, (String, u64)>>,
    in_flight: Mutex<HashMap<Peer, usize>>,
    allowance: Mutex<Allowance>,
}

impl Persons {
    /// Verdicts remembered for `ttl`.
    pub(crate) fn new(ttl: Duration) -> Persons {
        Persons {
            hashers: (RandomState::new(), RandomState::new()),
            ttl_ms: u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX),
            verdicts: Mutex::default(),
            unanswered: Mutex::default(),
            in_flight: Mutex::default(),
            allowance: Mutex::default(),
        }
    }

    /// The key `token`'s person is counted by: their token, or the Bitbucket user of their login.
    pub(crate) fn key(&self, token: &PersonalToken) -> PersonKey {
        let t = token.identity();
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
        let now = now_ms();
        if let Some(v) = self.remembered(key, now) {
            return Ok(v);
        }
        if let Some(why) = self.unanswered_lately(key, now) {
            return Err(Undecided::Unanswered(why));
        }
        lock(&self.allowance).check(peer, now)?;
        let _turn = InFlight::take(&self.in_flight, peer).ok_or(Undecided::Busy)?;
        let cancel = CancelOnDrop(Cancel::new());
        let (bitbucket, person, flag) = (Arc::clone(bitbucket), token.clone(), cancel.0.clone());
        let request = FetchRequest::get("/rest/api/latest/users", vec![("limit".into(), "1".into())]);
        // A check has its own lane: ahead of every call and refresh, within a quarter of the connections
        // to Bitbucket, so a person connecting during a refresh burst is not kept waiting (issue 58).
        let outcome = smol::unblock(move || {
            bitbucket.fetch_for(request, Requester { queue: 0, person: Some(&person), lane: Lane::Check }, &flag)
        })
        .await;
        let verdict = match outcome {
            FetchOutcome::Response(r) if (200..300).contains(&r.status) => Ok(Verdict::Accepted),
            FetchOutcome::Response(r) if matches!(r.status, 401 | 403) => Ok(Verdict::Refused(r.status)),
            FetchOutcome::Response(r) => Err(format!("Bitbucket answered {}", r.status)),
            FetchOutcome::Failed(e) => Err(e.detail),
        };
        let now = now_ms();
        if verdict != Ok(Verdict::Accepted) {
            lock(&self.allowance).spend(peer, now);
        }
        match verdict {
            Ok(verdict) => {
                self.remember(key, verdict, now);
                Ok(verdict)
            }
            Err(why) => {
                let mut unanswered = lock(&self.unanswered);
                if unanswered.len() >= MAX_REMEMBERED {
                    unanswered.retain(|_, (_, until)| now < *until);
                    if unanswered.len() >= MAX_REMEMBERED {
                        unanswered.clear();
                    }
                }
                unanswered.insert(key, (why.clone(), now + UNANSWERED_MS));
                Err(Undecided::Unanswered(why))
            }
        }
    }

    /// Whether Bitbucket accepted `token` lately (a remembered verdict; nothing is asked).
    pub(crate) fn accepted(&self, token: &PersonalToken) -> bool {
        self.remembered(self.key(token), now_ms()) == Some(Verdict::Accepted)
    }

    fn unanswered_lately(&self, key: PersonKey, now_ms: u64) -> Option<String> {
        lock(&self.unanswered).get(&key).filter(|(_, until)| now_ms < *until).map(|(why, _)| why.clone())
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

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// What questions about tokens Bitbucket did not accept may still be asked: the peers with such a
/// question on their record, each with its bucket, and one bucket for all of them together; each
/// bucket refilled by one question per interval up to its size. A peer with a clean record (none
/// in the last [`RECORD_MS`]) may always ask.
#[derive(Debug, Default)]
struct Allowance {
    records: HashMap<Peer, Record>,
    server: Option<Bucket>,
}

/// A peer's record: its bucket, and when its last question did not end in "accepted".
#[derive(Debug, Clone, Copy)]
struct Record {
    bucket: Bucket,
    last_ms: u64,
}

#[derive(Debug, Clone, Copy)]
struct Bucket {
    left: f64,
    at_ms: u64,
}

impl Bucket {
    fn full(size: f64, now_ms: u64) -> Bucket {
        Bucket { left: size, at_ms: now_ms }
    }

    /// The bucket at `now_ms`, refilled by one per `every_ms` since it was last looked at.
    fn at(self, (size, every_ms): (f64, u64), now_ms: u64) -> Bucket {
        let gained = now_ms.saturating_sub(self.at_ms) as f64 / every_ms as f64;
        Bucket { left: (self.left + gained).min(size), at_ms: now_ms.max(self.at_ms) }
    }

    /// Seconds until one question may be asked (0: now).
    fn wait_s(self, (_, every_ms): (f64, u64)) -> u64 {
        if self.left >= 1.0 { 0 } else { ((1.0 - self.left) * every_ms as f64 / 1000.0).ceil() as u64 }
    }
}

impl Allowance {
    /// Ok when `peer` may ask now: its record is clean, or neither its bucket nor the server's is spent.
    fn check(&self, peer: Peer, now_ms: u64) -> Result<(), Undecided> {
        let Some(record) = self.record(peer, now_ms) else { return Ok(()) };
        let wait = record.bucket.at(PEER_ALLOWANCE, now_ms).wait_s(PEER_ALLOWANCE);
        if wait > 0 {
            return Err(Undecided::Spent(wait));
        }
        match self.server(now_ms).wait_s(SERVER_ALLOWANCE) {
            0 => Ok(()),
            wait => Err(Undecided::Crowded(wait)),
        }
    }

    /// `peer`'s record, unless it is clean.
    fn record(&self, peer: Peer, now_ms: u64) -> Option<Record> {
        self.records.get(&peer).filter(|r| now_ms < r.last_ms.saturating_add(RECORD_MS)).copied()
    }

    fn server(&self, now_ms: u64) -> Bucket {
        self.server.map_or(Bucket::full(SERVER_ALLOWANCE.0, now_ms), |b| b.at(SERVER_ALLOWANCE, now_ms))
    }

    /// A question did not end in "accepted": it goes on the peer's record and is taken from the
    /// peer's and the server's buckets (the server's never below empty: a flood from clean peers
    /// delays the others by one interval, not by the flood's size).
    fn spend(&mut self, peer: Peer, now_ms: u64) {
        if !self.records.contains_key(&peer) && self.records.len() >= MAX_REMEMBERED {
            self.records.retain(|_, r| now_ms < r.last_ms.saturating_add(RECORD_MS));
            // Still full: the record left alone longest goes (the next to come clean).
            if self.records.len() >= MAX_REMEMBERED
                && let Some(oldest) = self.records.iter().min_by_key(|(_, r)| r.last_ms).map(|(p, _)| *p)
            {
                self.records.remove(&oldest);
            }
        }
        let bucket = self.record(peer, now_ms).map_or(Bucket::full(PEER_ALLOWANCE.0, now_ms), |r| r.bucket);
        let b = bucket.at(PEER_ALLOWANCE, now_ms);
        self.records.insert(peer, Record { bucket: Bucket { left: b.left - 1.0, ..b }, last_ms: now_ms });
        let s = self.server(now_ms);
        self.server = Some(Bucket { left: (s.left - 1.0).max(0.0), ..s });
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
    fn a_token_bitbucket_gave_no_verdict_on_is_not_asked_about_again_for_a_few_seconds() {
        let p = Persons::new(Duration::from_secs(60));
        let k = p.key(&PersonalToken::new("t"));
        lock(&p.unanswered).insert(k, ("Bitbucket answered 502".into(), 1_000 + UNANSWERED_MS));
        assert_eq!(p.unanswered_lately(k, 1_000).as_deref(), Some("Bitbucket answered 502"));
        assert_eq!(p.unanswered_lately(k, 1_000 + UNANSWERED_MS), None);
    }

    #[test]
    fn the_key_depends_on_the_token_and_shows_nothing_of_it() {
        let p = Persons::new(Duration::from_secs(60));
        let (a, b) = (p.key(&PersonalToken::new("secret-a")), p.key(&PersonalToken::new("secret-b")));
        assert_eq!(a, p.key(&PersonalToken::new("secret-a")));
        assert_ne!(a, b);
        assert!(!format!("{a:?}").contains("secret"));
    }

    fn peer(n: u32) -> Peer {
        Peer::of(format!("10.{}.{}.{}:1", n >> 16 & 255, n >> 8 & 255, n & 255).parse().unwrap())
    }

    #[test]
    fn questions_bitbucket_refused_spend_the_peers_allowance_then_one_comes_back_every_interval() {
        let mut a = Allowance::default();
        let (p, other) = (peer(1), peer(2));
        for _ in 0..PEER_ALLOWANCE.0 as usize {
            assert_eq!(a.check(p, 0), Ok(()));
            a.spend(p, 0);
        }
        assert_eq!(a.check(p, 0), Err(Undecided::Spent(6)), "spent: the next question in 6 s");
        assert_eq!(a.check(other, 0), Ok(()), "another peer still may");
        assert_eq!(a.check(p, PEER_ALLOWANCE.1), Ok(()), "one question back after one interval");
    }

    #[test]
    fn a_peer_with_a_clean_record_is_never_refused_for_the_tokens_of_others() {
        let mut a = Allowance::default();
        for i in 0..10 * SERVER_ALLOWANCE.0 as u32 {
            a.spend(peer(i), 0);
        }
        assert_eq!(a.check(peer(1_000_000), 0), Ok(()), "a peer that sent no refused token asks");
        a.spend(peer(1_000_000), 0);
        assert_eq!(a.check(peer(1_000_000), 0), Err(Undecided::Crowded(1)), "now it has one on its record");
    }

    #[test]
    fn the_servers_allowance_limits_only_peers_with_refused_tokens_on_their_record() {
        let mut a = Allowance::default();
        let junk = peer(1);
        a.spend(junk, 0);
        for i in 0..SERVER_ALLOWANCE.0 as u32 {
            a.spend(peer(100 + i), 0);
        }
        assert_eq!(a.check(junk, 0), Err(Undecided::Crowded(1)));
        assert_eq!(a.check(junk, SERVER_ALLOWANCE.1), Ok(()), "the server's bucket never goes below empty");
        assert_eq!(a.check(peer(2), 0), Ok(()));
    }

    #[test]
    fn a_peers_record_comes_clean_after_a_while() {
        let mut a = Allowance::default();
        for i in 0..SERVER_ALLOWANCE.0 as u32 {
            a.spend(peer(i), 0);
        }
        assert_eq!(a.check(peer(0), 1), Err(Undecided::Crowded(1)));
        assert_eq!(a.check(peer(0), RECORD_MS), Ok(()));
        for i in 0..SERVER_ALLOWANCE.0 as u32 {
            a.spend(peer(1000 + i), RECORD_MS);
        }
        assert_eq!(a.check(peer(0), RECORD_MS), Ok(()), "clean again: the server's allowance does not apply");
    }

    #[test]
    fn the_records_kept_are_bounded_whatever_comes() {
        let mut a = Allowance::default();
        for i in 0..MAX_REMEMBERED as u32 + 100 {
            a.spend(peer(i), u64::from(i));
        }
        assert_eq!(a.records.len(), MAX_REMEMBERED);
        assert!(a.records.contains_key(&peer(MAX_REMEMBERED as u32 + 99)));
        assert!(!a.records.contains_key(&peer(0)), "the record left alone longest went");
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
