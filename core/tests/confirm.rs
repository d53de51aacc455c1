//! The person confirms what cannot be undone (issue 51): which tools ask, the form, the pin, and what
//! a decline, a dismissal, an unticked box or no answer leave (nothing written). These tests answer
//! bb's questions; the other tool scenarios run with the admin's switch that turns asking off.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod stack_harness;

use bb_core::{Asks, Catalogue};
use serde_json::{Value, json};
use stack_harness::StackHarness;

fn accept() -> impl FnMut(&Value) -> Value {
    |_| json!({"action": "accept", "content": {"confirm": true}})
}

fn writes(h: &StackHarness) -> Vec<&String> {
    h.requests.iter().filter(|r| !r.starts_with("GET ")).collect()
}

#[test]
fn the_tools_that_ask_are_these_and_no_other() {
    let exposed = Catalogue::standard().expose(&bb_core::ExposureOptions::everything()).unwrap();
    let mut asking: Vec<(&str, &str)> =
        exposed.tools().iter().filter(|t| !matches!(t.asks, Asks::Never)).map(|t| (t.name, t.asks.words())).collect();
    asking.sort();
    assert_eq!(
        asking,
        [
            ("apply_pr_suggestion", "always"),
            ("create_tag", "always"),
            ("delete_pr_comment", "always"),
            ("disable_auto_merge", "always"),
            ("enable_auto_merge", "always"),
            ("merge_pull_request", "always"),
            ("set_build_status", "always"),
            ("submit_pr_review", "when it approves or says Needs work"),
            ("update_pull_request", "when it changes the draft flag"),
        ]
    );
}

#[test]
fn merge_asks_with_a_required_box_naming_the_pull_request_and_merges_once_ticked() {
    let mut h = StackHarness::asking(accept());
    let a = h.call("merge_pull_request", json!({"project": "BB", "repo": "api", "pr_id": 11, "version": 0}));
    assert!(!a.is_error, "{}", a.text);
    assert!(a.text.starts_with("Merged PR #11 into main"), "{}", a.text);
    assert_eq!(h.questions.len(), 1);
    let q = &h.questions[0];
    assert_eq!(q["mode"], "form");
    let message = q["message"].as_str().unwrap();
    assert!(message.starts_with("Merge pull request #11 \u{201c}"), "{message}");
    assert!(message.contains("in BB/api ("), "{message}");
    assert!(
        message.contains("→ main) at version 0, with the merge strategy \u{201c}Merge commit\u{201d}"),
        "{message}"
    );
    assert!(!message.contains("http"), "no links in the message: {message}");
    let box_ = &q["requestedSchema"]["properties"]["confirm"];
    assert_eq!(box_["type"], "boolean");
    assert_eq!(box_["title"], "Merge #11 into main");
    assert!(box_.get("default").is_none());
    assert_eq!(q["requestedSchema"]["required"], json!(["confirm"]));
    // Read, asked, then written at the version seen with the strategy shown.
    let posted: Vec<&Value> = h.bodies.iter().collect();
    assert!(posted.iter().any(|b| b["strategyId"] == "no-ff" && b["version"] == 0), "{posted:?}");
    assert_eq!(writes(&h).len(), 1, "{:?}", h.requests);
}

#[test]
fn a_decline_a_dismissal_and_an_unticked_box_merge_nothing() {
    for (answer, said) in [
        (json!({"action": "decline"}), "The person declined: nothing was merged."),
        (json!({"action": "cancel"}), "The person dismissed the confirmation without answering: nothing was merged."),
        (
            json!({"action": "accept", "content": {"confirm": false}}),
            "The person accepted without ticking the confirmation box: nothing was merged.",
        ),
    ] {
        let reply = answer.clone();
        let mut h = StackHarness::asking(move |_| reply.clone());
        let a = h.call("merge_pull_request", json!({"project": "BB", "repo": "api", "pr_id": 11, "version": 0}));
        assert!(a.text.starts_with(said), "{answer}: {}", a.text);
        assert!(a.text.contains("Do not call merge_pull_request again unless they ask."), "{}", a.text);
        assert!(!a.is_error, "a person's no is not an error");
        assert_eq!(a.raw["_meta"]["bb/confirmation"], "declined");
        assert!(writes(&h).is_empty(), "{:?}", h.requests);
    }
}

#[test]
fn a_closed_or_moved_pull_request_is_refused_before_anyone_is_asked() {
    let mut h = StackHarness::asking(accept());
    let moved = h.call("merge_pull_request", json!({"project": "BB", "repo": "api", "pr_id": 1, "version": 1}));
    assert!(moved.is_error, "{}", moved.text);
    assert!(moved.text.contains("is at version 3, not 1"), "{}", moved.text);
    assert!(h.questions.is_empty());
    assert!(writes(&h).is_empty());
}

#[test]
fn every_tool_that_asks_writes_nothing_when_the_person_declines() {
    let calls = [
        ("merge_pull_request", json!({"project": "BB", "repo": "api", "pr_id": 11, "version": 0})),
        ("enable_auto_merge", json!({"project": "BB", "repo": "api", "pr_id": 11})),
        ("disable_auto_merge", json!({"project": "BB", "repo": "api", "pr_id": 11})),
        ("submit_pr_review", json!({"project": "BB", "repo": "api", "pr_id": 11, "action": "approve"})),
        ("submit_pr_review", json!({"project": "BB", "repo": "api", "pr_id": 11, "action": "request_changes"})),
        (
            "set_build_status",
            json!({"project": "BB", "repo": "api", "commit": "0123456789abcdef", "key": "ci", "state": "SUCCESSFUL",
                   "url": "https://ci.example/1"}),
        ),
        ("create_tag", json!({"project": "BB", "repo": "api", "name": "v9.9", "start_point": "main"})),
        ("apply_pr_suggestion", json!({"project": "BB", "repo": "api", "pr_id": 11, "comment_id": 1})),
        ("delete_pr_comment", json!({"project": "BB", "repo": "api", "pr_id": 11, "comment_id": 1})),
        ("update_pull_request", json!({"project": "BB", "repo": "api", "pr_id": 11, "draft": true})),
    ];
    for (tool, args) in calls {
        let mut h = StackHarness::asking(|_| json!({"action": "decline"}));
        let a = h.call(tool, args.clone());
        assert_eq!(h.questions.len(), 1, "{tool} {args}: {}", a.text);
        assert!(a.text.starts_with("The person declined: "), "{tool}: {}", a.text);
        assert!(writes(&h).is_empty(), "{tool}: {:?}", h.requests);
        let title = h.questions[0]["requestedSchema"]["properties"]["confirm"]["title"].as_str().unwrap().to_owned();
        assert!(!title.is_empty() && title.len() < 80, "{tool}: {title}");
    }
}

#[test]
fn a_review_that_only_comments_and_an_update_without_the_draft_flag_do_not_ask() {
    let mut h = StackHarness::asking(|_| panic!("nobody should be asked"));
    let a = h.call(
        "submit_pr_review",
        json!({"project": "BB", "repo": "api", "pr_id": 11, "action": "comment",
                                               "comment": "Looks fine"}),
    );
    assert!(h.questions.is_empty(), "{}", a.text);
    let b = h.call("update_pull_request", json!({"project": "BB", "repo": "api", "pr_id": 11, "title": "New title"}));
    assert!(!b.is_error, "{}", b.text);
    assert!(h.questions.is_empty());
}

#[test]
fn text_other_people_wrote_is_quoted_with_hidden_characters_shown() {
    let mut h = StackHarness::asking(|_| json!({"action": "decline"}));
    h.rewrite_answers(|r, v| {
        if r.path.ends_with("/pull-requests/11") {
            v["title"] = json!("Fix \u{202e}evil\u{1b}[31m");
        }
    });
    h.call("merge_pull_request", json!({"project": "BB", "repo": "api", "pr_id": 11, "version": 0}));
    let message = h.questions[0]["message"].as_str().unwrap();
    assert!(message.contains("\u{201c}Fix ⟨U+202E⟩evil⟨U+001B⟩[31m\u{201d}"), "{message}");
    assert!(!message.contains('\u{202e}') && !message.contains('\u{1b}'), "{message}");
}
