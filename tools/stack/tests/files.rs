//! Files at each commit: browse, raw, the listing, blame, a commit's changes and diff, a pull request's changes
//! over a range of its commits, code search (and the server without an index), and every seeded pull request's
//! diff agreeing with the files at both of its commits and with its seed.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use bb_stack::exchange::Request;
use bb_stack::patches;
use bb_stack::seed;
use bb_stack::world::World;
use serde_json::{Value, json};

const API: &str = "/rest/api/latest/projects/BB/repos/api";

fn world() -> World {
    World::from_default_seed().unwrap()
}

fn ask(w: &mut World, method: &str, path: &str, token: &str, body: Option<&Value>) -> (u16, Vec<u8>) {
    let mut req = Request::new(method, path).with_header("Authorization", &format!("Bearer {token}"));
    if let Some(b) = body {
        req = req.with_json(b);
    }
    let r = bb_stack::routes::serve(w, &req);
    (r.status, r.body)
}

fn get(w: &mut World, path: &str) -> (u16, Value) {
    let token = w.default_token();
    let (s, b) = ask(w, "GET", path, &token, None);
    (s, serde_json::from_slice(&b).unwrap_or(Value::Null))
}

fn ok(w: &mut World, path: &str) -> Value {
    let (s, v) = get(w, path);
    assert_eq!(s, 200, "{path}: {v}");
    v
}

fn raw_lines(w: &mut World, repo: &str, path: &str, at: &str) -> Option<Vec<String>> {
    let token = w.default_token();
    let (s, b) = ask(w, "GET", &format!("/rest/api/latest/projects/{repo}/raw/{path}?at={at}"), &token, None);
    (s == 200).then(|| String::from_utf8_lossy(&b).lines().map(str::to_string).collect())
}

#[test]
fn a_file_is_browsed_a_window_at_a_time() {
    let mut w = world();
    let p = ok(&mut w, &format!("{API}/browse/src/generated/tables.rs?at=main&start=4990&limit=20"));
    assert_eq!(
        (p["start"].as_u64(), p["size"].as_u64(), p["isLastPage"].as_bool()),
        (Some(4990), Some(10), Some(true))
    );
    assert!(p.get("nextPageStart").is_none());
    let first = ok(&mut w, &format!("{API}/browse/src/generated/tables.rs"));
    assert_eq!(
        (first["size"].as_u64(), first["limit"].as_u64(), first["nextPageStart"].as_u64()),
        (Some(500), Some(500), Some(500))
    );
    assert_eq!(first["isLastPage"], false);
    let big = ok(&mut w, &format!("{API}/browse/src/generated/tables.rs?limit=100000"));
    assert_eq!(big["size"], 5000, "the server's most is 5,000 lines");
    let readme = ok(&mut w, &format!("{API}/browse/README.md?at=refs/heads/main"));
    assert_eq!(readme["lines"][0]["text"], "# api");
}

#[test]
fn a_directory_lists_its_children_directories_first() {
    let mut w = world();
    let root = ok(&mut w, &format!("{API}/browse?at=main"));
    assert_eq!(root["revision"], "main");
    let kids = root["children"]["values"].as_array().unwrap();
    let names: Vec<(&str, &str)> =
        kids.iter().map(|k| (k["path"]["toString"].as_str().unwrap(), k["type"].as_str().unwrap())).collect();
    let first_file = names.iter().position(|(_, t)| *t != "DIRECTORY").unwrap();
    assert!(names[first_file..].iter().all(|(_, t)| *t != "DIRECTORY"), "{names:?}");
    assert!(names.contains(&("src", "DIRECTORY")) && names.contains(&("README.md", "FILE")), "{names:?}");
    let vendor = ok(&mut w, &format!("{API}/browse/vendor"));
    let v = &vendor["children"]["values"][0];
    assert_eq!((v["path"]["name"].as_str(), v["type"].as_str()), (Some("common"), Some("SUBMODULE")));
    let src = ok(&mut w, &format!("{API}/browse/src?limit=1"));
    assert_eq!(src["children"]["isLastPage"], false);
    let lib = &ok(&mut w, &format!("{API}/browse/src"))["children"]["values"];
    let lib = lib.as_array().unwrap().iter().find(|k| k["path"]["toString"] == "lib.rs").unwrap();
    assert_eq!(lib["path"]["extension"], "rs");
    assert!(lib["size"].as_u64().unwrap() > 1000 && lib["contentId"].as_str().unwrap().len() == 40);
}

#[test]
fn the_binary_the_submodule_and_what_is_missing() {
    let mut w = world();
    let bin = ok(&mut w, &format!("{API}/browse/assets/icon.png"));
    assert_eq!(bin["binary"], true);
    let token = w.default_token();
    let (s, bytes) = ask(&mut w, "GET", &format!("{API}/raw/assets/icon.png"), &token, None);
    assert_eq!(s, 200);
    assert!(bytes.starts_with(b"\x89PNG") && bytes.len() > 100);
    let sub = ok(&mut w, &format!("{API}/browse/vendor/common"));
    assert_eq!(sub["type"], "SUBMODULE");
    assert_eq!(sub["submodule"]["commitId"].as_str().unwrap().len(), 40);
    let (s, e) = get(&mut w, &format!("{API}/browse/no/such.rs?at=main"));
    assert_eq!(s, 404);
    assert_eq!(e["errors"][0]["message"], "The path \"no/such.rs\" does not exist at revision \"main\"");
    assert_eq!(e["errors"][0]["exceptionName"], "com.atlassian.bitbucket.content.NoSuchPathException");
    let (s, e) = get(&mut w, &format!("{API}/browse/README.md?at=no-such-branch"));
    assert_eq!(s, 404);
    assert_eq!(e["errors"][0]["exceptionName"], "com.atlassian.bitbucket.commit.NoSuchCommitException");
    assert_eq!(get(&mut w, &format!("{API}/raw/src?at=main")).0, 404);
    assert_eq!(get(&mut w, &format!("{API}/files/README.md")).0, 404);
}

#[test]
fn raw_and_the_listing_of_files() {
    let mut w = world();
    let readme = raw_lines(&mut w, "BB/repos/api", "README.md", "main").unwrap();
    assert_eq!(readme[0], "# api");
    let all = ok(&mut w, &format!("{API}/files?limit=500"));
    let paths: Vec<&str> = all["values"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    assert!(paths.contains(&"src/generated/tables.rs") && !paths.contains(&"vendor/common"), "{paths:?}");
    assert!(paths.windows(2).all(|p| p[0] < p[1]), "sorted");
    let page = ok(&mut w, &format!("{API}/files/src?limit=1&start=1"));
    assert_eq!((page["size"].as_u64(), page["isLastPage"].as_bool()), (Some(1), Some(false)));
    assert!(!page["values"][0].as_str().unwrap().starts_with("src/"), "relative to the directory");
    let at_pr = ok(&mut w, &format!("{API}/files?at=feature/retry&limit=500"));
    assert!(at_pr["values"].as_array().unwrap().contains(&json!("src/retry.rs")));
}

#[test]
fn blame_names_the_commit_that_last_changed_each_line() {
    let mut w = world();
    let commits = ok(&mut w, &format!("{API}/pull-requests/1/commits"));
    let ids: Vec<String> =
        commits["values"].as_array().unwrap().iter().map(|c| c["id"].as_str().unwrap().to_string()).rev().collect();
    assert_eq!(ids.len(), 3);
    // src/client.rs changes in the first commit of BB/api #1: its line 12 is that commit's, line 1 is older.
    let b =
        ok(&mut w, &format!("{API}/browse/src/client.rs?at=feature/retry&blame=true&noContent=true&start=0&limit=20"));
    let entries = b.as_array().unwrap();
    let covering = |n: u64| {
        entries
            .iter()
            .find(|e| {
                let first = e["lineNumber"].as_u64().unwrap();
                first <= n && n < first + e["spannedLines"].as_u64().unwrap()
            })
            .unwrap()
    };
    assert_eq!(covering(12)["commitId"], ids[0].as_str());
    assert_eq!(covering(12)["displayCommitHash"].as_str().unwrap().len(), 11);
    assert_eq!(covering(12)["author"]["name"], "alice");
    assert_ne!(covering(1)["commitId"], ids[0].as_str());
    let spanned: u64 = entries.iter().map(|e| e["spannedLines"].as_u64().unwrap()).sum();
    let size = ok(&mut w, &format!("{API}/browse/src/client.rs?at=feature/retry&limit=20"))["size"].as_u64().unwrap();
    assert_eq!(spanned, size, "the entries cover the window");
    // A line the history changed: the CHANGELOG's last line is the newest main commit's.
    let main = ok(&mut w, &format!("{API}/commits?limit=1"))["values"][0]["id"].clone();
    let log = ok(&mut w, &format!("{API}/browse/CHANGELOG.md?blame=true&noContent=true"));
    assert_eq!(log.as_array().unwrap().last().unwrap()["commitId"], main);
}

#[test]
fn a_commits_changes_and_diff() {
    let mut w = world();
    let commits = ok(&mut w, &format!("{API}/pull-requests/1/commits"));
    let ids: Vec<String> =
        commits["values"].as_array().unwrap().iter().map(|c| c["id"].as_str().unwrap().to_string()).rev().collect();
    let ch = ok(&mut w, &format!("{API}/commits/{}/changes", ids[1]));
    let paths: Vec<&str> =
        ch["values"].as_array().unwrap().iter().map(|c| c["path"]["toString"].as_str().unwrap()).collect();
    assert_eq!(paths, ["src/retry.rs"]);
    assert_eq!(ch["values"][0]["type"], "ADD");
    assert_eq!((ch["fromHash"].as_str(), ch["toHash"].as_str()), (Some(ids[0].as_str()), Some(ids[1].as_str())));
    let since = ok(&mut w, &format!("{API}/commits/{}/changes?since={}", ids[2], ids[0]));
    assert_eq!(since["size"], 2);
    let d = ok(&mut w, &format!("{API}/commits/{}/diff/src/client.rs?contextLines=0", ids[0]));
    assert_eq!(d["contextLines"], 0);
    assert_eq!(d["whitespace"], "SHOW");
    let segs = d["diffs"][0]["hunks"][0]["segments"].as_array().unwrap();
    assert!(segs.iter().all(|s| s["type"] != "CONTEXT"));
    assert!(d["diffs"][0].get("lineComments").is_none(), "a commit's diff has no comments");
    assert_eq!(get(&mut w, &format!("{API}/commits/ffffffffff/changes")).0, 404);
}

#[test]
fn a_pull_requests_changes_since_an_earlier_commit_are_only_the_later_files() {
    let mut w = world();
    let commits = ok(&mut w, &format!("{API}/pull-requests/1/commits"));
    let ids: Vec<String> =
        commits["values"].as_array().unwrap().iter().map(|c| c["id"].as_str().unwrap().to_string()).rev().collect();
    let paths = |v: &Value| -> Vec<String> {
        v["values"].as_array().unwrap().iter().map(|c| c["path"]["toString"].as_str().unwrap().to_string()).collect()
    };
    let all = ok(&mut w, &format!("{API}/pull-requests/1/changes"));
    assert_eq!(paths(&all), ["src/client.rs", "src/retry.rs", "docs/retry.md"]);
    let range =
        ok(&mut w, &format!("{API}/pull-requests/1/changes?changeScope=RANGE&sinceId={}&untilId={}", ids[0], ids[2]));
    assert_eq!(paths(&range), ["src/retry.rs", "docs/retry.md"]);
    assert_eq!((range["fromHash"].as_str(), range["toHash"].as_str()), (Some(ids[0].as_str()), Some(ids[2].as_str())));
    let half = ok(&mut w, &format!("{API}/pull-requests/1/changes?changeScope=RANGE&sinceId={}", ids[0]));
    assert_eq!(paths(&half).len(), 3, "RANGE without untilId is ALL");
    // carol last reviewed commit 1 of 3: her unreviewed changes are the two later files.
    let pr = ok(&mut w, &format!("{API}/pull-requests/1"));
    let carol = pr["reviewers"].as_array().unwrap().iter().find(|r| r["user"]["name"] == "carol").unwrap().clone();
    assert_eq!(carol["lastReviewedCommit"], ids[0].as_str());
    let (s, body) =
        ask(&mut w, "GET", &format!("{API}/pull-requests/1/changes?changeScope=UNREVIEWED"), "stack-token-carol", None);
    assert_eq!(s, 200);
    assert_eq!(paths(&serde_json::from_slice(&body).unwrap()), ["src/retry.rs", "docs/retry.md"]);
    let mine = ok(&mut w, &format!("{API}/pull-requests/1/changes?changeScope=UNREVIEWED"));
    assert_eq!(paths(&mine).len(), 3, "the author has no lastReviewedCommit: ALL");
    let diff = ok(&mut w, &format!("{API}/pull-requests/1/diff/src/retry.rs?sinceId={}", ids[0]));
    assert_eq!((diff["fromHash"].as_str(), diff["diffs"].as_array().map(Vec::len)), (Some(ids[0].as_str()), Some(1)));
    let none = ok(&mut w, &format!("{API}/pull-requests/1/diff/src/client.rs?sinceId={}", ids[0]));
    assert_eq!(none["diffs"], json!([]), "client.rs did not change after commit 1");
    assert_eq!(get(&mut w, &format!("{API}/pull-requests/1/changes?changeScope=SOME")).0, 400);
}

fn search(w: &mut World, body: Value) -> (u16, Value) {
    let token = w.default_token();
    let (s, b) = ask(w, "POST", "/rest/search/latest/search", &token, Some(&body));
    (s, serde_json::from_slice(&b).unwrap_or(Value::Null))
}

#[test]
fn code_search_finds_the_shared_identifier_in_two_repositories_and_can_be_switched_off() {
    let mut w = world();
    let (s, r) =
        search(&mut w, json!({"query": "retry_with_backoff", "entities": {"code": {"start": 0, "limit": 25}}}));
    assert_eq!(s, 200, "{r}");
    let hits: Vec<(String, String)> = r["code"]["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            let repo = format!(
                "{}/{}",
                v["repository"]["project"]["key"].as_str().unwrap(),
                v["repository"]["slug"].as_str().unwrap()
            );
            (repo, v["file"].as_str().unwrap().to_string())
        })
        .collect();
    assert!(hits.contains(&("BB/api".into(), "src/lib.rs".into())), "{hits:?}");
    assert!(hits.contains(&("OPS/infra".into(), "scripts/deploy.py".into())), "{hits:?}");
    assert_eq!(r["code"]["count"].as_u64(), Some(hits.len() as u64));
    assert_eq!(r["scope"]["type"], "GLOBAL");
    let first = &r["code"]["values"][0];
    let text = first["hitContexts"][0].to_string();
    assert!(text.contains("<em>retry_with_backoff</em>"), "{text}");
    assert!(first["hitCount"].as_u64().unwrap() >= 1);
    let (_, only) = search(&mut w, json!({"query": "retry_with_backoff project:OPS ext:py"}));
    assert_eq!(only["code"]["count"], 1);
    let (_, paged) = search(&mut w, json!({"query": "\"fn main\" OR", "entities": {"code": {"limit": 1}}}));
    assert_eq!(paged["code"]["isLastPage"], paged["code"]["count"].as_u64() <= Some(1));
    let (s, e) = search(&mut w, json!({"query": "  repo:api "}));
    assert_eq!(s, 400);
    assert!(e["errors"][0]["message"].is_string());
    let off = bb_stack::control::handle(
        &mut w,
        &Request::new("POST", "/_stack/search").with_json(&json!({"enabled": false})),
        &["search"],
    );
    assert_eq!(off.body_json(), json!({"enabled": false}));
    let (s, e) = search(&mut w, json!({"query": "retry_with_backoff"}));
    assert_eq!(s, 503);
    assert_eq!(e["errors"][0]["exceptionName"], "com.atlassian.bitbucket.search.SearchUnavailableException");
    w.reset().unwrap();
    assert_eq!(search(&mut w, json!({"query": "retry_with_backoff"})).0, 200, "a reset switches it back on");
}

/// Every seeded pull request's diff (computed from its files) agrees with the files at both of its commits, and
/// keeps the seed's added and removed lines at their numbers.
#[test]
fn every_seeded_diff_follows_from_the_files_and_keeps_the_seeds_lines() {
    let mut w = world();
    let s = seed::parse(seed::DEFAULT_SEED).unwrap();
    for p in &s.pull_requests {
        let (key, slug) = p.repo.split_once('/').unwrap();
        let base = format!("/rest/api/latest/projects/{key}/repos/{slug}/pull-requests/{}", p.id);
        let from_repo = p.from_repo.clone().unwrap_or(p.repo.clone());
        let (fk, fs) = from_repo.split_once('/').unwrap();
        for f in &p.files {
            let d = ok(&mut w, &format!("{base}/diff/{}", f.path));
            let diff = &d["diffs"][0];
            assert!(diff.is_object(), "{} #{} {}: no diff", p.repo, p.id, f.path);
            if f.binary {
                assert_eq!(diff["binary"], true);
                continue;
            }
            let src = f.src_path.clone().unwrap_or(f.path.clone());
            let before = raw_lines(&mut w, &format!("{key}/repos/{slug}"), &src, d["fromHash"].as_str().unwrap());
            let after = raw_lines(&mut w, &format!("{fk}/repos/{fs}"), &f.path, d["toHash"].as_str().unwrap());
            let mut changed: Vec<(String, u64, String)> = Vec::new();
            for h in diff["hunks"].as_array().unwrap() {
                for sg in h["segments"].as_array().unwrap() {
                    let kind = sg["type"].as_str().unwrap();
                    for l in sg["lines"].as_array().unwrap() {
                        let text = l["line"].as_str().unwrap();
                        let (src_n, dst_n) =
                            (l["source"].as_u64().unwrap() as usize, l["destination"].as_u64().unwrap() as usize);
                        if kind != "REMOVED" {
                            let a = after.as_ref().unwrap();
                            assert_eq!(
                                a.get(dst_n - 1).map(String::as_str),
                                Some(text),
                                "{} #{} {} after {dst_n}",
                                p.repo,
                                p.id,
                                f.path
                            );
                        }
                        if kind != "ADDED" {
                            let b = before.as_ref().unwrap();
                            assert_eq!(
                                b.get(src_n - 1).map(String::as_str),
                                Some(text),
                                "{} #{} {} before {src_n}",
                                p.repo,
                                p.id,
                                f.path
                            );
                        }
                        match kind {
                            "ADDED" => changed.push((kind.into(), dst_n as u64, text.into())),
                            "REMOVED" => changed.push((kind.into(), src_n as u64, text.into())),
                            _ => {}
                        }
                    }
                }
            }
            let mut hunks = match &f.generate {
                Some(g) => patches::generate(&g.language, g.lines, f.change == "ADD"),
                None => patches::parse(&f.patch).unwrap(),
            };
            patches::cap_lines(&mut hunks, patches::MAX_DIFF_LINES);
            let mut want = Vec::new();
            for h in &hunks {
                for sg in &h.segments {
                    for l in &sg.lines {
                        match sg.kind {
                            "ADDED" => want.push(("ADDED".to_string(), u64::from(l.destination), l.text.clone())),
                            "REMOVED" => want.push(("REMOVED".to_string(), u64::from(l.source), l.text.clone())),
                            _ => {}
                        }
                    }
                }
            }
            if f.generate.is_some() {
                changed.truncate(want.len());
            }
            assert_eq!(changed, want, "{} #{} {}", p.repo, p.id, f.path);
        }
    }
}

#[test]
fn the_comments_of_bb_api_1_keep_their_lines() {
    let mut w = world();
    let d = ok(&mut w, &format!("{API}/pull-requests/1/diff/src/client.rs"));
    let mut placed = Vec::new();
    for h in d["diffs"][0]["hunks"].as_array().unwrap() {
        for s in h["segments"].as_array().unwrap() {
            for l in s["lines"].as_array().unwrap() {
                if let Some(ids) = l["commentIds"].as_array() {
                    placed.push((
                        s["type"].as_str().unwrap().to_string(),
                        l["source"].as_u64().unwrap(),
                        l["destination"].as_u64().unwrap(),
                        ids.len(),
                    ));
                }
            }
        }
    }
    assert_eq!(placed.len(), 4, "{placed:?}");
    assert!(placed.contains(&("REMOVED".into(), 11, 11, 1)), "{placed:?}");
    assert!(placed.iter().any(|(k, _, d, _)| k == "ADDED" && *d == 12), "{placed:?}");
}
