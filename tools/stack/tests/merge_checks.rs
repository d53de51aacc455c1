//! The merge check (`GET …/pull-requests/{id}/merge`) raises Bitbucket's vetoes as a server with its default merge
//! checks on does: required builds not all successful, a default reviewer condition's approvals missing, open
//! tasks, a reviewer's Needs work, conflicts; and a merge is refused for the same reasons.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod common;
use bb_stack::RunningStack;
use common::*;
use serde_json::{Value, json};

const PRS: &str = "/rest/api/latest/projects/BB/repos/api/pull-requests";

fn check(stack: &RunningStack, id: u64) -> Value {
    get(stack, &format!("{PRS}/{id}/merge")).json()
}

fn summaries(check: &Value) -> Vec<String> {
    check["vetoes"].as_array().unwrap().iter().map(|v| v["summaryMessage"].as_str().unwrap().to_string()).collect()
}

fn detail<'c>(check: &'c Value, summary: &str) -> &'c str {
    let v = check["vetoes"].as_array().unwrap().iter().find(|v| v["summaryMessage"] == summary);
    v.unwrap_or_else(|| panic!("no veto {summary:?} in {check}"))["detailedMessage"].as_str().unwrap()
}

#[test]
fn required_builds_open_tasks_and_needs_work_each_veto_in_bitbuckets_words() {
    let stack = start();
    let c = check(&stack, 1);
    assert_eq!(c["canMerge"], false);
    assert_eq!(
        summaries(&c),
        ["Not all required builds are successful yet", "Requires all tasks to be resolved", "Needs work"]
    );
    assert_eq!(
        detail(&c, "Not all required builds are successful yet"),
        "You need 5 more successful required builds before this pull request can be merged."
    );
    assert_eq!(
        detail(&c, "Requires all tasks to be resolved"),
        "You need to resolve 1 open task before this pull request can be merged."
    );
    assert!(detail(&c, "Needs work").starts_with("Carol Chen has marked this pull request as needs work."));
}

#[test]
fn a_pull_request_whose_required_builds_all_passed_can_merge_until_one_fails() {
    let stack = start();
    assert_eq!(check(&stack, 11)["canMerge"], true, "{}", check(&stack, 11));
    let pr = get(&stack, &format!("{PRS}/11")).json();
    let commit = pr["fromRef"]["latestCommit"].as_str().unwrap().to_string();
    let failed = json!({ "key": "ci-docs-61", "parent": "ci-docs", "state": "FAILED", "url": "https://ci.example.com/docs/61",
        "ref": "refs/heads/hotfix/empty-pages" });
    assert_eq!(call(&stack, "POST", &format!("/rest/build-status/latest/commits/{commit}"), &failed).status, 204);
    let c = check(&stack, 11);
    assert_eq!(c["canMerge"], false);
    assert_eq!(
        detail(&c, "Not all required builds are successful yet"),
        "You need 1 more successful required build before this pull request can be merged."
    );
    let version = pr["version"].as_u64().unwrap();
    let r = call(&stack, "POST", &format!("{PRS}/11/merge?version={version}"), &json!({}));
    assert_eq!(r.status, 409, "the merge is refused for the reason the check gives");
    assert_eq!(r.json()["errors"][0]["vetoes"], c["vetoes"]);
}

#[test]
fn resolving_the_last_open_task_and_withdrawing_needs_work_lift_their_vetoes() {
    let stack = start();
    let task =
        call(&stack, "POST", &format!("{PRS}/11/comments"), &json!({ "text": "Check this", "severity": "BLOCKER" }))
            .json();
    let c = check(&stack, 11);
    assert_eq!(summaries(&c), ["Requires all tasks to be resolved"]);
    assert_eq!(
        detail(&c, "Requires all tasks to be resolved"),
        "You need to resolve 1 open task before this pull request can be merged."
    );
    let resolved = call(
        &stack,
        "PUT",
        &format!("{PRS}/11/comments/{}", task["id"]),
        &json!({ "version": task["version"], "state": "RESOLVED" }),
    );
    assert_eq!(resolved.status, 200);
    assert_eq!(check(&stack, 11)["canMerge"], true);
}

#[test]
fn a_closed_pull_request_is_vetoed_only_for_being_closed_and_what_it_was_seeded_with() {
    let stack = start();
    let c = check(&stack, 4);
    assert_eq!(summaries(&c), ["Pull request is closed"]);
}

#[test]
fn a_default_reviewer_condition_vetoes_until_its_own_reviewers_approve() {
    let stack = start();
    // #11 (hotfix/empty-pages → main): the condition "any branch → main" asks 1 approval of bob or carol; bob approved.
    assert_eq!(check(&stack, 11)["canMerge"], true, "{}", check(&stack, 11));
    let withdrawn = call_as(
        &stack,
        "stack-token-bob",
        "PUT",
        &format!("{PRS}/11/participants/bob"),
        &json!({ "status": "UNAPPROVED" }),
    );
    assert_eq!(withdrawn.status, 200);
    let c = check(&stack, 11);
    assert_eq!(c["canMerge"], false);
    assert_eq!(summaries(&c), ["Requires approvals"]);
    assert_eq!(detail(&c, "Requires approvals"), "You need 1 more approval before this pull request can be merged.");
    // An approval by a reviewer the condition does not name does not count: alice wrote nothing on #11 but reviews it.
    let alice = call(&stack, "PUT", &format!("{PRS}/11/participants/alice"), &json!({ "status": "APPROVED" }));
    assert_eq!(alice.status, 200, "{}", alice.json());
    assert_eq!(summaries(&check(&stack, 11)), ["Requires approvals"]);
    let back = call_as(
        &stack,
        "stack-token-bob",
        "PUT",
        &format!("{PRS}/11/participants/bob"),
        &json!({ "status": "APPROVED" }),
    );
    assert_eq!(back.status, 200);
    assert_eq!(check(&stack, 11)["canMerge"], true);
}
