//! Completions (issue 53 item 3): the prompts' and templates' arguments completed from Bitbucket's
//! listings (projects, a project's repositories, a repository's open pull requests, branches then tags,
//! a folder's entries), prefix-matched; a failure answers no values; a burst of keystrokes costs one
//! read; nothing outside the admin's scope is offered.
#![allow(clippy::unwrap_used, clippy::panic)]

#[path = "stack_harness/mod.rs"]
mod stack_harness;

use serde_json::{Value, json};
use stack_harness::StackHarness;

const PR_TEMPLATE: &str = "bitbucket://projects/{project}/repos/{repo}/pull-requests/{id}";
const FILE_TEMPLATE: &str = "bitbucket://projects/{project}/repos/{repo}/files/{+path}{?at}";

fn prompt(name: &str, value: &str, context: Value) -> Value {
    json!({"ref": {"type": "ref/prompt", "name": "review_pull_request"},
           "argument": {"name": name, "value": value}, "context": {"arguments": context}})
}

fn template(uri: &str, name: &str, value: &str, context: Value) -> Value {
    json!({"ref": {"type": "ref/resource", "uri": uri},
           "argument": {"name": name, "value": value}, "context": {"arguments": context}})
}

fn values(answer: &Value) -> Vec<String> {
    let values = answer["result"]["completion"]["values"].as_array().unwrap_or_else(|| panic!("{answer}"));
    values.iter().map(|v| v.as_str().unwrap().to_owned()).collect()
}

#[test]
fn completing_project_b_offers_bb() {
    let mut d = StackHarness::new();
    let answer = d.request("completion/complete", prompt("project", "B", json!({})));
    assert_eq!(values(&answer), ["BB"]);
    assert_eq!(answer["result"]["completion"]["total"], 1);
    assert_eq!(answer["result"]["completion"]["hasMore"], false);
    assert_eq!(d.count("GET", "/rest/api/latest/projects"), 1, "{:?}", d.requests);
}

#[test]
fn a_repository_is_completed_among_the_given_projects() {
    let mut d = StackHarness::new();
    let answer = d.request("completion/complete", prompt("repo", "a", json!({"project": "BB"})));
    assert_eq!(values(&answer), ["api"]);
    // Without the project there is nothing to list, and nothing is read.
    let none = d.request("completion/complete", prompt("repo", "a", json!({})));
    assert!(values(&none).is_empty());
    assert!(d.requests.is_empty());
}

#[test]
fn a_pull_request_id_is_one_of_the_repositorys_open_pull_requests() {
    let mut d = StackHarness::new();
    let context = json!({"project": "BB", "repo": "api"});
    let answer = d.request("completion/complete", prompt("pr_id", "", context.clone()));
    let ids = values(&answer);
    assert!(ids.contains(&"1".to_owned()) && ids.contains(&"2".to_owned()), "{ids:?}");
    assert!(!ids.contains(&"4".to_owned()), "#4 is merged: {ids:?}");
    let by_template = d.request("completion/complete", template(PR_TEMPLATE, "id", "1", context));
    assert!(values(&by_template).iter().all(|v| v.starts_with('1')), "{by_template}");
    assert!(values(&by_template).contains(&"1".to_owned()));
}

#[test]
fn a_ref_is_a_branch_then_a_tag_starting_with_what_was_typed() {
    let mut d = StackHarness::new();
    let context = json!({"project": "BB", "repo": "api"});
    let answer = d.request("completion/complete", template(FILE_TEMPLATE, "at", "rel", context.clone()));
    let refs = values(&answer);
    assert!(refs.len() >= 2 && refs.iter().all(|r| r.starts_with("release/")), "{refs:?}");
    let tags = d.request("completion/complete", template(FILE_TEMPLATE, "at", "v0", context));
    assert_eq!(values(&tags), ["v0.1.0", "v0.2.0"]);
}

#[test]
fn a_path_is_completed_one_folder_at_a_time() {
    let mut d = StackHarness::new();
    let context = json!({"project": "BB", "repo": "api", "at": "main"});
    let root = d.request("completion/complete", template(FILE_TEMPLATE, "path", "sr", context.clone()));
    assert_eq!(values(&root), ["src/"], "{root}");
    let inside = d.request("completion/complete", template(FILE_TEMPLATE, "path", "src/gen", context));
    assert_eq!(values(&inside), ["src/generated/"], "{inside}");
    assert!(d.requests.iter().all(|r| r.contains("/browse/src?")), "{:?}", d.requests);
}

#[test]
fn a_failed_read_answers_no_values_rather_than_an_error() {
    let mut d = StackHarness::new();
    d.fault("/rest/api/latest/projects", 500, 10, None);
    let answer = d.request("completion/complete", prompt("project", "B", json!({})));
    assert!(answer.get("error").is_none(), "{answer}");
    assert!(values(&answer).is_empty());
}

#[test]
fn two_completions_within_the_cache_time_cost_one_read() {
    let mut d = StackHarness::new();
    let context = json!({"project": "BB", "repo": "api"});
    let first = d.request("completion/complete", template(FILE_TEMPLATE, "at", "d", context.clone()));
    assert_eq!(values(&first), ["develop", "docs/typo"]);
    assert_eq!(d.count("GET", "/branches"), 1);
    let second = d.request("completion/complete", template(FILE_TEMPLATE, "at", "de", context.clone()));
    assert_eq!(values(&second), ["develop"]);
    assert!(d.requests.is_empty(), "answered from the cache: {:?}", d.requests);
    // After the cache's seconds, read again.
    d.advance(60_000);
    d.request("completion/complete", template(FILE_TEMPLATE, "at", "de", context));
    assert_eq!(d.count("GET", "/branches"), 1);
}

#[test]
fn nothing_outside_the_admins_scope_is_offered_or_read() {
    let mut d = StackHarness::scoped(&["OPS/infra"]);
    let projects = d.request("completion/complete", prompt("project", "", json!({})));
    assert_eq!(values(&projects), ["OPS"]);
    let repos = d.request("completion/complete", prompt("repo", "", json!({"project": "OPS"})));
    assert_eq!(values(&repos), ["infra"]);
    let outside = d.request("completion/complete", prompt("pr_id", "", json!({"project": "BB", "repo": "api"})));
    assert!(values(&outside).is_empty());
    assert!(d.requests.is_empty(), "{:?}", d.requests);
}

#[test]
fn an_unknown_reference_is_invalid_params() {
    let mut d = StackHarness::new();
    let answer = d.request(
        "completion/complete",
        json!({"ref": {"type": "ref/prompt", "name": "nope"}, "argument": {"name": "project", "value": ""}}),
    );
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    let answer = d.request(
        "completion/complete",
        json!({"ref": {"type": "ref/resource", "uri": "bitbucket://x/{y}"}, "argument": {"name": "y", "value": ""}}),
    );
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
}
