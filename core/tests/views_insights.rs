//! Code Insights in the views against the stand-in: the card's `insights` (reports failed first, fields formatted,
//! counts by severity), the merge verdict carrying the Code Insights merge check's vetoes, the diff's annotations on
//! the lines of the new file, 500 annotations on one file cut at the file's share, a report that finishes seen by
//! `refresh_view`, and a server without Code Insights drawing nothing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod stack_harness;

use serde_json::{Value, json};
use stack_harness::StackHarness;

fn card(d: &mut StackHarness, repo: &str, id: u64) -> Value {
    let (project, slug) = repo.split_once('/').unwrap();
    let a = d.call("show", json!({"kind": "pull_request", "project": project, "repo": slug, "pr_id": id}));
    assert!(!a.is_error, "{}", a.text);
    a.raw["_meta"]["bb/view"].clone()
}

fn diff(d: &mut StackHarness, id: u64) -> Value {
    let a = d.call("show", json!({"kind": "diff", "project": "BB", "repo": "api", "pr_id": id}));
    assert!(!a.is_error, "{}", a.text);
    a.raw["_meta"]["bb/view"]["diff"].clone()
}

fn file<'v>(view: &'v Value, path: &str) -> &'v Value {
    view["diffs"].as_array().unwrap().iter().find(|d| d["path"] == path).unwrap()
}

/// The new-file numbers of the lines drawn in a diff file.
fn drawn_new_lines(file: &Value) -> Vec<u64> {
    file["hunks"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|h| h["lines"].as_array().unwrap())
        .filter_map(|l| l["n"].as_u64())
        .collect()
}

#[test]
fn the_card_draws_reports_failed_first_with_fields_formatted_and_annotations_counted() {
    let mut d = StackHarness::with_views();
    let view = card(&mut d, "BB/api", 1);
    let insights = &view["pullRequest"]["insights"];
    let reports = insights["reports"].as_array().unwrap();
    let order: Vec<(&str, &Value)> = reports.iter().map(|r| (r["key"].as_str().unwrap(), &r["result"])).collect();
    assert_eq!(order, [("sonar", &json!("FAIL")), ("security", &Value::Null), ("tests", &json!("PASS"))]);
    let sonar = &reports[0];
    assert_eq!(sonar["url"], "https://sonar.example.invalid/dashboard?id=api&pullRequest=1");
    assert_eq!(sonar["reporter"], "SonarQube 10.4");
    assert_eq!(sonar["required"], Value::Null, "no REST source says which reports are required");
    let data: Vec<(&str, &str)> = sonar["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["title"].as_str().unwrap(), f["text"].as_str().unwrap()))
        .collect();
    assert_eq!(data[0], ("Coverage", "83.2%"));
    assert_eq!(data[3], ("Analysis took", "1 min 5 s"));
    assert_eq!(data[5], ("Dashboard", "Open in SonarQube"));
    assert_eq!(sonar["data"][5]["url"], "https://sonar.example.invalid/dashboard?id=api");
    assert_eq!(sonar["annotations"], json!({"HIGH": 2, "MEDIUM": 1, "LOW": 2}));
    let security = &reports[1];
    assert_eq!(security["url"], Value::Null, "a javascript: link is never drawn");
    assert_eq!(security["title"], "Security scan <img src=x onerror=alert(1)>", "kept as text for a text node");
    let tests = &reports[2];
    assert_eq!(tests["data"][3], json!({"title": "Heat", "text": "[3,1,4]", "url": null}), "an unknown type as text");
    assert_eq!(insights["annotations"], json!({"total": 6, "HIGH": 2, "MEDIUM": 2, "LOW": 2}));
    assert!(
        insights.get("missingRequired").is_none() && reports[0].get("required").is_none(),
        "no required mark bb cannot know"
    );
}

#[test]
fn the_merge_verdict_includes_a_failed_and_a_missing_required_report_in_the_checks_words() {
    let mut d = StackHarness::with_views();
    let view = card(&mut d, "OPS/infra", 1);
    let check = &view["pullRequest"]["mergeCheck"];
    assert_eq!(check["canMerge"], false);
    let details: Vec<&str> = check["vetoes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|v| v["summary"] == "Code Insights requirements not met")
        .map(|v| v["detail"].as_str().unwrap())
        .collect();
    assert_eq!(details.len(), 2, "{check}");
    assert!(details[0].contains("\"SonarQube\" has failed"), "{details:?}");
    assert!(details[1].contains("\"security\" has not been published"), "{details:?}");
}

#[test]
fn annotations_sit_under_the_new_files_lines_and_the_rest_at_the_files_top() {
    let mut d = StackHarness::with_views();
    let view = diff(&mut d, 1);
    let files = view["files"].as_array().unwrap();
    let count = |p: &str| files.iter().find(|f| f["path"] == p).unwrap()["annotations"].clone();
    assert_eq!((count("src/client.rs"), count("src/retry.rs"), count("docs/retry.md")), (json!(2), json!(3), json!(1)));
    let client = file(&view, "src/client.rs");
    let notes = client["annotations"].as_array().unwrap();
    assert_eq!(notes[0]["line"], 12);
    assert_eq!(notes[0]["severity"], "HIGH");
    assert_eq!(notes[0]["reportTitle"], "SonarQube");
    assert!(drawn_new_lines(client).contains(&12), "line 12 is drawn: the page puts it under that line");
    assert!(drawn_new_lines(client).contains(&3), "on a context line, drawn with the hunk's context");
    let retry = file(&view, "src/retry.rs");
    let notes = retry["annotations"].as_array().unwrap();
    let lines: Vec<u64> = notes.iter().map(|n| n["line"].as_u64().unwrap()).collect();
    assert_eq!(lines, [40, 0, 6], "HIGH first, then by line");
    assert!(!drawn_new_lines(retry).contains(&40), "past the file's end: listed at its top");
    let long = notes[1]["message"].as_str().unwrap();
    assert_eq!(long.chars().count(), 2001, "cut at 2,000 characters with …");
    assert!(long.ends_with('…'));
    assert_eq!(notes[2]["url"], Value::Null, "a javascript: link is dropped");
    assert_eq!(notes[2]["message"], "<b>Magic number</b> 100 <script>alert('annotation')</script>");
    assert_eq!(retry["annotationsMore"], 0);
}

#[test]
fn five_hundred_annotations_on_one_file_are_cut_at_fifty_and_a_deleted_files_is_listed() {
    let mut d = StackHarness::with_views();
    let view = diff(&mut d, 9);
    let bindings = file(&view, "vendor/bindings.rs");
    assert_eq!(bindings["annotations"].as_array().unwrap().len(), 50);
    assert_eq!(bindings["annotationsMore"], 450);
    let files = view["files"].as_array().unwrap();
    assert_eq!(files.iter().find(|f| f["path"] == "vendor/bindings.rs").unwrap()["annotations"], 500);
    let legacy = file(&view, "src/legacy.rs");
    assert_eq!(legacy["annotations"][0]["line"], 2);
    assert!(drawn_new_lines(legacy).is_empty(), "a deleted file draws no new line: the annotation is at its top");
}

#[test]
fn a_report_that_finishes_changes_the_cards_fingerprint_and_a_pending_one_keeps_it_quick() {
    let mut d = StackHarness::with_views();
    d.advance(1_766_000_000_000);
    let show = json!({"kind": "pull_request", "project": "BB", "repo": "api", "pr_id": 1});
    let first = d.call("show", show.clone());
    let fp = first.raw["_meta"]["bb/view"]["fingerprint"].clone();
    let key = (("BB".to_owned(), "api".to_owned()), 1);
    let commit = d.world.model.prs[&key].from_commit.clone();
    let report = d.world.model.reports.iter_mut().find(|r| r.commit == commit && r.key == "security").unwrap();
    report.json["result"] = json!("PASS");
    d.advance(20_000);
    let again = d.call("refresh_view", json!({"show": show, "fingerprint": fp}));
    let view = &again.raw["_meta"]["bb/view"];
    assert_ne!(view["unchanged"], true, "{}", again.raw);
    let results: Vec<&Value> =
        view["pullRequest"]["insights"]["reports"].as_array().unwrap().iter().map(|r| &r["result"]).collect();
    assert_eq!(results, [&json!("FAIL"), &json!("PASS"), &json!("PASS")]);
}

#[test]
fn a_server_without_code_insights_draws_nothing_and_misses_nothing() {
    let mut d = StackHarness::with_views();
    d.world.model.insights_off = true;
    let view = card(&mut d, "BB/api", 1);
    assert_eq!(view["pullRequest"]["insights"], Value::Null);
    assert!(!view["missing"].to_string().contains("Insights"), "{}", view["missing"]);
    let diff = diff(&mut d, 1);
    assert_eq!(diff["files"][0]["annotations"], Value::Null);
    assert!(file(&diff, "src/client.rs").get("annotations").is_none());
}

#[test]
fn a_report_or_annotation_bb_cannot_read_is_said_in_missing_not_dropped_silently() {
    let mut d = StackHarness::with_views();
    d.rewrite_answers(|r, v| {
        if r.path.ends_with("/annotations") {
            v["annotations"].as_array_mut().unwrap().push(json!({"path": 7, "line": "twelve", "severity": "HIGH"}));
        }
    });
    let view = card(&mut d, "BB/api", 1);
    assert!(
        view["missing"].to_string().contains("1 report(s) or annotation(s) Bitbucket sent could not be read"),
        "{}",
        view["missing"]
    );
    assert_eq!(
        view["pullRequest"]["insights"]["annotations"]["total"], 7,
        "Bitbucket's count stays: {}",
        view["pullRequest"]["insights"]
    );
}
