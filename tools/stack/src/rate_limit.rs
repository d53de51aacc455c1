//! Bitbucket Data Center's rate limiting: a token bucket per user, off until the control API turns it on.
//!
//! Sources, all but the last two [doc] from Atlassian's "Improving instance stability with rate limiting"
//! (<https://confluence.atlassian.com/bitbucketserver/improving-instance-stability-with-rate-limiting-976171954.html>;
//! Bitbucket Data Center with a Data Center licence, since 6.6):
//! - It limits HTTP requests with basic or bearer authentication (REST, Git over HTTP), with a token bucket per user.
//! - A user's bucket holds at most "token bucket size" tokens; every request takes one; tokens are added at "token
//!   bucket refill rate" per second until the bucket is full. The page's example: size 60, refill 5.
//! - A user whose bucket is empty is refused with HTTP 429 (Too Many Requests).
//! - The admin page (Administration, Rate limiting) offers 60 and 5 as the defaults; the control API takes them
//!   when a value is left out.
//! - In a cluster every node keeps its own bucket per user; the stand-in is one node.
//! - The 429 carries `Retry-After` in seconds [rec]: here the whole seconds until the bucket holds one token again,
//!   rounded up, at least 1 (the rounding is [assumed]).
//! - The 429's body is Bitbucket's error JSON with the message the control API's 429 fault uses ("You have been
//!   rate limited. Try again later.") [assumed]: no public source quotes Bitbucket Data Center's text.
//!
//! [`TokenBucket`] is the arithmetic, pure: it is told the time, so it is tested with explicit instants.
//! [`RateLimiter`] holds the settings and a bucket per user; the server asks it with `Instant::now()`, a monotonic
//! clock.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// Billionths of a token: whole numbers, so a refill of 5 per second after 200 ms is exactly one token.
const NANO: u128 = 1_000_000_000;

/// The admin page's default token bucket size. [doc]
pub const DEFAULT_CAPACITY: u64 = 60;
/// The admin page's default token bucket refill rate, tokens per second. [doc]
pub const DEFAULT_REFILL: f64 = 5.0;

/// How a rate limit is set: the bucket's size and how fast it refills.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RateLimit {
    /// The most tokens a bucket holds ("token bucket size"): the longest burst a user may send.
    pub capacity: u64,
    /// Tokens added per second ("token bucket refill rate"), more than zero; may be fractional.
    pub refill: f64,
}

impl RateLimit {
    /// A limit, or why it is not one: the capacity must be at least 1 and the refill a positive finite number.
    pub fn new(capacity: u64, refill: f64) -> Result<RateLimit, String> {
        if capacity == 0 {
            return Err("capacity must be at least 1".into());
        }
        if !(refill.is_finite() && refill > 0.0) {
            return Err("refill must be a number of tokens per second above 0".into());
        }
        if refill * (NANO as f64) < 1.0 {
            return Err("refill must be at least one token in a billion seconds".into());
        }
        Ok(RateLimit { capacity, refill })
    }

    /// The refill in billionths of a token per second (at least 1).
    fn refill_nanos(&self) -> u128 {
        ((self.refill * NANO as f64).round() as u128).max(1)
    }
}

/// One user's bucket: how many tokens it held at an instant; the tokens since then are added when it is next asked.
#[derive(Debug, Clone, PartialEq)]
pub struct TokenBucket {
    limit: RateLimit,
    /// Tokens held at `at`, in billionths of a token.
    nanos: u128,
    at: Instant,
}

impl TokenBucket {
    /// A full bucket at `now`.
    pub fn full(limit: RateLimit, now: Instant) -> TokenBucket {
        TokenBucket { limit, nanos: u128::from(limit.capacity) * NANO, at: now }
    }

    /// The tokens the bucket holds at `now` (fractional), refilled since it was last asked.
    pub fn tokens(&self, now: Instant) -> f64 {
        self.refilled(now) as f64 / NANO as f64
    }

    /// Takes one token at `now`; when the bucket holds less than one, takes nothing and says how long until it
    /// holds one again. A `now` earlier than the last time asked counts as that time.
    pub fn take(&mut self, now: Instant) -> Result<(), Duration> {
        let nanos = self.refilled(now);
        self.nanos = nanos;
        self.at = self.at.max(now);
        if nanos >= NANO {
            self.nanos -= NANO;
            return Ok(());
        }
        // Whole nanoseconds, rounded up, until the missing part of a token has been added.
        let missing = NANO - nanos;
        let wait = (missing * NANO).div_ceil(self.limit.refill_nanos());
        Err(Duration::from_nanos(u64::try_from(wait).unwrap_or(u64::MAX)))
    }

    fn refilled(&self, now: Instant) -> u128 {
        let elapsed = now.saturating_duration_since(self.at).as_nanos();
        let added = elapsed.saturating_mul(self.limit.refill_nanos()) / NANO;
        self.nanos.saturating_add(added).min(u128::from(self.limit.capacity) * NANO)
    }
}

/// The `Retry-After` seconds for a wait: whole seconds, rounded up, at least 1.
pub fn retry_after_secs(wait: Duration) -> u64 {
    let secs = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
    secs.max(1)
}

/// The rate limit as the control API set it, and every user's bucket. Off by default.
#[derive(Debug, Clone, Default)]
pub struct RateLimiter {
    /// The limit in force, or `None` when rate limiting is off.
    pub limit: Option<RateLimit>,
    /// Buckets by user slug, made full at a user's first request after the limit was set.
    buckets: BTreeMap<String, TokenBucket>,
}

impl RateLimiter {
    /// Turns rate limiting on with `limit`, or off with `None`; every bucket starts again full.
    pub fn set(&mut self, limit: Option<RateLimit>) {
        self.limit = limit;
        self.buckets.clear();
    }

    /// Whether `user`'s request at `now` goes ahead (taking a token), or the `Retry-After` seconds to refuse it
    /// with. Always goes ahead when rate limiting is off.
    pub fn admit(&mut self, user: &str, now: Instant) -> Result<(), u64> {
        let Some(limit) = self.limit else {
            return Ok(());
        };
        let bucket = self.buckets.entry(user.to_string()).or_insert_with(|| TokenBucket::full(limit, now));
        bucket.take(now).map_err(retry_after_secs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(t0: Instant, ms: u64) -> Instant {
        t0 + Duration::from_millis(ms)
    }

    #[test]
    fn a_full_bucket_allows_a_burst_of_its_size_then_refuses() {
        let t0 = Instant::now();
        let mut b = TokenBucket::full(RateLimit { capacity: 60, refill: 5.0 }, t0);
        for i in 0..60 {
            assert_eq!(b.take(t0), Ok(()), "request {i}");
        }
        // Empty: one token comes back after 1/5 s, so Retry-After rounds 200 ms up to 1 s.
        assert_eq!(b.take(t0), Err(Duration::from_millis(200)));
        assert_eq!(retry_after_secs(Duration::from_millis(200)), 1);
    }

    #[test]
    fn tokens_come_back_at_the_refill_rate_and_never_past_the_size() {
        let t0 = Instant::now();
        let mut b = TokenBucket::full(RateLimit { capacity: 3, refill: 5.0 }, t0);
        for _ in 0..3 {
            assert_eq!(b.take(t0), Ok(()));
        }
        assert_eq!(b.take(ms(t0, 199)), Err(Duration::from_millis(1)));
        assert_eq!(b.take(ms(t0, 200)), Ok(()), "one token after 200 ms");
        assert!(b.take(ms(t0, 200)).is_err());
        assert_eq!(b.tokens(ms(t0, 600)), 2.0);
        assert_eq!(b.tokens(ms(t0, 60_000)), 3.0, "full, no more");
        for _ in 0..3 {
            assert_eq!(b.take(ms(t0, 60_000)), Ok(()));
        }
        assert!(b.take(ms(t0, 60_000)).is_err());
    }

    #[test]
    fn a_fractional_refill_makes_retry_after_whole_seconds_rounded_up() {
        let t0 = Instant::now();
        let mut b = TokenBucket::full(RateLimit { capacity: 1, refill: 0.4 }, t0);
        assert_eq!(b.take(t0), Ok(()));
        // 2.5 s for one token at 0.4 a second: Retry-After 3.
        assert_eq!(b.take(t0), Err(Duration::from_millis(2500)));
        assert_eq!(retry_after_secs(Duration::from_millis(2500)), 3);
        // A second later 0.4 of a token is there: 1.5 s to go, Retry-After 2.
        assert_eq!(b.take(ms(t0, 1000)), Err(Duration::from_millis(1500)));
        assert_eq!(retry_after_secs(Duration::from_millis(1500)), 2);
        assert_eq!(b.take(ms(t0, 2500)), Ok(()));
        assert_eq!(retry_after_secs(Duration::from_secs(4)), 4, "whole seconds stay as they are");
        assert_eq!(retry_after_secs(Duration::ZERO), 1, "at least 1");
    }

    #[test]
    fn a_refused_request_takes_no_token_and_an_earlier_time_adds_none() {
        let t0 = Instant::now();
        let mut b = TokenBucket::full(RateLimit { capacity: 1, refill: 1.0 }, t0);
        assert_eq!(b.take(ms(t0, 500)), Ok(()));
        for _ in 0..5 {
            assert!(b.take(ms(t0, 700)).is_err());
        }
        assert!(b.take(t0).is_err(), "the clock never runs back");
        assert_eq!(b.take(ms(t0, 1500)), Ok(()), "refused requests took nothing");
    }

    #[test]
    fn each_user_has_a_bucket_of_their_own_and_none_when_off() {
        let t0 = Instant::now();
        let mut r = RateLimiter::default();
        for _ in 0..100 {
            assert_eq!(r.admit("alice", t0), Ok(()), "off by default");
        }
        r.set(Some(RateLimit { capacity: 2, refill: 0.5 }));
        assert_eq!(r.admit("alice", t0), Ok(()));
        assert_eq!(r.admit("alice", t0), Ok(()));
        assert_eq!(r.admit("alice", t0), Err(2));
        assert_eq!(r.admit("bob", t0), Ok(()), "bob's bucket is his own and starts full");
        r.set(Some(RateLimit { capacity: 2, refill: 0.5 }));
        assert_eq!(r.admit("alice", t0), Ok(()), "setting the limit again fills every bucket");
        r.set(None);
        for _ in 0..100 {
            assert_eq!(r.admit("alice", t0), Ok(()));
        }
    }

    #[test]
    fn a_limit_needs_a_capacity_and_a_positive_refill() {
        assert!(RateLimit::new(0, 5.0).is_err());
        assert!(RateLimit::new(1, 0.0).is_err());
        assert!(RateLimit::new(1, -1.0).is_err());
        assert!(RateLimit::new(1, f64::NAN).is_err());
        assert!(RateLimit::new(1, f64::INFINITY).is_err());
        assert!(RateLimit::new(1, 0.001).is_ok());
    }
}
