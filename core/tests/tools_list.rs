//! list_pull_requests against the stack: paging, filters, dashboard, inbox, cost and line size.
#![allow(clippy::unwrap_used, clippy::panic)]

mod stack_harness;

use serde_json::json;
use stack_harness::StackHarness;

#[test]
fn a_repository_pages_with_an_explicit_next_start_and_never_a_total() {
    let mut d = StackHarness::new();
    let mut seen = Vec::new();
    let mut start = 0;
    loop {
        let a = d.call(
            "list_pull_requests",
            json!({"project": "BB", "repo": "cli", "state": "ALL", "limit": 10, "start": start}),
        );
        assert!(!a.is_error, "{}", a.text);
        assert_eq!(d.requests.len(), 1);
        let lines: Vec<&str> = a.text.lines().filter(|l| l.starts_with('#')).collect();
        seen.extend(lines.iter().map(|l| l.split(' ').next().unwrap().to_owned()));
        match a.text.lines().last().unwrap().strip_prefix("More pull requests exist — start=") {
            Some(n) => start = n.trim_end_matches('.').parse().unwrap(),
            None => {
                assert_eq!(a.text.lines().last().unwrap(), "No more pull requests.");
                break;
            }
        }
        assert!(!a.text.contains("total"));
    }
    seen.sort();
    seen.dedup();
    assert_eq!(seen.len(), 24, "{seen:?}");
}

#[test]
fn lines_stay_under_160_bytes_per_pull_request() {
    let mut d = StackHarness::new();
    let a = d.call("list_pull_requests", json!({"project": "BB", "repo": "api", "state": "ALL", "limit": 100}));
    let prs: Vec<&str> = a.text.lines().filter(|l| l.starts_with('#')).collect();
    assert!(prs.len() >= 11);
    for l in &prs {
        assert!(l.len() <= 160, "{} bytes: {l}", l.len());
    }
    assert!(a.text.contains("<script>alert('title')</script>"), "hostile titles pass through");
    assert!(a.text.contains("(… ends a title or branch cut"));
}

#[test]
fn filters_reach_bitbucket_as_its_own_parameters() {
    let mut d = StackHarness::new();
    let a = d.call("list_pull_requests", json!({"project": "BB", "repo": "api", "source_branch": "feature/retry"}));
    assert!(d.requests[0].contains("direction=OUTGOING") && d.requests[0].contains("at=refs/heads/feature/retry"));
    assert_eq!(a.text.lines().filter(|l| l.starts_with('#')).count(), 1, "{}", a.text);
    let a = d.call(
        "list_pull_requests",
        json!({"project": "BB", "repo": "api", "target_branch": "main", "state": "MERGED"}),
    );
    assert!(d.requests[0].contains("direction=INCOMING") && d.requests[0].contains("state=MERGED"));
    assert!(a.text.lines().filter(|l| l.starts_with('#')).all(|l| l.contains(" MERGED ")), "{}", a.text);
    let a = d.call("list_pull_requests", json!({"project": "BB", "repo": "api", "text": "retry"}));
    assert!(d.requests[0].contains("filterText=retry"));
    assert!(a.text.contains("#1 OPEN"));
    let a = d.call("list_pull_requests", json!({"project": "BB", "repo": "api", "role": "REVIEWER", "user": "carol"}));
    assert!(
        d.requests[0].contains("role.1=REVIEWER") && d.requests[0].contains("username.1=carol"),
        "{:?}",
        d.requests
    );
    assert!(a.text.contains("#1 OPEN"));
    let a = d.call("list_pull_requests", json!({"project": "BB", "repo": "api", "draft": true}));
    assert!(a.text.contains("#2 OPEN draft"), "{}", a.text);
    let a = d.call(
        "list_pull_requests",
        json!({"project": "BB", "repo": "cli", "state": "ALL", "order": "OLDEST", "limit": 1}),
    );
    assert!(d.requests[0].contains("order=OLDEST"));
    assert!(a.text.contains("oldest first"));
    let a = d.call(
        "list_pull_requests",
        json!({"project": "BB", "repo": "api", "target_branch": "main", "source_branch": "feature/retry"}),
    );
    assert!(a.text.contains("match source_branch"), "{}", a.text);
}

#[test]
fn the_dashboard_and_the_inbox_need_no_repository_and_the_inbox_has_bitbuckets_count() {
    let mut d = StackHarness::new();
    let a = d.call("list_pull_requests", json!({"role": "AUTHOR"}));
    assert!(!a.is_error, "{}", a.text);
    assert_eq!(d.requests.len(), 1);
    assert!(d.requests[0].starts_with("GET /rest/api/latest/dashboard/pull-requests?"));
    assert!(a.text.contains("BB/api#1 OPEN"), "{}", a.text);
    let a = d.call("list_pull_requests", json!({"inbox": true}));
    assert_eq!(d.requests.len(), 2, "{:?}", d.requests);
    assert!(a.text.contains("Bitbucket counts"), "{}", a.text);
}

#[test]
fn arguments_that_cannot_go_together_are_refused_without_a_request() {
    let mut d = StackHarness::new();
    for args in [
        json!({"project": "BB"}),
        json!({"source_branch": "x"}),
        json!({"project": "BB", "repo": "api", "role": "AUTHOR"}),
    ] {
        let a = d.call("list_pull_requests", args);
        assert!(a.is_error, "{}", a.text);
        assert!(d.requests.is_empty());
    }
}

#[test]
fn an_entry_says_its_merge_commit_when_merged_and_its_conflicts_when_open() {
    let mut d = StackHarness::new();
    let open = d.call("list_pull_requests", json!({"project": "BB", "repo": "api"}));
    assert!(!open.is_error, "{}", open.text);
    // #3 conflicts: the list says so in get_pull_request's words ("Merge: conflicted").
    let line = open.text.lines().find(|l| l.starts_with("#3 ")).unwrap();
    assert!(line.contains(", merge: conflicted · Bump serde"), "{line}");
    let get = d.call("get_pull_request", json!({"project": "BB", "repo": "api", "pr_id": 3}));
    assert!(get.text.contains("\nMerge: conflicted"), "{}", get.text);
    assert!(
        open.text.lines().filter(|l| l.starts_with('#') && !l.starts_with("#3 ")).all(|l| !l.contains("conflicted"))
    );
    let merged = d.call("list_pull_requests", json!({"project": "BB", "repo": "api", "state": "MERGED"}));
    let commit = d.world.model.prs[&(("BB".to_owned(), "api".to_owned()), 4)].merge_commit.clone().unwrap();
    let line = merged.text.lines().find(|l| l.starts_with("#4 ")).unwrap();
    assert!(line.contains(&format!(", merge commit {} · ", &commit[..11])), "{line}");
}
