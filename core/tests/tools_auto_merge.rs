//! `enable_auto_merge` and `disable_auto_merge` against the stand-in: on (merged once the checks pass, or at once
//! when they already do), off for the repository (Bitbucket's 403, in its words), and unavailable on a server
//! older than 8.15 (nothing is written: an older server would merge at once).
#![allow(clippy::unwrap_used, clippy::panic)]

mod stack_harness;

use bb_stack::model::PrState;
use serde_json::{Value, json};
use stack_harness::StackHarness;

fn pr(id: u64) -> Value {
    json!({"project": "BB", "repo": "api", "pr_id": id})
}

fn key(id: u64) -> ((String, String), u64) {
    (("BB".to_owned(), "api".to_owned()), id)
}

#[test]
fn auto_merge_of_a_vetoed_pull_request_is_recorded_and_it_stays_open_until_cancelled() {
    let mut d = StackHarness::new();
    let version = d.world.model.prs[&key(10)].version;
    let a = d.call("enable_auto_merge", pr(10));
    assert!(!a.is_error, "{}", a.text);
    assert_eq!(
        d.requests,
        [
            "GET /rest/api/latest/application-properties?".to_owned(),
            "GET /rest/api/latest/projects/BB/repos/api/pull-requests/10?".to_owned(),
            format!("POST /rest/api/latest/projects/BB/repos/api/pull-requests/10/merge?version={version}"),
        ]
    );
    assert_eq!(d.bodies[0], json!({"version": version, "autoMerge": true}));
    assert!(a.text.starts_with("Auto-merge is on for PR #10 in BB/api: Bitbucket merges it into "), "{}", a.text);
    assert!(d.world.model.prs[&key(10)].auto_merge.is_some());
    assert_eq!(d.world.model.prs[&key(10)].state, PrState::Open);

    let off = d.call("disable_auto_merge", pr(10));
    assert!(!off.is_error, "{}", off.text);
    assert_eq!(d.requests, ["DELETE /rest/api/latest/projects/BB/repos/api/pull-requests/10/auto-merge?"]);
    assert_eq!(off.text, "Auto-merge is off for PR #10 in BB/api: it stays open until merged.");
    assert!(d.world.model.prs[&key(10)].auto_merge.is_none());
    let again = d.call("disable_auto_merge", pr(10));
    assert!(!again.is_error, "cancelling twice changes nothing more: {}", again.text);
}

#[test]
fn auto_merge_of_a_pull_request_whose_checks_pass_merges_it_now_and_says_so() {
    let mut d = StackHarness::new();
    let a = d.call("enable_auto_merge", pr(11));
    assert!(!a.is_error, "{}", a.text);
    assert_eq!(a.text, "PR #11 in BB/api merged now: its merge checks already passed.");
    assert_eq!(d.world.model.prs[&key(11)].state, PrState::Merged);
}

#[test]
fn auto_merge_turned_off_for_the_repository_is_said_in_bitbuckets_words() {
    let mut d = StackHarness::new();
    d.world.model.repos.get_mut(&("BB".to_owned(), "api".to_owned())).unwrap().auto_merge = false;
    let a = d.call("enable_auto_merge", pr(10));
    assert!(a.is_error);
    assert!(
        a.text.starts_with("Auto-merge is turned off for BB/api (Bitbucket: \"The auto-merge setting is not enabled"),
        "{}",
        a.text
    );
    assert!(a.text.contains("nothing was changed"), "{}", a.text);
    assert!(d.world.model.prs[&key(10)].auto_merge.is_none());
    assert_eq!(d.world.model.prs[&key(10)].state, PrState::Open);
}

#[test]
fn a_server_older_than_8_15_is_named_and_nothing_is_written_to_it() {
    let mut d = StackHarness::new();
    d.world.model.application["version"] = json!("8.14.2");
    let a = d.call("enable_auto_merge", pr(11));
    assert!(a.is_error);
    assert_eq!(
        a.text,
        "This Bitbucket is 8.14.2, and auto-merge came in 8.15: nothing was changed (merge_pull_request merges now)."
    );
    assert_eq!(d.count("POST", ""), 0, "an older server would merge at once: {:?}", d.requests);
    assert_eq!(d.world.model.prs[&key(11)].state, PrState::Open);

    let off = d.call("disable_auto_merge", pr(10));
    assert!(off.is_error);
    assert_eq!(off.text, "This Bitbucket is 8.14.2, and auto-merge came in 8.15: nothing was changed.");
    assert_eq!(d.requests.len(), 2, "the 404, then the version: {:?}", d.requests);
}

#[test]
fn a_pull_request_that_is_not_open_or_does_not_exist_is_said_without_writing() {
    let mut d = StackHarness::new();
    let merged = d.call("enable_auto_merge", pr(4));
    assert!(merged.is_error);
    assert_eq!(merged.text, "PR #4 in BB/api is merged: only an open pull request merges.");
    assert_eq!(d.count("POST", ""), 0);
    let missing = d.call("disable_auto_merge", pr(999));
    assert!(missing.is_error);
    assert_eq!(missing.text, "Pull request #999 does not exist in BB/api.");
    assert_eq!(d.requests.len(), 1, "a missing pull request is not an older server: {:?}", d.requests);
    let closed = d.call("disable_auto_merge", pr(4));
    assert!(closed.is_error);
    assert!(closed.text.starts_with("Bitbucket refused: "), "{}", closed.text);
}

#[test]
fn a_write_that_fails_is_sent_once_and_says_its_outcome_is_unknown() {
    let mut d = StackHarness::new();
    d.fault("/rest/api/latest/projects/BB/repos/api/pull-requests/10/merge", 504, 5, None);
    let a = d.call("enable_auto_merge", pr(10));
    assert!(a.is_error);
    assert_eq!(d.count("POST", "/merge"), 1, "never retried");
    assert!(a.text.contains("outcome is unknown"), "{}", a.text);
}
