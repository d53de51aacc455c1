//! get_pull_request against the stack: what it says, what it costs, and how it fails.
#![allow(clippy::unwrap_used, clippy::panic)]

mod stack_harness;

use bb_core::FetchErrorKind;
use serde_json::json;
use stack_harness::{StackHarness, error_body, failed};

fn pr(id: u64) -> serde_json::Value {
    json!({"project": "BB", "repo": "api", "pr_id": id})
}

#[test]
fn an_open_pull_request_reads_in_four_requests_with_bitbuckets_counts_builds_reports_and_merge_check() {
    let mut d = StackHarness::new();
    let a = d.call("get_pull_request", pr(1));
    assert!(!a.is_error, "{}", a.text);
    assert_eq!(d.requests.len(), 4, "{:?}", d.requests);
    assert_eq!(d.count("GET", "/rest/insights/latest/"), 1, "the source commit's reports");
    assert!(
        a.text.contains(
            "\nCode Insights: 1 failed (SonarQube), 1 pending (Security scan <img src=x onerror=alert(1…), 1 passed.\n"
        ),
        "{}",
        a.text
    );
    assert_eq!(d.count("GET", "/pull-requests/1/merge"), 1);
    // Bitbucket's merge check, in its words: a failed required build, an open task and a Needs work each veto.
    assert!(
        a.text
            .contains("Merge check: blocked — 3 issue(s): Not all required builds are successful yet (You need 5 more"),
        "{}",
        a.text
    );
    assert!(a.text.starts_with("PR #1 · OPEN · Add retry with backoff to the HTTP client"));
    assert!(a.text.contains("feature/retry → main"));
    assert!(a.text.contains("Bob Baker (bob) approved"));
    assert!(a.text.contains("Carol Chen (carol) needs work"));
    assert!(a.text.contains("Builds ("));
    assert!(a.text.contains("Retries idempotent requests on 429/502/503."));
}

#[test]
fn ten_reviewers_and_a_long_description_stay_within_two_kilobytes() {
    let mut d = StackHarness::new();
    let a = d.call("get_pull_request", json!({"project": "OPS", "repo": "infra", "pr_id": 2}));
    assert!(!a.is_error, "{}", a.text);
    // A bidi or control character is shown as a mark (`⟨U+202E⟩`, 12 bytes where the character took
    // 3): the marks come on top of the two kilobytes.
    let marks = a.text.matches("⟨U+").count();
    assert!(a.text.len() <= 2048 + 9 * marks, "{} bytes, {marks} marks", a.text.len());
    assert!(a.text.contains("Reviewers (10)"));
    assert!(
        a.text
            .contains("[description cut: 1000 of 3000 characters shown; ask with a larger description_chars for more]")
    );
    let whole =
        d.call("get_pull_request", json!({"project": "OPS", "repo": "infra", "pr_id": 2, "description_chars": 5000}));
    assert!(!whole.text.contains("description cut"));
}

#[test]
fn hostile_text_passes_through_and_a_100_kb_title_is_cut_with_a_marker() {
    let mut d = StackHarness::new();
    let a = d.call("get_pull_request", pr(7));
    assert!(a.text.contains("<script>alert('title')</script> Fix ⟨U+202E⟩redro⟨U+202C⟩ and <b>bold</b>"), "{}", a.text);
    assert!(a.text.contains("[click me](javascript:alert(3))"));
    assert!(a.text.contains("Mallory"));
    let long = d.call("get_pull_request", pr(8));
    assert!(long.text.contains("[title cut: 300 of "), "{}", &long.text[..400.min(long.text.len())]);
    assert!(long.text.len() < 2048);
}

#[test]
fn unknown_project_repository_and_pull_request_each_say_which() {
    let mut d = StackHarness::new();
    let a = d.call("get_pull_request", json!({"project": "NOPE", "repo": "api", "pr_id": 1}));
    assert!(a.is_error && a.text == "Project NOPE does not exist (or this user cannot see it).", "{}", a.text);
    let a = d.call("get_pull_request", json!({"project": "BB", "repo": "nope", "pr_id": 1}));
    assert_eq!(a.text, "Repository BB/nope does not exist (or this user cannot see it).");
    let a = d.call("get_pull_request", pr(999));
    assert_eq!(a.text, "Pull request #999 does not exist in BB/api.");
}

#[test]
fn a_401_quotes_bitbucket_s_reason_without_a_credential_it_repeats() {
    let mut d = StackHarness::new();
    d.answer_with(|_| {
        let message = "Authentication failed for Bearer stack-token-alice";
        Some(error_body(401, "com.atlassian.bitbucket.AuthorisationException", message, json!({})))
    });
    let a = d.call("get_pull_request", pr(1));
    assert!(a.is_error);
    assert!(
        a.text.starts_with(
            "Bitbucket refused the request (HTTP 401): \"Authentication failed for Bearer [credential removed]\""
        ),
        "{}",
        a.text
    );
    assert!(!a.text.contains("stack-token"));
}

#[test]
fn rate_limiting_failing_and_unreachable_bitbucket_are_errors_the_model_can_act_on() {
    let mut d = StackHarness::new();
    d.fault("/rest/api", 429, 1, Some(30));
    let a = d.call("get_pull_request", pr(1));
    assert!(a.is_error && a.text.contains("rate limiting bb; try again in 30 seconds"), "{}", a.text);
    d.fault("/rest/api", 500, 1, None);
    let a = d.call("get_pull_request", pr(1));
    assert!(a.is_error && a.text.starts_with("Bitbucket failed (HTTP 500)"), "{}", a.text);
    d.answer_with(|_| Some(failed(FetchErrorKind::Unreachable, "connection refused", false)));
    let a = d.call("get_pull_request", pr(1));
    assert_eq!(a.text, "Bitbucket could not be reached (connection refused); try again later.");
}

#[test]
fn not_configured_says_so() {
    let mut d = StackHarness::new();
    let detail = "no Bitbucket server is configured: set BITBUCKET_URL and BITBUCKET_TOKEN.";
    d.answer_with(move |_| Some(failed(FetchErrorKind::NotConfigured, detail, false)));
    let a = d.call("get_pull_request", pr(1));
    assert_eq!(a.text, "No Bitbucket server is configured: set BITBUCKET_URL and BITBUCKET_TOKEN.", "one sentence");
}

#[test]
fn a_failed_build_listing_costs_one_line_not_the_answer() {
    let mut d = StackHarness::new();
    d.fault("/rest/ui", 500, 1, None);
    let a = d.call("get_pull_request", pr(1));
    assert!(!a.is_error, "{}", a.text);
    assert!(a.text.contains("Builds: not read — Bitbucket failed (HTTP 500)"), "{}", a.text);
    assert!(a.text.contains("Reviewers (3)"));
}

#[test]
fn without_the_pull_request_build_listing_the_legacy_stats_answer_in_one_more_request() {
    let mut d = StackHarness::new();
    d.answer_with(|r| {
        r.path
            .starts_with("/rest/ui/")
            .then(|| error_body(404, "com.sun.jersey.api.NotFoundException", "none", json!({})))
    });
    let a = d.call("get_pull_request", pr(1));
    assert!(!a.is_error, "{}", a.text);
    assert_eq!(
        d.requests.len(),
        5,
        "the pull request, the listing, the merge check, the reports, the stats: {:?}",
        d.requests
    );
    assert_eq!(d.count("GET", "/rest/build-status/latest/commits/stats/"), 1);
    assert!(a.text.contains("Builds of the source commit (any branch"), "{}", a.text);
}

#[test]
fn a_vetoed_pull_request_says_why_in_bitbuckets_words_and_a_closed_one_reads_no_merge_check() {
    let mut d = StackHarness::new();
    let a = d.call("get_pull_request", pr(10));
    assert!(a.text.contains("Merge check: blocked — "), "{}", a.text);
    assert!(a.text.contains("approvals"), "{}", a.text);
    let mut d = StackHarness::new();
    let merged = d.call("list_pull_requests", json!({"project": "BB", "repo": "api", "state": "MERGED", "limit": 1}));
    let id: u64 =
        merged.text.lines().nth(1).and_then(|l| l.trim_start_matches('#').split(' ').next()?.parse().ok()).unwrap();
    let a = d.call("get_pull_request", pr(id));
    assert_eq!(d.count("GET", "/merge"), 0, "{:?}", d.requests);
    assert!(!a.text.contains("Merge check"), "{}", a.text);
}

#[test]
fn a_failed_and_a_missing_required_report_are_named_in_the_merge_check_and_the_reports_line() {
    let mut d = StackHarness::new();
    let a = d.call("get_pull_request", json!({"project": "OPS", "repo": "infra", "pr_id": 1}));
    assert!(a.text.contains("\nCode Insights: 1 failed (SonarQube).\n"), "{}", a.text);
    assert!(
        a.text.contains(
            "Code Insights requirements not met (The required report \"security\" has not been published for the latest commit.)"
        ),
        "{}",
        a.text
    );
    d.world.model.insights_off = true;
    let b = d.call("get_pull_request", json!({"project": "OPS", "repo": "infra", "pr_id": 1}));
    assert!(!b.text.contains("Code Insights:"), "a server without Code Insights: no line: {}", b.text);
}

/// The merge commit the stand-in recorded for BB/api's pull request `id`.
fn merge_commit(d: &StackHarness, id: u64) -> String {
    let key = (("BB".to_owned(), "api".to_owned()), id);
    d.world.model.prs[&key].merge_commit.clone().unwrap()
}

#[test]
fn a_merged_pull_request_names_the_commit_it_was_merged_in() {
    let mut d = StackHarness::new();
    // Seeded merged: #4.
    let seeded = merge_commit(&d, 4);
    let a = d.call("get_pull_request", pr(4));
    assert!(!a.is_error, "{}", a.text);
    assert!(a.text.starts_with("PR #4 · MERGED · "), "{}", a.text);
    assert!(a.text.contains(&format!(" · merge commit {}\n", &seeded[..11])), "{}", a.text);
    // Merged through bb: the commit the merge made.
    let ok = d.call("merge_pull_request", json!({"project": "BB", "repo": "api", "pr_id": 11, "version": 0}));
    assert!(!ok.is_error, "{}", ok.text);
    let made = merge_commit(&d, 11);
    let a = d.call("get_pull_request", pr(11));
    assert!(a.text.contains(&format!(" · merge commit {}\n", &made[..11])), "{}", a.text);
    // An open one has none.
    let open = d.call("get_pull_request", pr(1));
    assert!(!open.text.contains("merge commit"), "{}", open.text);
}
