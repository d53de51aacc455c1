//! A card reads the Code Insights of the commit its pull request was last seen at (by a card, a diff view
//! or a refresh) beside the pull request, and draws them only when the pull request names that commit:
//! when it has moved, the remembered commit's answers are not drawn, whether they come before the pull
//! request's or after the moved commit's reads went out, and the moved commit's are read and drawn.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod stack_harness;

use bb_core::FetchRequest;
use bb_stack::exchange::Request;
use serde_json::{Value, json};
use stack_harness::StackHarness;

const PR: &str = "/rest/api/latest/projects/BB/repos/api/pull-requests/1";
const INSIGHTS: &str = "/rest/insights/latest/projects/BB/repos/api/commits/";

fn card_args() -> Value {
    json!({"kind": "pull_request", "project": "BB", "repo": "api", "pr_id": 1})
}

/// The card of BB/api #1: its view data.
fn card(d: &mut StackHarness) -> Value {
    let a = d.call("show", card_args());
    assert!(!a.is_error, "{}", a.text);
    a.raw["_meta"]["bb/view"].clone()
}

/// The pull request's answer comes after those of everything asked for with it.
fn pull_request_answers_last(d: &mut StackHarness) {
    d.answer_last(|r: &FetchRequest| r.path == PR);
}

/// Pushes a commit to BB/api #1's source branch and puts one report, `rescan`, on it; the new commit.
fn push_with_a_report(d: &mut StackHarness) -> String {
    let pr = d.control("POST", "/push", json!({"project": "BB", "repo": "api", "pullRequest": 1}));
    let commit = pr["fromRef"]["latestCommit"].as_str().unwrap().to_owned();
    let token = d.world.default_token();
    let put = Request::new("PUT", &format!("{INSIGHTS}{commit}/reports/rescan"))
        .with_json(&json!({"title": "Scan of the new commit", "result": "PASS"}))
        .with_header("Authorization", &format!("Bearer {token}"));
    let r = bb_stack::routes::serve(&mut d.world, &put);
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    commit
}

/// The requests of the last call, by index: where the pull request's read was served, and the Code Insights reads
/// of `commit` (reports or annotations) were.
fn positions(d: &StackHarness, commit: &str) -> (usize, Vec<usize>) {
    let pr = d.requests.iter().position(|r| r == &format!("GET {PR}?")).expect("the pull request was read");
    let insights = d.requests.iter().enumerate().filter(|(_, r)| r.contains(&format!("{INSIGHTS}{commit}/")));
    (pr, insights.map(|(i, _)| i).collect())
}

fn report_keys(view: &Value) -> Vec<&str> {
    let reports = view["pullRequest"]["insights"]["reports"].as_array();
    reports.into_iter().flatten().filter_map(|r| r["key"].as_str()).collect()
}

/// BB/api #1's source commit in the seed, which has three reports.
fn seeded_commit(d: &mut StackHarness) -> String {
    let (_, pr) = d.get_as("alice", PR);
    pr["fromRef"]["latestCommit"].as_str().unwrap().to_owned()
}

#[test]
fn a_card_shown_again_has_its_commits_insights_answered_before_its_pull_request() {
    let mut d = StackHarness::with_views();
    let commit = seeded_commit(&mut d);
    let cold = card(&mut d);
    pull_request_answers_last(&mut d);
    let warm = card(&mut d);
    let (pr, insights) = positions(&d, &commit);
    assert_eq!(insights.len(), 2, "the reports and the annotations, once: {:#?}", d.requests);
    assert!(insights.iter().all(|&i| i < pr), "asked for with the pull request: {:#?}", d.requests);
    assert_eq!(warm["pullRequest"]["insights"], cold["pullRequest"]["insights"]);
    assert_eq!(report_keys(&warm), ["sonar", "security", "tests"]);
}

#[test]
fn the_remembered_commits_insights_answered_after_the_pull_request_moved_are_not_drawn() {
    let mut d = StackHarness::with_views();
    let old = seeded_commit(&mut d);
    card(&mut d);
    let new = push_with_a_report(&mut d);
    // Served in the order asked: the pull request first, then the old commit's reads, answered after the new
    // commit's went out.
    let view = card(&mut d);
    let (pr, stale) = positions(&d, &old);
    let (_, fresh) = positions(&d, &new);
    assert_eq!((stale.len(), fresh.len()), (2, 2), "{:#?}", d.requests);
    assert!(pr < stale[0] && stale.iter().all(|&i| i < fresh[0]), "{:#?}", d.requests);
    assert_eq!(report_keys(&view), ["rescan"], "the new commit's reports, none of the old one's");
    assert_eq!(view["pullRequest"]["insights"]["annotations"]["total"], 0, "nor its annotations");
}

#[test]
fn the_remembered_commits_insights_answered_before_the_pull_request_moved_are_not_drawn() {
    let mut d = StackHarness::with_views();
    let old = seeded_commit(&mut d);
    card(&mut d);
    let new = push_with_a_report(&mut d);
    pull_request_answers_last(&mut d);
    let view = card(&mut d);
    let (pr, stale) = positions(&d, &old);
    let (_, fresh) = positions(&d, &new);
    assert!(stale.len() == 2 && stale.iter().all(|&i| i < pr), "{:#?}", d.requests);
    assert!(fresh.len() == 2 && fresh.iter().all(|&i| i > pr), "{:#?}", d.requests);
    assert_eq!(report_keys(&view), ["rescan"]);
    assert_eq!(view["pullRequest"]["insights"]["annotations"]["total"], 0);
}

#[test]
fn a_diff_view_remembers_the_commit_for_the_next_card() {
    let mut d = StackHarness::with_views();
    let commit = seeded_commit(&mut d);
    let diff = d.call("show", json!({"kind": "diff", "project": "BB", "repo": "api", "pr_id": 1}));
    assert!(!diff.is_error, "{}", diff.text);
    pull_request_answers_last(&mut d);
    let view = card(&mut d);
    let (pr, insights) = positions(&d, &commit);
    assert!(insights.len() == 2 && insights.iter().all(|&i| i < pr), "{:#?}", d.requests);
    assert_eq!(report_keys(&view), ["sonar", "security", "tests"]);
}

#[test]
fn a_refresh_of_a_card_reads_the_remembered_commits_insights_at_once_and_sees_a_push() {
    let mut d = StackHarness::with_views();
    let old = seeded_commit(&mut d);
    let shown = card(&mut d);
    let fingerprint = shown["fingerprint"].as_str().unwrap().to_owned();
    pull_request_answers_last(&mut d);
    d.advance(20_000);
    let refresh = json!({"show": card_args(), "fingerprint": fingerprint});
    let same = d.call("refresh_view", refresh.clone());
    assert_eq!(same.text, "Unchanged.");
    let (pr, insights) = positions(&d, &old);
    assert!(insights.len() == 2 && insights.iter().all(|&i| i < pr), "{:#?}", d.requests);
    let new = push_with_a_report(&mut d);
    d.advance(20_000);
    let moved = d.call("refresh_view", refresh);
    assert_eq!(moved.text, "Changed.", "a push is seen though the commit remembered was the old one");
    let (_, fresh) = positions(&d, &new);
    assert_eq!(fresh.len(), 2, "{:#?}", d.requests);
    assert_eq!(report_keys(&moved.raw["_meta"]["bb/view"]), ["rescan"]);
    // The refresh remembered the new commit: the next card asks for its insights at once.
    card(&mut d);
    let (pr, insights) = positions(&d, &new);
    assert!(insights.len() == 2 && insights.iter().all(|&i| i < pr), "{:#?}", d.requests);
}
