//! The conversation and write tools against the stack: comments, tasks, create, merge, and their failures.
#![allow(clippy::unwrap_used, clippy::panic)]

mod stack_harness;

use bb_core::FetchErrorKind;
use serde_json::json;
use stack_harness::{StackHarness, failed};

fn pr(id: u64) -> serde_json::Value {
    json!({"project": "BB", "repo": "api", "pr_id": id})
}

#[test]
fn comments_are_threads_newest_first_each_once_with_anchors_tasks_and_outdated_marks() {
    let mut d = StackHarness::new();
    let a = d.call("list_pr_comments", pr(1));
    assert!(!a.is_error, "{}", a.text);
    assert_eq!(d.requests.len(), 1);
    assert!(a.text.contains("Why three attempts? Could this be configurable?"));
    assert!(a.text.contains("↳ #"), "{}", a.text);
    assert!(a.text.contains("on src/client.rs:11 of the old file (removed line)"), "{}", a.text);
    assert_eq!(a.text.matches("Thanks!").count(), 1, "a reply is shown once");
    assert!(!a.text.contains("I wrote something I regret."), "deleted comments are gone");
    let hostile = d.call("list_pr_comments", pr(7));
    assert!(
        hostile
            .text
            .contains("<script>alert('comment')</script> [x](javascript:alert(1)) <img src=x onerror=alert(1)>")
    );
    assert!(hostile.text.contains("Bidi ⟨U+202E⟩gnp.exe⟨U+202C⟩ and zero\u{200b}width"), "{}", hostile.text);
}

#[test]
fn comments_page_by_activity() {
    let mut d = StackHarness::new();
    let a = d.call("list_pr_comments", json!({"project": "BB", "repo": "api", "pr_id": 1, "limit": 2}));
    assert!(a.text.contains("More activities exist — start=2."), "{}", a.text);
    let b = d.call("list_pr_comments", json!({"project": "BB", "repo": "api", "pr_id": 1, "start": 2, "limit": 2}));
    assert!(b.text.contains("from activities start=2"));
}

#[test]
fn tasks_come_with_bitbuckets_counts_in_two_requests() {
    let mut d = StackHarness::new();
    let a = d.call("list_pr_tasks", pr(1));
    assert!(!a.is_error, "{}", a.text);
    assert_eq!(d.requests.len(), 2);
    assert!(a.text.starts_with("Bitbucket counts 1 open and 1 resolved task(s) on PR #1."), "{}", a.text);
    let open = d.call("list_pr_tasks", json!({"project": "BB", "repo": "api", "pr_id": 1, "state": "OPEN"}));
    assert!(open.text.contains("(open)") && !open.text.contains("(resolved)"), "{}", open.text);
    let resolved = d.call("list_pr_tasks", json!({"project": "BB", "repo": "api", "pr_id": 1, "state": "RESOLVED"}));
    assert!(!resolved.text.contains("(open)"), "{}", resolved.text);
}

#[test]
fn a_comment_a_reply_a_line_comment_and_a_task_are_one_post_each() {
    let mut d = StackHarness::new();
    let a = d.call("add_pr_comment", json!({"project": "BB", "repo": "api", "pr_id": 3, "text": "<b>hi</b> \u{202e}"}));
    assert!(a.text.starts_with("Added comment #"), "{}", a.text);
    assert_eq!(d.requests.len(), 1);
    assert_eq!(d.bodies[0], json!({"text": "<b>hi</b> \u{202e}"}));
    let id: u64 = a.text.split('#').nth(1).unwrap().split(' ').next().unwrap().parse().unwrap();
    let r =
        d.call("add_pr_comment", json!({"project": "BB", "repo": "api", "pr_id": 3, "text": "reply", "reply_to": id}));
    assert!(r.text.contains(&format!("in reply to #{id}")), "{}", r.text);
    let l = d.call(
        "add_pr_comment",
        json!({"project": "BB", "repo": "api", "pr_id": 1, "text": "here", "path": "src/client.rs", "line": 12}),
    );
    assert!(l.text.ends_with("on src/client.rs:12 (added line)."), "{}", l.text);
    assert_eq!(d.bodies[0]["anchor"]["fileType"], "TO");
    let t =
        d.call("add_pr_comment", json!({"project": "BB", "repo": "api", "pr_id": 3, "text": "do it", "task": true}));
    assert!(t.text.starts_with("Added task #"));
    assert_eq!(d.bodies[0]["severity"], "BLOCKER");
    let seen = d.call("list_pr_comments", pr(3));
    assert!(seen.text.contains("<b>hi</b> ⟨U+202E⟩") && seen.text.contains("task, open"), "{}", seen.text);
}

#[test]
fn a_write_whose_answer_was_lost_says_it_may_have_happened_and_how_to_check() {
    let mut d = StackHarness::new();
    d.answer_with(|_| Some(failed(FetchErrorKind::Timeout, "no answer in 30 s", true)));
    let a = d.call("add_pr_comment", json!({"project": "BB", "repo": "api", "pr_id": 3, "text": "x"}));
    assert!(a.is_error);
    assert!(a.text.contains("cannot tell whether the comment was added; look at list_pr_comments"), "{}", a.text);
    assert_eq!(d.requests.len(), 1, "never retried");
    let m = d.call("merge_pull_request", json!({"project": "BB", "repo": "api", "pr_id": 11, "version": 0}));
    assert!(m.text.contains("cannot tell whether the pull request was merged"), "{}", m.text);
}

#[test]
fn create_adds_default_reviewers_and_targets_the_default_branch_in_four_requests() {
    let mut d = StackHarness::new();
    let a =
        d.call("create_pull_request", json!({"project": "BB", "repo": "api", "title": "T", "from_ref": "docs/typo"}));
    assert!(!a.is_error, "{}", a.text);
    assert_eq!(d.requests.len(), 4, "{:?}", d.requests);
    assert!(a.text.contains("docs/typo → main"), "{}", a.text);
    assert!(a.text.contains("default reviewers added: bob, carol"), "{}", a.text);
    let dup = d.call("create_pull_request", json!({"project": "BB", "repo": "api", "title": "T", "from_ref": "docs/typo", "to_ref": "main", "default_reviewers": false}));
    assert_eq!(d.requests.len(), 1);
    assert!(
        dup.is_error && dup.text.starts_with("A pull request for these branches is already open: #"),
        "{}",
        dup.text
    );
}

#[test]
fn merge_checks_the_version_and_reports_vetoes_in_bitbuckets_words() {
    let mut d = StackHarness::new();
    let stale = d.call("merge_pull_request", json!({"project": "BB", "repo": "api", "pr_id": 1, "version": 1}));
    assert!(stale.is_error && stale.text.contains("its current version is 3"), "{}", stale.text);
    let veto = d.call("merge_pull_request", json!({"project": "BB", "repo": "api", "pr_id": 10, "version": 0}));
    assert!(
        veto.text.contains("Bitbucket vetoed the merge: Not enough approvals: You need 2 more approvals"),
        "{}",
        veto.text
    );
    let vetoed = d.call("merge_pull_request", json!({"project": "BB", "repo": "api", "pr_id": 1, "version": 3}));
    assert!(
        vetoed.text.contains("Bitbucket vetoed the merge: Not all required builds are successful yet: You need 5 more"),
        "{}",
        vetoed.text
    );
    // #11: its required builds all passed, no open task, no Needs work.
    let ok = d.call("merge_pull_request", json!({"project": "BB", "repo": "api", "pr_id": 11, "version": 0}));
    assert!(!ok.is_error, "{}", ok.text);
    assert_eq!(d.requests.len(), 1);
    assert!(ok.text.starts_with("Merged PR #11 into main"), "{}", ok.text);
}

#[test]
fn builds_of_a_pull_request_and_of_a_commit() {
    let mut d = StackHarness::new();
    let a = d.call("get_build_status", pr(1));
    assert!(!a.is_error, "{}", a.text);
    // The listing, the pull request (its branches), the conditions and the branching model.
    assert_eq!(d.requests.len(), 4, "{:#?}", d.requests);
    assert!(a.text.contains("FAILED"), "{}", a.text);
    let commit = a.text.lines().find(|l| l.contains("http")).map(|_| ()).is_some();
    assert!(commit);
    let head = d.call("get_pull_request", pr(1));
    let sha = head.text.split("source commit ").nth(1).unwrap().split_whitespace().next().unwrap().to_owned();
    let full = d.world.model.prs.values().find(|p| p.from_commit.starts_with(&sha)).unwrap().from_commit.clone();
    let c = d.call("get_build_status", json!({"commit_id": full}));
    assert_eq!(d.requests.len(), 2);
    assert!(c.text.contains("Bitbucket's totals for the commit"), "{}", c.text);
    let paged = d.call("get_build_status", json!({"project": "BB", "repo": "api", "pr_id": 1, "limit": 2}));
    assert!(paged.text.contains("More builds exist — start=2."), "{}", paged.text);
    let bad = d.call("get_build_status", json!({"project": "BB"}));
    assert!(bad.is_error && d.requests.is_empty());
}

#[test]
fn build_status_of_a_pull_request_says_which_required_builds_pass_fail_run_or_are_missing() {
    let mut d = StackHarness::new();
    let a = d.call("get_build_status", pr(1));
    let line =
        a.text.lines().find(|l| l.starts_with("Required builds (into main):")).unwrap_or_else(|| panic!("{}", a.text));
    assert!(line.contains("1 of 6 required builds passed"), "{line}");
    assert!(line.contains("ci-integration failed"), "{line}");
    assert!(line.contains("BB-LINT in progress"), "{line}");
    assert!(line.contains("ci-case missing (no build yet: the merge check blocks on it)"), "{line}");
    // A later page is a plain page: nothing is decided on part of the listing.
    let later = d.call("get_build_status", json!({"project": "BB", "repo": "api", "pr_id": 1, "start": 2}));
    assert!(!later.text.contains("Required builds"), "{}", later.text);
    assert!(!d.requests.iter().any(|r| r.contains("required-builds")));
}

#[test]
fn build_status_without_the_pull_request_listing_decides_nothing_about_requirements() {
    let mut d = StackHarness::new();
    d.fault("/rest/ui/", 404, 1, None);
    let a = d.call("get_build_status", pr(1));
    assert!(
        a.text.contains("Required builds: not decided — this server has no pull request build listing"),
        "{}",
        a.text
    );
    assert!(a.text.contains("any branch"), "{}", a.text);
}

#[test]
fn required_builds_for_a_pull_request_list_every_condition_and_where_each_build_stands() {
    let mut d = StackHarness::new();
    let a = d.call("list_required_builds", json!({"project": "BB", "repo": "api", "pr_id": 1}));
    assert!(!a.is_error, "{}", a.text);
    assert!(a.text.contains("11 condition(s):"), "{}", a.text);
    assert!(a.text.contains("Required builds (into main): 1 of 6 required builds passed"), "{}", a.text);
    assert_eq!(d.count("GET", "/conditions"), 1);
    let b = d.call("list_required_builds", json!({"project": "WEB", "repo": "site", "pr_id": 1}));
    assert!(b.text.contains("Required builds"), "{}", b.text);
}

#[test]
fn required_builds_in_words() {
    let mut d = StackHarness::new();
    let a = d.call("list_required_builds", json!({"project": "BB", "repo": "api"}));
    assert_eq!(d.requests.len(), 1);
    assert!(a.text.contains("#1: pull requests into any branch need successful builds: ci-unit"), "{}", a.text);
    assert!(a.text.contains("except pull requests from branches matching Dependabot/**"));
    assert!(a.text.contains("the Development branch (branching model)"));
    let p = d.call("list_required_builds", json!({"project": "BB", "repo": "api", "limit": 5}));
    assert!(p.text.contains("More conditions exist — start=5."));
}

#[test]
fn a_review_reads_the_drafts_then_finishes_with_one_put_that_sets_the_status() {
    let mut d = StackHarness::new();
    let a = d.call("submit_pr_review", json!({"project": "BB", "repo": "api", "pr_id": 10, "action": "approve"}));
    assert_eq!(a.text, "Approved PR #10 in BB/api as alice.", "{}", a.text);
    assert_eq!(d.requests.len(), 2, "{:?}", d.requests);
    assert_eq!(d.count("GET", "/pull-requests/10/review"), 1);
    assert_eq!(d.count("PUT", "/pull-requests/10/review"), 1);
    let get = d.call("get_pull_request", pr(10));
    assert!(get.text.contains("alice") && get.text.contains("approved"), "{}", get.text);
    let b =
        d.call("submit_pr_review", json!({"project": "BB", "repo": "api", "pr_id": 6, "action": "request_changes"}));
    assert_eq!(b.text, "Marked as needs work PR #6 in BB/api as alice.", "{}", b.text);
    assert_eq!(d.requests.len(), 2, "requests of this call: {:?}", d.requests);
}

#[test]
fn a_review_with_a_comment_sends_it_in_the_same_put() {
    let mut d = StackHarness::new();
    let a = d.call(
        "submit_pr_review",
        json!({"project": "BB", "repo": "api", "pr_id": 10, "action": "withdraw", "comment": "Taking another look."}),
    );
    assert_eq!(a.text, "Withdrew the review of PR #10 in BB/api as alice, with your summary comment.", "{}", a.text);
    assert_eq!(d.count("POST", "/comments"), 0, "the summary travels in the review's PUT");
    assert_eq!(d.bodies.last().unwrap()["commentText"], "Taking another look.");
    let comments = d.call("list_pr_comments", pr(10));
    assert!(comments.text.contains("Taking another look."), "{}", comments.text);
}

#[test]
fn the_author_cannot_review_and_nothing_is_commented() {
    let mut d = StackHarness::new();
    let a = d.call(
        "submit_pr_review",
        json!({"project": "BB", "repo": "api", "pr_id": 1, "action": "approve", "comment": "LGTM"}),
    );
    assert!(a.is_error, "{}", a.text);
    assert!(a.text.contains("author"), "{}", a.text);
    assert_eq!(d.count("POST", "/comments"), 0);
}

#[test]
fn a_review_of_a_missing_pull_request_says_so() {
    let mut d = StackHarness::new();
    let a = d.call("submit_pr_review", json!({"project": "BB", "repo": "api", "pr_id": 999, "action": "approve"}));
    assert!(a.is_error);
    assert_eq!(a.text, "Pull request #999 does not exist in BB/api. Nothing was submitted.");
    assert_eq!(d.count("PUT", ""), 0);
}

#[test]
fn a_review_whose_outcome_is_unknown_says_how_to_check_and_is_not_retried() {
    let mut d = StackHarness::new();
    d.answer_with(|r| {
        (r.method == bb_core::Method::Put).then(|| failed(FetchErrorKind::Timeout, "no answer in 30 s", true))
    });
    let a = d.call("submit_pr_review", json!({"project": "BB", "repo": "api", "pr_id": 10, "action": "approve"}));
    assert!(a.is_error);
    assert!(a.text.contains("cannot tell whether the review was published"), "{}", a.text);
    assert!(a.text.contains("list_pr_comments with drafts: true"), "{}", a.text);
    assert_eq!(d.count("PUT", ""), 1, "not retried");
}
