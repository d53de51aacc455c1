//! `show` against the stack: what a view carries, what it costs, and what a client without views gets.
#![allow(clippy::unwrap_used, clippy::panic)]

mod stack_harness;

use serde_json::{Value, json};
use stack_harness::StackHarness;

fn card(d: &mut StackHarness, project: &str, repo: &str, id: u64) -> (stack_harness::Answer, Value) {
    let a = d.call("show", json!({"kind": "pull_request", "project": project, "repo": repo, "pr_id": id}));
    assert!(!a.is_error, "{}", a.text);
    let view = a.raw["_meta"]["bb/view"].clone();
    assert_eq!(view["v"], 1);
    (a, view)
}

#[test]
fn a_client_without_views_is_told_nothing_was_shown_and_nothing_is_fetched() {
    let mut d = StackHarness::new();
    let a = d.call("show", json!({"kind": "pull_request", "project": "BB", "repo": "api", "pr_id": 1}));
    assert!(!a.is_error);
    assert!(a.text.starts_with("Nothing was shown"), "{}", a.text);
    assert!(a.text.contains("Answer the person in words"));
    assert!(d.requests.is_empty(), "nothing is fetched: {:?}", d.requests);
    assert!(a.raw.get("_meta").is_none());
}

#[test]
fn the_card_carries_everything_it_draws_with_bitbuckets_counts() {
    let mut d = StackHarness::with_views();
    let (a, view) = card(&mut d, "BB", "api", 1);
    assert!(a.text.contains("If the person sees no view, answer in words."), "{}", a.text);
    assert!(a.text.len() < 300, "the text for the model stays short: {}", a.text);
    assert_eq!(view["kind"], "pull_request");
    assert!(view["readAt"].as_u64().unwrap() > 0);
    assert_eq!(view["server"]["url"], "http://stack.test/bitbucket");
    assert_eq!(
        view["server"]["kinds"],
        json!(["pull_request", "pull_requests", "threads", "diff", "compare", "pull_request_form", "file"])
    );
    assert!(view["server"]["tools"].as_array().unwrap().iter().any(|t| t == "merge_pull_request"));
    let pr = &view["pullRequest"];
    assert_eq!(pr["id"], 1);
    assert_eq!(pr["state"], "OPEN");
    assert_eq!(pr["author"], "alice");
    assert_eq!(pr["reviewers"].as_array().unwrap().len(), 3);
    assert!(pr["counts"]["comments"].is_u64(), "Bitbucket's comment count: {}", pr["counts"]);
    assert!(pr["description"].is_array() || pr["description"].is_null());
    let items = pr["activity"]["items"].as_array().unwrap();
    let times: Vec<u64> = items.iter().filter_map(|i| i["at"].as_u64()).collect();
    assert!(times.windows(2).all(|w| w[0] >= w[1]), "activity newest first: {times:?}");
    assert_eq!(items.last().unwrap()["action"], "OPENED");
    // Everyone mentioned is described once, with an avatar fetched by bb or initials.
    let users = view["users"].as_object().unwrap();
    for slug in ["alice", "bob", "carol", "dave"] {
        let u = &users[slug];
        assert!(u["avatar"].as_str().is_some_and(|a| a.starts_with("data:image/png;base64,")), "{slug}: {u}");
        assert!(!u["initials"].as_str().unwrap().is_empty());
    }
}

#[test]
fn a_card_costs_nine_requests_and_one_per_avatar_then_the_cache_answers() {
    let mut d = StackHarness::with_views();
    card(&mut d, "BB", "api", 1);
    let first = d.requests.clone();
    // The pull request, its build listing, its activity, the required-build conditions, the
    // branching model (BB/api has MODEL_* conditions), the merge check, the person's drafts (their pending
    // review, 7.7+) and the source commit's Code Insights reports and annotations.
    assert_eq!(first.iter().filter(|r| !r.contains("/avatar.png")).count(), 9, "{first:#?}");
    assert!(first.iter().any(|r| r.contains("/rest/insights/latest/") && r.contains("/reports?")));
    assert!(first.iter().any(|r| r.contains("/rest/insights/latest/") && r.contains("/annotations?")));
    assert!(first.iter().any(|r| r.contains("/pull-requests/1/review?")));
    assert!(first.iter().any(|r| r.ends_with("/pull-requests/1/merge?")));
    assert!(first.iter().any(|r| r.contains("/activities")));
    assert!(first.iter().any(|r| r.contains("/rest/ui/latest/") && r.contains("/builds")));
    let avatars = first.iter().filter(|r| r.contains("/avatar.png")).count();
    assert!(avatars >= 4, "{first:#?}");
    card(&mut d, "BB", "api", 1);
    assert_eq!(d.requests.len(), 9, "avatars come from the cache the second time: {:#?}", d.requests);
}

#[test]
fn a_comment_thread_is_drawn_once_with_replies_and_tasks() {
    let mut d = StackHarness::with_views();
    let (_, view) = card(&mut d, "BB", "api", 1);
    let items = view["pullRequest"]["activity"]["items"].as_array().unwrap();
    let mut ids: Vec<u64> = items.iter().filter_map(|i| i["comment"]["id"].as_u64()).collect();
    let n = ids.len();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), n, "each thread once");
    let text = view.to_string();
    assert!(text.contains("Why three attempts? Could this be configurable?"));
    assert!(items.iter().any(|i| i["comment"]["replies"].as_array().is_some_and(|r| !r.is_empty())));
}

#[test]
fn hostile_text_arrives_as_text_and_unsafe_links_lose_their_target() {
    let mut d = StackHarness::with_views();
    let (_, view) = card(&mut d, "BB", "api", 7);
    let text = view.to_string();
    assert!(text.contains("<script>alert('comment')</script>"), "the text is kept, as text");
    assert!(!text.contains("\"href\":\"javascript:"), "no javascript: link survives");
    fn walk(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(o) => {
                if let Some(t) = o.get("t").and_then(Value::as_str) {
                    out.push(t.to_owned());
                }
                o.values().for_each(|x| walk(x, out));
            }
            Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
            _ => {}
        }
    }
    let mut tags = vec![];
    walk(&view, &mut tags);
    assert!(!tags.iter().any(|t| t == "script" || t == "img" || t == "div"), "{tags:?}");
}

#[test]
fn a_server_without_the_build_listing_falls_back_to_the_commits_builds() {
    let mut d = StackHarness::with_views();
    d.fault("/rest/ui/", 404, 1, None);
    let (_, view) = card(&mut d, "BB", "api", 1);
    let builds = &view["pullRequest"]["builds"];
    assert_eq!(builds["source"], "legacy", "{builds}");
    assert!(builds["counts"].is_object());
    assert!(builds["requirements"].is_null(), "nothing is said about requirements");
    assert!(d.requests.iter().any(|r| r.contains("/rest/build-status/latest/commits/stats/")), "{:#?}", d.requests);
}

#[test]
fn a_failed_side_request_is_named_in_missing_and_the_card_still_draws() {
    let mut d = StackHarness::with_views();
    d.fault("/rest/api/latest/projects/BB/repos/api/pull-requests/1/activities", 500, 1, None);
    let (_, view) = card(&mut d, "BB", "api", 1);
    assert!(view["pullRequest"]["activity"].is_null());
    let missing = view["missing"].as_array().unwrap();
    assert!(missing.iter().any(|m| m.as_str().unwrap().starts_with("Activity: not read")), "{missing:?}");
}

#[test]
fn an_unknown_pull_request_is_an_error_in_one_sentence() {
    let mut d = StackHarness::with_views();
    let a = d.call("show", json!({"kind": "pull_request", "project": "BB", "repo": "api", "pr_id": 999}));
    assert!(a.is_error);
    assert_eq!(a.text, "Pull request #999 does not exist in BB/api.");
}

#[test]
fn show_checks_the_arguments_of_the_kinds_tool() {
    let mut d = StackHarness::with_views();
    let a = d.call("show", json!({"kind": "pull_request", "project": "BB", "repo": "api"}));
    assert!(a.is_error);
    assert!(a.text.contains("`pr_id` is required"), "{}", a.text);
    let a = d.call("show", json!({"kind": "diff", "project": "BB", "repo": "api"}));
    assert!(a.is_error, "{}", a.text);
    assert!(a.text.contains("(those of get_pull_request_diff)"), "{}", a.text);
}

#[test]
fn the_list_shows_rows_and_says_when_more_exist() {
    let mut d = StackHarness::with_views();
    let a = d.call("show", json!({"kind": "pull_requests", "project": "BB", "repo": "cli", "limit": 5}));
    assert!(!a.is_error, "{}", a.text);
    let view = &a.raw["_meta"]["bb/view"];
    let list = &view["list"];
    assert_eq!(list["shown"], 5);
    assert_eq!(list["more"], true);
    assert!(list["total"].is_null(), "a repository list has no total");
    let row = &list["items"][0];
    for key in ["id", "title", "state", "author", "reviewers", "counts", "updated"] {
        assert!(!row[key].is_null(), "{key}: {row}");
    }
    assert!(a.text.contains("5 shown, more exist"), "{}", a.text);
}

#[test]
fn the_inbox_list_carries_bitbuckets_total() {
    let mut d = StackHarness::with_views();
    let a = d.call("show", json!({"kind": "pull_requests", "inbox": true}));
    assert!(!a.is_error, "{}", a.text);
    assert!(a.raw["_meta"]["bb/view"]["list"]["total"].is_u64());
}

#[test]
fn the_card_marks_required_builds_as_the_merge_check_decides_them() {
    let mut d = StackHarness::with_views();
    let (_, view) = card(&mut d, "BB", "api", 1);
    let builds = &view["pullRequest"]["builds"];
    let req = &builds["requirements"];
    assert!(req.is_object(), "{builds:#}");
    eprintln!("{req:#}");
    let keys = req["keys"].as_array().unwrap();
    let state = |k: &str| keys.iter().find(|x| x["key"] == k).map(|x| x["state"].as_str().unwrap().to_owned());
    assert_eq!(state("ci-unit").as_deref(), Some("SUCCESSFUL"), "ANY_REF applies");
    assert_eq!(state("ci-integration").as_deref(), Some("FAILED"), "BRANCH main applies");
    assert_eq!(state("BB-LINT").as_deref(), Some("INPROGRESS"));
    assert_eq!(state("ci-release"), None, "a pattern for release branches does not apply to main");
    assert!(keys.iter().any(|x| x["state"] == "MISSING"), "a required key with no build is listed: {keys:?}");
    assert_eq!(req["blocking"], true);
    let summary = req["summary"].as_str().unwrap();
    assert!(summary.ends_with("required builds passed"), "{summary}");
    let item = |k: &str| builds["items"].as_array().unwrap().iter().find(|x| x["key"] == k).unwrap().clone();
    assert_eq!(item("ci-integration-17")["required"], true);
    assert_eq!(item("ci-integration-17")["reportsUnder"], "ci-integration");
    assert_eq!(item("ci-flaky")["required"], false);
    // Three requests of stage 1 plus the conditions and the branching model (a MODEL_* matcher exists).
    assert!(d.requests.iter().any(|r| r.contains("/rest/required-builds/latest/projects/BB/repos/api/conditions")));
    assert!(d.requests.iter().any(|r| r.contains("/branchmodel")));
}

#[test]
fn an_unreadable_branching_model_silences_requirements_when_a_model_matcher_must_be_read() {
    let mut d = StackHarness::with_views();
    d.fault("/rest/branch-utils/", 500, 1, None);
    let (_, view) = card(&mut d, "BB", "api", 1);
    let builds = &view["pullRequest"]["builds"];
    assert!(builds["requirements"].is_null(), "{builds:#}");
    assert!(builds["items"].as_array().unwrap().iter().all(|b| b["required"].is_null()));
}

#[test]
fn forbidden_conditions_silence_requirements_but_not_the_builds() {
    let mut d = StackHarness::with_views();
    d.fault("/rest/required-builds/", 401, 1, None);
    let (_, view) = card(&mut d, "BB", "api", 1);
    let builds = &view["pullRequest"]["builds"];
    assert!(builds["requirements"].is_null());
    assert!(!builds["items"].as_array().unwrap().is_empty());
}

#[test]
fn the_card_reads_every_page_of_the_build_listing_before_deciding_requirements() {
    let mut d = StackHarness::with_views();
    // 120 more builds on the pull request: the listing needs two pages of 100.
    for i in 0..120 {
        d.control(
            "POST",
            "/builds",
            json!({"project": "BB", "repo": "api", "pullRequest": 1, "key": format!("extra-{i}"), "state": "SUCCESSFUL",
                   "ref": "refs/heads/feature/retry"}),
        );
    }
    let (_, view) = card(&mut d, "BB", "api", 1);
    let builds = &view["pullRequest"]["builds"];
    assert_eq!(d.requests.iter().filter(|r| r.contains("/rest/ui/latest/")).count(), 2, "{:#?}", d.requests);
    // The five seeded builds for the branch (the one for develop is not listed) and the 120 added.
    assert_eq!(builds["shown"], 125);
    assert!(builds["requirements"].is_object(), "decided on the whole listing");
}

#[test]
fn a_failed_avatar_is_drawn_as_initials_and_fetched_again_once_the_failure_lapses() {
    let mut d = StackHarness::with_views();
    d.fault("/users/", 503, 1000, None);
    let (_, view) = card(&mut d, "BB", "api", 1);
    assert!(view["users"]["alice"]["avatar"].is_null(), "{}", view["users"]["alice"]);
    assert!(!view["users"]["alice"]["initials"].as_str().unwrap_or_default().is_empty());
    d.world.control.faults.clear();
    let (_, view) = card(&mut d, "BB", "api", 1);
    assert!(view["users"]["alice"]["avatar"].is_null(), "within a minute the failure is remembered");
    assert_eq!(d.count("GET", "/avatar.png"), 0, "{:?}", d.requests);
    d.advance(bb_core::testing::avatar_cache::FAILURE_TTL_MS);
    let (_, view) = card(&mut d, "BB", "api", 1);
    assert!(view["users"]["alice"]["avatar"].as_str().is_some_and(|a| a.starts_with("data:image/png")));
}

#[test]
fn the_card_draws_bitbuckets_merge_check_for_an_open_pull_request() {
    let mut d = StackHarness::with_views();
    let (_, view) = card(&mut d, "BB", "api", 10);
    let check = &view["pullRequest"]["mergeCheck"];
    assert_eq!(check["canMerge"], false, "{check}");
    let vetoes = check["vetoes"].as_array().unwrap();
    assert!(
        !vetoes.is_empty() && vetoes.iter().all(|v| v["summary"].is_string() && v["detail"].is_string()),
        "{check}"
    );
}

#[test]
fn a_reply_is_drawn_once_inside_its_thread() {
    let mut d = StackHarness::with_views();
    let (_, view) = card(&mut d, "BB", "api", 1);
    let items = view["pullRequest"]["activity"]["items"].as_array().unwrap();
    fn ids(c: &Value, out: &mut Vec<u64>) {
        out.extend(c["id"].as_u64());
        for r in c["replies"].as_array().into_iter().flatten() {
            ids(r, out);
        }
    }
    let mut all = vec![];
    for i in items.iter().filter(|i| i["comment"].is_object()) {
        ids(&i["comment"], &mut all);
    }
    let mut unique = all.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(all.len(), unique.len(), "every comment drawn once: {all:?}");
}

#[test]
fn the_list_gives_each_row_its_build_totals_in_one_request_and_its_conflict_mark() {
    let mut d = StackHarness::with_views();
    let a = d.call("show", json!({"kind": "pull_requests", "project": "BB", "repo": "api", "state": "ALL"}));
    let list = &a.raw["_meta"]["bb/view"]["list"];
    assert_eq!(list["heading"], "Pull requests");
    assert_eq!(list["filter"], "ALL");
    assert_eq!(d.count("POST", "/rest/build-status/latest/commits/stats"), 1, "{:?}", d.requests);
    let items = list["items"].as_array().unwrap();
    assert!(items.iter().any(|i| i["builds"]["successful"].as_u64().is_some_and(|n| n > 0)), "{list}");
    assert!(items.iter().all(|i| i["conflicted"].is_boolean()));
    assert!(
        items.iter().all(|i| i["source"]["url"].as_str().is_some_and(|u| u.contains("/browse?at=refs%2Fheads%2F")))
    );
}

#[test]
fn a_merged_pull_requests_card_carries_its_merge_commit_and_its_page() {
    let mut d = StackHarness::with_views();
    let commit = d.world.model.prs[&(("BB".to_owned(), "api".to_owned()), 4)].merge_commit.clone().unwrap();
    let (a, view) = card(&mut d, "BB", "api", 4);
    assert!(a.text.contains(&format!("(merged, merge commit {}; reviewers:", &commit[..11])), "{}", a.text);
    let m = &view["pullRequest"]["mergeCommit"];
    assert_eq!(m["id"], commit.as_str());
    assert_eq!(m["short"], &commit[..11]);
    assert_eq!(m["url"], format!("http://stack.test/bitbucket/projects/BB/repos/api/commits/{commit}"));
    // An open pull request has none.
    let (_, open) = card(&mut d, "BB", "api", 1);
    assert!(open["pullRequest"]["mergeCommit"].is_null());
}
