//! get_pull_request_diff against the stack: change list, budgets, cuts, costs.
#![allow(clippy::unwrap_used, clippy::panic)]

mod stack_harness;

use serde_json::json;
use stack_harness::{StackHarness, error_body};

#[test]
fn without_paths_the_change_list_and_the_first_files_come_with_line_numbers() {
    let mut d = StackHarness::new();
    let a = d.call("get_pull_request_diff", json!({"project": "BB", "repo": "api", "pr_id": 1}));
    assert!(!a.is_error, "{}", a.text);
    assert_eq!(d.requests.len(), 1 + 3, "{:?}", d.requests);
    assert!(a.text.contains("3 changed file(s) shown"));
    assert!(a.text.contains("M src/client.rs"));
    assert!(a.text.contains("A src/retry.rs"));
    assert!(a.text.contains("-12         self.send(Request::get(url))") || a.text.contains("-11 "), "{}", a.text);
    assert!(a.text.contains("+12 "));
    assert!(a.text.contains("⟨comment #"));
}

#[test]
fn a_big_file_is_cut_at_its_budget_with_a_marker_that_says_how_to_get_more() {
    let mut d = StackHarness::new();
    for budget in [2000u64, 20_000, 100_000] {
        let a =
            d.call("get_pull_request_diff", json!({"project": "BB", "repo": "api", "pr_id": 2, "max_bytes": budget}));
        assert!(a.text.len() <= budget as usize, "{} > {budget}", a.text.len());
        assert!(
            a.text.contains("ask with paths=[\"src/parser/generated.rs\"] and a larger max_bytes")
                || a.text.contains("budget"),
            "{}",
            &a.text[a.text.len().saturating_sub(600)..]
        );
    }
}

#[test]
fn paths_go_out_with_the_change_list_in_one_stage() {
    let mut d = StackHarness::new();
    let a = d
        .call("get_pull_request_diff", json!({"project": "BB", "repo": "api", "pr_id": 1, "paths": ["docs/retry.md"]}));
    assert_eq!(d.requests.len(), 2);
    assert!(
        d.requests[1].starts_with("GET /rest/api/latest/projects/BB/repos/api/pull-requests/1/diff/docs/retry.md?")
    );
    assert!(a.text.contains("== docs/retry.md\n@@ -0,0 +1,3 @@\n+1 # Retry"), "{}", a.text);
    assert!(!a.text.contains("== src/client.rs"));
}

#[test]
fn a_failed_change_list_costs_a_line_when_paths_were_asked() {
    let mut d = StackHarness::new();
    d.answer_with(|r| {
        r.path
            .ends_with("/changes")
            .then(|| error_body(404, "com.sun.jersey.api.NotFoundException", "old server", json!({})))
    });
    let a = d
        .call("get_pull_request_diff", json!({"project": "BB", "repo": "api", "pr_id": 1, "paths": ["docs/retry.md"]}));
    assert!(!a.is_error, "{}", a.text);
    assert!(a.text.contains("Change list: not read — Bitbucket found nothing there (404): old server"), "{}", a.text);
    assert!(a.text.contains("+1 # Retry"));
}

#[test]
fn more_files_than_shown_are_named_with_how_to_ask() {
    let mut d = StackHarness::new();
    let a = d.call("get_pull_request_diff", json!({"project": "OPS", "repo": "infra", "pr_id": 1}));
    assert_eq!(d.requests.len(), 1 + 5);
    assert!(a.text.contains("[diffs of 2 more file(s) not shown; ask with paths=[…]"), "{}", a.text);
    let a = d.call("get_pull_request_diff", json!({"project": "OPS", "repo": "infra", "pr_id": 1, "limit": 2}));
    assert!(a.text.contains("More changed files exist — start=2."), "{}", a.text);
}

#[test]
fn hostile_diff_text_passes_through_with_bidi_controls_made_visible() {
    let mut d = StackHarness::new();
    let a = d.call("get_pull_request_diff", json!({"project": "BB", "repo": "api", "pr_id": 7}));
    assert!(a.text.contains("+2 <script>fetch('/steal?c=' + document.cookie)</script>"), "{}", a.text);
    assert!(a.text.contains("⟨U+202E⟩ comment") && !a.text.contains('\u{202e}'), "{}", a.text);
}
