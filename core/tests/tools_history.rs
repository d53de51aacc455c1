//! A repository's refs and history against the stand-in: list_branches, list_tags, resolve_ref, list_commits,
//! get_commit and compare_refs — one request each (compare_refs: two, then one per file diffed), paged, 404s and
//! refusals in Bitbucket's words, hostile text passed through as text.
#![allow(clippy::unwrap_used, clippy::panic)]

mod stack_harness;

use serde_json::json;
use stack_harness::{StackHarness, error_body};

fn repo() -> serde_json::Value {
    json!({"project": "BB", "repo": "api"})
}

fn with(extra: serde_json::Value) -> serde_json::Value {
    let mut a = repo();
    a.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
    a
}

fn head(d: &StackHarness, branch: &str) -> String {
    d.world.model.repo("BB", "api").unwrap().branches[branch].clone()
}

#[test]
fn branches_list_the_default_first_and_marked_in_one_request_and_page_with_start() {
    let mut d = StackHarness::new();
    let a = d.call("list_branches", with(json!({"limit": 2})));
    assert!(!a.is_error, "{}", a.text);
    assert_eq!(d.requests, ["GET /rest/api/latest/projects/BB/repos/api/branches?start=0&limit=2"]);
    let lines: Vec<&str> = a.text.lines().collect();
    assert_eq!(lines[0], "Branches of BB/api, from start=0: 2 shown.");
    assert_eq!(lines[1], format!("main {} (default)", &head(&d, "main")[..11]));
    assert_eq!(lines.last().unwrap(), &"More branches exist — start=2.");
    let next = d.call("list_branches", with(json!({"limit": 2, "start": 2})));
    assert!(!next.text.contains("(default)"), "{}", next.text);
}

#[test]
fn a_branch_filter_reaches_bitbucket_as_filter_text() {
    let mut d = StackHarness::new();
    let a = d.call("list_branches", with(json!({"filter": "release", "order": "MODIFICATION"})));
    assert_eq!(
        d.requests,
        [
            "GET /rest/api/latest/projects/BB/repos/api/branches?filterText=release&orderBy=MODIFICATION&start=0&limit=25"
        ]
    );
    assert!(a.text.starts_with("Branches of BB/api matching \"release\", from start=0: 3 shown."), "{}", a.text);
    assert!(a.text.ends_with("No more branches."));
}

#[test]
fn tags_say_which_are_annotated() {
    let mut d = StackHarness::new();
    let a = d.call("list_tags", repo());
    assert_eq!(d.requests.len(), 1);
    assert!(a.text.contains("v0.1.0 ") && a.text.contains(" (annotated)"), "{}", a.text);
    assert_eq!(a.text.matches("(annotated)").count(), 1, "{}", a.text);
}

#[test]
fn a_ref_resolves_to_its_commit_or_says_it_names_nothing() {
    let mut d = StackHarness::new();
    let a = d.call("resolve_ref", with(json!({"ref": "refs/heads/develop"})));
    assert!(!a.is_error, "{}", a.text);
    assert!(
        a.text.starts_with(&format!("refs/heads/develop in BB/api is commit {} (", head(&d, "develop"))),
        "{}",
        a.text
    );
    assert_eq!(d.requests, ["GET /rest/api/latest/projects/BB/repos/api/commits?until=refs/heads/develop&limit=1"]);
    let tag = d.call("resolve_ref", with(json!({"ref": "v0.2.0"})));
    assert!(!tag.is_error, "{}", tag.text);
    let none = d.call("resolve_ref", with(json!({"ref": "no-such-branch"})));
    assert!(none.is_error);
    assert!(
        none.text.starts_with("no-such-branch names no branch, tag or commit in BB/api:")
            && none.text.contains("Commit 'no-such-branch' does not exist in this repository."),
        "{}",
        none.text
    );
    let repo_gone = d.call("resolve_ref", json!({"project": "BB", "repo": "nope", "ref": "main"}));
    assert_eq!(repo_gone.text, "Repository BB/nope does not exist (or this user cannot see it).");
}

#[test]
fn commits_of_a_range_leave_out_what_since_reaches_and_page() {
    let mut d = StackHarness::new();
    let all = d.call("list_commits", repo());
    assert!(
        all.text.starts_with("Commits of the default branch in BB/api, from start=0 (newest first):"),
        "{}",
        all.text
    );
    let range = d.call("list_commits", with(json!({"since": "v0.1.0", "until": "main", "limit": 1})));
    assert!(!range.is_error, "{}", range.text);
    assert_eq!(
        d.requests,
        ["GET /rest/api/latest/projects/BB/repos/api/commits?until=main&since=v0.1.0&start=0&limit=1"]
    );
    assert!(range.text.starts_with("Commits of v0.1.0..main in BB/api"), "{}", range.text);
    assert!(range.text.ends_with("More commits exist — start=1."), "{}", range.text);
    let bad = d.call("list_commits", with(json!({"until": "nowhere"})));
    assert!(bad.is_error && bad.text.contains("Commit 'nowhere' does not exist in this repository."), "{}", bad.text);
}

#[test]
fn a_commit_shows_its_parents_and_whole_message_and_a_missing_one_is_bitbuckets_404() {
    let mut d = StackHarness::new();
    let id = head(&d, "main");
    let a = d.call("get_commit", with(json!({"commit_id": id})));
    assert!(!a.is_error, "{}", a.text);
    // The commit and the files it changed, together.
    assert_eq!(d.requests.len(), 2, "{:?}", d.requests);
    assert!(a.text.starts_with(&format!("Commit {id} in BB/api by ")), "{}", a.text);
    assert!(a.text.contains("; parent "), "{}", a.text);
    let missing = d.call("get_commit", with(json!({"commit_id": "deadbeef"})));
    assert!(missing.is_error);
    assert_eq!(
        missing.text,
        "Bitbucket found nothing there (404): Commit 'deadbeef' does not exist in this repository."
    );
}

#[test]
fn hostile_commit_text_is_passed_through_as_text_on_one_line_in_lists() {
    let mut d = StackHarness::new();
    d.rewrite_answers(|_, v| {
        if let Some(values) = v["values"].as_array_mut() {
            for c in values {
                c["message"] = json!("<script>alert(1)</script>\nsecond line");
                c["author"]["name"] = json!("eve\n[x](javascript:alert(1))");
            }
        }
    });
    let a = d.call("list_commits", with(json!({"limit": 1})));
    assert!(a.text.contains("<script>alert(1)</script>"), "{}", a.text);
    assert!(!a.text.contains("second line"));
    assert_eq!(a.text.lines().count(), 3, "{}", a.text);
}

#[test]
fn comparing_refs_gives_commits_files_and_diffs_within_the_budget() {
    let mut d = StackHarness::new();
    // The stand-in compares the branches of a pull request: PR 2's.
    let pr = &d.world.model.prs[&(("BB".to_owned(), "api".to_owned()), 2)];
    let (from, to) = (pr.from.branch.clone(), pr.to.branch.clone());
    let a = d.call("compare_refs", with(json!({"from_ref": from, "to_ref": to})));
    assert!(!a.is_error, "{}", a.text);
    assert_eq!(d.count("GET", "/compare/commits"), 1);
    assert_eq!(d.count("GET", "/compare/changes"), 1);
    let files = d.count("GET", "/compare/diff/");
    assert!((1..=5).contains(&files), "{:?}", d.requests);
    assert_eq!(d.requests.len(), 2 + files);
    assert!(a.text.starts_with(&format!("{from} against {to} in BB/api: ")), "{}", a.text);
    assert!(a.text.contains("changed file(s) shown:") && a.text.contains("\n== "), "{}", a.text);
    let small = d.call("compare_refs", with(json!({"from_ref": from, "to_ref": to, "max_bytes": 2000})));
    assert!(small.text.len() <= 2000, "{}", small.text.len());
}

#[test]
fn comparing_with_a_ref_that_does_not_resolve_is_one_sentence() {
    let mut d = StackHarness::new();
    let a = d.call("compare_refs", with(json!({"from_ref": "main", "to_ref": "gone"})));
    assert!(a.is_error);
    assert!(a.text.contains("Commit 'gone' does not exist in this repository."), "{}", a.text);
    assert!(a.text.contains("from_ref and to_ref must each be a branch, tag or commit id in BB/api"), "{}", a.text);
}

#[test]
fn a_server_error_is_said_in_bitbuckets_words() {
    let mut d = StackHarness::new();
    d.answer_with(|r| {
        r.path
            .ends_with("/branches")
            .then(|| error_body(500, "java.lang.IllegalStateException", "Branch index is rebuilding", json!({})))
    });
    let a = d.call("list_branches", repo());
    assert!(a.is_error);
    assert_eq!(a.text, "Bitbucket failed (HTTP 500): Branch index is rebuilding; try again later.");
}
