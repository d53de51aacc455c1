//! The committed seed covers what bb's views must handle, checked through the handlers without sockets.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use bb_stack::exchange::Request;
use bb_stack::routes;
use bb_stack::world::World;
use serde_json::Value;
use std::collections::BTreeSet;

fn get(world: &mut World, path: &str) -> Value {
    let token = world.default_token();
    let r = routes::serve(world, &Request::new("GET", path).with_header("Authorization", &format!("Bearer {token}")));
    assert_eq!(r.status, 200, "{path}: {}", String::from_utf8_lossy(&r.body));
    r.body_json()
}

fn all_prs(world: &mut World) -> Vec<Value> {
    let mut out = Vec::new();
    for repo in get(world, "/rest/api/latest/repos?limit=100")["values"].as_array().unwrap().clone() {
        let (key, slug) = (repo["project"]["key"].as_str().unwrap(), repo["slug"].as_str().unwrap());
        let page =
            get(world, &format!("/rest/api/latest/projects/{key}/repos/{slug}/pull-requests?state=ALL&limit=500"));
        out.extend(page["values"].as_array().unwrap().iter().cloned());
    }
    out
}

#[test]
fn the_seed_has_projects_repositories_a_fork_and_a_service_user() {
    let mut w = World::from_default_seed().unwrap();
    assert!(get(&mut w, "/rest/api/latest/projects")["size"].as_u64().unwrap() >= 3);
    let repos = get(&mut w, "/rest/api/latest/repos?limit=100");
    assert!(repos["size"].as_u64().unwrap() >= 5);
    assert!(repos["values"].as_array().unwrap().iter().any(|r| r.get("origin").is_some()));
    let users = get(&mut w, "/rest/api/latest/users?limit=100");
    assert!(users["values"].as_array().unwrap().iter().any(|u| u["type"] == "SERVICE"));
}

#[test]
fn the_seed_has_forty_pull_requests_in_every_state_with_reviewers_in_every_status() {
    let mut w = World::from_default_seed().unwrap();
    let prs = all_prs(&mut w);
    assert!(prs.len() >= 40, "{} pull requests", prs.len());
    let states: BTreeSet<_> = prs.iter().map(|p| p["state"].as_str().unwrap().to_string()).collect();
    assert_eq!(states, ["DECLINED", "MERGED", "OPEN"].map(String::from).into_iter().collect());
    assert!(prs.iter().any(|p| p["draft"] == true));
    assert!(prs.iter().any(|p| p["properties"]["mergeResult"]["outcome"] == "CONFLICTED"));
    assert!(
        prs.iter().any(|p| p["fromRef"]["repository"]["slug"] != p["toRef"]["repository"]["slug"]),
        "one from a fork"
    );
    let statuses: BTreeSet<_> = prs
        .iter()
        .flat_map(|p| p["reviewers"].as_array().unwrap().clone())
        .map(|r| r["status"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(statuses.len(), 3);
    assert!(prs.iter().any(|p| p["title"].as_str().unwrap().len() >= 100 * 1024), "a 100 KB title");
    assert!(prs.iter().any(|p| p["title"].as_str().unwrap().contains("<script>")));
    assert!(prs.iter().any(|p| { p["description"].as_str().is_some_and(|d| d.contains("javascript:")) }));
}

#[test]
fn the_seed_has_every_activity_action_and_comment_action() {
    let mut w = World::from_default_seed().unwrap();
    let mut actions = BTreeSet::new();
    let mut comment_actions = BTreeSet::new();
    for pr in ["1", "3", "4", "5", "10"] {
        let acts =
            get(&mut w, &format!("/rest/api/latest/projects/BB/repos/api/pull-requests/{pr}/activities?limit=500"));
        for a in acts["values"].as_array().unwrap() {
            actions.insert(a["action"].as_str().unwrap().to_string());
            if let Some(c) = a["commentAction"].as_str() {
                comment_actions.insert(c.to_string());
            }
        }
    }
    for want in [
        "APPROVED",
        "AUTO_MERGE_CANCELLED",
        "AUTO_MERGE_REQUESTED",
        "COMMENTED",
        "DECLINED",
        "DELETED",
        "MERGED",
        "OPENED",
        "REOPENED",
        "RESCOPED",
        "REVIEW_COMMENTED",
        "REVIEW_DISCARDED",
        "REVIEW_FINISHED",
        "REVIEWED",
        "UNAPPROVED",
        "UPDATED",
    ] {
        assert!(actions.contains(want), "{want} missing");
    }
    assert_eq!(comment_actions.len(), 4, "{comment_actions:?}");
}

#[test]
fn line_comments_sit_on_the_lines_their_anchors_name_on_each_side() {
    let mut w = World::from_default_seed().unwrap();
    let d = get(&mut w, "/rest/api/latest/projects/BB/repos/api/pull-requests/1/diff/src/client.rs");
    let mut placed = Vec::new();
    for h in d["diffs"][0]["hunks"].as_array().unwrap() {
        for s in h["segments"].as_array().unwrap() {
            for l in s["lines"].as_array().unwrap() {
                if l.get("commentIds").is_some() {
                    placed.push((
                        s["type"].as_str().unwrap().to_string(),
                        l["source"].as_u64().unwrap(),
                        l["destination"].as_u64().unwrap(),
                    ));
                }
            }
        }
    }
    let want = [("REMOVED", 11, 11), ("ADDED", 12, 12), ("CONTEXT", 14, 15), ("CONTEXT", 16, 17)];
    assert_eq!(placed, want.map(|(t, s, d)| (t.to_string(), s, d)));
}

#[test]
fn big_diffs_are_generated_and_the_biggest_is_truncated() {
    let mut w = World::from_default_seed().unwrap();
    let lines = |d: &Value| {
        d["diffs"][0]["hunks"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|h| h["segments"].as_array().unwrap().clone())
            .map(|s| s["lines"].as_array().unwrap().len())
            .sum::<usize>()
    };
    let big = get(&mut w, "/rest/api/latest/projects/BB/repos/api/pull-requests/2/diff/src/parser/generated.rs");
    assert!(lines(&big) >= 5000);
    assert_eq!(big["diffs"][0]["truncated"], false);
    let huge = get(&mut w, "/rest/api/latest/projects/BB/repos/api/pull-requests/9/diff/vendor/bindings.rs");
    assert_eq!(huge["diffs"][0]["truncated"], true);
    let changes = get(&mut w, "/rest/api/latest/projects/BB/repos/api/pull-requests/9/changes");
    let types: BTreeSet<_> =
        changes["values"].as_array().unwrap().iter().map(|c| c["type"].as_str().unwrap().to_string()).collect();
    assert!(types.contains("MOVE") && types.contains("DELETE") && types.contains("ADD"));
    let binary = get(&mut w, "/rest/api/latest/projects/BB/repos/api/pull-requests/9/diff/assets/logo.png");
    assert_eq!(binary["diffs"][0]["binary"], true);
}

#[test]
fn builds_come_in_every_state_and_the_ui_listing_keeps_only_the_source_branch_or_no_ref() {
    let mut w = World::from_default_seed().unwrap();
    let pr = get(&mut w, "/rest/api/latest/projects/BB/repos/api/pull-requests/1");
    let commit = pr["fromRef"]["latestCommit"].as_str().unwrap().to_string();
    let legacy = get(&mut w, &format!("/rest/build-status/1.0/commits/{commit}"));
    let states: BTreeSet<_> =
        legacy["values"].as_array().unwrap().iter().map(|b| b["state"].as_str().unwrap().to_string()).collect();
    assert_eq!(states.len(), 5);
    assert!(legacy["values"][0].get("ref").is_none(), "the legacy listing has no ref");
    let ui = get(&mut w, "/rest/ui/latest/projects/BB/repos/api/pull-requests/1/builds");
    let values = ui["page"]["values"].as_array().unwrap();
    assert_eq!(values.len() + 1, legacy["values"].as_array().unwrap().len(), "the other branch's build is left out");
    assert!(values.iter().all(|b| b.get("ref").is_none() || b["ref"] == "refs/heads/feature/retry"));
}

#[test]
fn conditions_use_every_matcher_type_and_default_reviewers_follow_them() {
    let mut w = World::from_default_seed().unwrap();
    let c = get(&mut w, "/rest/required-builds/latest/projects/BB/repos/api/conditions");
    let types: BTreeSet<_> = c["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["refMatcher"]["type"]["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(types.len(), 5);
    assert!(c["values"].as_array().unwrap().iter().any(|c| c.get("exemptRefMatcher").is_some()));
    let model = get(&mut w, "/rest/branch-utils/latest/projects/BB/repos/api/branchmodel");
    assert_eq!(model["development"]["displayId"], "develop");
    let reviewers = get(
        &mut w,
        "/rest/default-reviewers/latest/projects/BB/repos/api/reviewers?sourceRefId=refs/heads/feature/x&targetRefId=refs/heads/main",
    );
    let slugs: Vec<_> = reviewers.as_array().unwrap().iter().map(|u| u["slug"].as_str().unwrap()).collect();
    assert_eq!(slugs, ["bob", "carol"]);
}

fn get_as(world: &mut World, user: &str, path: &str) -> Value {
    let token = world.model.users[user].token.clone();
    let r = routes::serve(world, &Request::new("GET", path).with_header("Authorization", &format!("Bearer {token}")));
    assert_eq!(r.status, 200, "{path}: {}", String::from_utf8_lossy(&r.body));
    r.body_json()
}

#[test]
fn bb_api_11_holds_a_suggestion_a_multi_line_comment_and_drafts_only_their_authors_see() {
    let mut w = World::from_default_seed().unwrap();
    let pr11 = "/rest/api/latest/projects/BB/repos/api/pull-requests/11";
    let comments = |w: &mut World, user: &str| -> Vec<Value> {
        let acts = get_as(w, user, &format!("{pr11}/activities?limit=500"));
        acts["values"].as_array().unwrap().iter().filter_map(|a| a.get("comment").cloned()).collect()
    };
    let texts = |cs: &[Value]| -> Vec<String> { cs.iter().map(|c| c["text"].as_str().unwrap().to_string()).collect() };
    let alice = comments(&mut w, "alice");
    let suggestion = alice.iter().find(|c| c["text"].as_str().unwrap().contains("```suggestion\n")).unwrap();
    assert_eq!((suggestion["author"]["slug"].as_str(), suggestion["state"].as_str()), (Some("bob"), Some("OPEN")));
    assert_eq!(
        (suggestion["anchor"]["line"].as_u64(), suggestion["anchor"]["lineType"].as_str()),
        (Some(23), Some("ADDED"))
    );
    let multi = alice.iter().find(|c| c["anchor"].get("multilineMarker").is_some()).unwrap();
    assert_eq!(multi["anchor"]["multilineMarker"]["startLine"], 20);
    let drafts: Vec<&Value> = alice.iter().filter(|c| c["state"] == "PENDING").collect();
    assert_eq!(drafts.len(), 1, "alice sees her own draft and not bob's");
    assert_eq!(drafts[0]["author"]["slug"], "alice");
    let bob = comments(&mut w, "bob");
    assert!(bob.iter().filter(|c| c["state"] == "PENDING").all(|c| c["author"]["slug"] == "bob"));
    assert!(!texts(&bob).contains(&drafts[0]["text"].as_str().unwrap().to_string()));
    let carol = comments(&mut w, "carol");
    assert!(carol.iter().all(|c| c["state"] != "PENDING"), "a third user sees no draft");
    assert_eq!(get_as(&mut w, "carol", pr11)["properties"]["commentCount"], 2);
    assert_eq!(get_as(&mut w, "alice", pr11)["properties"]["commentCount"], 2, "drafts are counted for nobody");
    assert_eq!(get_as(&mut w, "alice", &format!("{pr11}/review"))["size"], 1);
    assert_eq!(get_as(&mut w, "bob", &format!("{pr11}/review"))["size"], 1);
    let head = get(&mut w, pr11)["fromRef"]["latestCommit"].clone();
    assert_eq!(suggestion["anchor"]["toHash"], head, "made on the diff the branch still has, so it applies");
}
