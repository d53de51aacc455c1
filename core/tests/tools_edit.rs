//! The tools that edit what a pull request holds, against the stand-in: each reads the version it sends,
//! writes once, and on a stale version says what the thing is now.
#![allow(clippy::unwrap_used, clippy::panic)]

mod stack_driver;

use bb_core::{FetchErrorKind, Method};
use bb_stack::world::World;
use serde_json::{Value, json};
use stack_driver::{Driver, failed};

fn key(project: &str, repo: &str, id: u64) -> ((String, String), u64) {
    ((project.to_owned(), repo.to_owned()), id)
}

/// The id of PR 1's first open task in the seed.
fn open_task(d: &Driver) -> u64 {
    let pr = &d.world.model.prs[&key("BB", "api", 1)];
    pr.comments.values().find(|c| c.is_open_task()).unwrap().id
}

/// The id of PR 1's first general comment (not a task, not a reply) written by alice, bb's user.
fn own_comment(d: &Driver) -> u64 {
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
    let mut d = Driver::new();
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
    let mut d = Driver::new();
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
    let mut d = Driver::new();
    let c = own_comment(&d);
    let before = d.world.model.prs[&key("BB", "api", 1)].comments[&c].text.clone();
    let hostile = "<script>alert(1)</script> \u{202e}gnp.exe ```\n\"quoted\"";
    let a = d.call("update_pr_comment", comment_args(c, json!({"text": hostile})));
    assert!(!a.is_error, "{}", a.text);
    assert!(a.text.starts_with(&format!("Edited comment #{c} on PR #1 in BB/api (version 1).")), "{}", a.text);
    assert!(a.text.contains(&format!("It said before: {before}")), "{}", a.text);
    assert_eq!(d.bodies, [json!({"version": 0, "text": hostile})]);
    let seen = d.call("list_pr_comments", json!({"project": "BB", "repo": "api", "pr_id": 1}));
    assert!(seen.text.contains(hostile), "{}", seen.text);
}

#[test]
fn a_stale_version_is_not_retried_and_the_answer_says_what_the_task_is_now() {
    let mut d = Driver::new();
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
    let mut d = Driver::new();
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
    let mut d = Driver::new();
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
    let mut d = Driver::new();
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
