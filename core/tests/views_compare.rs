//! `show` kind `compare` against the stand-in: two refs' diff laid out as a pull request's is (files, hunks
//! highlighted in bb), with no comments and no pull request read; a ref that does not resolve said in Bitbucket's
//! words with the compare page to open; refreshed on the quiet cadence, changed when a branch moves.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod stack_harness;

use bb_core::testing::views::refresh;
use bb_core::{Catalogue, ExposureOptions};
use serde_json::{Value, json};
use stack_harness::StackHarness;

fn compare(from: &str, to: &str) -> Value {
    json!({"kind": "compare", "project": "BB", "repo": "api", "from_ref": from, "to_ref": to})
}

fn shown(d: &mut StackHarness, from: &str, to: &str) -> Value {
    let a = d.call("show", compare(from, to));
    assert!(!a.is_error, "{}", a.text);
    assert!(
        a.text.starts_with(&format!("Showing the diff of {from} against {to} in BB/api to the person: ")),
        "{}",
        a.text
    );
    assert!(a.text.len() < 400, "short, and never code: {}", a.text);
    a.raw["_meta"]["bb/view"].clone()
}

fn paths(list: &Value) -> Vec<&str> {
    list.as_array().unwrap().iter().map(|f| f["path"].as_str().unwrap()).collect()
}

#[test]
fn two_refs_show_the_files_and_highlighted_hunks_of_what_from_has_with_no_comments() {
    let mut d = StackHarness::with_views();
    let view = shown(&mut d, "feature/retry", "main");
    assert_eq!(view["kind"], "compare");
    let diff = &view["diff"];
    assert_eq!(diff["compare"]["from"], "feature/retry");
    assert_eq!(
        diff["compare"]["url"],
        "http://stack.test/bitbucket/projects/BB/repos/api/compare/diff?sourceBranch=feature%2Fretry&targetBranch=main"
    );
    assert_eq!(
        (diff["source"]["branch"].as_str(), diff["target"]["branch"].as_str()),
        (Some("feature/retry"), Some("main"))
    );
    assert!(diff.get("id").is_none() && diff.get("state").is_none(), "no pull request: {}", diff["compare"]);
    // The same files as pull request #1, which joins the two branches, each with its diff.
    let pr = d.call("show", json!({"kind": "diff", "project": "BB", "repo": "api", "pr_id": 1}));
    let pr = &pr.raw["_meta"]["bb/view"]["diff"];
    assert_eq!(paths(&diff["files"]), paths(&pr["files"]));
    assert_eq!(paths(&diff["diffs"]), paths(&diff["files"]));
    let client = diff["diffs"].as_array().unwrap().iter().find(|f| f["path"] == "src/client.rs").unwrap();
    assert_eq!(client["language"], "Rust");
    let lines: Vec<&Value> =
        client["hunks"].as_array().unwrap().iter().flat_map(|h| h["lines"].as_array().unwrap()).collect();
    assert!(lines.iter().all(|l| l["r"].is_string()), "highlighted under the deadline: {:?}", lines[0]);
    // A compare has no comments: none on a line, atop a file or counted on one.
    assert!(lines.iter().all(|l| l.get("c").is_none()));
    for f in diff["diffs"].as_array().unwrap() {
        assert_eq!(f["fileComments"], json!([]), "{}", f["path"]);
    }
    assert!(diff["files"].as_array().unwrap().iter().all(|f| f["comments"].is_null()));
}

#[test]
fn the_reads_are_compare_refs_own_one_page_of_changes_and_of_commits_then_a_diff_per_file() {
    let mut d = StackHarness::with_views();
    let view = shown(&mut d, "feature/retry", "main");
    let files = view["diff"]["diffs"].as_array().unwrap().len();
    assert_eq!(d.count("GET", "/compare/changes?from=feature/retry&to=main&start=0&limit=100"), 1, "{:?}", d.requests);
    // The Commits tab's page, beside the changes: what compare_refs lists, newest first, each linked.
    assert_eq!(d.count("GET", "/compare/commits?from=feature/retry&to=main&start=0&limit=25"), 1, "{:?}", d.requests);
    let listed =
        d.call("compare_refs", json!({"project": "BB", "repo": "api", "from_ref": "feature/retry", "to_ref": "main"}));
    let commits = view["diff"]["commits"]["items"].as_array().unwrap();
    assert!(commits.len() >= 2, "{commits:?}");
    for c in commits {
        assert!(listed.text.contains(c["short"].as_str().unwrap()), "{c} not in compare_refs' answer: {}", listed.text);
        assert!(
            c["url"]
                .as_str()
                .unwrap()
                .ends_with(&format!("/projects/BB/repos/api/commits/{}", c["id"].as_str().unwrap()))
        );
    }
    assert_eq!(view["diff"]["commits"]["more"], false);
    assert_eq!(d.count("GET", "/compare/diff/"), files);
    assert_eq!(d.count("GET", "contextLines=3"), files);
    assert_eq!(d.count("GET", "/pull-requests"), 0, "no pull request is read: {:?}", d.requests);
    assert_eq!(d.count("GET", "withComments"), 0);
}

#[test]
fn two_tags_without_a_pull_request_between_them_have_a_diff() {
    let mut d = StackHarness::with_views();
    let view = shown(&mut d, "refs/tags/v0.2.0", "v0.1.0");
    assert_eq!(paths(&view["diff"]["files"]), ["CHANGELOG.md"]);
    assert_eq!(view["diff"]["source"]["branch"], "v0.2.0", "drawn by its short name");
    assert_eq!(view["diff"]["compare"]["from"], "refs/tags/v0.2.0", "asked as given");
}

#[test]
fn a_ref_that_does_not_exist_is_said_in_bitbuckets_words_with_the_compare_page() {
    let mut d = StackHarness::with_views();
    let a = d.call("show", compare("main", "gone"));
    assert!(a.is_error);
    assert!(a.text.contains("(404): Commit 'gone' does not exist in this repository."), "{}", a.text);
    assert!(a.text.contains("from_ref and to_ref must each be a branch, tag or commit id in BB/api"), "{}", a.text);
    let data = &a.raw["_meta"]["bb/view"];
    assert_eq!(data["kind"], "compare");
    assert_eq!(data["error"]["message"].as_str(), Some(a.text.as_str()));
    assert_eq!(
        data["error"]["url"],
        "http://stack.test/bitbucket/projects/BB/repos/api/compare/diff?sourceBranch=main&targetBranch=gone"
    );
}

#[test]
fn a_refresh_is_quiet_until_a_branch_moves() {
    let mut d = StackHarness::with_views();
    let show = compare("develop", "main");
    let first = shown(&mut d, "develop", "main");
    assert_eq!(paths(&first["diff"]["files"]), ["CHANGELOG.md"]);
    let next = first["next"].as_u64().unwrap();
    assert!(next >= refresh::SETTLED_MS * 3 / 4, "a compare is asked again no sooner than a minute: {next}");
    let again = d.call("refresh_view", json!({"show": show, "fingerprint": first["fingerprint"]}));
    assert_eq!(again.raw["_meta"]["bb/view"]["unchanged"], true, "{}", again.text);
    // A commit pushed to develop: the diff has its line.
    let repo = d.world.model.repos.get_mut(&("BB".to_owned(), "api".to_owned())).unwrap();
    let head = repo.branches["develop"].clone();
    let id = "d".repeat(40);
    let at = repo.commits[&head].at + 1000;
    repo.commits.insert(
        id.clone(),
        bb_stack::model::Commit {
            id: id.clone(),
            message: "Tune retries".into(),
            author: "alice".into(),
            at,
            parents: vec![head],
        },
    );
    repo.branches.insert("develop".into(), id);
    let moved = d.call("refresh_view", json!({"show": show, "fingerprint": first["fingerprint"]}));
    let data = &moved.raw["_meta"]["bb/view"];
    assert!(data.get("unchanged").is_none(), "{}", moved.text);
    let text = data["diff"]["diffs"][0].to_string();
    assert!(text.contains("- Tune retries (ddddddd)"), "{text}");
}

#[test]
fn compare_refs_says_show_can_draw_it_only_where_the_person_would_see_it() {
    let args =
        json!({"project": "BB", "repo": "api", "from_ref": "feature/retry", "to_ref": "main", "max_bytes": 2000});
    let mut d = StackHarness::with_views();
    let a = d.call("compare_refs", args.clone());
    assert!(
        a.text.ends_with("\nshow kind compare, with these arguments, draws this diff for the person."),
        "{}",
        a.text
    );
    assert!(a.text.len() <= 2000, "within its budget, the line included: {}", a.text.len());
    let mut d = StackHarness::new();
    let a = d.call("compare_refs", args);
    assert!(!a.text.contains("show kind compare"), "a client that draws no views: {}", a.text);
}

#[test]
fn the_kind_is_offered_only_while_compare_refs_is_exposed() {
    let kinds = |exclude: &[&str]| -> Vec<&'static str> {
        let options =
            ExposureOptions { exclude: exclude.iter().map(|s| s.to_string()).collect(), ..Default::default() };
        Catalogue::standard().expose(&options).unwrap().kinds().iter().map(|k| k.name).collect()
    };
    assert!(kinds(&[]).contains(&"compare"));
    assert!(!kinds(&["compare_refs"]).contains(&"compare"));
    assert!(kinds(&["compare_refs"]).contains(&"diff"));
}
