//! Edits of a pull request and its comments, with Bitbucket's version checks: `PUT …/pull-requests/{id}` replaces
//! the reviewers with the list sent, and `PUT …/comments/{id}` needs the comment's version.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod common;
use common::*;
use serde_json::{Value, json};

fn reviewers(pr: &Value) -> Vec<(String, String)> {
    pr["reviewers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["user"]["slug"].as_str().unwrap().to_owned(), r["status"].as_str().unwrap().to_owned()))
        .collect()
}

fn named(names: &[&str]) -> Value {
    json!(names.iter().map(|n| json!({ "user": { "name": n } })).collect::<Vec<_>>())
}

#[test]
fn an_update_without_a_version_is_400_naming_the_field() {
    let stack = start();
    let r = call(&stack, "PUT", PR1, &json!({ "title": "New" }));
    assert_eq!(r.status, 400);
    assert_eq!(r.json()["errors"][0]["context"], "version");
}

#[test]
fn a_stale_update_is_409_with_the_current_pull_request_and_changes_nothing() {
    let stack = start();
    let before = get(&stack, PR1).json();
    let v = before["version"].as_u64().unwrap();
    let r = call(&stack, "PUT", PR1, &json!({ "version": v + 3, "title": "New", "reviewers": [] }));
    assert_eq!(r.status, 409);
    let e = &r.json()["errors"][0];
    assert_eq!(e["exceptionName"], "com.atlassian.bitbucket.pull.PullRequestOutOfDateException");
    assert_eq!(e["message"], "You are attempting to modify a pull request based on out-of-date information.");
    assert_eq!((e["currentVersion"].as_u64(), e["expectedVersion"].as_u64()), (Some(v), Some(v + 3)));
    assert_eq!(e["pullRequest"]["id"], 1);
    assert_eq!(e["pullRequest"]["version"], v);
    assert_eq!(get(&stack, PR1).json(), before);
}

#[test]
fn the_reviewers_become_the_list_sent_and_those_left_out_become_participants() {
    let stack = start();
    let before = get(&stack, PR1).json();
    assert_eq!(reviewers(&before).len(), 3);
    let v = before["version"].as_u64().unwrap();
    let r = call(
        &stack,
        "PUT",
        PR1,
        &json!({ "version": v, "title": before["title"], "reviewers": named(&["bob", "frank"]) }),
    );
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    let after = r.json();
    assert_eq!(after["version"], v + 1);
    assert_eq!(reviewers(&after), [("bob".into(), "APPROVED".into()), ("frank".into(), "UNAPPROVED".into())]);
    let participants: Vec<&str> =
        after["participants"].as_array().unwrap().iter().map(|p| p["user"]["slug"].as_str().unwrap()).collect();
    assert!(participants.contains(&"carol") && participants.contains(&"dave"), "{participants:?}");
    let updated = &get(&stack, &format!("{PR1}/activities?limit=1")).json()["values"][0];
    assert_eq!(updated["action"], "UPDATED");
    assert_eq!(updated["addedReviewers"][0]["slug"], "frank");
    assert_eq!(updated["removedReviewers"].as_array().unwrap().len(), 2);
}

#[test]
fn an_update_without_a_reviewers_list_removes_every_reviewer_and_keeps_the_title() {
    let stack = start();
    let before = get(&stack, PR1).json();
    let r = call(&stack, "PUT", PR1, &json!({ "version": before["version"], "description": "Only this" }));
    assert_eq!(r.status, 200);
    let after = r.json();
    assert!(reviewers(&after).is_empty());
    assert_eq!(after["title"], before["title"]);
    assert_eq!(after["description"], "Only this");
}

#[test]
fn a_reviewer_who_cannot_review_is_409_and_changes_nothing() {
    let stack = start();
    let before = get(&stack, PR1).json();
    let r = call(
        &stack,
        "PUT",
        PR1,
        &json!({ "version": before["version"], "reviewers": named(&["bob", "alice", "nobody"]) }),
    );
    assert_eq!(r.status, 409);
    let e = &r.json()["errors"][0];
    assert_eq!(e["reviewerErrors"].as_array().unwrap().len(), 2);
    assert_eq!(get(&stack, PR1).json(), before);
}

#[test]
fn the_target_branch_moves_to_a_branch_that_exists_and_not_onto_the_source() {
    let stack = start();
    let before = get(&stack, PR1).json();
    let v = before["version"].as_u64().unwrap();
    let keep = named(&["bob", "carol", "dave"]);
    let missing =
        call(&stack, "PUT", PR1, &json!({ "version": v, "reviewers": keep, "toRef": { "id": "refs/heads/nope" } }));
    assert_eq!(missing.status, 404);
    let onto_source = call(
        &stack,
        "PUT",
        PR1,
        &json!({ "version": v, "reviewers": keep, "toRef": { "id": before["fromRef"]["id"] } }),
    );
    assert_eq!(onto_source.status, 409);
    let moved =
        call(&stack, "PUT", PR1, &json!({ "version": v, "reviewers": keep, "toRef": { "id": "refs/heads/develop" } }));
    assert_eq!(moved.status, 200);
    assert_eq!(moved.json()["toRef"]["displayId"], "develop");
    assert_eq!(reviewers(&moved.json()).len(), 3);
}

#[test]
fn a_comment_update_needs_the_comments_version_and_moves_it() {
    let stack = start();
    let c = call(&stack, "POST", &format!("{PR1}/comments"), &json!({ "text": "x", "severity": "BLOCKER" })).json();
    let at = format!("{PR1}/comments/{}", c["id"]);
    let none = call(&stack, "PUT", &at, &json!({ "state": "RESOLVED" }));
    assert_eq!(none.status, 400);
    assert_eq!(none.json()["errors"][0]["context"], "version");
    let ok = call(&stack, "PUT", &at, &json!({ "version": 0, "state": "RESOLVED" }));
    assert_eq!(ok.status, 200);
    assert_eq!((ok.json()["version"].as_u64(), ok.json()["state"].as_str()), (Some(1), Some("RESOLVED")));
    let stale = call(&stack, "PUT", &at, &json!({ "version": 0, "state": "OPEN" }));
    assert_eq!(stale.status, 409);
    let e = &stale.json()["errors"][0];
    assert_eq!(e["exceptionName"], "com.atlassian.bitbucket.comment.CommentOutOfDateException");
    assert_eq!(get(&stack, &at).json()["state"], "RESOLVED");
}
