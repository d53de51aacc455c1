//! `search_repositories` against the stand-in: names matched across projects, clone addresses given,
//! paging explicit, one request.
#![allow(clippy::unwrap_used, clippy::panic)]

mod stack_harness;

use serde_json::json;
use stack_harness::StackHarness;

#[test]
fn repositories_are_found_by_name_across_projects_with_their_clone_addresses() {
    let mut d = StackHarness::new();
    let a = d.call("search_repositories", json!({"name": "API"}));
    assert!(!a.is_error, "{}", a.text);
    assert_eq!(d.requests, ["GET /rest/api/latest/repos?name=API&start=0&limit=25"]);
    let first = a.text.lines().next().unwrap();
    assert!(first.starts_with("Repositories named like \"API\", from start=0: "), "{first}");
    let line = a.text.lines().find(|l| l.starts_with("BB/api")).unwrap_or_else(|| panic!("{}", a.text));
    assert!(line.contains("http: ") && line.contains("ssh: "), "{line}");
    assert!(!a.text.contains("WEB/site"), "only names like api: {}", a.text);
}

#[test]
fn every_repository_is_listed_a_page_at_a_time() {
    let mut d = StackHarness::new();
    let a = d.call("search_repositories", json!({"limit": 2}));
    assert!(!a.is_error, "{}", a.text);
    assert_eq!(a.text.lines().filter(|l| l.contains('/') && l.contains("http: ")).count(), 2, "{}", a.text);
    assert!(a.text.lines().last().unwrap().contains("start=2"), "{}", a.text);
    let b = d.call("search_repositories", json!({"project": "nothing-like-this"}));
    assert!(b.text.contains(": 0 shown."), "{}", b.text);
}

#[test]
fn clone_info_gives_the_addresses_and_the_default_branch_in_two_reads() {
    let mut d = StackHarness::new();
    let a = d.call("get_repository_clone_info", json!({"project": "BB", "repo": "api"}));
    assert!(!a.is_error, "{}", a.text);
    assert_eq!(a.text.lines().next().unwrap(), "BB/api: default branch main.");
    assert!(
        a.text.lines().any(|l| l.starts_with("http: ")) && a.text.lines().any(|l| l.starts_with("ssh: ")),
        "{}",
        a.text
    );
    assert_eq!(d.requests.len(), 2, "{:?}", d.requests);
    let missing = d.call("get_repository_clone_info", json!({"project": "BB", "repo": "nope"}));
    assert!(missing.is_error);
    assert!(missing.text.contains("nope"), "{}", missing.text);
}
