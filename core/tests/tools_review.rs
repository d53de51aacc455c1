//! Draft reviews against the stack: drafts only their author sees, a review finished in one request that
//! publishes them (not the participants PUT, which leaves them unpublished), a stale review refused, drafts
//! discarded, a comment deleted, a suggestion applied as one commit, and a server before 7.7.
#![allow(clippy::unwrap_used, clippy::panic)]

mod stack_harness;

use serde_json::{Value, json};
use stack_harness::StackHarness;

const PR2: &str = "/rest/api/latest/projects/BB/repos/api/pull-requests/2";

fn pr(id: u64) -> Value {
    json!({"project": "BB", "repo": "api", "pr_id": id})
}

fn with(mut v: Value, extra: Value) -> Value {
    for (k, x) in extra.as_object().unwrap() {
        v[k] = x.clone();
    }
    v
}

/// The ids of the comments `slug` sees on BB/api PR 2's activity.
fn seen_by(d: &mut StackHarness, slug: &str) -> Vec<u64> {
    let (status, page) = d.get_as(slug, &format!("{PR2}/activities?limit=100"));
    assert_eq!(status, 200, "{page}");
    page["values"].as_array().unwrap().iter().filter_map(|a| a["comment"]["id"].as_u64()).collect()
}

fn draft(d: &mut StackHarness, text: &str) -> u64 {
    let a = d.call("add_pr_comment", with(pr(2), json!({"text": text, "pending": true})));
    assert!(!a.is_error, "{}", a.text);
    assert!(a.text.starts_with("Added draft comment #"), "{}", a.text);
    assert!(a.text.contains("Only you see it"), "{}", a.text);
    a.text.trim_start_matches("Added draft comment #").split(' ').next().unwrap().parse().unwrap()
}

#[test]
fn a_draft_is_seen_by_its_author_only_until_submit_pr_review_publishes_it_with_the_verdict() {
    let mut d = StackHarness::new();
    let id = draft(&mut d, "Consider a guard here.");
    assert_eq!(d.count("GET", "/application-properties"), 1, "the version is read before a draft is posted");
    assert_eq!(d.bodies.last().unwrap()["state"], "PENDING");
    assert!(seen_by(&mut d, "alice").contains(&id));
    assert!(!seen_by(&mut d, "bob").contains(&id), "bob does not see alice's draft");

    let drafts = d.call("list_pr_comments", with(pr(2), json!({"drafts": true})));
    assert!(drafts.text.contains("1 draft(s)") && drafts.text.contains("Consider a guard here."), "{}", drafts.text);
    assert!(drafts.text.contains("pending"), "{}", drafts.text);

    let done = d.call("submit_pr_review", with(pr(2), json!({"action": "approve", "comment": "Looks good."})));
    assert!(!done.is_error, "{}", done.text);
    assert!(done.text.starts_with("Published 1 draft comment and approved PR #2 in BB/api"), "{}", done.text);
    assert_eq!(d.count("PUT", "/pull-requests/2/review"), 1);
    assert_eq!(d.count("PUT", "/participants/"), 0, "the participants PUT would leave the drafts unpublished");
    let body = d.bodies.last().unwrap();
    assert_eq!(body["participantStatus"], "APPROVED");
    assert_eq!(body["commentText"], "Looks good.");
    assert!(seen_by(&mut d, "bob").contains(&id), "published: bob sees it now");
    let again = d.call("list_pr_comments", with(pr(2), json!({"drafts": true})));
    assert!(again.text.contains("0 draft(s)"), "{}", again.text);
    let card = d.call("get_pull_request", pr(2));
    assert!(card.text.contains("alice") && card.text.to_lowercase().contains("approved"), "{}", card.text);
}

#[test]
fn a_review_of_a_commit_the_pull_request_has_moved_past_is_refused_and_nothing_changes() {
    let mut d = StackHarness::new();
    let id = draft(&mut d, "Draft before the push.");
    let stale = "0123456789abcdef0123456789abcdef01234567";
    let a = d.call("submit_pr_review", with(pr(2), json!({"action": "request_changes", "commit": stale})));
    assert!(a.is_error, "{}", a.text);
    assert!(a.text.contains("has changed since commit 0123456789ab"), "{}", a.text);
    assert!(a.text.contains("nothing was published"), "{}", a.text);
    assert!(!seen_by(&mut d, "bob").contains(&id), "still a draft");
    assert_eq!(d.count("PUT", "/review"), 1, "one write, refused, not retried");
}

#[test]
fn a_comment_only_review_publishes_the_drafts_without_a_verdict_and_with_nothing_to_publish_is_refused() {
    let mut d = StackHarness::new();
    let nothing = d.call("submit_pr_review", with(pr(2), json!({"action": "comment"})));
    assert!(nothing.is_error && nothing.text.contains("Nothing to submit"), "{}", nothing.text);
    assert_eq!(d.count("PUT", ""), 0);
    draft(&mut d, "One.");
    draft(&mut d, "Two.");
    let a = d.call("submit_pr_review", with(pr(2), json!({"action": "comment"})));
    assert!(a.text.starts_with("Published 2 draft comments and commented on PR #2"), "{}", a.text);
    assert!(d.bodies.last().unwrap().get("participantStatus").is_none(), "no verdict");
}

#[test]
fn discard_deletes_only_your_drafts_and_says_how_many() {
    let mut d = StackHarness::new();
    let id = draft(&mut d, "Never mind.");
    let a = d.call("discard_pr_review", pr(2));
    assert!(!a.is_error, "{}", a.text);
    assert!(a.text.contains("1 draft comment deleted, none published"), "{}", a.text);
    assert_eq!(d.count("DELETE", "/pull-requests/2/review"), 1);
    assert!(!seen_by(&mut d, "alice").contains(&id));
    let again = d.call("discard_pr_review", pr(2));
    assert!(again.text.contains("no drafts"), "{}", again.text);
    assert_eq!(d.count("DELETE", ""), 0, "nothing to discard: nothing sent");
}

#[test]
fn a_draft_is_deleted_with_its_version_and_a_stale_version_is_refused_in_bitbuckets_words() {
    let mut d = StackHarness::new();
    let id = draft(&mut d, "Typo.");
    let a = d.call("delete_pr_comment", with(pr(2), json!({"comment_id": id})));
    assert!(a.text.starts_with(&format!("Deleted draft #{id} on PR #2")), "{}", a.text);
    assert!(d.requests.iter().any(|r| r.starts_with("DELETE ") && r.contains("version=")), "{:?}", d.requests);

    let id = draft(&mut d, "Another.");
    // Someone (the person, in Bitbucket) edits it between bb's read and its delete.
    d.before_serving(move |req, world| {
        if req.method.as_str() == "DELETE" {
            for pr in world.model.prs.values_mut() {
                if let Some(c) = pr.comments.get_mut(&id) {
                    c.version += 1;
                }
            }
        }
    });
    let b = d.call("delete_pr_comment", with(pr(2), json!({"comment_id": id})));
    assert!(b.is_error, "{}", b.text);
    assert!(b.text.contains("changed after bb read it") && b.text.contains("Nothing was deleted"), "{}", b.text);
}

#[test]
fn a_multi_line_comment_runs_from_from_line_to_line_and_a_backwards_range_is_refused_before_posting() {
    let mut d = StackHarness::new();
    let args = with(pr(2), json!({"text": "These three lines.", "path": "src/lib.rs", "line": 5, "from_line": 3}));
    let a = d.call("add_pr_comment", args.clone());
    assert!(a.text.contains("on src/lib.rs:3–5 (added lines)"), "{}", a.text);
    assert_eq!(
        d.bodies.last().unwrap()["anchor"]["multilineMarker"],
        json!({"startLine": 3, "startLineType": "ADDED"})
    );
    let bad = d.call("add_pr_comment", with(args, json!({"from_line": 9})));
    assert!(bad.is_error && bad.text.contains("from_line (9) is after line (5)"), "{}", bad.text);
    assert!(d.requests.is_empty(), "nothing sent");
}

#[test]
fn before_7_7_a_draft_is_refused_before_anything_is_posted_and_a_review_sets_the_status_as_it_always_did() {
    let mut d = StackHarness::new();
    d.control("PUT", "/application", json!({"version": "7.6.0"}));
    let a = d.call("add_pr_comment", with(pr(2), json!({"text": "Draft?", "pending": true})));
    assert!(a.is_error, "{}", a.text);
    assert!(a.text.contains("This Bitbucket is 7.6.0") && a.text.contains("Nothing was posted"), "{}", a.text);
    assert_eq!(d.count("POST", ""), 0);
    let review = d.call("submit_pr_review", with(pr(2), json!({"action": "approve"})));
    assert!(!review.is_error, "{}", review.text);
    assert_eq!(d.count("PUT", "/participants/alice"), 1, "{:?}", d.requests);
    let lists = d.call("list_pr_comments", with(pr(2), json!({"drafts": true})));
    assert!(lists.is_error && lists.text.contains("before 7.7"), "{}", lists.text);
}

#[test]
fn a_suggestion_is_applied_as_exactly_one_commit_with_the_message_said_and_a_second_apply_is_refused() {
    let mut d = StackHarness::with_views();
    let pr11 = || json!({"project": "BB", "repo": "api", "pr_id": 11});
    let before = d.call("get_pull_request", pr11());
    let a = d.call("apply_pr_suggestion", with(pr11(), json!({"comment_id": 1019})));
    assert!(!a.is_error, "{}", a.text);
    assert!(
        a.text.starts_with(
            "Applied the suggestion of comment #1019 on PR #11 in BB/api: committed to hotfix/empty-pages as commit "
        ),
        "{}",
        a.text
    );
    assert!(a.text.contains("Apply suggestion from comment #1019 on src/paging.rs"), "{}", a.text);
    assert_eq!(d.count("POST", "/apply-suggestion"), 1);
    let body = d.bodies.last().unwrap();
    assert_eq!(body["suggestionIndex"], 0);
    assert!(body["message"].is_string() && body.get("commitMessage").is_none(), "{body}");
    let file = d.call("get_file", json!({"project": "BB", "repo": "api", "path": "src/paging.rs", "at": "hotfix/empty-pages", "start_line": 23, "line_count": 1}));
    assert!(file.text.contains("self.next_page_start.or_else(|| Some(self.start + self.size))"), "{}", file.text);
    let after = d.call("get_pull_request", pr11());
    assert_ne!(before.text, after.text, "the source branch moved on by the commit");
    let commits = d.call("list_pr_commits", pr11());
    assert!(commits.text.contains("Apply suggestion from comment #1019"), "{}", commits.text);

    // The lines now read as the suggestion proposed: Bitbucket refuses the same suggestion again.
    let again = d.call("apply_pr_suggestion", with(pr11(), json!({"comment_id": 1019})));
    assert!(again.is_error, "{}", again.text);
    assert!(again.text.contains("Nothing was committed"), "{}", again.text);
    assert!(again.text.contains("already been applied"), "{}", again.text);

    // The card draws it applied: Bitbucket records it on the comment, and Apply is not offered again.
    let card = d.call("show", json!({"kind": "pull_request", "project": "BB", "repo": "api", "pr_id": 11}));
    let view = card.raw["_meta"]["bb/view"].clone();
    let suggestions: Vec<&serde_json::Value> = view["pullRequest"]["activity"]["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|i| i["comment"]["id"] == 1019)
        .flat_map(|i| i["comment"]["suggestions"].as_array().into_iter().flatten())
        .collect();
    assert_eq!(suggestions.len(), 1, "{view}");
    assert_eq!(suggestions[0]["applied"], true, "{view}");
}

#[test]
fn a_commit_message_with_a_control_character_or_past_64_kib_is_refused_before_any_request() {
    let mut d = StackHarness::new();
    let pr11 = || json!({"project": "BB", "repo": "api", "pr_id": 11});
    for (message, said) in [
        ("Fix\0paging".to_owned(), "U+0000"),
        ("Fix \u{1b}[31mpaging".to_owned(), "U+001B"),
        ("Fix\r\npaging".to_owned(), "U+000D"),
        ("Fix\u{7f}".to_owned(), "U+007F"),
        ("x".repeat(100 * 1024), "102400 bytes"),
        ("é".repeat(32 * 1024 + 1), "65538 bytes"),
    ] {
        let a = d.call("apply_pr_suggestion", with(pr11(), json!({"comment_id": 1019, "message": message})));
        assert!(a.is_error && a.text.contains(said) && a.text.contains("Nothing was sent"), "{said}: {}", a.text);
        assert!(d.requests.is_empty(), "{said}: nothing goes out, not even a read: {:?}", d.requests);
    }
    // Line breaks and tabs are a commit message's own; 64 KiB is the most.
    let message = format!("Apply the paging fix\n\n\tas suggested\n{}", "x".repeat(64 * 1024 - 36));
    assert_eq!(message.len(), 64 * 1024);
    let a = d.call("apply_pr_suggestion", with(pr11(), json!({"comment_id": 1019, "message": message})));
    assert!(!a.is_error, "{}", a.text);
    assert_eq!(d.count("POST", "/apply-suggestion"), 1);
}

#[test]
fn a_draft_or_a_missing_suggestion_is_refused_before_anything_is_sent() {
    let mut d = StackHarness::new();
    let pr11 = || json!({"project": "BB", "repo": "api", "pr_id": 11});
    let draft = d.call("apply_pr_suggestion", with(pr11(), json!({"comment_id": 1021})));
    assert!(draft.is_error && draft.text.contains("is a draft"), "{}", draft.text);
    let none = d.call("apply_pr_suggestion", with(pr11(), json!({"comment_id": 1019, "index": 1})));
    assert!(none.is_error && none.text.contains("holds 1 suggestion"), "{}", none.text);
    assert_eq!(d.count("POST", ""), 0);
}

#[test]
fn the_diff_view_carries_your_drafts_the_head_a_multi_line_range_and_a_suggestion_with_the_lines_it_replaces() {
    let mut d = StackHarness::with_views();
    let a = d.call("show", json!({"kind": "diff", "project": "BB", "repo": "api", "pr_id": 11}));
    assert!(!a.is_error, "{}", a.text);
    let view = &a.raw["_meta"]["bb/view"]["diff"];
    assert_eq!(view["drafts"], json!({"count": 1, "first": {"path": "src/paging.rs", "line": 21}}));
    assert!(view["head"].as_str().is_some_and(|h| h.len() == 40), "{}", view["head"]);
    let lines: Vec<&Value> =
        view["diffs"][0]["hunks"].as_array().unwrap().iter().flat_map(|h| h["lines"].as_array().unwrap()).collect();
    let threads: Vec<&Value> = lines.iter().flat_map(|l| l["c"].as_array().into_iter().flatten()).collect();
    let by_id = |id: u64| threads.iter().find(|t| t["id"] == id).copied().unwrap_or_else(|| panic!("#{id}"));
    assert_eq!(by_id(1021)["state"], "PENDING");
    assert!(threads.iter().all(|t| t["id"] != 1022), "bob's draft is not alice's to see");
    assert_eq!(by_id(1020)["anchor"]["from"], 20);
    assert_eq!(by_id(1020)["anchor"]["line"], 23);
    let s = &by_id(1019)["suggestions"][0];
    assert_eq!(s["old"], json!(["    self.next_page_start.or(Some(self.start + self.size))"]));
    assert_eq!(s["new"], json!(["    self.next_page_start.or_else(|| Some(self.start + self.size))"]));
    // The card counts the same drafts.
    let card = d.call("show", json!({"kind": "pull_request", "project": "BB", "repo": "api", "pr_id": 11}));
    assert_eq!(card.raw["_meta"]["bb/view"]["pullRequest"]["drafts"]["count"], 1);
}

#[test]
fn after_a_finished_review_the_diff_says_there_is_nothing_unreviewed() {
    let mut d = StackHarness::with_views();
    let shown = |d: &mut StackHarness| {
        let a = d.call("show", json!({"kind": "diff", "project": "BB", "repo": "api", "pr_id": 11}));
        a.raw["_meta"]["bb/view"]["diff"]["review"].clone()
    };
    let done = d.call("submit_pr_review", json!({"project": "BB", "repo": "api", "pr_id": 11, "action": "comment"}));
    assert!(done.text.starts_with("Published 1 draft comment"), "{}", done.text);
    let review = shown(&mut d);
    assert_eq!(review["commits"], 0, "{review}");
    let card = d.call("show", json!({"kind": "pull_request", "project": "BB", "repo": "api", "pr_id": 11}));
    let reviewers = card.raw["_meta"]["bb/view"]["pullRequest"]["reviewers"].as_array().unwrap().clone();
    let of = |slug: &str| reviewers.iter().find(|r| r["user"] == slug).cloned().unwrap();
    assert_eq!(of("alice")["reviewed"], true, "reviewed up to the head, no verdict");
    assert_eq!(of("alice")["status"], "UNAPPROVED");
}
