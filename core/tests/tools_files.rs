//! Code context against the stand-in: get_file, list_files, blame_file, search_code, get_commit's changes,
//! get_pull_request_diff's `since`, and the file view whose lines the diff's "Show more" draws.
#![allow(clippy::unwrap_used, clippy::panic)]

mod stack_harness;

use serde_json::{Value, json};
use stack_harness::StackHarness;

fn api(extra: Value) -> Value {
    let mut args = json!({"project": "BB", "repo": "api"});
    args.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
    args
}

/// The commits feature/retry (BB/api #1) adds to main, oldest first.
fn pr1_commits(d: &StackHarness) -> Vec<String> {
    let repo = d.world.model.repo("BB", "api").unwrap();
    let mut commits = d.world.model.history(repo, &repo.branches["feature/retry"], Some(&repo.branches["main"]));
    commits.reverse();
    commits.into_iter().map(|c| c.id).collect()
}

#[test]
fn a_window_of_a_long_file_is_numbered_and_asks_bitbucket_for_the_window_only() {
    let mut d = StackHarness::new();
    let a = d.call("get_file", api(json!({"path": "src/generated/tables.rs"})));
    assert!(!a.is_error, "{}", a.text);
    // The window is all that is asked for: a file of any length costs 200 lines.
    assert_eq!(
        d.requests,
        ["GET /rest/api/latest/projects/BB/repos/api/browse/src/generated/tables.rs?start=0&limit=200"]
    );
    assert!(
        a.text.starts_with("src/generated/tables.rs at the default branch in BB/api: lines 1-200; the file goes on."),
        "{}",
        a.text
    );
    assert!(a.text.ends_with("More lines — start_line=201, line_count=200."), "{}", a.text);
    let numbered: Vec<&str> = a.text.lines().skip(1).take(200).collect();
    assert!(numbered[0].starts_with("  1\t") && numbered[199].starts_with("200\t"), "{:?}", &numbered[..2]);
    let end =
        d.call("get_file", api(json!({"path": "src/generated/tables.rs", "start_line": 4901, "line_count": 200})));
    assert!(
        end.text.starts_with("src/generated/tables.rs at the default branch in BB/api: lines 4901-5000 of 5000."),
        "{}",
        end.text
    );
    assert!(end.text.ends_with("End of file."));
    let past = d.call("get_file", api(json!({"path": "src/generated/tables.rs", "start_line": 6000})));
    assert_eq!(
        past.text,
        "src/generated/tables.rs at the default branch in BB/api has fewer than 6000 lines: ask from start_line=1."
    );
    // At a ref, the lines are that ref's: the pull request's source has the retry call.
    let at = d.call(
        "get_file",
        api(json!({"path": "src/client.rs", "at": "feature/retry", "start_line": 11, "line_count": 2})),
    );
    assert!(at.text.contains("11\t        let req = Request::get(url);"), "{}", at.text);
    assert!(d.requests[0].ends_with("/browse/src/client.rs?at=feature/retry&start=10&limit=2"), "{:?}", d.requests);
}

#[test]
fn a_folder_a_binary_a_submodule_a_missing_path_and_a_missing_ref_are_one_sentence_each() {
    let mut d = StackHarness::new();
    let said = |d: &mut StackHarness, path: &str, at: Option<&str>| {
        let mut args = api(json!({"path": path}));
        if let Some(at) = at {
            args["at"] = json!(at);
        }
        let a = d.call("get_file", args);
        assert!(a.is_error, "{path}: {}", a.text);
        a.text
    };
    assert_eq!(
        said(&mut d, "src", None),
        "src at the default branch in BB/api is a folder, not a file: list_files lists it."
    );
    assert!(said(&mut d, "vendor/common", None).contains("is neither a text file nor a folder (a submodule"));
    let missing = said(&mut d, "src/nope.rs", None);
    assert!(missing.contains("The path \"src/nope.rs\" does not exist at revision"), "{missing}");
    let no_ref = said(&mut d, "README.md", Some("nowhere"));
    assert!(no_ref.contains("Commit 'nowhere' does not exist"), "{no_ref}");
}

#[test]
fn a_picture_reaches_the_model_as_image_content_with_its_type_and_size() {
    let mut d = StackHarness::new();
    let a = d.call("get_file", api(json!({"path": "assets/icon.png"})));
    assert!(!a.is_error, "{}", a.text);
    // The window says binary; then the file's bytes, to the model's cap.
    assert_eq!(
        d.requests,
        [
            "GET /rest/api/latest/projects/BB/repos/api/browse/assets/icon.png?start=0&limit=200",
            "GET /rest/api/latest/projects/BB/repos/api/raw/assets/icon.png?",
        ]
    );
    // The sentence, the picture, and the resource link every tool answer carries.
    let content = a.raw["content"].as_array().unwrap();
    let kinds: Vec<&str> = content.iter().filter_map(|c| c["type"].as_str()).collect();
    assert_eq!(kinds, ["text", "image", "resource_link"]);
    assert_eq!(content[0]["type"], "text");
    assert!(
        a.text.starts_with("assets/icon.png at the default branch in BB/api: a PNG picture, 10×10 pixels ("),
        "{}",
        a.text
    );
    assert_eq!(content[1]["type"], "image");
    assert_eq!(content[1]["mimeType"], "image/png");
    // The bytes are the stand-in's file, whole.
    let want = bb_stack::sources::png("BB", "api");
    let data = content[1]["data"].as_str().unwrap();
    assert_eq!(bb_core::testing::encoding::base64_decode(data).as_deref(), Some(want.as_slice()));
}

#[test]
fn paths_that_climb_hold_control_characters_or_run_past_any_name_are_refused_before_any_request() {
    let mut d = StackHarness::new();
    for (path, word) in [
        ("src/../secret", "`paths` cannot be `.` or `..`"),
        ("./README.md", "`paths` cannot be `.` or `..`"),
        ("src/a\u{7}b.rs", "`path` holds control characters"),
    ] {
        let a = d.call("get_file", api(json!({"path": path})));
        assert!(a.is_error && a.text.contains(word), "{path}: {}", a.text);
        assert!(d.requests.is_empty(), "{path}: {:?}", d.requests);
    }
    let long = d.call("get_file", api(json!({"path": "a/".repeat(2100)})));
    assert!(long.is_error && long.text.contains("longer than 4096"), "{}", long.text);
    let slashes = d.call("get_file", api(json!({"path": "//"})));
    assert!(slashes.is_error && slashes.text.contains("names no file"), "{}", slashes.text);
    for (arg, value) in [("line_count", json!(0)), ("line_count", json!(100_000)), ("start_line", json!(-5))] {
        let a = d.call("get_file", api(json!({"path": "README.md", arg: value})));
        assert!(a.is_error && a.text.contains(arg), "{arg}: {}", a.text);
    }
    let bad_ref = d.call("blame_file", api(json!({"path": "README.md", "at": "main\nx"})));
    assert!(bad_ref.is_error && bad_ref.text.contains("`at` holds control characters"), "{}", bad_ref.text);
    assert!(d.requests.is_empty());
}

#[test]
fn a_folder_lists_its_entries_and_every_path_under_it_filtered_by_a_glob() {
    let mut d = StackHarness::new();
    let root = d.call("list_files", api(json!({})));
    assert!(!root.is_error, "{}", root.text);
    assert!(root.text.starts_with("Entries of / at the default branch in BB/api, from start=0:"), "{}", root.text);
    for entry in ["src/", "README.md (", "assets/"] {
        assert!(root.text.lines().any(|l| l.starts_with(entry)), "{entry}: {}", root.text);
    }
    let vendor = d.call("list_files", api(json!({"path": "vendor"})));
    assert!(vendor.text.contains("\ncommon (submodule)"), "{}", vendor.text);
    let py = d.call("list_files", api(json!({"recursive": true, "glob": "*.py"})));
    assert!(py.text.contains("of them match *.py"), "{}", py.text);
    assert!(py.text.lines().any(|l| l == "scripts/deploy.py"), "{}", py.text);
    assert!(!py.text.contains("src/lib.rs"), "{}", py.text);
    assert!(d.requests[0].contains("/files?start=0&limit=100"), "{:?}", d.requests);
    let paged = d.call("list_files", api(json!({"recursive": true, "limit": 2})));
    assert!(paged.text.ends_with("More paths exist — start=2."), "{}", paged.text);
    let file = d.call("list_files", api(json!({"path": "README.md"})));
    assert!(file.is_error && file.text.contains("is a file, not a folder"), "{}", file.text);
}

#[test]
fn blame_names_the_commit_that_changed_each_line_with_its_message() {
    let mut d = StackHarness::new();
    let commits = pr1_commits(&d);
    let a = d.call(
        "blame_file",
        api(json!({"path": "src/client.rs", "at": "feature/retry", "start_line": 9, "line_count": 4})),
    );
    assert!(!a.is_error, "{}", a.text);
    assert!(a.text.starts_with("Blame of src/client.rs at feature/retry in BB/api, lines 9-12:"), "{}", a.text);
    let changed = a.text.lines().find(|l| l.ends_with("lines 11-12")).unwrap_or_else(|| panic!("{}", a.text));
    assert!(changed.starts_with(&commits[0][..11]), "{changed} / {}", commits[0]);
    // The lines before it come from an older commit on main, named with its message.
    let older = a.text.lines().find(|l| l.ends_with("lines 9-10")).unwrap_or_else(|| panic!("{}", a.text));
    assert!(!older.starts_with(&commits[0][..11]) && older.contains('"'), "{older}");
    // One blame request, then one per commit named for its message.
    assert_eq!(d.requests.len(), 3, "{:?}", d.requests);
    assert!(d.requests[0].contains("blame=true&noContent=true&start=8&limit=4"), "{:?}", d.requests);
}

#[test]
fn code_search_finds_an_identifier_in_two_repositories_and_a_server_without_an_index_says_so() {
    let mut d = StackHarness::new();
    let a = d.call("search_code", json!({"query": "retry_with_backoff"}));
    assert!(!a.is_error, "{}", a.text);
    assert!(a.text.contains("\nBB/api src/lib.rs:"), "{}", a.text);
    assert!(a.text.contains("\nOPS/infra scripts/deploy.py:"), "{}", a.text);
    assert!(a.text.contains("pub fn retry_with_backoff<T>("), "marks and escapes are taken out: {}", a.text);
    assert_eq!(d.bodies[0]["query"], "retry_with_backoff");
    let narrowed = d.call("search_code", json!({"query": "retry_with_backoff ext:py", "project": "OPS"}));
    assert!(
        narrowed.text.starts_with("Code search for \"retry_with_backoff ext:py\" in project OPS: 1 file(s) match"),
        "{}",
        narrowed.text
    );
    assert_eq!(d.bodies[0]["query"], "retry_with_backoff ext:py project:OPS");
    let orphan = d.call("search_code", json!({"query": "x", "repo": "api"}));
    assert!(orphan.is_error && d.requests.is_empty(), "{}", orphan.text);
    d.control("POST", "/search", json!({"enabled": false}));
    let off = d.call("search_code", json!({"query": "retry_with_backoff"}));
    assert!(off.is_error);
    assert!(
        off.text.starts_with("This Bitbucket cannot search code")
            && off.text.contains("list_files")
            && off.text.contains("get_file"),
        "{}",
        off.text
    );
}

#[test]
fn since_returns_only_the_files_changed_after_the_commit_or_the_persons_last_review() {
    let mut d = StackHarness::new();
    let commits = pr1_commits(&d);
    assert_eq!(commits.len(), 3);
    let pr1 = json!({"pr_id": 1});
    let all = d.call("get_pull_request_diff", api(pr1.clone()));
    assert!(all.text.contains("src/client.rs"), "{}", all.text);
    let since = d.call("get_pull_request_diff", api(json!({"pr_id": 1, "since": commits[0]})));
    assert!(!since.is_error, "{}", since.text);
    let head = since.text.lines().next().unwrap();
    assert!(head.contains("since commit") && head.contains("2 changed file(s) shown"), "{head}");
    assert!(
        !since.text.contains("src/client.rs")
            && since.text.contains("== src/retry.rs")
            && since.text.contains("== docs/retry.md"),
        "{}",
        since.text
    );
    let changes = d.requests.iter().find(|r| r.contains("/changes?")).unwrap();
    assert!(changes.contains(&format!("changeScope=RANGE&sinceId={}&untilId={}", commits[0], commits[2])), "{changes}");
    // Carol last reviewed the first commit: her last review is the same range.
    d.world.model.default_user = "carol".into();
    let carol = d.call("get_pull_request_diff", api(json!({"pr_id": 1, "since": "last_review"})));
    assert!(carol.text.lines().next().unwrap().contains("since your last review"), "{}", carol.text);
    assert!(!carol.text.contains("src/client.rs"), "{}", carol.text);
    // Bob reviewed the tip: nothing is new to him, and no change list is read.
    d.world.model.default_user = "bob".into();
    let bob = d.call("get_pull_request_diff", api(json!({"pr_id": 1, "since": "last_review"})));
    assert!(!bob.is_error && bob.text.contains("nothing changed since commit"), "{}", bob.text);
    assert_eq!(d.requests.len(), 1, "{:?}", d.requests);
    // Erin never reviewed: every change, said so.
    d.world.model.default_user = "erin".into();
    let erin = d.call("get_pull_request_diff", api(json!({"pr_id": 1, "since": "last_review"})));
    assert!(
        erin.text.contains("Bitbucket has no review of PR #1 on record for erin")
            && erin.text.contains("src/client.rs"),
        "{}",
        erin.text
    );
}

#[test]
fn a_commit_lists_the_files_it_changed_and_diffs_the_paths_asked() {
    let mut d = StackHarness::new();
    let commits = pr1_commits(&d);
    let a = d.call("get_commit", api(json!({"commit_id": commits[1], "paths": ["src/retry.rs"]})));
    assert!(!a.is_error, "{}", a.text);
    assert!(a.text.contains("1 changed file(s):\n"), "{}", a.text);
    assert!(a.text.contains("src/retry.rs") && !a.text.contains("src/client.rs"), "{}", a.text);
    assert!(a.text.contains("+5 pub fn backoff(n: u32) -> Duration {"), "{}", a.text);
    assert!(
        d.requests.iter().any(|r| r.contains(&format!("/commits/{}/diff/src/retry.rs?contextLines=3", commits[1]))),
        "{:?}",
        d.requests
    );
}

#[test]
fn a_project_lists_every_repository() {
    let mut d = StackHarness::new();
    let a = d.call("search_repositories", json!({"project_key": "BB"}));
    assert!(!a.is_error, "{}", a.text);
    assert_eq!(d.requests, ["GET /rest/api/latest/projects/BB/repos?start=0&limit=25"]);
    assert!(a.text.starts_with("Repositories of project BB"), "{}", a.text);
    assert!(a.text.contains("\nBB/api ") && a.text.contains("\nBB/cli "), "{}", a.text);
    let both = d.call("search_repositories", json!({"project_key": "BB", "name": "api"}));
    assert!(both.is_error && d.requests.is_empty(), "{}", both.text);
}

#[test]
fn the_lines_the_diff_expands_are_the_files_lines_at_the_pull_requests_commit() {
    let mut d = StackHarness::with_views();
    let diff = d.call("show", api(json!({"kind": "diff", "pr_id": 1})));
    assert!(!diff.is_error, "{}", diff.text);
    let view = &diff.raw["_meta"]["bb/view"]["diff"];
    let new = view["expand"]["new"].as_str().unwrap().to_owned();
    assert_eq!(new, pr1_commits(&d)[2], "Show more reads the source's tip");
    assert!(view["review"].is_object());
    let client = view["diffs"].as_array().unwrap().iter().find(|f| f["path"] == "src/client.rs").unwrap();
    let file = d.call("show", api(json!({"kind": "file", "path": "src/client.rs", "at": new, "line_count": 500})));
    assert!(!file.is_error, "{}", file.text);
    let data = &file.raw["_meta"]["bb/view"]["file"];
    assert_eq!(data["last"], true);
    let lines: Vec<&str> = data["lines"].as_array().unwrap().iter().map(|l| l["s"].as_str().unwrap()).collect();
    let mut checked = 0;
    for h in client["hunks"].as_array().unwrap() {
        for l in h["lines"].as_array().unwrap() {
            if l["t"] == "R" {
                continue;
            }
            let n = l["n"].as_u64().unwrap() as usize;
            assert_eq!(lines[n - 1], l["s"].as_str().unwrap(), "line {n}");
            checked += 1;
        }
    }
    assert!(checked >= 5, "{checked}");
    // Highlighted as the diff is, and the blame only when asked.
    assert!(data["lines"][0].get("r").is_some() || data["lines"][0].get("p").is_some());
    assert!(data["blame"].is_null());
    let blamed = d.call("show", api(json!({"kind": "file", "path": "src/client.rs", "at": new, "blame": true})));
    let blame = blamed.raw["_meta"]["bb/view"]["file"]["blame"].as_array().unwrap().clone();
    assert!(blame.iter().any(|b| b["from"] == 11 && b["commit"] == json!(pr1_commits(&d)[0])), "{blame:?}");
    // Each blame author is among the view's users with the avatar the card draws (read beside the lines, or
    // cached from the diff above).
    let users = &blamed.raw["_meta"]["bb/view"]["users"];
    for b in &blame {
        let slug = b["author"].as_str().unwrap();
        assert!(users[slug]["avatar"].as_str().is_some_and(|a| a.starts_with("data:image/")), "{slug}: {users}");
    }
    // `blame` is the view's own argument: the model's get_file has none.
    let refused = d.call("get_file", api(json!({"path": "src/client.rs", "blame": true})));
    assert!(refused.is_error, "{}", refused.text);
}

#[test]
fn the_diff_view_since_the_persons_last_review_carries_only_the_later_files() {
    let mut d = StackHarness::with_views();
    d.world.model.default_user = "carol".into();
    let commits = pr1_commits(&d);
    let a = d.call("show", api(json!({"kind": "diff", "pr_id": 1, "since": "last_review"})));
    assert!(!a.is_error, "{}", a.text);
    let view = &a.raw["_meta"]["bb/view"]["diff"];
    assert_eq!(view["review"]["lastReviewed"], json!(commits[0]));
    assert_eq!(view["review"]["since"], json!(commits[0]));
    let paths: Vec<&str> = view["files"].as_array().unwrap().iter().map(|f| f["path"].as_str().unwrap()).collect();
    assert_eq!(paths, ["src/retry.rs", "docs/retry.md"]);
    assert!(a.text.contains(&format!("since commit {}", &commits[0][..11])), "{}", a.text);
}

/// Rewrites every browse answer of `path` to `lines` lines of `chars` characters each.
fn wide_lines(d: &mut StackHarness, path: &'static str, lines: usize, chars: usize) {
    d.rewrite_answers(move |request, v| {
        if request.path.ends_with(path) && v.get("lines").is_some() {
            let text = "x".repeat(chars);
            v["lines"] = Value::Array((0..lines).map(|_| json!({"text": text})).collect());
            v["size"] = json!(lines);
            v["isLastPage"] = json!(false);
        }
    });
}

#[test]
fn a_window_of_wide_lines_is_bounded_by_its_bytes_and_says_each_cut() {
    let mut d = StackHarness::new();
    wide_lines(&mut d, "tables.rs", 2_000, 15_000);
    let a = d.call("get_file", api(json!({"path": "src/generated/tables.rs", "line_count": 2000})));
    assert!(!a.is_error, "{}", a.text);
    assert!(a.text.len() <= 61_000, "{} bytes", a.text.len());
    let shown = a.text.lines().filter(|l| l.ends_with("… [line cut: 500 of 15000 characters shown]")).count();
    assert!(shown > 100, "{shown} lines shown, each cut: {}", &a.text[..200]);
    assert!(a.text.starts_with(&format!(
        "src/generated/tables.rs at the default branch in BB/api: lines 1-{shown}; the file goes on. {shown} line(s) longer than 500 characters are cut.\n"
    )));
    assert!(
        a.text.ends_with(&format!(
            "[window cut at 60000 bytes after line {shown}; more lines — start_line={}]",
            shown + 1
        )),
        "{}",
        &a.text[a.text.len() - 200..]
    );
}

#[test]
fn a_file_view_of_wide_lines_carries_at_most_its_bytes_and_says_the_file_goes_on() {
    let mut d = StackHarness::with_views();
    wide_lines(&mut d, "tables.rs", 2_000, 15_000);
    let a = d.call("show", api(json!({"kind": "file", "path": "src/generated/tables.rs", "line_count": 2000})));
    assert!(!a.is_error, "{}", a.text);
    let data = &a.raw["_meta"]["bb/view"]["file"];
    let lines = data["lines"].as_array().unwrap();
    // 2,000 characters (and a newline) a line: 2 MiB of text keeps 1,049 lines (the last one crosses it), each cut at 2,000 of 15,000.
    assert_eq!(lines.len(), 1_049);
    assert!(lines.iter().all(|l| l["cut"] == 15_000 && l["s"].as_str().unwrap().len() == 2_000));
    assert_eq!(
        (data["start"].clone(), data["end"].clone(), data["last"].clone()),
        (json!(1), json!(1049), json!(false))
    );
    assert!(
        a.text.contains("lines 1-1049. The window ends after line 1049: its lines past 2 MiB of text are not carried; the file goes on."),
        "{}",
        a.text
    );
}

#[test]
fn the_diff_of_a_changed_picture_carries_its_sides_and_an_added_one_has_no_before() {
    let mut d = StackHarness::with_views();
    let a = d.call("show", json!({"kind": "diff", "project": "BB", "repo": "api", "pr_id": 9}));
    assert!(!a.is_error, "{}", a.text);
    let diffs = a.raw["_meta"]["bb/view"]["diff"]["diffs"].as_array().unwrap();
    let logo = diffs.iter().find(|x| x["path"] == "assets/logo.png").unwrap();
    assert_eq!(logo["binary"], true);
    assert_eq!(logo["pictures"]["before"], Value::Null, "added: nothing before");
    assert_eq!(logo["pictures"]["after"]["mimeType"], "image/png");
    assert!(logo["pictures"]["after"]["data"].as_str().is_some_and(|b| b.starts_with("iVBORw0KGgo")));
    // The new side at the source's tip, read once; no picture is read for a file that is no picture.
    let raws: Vec<&String> = d.requests.iter().filter(|r| r.contains("/raw/")).collect();
    assert_eq!(raws.len(), 1, "{raws:?}");
    assert!(raws[0].starts_with("GET /rest/api/latest/projects/BB/repos/api/raw/assets/logo.png?at="), "{raws:?}");
}
