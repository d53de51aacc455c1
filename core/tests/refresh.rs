//! `refresh_view` against the stand-in: an unchanged state answers small with the reads it needs, a
//! build finishing and a comment (which leaves the pull request's version alone) are seen, a merged
//! pull request stops being asked for, navigation answers another call whole; and the cadence's
//! properties over simulated time.
#![allow(clippy::unwrap_used, clippy::panic, clippy::expect_used)]

mod stack_harness;

use bb_core::testing::views::refresh::{self, Fingerprint, Motion};
use proptest::prelude::*;
use serde_json::{Value, json};
use stack_harness::StackHarness;

/// A wall-clock time after everything in the seed happened.
const NOW: u64 = 1_766_000_000_000;

fn card() -> Value {
    json!({"kind": "pull_request", "project": "BB", "repo": "api", "pr_id": 1})
}

fn view(answer: &stack_harness::Answer) -> &Value {
    &answer.raw["_meta"]["bb/view"]
}

fn refresh(d: &mut StackHarness, show: &Value, fingerprint: &Value) -> stack_harness::Answer {
    d.call("refresh_view", json!({"show": show, "fingerprint": fingerprint}))
}

fn set_build(d: &mut StackHarness, state: &str) {
    d.control(
        "POST",
        "/builds",
        json!({"project": "BB", "repo": "api", "pullRequest": 1, "key": "ci-unit", "state": state,
               "url": "https://ci.example.invalid/ci-unit-43", "name": "Unit tests"}),
    );
}

#[test]
fn an_unchanged_card_answers_small_after_the_reads_it_needs() {
    let mut d = StackHarness::with_views();
    d.advance(NOW);
    let shown = d.call("show", card());
    let reads_of_show = d.requests.iter().filter(|r| !r.contains("avatar")).count();
    let fp = view(&shown)["fingerprint"].clone();
    assert!(fp.as_str().is_some_and(|f| Fingerprint::parse(f).is_some()), "{fp}");
    assert!(view(&shown)["next"].is_u64());
    d.advance(20_000);
    let again = refresh(&mut d, &card(), &fp);
    assert!(!again.is_error, "{}", again.text);
    assert_eq!(view(&again)["unchanged"], true, "{}", again.raw);
    assert_eq!(view(&again)["fingerprint"], fp, "the same state, seen since the show");
    assert!(view(&again)["readAt"].as_u64().unwrap() > NOW);
    let bytes = json!({"jsonrpc": "2.0", "id": 99, "result": again.raw}).to_string().len();
    assert!(bytes < 300, "an unchanged answer is {bytes} bytes: {}", again.raw);
    // The same reads as the show, and no avatar again (they are cached).
    assert_eq!(d.requests.len(), reads_of_show, "{:?}", d.requests);
}

#[test]
fn a_build_finishing_is_seen_and_the_cadence_relaxes_after() {
    let mut d = StackHarness::with_views();
    d.advance(NOW);
    set_build(&mut d, "INPROGRESS");
    let shown = d.call("show", card());
    let running = view(&shown)["next"].as_u64().unwrap();
    assert!(running <= 2 * refresh::MOTION_MS, "a running build is watched closely: {running}");
    let fp = view(&shown)["fingerprint"].clone();
    d.advance(running);
    set_build(&mut d, "SUCCESSFUL");
    let changed = refresh(&mut d, &card(), &fp);
    let v = view(&changed);
    assert!(v.get("unchanged").is_none());
    let unit = v["pullRequest"]["builds"]["items"].as_array().unwrap().iter().find(|b| b["key"] == "ci-unit");
    assert_eq!(unit.unwrap()["state"], "SUCCESSFUL", "{}", v["pullRequest"]["builds"]);
    // Nothing runs any more: the lint build of the seed is still in progress, so finish it too.
    let fp = v["fingerprint"].clone();
    d.control(
        "POST",
        "/builds",
        json!({"project": "BB", "repo": "api", "pullRequest": 1, "key": "BB-LINT-7", "state": "SUCCESSFUL", "url": "https://ci.example.invalid/BB-LINT-7"}),
    );
    d.advance(5_000);
    let settled = refresh(&mut d, &card(), &fp);
    let fp = view(&settled)["fingerprint"].clone();
    let mut last = 0;
    for _ in 0..12 {
        let next = view(&refresh(&mut d, &card(), &fp))["next"].as_u64().unwrap();
        assert!(next > refresh::MOTION_MS, "quiet: {next}");
        d.advance(next);
        last = next;
    }
    assert!(last >= 30_000, "backs off while quiet: {last}");
}

#[test]
fn a_comment_is_seen_though_the_version_did_not_move() {
    let mut d = StackHarness::with_views();
    d.advance(NOW);
    let shown = d.call("show", card());
    let version = view(&shown)["pullRequest"]["version"].clone();
    let fp = view(&shown)["fingerprint"].clone();
    d.control(
        "POST",
        "/comments",
        json!({"project": "BB", "repo": "api", "pullRequest": 1, "user": "carol", "text": "Looks good now."}),
    );
    d.advance(15_000);
    let changed = refresh(&mut d, &card(), &fp);
    let v = view(&changed);
    assert!(v.get("unchanged").is_none(), "{}", changed.raw);
    assert_eq!(v["pullRequest"]["version"], version);
    assert!(v["pullRequest"]["activity"].to_string().contains("Looks good now."));
    assert_ne!(v["fingerprint"], fp);
}

#[test]
fn a_merged_pull_request_stops_being_asked_for_once_still() {
    let mut d = StackHarness::with_views();
    d.advance(NOW);
    // #11: every build finished and passed, no open task, no Needs work: nothing vetoes its merge.
    let card = json!({"kind": "pull_request", "project": "BB", "repo": "api", "pr_id": 11});
    let shown = d.call("show", card.clone());
    let fp = view(&shown)["fingerprint"].clone();
    let version = view(&shown)["pullRequest"]["version"].clone();
    let merged = d.call("merge_pull_request", json!({"project": "BB", "repo": "api", "pr_id": 11, "version": version}));
    assert!(!merged.is_error, "{}", merged.text);
    d.advance(10_000);
    let changed = refresh(&mut d, &card, &fp);
    assert_eq!(view(&changed)["pullRequest"]["state"], "MERGED");
    assert!(view(&changed)["next"].is_u64(), "just merged: still read a while");
    let fp = view(&changed)["fingerprint"].clone();
    d.advance(3 * 60_000);
    let still = refresh(&mut d, &card, &fp);
    assert_eq!(view(&still)["unchanged"], true);
    assert_eq!(view(&still)["next"], Value::Null, "merged and still: not again");
}

#[test]
fn navigation_answers_another_call_whole_and_a_bad_fingerprint_is_no_fingerprint() {
    let mut d = StackHarness::with_views();
    d.advance(NOW);
    let list = json!({"kind": "pull_requests", "project": "BB", "repo": "api", "state": "MERGED"});
    let opened = refresh(&mut d, &list, &Value::Null);
    assert_eq!(view(&opened)["kind"], "pull_requests");
    assert_eq!(view(&opened)["list"]["filter"], "MERGED");
    assert!(opened.text.len() < 40, "a few words: {}", opened.text);
    let forged = refresh(&mut d, &card(), &json!("../../etc/passwd"));
    assert_eq!(view(&forged)["kind"], "pull_request", "answered whole");
    let bad = d.call("refresh_view", json!({"show": {"kind": "nope"}}));
    assert!(bad.is_error);
    let missing =
        d.call("refresh_view", json!({"show": {"kind": "pull_request", "project": "BB", "repo": "api", "pr_id": 999}}));
    assert!(missing.is_error);
    let next = view(&missing)["next"].as_u64().unwrap();
    assert!((refresh::ERROR_MS * 3 / 4..refresh::ERROR_MS * 7 / 4).contains(&next), "asks again later: {next}");
}

fn arb_motion() -> impl Strategy<Value = Motion> {
    (any::<bool>(), proptest::option::of(0u64..NOW), proptest::option::of(0u64..NOW), any::<bool>())
        .prop_map(|(moving, last_change, closed_at, settled)| Motion { moving, last_change, closed_at, settled })
}

fn config() -> ProptestConfig {
    let seed: u64 = std::env::var("BB_PROPTEST_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(187);
    let mut c = ProptestConfig::with_cases(512);
    c.rng_seed = proptest::test_runner::RngSeed::Fixed(seed);
    c
}

proptest! {
    #![proptest_config(config())]

    /// Never more often than the floor: ¾ of the quickest interval.
    #[test]
    fn never_more_often_than_the_floor(m in arb_motion(), quiet in 0u64..86_400_000, now in NOW..NOW + 86_400_000) {
        if let Some(i) = refresh::interval_ms(m, quiet, now) {
            let next = refresh::on_grid(i, now);
            prop_assert!(next >= refresh::MOTION_MS * 3 / 4);
            prop_assert_eq!((now + next) % i, 0);
        }
    }

    /// The longer nothing changes, the longer the interval (or none).
    #[test]
    fn always_backing_off_while_quiet(m in arb_motion(), a in 0u64..86_400_000, more in 0u64..86_400_000, now in NOW..NOW + 86_400_000) {
        let sooner = refresh::interval_ms(m, a, now);
        let later = refresh::interval_ms(m, a + more, now);
        match (sooner, later) {
            (Some(s), Some(l)) => prop_assert!(l >= s),
            (None, Some(_)) => prop_assert!(false, "asked again after stopping"),
            _ => {}
        }
    }

    /// Closed and still: not asked again; in motion: always asked again.
    #[test]
    fn stopping_when_closed_and_still(m in arb_motion(), quiet in 120_000u64..86_400_000, now in NOW..NOW + 86_400_000) {
        let i = refresh::interval_ms(m, quiet, now);
        if m.moving {
            prop_assert_eq!(i, Some(refresh::MOTION_MS));
        } else if m.closed_at.is_some() {
            prop_assert_eq!(i, None);
        } else {
            prop_assert!(i.is_some());
        }
    }
}

#[test]
fn a_client_that_shows_no_views_has_no_refresh_view_and_nothing_is_read() {
    let mut d = StackHarness::new();
    let a = refresh(&mut d, &card(), &json!("0000000000000000.0"));
    assert!(a.is_error && a.text.starts_with("Unknown tool: `refresh_view`"), "{}", a.text);
    assert!(d.requests.is_empty(), "{:?}", d.requests);
}

#[test]
fn refresh_view_checks_the_show_call_it_carries_as_show_does_and_sends_nothing_bad() {
    let mut d = StackHarness::with_views();
    for (project, why) in [("..", "cannot be `.` or `..`"), (&*"K".repeat(100_000), "longer than 256 characters")] {
        let show = json!({"kind": "pull_request", "project": project, "repo": "api", "pr_id": 1});
        let a = refresh(&mut d, &show, &json!(null));
        assert!(a.is_error, "{}", a.text);
        assert!(a.text.contains(why), "{}", a.text);
        let direct = d.call("show", show);
        assert_eq!((direct.is_error, direct.text.contains(why)), (true, true), "show says the same: {}", direct.text);
    }
    assert!(d.requests.is_empty(), "{:?}", d.requests);
}

#[test]
fn a_refresh_held_back_for_the_rate_limit_keeps_what_the_view_draws_and_asks_again_later() {
    use bb_core::{FetchError, FetchErrorKind, FetchOutcome};
    use std::sync::{Arc, Mutex};
    let mut d = StackHarness::with_views();
    d.advance(NOW);
    // The shell sees which reads are refreshes; it holds every refresh back for 12 s.
    let seen: Arc<Mutex<Vec<(String, bool)>>> = Arc::default();
    let log = Arc::clone(&seen);
    d.answer_with(move |r| {
        log.lock().unwrap().push((r.path.clone(), r.refresh.is_some()));
        r.refresh.is_some().then(|| {
            FetchOutcome::Failed(FetchError {
                kind: FetchErrorKind::Deferred { after_ms: 12_000 },
                detail: "held back".into(),
                may_have_arrived: false,
            })
        })
    });
    let shown = d.call("show", card());
    assert!(!shown.is_error, "{}", shown.text);
    assert!(seen.lock().unwrap().iter().all(|(_, refresh)| !refresh), "the model's show is not a refresh");
    let fp = view(&shown)["fingerprint"].clone();
    seen.lock().unwrap().clear();
    d.advance(20_000);
    let again = refresh(&mut d, &card(), &fp);
    assert!(!again.is_error, "{}", again.text);
    assert!(!seen.lock().unwrap().is_empty() && seen.lock().unwrap().iter().all(|(_, refresh)| *refresh));
    let m = view(&again);
    assert_eq!(m["unchanged"], true, "{}", again.raw);
    assert_eq!(m["deferred"], true);
    assert_eq!(m["fingerprint"], fp, "what the view draws stands");
    assert_eq!(m["next"], 12_000, "asked again once the budget has room");
    assert!(m.get("readAt").is_none(), "nothing was read: the view keeps when it last read Bitbucket");
    assert!(again.text.contains("rate limit"), "{}", again.text);
    // Navigation in place (no fingerprint) is the person's own click: never held back.
    seen.lock().unwrap().clear();
    let opened = d.call("refresh_view", json!({"show": card()}));
    assert!(!opened.is_error && view(&opened)["pullRequest"].is_object(), "{}", opened.text);
    assert!(seen.lock().unwrap().iter().all(|(_, refresh)| !refresh));
}
