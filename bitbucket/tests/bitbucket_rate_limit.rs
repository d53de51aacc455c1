//! bb keeps to the Bitbucket user's rate limit against the stand-in's limiter (Bitbucket's: a token
//! bucket per user, 429 with `Retry-After` when it is empty): the model's requests spend bb's bucket
//! first and wait their turn rather than meet a 429; a live view's refreshes spend only its upper half
//! and are deferred, never sent, below it; a 429 caused by someone else with the same user pauses
//! every request of that user for its `Retry-After`, and a refresh then is deferred without reaching
//! Bitbucket. No timing is asserted: only what reached the stand-in and what came back.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod io_support;

use bb_bitbucket::Client;
use bb_bitbucket::options::RateLimit;
use bb_core::FetchErrorKind;
use bb_drive::{Bitbucket, Cancel};
use io_support::*;

/// A refresh of one read, in a batch of its own.
fn refresh(path: &str) -> bb_core::FetchRequest {
    static BATCH: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let mut r = get(path);
    let id = BATCH.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    r.refresh = Some(bb_core::Batch { id, reads: 1 });
    r
}

#[test]
fn the_model_spends_the_bucket_first_refreshes_only_its_upper_half_and_bitbucket_refuses_nothing() {
    let stack = stack();
    let ctl = control_client(&stack, |_| {});
    let control = Control::new(&ctl);
    // Bitbucket's limiter and bb's own budget alike: a bucket of 10, a token every 2 s (slow, so a
    // slow machine's loop refills next to nothing while it runs).
    control.rate_limit(10, 0.5);
    let limit = RateLimit { capacity: 10.0, refill_per_s: 0.5 };
    let bb = client(&stack, |c| c.rate_limit = Some(limit));
    // Refreshes take the upper half (5 of 10) and are deferred after it, unsent.
    let mut sent = 0;
    let mut deferred = 0;
    for _ in 0..8 {
        match bb.fetch(refresh(PR1), None, &Cancel::new()) {
            bb_core::FetchOutcome::Response(r) => {
                assert_eq!(r.status, 200);
                sent += 1;
            }
            bb_core::FetchOutcome::Failed(e) => {
                assert!(matches!(e.kind, FetchErrorKind::Deferred { after_ms } if after_ms > 0), "{e:?}");
                deferred += 1;
            }
        }
    }
    assert!((5..=6).contains(&sent), "refreshes sent while the bucket was past half: {sent}");
    assert_eq!(sent + deferred, 8);
    // The model's requests: the rest of the bucket, then one waits for its token; none is refused.
    for _ in 0..6 {
        assert_eq!(response(bb.fetch(get(PR1), None, &Cancel::new())).status, 200);
    }
    let counters = control.requests();
    let log: Vec<String> = control
        .log()
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            format!(
                "{:.1}-{:.1} {}",
                r["startMs"].as_f64().unwrap_or(0.0),
                r["endMs"].as_f64().unwrap_or(0.0),
                r["status"]
            )
        })
        .collect();
    assert_eq!(counters["rateLimited"], 0, "bb kept within the limit: {counters} {log:?}");
    assert_eq!(control.count(&format!("GET {PR1}")), sent + 6, "a deferred refresh never reached Bitbucket");
}

#[test]
fn a_429_caused_by_someone_else_pauses_the_user_and_defers_refreshes_without_sending_them() {
    let stack = stack();
    let ctl = control_client(&stack, |_| {});
    let control = Control::new(&ctl);
    control.rate_limit(3, 1.0);
    // The person's browser (the same user, outside bb) spends Bitbucket's bucket.
    let browser = client(&stack, |c| {
        c.rate_limit = None;
        c.retry.retries = 0;
    });
    for _ in 0..3 {
        assert_eq!(response(browser.fetch(get(PR1), None, &Cancel::new())).status, 200);
    }
    let bb = client(&stack, |c| c.rate_limit = Some(RateLimit { capacity: 60.0, refill_per_s: 5.0 }));
    // bb's own bucket is full, so its refresh goes, meets Bitbucket's 429, and comes back deferred.
    let first = failure(bb.fetch(refresh(PR1), None, &Cancel::new()));
    assert!(matches!(first.kind, FetchErrorKind::Deferred { after_ms } if after_ms >= 1000), "{first:?}");
    assert_eq!(control.requests()["rateLimited"], 1);
    // The next refresh is deferred at once: the user is paused, Bitbucket is not asked.
    let before = control.count(&format!("GET {PR1}"));
    let second = failure(bb.fetch(refresh(PR1), None, &Cancel::new()));
    assert!(matches!(second.kind, FetchErrorKind::Deferred { .. }), "{second:?}");
    assert_eq!(control.count(&format!("GET {PR1}")), before, "a paused user's refresh is not sent");
    // The model's request waits out the pause and is answered.
    assert_eq!(response(bb.fetch(get(PR1), None, &Cancel::new())).status, 200);
    assert_eq!(control.requests()["rateLimited"], 1, "nothing of bb's met a 429 after the first");
}

#[test]
fn off_spends_nothing_and_bitbuckets_429_reaches_the_model_after_its_retries() {
    let stack = stack();
    let ctl = control_client(&stack, |_| {});
    let control = Control::new(&ctl);
    control.rate_limit(2, 0.001);
    let bb = client(&stack, |c| {
        c.rate_limit = None;
        c.retry.retries = 0;
    });
    for _ in 0..2 {
        assert_eq!(response(bb.fetch(get(PR1), None, &Cancel::new())).status, 200);
    }
    let refused = response(bb.fetch(get(PR1), None, &Cancel::new()));
    assert_eq!(refused.status, 429);
    assert!(refused.retry_after_s.is_some_and(|s| s >= 1));
}

#[test]
fn requests_without_credentials_spend_no_budget_as_bitbucket_limits_only_authenticated_ones() {
    let stack = stack();
    let bb = Client::new(
        bb_bitbucket::options::BitbucketConfig::new(&stack.base_url, bb_bitbucket::options::Auth::Anonymous)
            .map(|mut c| {
                c.rate_limit = Some(RateLimit { capacity: 1.0, refill_per_s: 0.001 });
                c
            })
            .unwrap(),
    )
    .unwrap();
    for _ in 0..5 {
        // Answered by the stand-in (whatever it says to nobody), never held back.
        let _ = response(bb.fetch(refresh(PR1), None, &Cancel::new()));
    }
}
