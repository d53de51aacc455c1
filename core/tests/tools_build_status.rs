//! `set_build_status` against the stand-in: a result posted on a commit is what get_build_status then
//! reads; the same key replaces it; a failed write is never retried and says the outcome is unknown.
#![allow(clippy::unwrap_used, clippy::panic)]

mod stack_harness;

use serde_json::json;
use stack_harness::StackHarness;

/// The source commit of BB/api #1 in the seed.
fn commit(d: &mut StackHarness) -> String {
    let key = (("BB".to_owned(), "api".to_owned()), 1);
    d.world.model.prs[&key].from_commit.clone()
}

#[test]
fn a_result_posted_is_read_back_and_the_same_key_replaces_it() {
    let mut d = StackHarness::new();
    let c = commit(&mut d);
    let set = |d: &mut StackHarness, state: &str| {
        d.call(
            "set_build_status",
            json!({"project": "BB", "repo": "api", "commit": c, "key": "bb-ci", "state": state,
                   "url": "https://ci.example.invalid/bb-ci/1", "name": "bb's CI"}),
        )
    };
    let a = set(&mut d, "INPROGRESS");
    assert!(!a.is_error, "{}", a.text);
    assert_eq!(d.requests.len(), 1, "{:?}", d.requests);
    assert!(d.requests[0].starts_with(&format!("POST /rest/api/latest/projects/BB/repos/api/commits/{c}/builds")));
    assert_eq!(a.text, format!("Build bb-ci on {} in BB/api is now INPROGRESS.", &c[..11.min(c.len())]));
    set(&mut d, "SUCCESSFUL");
    let builds = d.call("get_build_status", json!({"project": "BB", "repo": "api", "pr_id": 1}));
    assert!(builds.text.contains("bb-ci"), "{}", builds.text);
    let ours: Vec<&str> = builds.text.lines().filter(|l| l.contains("bb-ci")).collect();
    assert_eq!(ours.len(), 1, "replaced, not added: {ours:?}");
    assert!(ours[0].contains("SUCCESSFUL"), "{ours:?}");
}

#[test]
fn a_write_that_fails_is_sent_once_and_says_its_outcome_is_unknown() {
    let mut d = StackHarness::new();
    let c = commit(&mut d);
    d.fault("/rest/api/latest/projects/BB/repos/api/commits/", 503, 5, None);
    let a = d.call(
        "set_build_status",
        json!({"project": "BB", "repo": "api", "commit": c, "key": "bb-ci", "state": "FAILED", "url": "https://ci.example.invalid/x"}),
    );
    assert!(a.is_error);
    assert_eq!(d.count("POST", "/builds"), 1, "never retried");
    assert!(a.text.contains("unknown"), "{}", a.text);
}

#[test]
fn a_bad_state_or_address_is_refused_before_bitbucket_is_asked() {
    let mut d = StackHarness::new();
    for args in [
        json!({"project": "BB", "repo": "api", "commit": "abcdef1", "key": "k", "state": "GREEN", "url": "https://x"}),
        json!({"project": "BB", "repo": "api", "commit": "abcdef1", "key": "k", "state": "FAILED", "url": "javascript:alert(1)"}),
        json!({"project": "BB", "repo": "api", "commit": "../../x", "key": "k", "state": "FAILED", "url": "https://x"}),
    ] {
        let a = d.call("set_build_status", args);
        assert!(a.is_error, "{}", a.text);
        assert!(d.requests.is_empty(), "{:?}", d.requests);
    }
}

#[test]
fn an_unknown_repository_is_said_in_bitbuckets_words() {
    let mut d = StackHarness::new();
    let a = d.call(
        "set_build_status",
        json!({"project": "BB", "repo": "nope", "commit": "abcdef1", "key": "k", "state": "FAILED", "url": "https://x"}),
    );
    assert!(a.is_error);
    assert!(a.text.contains("nope"), "{}", a.text);
}
