//! Compare between any two refs of a repository: the files and diff `from` has that `to` lacks, whether or not a
//! pull request joins the two, and Bitbucket's 404 for a ref that does not resolve.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod common;
use bb_stack::RunningStack;
use common::*;

const API: &str = "/rest/api/latest/projects/BB/repos/api";

fn paths(stack: &RunningStack, query: &str) -> Vec<String> {
    let r = get(stack, &format!("{API}/compare/changes?{query}"));
    assert_eq!(r.status, 200, "{query}");
    r.json()["values"].as_array().unwrap().iter().map(|c| c["path"]["toString"].as_str().unwrap().to_owned()).collect()
}

#[test]
fn two_tags_with_no_pull_request_between_them_have_the_commits_between_as_a_diff() {
    let stack = start();
    assert_eq!(paths(&stack, "from=v0.2.0&to=v0.1.0"), ["CHANGELOG.md"]);
    let d =
        get(&stack, &format!("{API}/compare/diff/CHANGELOG.md?from=v0.2.0&to=refs/tags/v0.1.0&contextLines=3")).json();
    let lines: Vec<&str> = d["diffs"][0]["hunks"][0]["segments"][1]["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["line"].as_str().unwrap())
        .collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(lines[0].starts_with("- Add paging (7) (") && lines[1].starts_with("- Release 0.2 (8) ("), "{lines:?}");
    assert_eq!(
        paths(&stack, "from=v0.1.0&to=v0.2.0"),
        Vec::<String>::new(),
        "the older tag has nothing the newer lacks"
    );
}

#[test]
fn a_pull_requests_branches_compare_to_its_files_and_a_plain_branch_to_its_commit() {
    let stack = start();
    let pr = get(&stack, &format!("{API}/pull-requests/1/changes")).json();
    let mut want: Vec<String> =
        pr["values"].as_array().unwrap().iter().map(|c| c["path"]["toString"].as_str().unwrap().to_owned()).collect();
    let mut got = paths(&stack, "from=feature/retry&to=main");
    want.sort();
    got.sort();
    assert_eq!(got, want);
    assert_eq!(paths(&stack, "from=refs/heads/develop&to=main"), ["CHANGELOG.md"]);
}

#[test]
fn a_ref_that_does_not_resolve_is_a_404_naming_it() {
    let stack = start();
    for path in ["compare/changes?from=main&to=gone", "compare/diff/README.md?from=gone&to=main"] {
        let r = get(&stack, &format!("{API}/{path}"));
        assert_eq!(r.status, 404, "{path}");
        assert_eq!(r.json()["errors"][0]["message"], "Commit 'gone' does not exist in this repository.");
    }
}
