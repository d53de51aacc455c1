//! Every tool's and `show`'s answers for a fixed set of calls against the stand-in, held byte for byte
//! (the view's `readAt` aside) in `snapshots/answers.jsonl`, with the set of Bitbucket requests each
//! call made. A change of structure must leave both alone; a change of behaviour updates the file
//! on purpose: `BB_UPDATE_SNAPSHOTS=1 cargo test -p bb-core --test answers_snapshot`.
#![allow(clippy::unwrap_used, clippy::panic, clippy::expect_used)]

mod stack_harness;

use serde_json::{Value, json};
use stack_harness::{StackHarness, error_body};

/// One recorded call: how the driver is prepared, and the call.
struct Case {
    name: &'static str,
    views: bool,
    prepare: fn(&mut StackHarness),
    tool: &'static str,
    args: Value,
}

fn none(_: &mut StackHarness) {}

fn no_ui_build_listing(d: &mut StackHarness) {
    d.answer_with(|r| {
        r.path
            .starts_with("/rest/ui/")
            .then(|| error_body(404, "com.atlassian.bitbucket.NoSuchEntityException", "No such resource", json!({})))
    });
}

fn activity_fails(d: &mut StackHarness) {
    d.fault("/rest/api/latest/projects/BB/repos/api/pull-requests/1/activities", 500, 10, None);
}

fn conditions_forbidden(d: &mut StackHarness) {
    d.answer_with(|r| {
        r.path.contains("/required-builds/").then(|| {
            error_body(401, "com.atlassian.bitbucket.AuthorisationException", "You are not permitted", json!({}))
        })
    });
}

/// BB/api #1 with one reviewer in each state Bitbucket shows: approved, needs work, reviewed up to the head
/// without a verdict, reviewed an older commit without one, not reviewed (no `lastReviewedCommit`).
fn every_reviewer_state(d: &mut StackHarness) {
    d.rewrite_answers(|r, v| {
        let one = r.path.ends_with("/projects/BB/repos/api/pull-requests/1");
        let listed = r.path.ends_with("/projects/BB/repos/api/pull-requests");
        let prs: Vec<&mut Value> = if one {
            vec![v]
        } else if listed {
            v["values"].as_array_mut().map(|a| a.iter_mut().filter(|p| p["id"] == 1).collect()).unwrap_or_default()
        } else {
            Vec::new()
        };
        for pr in prs {
            let head = pr["fromRef"]["latestCommit"].clone();
            let user = |slug: &str, name: &str| json!({"name": slug, "slug": slug, "displayName": name});
            pr["reviewers"] = json!([
                {"user": user("bob", "Bob Baker"), "role": "REVIEWER", "approved": true, "status": "APPROVED",
                 "lastReviewedCommit": head},
                {"user": user("carol", "Carol Chen"), "role": "REVIEWER", "approved": false, "status": "NEEDS_WORK",
                 "lastReviewedCommit": head},
                {"user": user("dave", "Dave Diaz"), "role": "REVIEWER", "approved": false, "status": "UNAPPROVED",
                 "lastReviewedCommit": head},
                {"user": user("frank", "Frank Fischer"), "role": "REVIEWER", "approved": false, "status": "UNAPPROVED",
                 "lastReviewedCommit": "0badc0ffee0badc0ffee0badc0ffee0badc0ffee"},
                {"user": user("grace", "Grace Gallagher"), "role": "REVIEWER", "approved": false, "status": "UNAPPROVED"},
            ]);
        }
    });
}

fn cases() -> Vec<Case> {
    let c = |name, tool, args| Case { name, views: false, prepare: none, tool, args };
    let v = |name, args| Case { name, views: true, prepare: none, tool: "show", args };
    vec![
        c("get open", "get_pull_request", json!({"project": "BB", "repo": "api", "pr_id": 1})),
        c("get merged", "get_pull_request", json!({"project": "BB", "repo": "api", "pr_id": 2})),
        c("get long description", "get_pull_request", json!({"project": "OPS", "repo": "infra", "pr_id": 2})),
        c("get missing repo", "get_pull_request", json!({"project": "BB", "repo": "nope", "pr_id": 1})),
        c("get missing pr", "get_pull_request", json!({"project": "BB", "repo": "api", "pr_id": 999})),
        Case {
            name: "get legacy builds",
            views: false,
            prepare: no_ui_build_listing,
            tool: "get_pull_request",
            args: json!({"project": "BB", "repo": "api", "pr_id": 1}),
        },
        Case {
            name: "get every reviewer state",
            views: false,
            prepare: every_reviewer_state,
            tool: "get_pull_request",
            args: json!({"project": "BB", "repo": "api", "pr_id": 1}),
        },
        Case {
            name: "list every reviewer state",
            views: false,
            prepare: every_reviewer_state,
            tool: "list_pull_requests",
            args: json!({"project": "BB", "repo": "api"}),
        },
        c("list open", "list_pull_requests", json!({"project": "BB", "repo": "api"})),
        c("list all", "list_pull_requests", json!({"project": "BB", "repo": "api", "state": "ALL", "limit": 100})),
        c("list drafts", "list_pull_requests", json!({"project": "BB", "repo": "api", "draft": true})),
        c(
            "list reviewer",
            "list_pull_requests",
            json!({"project": "BB", "repo": "api", "role": "REVIEWER", "user": "carol"}),
        ),
        c("list text", "list_pull_requests", json!({"project": "BB", "repo": "api", "text": "retry"})),
        c("list inbox", "list_pull_requests", json!({"inbox": true})),
        c("list dashboard", "list_pull_requests", json!({"role": "AUTHOR"})),
        c("diff small", "get_pull_request_diff", json!({"project": "BB", "repo": "api", "pr_id": 1})),
        c(
            "diff budget",
            "get_pull_request_diff",
            json!({"project": "BB", "repo": "api", "pr_id": 2, "max_bytes": 3000}),
        ),
        c("diff binary", "get_pull_request_diff", json!({"project": "BB", "repo": "api", "pr_id": 7})),
        c("diff paged", "get_pull_request_diff", json!({"project": "OPS", "repo": "infra", "pr_id": 1, "limit": 2})),
        c("diff large", "get_pull_request_diff", json!({"project": "OPS", "repo": "infra", "pr_id": 1})),
        c("commits", "list_pr_commits", json!({"project": "BB", "repo": "api", "pr_id": 1})),
        c("comments", "list_pr_comments", json!({"project": "BB", "repo": "api", "pr_id": 1})),
        c(
            "comments paged",
            "list_pr_comments",
            json!({"project": "BB", "repo": "api", "pr_id": 1, "start": 2, "limit": 2}),
        ),
        c("tasks open", "list_pr_tasks", json!({"project": "BB", "repo": "api", "pr_id": 1, "state": "OPEN"})),
        c("tasks resolved", "list_pr_tasks", json!({"project": "BB", "repo": "api", "pr_id": 1, "state": "RESOLVED"})),
        c(
            "comment add",
            "add_pr_comment",
            json!({"project": "BB", "repo": "api", "pr_id": 3, "text": "<b>hi</b> \u{202e}"}),
        ),
        c(
            "comment task",
            "add_pr_comment",
            json!({"project": "BB", "repo": "api", "pr_id": 3, "text": "do it", "task": true}),
        ),
        c(
            "review approve",
            "submit_pr_review",
            json!({"project": "BB", "repo": "api", "pr_id": 10, "action": "approve"}),
        ),
        c(
            "review needs work",
            "submit_pr_review",
            json!({"project": "BB", "repo": "api", "pr_id": 6, "action": "request_changes"}),
        ),
        c(
            "review missing",
            "submit_pr_review",
            json!({"project": "BB", "repo": "api", "pr_id": 999, "action": "approve"}),
        ),
        c(
            "create",
            "create_pull_request",
            json!({"project": "BB", "repo": "api", "title": "T", "from_ref": "docs/typo"}),
        ),
        c(
            "create no defaults",
            "create_pull_request",
            json!({"project": "BB", "repo": "api", "title": "T", "from_ref": "docs/typo", "to_ref": "main", "default_reviewers": false}),
        ),
        c(
            "comment resolve task",
            "update_pr_comment",
            json!({"project": "BB", "repo": "api", "pr_id": 1, "comment_id": 1013, "state": "RESOLVED"}),
        ),
        c(
            "comment edit missing",
            "update_pr_comment",
            json!({"project": "BB", "repo": "api", "pr_id": 1, "comment_id": 99999, "text": "x"}),
        ),
        c(
            "update reviewers",
            "update_pull_request",
            json!({"project": "BB", "repo": "api", "pr_id": 1, "add_reviewers": ["frank"], "remove_reviewers": ["carol"]}),
        ),
        c("decline", "decline_pull_request", json!({"project": "BB", "repo": "api", "pr_id": 11})),
        c("reopen open", "reopen_pull_request", json!({"project": "BB", "repo": "api", "pr_id": 11})),
        c("merge stale", "merge_pull_request", json!({"project": "BB", "repo": "api", "pr_id": 1, "version": 1})),
        c("merge vetoed", "merge_pull_request", json!({"project": "BB", "repo": "api", "pr_id": 10, "version": 0})),
        c("merge ok", "merge_pull_request", json!({"project": "BB", "repo": "api", "pr_id": 11, "version": 0})),
        c("auto-merge on", "enable_auto_merge", json!({"project": "BB", "repo": "api", "pr_id": 10})),
        c("auto-merge merges now", "enable_auto_merge", json!({"project": "BB", "repo": "api", "pr_id": 11})),
        c("auto-merge off", "disable_auto_merge", json!({"project": "BB", "repo": "api", "pr_id": 10})),
        c(
            "tag",
            "create_tag",
            json!({"project": "BB", "repo": "api", "name": "v-snap", "start_point": "main", "message": "m"}),
        ),
        c("tag exists", "create_tag", json!({"project": "BB", "repo": "api", "name": "v0.1.0", "start_point": "main"})),
        c("builds of pr", "get_build_status", json!({"project": "BB", "repo": "api", "pr_id": 1})),
        c("builds of pr page", "get_build_status", json!({"project": "BB", "repo": "api", "pr_id": 1, "start": 2})),
        c("builds bad args", "get_build_status", json!({"project": "BB"})),
        Case {
            name: "builds legacy",
            views: false,
            prepare: no_ui_build_listing,
            tool: "get_build_status",
            args: json!({"project": "BB", "repo": "api", "pr_id": 1}),
        },
        c("required", "list_required_builds", json!({"project": "BB", "repo": "api"})),
        c("required paged", "list_required_builds", json!({"project": "BB", "repo": "api", "limit": 5})),
        c("required pr", "list_required_builds", json!({"project": "BB", "repo": "api", "pr_id": 1})),
        c("required pr other", "list_required_builds", json!({"project": "WEB", "repo": "site", "pr_id": 1})),
        Case {
            name: "required pr no listing",
            views: false,
            prepare: no_ui_build_listing,
            tool: "list_required_builds",
            args: json!({"project": "BB", "repo": "api", "pr_id": 1}),
        },
        c("insights", "get_code_insights", json!({"project": "BB", "repo": "api", "pr_id": 1})),
        c("insights many", "get_code_insights", json!({"project": "BB", "repo": "api", "pr_id": 9, "limit": 5})),
        c(
            "insights filtered",
            "get_code_insights",
            json!({"project": "OPS", "repo": "infra", "pr_id": 1, "severity": "HIGH", "type": "VULNERABILITY"}),
        ),
        c("insights none", "get_code_insights", json!({"project": "BB", "repo": "api", "pr_id": 3})),
        c("show without views", "show", json!({"kind": "pull_request", "project": "BB", "repo": "api", "pr_id": 1})),
        v("card open", json!({"kind": "pull_request", "project": "BB", "repo": "api", "pr_id": 1})),
        v("card merged", json!({"kind": "pull_request", "project": "BB", "repo": "api", "pr_id": 2})),
        v("card cli", json!({"kind": "pull_request", "project": "BB", "repo": "cli", "pr_id": 3})),
        v("card infra", json!({"kind": "pull_request", "project": "OPS", "repo": "infra", "pr_id": 2})),
        v("card site", json!({"kind": "pull_request", "project": "WEB", "repo": "site", "pr_id": 1})),
        v("card missing", json!({"kind": "pull_request", "project": "BB", "repo": "api", "pr_id": 999})),
        v("card bad args", json!({"kind": "pull_request", "project": "BB", "repo": "api"})),
        Case {
            name: "card every reviewer state",
            views: true,
            prepare: every_reviewer_state,
            tool: "show",
            args: json!({"kind": "pull_request", "project": "BB", "repo": "api", "pr_id": 1}),
        },
        v("card unknown kind", json!({"kind": "diff", "project": "BB", "repo": "api", "pr_id": 1})),
        Case {
            name: "card legacy builds",
            views: true,
            prepare: no_ui_build_listing,
            tool: "show",
            args: json!({"kind": "pull_request", "project": "BB", "repo": "api", "pr_id": 1}),
        },
        Case {
            name: "card activity fails",
            views: true,
            prepare: activity_fails,
            tool: "show",
            args: json!({"kind": "pull_request", "project": "BB", "repo": "api", "pr_id": 1}),
        },
        Case {
            name: "card conditions forbidden",
            views: true,
            prepare: conditions_forbidden,
            tool: "show",
            args: json!({"kind": "pull_request", "project": "BB", "repo": "api", "pr_id": 1}),
        },
        v("diff view", json!({"kind": "diff", "project": "BB", "repo": "api", "pr_id": 1})),
        v("threads view", json!({"kind": "threads", "project": "BB", "repo": "api", "pr_id": 1})),
        v("diff view large", json!({"kind": "diff", "project": "OPS", "repo": "infra", "pr_id": 1})),
        v(
            "compare view",
            json!({"kind": "compare", "project": "BB", "repo": "api", "from_ref": "feature/retry", "to_ref": "main"}),
        ),
        v(
            "compare view missing ref",
            json!({"kind": "compare", "project": "BB", "repo": "api", "from_ref": "feature/retry", "to_ref": "gone"}),
        ),
        v("list view", json!({"kind": "pull_requests", "project": "BB", "repo": "api"})),
        v("list view cli", json!({"kind": "pull_requests", "project": "BB", "repo": "cli", "limit": 5})),
        v("list view inbox", json!({"kind": "pull_requests", "inbox": true})),
        v("list view all", json!({"kind": "pull_requests", "project": "BB", "repo": "api", "state": "ALL"})),
        c(
            "file window",
            "get_file",
            json!({"project": "BB", "repo": "api", "path": "src/client.rs", "at": "feature/retry", "line_count": 30}),
        ),
        c("file missing", "get_file", json!({"project": "BB", "repo": "api", "path": "src/nope.rs"})),
        c("files root", "list_files", json!({"project": "BB", "repo": "api"})),
        c(
            "files glob",
            "list_files",
            json!({"project": "BB", "repo": "api", "recursive": true, "glob": "src/**/*.rs"}),
        ),
        c(
            "blame",
            "blame_file",
            json!({"project": "BB", "repo": "api", "path": "src/client.rs", "at": "feature/retry", "line_count": 20}),
        ),
        c("search code", "search_code", json!({"query": "retry_with_backoff"})),
        c(
            "diff since",
            "get_pull_request_diff",
            json!({"project": "BB", "repo": "api", "pr_id": 1, "since": "last_review"}),
        ),
        c("repos of a project", "search_repositories", json!({"project_key": "OPS"})),
        v(
            "file view",
            json!({"kind": "file", "project": "BB", "repo": "api", "path": "src/client.rs", "at": "feature/retry"}),
        ),
        v("file view binary", json!({"kind": "file", "project": "BB", "repo": "api", "path": "assets/icon.png"})),
        c("comments with a suggestion", "list_pr_comments", json!({"project": "BB", "repo": "api", "pr_id": 11})),
        c("drafts", "list_pr_comments", json!({"project": "BB", "repo": "api", "pr_id": 11, "drafts": true})),
        v("diff view with drafts", json!({"kind": "diff", "project": "BB", "repo": "api", "pr_id": 11})),
    ]
}

/// The result with what differs between two reads of the same state taken out: the view's
/// `readAt`, the times in `fingerprint` and `next`, and avatar bytes (kept as their length, which still tells a changed image).
fn stable(mut result: Value) -> Value {
    fn walk(v: &mut Value) {
        match v {
            Value::Object(o) => {
                if o.contains_key("readAt") {
                    o.insert("readAt".into(), json!("<time>"));
                }
                // The fingerprint's hash stays (it is of the data, not the time); since when, and
                // when to ask again, are the clock's.
                if let Some(Value::String(f)) = o.get_mut("fingerprint")
                    && let Some((hash, _)) = f.split_once('.')
                {
                    *f = format!("{hash}.<time>");
                }
                if o.get("next").is_some_and(Value::is_u64) {
                    o.insert("next".into(), json!("<ms>"));
                }
                o.values_mut().for_each(walk);
            }
            Value::Array(a) => a.iter_mut().for_each(walk),
            Value::String(s) if s.starts_with("data:") => *s = format!("<data: {} bytes>", s.len()),
            _ => {}
        }
    }
    walk(&mut result);
    result
}

fn record() -> Vec<String> {
    let mut lines = Vec::new();
    for case in cases() {
        let mut d = if case.views { StackHarness::with_views() } else { StackHarness::new() };
        (case.prepare)(&mut d);
        let a = d.call(case.tool, case.args.clone());
        let mut requests = d.requests.clone();
        requests.sort();
        let line = json!({"case": case.name, "tool": case.tool, "args": case.args,
                          "result": stable(a.raw), "requests": requests});
        lines.push(line.to_string());
    }
    lines
}

#[test]
fn every_answer_is_the_one_recorded() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots/answers.jsonl");
    let now = record();
    if std::env::var_os("BB_UPDATE_SNAPSHOTS").is_some() {
        std::fs::write(&path, now.join("\n") + "\n").unwrap();
        return;
    }
    let recorded =
        std::fs::read_to_string(&path).expect("snapshots/answers.jsonl: record it with BB_UPDATE_SNAPSHOTS=1");
    let recorded: Vec<&str> = recorded.lines().collect();
    assert_eq!(recorded.len(), now.len(), "the number of recorded cases changed");
    for (was, is) in recorded.iter().zip(&now) {
        if *was != is.as_str() {
            let name: Value = serde_json::from_str(was).unwrap();
            panic!("case `{}` answers differently now.\nrecorded: {was}\nnow:      {is}", name["case"]);
        }
    }
}
