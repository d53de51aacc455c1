//! Bitbucket's older answers read right: shapes recorded from Stash-era and pre-4.0 servers, made by
//! rewriting the stand-in's answers the way those servers wrote them. [reference "Older servers": rec]
#![allow(clippy::unwrap_used, clippy::panic)]

mod stack_harness;

use serde_json::{Value, json};
use stack_harness::StackHarness;

fn pr(id: u64) -> Value {
    json!({"project": "BB", "repo": "api", "pr_id": id})
}

fn is_pull_request(path: &str) -> bool {
    path.ends_with("/pull-requests/1") || path.ends_with("/pull-requests")
}

/// Every pull request in `v` (one, or a page of them).
fn each_pull_request(v: &mut Value, mut f: impl FnMut(&mut Value)) {
    match v.get_mut("values").and_then(Value::as_array_mut) {
        Some(values) => values.iter_mut().for_each(f),
        None => f(v),
    }
}

#[test]
fn a_stash_era_reviewer_with_approved_true_and_no_status_approved() {
    let mut d = StackHarness::new();
    d.rewrite_answers(|r, v| {
        if is_pull_request(&r.path) {
            each_pull_request(v, |p| {
                for rev in p["reviewers"].as_array_mut().into_iter().flatten() {
                    let rev = rev.as_object_mut().unwrap();
                    rev.remove("status");
                    rev.remove("lastReviewedCommit");
                }
            });
        }
    });
    let a = d.call("get_pull_request", pr(1));
    assert!(a.text.contains("Bob Baker (bob) approved"), "{}", a.text);
    assert!(a.text.contains("Carol Chen (carol) not reviewed"), "no status and not approved: {}", a.text);
    let list = d.call("list_pull_requests", json!({"project": "BB", "repo": "api"}));
    let line = list.text.lines().find(|l| l.starts_with("#1 ")).unwrap();
    assert!(line.contains("1 of 3 approved"), "{line}");
}

#[test]
fn a_ref_with_latest_changeset_and_no_latest_commit_has_that_commit_and_its_builds() {
    let mut d = StackHarness::new();
    let sha = d.world.model.prs[&(("BB".to_owned(), "api".to_owned()), 1)].from_commit.clone();
    d.rewrite_answers(|r, v| {
        if is_pull_request(&r.path) {
            each_pull_request(v, |p| {
                for end in ["fromRef", "toRef"] {
                    let o = p[end].as_object_mut().unwrap();
                    let c = o.remove("latestCommit").unwrap();
                    o.insert("latestChangeset".into(), c);
                }
            });
        }
    });
    let a = d.call("get_pull_request", pr(1));
    assert!(a.text.contains(&format!("source commit {}", &sha[..11])), "{}", a.text);
    assert!(!a.text.contains("source commit ?"), "{}", a.text);
    assert!(d.requests.iter().any(|r| r.contains("/builds")), "builds are read: {:?}", d.requests);
}

#[test]
fn a_change_without_a_path_is_listed_but_never_asked_for_as_a_path() {
    let mut d = StackHarness::new();
    d.rewrite_answers(|r, v| {
        if r.path.ends_with("/pull-requests/1/changes") {
            let first = &mut v["values"][0];
            first.as_object_mut().unwrap().remove("path");
        }
    });
    let a = d.call("get_pull_request_diff", pr(1));
    assert!(!a.is_error, "{}", a.text);
    assert!(a.text.contains("(Bitbucket gave no path)"), "{}", a.text);
    assert!(
        !d.requests.iter().any(|r| r.contains("/diff/%3F") || r.contains("/diff/?") || r.ends_with("/diff")),
        "{:?}",
        d.requests
    );
    assert!(d.count("GET", "/diff/") >= 1, "the files with a path are read: {:?}", d.requests);
}

#[test]
fn a_change_whose_path_has_no_text_is_never_asked_for_by_compare_refs_either() {
    let mut d = StackHarness::new();
    d.rewrite_answers(|r, v| {
        if r.path.ends_with("/compare/changes") {
            for c in v["values"].as_array_mut().unwrap() {
                c["path"].as_object_mut().unwrap().remove("toString");
            }
        }
    });
    let a =
        d.call("compare_refs", json!({"project": "BB", "repo": "api", "from_ref": "feature/retry", "to_ref": "main"}));
    assert!(!a.is_error, "{}", a.text);
    assert!(!d.requests.iter().any(|r| r.contains("/diff/%3F") || r.contains("/compare/diff?")), "{:?}", d.requests);
    assert_eq!(d.count("GET", "/compare/diff"), 0, "no file has a path to ask for: {:?}", d.requests);
}

#[test]
fn a_pull_request_without_properties_has_its_counts_not_reported_never_zero() {
    let mut d = StackHarness::new();
    d.rewrite_answers(|r, v| {
        if is_pull_request(&r.path) {
            each_pull_request(v, |p| {
                p.as_object_mut().unwrap().remove("properties");
            });
        }
    });
    let a = d.call("get_pull_request", pr(1));
    assert!(a.text.contains("tasks: not reported · comments: not reported"), "{}", a.text);
    let t = d.call("list_pr_tasks", pr(1));
    assert!(t.text.starts_with("Bitbucket's task counts on PR #1: not reported."), "{}", t.text);
}

#[test]
fn a_count_left_out_of_properties_that_are_there_is_a_zero() {
    let mut d = StackHarness::new();
    d.rewrite_answers(|r, v| {
        if is_pull_request(&r.path) {
            each_pull_request(v, |p| {
                let props = p["properties"].as_object_mut().unwrap();
                props.remove("commentCount");
                props.remove("openTaskCount");
            });
        }
    });
    let a = d.call("get_pull_request", pr(1));
    assert!(a.text.contains("tasks: 0 open, 1 resolved · comments: 0"), "{}", a.text);
    let t = d.call("list_pr_tasks", pr(1));
    assert!(t.text.starts_with("Bitbucket counts 0 open and 1 resolved task(s) on PR #1."), "{}", t.text);
}

/// The counts the card and the list view carry for PR #1 when Bitbucket's answers are rewritten by `strip`.
fn view_counts(strip: fn(&mut Value)) -> (Value, Value) {
    let mut d = StackHarness::with_views();
    d.rewrite_answers(move |r, v| {
        if is_pull_request(&r.path) {
            each_pull_request(v, strip);
        }
    });
    let card = d.call("show", json!({"kind": "pull_request", "project": "BB", "repo": "api", "pr_id": 1}));
    let list = d.call("show", json!({"kind": "pull_requests", "project": "BB", "repo": "api"}));
    let item = list.raw["_meta"]["bb/view"]["list"]["items"]
        .as_array()
        .and_then(|items| items.iter().find(|i| i["id"] == 1).cloned())
        .unwrap_or_else(|| panic!("{}", list.raw));
    (card.raw["_meta"]["bb/view"]["pullRequest"]["counts"].clone(), item["counts"].clone())
}

#[test]
fn the_card_and_the_list_view_leave_counts_out_only_where_bitbucket_sent_no_properties() {
    let (card, list) = view_counts(|p| {
        p.as_object_mut().unwrap().remove("properties");
    });
    let unknown = json!({"comments": null, "openTasks": null, "resolvedTasks": null});
    assert_eq!(card, unknown);
    assert_eq!(list, unknown);
    let (card, list) = view_counts(|p| {
        let props = p["properties"].as_object_mut().unwrap();
        props.remove("commentCount");
        props.remove("openTaskCount");
    });
    let zeros = json!({"comments": 0, "openTasks": 0, "resolvedTasks": 1});
    assert_eq!(card, zeros, "left out of properties that are there: a zero");
    assert_eq!(list, zeros);
}

/// BB/api #1 on a server before 7.0, with a task of the old kind (bob's, open) on the root comment that starts
/// "Why three attempts": the driver, the comment's id and the task's.
fn with_old_task(d: &mut StackHarness) -> (u64, u64) {
    let root = d.world.model.prs[&(("BB".to_owned(), "api".to_owned()), 1)]
        .comments
        .values()
        .find(|c| c.text.starts_with("Why three attempts"))
        .unwrap()
        .id;
    let task = d.control(
        "POST",
        "/comments",
        json!({"project": "BB", "repo": "api", "pullRequest": 1, "user": "bob", "text": "Make the attempts configurable",
               "parent": {"id": root}, "severity": "BLOCKER"}),
    );
    d.world.model.application["version"] = json!("6.10.0");
    (root, task["id"].as_u64().unwrap())
}

#[test]
fn a_task_of_the_old_kind_is_shown_in_its_thread_by_list_pr_comments() {
    let mut d = StackHarness::new();
    let (root, task) = with_old_task(&mut d);
    let a = d.call("list_pr_comments", pr(1));
    assert!(!a.is_error, "{}", a.text);
    let lines: Vec<&str> = a.text.lines().collect();
    let head = lines.iter().position(|l| l.starts_with(&format!("#{root} "))).unwrap_or_else(|| panic!("{}", a.text));
    let at = lines.iter().position(|l| l.contains(&format!("☐ task #{task} of the old kind"))).unwrap();
    assert!(at > head && !lines[head + 1..at].iter().any(|l| l.starts_with('#')), "inside its thread: {}", a.text);
    assert!(lines[at].contains("open by bob") && lines[at].contains("Make the attempts configurable"), "{}", lines[at]);
    assert!(!a.text.contains(&format!("#{task} Bob")), "not a comment of its own: {}", a.text);
}

#[test]
fn a_task_of_the_old_kind_is_listed_by_list_pr_tasks_with_its_comment() {
    let mut d = StackHarness::new();
    let (root, task) = with_old_task(&mut d);
    let t = d.call("list_pr_tasks", json!({"project": "BB", "repo": "api", "pr_id": 1, "state": "OPEN"}));
    assert!(!t.is_error, "{}", t.text);
    let line =
        t.text.lines().find(|l| l.starts_with(&format!("Task #{task} "))).unwrap_or_else(|| panic!("{}", t.text));
    assert!(
        line.starts_with(&format!("Task #{task} (open; of the old kind, before 7.0: on comment #{root}")),
        "{line}"
    );
    assert!(line.ends_with("by bob: Make the attempts configurable"), "{line}");
    let resolved = d.call("list_pr_tasks", json!({"project": "BB", "repo": "api", "pr_id": 1, "state": "RESOLVED"}));
    assert!(!resolved.text.contains(&format!("Task #{task} ")), "{}", resolved.text);
}

#[test]
fn the_card_draws_a_task_of_the_old_kind_inside_its_thread_without_actions() {
    let mut d = StackHarness::with_views();
    let (root, task) = with_old_task(&mut d);
    let card = d.call("show", json!({"kind": "pull_request", "project": "BB", "repo": "api", "pr_id": 1}));
    assert!(!card.is_error, "{}", card.text);
    let items = card.raw["_meta"]["bb/view"]["pullRequest"]["activity"]["items"].as_array().unwrap().clone();
    let thread = items.iter().find(|i| i["comment"]["id"] == root).unwrap_or_else(|| panic!("{items:?}"));
    let first = &thread["comment"]["replies"][0];
    assert_eq!(first["oldKind"], true, "{first}");
    assert_eq!((first["taskId"].as_u64(), first["task"].as_bool()), (Some(task), Some(true)));
    assert_eq!(first["state"], "OPEN");
    assert_eq!(first["id"], Value::Null, "no comment id: the page offers no Reply and no Resolve");
    assert_eq!(first["author"], "bob");
    assert!(!items.iter().any(|i| i["comment"]["id"] == task), "not a thread of its own");
}
