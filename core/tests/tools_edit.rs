//! The tools that edit what a pull request holds, against the stand-in: each reads the version it sends,
//! writes once, and on a stale version says what the thing is now.
#![allow(clippy::unwrap_used, clippy::panic)]

mod stack_harness;

use bb_core::{FetchErrorKind, Method};
use bb_stack::world::World;
use serde_json::{Value, json};
use stack_harness::{StackHarness, failed};

fn key(project: &str, repo: &str, id: u64) -> ((String, String), u64) {
    ((project.to_owned(), repo.to_owned()), id)
}

/// The id of PR 1's first open task in the seed.
fn open_task(d: &StackHarness) -> u64 {
    let pr = &d.world.model.prs[&key("BB", "api", 1)];
    pr.comments.values().find(|c| c.is_open_task()).unwrap().id
}

/// The id of PR 1's first general comment (not a task, not a reply) written by alice, bb's user.
fn own_comment(d: &StackHarness) -> u64 {
    let pr = &d.world.model.prs[&key("BB", "api", 1)];
    pr.comments.values().find(|c| c.severity == "NORMAL" && !c.deleted && c.author == "alice").unwrap().id
}

fn comment_args(comment_id: u64, extra: Value) -> Value {
    let mut a = json!({"project": "BB", "repo": "api", "pr_id": 1, "comment_id": comment_id});
    a.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
    a
}

#[test]
fn resolving_a_task_reads_its_version_then_puts_it_once_and_leaves_the_pull_requests_version_alone() {
    let mut d = StackHarness::new();
    let task = open_task(&d);
    let version = d.world.model.prs[&key("BB", "api", 1)].version;
    let a = d.call("update_pr_comment", comment_args(task, json!({"state": "RESOLVED"})));
    assert!(!a.is_error, "{}", a.text);
    assert_eq!(a.text, format!("Resolved task #{task} on PR #1 in BB/api (version 1)."));
    assert_eq!(d.requests.len(), 2, "{:?}", d.requests);
    assert_eq!(d.count("GET", &format!("/pull-requests/1/comments/{task}")), 1);
    assert_eq!(d.bodies, [json!({"version": 0, "state": "RESOLVED"})]);
    assert_eq!(d.world.model.prs[&key("BB", "api", 1)].version, version);
    let tasks = d.call("list_pr_tasks", json!({"project": "BB", "repo": "api", "pr_id": 1, "state": "RESOLVED"}));
    assert!(tasks.text.contains(&format!("Task #{task} (resolved)")), "{}", tasks.text);
}

#[test]
fn the_same_call_again_finds_nothing_to_change_and_writes_nothing() {
    let mut d = StackHarness::new();
    let task = open_task(&d);
    d.call("update_pr_comment", comment_args(task, json!({"state": "RESOLVED"})));
    let again = d.call("update_pr_comment", comment_args(task, json!({"state": "RESOLVED"})));
    assert!(!again.is_error, "{}", again.text);
    assert_eq!(again.text, format!("Task #{task} already says that and is resolved: nothing to change."));
    assert_eq!(d.requests.len(), 1);
    let reopened = d.call("update_pr_comment", comment_args(task, json!({"state": "OPEN"})));
    assert!(reopened.text.starts_with(&format!("Reopened task #{task}")), "{}", reopened.text);
}

#[test]
fn an_edit_sends_the_text_as_given_and_quotes_what_it_replaced() {
    let mut d = StackHarness::new();
    let c = own_comment(&d);
    let before = d.world.model.prs[&key("BB", "api", 1)].comments[&c].text.clone();
    let hostile = "<script>alert(1)</script> \u{202e}gnp.exe ```\n\"quoted\"";
    let a = d.call("update_pr_comment", comment_args(c, json!({"text": hostile})));
    assert!(!a.is_error, "{}", a.text);
    assert!(a.text.starts_with(&format!("Edited comment #{c} on PR #1 in BB/api (version 1).")), "{}", a.text);
    assert!(a.text.contains(&format!("It said before: {before}")), "{}", a.text);
    assert_eq!(d.bodies, [json!({"version": 0, "text": hostile})]);
    let seen = d.call("list_pr_comments", json!({"project": "BB", "repo": "api", "pr_id": 1}));
    assert!(seen.text.contains(&hostile.replace('\u{202e}', "⟨U+202E⟩")), "{}", seen.text);
}

#[test]
fn a_stale_version_is_not_retried_and_the_answer_says_what_the_task_is_now() {
    let mut d = StackHarness::new();
    let task = open_task(&d);
    // bob resolves the task and rewords it between bb's read and bb's write.
    d.before_serving(move |r, w: &mut World| {
        if r.method == Method::Put {
            let c = w.model.prs.get_mut(&key("BB", "api", 1)).unwrap().comments.get_mut(&task).unwrap();
            c.version += 1;
            c.state = "RESOLVED".into();
            c.resolver = Some("bob".into());
            c.text = "Done differently.".into();
        }
    });
    let a = d.call("update_pr_comment", comment_args(task, json!({"text": "Please add a test."})));
    assert!(a.is_error, "{}", a.text);
    assert_eq!(
        a.text.split(", last changed").next().unwrap(),
        format!(
            "Task #{task} changed after bb read it (version 0, now 1) and was not updated: it is now a task, resolved by bob"
        )
    );
    assert!(a.text.ends_with("saying: Done differently."), "{}", a.text);
    assert_eq!(d.count("PUT", "/comments/"), 1, "never retried: {:?}", d.requests);
    assert_eq!(d.count("GET", "/comments/"), 2);
}

#[test]
fn a_missing_comment_is_one_request_and_one_sentence() {
    let mut d = StackHarness::new();
    let a = d.call("update_pr_comment", comment_args(99_999, json!({"state": "RESOLVED"})));
    assert!(a.is_error);
    assert_eq!(a.text, "That comment does not exist on pull request #1 in BB/api (or it was deleted).");
    assert_eq!(d.requests.len(), 1);
    let b = d.call(
        "update_pr_comment",
        json!({"project": "BB", "repo": "api", "pr_id": 999, "comment_id": 1, "state": "OPEN"}),
    );
    assert!(b.is_error && b.text.contains("#999"), "{}", b.text);
}

#[test]
fn a_comment_that_is_not_a_task_is_not_resolved_and_nothing_is_written() {
    let mut d = StackHarness::new();
    let c = own_comment(&d);
    let a = d.call("update_pr_comment", comment_args(c, json!({"state": "RESOLVED"})));
    assert!(a.is_error);
    assert_eq!(
        a.text,
        format!("Comment #{c} is not a task, so it cannot be resolved or reopened; nothing was changed.")
    );
    assert_eq!(d.count("PUT", "/"), 0);
    let none = d.call("update_pr_comment", comment_args(c, json!({})));
    assert!(none.is_error && d.requests.is_empty(), "{}", none.text);
}

#[test]
fn a_comment_update_whose_answer_was_lost_says_it_may_have_happened() {
    let mut d = StackHarness::new();
    let task = open_task(&d);
    d.answer_with(|r| (r.method == Method::Put).then(|| failed(FetchErrorKind::Timeout, "no answer in 30 s", true)));
    let a = d.call("update_pr_comment", comment_args(task, json!({"state": "RESOLVED"})));
    assert!(a.is_error);
    assert!(
        a.text.contains("cannot tell whether the comment was updated; read it with list_pr_comments"),
        "{}",
        a.text
    );
    assert_eq!(d.requests.len(), 2, "never retried");
}

fn pr_args(id: u64, extra: Value) -> Value {
    let mut a = json!({"project": "BB", "repo": "api", "pr_id": id});
    a.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
    a
}

/// PR 1's reviewers in the stand-in, with their statuses.
fn reviewers(d: &StackHarness, id: u64) -> Vec<(String, String)> {
    d.world.model.prs[&key("BB", "api", id)].reviewers.iter().map(|r| (r.user.clone(), r.status.clone())).collect()
}

fn pair(user: &str, status: &str) -> (String, String) {
    (user.to_owned(), status.to_owned())
}

#[test]
fn a_title_edit_keeps_every_reviewer_and_their_verdicts() {
    let mut d = StackHarness::new();
    let before = reviewers(&d, 1);
    assert_eq!(before.len(), 3);
    let a = d.call("update_pull_request", pr_args(1, json!({"title": "Retry with backoff"})));
    assert!(!a.is_error, "{}", a.text);
    assert_eq!(d.requests.len(), 2, "{:?}", d.requests);
    assert_eq!(d.count("PUT", "/pull-requests/1?"), 1);
    let sent: Vec<&str> =
        d.bodies[0]["reviewers"].as_array().unwrap().iter().map(|r| r["user"]["name"].as_str().unwrap()).collect();
    assert_eq!(sent, ["bob", "carol", "dave"], "the whole list is sent: Bitbucket replaces it");
    assert_eq!(reviewers(&d, 1), before, "reviewers not named stay, with their verdicts");
    assert!(
        a.text.starts_with("Updated PR #1 in BB/api, now version 4: title now \"Retry with backoff\"."),
        "{}",
        a.text
    );
    assert!(a.text.contains("Reviewers: bob, carol, dave."), "{}", a.text);
}

#[test]
fn reviewers_are_added_and_removed_by_name_and_the_others_stay() {
    let mut d = StackHarness::new();
    let a = d.call(
        "update_pull_request",
        pr_args(1, json!({"add_reviewers": ["frank"], "remove_reviewers": ["CAROL", "zed"]})),
    );
    assert!(!a.is_error, "{}", a.text);
    assert_eq!(d.requests.len(), 2);
    assert_eq!(reviewers(&d, 1), [pair("bob", "APPROVED"), pair("dave", "UNAPPROVED"), pair("frank", "UNAPPROVED")]);
    assert!(a.text.contains("reviewers added: frank; reviewers removed: carol."), "{}", a.text);
    assert!(a.text.ends_with("Reviewers: bob, dave, frank. zed was not a reviewer."), "{}", a.text);
    let get = d.call("get_pull_request", pr_args(1, json!({})));
    assert!(get.text.contains("frank"), "{}", get.text);
}

#[test]
fn an_update_that_changes_nothing_writes_nothing() {
    let mut d = StackHarness::new();
    let title = d.world.model.prs[&key("BB", "api", 1)].title.clone();
    let a =
        d.call("update_pull_request", pr_args(1, json!({"title": title, "add_reviewers": ["bob"], "draft": false})));
    assert!(!a.is_error, "{}", a.text);
    assert_eq!(a.text, "PR #1 in BB/api already is as asked: nothing to change.");
    assert_eq!(d.requests.len(), 1);
    let none = d.call("update_pull_request", pr_args(1, json!({})));
    assert!(none.is_error && d.requests.is_empty(), "{}", none.text);
}

#[test]
fn a_stale_update_says_what_changed_meanwhile_from_bitbuckets_answer_and_is_not_retried() {
    let mut d = StackHarness::new();
    // carol retitles the pull request and adds frank between bb's read and bb's write.
    d.before_serving(|r, w: &mut World| {
        if r.method == Method::Put {
            let pr = w.model.prs.get_mut(&key("BB", "api", 1)).unwrap();
            pr.version += 1;
            pr.title = "Retry, carol's way".into();
            pr.reviewers.push(bb_stack::model::Participant {
                user: "frank".into(),
                status: "UNAPPROVED".into(),
                last_reviewed: None,
            });
        }
    });
    let a = d.call("update_pull_request", pr_args(1, json!({"description": "Now with jitter."})));
    assert!(a.is_error, "{}", a.text);
    assert_eq!(
        a.text,
        "PR #1 changed after bb read it (version 3, now 4) and was not updated: title now \"Retry, carol's way\"; reviewers added: frank. Read it again (get_pull_request) and call again if it still makes sense."
    );
    assert_eq!(d.requests.len(), 2, "the 409 carried the pull request; nothing retried: {:?}", d.requests);
}

#[test]
fn a_stale_update_without_the_pull_request_in_the_answer_reads_it_once_more() {
    let mut d = StackHarness::new();
    d.answer_with(|r| {
        (r.method == Method::Put).then(|| {
            stack_harness::error_body(
                409,
                "com.atlassian.bitbucket.pull.PullRequestOutOfDateException",
                "You are attempting to modify a pull request based on out-of-date information.",
                json!({"currentVersion": 9, "expectedVersion": 3}),
            )
        })
    });
    let a = d.call("update_pull_request", pr_args(1, json!({"title": "X"})));
    assert!(a.is_error);
    assert!(a.text.contains("was not updated: nothing bb shows differs"), "{}", a.text);
    assert_eq!((d.count("GET", "/pull-requests/1?"), d.count("PUT", "/")), (2, 1));
}

#[test]
fn hostile_text_is_sent_as_given_and_the_target_moves() {
    let mut d = StackHarness::new();
    let title = "<script>alert('t')</script> \u{202e}txt.exe";
    let description = "<img src=x onerror=alert(1)>\n[x](javascript:alert(1))";
    let a = d.call(
        "update_pull_request",
        pr_args(1, json!({"title": title, "description": description, "to_ref": "develop"})),
    );
    assert!(!a.is_error, "{}", a.text);
    assert_eq!(d.bodies[0]["title"], title);
    assert_eq!(d.bodies[0]["description"], description);
    assert_eq!(d.bodies[0]["toRef"]["id"], "refs/heads/develop");
    assert!(
        a.text.contains(&format!(
            "title now \"{}\"; description edited; target main → develop",
            title.replace('\u{202e}', "⟨U+202E⟩")
        )),
        "{}",
        a.text
    );
    let pr = &d.world.model.prs[&key("BB", "api", 1)];
    assert_eq!((pr.title.as_str(), pr.description.as_str(), pr.to.branch.as_str()), (title, description, "develop"));
}

#[test]
fn an_update_of_a_missing_pull_request_or_with_a_reviewer_bitbucket_refuses_changes_nothing() {
    let mut d = StackHarness::new();
    let a = d.call("update_pull_request", pr_args(999, json!({"title": "X"})));
    assert_eq!((a.is_error, a.text.as_str()), (true, "Pull request #999 does not exist in BB/api."));
    assert_eq!(d.requests.len(), 1);
    let before = reviewers(&d, 1);
    let b = d.call("update_pull_request", pr_args(1, json!({"add_reviewers": ["nobody"]})));
    assert!(b.is_error);
    assert_eq!(b.text, "Bitbucket refused the reviewers, so nothing was changed: Nobody is not a user.");
    assert_eq!(reviewers(&d, 1), before);
}

#[test]
fn an_update_whose_answer_was_lost_says_it_may_have_happened() {
    let mut d = StackHarness::new();
    d.answer_with(|r| (r.method == Method::Put).then(|| failed(FetchErrorKind::Timeout, "no answer in 30 s", true)));
    let a = d.call("update_pull_request", pr_args(1, json!({"title": "X"})));
    assert!(
        a.text.contains("cannot tell whether the pull request was updated; read it with get_pull_request"),
        "{}",
        a.text
    );
    assert_eq!(d.requests.len(), 2, "never retried");
}

#[test]
fn decline_then_reopen_each_read_the_version_and_post_it_once() {
    let mut d = StackHarness::new();
    let a = d.call("decline_pull_request", pr_args(11, json!({})));
    assert_eq!(a.text, "Declined PR #11 in BB/api: state DECLINED, version 1. reopen_pull_request undoes it.");
    assert_eq!(d.requests.len(), 2);
    assert_eq!(d.count("POST", "/pull-requests/11/decline?version=0"), 1);
    let again = d.call("decline_pull_request", pr_args(11, json!({})));
    assert_eq!((again.is_error, again.text.as_str()), (false, "PR #11 in BB/api is already declined: nothing to do."));
    assert_eq!(d.requests.len(), 1);
    let r = d.call("reopen_pull_request", pr_args(11, json!({})));
    assert_eq!(r.text, "Reopened PR #11 in BB/api: state OPEN, version 2.");
    assert_eq!(d.count("POST", "/pull-requests/11/reopen?version=1"), 1);
    assert_eq!(
        reviewers(&d, 11),
        [pair("alice", "UNAPPROVED"), pair("bob", "APPROVED")],
        "reviewers and verdicts stay"
    );
}

#[test]
fn a_merged_pull_request_is_neither_declined_nor_reopened_and_nothing_is_posted() {
    let mut d = StackHarness::new();
    let a = d.call("decline_pull_request", pr_args(4, json!({})));
    assert_eq!(
        (a.is_error, a.text.as_str()),
        (true, "PR #4 in BB/api is merged; only an open pull request can be declined.")
    );
    let b = d.call("reopen_pull_request", pr_args(4, json!({})));
    assert_eq!(b.text, "PR #4 in BB/api is merged; only a declined pull request can be reopened.");
    assert_eq!(d.count("POST", "/"), 0);
    let c = d.call("reopen_pull_request", pr_args(999, json!({})));
    assert_eq!(c.text, "Pull request #999 does not exist in BB/api.");
}

#[test]
fn a_stale_decline_says_what_changed_meanwhile() {
    let mut d = StackHarness::new();
    // dave pushes to the source branch between bb's read and bb's write.
    d.before_serving(|r, w: &mut World| {
        if r.method == Method::Post {
            let body = json!({"project": "BB", "repo": "api", "pullRequest": 11, "message": "More"});
            let req = bb_stack::exchange::Request::new("POST", "/_stack/push").with_json(&body);
            let resp = bb_stack::control::handle(w, &req, &["push"]);
            assert_eq!(resp.status, 200);
        }
    });
    let a = d.call("decline_pull_request", pr_args(11, json!({})));
    assert!(a.is_error);
    assert!(
        a.text.starts_with("PR #11 changed after bb read it (version 0, now 1) and was not declined: source moved "),
        "{}",
        a.text
    );
    assert_eq!(d.count("POST", "/decline"), 1);
    assert_eq!(d.world.model.prs[&key("BB", "api", 11)].state, bb_stack::model::PrState::Open);
}

#[test]
fn a_pull_requests_commits_are_listed_newest_first_and_paged() {
    let mut d = StackHarness::new();
    let expected: Vec<String> = {
        let m = &d.world.model;
        let pr = &m.prs[&key("BB", "api", 1)];
        m.history(&m.repos[&pr.from.repo], &pr.from_commit, Some(&pr.to_commit))
            .iter()
            .map(|c| c.id[..11].to_owned())
            .collect()
    };
    assert!(expected.len() >= 2, "the seed gives PR 1 more than one commit");
    let a = d.call("list_pr_commits", pr_args(1, json!({})));
    assert!(!a.is_error, "{}", a.text);
    assert_eq!(d.requests, ["GET /rest/api/latest/projects/BB/repos/api/pull-requests/1/commits?start=0&limit=25"]);
    let lines: Vec<&str> = a.text.lines().collect();
    assert_eq!(lines[0], format!("Commits of PR #1 in BB/api, from start=0 (newest first): {} shown.", expected.len()));
    let shown: Vec<&str> = lines[1..=expected.len()].iter().map(|l| l.split(' ').next().unwrap()).collect();
    assert_eq!(shown, expected);
    assert_eq!(*lines.last().unwrap(), "No more commits.");
    let first = d.call("list_pr_commits", pr_args(1, json!({"limit": 1})));
    assert!(first.text.ends_with("More commits exist — start=1."), "{}", first.text);
    let second = d.call("list_pr_commits", pr_args(1, json!({"start": 1, "limit": 1})));
    assert!(second.text.contains(&expected[1]), "{}", second.text);
    let missing = d.call("list_pr_commits", pr_args(999, json!({})));
    assert_eq!((missing.is_error, missing.text.as_str()), (true, "Pull request #999 does not exist in BB/api."));
}
