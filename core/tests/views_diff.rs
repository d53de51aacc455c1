//! `show` kind `diff` against the stand-in: comments where Bitbucket's diff with comments draws them,
//! the code highlighted in bb, and the answer when the shell's deadline passes.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod stack_harness;

use serde_json::{Value, json};
use stack_harness::StackHarness;

fn diff_view(d: &mut StackHarness, pr: u64) -> Value {
    let a = d.call("show", json!({"kind": "diff", "project": "BB", "repo": "api", "pr_id": pr}));
    assert!(!a.is_error, "{}", a.text);
    assert!(a.text.starts_with(&format!("Showing the diff of PR #{pr} in BB/api to the person")), "{}", a.text);
    assert!(a.text.len() < 400, "the text for the model stays short and never holds code: {}", a.text);
    a.raw["_meta"]["bb/view"]["diff"].clone()
}

/// Every drawn line of `path`, with the ids of the threads drawn under it.
fn lines<'a>(view: &'a Value, path: &str) -> Vec<(&'a Value, Vec<u64>)> {
    let file = view["diffs"].as_array().unwrap().iter().find(|d| d["path"] == path).unwrap();
    let mut out = vec![];
    for h in file["hunks"].as_array().unwrap() {
        for l in h["lines"].as_array().unwrap() {
            let ids = l["c"].as_array().into_iter().flatten().filter_map(|c| c["id"].as_u64()).collect();
            out.push((l, ids));
        }
    }
    out
}

fn line_of(view: &Value, path: &str, comment: u64) -> Value {
    let found: Vec<Value> =
        lines(view, path).into_iter().filter(|(_, ids)| ids.contains(&comment)).map(|(l, _)| l.clone()).collect();
    assert_eq!(found.len(), 1, "comment {comment} is drawn on exactly one line");
    found[0].clone()
}

#[test]
fn comments_sit_on_the_lines_bitbucket_draws_them_on() {
    let mut d = StackHarness::with_views();
    let view = diff_view(&mut d, 1);
    // On an added line, a removed line and a context line.
    let added = line_of(&view, "src/client.rs", 1006);
    assert_eq!((added["t"].as_str(), added["n"].as_u64(), added.get("o")), (Some("A"), Some(12), None));
    let removed = line_of(&view, "src/client.rs", 1005);
    assert_eq!((removed["t"].as_str(), removed["o"].as_u64(), removed.get("n")), (Some("R"), Some(11), None));
    let context = line_of(&view, "src/client.rs", 1008);
    assert_eq!((context.get("t"), context["n"].as_u64()), (None, Some(15)), "a context line carries no type");
    // Written on the left of a side-by-side diff: its anchor's 16 is the old file's line, and it lands
    // on the line whose old number is 16, not on the new file's line 16.
    let old_side = line_of(&view, "src/client.rs", 1009);
    assert_eq!(old_side["o"].as_u64(), Some(16), "{old_side}");
    assert_ne!(old_side["n"].as_u64(), Some(16), "{old_side}");
}

#[test]
fn a_file_comment_is_at_the_top_an_orphaned_one_on_no_line_and_replies_inside_their_thread() {
    let mut d = StackHarness::with_views();
    let view = diff_view(&mut d, 1);
    let retry = view["diffs"].as_array().unwrap().iter().find(|f| f["path"] == "src/retry.rs").unwrap();
    assert!(retry["fileComments"].as_array().unwrap().iter().any(|c| c["id"] == 1010), "{}", retry["fileComments"]);
    let all: Vec<u64> = lines(&view, "src/client.rs").into_iter().flat_map(|(_, ids)| ids).collect();
    assert!(!all.contains(&1011), "the orphaned comment's line is gone: it is on no line");
    assert!(!view.to_string().contains("This line moved away"), "drawn nowhere in the diff: the activity shows it");
    let thread = line_of(&view, "src/client.rs", 1006)["c"][0].clone();
    assert_eq!(thread["replies"][0]["id"], 1007, "the reply is inside its thread: {thread}");
}

#[test]
fn code_is_highlighted_with_runs_that_cover_each_line() {
    let mut d = StackHarness::with_views();
    let view = diff_view(&mut d, 1);
    let client = view["diffs"].as_array().unwrap().iter().find(|f| f["path"] == "src/client.rs").unwrap();
    assert_eq!(client["language"], "Rust");
    let mut highlighted = 0;
    for (l, _) in lines(&view, "src/client.rs") {
        let runs = l["r"].as_str().expect("every line reached is highlighted");
        let (mut total, mut number) = (0usize, String::new());
        for ch in runs.chars() {
            if ch.is_ascii_digit() {
                number.push(ch);
            } else {
                total += number.parse::<usize>().unwrap();
                number.clear();
                highlighted += usize::from(ch != '_');
            }
        }
        assert_eq!(total, l["s"].as_str().unwrap().chars().count(), "{l}");
    }
    assert!(highlighted > 0);
    assert!(d.past_deadline.is_empty(), "work done before its deadline is not said to stop at it");
}

#[test]
fn when_the_deadline_passes_the_answer_goes_out_with_the_rest_plain_and_marked() {
    let mut d = StackHarness::with_views();
    d.work_steps = Some(0);
    let view = diff_view(&mut d, 1);
    let plain: Vec<&Value> = lines(&view, "src/client.rs").into_iter().map(|(l, _)| l).collect();
    assert!(plain.iter().all(|l| l["p"] == "deadline" && l.get("r").is_none()), "{:?}", plain.first());
    // The core said the work stopped at its deadline, once: the shell counts that, never the clock.
    assert_eq!(d.past_deadline.len(), 1, "{:?}", d.past_deadline);
}

#[test]
fn a_view_of_a_pull_request_that_does_not_exist_says_so_with_its_address() {
    let mut d = StackHarness::with_views();
    let a = d.call("show", json!({"kind": "diff", "project": "BB", "repo": "api", "pr_id": 999}));
    assert!(a.is_error);
    assert_eq!(
        a.raw["_meta"]["bb/view"]["error"]["url"],
        "http://stack.test/bitbucket/projects/BB/repos/api/pull-requests/999"
    );
}

#[test]
fn a_line_highlighted_before_the_deadline_is_highlighted_as_in_a_run_without_one() {
    let large = |d: &mut StackHarness| {
        let a = d.call("show", json!({"kind": "diff", "project": "OPS", "repo": "infra", "pr_id": 1}));
        assert!(!a.is_error, "{}", a.text);
        a.raw["_meta"]["bb/view"]["diff"].clone()
    };
    let mut d = StackHarness::with_views();
    let whole = large(&mut d);
    let runs_of = |view: &Value| -> Vec<Option<String>> {
        let mut out = vec![];
        for f in view["diffs"].as_array().unwrap() {
            for h in f["hunks"].as_array().into_iter().flatten() {
                for l in h["lines"].as_array().unwrap() {
                    out.push(l["r"].as_str().map(str::to_owned));
                }
            }
        }
        out
    };
    let full = runs_of(&whole);
    // Stop after each number of steps in turn: every line reached agrees with the run that was never
    // stopped, and every line not reached is plain.
    for steps in 0..2 {
        let mut d = StackHarness::with_views();
        d.work_steps = Some(steps);
        let cut = runs_of(&large(&mut d));
        assert_eq!(cut.len(), full.len());
        assert!(steps == 0 || cut.iter().any(Option::is_some), "some lines were reached in {steps} step(s)");
        assert!(cut.iter().any(Option::is_none), "the file is longer than {steps} step(s) of work");
        for (c, f) in cut.iter().zip(&full) {
            if c.is_some() {
                assert_eq!(c, f);
            }
        }
    }
}

#[test]
fn a_file_that_conflicts_between_the_branches_is_marked_so() {
    let mut d = StackHarness::with_views();
    let view = diff_view(&mut d, 3);
    let files = view["files"].as_array().unwrap();
    assert!(files.iter().any(|f| f["conflicted"] == true), "{files:?}");
    assert!(view["diffs"].as_array().unwrap().iter().any(|f| f["conflicted"] == true));
    let mut d = StackHarness::with_views();
    let view = diff_view(&mut d, 1);
    assert!(view["files"].as_array().unwrap().iter().all(|f| f["conflicted"] == false));
}

#[test]
fn a_file_highlighted_whole_is_not_highlighted_again_for_the_next_read() {
    let mut d = StackHarness::with_views();
    let first = diff_view(&mut d, 1);
    // The next read gets no CPU at all (its deadline has passed at once): the runs come from the cache.
    d.work_steps = Some(0);
    let again = diff_view(&mut d, 1);
    assert_eq!(first, again, "the same lines, the same runs");
    let highlighted = lines(&again, "src/client.rs").into_iter().filter(|(l, _)| l.get("r").is_some()).count();
    assert!(highlighted > 0);
    // A file cut by the deadline is not kept: a fresh server's cut read, then a whole one, then a cut one.
    let mut d = StackHarness::with_views();
    d.work_steps = Some(0);
    let cut = diff_view(&mut d, 1);
    assert!(lines(&cut, "src/client.rs").iter().all(|(l, _)| l["p"] == "deadline"));
    d.work_steps = None;
    assert_eq!(diff_view(&mut d, 1), first, "tried whole again");
}

#[test]
fn with_templates_a_template_file_goes_out_plain_and_its_classes_come_with_the_next_refresh() {
    let mut d = StackHarness::with_views_and_templates();
    let show = json!({"kind": "diff", "project": "BB", "repo": "api", "pr_id": 7});
    let shown = d.call("show", show.clone());
    let view = shown.raw["_meta"]["bb/view"].clone();
    let first = lines(&view["diff"], "web/index.html");
    assert!(!first.is_empty());
    assert!(
        first.iter().all(|(l, _)| l["p"] == "template" && l.get("r").is_none()),
        "not waited for: {:?}",
        first[0].0
    );
    let again = d.call("refresh_view", json!({"show": show, "fingerprint": view["fingerprint"]}));
    let fresh = &again.raw["_meta"]["bb/view"];
    assert!(fresh.get("unchanged").is_none(), "the classes came: {}", again.text);
    let now = lines(&fresh["diff"], "web/index.html");
    assert!(now.iter().all(|(l, _)| l.get("p").is_none() || l["p"] == "long"));
    assert!(now.iter().any(|(l, _)| l["r"].is_string()));
    let still = d.call("refresh_view", json!({"show": show, "fingerprint": fresh["fingerprint"]}));
    assert_eq!(still.raw["_meta"]["bb/view"]["unchanged"], true, "and then it holds still");
}

#[test]
fn a_change_without_a_path_is_listed_but_never_asked_for_as_a_path() {
    // An older server's change with no `path`, and one whose `path` has no `toString`.
    let mut d = StackHarness::with_views();
    d.rewrite_answers(|r, v| {
        if r.path.ends_with("/pull-requests/1/changes") {
            v["values"][0].as_object_mut().unwrap().remove("path");
            v["values"][1]["path"].as_object_mut().unwrap().remove("toString");
        }
    });
    let view = diff_view(&mut d, 1);
    assert!(
        !d.requests.iter().any(|r| r.contains("/diff/%3F") || r.contains("/diff/?") || r.contains("/diff?")),
        "{:?}",
        d.requests
    );
    let files = view["files"].as_array().unwrap();
    assert!(files.len() >= 3, "every change is listed: {files:?}");
    let read = d.requests.iter().filter(|r| r.contains("/diff/")).count();
    assert_eq!(read, files.len() - 2, "each file with a path is read, the two without are not: {:?}", d.requests);
}

#[test]
fn a_file_past_the_views_share_carries_its_first_lines_and_counts_the_rest_it_skipped_as_it_read() {
    let mut d = StackHarness::with_views();
    let a = d.call("show", json!({"kind": "diff", "project": "BB", "repo": "api", "pr_id": 9}));
    let view = &a.raw["_meta"]["bb/view"]["diff"];
    // Five files share the view: 4,000 lines each. Bitbucket sent 10,000 of vendor/bindings.rs's 12,000.
    let share = bb_core::limits::VIEW_DIFF_LINES / 5;
    let carried = lines(view, "vendor/bindings.rs");
    assert_eq!(carried.len(), share);
    let file = view["diffs"].as_array().unwrap().iter().find(|f| f["path"] == "vendor/bindings.rs").unwrap();
    assert_eq!(file["leftOut"], json!(10_000 - share), "what Bitbucket sent past the share is counted");
    assert_eq!(file["truncated"], true, "and Bitbucket's own cut is still said");
    let first_new: Vec<u64> = carried.iter().take(3).filter_map(|(l, _)| l["n"].as_u64()).collect();
    assert_eq!(first_new, [1, 2, 3], "the first lines, in order");
    assert!(a.text.contains(&format!("{} more left in Bitbucket", 10_000 - share)), "{}", a.text);
    let small = view["diffs"].as_array().unwrap().iter().find(|f| f["path"] == "src/transport/http.rs").unwrap();
    assert!(small.get("leftOut").is_none(), "a file within its share carries everything");
}

#[test]
fn a_large_call_the_process_has_no_room_for_says_bb_is_busy_and_reads_nothing() {
    let mut d = StackHarness::with_views();
    d.no_room = true;
    let a = d.call("show", json!({"kind": "diff", "project": "BB", "repo": "api", "pr_id": 1}));
    assert!(a.is_error);
    assert!(a.text.starts_with("bb is busy") && a.text.contains("--memory-budget"), "{}", a.text);
    assert!(d.requests.is_empty(), "no read went out before the room: {:?}", d.requests);
    // A card is not a large call: it asks for no room.
    let card = d.call("show", json!({"kind": "pull_request", "project": "BB", "repo": "api", "pr_id": 1}));
    assert!(!card.is_error, "{}", card.text);
}

#[test]
fn markdown_the_file_a_pull_request_carries_most_is_highlighted_without_asking_for_templates() {
    let mut d = StackHarness::with_views();
    let view = diff_view(&mut d, 1);
    let md = lines(&view, "docs/retry.md");
    assert!(!md.is_empty());
    for (l, _) in &md {
        assert!(l.get("p").is_none(), "not drawn plain as a template: {l}");
        assert!(l["r"].is_string(), "{l}");
    }
}
