//! Every tool's title and four MCP hints, held to one table with the reason for each (issue 53 item 5).
//! A tool added without a row, a row without a tool, or a hint that differs from its row fails here.
//!
//! The hints are MCP's `ToolAnnotations` (schema 2025-03-26 and later): `readOnlyHint` (changes nothing),
//! `destructiveHint` (may overwrite or remove; false: only adds), `idempotentHint` (the same call again has
//! no further effect), `openWorldHint` (reaches something outside bb: Bitbucket). MCP calls the middle two
//! "meaningful only when readOnlyHint == false"; a read states them as what a read is: not destructive,
//! idempotent.
#![allow(clippy::unwrap_used, clippy::panic)]

use std::collections::BTreeSet;

use bb_core::{Catalogue, ExposureOptions, Toolsets};
use serde_json::Value;

const R: bool = true;
const F: bool = false;

/// tool, readOnly, destructive, idempotent, openWorld, why.
const HINTS: &[(&str, bool, bool, bool, bool, &str)] = &[
    // Reads of Bitbucket: nothing changes, so any retry is safe; every one reaches Bitbucket.
    ("get_pull_request", R, F, R, R, "reads a pull request"),
    ("list_pull_requests", R, F, R, R, "reads a list of pull requests"),
    ("get_pull_request_diff", R, F, R, R, "reads a diff"),
    ("list_pr_commits", R, F, R, R, "reads a pull request's commits"),
    ("list_pr_comments", R, F, R, R, "reads comments"),
    ("list_pr_tasks", R, F, R, R, "reads tasks"),
    ("get_build_status", R, F, R, R, "reads builds"),
    ("list_required_builds", R, F, R, R, "reads merge checks"),
    ("get_code_insights", R, F, R, R, "reads Code Insights reports"),
    ("get_commit", R, F, R, R, "reads a commit"),
    ("list_commits", R, F, R, R, "reads history"),
    ("compare_refs", R, F, R, R, "reads a diff between refs"),
    ("get_file", R, F, R, R, "reads a file"),
    ("list_files", R, F, R, R, "reads a tree"),
    ("blame_file", R, F, R, R, "reads blame"),
    ("search_code", R, F, R, R, "reads search results"),
    ("list_branches", R, F, R, R, "reads branches"),
    ("list_tags", R, F, R, R, "reads tags"),
    ("resolve_ref", R, F, R, R, "reads a ref"),
    ("search_repositories", R, F, R, R, "reads repositories"),
    ("get_repository_clone_info", R, F, R, R, "reads clone URLs"),
    ("show", R, F, R, R, "draws what a read tool reads; the view's buttons call the write tools, which say their own"),
    ("refresh_view", R, F, R, R, "reads again what a view shows"),
    ("download_file", R, F, R, R, "reads a patch or a file for the host to save; nothing in Bitbucket changes"),
    ("suggest_form_values", R, F, R, R, "reads branches and people for a form"),
    // Writes that only add: nothing that was there is lost; the same call again adds a second one.
    ("add_pr_comment", F, F, F, R, "adds a comment; a second call adds another"),
    ("create_pull_request", F, F, F, R, "adds a pull request; a second call is refused as a duplicate, not a no-op"),
    ("create_tag", F, F, F, R, "adds a tag (deleting it undoes it); a second call is refused, the name is taken"),
    (
        "apply_pr_suggestion",
        F,
        F,
        F,
        R,
        "adds a commit on the source branch (a revert undoes it); again, it no longer applies",
    ),
    // Writes that set a state the same call sets again to the same: not destructive where the other call undoes it.
    (
        "submit_pr_review",
        F,
        F,
        R,
        R,
        "sets your verdict and publishes your drafts; again, the same verdict and no drafts left",
    ),
    ("decline_pull_request", F, F, R, R, "sets DECLINED; reopen_pull_request undoes it"),
    ("reopen_pull_request", F, F, R, R, "sets OPEN; decline_pull_request undoes it"),
    ("disable_auto_merge", F, F, R, R, "cancels a pending auto-merge; enable_auto_merge sets it again"),
    // Writes that overwrite or remove what Bitbucket keeps no copy of.
    (
        "update_pr_comment",
        F,
        R,
        R,
        R,
        "replaces a comment's text, kept nowhere else; the same text again changes nothing",
    ),
    (
        "update_pull_request",
        F,
        R,
        R,
        R,
        "replaces title, description or reviewers (and a removed reviewer's verdict); again, nothing",
    ),
    ("delete_pr_comment", F, R, R, R, "removes a comment and its text; again, it is already gone"),
    ("discard_pr_review", F, R, R, R, "removes your unpublished drafts; again, there are none"),
    (
        "set_build_status",
        F,
        R,
        R,
        R,
        "replaces the result under its key, and nothing takes it back; the same result again changes nothing",
    ),
    // Writes that cannot be taken back.
    ("merge_pull_request", F, R, F, R, "merges: no call undoes it; again, it is refused as merged"),
    ("enable_auto_merge", F, R, F, R, "merges at once when the checks pass, which no call undoes"),
    // bb's own session: nothing outside bb.
    ("enable_toolset", R, F, R, F, "changes what this session lists, nothing in Bitbucket: a closed world"),
];

/// Every tool as `tools/list` lists it somewhere: everything exposed (views' tools too), and a session that may
/// turn groups on (`enable_toolset`).
fn every_listed_tool() -> Vec<Value> {
    let catalogue = Catalogue::standard();
    let mut all = catalogue.expose(&ExposureOptions::everything()).unwrap().listed();
    let session = catalogue.expose(&ExposureOptions::default()).unwrap().session_sees(Toolsets::NONE).unwrap();
    for t in session.listed() {
        if !all.iter().any(|a| a["name"] == t["name"]) {
            all.push(t);
        }
    }
    all
}

#[test]
fn every_tool_has_a_row_and_every_row_a_tool() {
    let tools: BTreeSet<&str> = Catalogue::standard().names().collect();
    let rows: BTreeSet<&str> = HINTS.iter().map(|r| r.0).collect();
    assert_eq!(rows.len(), HINTS.len(), "a tool has two rows");
    let without_row: Vec<_> = tools.difference(&rows).collect();
    let without_tool: Vec<_> = rows.difference(&tools).collect();
    assert!(
        without_row.is_empty(),
        "tools without a row in HINTS (decide their four hints and say why): {without_row:?}"
    );
    assert!(without_tool.is_empty(), "rows for tools bb does not have: {without_tool:?}");
    assert_eq!(every_listed_tool().len(), tools.len(), "every tool is listed by some exposure");
}

#[test]
fn every_listed_tool_states_its_title_and_its_four_hints_as_its_row_says() {
    for t in every_listed_tool() {
        let name = t["name"].as_str().unwrap();
        let &(_, read_only, destructive, idempotent, open_world, why) =
            HINTS.iter().find(|r| r.0 == name).unwrap_or_else(|| panic!("{name} has no row"));
        let title = t["title"].as_str().unwrap_or_else(|| panic!("{name} has no title"));
        assert!(!title.is_empty() && title != name, "{name}: a title in words");
        let a = t["annotations"].as_object().unwrap();
        assert_eq!(a.len(), 4, "{name}: exactly the four hints, all stated: {a:?}");
        let hint = |k: &str| a.get(k).and_then(Value::as_bool).unwrap_or_else(|| panic!("{name}: {k} not stated"));
        assert_eq!(
            (hint("readOnlyHint"), hint("destructiveHint"), hint("idempotentHint"), hint("openWorldHint")),
            (read_only, destructive, idempotent, open_world),
            "{name} ({why})"
        );
    }
}

#[test]
fn a_read_only_tool_is_never_destructive_and_a_tool_that_reaches_bitbucket_is_open_world() {
    for &(name, read_only, destructive, idempotent, open_world, why) in HINTS {
        if read_only {
            assert!(!destructive && idempotent, "{name}: a read is neither destructive nor unsafe to retry ({why})");
        }
        assert_eq!(open_world, name != "enable_toolset", "{name}: only the session's own tool stays inside bb");
    }
}
