//! Writes that change pull requests the way Bitbucket does.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod common;
use common::*;
use serde_json::json;

const PRS: &str = "/rest/api/latest/projects/BB/repos/api/pull-requests";

fn new_pr(from: &str) -> serde_json::Value {
    let repo = json!({ "slug": "api", "project": { "key": "BB" } });
    json!({
        "title": "Try the stack",
        "description": "",
        "fromRef": { "id": format!("refs/heads/{from}"), "repository": repo },
        "toRef": { "id": "refs/heads/main", "repository": repo },
        "reviewers": [{ "user": { "name": "bob" } }],
    })
}

#[test]
fn creating_a_pull_request_answers_201_and_a_second_for_the_same_branches_409_with_the_existing_one() {
    let stack = start();
    let created = call(&stack, "POST", PRS, &new_pr("develop"));
    assert_eq!(created.status, 201);
    let pr = created.json();
    assert_eq!(pr["state"], "OPEN");
    assert_eq!(pr["version"], 0);
    assert_eq!(pr["reviewers"][0]["user"]["slug"], "bob");
    assert!(pr.get("description").is_none(), "an empty description is absent");

    let dup = call(&stack, "POST", PRS, &new_pr("develop"));
    assert_eq!(dup.status, 409);
    let e = &dup.json()["errors"][0];
    assert_eq!(e["exceptionName"], "com.atlassian.bitbucket.pull.DuplicatePullRequestException");
    assert_eq!(e["existingPullRequest"]["id"], pr["id"]);
}

#[test]
fn creating_without_a_title_is_400_naming_the_field() {
    let stack = start();
    let mut body = new_pr("develop");
    body["title"] = json!("");
    let r = call(&stack, "POST", PRS, &body);
    assert_eq!(r.status, 400);
    assert_eq!(r.json()["errors"][0]["context"], "title");
}

#[test]
fn merging_with_a_stale_version_is_409_with_current_and_expected_versions() {
    let stack = start();
    let pr = get(&stack, "/rest/api/latest/projects/BB/repos/api/pull-requests/11").json();
    let current = pr["version"].as_u64().unwrap();
    let r = call(&stack, "POST", &format!("{PRS}/11/merge?version={}", current + 5), &json!({}));
    assert_eq!(r.status, 409);
    let e = &r.json()["errors"][0];
    assert_eq!(e["exceptionName"], "com.atlassian.bitbucket.pull.PullRequestOutOfDateException");
    assert_eq!(e["currentVersion"], current);
    assert_eq!(e["expectedVersion"], current + 5);

    let ok = call(&stack, "POST", &format!("{PRS}/11/merge?version={current}"), &json!({ "version": current }));
    assert_eq!(ok.status, 200);
    let merged = ok.json();
    assert_eq!(merged["state"], "MERGED");
    assert_eq!(merged["version"], current + 1);
    assert!(merged["closedDate"].as_i64().unwrap() > pr["updatedDate"].as_i64().unwrap());
}

#[test]
fn a_vetoed_merge_is_409_with_the_vetoes_and_the_merge_check_agrees() {
    let stack = start();
    let check = get(&stack, &format!("{PRS}/10/merge")).json();
    assert_eq!(check["canMerge"], false);
    assert_eq!(check["vetoes"][0]["summaryMessage"], "Not enough approvals");
    let version = get(&stack, &format!("{PRS}/10")).json()["version"].as_u64().unwrap();
    let r = call(&stack, "POST", &format!("{PRS}/10/merge?version={version}"), &json!({}));
    assert_eq!(r.status, 409);
    let e = &r.json()["errors"][0];
    assert_eq!(e["exceptionName"], "com.atlassian.bitbucket.pull.PullRequestMergeVetoedException");
    assert_eq!(e["vetoes"][0]["summaryMessage"], "Not enough approvals");
}

#[test]
fn a_conflicted_pull_request_says_so_and_cannot_be_merged() {
    let stack = start();
    let pr = get(&stack, &format!("{PRS}/3")).json();
    assert_eq!(pr["properties"]["mergeResult"]["outcome"], "CONFLICTED");
    let check = get(&stack, &format!("{PRS}/3/merge")).json();
    assert_eq!(check["conflicted"], true);
    assert_eq!(check["canMerge"], false);
}

#[test]
fn comments_replies_and_tasks_change_neither_version_nor_updated_date() {
    let stack = start();
    let before = get(&stack, PR1).json();
    let c = call(&stack, "POST", &format!("{PR1}/comments"), &json!({ "text": "A new comment" }));
    assert_eq!(c.status, 201);
    let id = c.json()["id"].as_u64().unwrap();
    let reply = call(&stack, "POST", &format!("{PR1}/comments"), &json!({ "text": "A reply", "parent": { "id": id } }));
    assert_eq!(reply.status, 201);
    let task =
        call(&stack, "POST", &format!("{PR1}/comments"), &json!({ "text": "A task", "severity": "BLOCKER" })).json();
    let resolved = call(
        &stack,
        "PUT",
        &format!("{PR1}/comments/{}", task["id"]),
        &json!({ "version": task["version"], "state": "RESOLVED" }),
    );
    assert_eq!(resolved.status, 200);
    assert_eq!(resolved.json()["state"], "RESOLVED");
    let after = get(&stack, PR1).json();
    assert_eq!(after["version"], before["version"]);
    assert_eq!(after["updatedDate"], before["updatedDate"]);
    let resolved_tasks = |pr: &serde_json::Value| pr["properties"]["resolvedTaskCount"].as_u64().unwrap();
    assert_eq!(resolved_tasks(&after), resolved_tasks(&before) + 1);
    let first = &get(&stack, &format!("{PR1}/activities?limit=1")).json()["values"][0];
    assert_eq!(first["action"], "COMMENTED", "the newest activity comes first");
}

#[test]
fn a_stale_comment_version_is_409() {
    let stack = start();
    let c = call(&stack, "POST", &format!("{PR1}/comments"), &json!({ "text": "x" })).json();
    let r = call(&stack, "PUT", &format!("{PR1}/comments/{}", c["id"]), &json!({ "version": 7, "text": "y" }));
    assert_eq!(r.status, 409);
    assert_eq!(r.json()["errors"][0]["currentVersion"], 0);
}

#[test]
fn the_author_cannot_review_their_own_pull_request() {
    let stack = start();
    // alice (the default user) wrote PR 1.
    let r = call(&stack, "PUT", &format!("{PR1}/participants/alice"), &json!({ "status": "APPROVED" }));
    assert_eq!(r.status, 400);
    assert!(r.json()["errors"][0]["message"].is_string());
}

#[test]
fn approving_sets_the_reviewers_status_without_changing_version() {
    let stack = start();
    let before = get(&stack, PR1).json();
    let r = call_as(
        &stack,
        "stack-token-dave",
        "PUT",
        &format!("{PR1}/participants/dave"),
        &json!({ "status": "APPROVED" }),
    );
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["approved"], true);
    let after = get(&stack, PR1).json();
    assert_eq!(after["version"], before["version"]);
    assert_eq!(after["updatedDate"], before["updatedDate"]);
    let dave = after["reviewers"].as_array().unwrap().iter().find(|r| r["user"]["slug"] == "dave").cloned().unwrap();
    assert_eq!(dave["status"], "APPROVED");
}

#[test]
fn decline_and_reopen_each_move_the_version() {
    let stack = start();
    let v0 = get(&stack, PR1).json()["version"].as_u64().unwrap();
    let d = call(&stack, "POST", &format!("{PR1}/decline?version={v0}"), &json!({}));
    assert_eq!(d.status, 200);
    assert_eq!(d.json()["state"], "DECLINED");
    let stale = call(&stack, "POST", &format!("{PR1}/reopen?version={v0}"), &json!({}));
    assert_eq!(stale.status, 409);
    let r = call(&stack, "POST", &format!("{PR1}/reopen?version={}", v0 + 1), &json!({}));
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["state"], "OPEN");
    assert_eq!(r.json()["version"], v0 + 2);
}
