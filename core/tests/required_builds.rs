//! Required builds against the stack: each matcher type, exemptions by source branch, ref filtering,
//! Bamboo-style parents, and the silences where bb cannot tell as Bitbucket's merge check would.
#![allow(clippy::unwrap_used, clippy::panic)]

mod stack_harness;

use serde_json::{Value, json};
use stack_harness::StackHarness;

/// The card's required keys and their states for a BB/api pull request.
fn required(d: &mut StackHarness, id: u64) -> Option<Vec<(String, String)>> {
    let a = d.call("show", json!({"kind": "pull_request", "project": "BB", "repo": "api", "pr_id": id}));
    assert!(!a.is_error, "{}", a.text);
    let req = a.raw["_meta"]["bb/view"]["pullRequest"]["builds"]["requirements"].clone();
    if req.is_null() {
        return None;
    }
    Some(
        req["keys"]
            .as_array()
            .unwrap()
            .iter()
            .map(|k| (k["key"].as_str().unwrap().to_owned(), k["state"].as_str().unwrap().to_owned()))
            .collect(),
    )
}

fn keys(list: &[(String, String)]) -> Vec<&str> {
    list.iter().map(|(k, _)| k.as_str()).collect()
}

fn state<'a>(list: &'a [(String, String)], key: &str) -> Option<&'a str> {
    list.iter().find(|(k, _)| k == key).map(|(_, s)| s.as_str())
}

#[test]
fn into_main_any_ref_branch_mixed_case_branch_and_pattern_conditions_apply() {
    let mut d = StackHarness::with_views();
    let r = required(&mut d, 1).unwrap();
    // ANY_REF (ci-unit, ci-docs), BRANCH refs/heads/main (ci-integration, BB-LINT), BRANCH refs/heads/Main
    // in another letter case (ci-case), PATTERN MAIN (ci-security); not release/*, heads/**/stable, tags/,
    // MODEL_BRANCH development (develop), MODEL_CATEGORY HOTFIX.
    assert_eq!(keys(&r), ["BB-LINT", "ci-case", "ci-docs", "ci-integration", "ci-security", "ci-unit"]);
}

#[test]
fn a_source_branch_in_an_exempt_category_is_exempted() {
    let mut d = StackHarness::with_views();
    let r = required(&mut d, 3).unwrap(); // bugfix/serde-bump → main; ci-security exempts BUGFIX branches
    assert!(!keys(&r).contains(&"ci-security"), "{r:?}");
    assert!(keys(&r).contains(&"ci-case"), "{r:?}");
}

#[test]
fn an_exempt_branch_matcher_exempts_that_branch_only() {
    let mut d = StackHarness::with_views();
    let r = required(&mut d, 6).unwrap(); // docs/typo-fix: the exemption names docs/typo exactly
    assert!(keys(&r).contains(&"ci-docs"), "{r:?}");
}

#[test]
fn a_hotfix_branch_into_main_is_not_a_hotfix_target() {
    let mut d = StackHarness::with_views();
    let r = required(&mut d, 11).unwrap(); // hotfix/… → main: MODEL_CATEGORY HOTFIX matches targets, not sources
    assert!(!keys(&r).contains(&"ci-hotfix"), "{r:?}");
}

#[test]
fn a_bamboo_style_build_satisfies_the_condition_its_parent_names() {
    let mut d = StackHarness::with_views();
    assert_eq!(state(&required(&mut d, 1).unwrap(), "ci-case"), Some("MISSING"));
    d.control(
        "POST",
        "/builds",
        json!({"project": "BB", "repo": "api", "pullRequest": 1, "key": "CASE-PLAN-77", "parent": "ci-case",
               "state": "SUCCESSFUL", "name": "Case plan #77", "ref": "refs/heads/feature/retry"}),
    );
    assert_eq!(state(&required(&mut d, 1).unwrap(), "ci-case"), Some("SUCCESSFUL"));
}

#[test]
fn a_build_for_another_branch_is_not_counted() {
    let mut d = StackHarness::with_views();
    d.control(
        "POST",
        "/builds",
        json!({"project": "BB", "repo": "api", "pullRequest": 1, "key": "SEC-OTHER-1", "parent": "ci-security",
               "state": "SUCCESSFUL", "name": "Security on develop", "ref": "refs/heads/develop"}),
    );
    assert_eq!(state(&required(&mut d, 1).unwrap(), "ci-security"), Some("MISSING"));
}

#[test]
fn a_build_moving_to_another_state_moves_its_key() {
    let mut d = StackHarness::with_views();
    d.control(
        "POST",
        "/builds",
        json!({"project": "BB", "repo": "api", "pullRequest": 1, "key": "ci-integration-17", "state": "SUCCESSFUL"}),
    );
    assert_eq!(state(&required(&mut d, 1).unwrap(), "ci-integration"), Some("SUCCESSFUL"));
}

#[test]
fn without_the_pull_request_listing_the_card_falls_back_and_says_nothing_about_requirements() {
    let mut d = StackHarness::with_views();
    d.fault("/rest/ui/", 404, 1, None);
    assert_eq!(required(&mut d, 1), None);
}

#[test]
fn a_missing_conditions_endpoint_or_unreadable_model_silences_requirements() {
    let mut d = StackHarness::with_views();
    d.fault("/rest/required-builds/", 404, 1, None);
    assert_eq!(required(&mut d, 1), None);
    let mut d = StackHarness::with_views();
    d.fault("/rest/branch-utils/", 404, 1, None);
    assert_eq!(required(&mut d, 1), None);
}

#[test]
fn a_repository_whose_conditions_need_no_model_does_not_depend_on_it() {
    // The card asks for the model beside the conditions (a round trip saved where one is needed); here
    // none is, so even a model Bitbucket cannot give leaves the requirements decided.
    let mut d = StackHarness::with_views();
    d.fault("/rest/branch-utils/", 404, 1, None);
    let a = d.call("show", json!({"kind": "pull_request", "project": "BB", "repo": "cli", "pr_id": 3}));
    assert!(!a.is_error, "{}", a.text);
    let req: &Value = &a.raw["_meta"]["bb/view"]["pullRequest"]["builds"]["requirements"];
    assert!(req.is_object(), "{req}");
    // A tool reads the model only when a condition needs it.
    let t = d.call("get_build_status", json!({"project": "BB", "repo": "cli", "pr_id": 3}));
    assert!(!t.is_error, "{}", t.text);
    assert!(!d.requests.iter().any(|r| r.contains("/branchmodel")), "{:#?}", d.requests);
}

/// Opens a pull request in BB/api from `from` into `to` with create_pull_request and returns its id.
fn open_pr(d: &mut StackHarness, from: &str, to: &str) -> u64 {
    let a = d.call(
        "create_pull_request",
        json!({"project": "BB", "repo": "api", "title": format!("{from} into {to}"), "from_ref": from, "to_ref": to,
               "default_reviewers": false}),
    );
    assert!(!a.is_error, "{}", a.text);
    let id = a.text.split('#').nth(1).and_then(|s| s.split(|c: char| !c.is_ascii_digit()).next()).unwrap();
    id.parse().unwrap()
}

#[test]
fn targets_decide_by_pattern_model_branch_and_model_category() {
    let mut d = StackHarness::with_views();
    let cases = [
        ("develop", "ci-dev"),               // MODEL_BRANCH development = develop
        ("release/v1", "ci-release"),        // PATTERN release/*
        ("release/v2", "ci-v"),              // PATTERN release/v?
        ("team/a/stable", "ci-deep"),        // PATTERN heads/**/stable
        ("hotfix/empty-pages", "ci-hotfix"), // MODEL_CATEGORY HOTFIX: targets under hotfix/
    ];
    for (to, key) in cases {
        let id = open_pr(&mut d, "feature/parser", to);
        let r = required(&mut d, id).unwrap_or_else(|| panic!("requirements for a PR into {to}"));
        assert!(keys(&r).contains(&key), "into {to}: {r:?}");
        assert!(!keys(&r).contains(&"ci-integration"), "BRANCH main does not apply into {to}: {r:?}");
        assert_eq!(state(&r, key), Some("MISSING"), "no build yet for {key}");
    }
}
