//! Error responses: Bitbucket's error JSON and status codes.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod common;
use common::*;

#[test]
fn a_missing_pull_request_is_404_with_no_such_pull_request() {
    let stack = start();
    let r = get(&stack, "/rest/api/latest/projects/BB/repos/api/pull-requests/9999");
    assert_eq!(r.status, 404);
    let e = &r.json()["errors"][0];
    assert_eq!(e["exceptionName"], "com.atlassian.bitbucket.pull.NoSuchPullRequestException");
    assert!(e.get("context").is_some(), "context is present, even when null");
}

#[test]
fn a_missing_repository_or_project_is_404_naming_which() {
    let stack = start();
    let r = get(&stack, "/rest/api/latest/projects/BB/repos/nope");
    assert_eq!(r.json()["errors"][0]["exceptionName"], "com.atlassian.bitbucket.repository.NoSuchRepositoryException");
    let r = get(&stack, "/rest/api/latest/projects/NOPE/repos/api");
    assert_eq!(r.status, 404);
    assert_eq!(r.json()["errors"][0]["exceptionName"], "com.atlassian.bitbucket.project.NoSuchProjectException");
}

#[test]
fn an_unknown_path_is_404_error_json() {
    let stack = start();
    let r = get(&stack, "/rest/api/latest/no/such/thing");
    assert_eq!(r.status, 404);
    assert!(r.json()["errors"][0]["message"].is_string());
}

#[test]
fn the_repository_build_endpoint_needs_a_key() {
    let stack = start();
    let pr = get(&stack, PR1).json();
    let commit = pr["fromRef"]["latestCommit"].as_str().unwrap();
    let path = format!("/rest/api/latest/projects/BB/repos/api/commits/{commit}/builds");
    assert_eq!(get(&stack, &path).status, 400);
    let one = get(&stack, &format!("{path}?key=ci-unit-42"));
    assert_eq!(one.status, 200);
    assert_eq!(one.json()["parent"], "ci-unit");
}
