//! Whether a Bitbucket request that failed is tried again, and after how long.
//!
//! The shell makes an attempt, then asks [`decide`] with what it saw; the answer is [`Decision::Retry`]
//! (sleep, then make the next attempt) or [`Decision::Stop`] (report the last outcome to the session).
//!
//! ```text
//!   attempt n ──▶ outcome ──▶ decide(policy, method, n, outcome, jitter)
//!                                 ├─▶ Retry { after_ms }   sleep, attempt n + 1
//!                                 └─▶ Stop                 the outcome goes to the session
//! ```
//!
//! The rules, most specific first:
//! - `attempt` counts the attempts made so far (1 after the first); at most `policy.retries` retries follow it.
//! - POST is never retried: Bitbucket's POSTs create things (pull requests, comments, merges), and a
//!   repeated one may create a second.
//! - GET is retried on 429, 502, 503 and 504 and when no connection could be made or it broke; a GET
//!   that arrived twice does no harm.
//! - PUT and DELETE are retried only when Bitbucket cannot have acted on them: a 429 (rate limited before
//!   any work), a 503 (unavailable), or a connection that failed before the request was sent. Not on 502/504,
//!   where a gateway may have passed the request on, and never when it may have arrived: Bitbucket's PUTs
//!   carry a `version`, so a repeat of one that succeeded would come back as a misleading 409.
//! - Timeouts, TLS failures, broken or oversized answers and a missing configuration are not retried:
//!   a hung server stays hung (a retry would multiply the wait), and the others do not heal by themselves.
//! - `Retry-After` is honoured as sent; beyond `policy.max_retry_after_s` bb stops at once and the tool
//!   reports the rate limiting rather than leaving the person waiting.
//! - Otherwise the wait grows exponentially from `policy.base_ms`, capped at `policy.max_backoff_ms`;
//!   its upper half is scaled by `jitter_permille`, an input, so the function stays deterministic.

use crate::fetch::{FetchErrorKind, FetchOutcome, Method};

/// How hard the shell tries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first attempt (`BB_RETRY_COUNT`); 0 disables retrying.
    pub retries: u32,
    /// The wait before the first retry, in ms (before jitter).
    pub base_ms: u64,
    /// The longest computed wait between attempts, in ms.
    pub max_backoff_ms: u64,
    /// The longest `Retry-After` bb waits for, in seconds; a longer one stops retrying.
    pub max_retry_after_s: u64,
}

impl Default for RetryPolicy {
    /// Three retries, 250 ms doubling to at most 8 s, `Retry-After` honoured up to 30 s.
    fn default() -> Self {
        RetryPolicy { retries: 3, base_ms: 250, max_backoff_ms: 8_000, max_retry_after_s: 30 }
    }
}

/// What to do after an attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Wait this long, then try again.
    Retry {
        /// How long to sleep before the next attempt: `Retry-After` when Bitbucket sent one, else the backoff.
        after_ms: u64,
    },
    /// Report this outcome.
    Stop,
}

/// Decides whether attempt number `attempt` (1-based) of a `method` request that ended in `outcome` is
/// retried. `jitter_permille` (0..=1000, larger values are clamped) scales the upper half of the backoff.
pub fn decide(
    policy: &RetryPolicy,
    method: Method,
    attempt: u32,
    outcome: &FetchOutcome,
    jitter_permille: u16,
) -> Decision {
    if attempt > policy.retries || method == Method::Post {
        return Decision::Stop;
    }
    let get = method == Method::Get;
    match outcome {
        FetchOutcome::Response(r) => {
            let retryable = match r.status {
                429 | 503 => true,
                502 | 504 => get,
                _ => false,
            };
            if !retryable {
                return Decision::Stop;
            }
            match r.retry_after_s {
                Some(s) if s > policy.max_retry_after_s => Decision::Stop,
                Some(s) => Decision::Retry { after_ms: s.saturating_mul(1000) },
                None => Decision::Retry { after_ms: backoff(policy, attempt, jitter_permille) },
            }
        }
        FetchOutcome::Failed(e) => {
            let retryable = e.kind == FetchErrorKind::Unreachable && (get || !e.may_have_arrived);
            if retryable {
                Decision::Retry { after_ms: backoff(policy, attempt, jitter_permille) }
            } else {
                Decision::Stop
            }
        }
    }
}

/// `base · 2^(attempt-1)`, capped, with its upper half scaled by the jitter ("equal jitter").
fn backoff(policy: &RetryPolicy, attempt: u32, jitter_permille: u16) -> u64 {
    let shift = attempt.saturating_sub(1).min(32);
    let full = policy.base_ms.saturating_mul(1u64 << shift).min(policy.max_backoff_ms);
    let half = full / 2;
    half + (full - half) * u64::from(jitter_permille.min(1000)) / 1000
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fetch::{FetchError, FetchResponse};

    const P: RetryPolicy = RetryPolicy { retries: 3, base_ms: 100, max_backoff_ms: 1_000, max_retry_after_s: 30 };

    fn status(status: u16) -> FetchOutcome {
        FetchOutcome::response(status, "{}")
    }

    fn limited(retry_after_s: u64) -> FetchOutcome {
        FetchOutcome::Response(FetchResponse {
            status: 429,
            body: vec![],
            retry_after_s: Some(retry_after_s),
            user: None,
            decoded: None,
            credential: Default::default(),
        })
    }

    fn failed(kind: FetchErrorKind, may_have_arrived: bool) -> FetchOutcome {
        FetchOutcome::Failed(FetchError { kind, detail: String::new(), may_have_arrived })
    }

    #[test]
    fn a_get_is_retried_on_gateway_and_rate_limit_statuses_only() {
        for s in [429, 502, 503, 504] {
            assert!(matches!(decide(&P, Method::Get, 1, &status(s), 1000), Decision::Retry { .. }), "{s}");
        }
        for s in [200, 201, 204, 400, 401, 404, 409, 500, 501] {
            assert_eq!(decide(&P, Method::Get, 1, &status(s), 1000), Decision::Stop, "{s}");
        }
    }

    #[test]
    fn a_post_is_never_retried_whatever_happened() {
        for o in [status(429), status(503), limited(1), failed(FetchErrorKind::Unreachable, false)] {
            assert_eq!(decide(&P, Method::Post, 1, &o, 0), Decision::Stop, "{o:?}");
        }
    }

    #[test]
    fn put_and_delete_are_retried_only_when_bitbucket_cannot_have_acted() {
        for m in [Method::Put, Method::Delete] {
            assert!(matches!(decide(&P, m, 1, &status(429), 0), Decision::Retry { .. }));
            assert!(matches!(decide(&P, m, 1, &status(503), 0), Decision::Retry { .. }));
            assert!(matches!(decide(&P, m, 1, &failed(FetchErrorKind::Unreachable, false), 0), Decision::Retry { .. }));
            assert_eq!(decide(&P, m, 1, &status(502), 0), Decision::Stop);
            assert_eq!(decide(&P, m, 1, &status(504), 0), Decision::Stop);
            assert_eq!(decide(&P, m, 1, &failed(FetchErrorKind::Unreachable, true), 0), Decision::Stop);
        }
    }

    #[test]
    fn a_get_whose_connection_broke_is_retried_even_if_it_arrived() {
        assert!(matches!(
            decide(&P, Method::Get, 1, &failed(FetchErrorKind::Unreachable, true), 0),
            Decision::Retry { .. }
        ));
    }

    #[test]
    fn timeouts_tls_broken_answers_and_no_configuration_are_final() {
        for kind in [
            FetchErrorKind::Timeout,
            FetchErrorKind::Tls,
            FetchErrorKind::BrokenResponse,
            FetchErrorKind::NotConfigured,
        ] {
            assert_eq!(decide(&P, Method::Get, 1, &failed(kind, false), 0), Decision::Stop, "{kind:?}");
        }
    }

    #[test]
    fn retries_stop_after_the_configured_count() {
        assert!(matches!(decide(&P, Method::Get, 3, &status(503), 0), Decision::Retry { .. }));
        assert_eq!(decide(&P, Method::Get, 4, &status(503), 0), Decision::Stop);
        let none = RetryPolicy { retries: 0, ..P };
        assert_eq!(decide(&none, Method::Get, 1, &status(503), 0), Decision::Stop);
    }

    #[test]
    fn the_backoff_doubles_up_to_its_cap() {
        let waits: Vec<u64> = (1..=6)
            .map(|n| match decide(&RetryPolicy { retries: 10, ..P }, Method::Get, n, &status(502), 1000) {
                Decision::Retry { after_ms } => after_ms,
                Decision::Stop => 0,
            })
            .collect();
        assert_eq!(waits, [100, 200, 400, 800, 1000, 1000]);
    }

    #[test]
    fn jitter_from_the_input_scales_the_upper_half_of_the_wait() {
        assert_eq!(decide(&P, Method::Get, 2, &status(502), 0), Decision::Retry { after_ms: 100 });
        assert_eq!(decide(&P, Method::Get, 2, &status(502), 500), Decision::Retry { after_ms: 150 });
        assert_eq!(decide(&P, Method::Get, 2, &status(502), u16::MAX), Decision::Retry { after_ms: 200 });
    }

    #[test]
    fn retry_after_is_honoured_up_to_the_cap_and_beyond_it_bb_stops() {
        assert_eq!(decide(&P, Method::Get, 1, &limited(7), 0), Decision::Retry { after_ms: 7_000 });
        assert_eq!(decide(&P, Method::Get, 1, &limited(30), 0), Decision::Retry { after_ms: 30_000 });
        assert_eq!(decide(&P, Method::Get, 1, &limited(31), 0), Decision::Stop);
        assert_eq!(decide(&P, Method::Get, 1, &limited(u64::MAX), 0), Decision::Stop);
    }

    #[test]
    fn huge_attempt_numbers_do_not_overflow() {
        let p = RetryPolicy { retries: u32::MAX, base_ms: u64::MAX, ..P };
        assert_eq!(decide(&p, Method::Get, u32::MAX - 1, &status(503), 1000), Decision::Retry { after_ms: 1_000 });
    }
}
