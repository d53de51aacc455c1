//! The pull request form (`show` kind `pull_request_form`) and `suggest_form_values` against the stack:
//! what the form carries, each suggestion, and each of Bitbucket's refusals as the form's Create meets it.
#![allow(clippy::unwrap_used, clippy::panic, clippy::expect_used)]

mod stack_harness;

use serde_json::{Value, json};
use stack_harness::StackHarness;

fn suggest(d: &mut StackHarness, args: Value) -> Value {
    let mut a = json!({"project": "BB", "repo": "api"});
    a.as_object_mut().unwrap().extend(args.as_object().unwrap().clone());
    let answer = d.call("suggest_form_values", a);
    assert!(!answer.is_error, "{}", answer.text);
    answer.raw["structuredContent"].clone()
}

fn create(d: &mut StackHarness, args: Value) -> stack_harness::Answer {
    let mut a = json!({"project": "BB", "repo": "api", "title": "T", "default_reviewers": false});
    a.as_object_mut().unwrap().extend(args.as_object().unwrap().clone());
    d.call("create_pull_request", a)
}

#[test]
fn a_source_branch_that_does_not_exist_marks_the_field_once_and_reads_nothing_of_the_pair() {
    let mut d = StackHarness::with_views();
    let a = d.call("show", json!({"kind": "pull_request_form", "project": "BB", "repo": "api", "from_ref": "nope"}));
    assert!(!a.is_error, "{}", a.text);
    let form = &a.raw["_meta"]["bb/view"]["form"];
    assert_eq!(form["invalid"], json!({"field": "from", "message": "Branch \"nope\" does not exist in BB/api."}));
    assert_eq!(a.raw["_meta"]["bb/view"]["missing"], json!([]), "not said again as reads that failed");
    assert!(a.text.contains("Branch \"nope\" does not exist in BB/api."), "the model is told: {}", a.text);
    assert!(!d.requests.iter().any(|r| r.contains("/compare/") || r.contains("default-reviewers")), "{:?}", d.requests);
}

#[test]
fn the_form_carries_the_draft_the_default_branch_its_default_reviewers_and_commits_and_creates_nothing() {
    let mut d = StackHarness::with_views();
    let a = d.call(
        "show",
        json!({"kind": "pull_request_form", "project": "BB", "repo": "api", "from_ref": "docs/typo",
               "description": "Fixes **typos**", "reviewers": ["dave"]}),
    );
    assert!(!a.is_error, "{}", a.text);
    assert!(a.text.contains("nothing is created unless they press Create"), "{}", a.text);
    assert_eq!(d.count("POST", ""), 0, "nothing is written: {:?}", d.requests);
    let reads = d.requests.iter().filter(|r| !r.contains("/avatar.png")).count();
    assert_eq!(
        reads, 10,
        "7 (the source branch's newest commit and the source's open pull requests among them), one for the named reviewer, \
         and for the code owners .bitbucket/CODEOWNERS and the changed files again (the drive shares it in flight): {:?}",
        d.requests
    );
    assert_eq!(
        a.raw["_meta"]["bb/view"]["form"]["existing"],
        serde_json::Value::Null,
        "no pull request from docs/typo yet"
    );
    assert_eq!(d.count("GET", "/avatar.png"), 3, "the reviewers' avatars: {:?}", d.requests);
    let view = &a.raw["_meta"]["bb/view"];
    assert_eq!(view["kind"], "pull_request_form");
    let form = &view["form"];
    assert_eq!(form["from"], "docs/typo");
    assert_eq!(form["to"], "main", "the target defaults to the default branch");
    assert_eq!(form["title"], Value::Null, "the draft gave no title");
    assert!(form["suggestedTitle"].as_str().is_some_and(|t| !t.is_empty()), "{form}");
    assert_eq!(form["description"], "Fixes **typos**");
    assert_eq!(form["reviewers"], json!(["dave"]));
    let defaults: Vec<&str> =
        form["defaultReviewers"].as_array().unwrap().iter().map(|r| r["slug"].as_str().unwrap()).collect();
    assert_eq!(defaults, ["bob", "carol"]);
    assert!(!form["commits"]["items"].as_array().unwrap().is_empty(), "{form}");
    assert!(form["files"]["items"].is_array(), "{form}");
    assert_eq!(view["users"]["bob"]["name"], "Bob Baker");
    assert_eq!(view["users"]["dave"]["name"], "Dave Diaz", "the draft's reviewer by name");
    assert!(view["users"]["dave"]["avatar"].as_str().is_some_and(|a| a.starts_with("data:image/png")));
}

#[test]
fn a_draft_needs_only_its_repository() {
    let mut d = StackHarness::with_views();
    let a = d.call("show", json!({"kind": "pull_request_form", "project": "BB", "repo": "api"}));
    assert!(!a.is_error, "{}", a.text);
    assert_eq!(a.raw["_meta"]["bb/view"]["form"]["from"], Value::Null);
    let missing = d.call("show", json!({"kind": "pull_request_form", "project": "BB"}));
    assert!(missing.is_error, "{}", missing.text);
    let nowhere = d.call("show", json!({"kind": "pull_request_form", "project": "BB", "repo": "nope"}));
    assert!(nowhere.is_error && nowhere.text.contains("does not exist"), "{}", nowhere.text);
}

#[test]
fn branches_are_suggested_from_bitbuckets_filter_in_one_request() {
    let mut d = StackHarness::with_views();
    let s = suggest(&mut d, json!({"want": "branches", "text": "release"}));
    let names: Vec<&str> = s["branches"].as_array().unwrap().iter().map(|b| b["name"].as_str().unwrap()).collect();
    assert!(names.contains(&"release/v1") && names.contains(&"release/v2"), "{names:?}");
    assert!(names.iter().all(|n| n.contains("release")), "{names:?}");
    assert_eq!(d.requests.len(), 1);
    assert!(d.requests[0].contains("filterText=release"), "{:?}", d.requests);
}

#[test]
fn people_are_suggested_from_bitbuckets_user_search() {
    let mut d = StackHarness::with_views();
    let s = suggest(&mut d, json!({"want": "people", "text": "bob"}));
    assert_eq!(s["people"][0]["slug"], "bob", "{s}");
    assert_eq!(d.requests.len(), 1);
    assert!(d.requests[0].starts_with("GET /rest/api/latest/users?filter=bob"), "{:?}", d.requests);
}

#[test]
fn the_default_reviewers_of_a_branch_pair_are_suggested() {
    let mut d = StackHarness::with_views();
    let s = suggest(&mut d, json!({"want": "reviewers", "from_ref": "docs/typo", "to_ref": "main"}));
    let slugs: Vec<&str> = s["reviewers"].as_array().unwrap().iter().map(|r| r["slug"].as_str().unwrap()).collect();
    assert_eq!(slugs, ["bob", "carol"]);
    assert_eq!(d.count("GET", "/rest/default-reviewers/"), 1);
    let none = suggest(&mut d, json!({"want": "reviewers", "from_ref": "main", "to_ref": "develop"}));
    assert_eq!(none["reviewers"], json!([]), "no condition targets develop");
}

#[test]
fn the_code_owners_of_the_changed_files_are_suggested_each_saying_why() {
    let mut d = StackHarness::with_views();
    // feature/retry changes src/client.rs, src/retry.rs and docs/retry.md; BB/api's CODEOWNERS on main gives src/**
    // to @dave and docs/ to frank by e-mail; the line with no owner is skipped, the group left out.
    let s = suggest(&mut d, json!({"want": "reviewers", "from_ref": "feature/retry", "to_ref": "main"}));
    let owners: Vec<(&str, &str)> = s["owners"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| (o["slug"].as_str().unwrap(), o["why"].as_str().unwrap()))
        .collect();
    assert_eq!(owners, [("dave", "owns src/**"), ("frank", "owns docs/")]);
    assert_eq!(s["owners"][0]["name"], "Dave Diaz");
    assert_eq!(d.count("GET", "/browse/.bitbucket/CODEOWNERS?at=refs/heads/main"), 1, "{:?}", d.requests);
    // The form offers the same, and tells the model.
    let a = d.call(
        "show",
        json!({"kind": "pull_request_form", "project": "BB", "repo": "api", "from_ref": "feature/retry"}),
    );
    let form = &a.raw["_meta"]["bb/view"]["form"];
    assert_eq!(form["codeOwners"][1]["why"], "owns docs/", "{form}");
    assert!(a.text.contains("code owners of the changed files: dave (owns src/**), frank (owns docs/)."), "{}", a.text);
}

#[test]
fn a_repository_without_code_owners_suggests_none_and_says_nothing_failed() {
    let mut d = StackHarness::with_views();
    let s = suggest(
        &mut d,
        json!({"project": "BB", "repo": "cli", "want": "reviewers", "from_ref": "main", "to_ref": "main"}),
    );
    assert_eq!(s["owners"], json!([]), "{s}");
}

#[test]
fn the_commits_between_the_branches_come_with_their_files_and_a_title() {
    let mut d = StackHarness::with_views();
    let s = suggest(&mut d, json!({"want": "commits", "from_ref": "feature/retry", "to_ref": "main"}));
    let commits = s["commits"]["items"].as_array().unwrap();
    assert!(!commits.is_empty(), "{s}");
    assert!(commits[0]["short"].is_string() && commits[0]["message"].is_string(), "{s}");
    assert!(!s["files"]["items"].as_array().unwrap().is_empty(), "{s}");
    if commits.len() == 1 {
        assert_eq!(s["title"], commits[0]["message"]);
    }
    assert!(s["title"].as_str().is_some_and(|t| !t.is_empty()));
    assert_eq!(
        d.requests.len(),
        3,
        "commits, changes and the source's open pull requests, in parallel: {:?}",
        d.requests
    );
    // feature/retry → main is BB/api #1, open: said before the person presses Create.
    assert_eq!(s["existing"]["id"], 1, "{s}");
}

#[test]
fn the_preview_is_bbs_markdown_tree_and_reads_nothing() {
    let mut d = StackHarness::with_views();
    let s = suggest(&mut d, json!({"want": "preview", "text": "**bold** <script>x</script>"}));
    let tree = s["preview"].to_string();
    assert!(tree.contains("\"t\":\"strong\""), "{tree}");
    assert!(!tree.contains("<script>x</script>\"}") || !tree.contains("\"t\":\"script\""), "{tree}");
    assert!(d.requests.is_empty());
}

#[test]
fn a_suggestion_that_needs_both_branches_says_so() {
    let mut d = StackHarness::with_views();
    let a = d.call("suggest_form_values", json!({"project": "BB", "repo": "api", "want": "commits", "from_ref": "x"}));
    assert!(a.is_error && a.text.contains("from_ref and to_ref"), "{}", a.text);
    assert!(d.requests.is_empty());
}

#[test]
fn a_duplicate_is_refused_in_bitbuckets_words_with_the_open_pull_requests_number() {
    let mut d = StackHarness::with_views();
    assert!(!create(&mut d, json!({"from_ref": "docs/typo", "to_ref": "main"})).is_error);
    let dup = create(&mut d, json!({"from_ref": "docs/typo", "to_ref": "main"}));
    assert!(dup.is_error, "{}", dup.text);
    assert!(dup.text.starts_with("A pull request for these branches is already open: #"), "{}", dup.text);
    assert!(
        dup.text.contains("Only one pull request may be open for a given source and target branch"),
        "{}",
        dup.text
    );
}

#[test]
fn branches_without_changes_are_refused_in_bitbuckets_words() {
    let mut d = StackHarness::with_views();
    let a = create(&mut d, json!({"from_ref": "main", "to_ref": "docs/typo"}));
    assert!(a.is_error, "{}", a.text);
    assert!(a.text.contains("There are no changes to merge from main to docs/typo"), "{}", a.text);
}

#[test]
fn a_reviewer_who_cannot_review_is_named_in_bitbuckets_words() {
    let mut d = StackHarness::with_views();
    let a = create(&mut d, json!({"from_ref": "docs/typo", "to_ref": "main", "reviewers": ["nobody"]}));
    assert!(a.is_error, "{}", a.text);
    assert!(a.text.to_lowercase().contains("nobody is not a user."), "{}", a.text);
    assert_eq!(d.count("GET", "/pull-requests"), 0);
}

#[test]
fn no_permission_is_said_and_nothing_is_created() {
    let mut d = StackHarness::with_views();
    d.fault("/rest/api/latest/projects/BB/repos/api/pull-requests", 401, 1, None);
    let a = create(&mut d, json!({"from_ref": "docs/typo", "to_ref": "main"}));
    assert!(a.is_error, "{}", a.text);
    assert!(a.text.contains("lack permission"), "{}", a.text);
    let again = create(&mut d, json!({"from_ref": "docs/typo", "to_ref": "main"}));
    assert!(!again.is_error, "the refused call created nothing: {}", again.text);
}

#[test]
fn suggest_form_values_is_for_views_only_and_read_only() {
    let exposed = bb_core::Catalogue::standard().expose(&bb_core::ExposureOptions::default()).unwrap();
    let tool = exposed.listed().into_iter().find(|t| t["name"] == "suggest_form_values").expect("listed");
    assert_eq!(tool["_meta"]["ui"]["visibility"], json!(["app"]));
    assert_eq!(tool["annotations"]["readOnlyHint"], true);
}

#[test]
fn the_model_is_told_to_create_directly_and_show_the_form_only_when_the_person_wants_a_say() {
    let with = bb_core::Catalogue::standard().expose(&bb_core::ExposureOptions::default()).unwrap();
    let text = bb_core::testing::instructions::for_exposed(&with);
    assert!(text.contains("Create a pull request the person asks for directly"), "{text}");
    assert!(text.contains("show the pull_request_form only when they want a say first"), "{text}");
    let show = with.listed().into_iter().find(|t| t["name"] == "show").expect("show is listed");
    assert!(show["description"].as_str().unwrap().contains("show the form only when they want a say first"));
    let no_create = bb_core::Catalogue::standard()
        .expose(&bb_core::ExposureOptions { exclude: ["create_pull_request".to_string()].into(), ..Default::default() })
        .unwrap();
    assert!(!bb_core::testing::instructions::for_exposed(&no_create).contains("pull_request_form"));
    assert!(no_create.kind("pull_request_form").is_none(), "offered only while create_pull_request is exposed");
}

#[test]
fn a_client_that_shows_no_views_has_no_suggestions_tool_and_nothing_is_read() {
    let mut d = StackHarness::new();
    let a = d.call("suggest_form_values", json!({"project": "BB", "repo": "api", "want": "people", "text": "al"}));
    assert!(a.is_error && a.text.starts_with("Unknown tool: `suggest_form_values`"), "{}", a.text);
    assert!(d.requests.is_empty(), "{:?}", d.requests);
}
