//! `get_code_insights` against the stand-in: reports failed first with their data formatted by type, annotations
//! HIGH first with Bitbucket's count, filters passed to Bitbucket, 500 annotations within the answer budget with
//! the cut said, hostile text kept as text, and a server without Code Insights in one sentence.
#![allow(clippy::unwrap_used, clippy::panic)]

mod stack_harness;

use serde_json::json;
use stack_harness::StackHarness;

#[test]
fn reports_are_told_failed_first_with_their_fields_formatted_and_annotations_high_first() {
    let mut d = StackHarness::new();
    let a = d.call("get_code_insights", json!({"project": "BB", "repo": "api", "pr_id": 1}));
    assert!(!a.is_error, "{}", a.text);
    let lines: Vec<&str> = a.text.lines().collect();
    assert!(lines[0].contains("3 report(s) — 1 failed, 1 pending, 1 passed"), "{}", a.text);
    let order: Vec<&str> = lines
        .iter()
        .filter(|l| l.starts_with("FAILED ") || l.starts_with("PENDING ") || l.starts_with("PASSED "))
        .copied()
        .collect();
    assert!(order[0].starts_with("FAILED SonarQube [sonar] by SonarQube 10.4"), "{order:?}");
    assert!(order[1].starts_with("PENDING Security scan"), "{order:?}");
    assert!(!order[1].contains("javascript:"), "a link that is not http(s) is never offered: {}", order[1]);
    assert!(order[2].starts_with("PASSED Unit tests"), "{order:?}");
    assert!(
        a.text.contains("Coverage: 83.2% · New bugs: 2 · Duplications: 1.5% · Analysis took: 1 min 5 s"),
        "{}",
        a.text
    );
    assert!(a.text.contains("Passed: 1,234 · Flaky: No · Runner: linux-x86_64 · Heat: [3,1,4]"), "{}", a.text);
    assert!(a.text.contains("  annotations: 2 high, 1 medium, 2 low"), "{}", a.text);
    let notes: Vec<&str> = lines
        .iter()
        .filter(|l| l.starts_with("HIGH ") || l.starts_with("MEDIUM ") || l.starts_with("LOW "))
        .copied()
        .collect();
    assert_eq!(notes.len(), 6, "{}", a.text);
    assert!(notes[0].starts_with("HIGH BUG src/client.rs:12 [sonar] send_with_retry"), "{notes:?}");
    assert!(notes[5].starts_with("LOW "), "{notes:?}");
    assert!(a.text.contains("<b>Magic number</b>"), "HTML stays text for the model");
    let long = notes.iter().find(|l| l.contains("A long message")).unwrap();
    assert!(long.chars().count() < 500, "a 100 KB message is cut in its line: {} chars", long.chars().count());
    assert!(long.ends_with("… [message cut: 300 of 102409 characters shown]"), "the cut is said: {long}");
    assert!(a.text.contains("Annotations: 6 (Bitbucket's count) — 2 high, 2 medium, 2 low; 6 shown"), "{}", a.text);
}

#[test]
fn filters_go_to_bitbucket_and_the_answer_says_them() {
    let mut d = StackHarness::new();
    let a = d.call(
        "get_code_insights",
        json!({"project": "BB", "repo": "api", "pr_id": 1, "severity": "HIGH", "path": "src/client.rs"}),
    );
    assert!(d.requests.iter().any(|r| r.contains("/annotations") && r.contains("severity=HIGH")), "{:?}", d.requests);
    assert!(a.text.contains("Annotations (severity=HIGH, path=src/client.rs): 1 (Bitbucket's count)"), "{}", a.text);
}

#[test]
fn five_hundred_annotations_stay_within_the_budget_and_the_cut_is_said() {
    let mut d = StackHarness::new();
    let a = d.call("get_code_insights", json!({"project": "BB", "repo": "api", "pr_id": 9, "limit": 1000}));
    assert!(!a.is_error, "{}", a.text);
    assert!(a.text.len() <= 12_000, "{} bytes", a.text.len());
    assert!(
        a.text.contains("Annotations: 501 (Bitbucket's count) — 0 high, 1 medium, 500 low; 501 shown"),
        "{}",
        &a.text[..600]
    );
    assert!(a.text.ends_with("or ask with a larger max_bytes]"), "{}", &a.text[a.text.len() - 300..]);
    let b = d.call("get_code_insights", json!({"project": "BB", "repo": "api", "pr_id": 9}));
    assert!(
        b.text.contains("[451 more annotation(s) not shown — filter by severity, type or path, or raise limit]"),
        "{}",
        b.text
    );
    assert!(b.text.contains("MEDIUM CODE_SMELL src/legacy.rs:2"), "the deleted file's annotation is told: {}", b.text);
}

#[test]
fn a_server_without_code_insights_is_one_sentence() {
    let mut d = StackHarness::new();
    d.world.model.insights_off = true;
    let a = d.call("get_code_insights", json!({"project": "BB", "repo": "api", "pr_id": 1}));
    assert!(!a.is_error);
    assert_eq!(
        a.text,
        "This Bitbucket has no Code Insights (added in 5.15): there are no reports or annotations to read."
    );
}

#[test]
fn a_commit_without_reports_says_so() {
    let mut d = StackHarness::new();
    let a = d.call("get_code_insights", json!({"project": "BB", "repo": "api", "pr_id": 3}));
    assert!(a.text.starts_with("Code Insights of PR #3's source commit"), "{}", a.text);
    assert!(a.text.contains(": no reports.\nAnnotations: none."), "{}", a.text);
}

#[test]
fn escape_and_bidi_characters_of_a_report_reach_the_model_made_visible() {
    let mut d = StackHarness::new();
    d.rewrite_answers(|req, body| {
        if req.path.ends_with("/reports")
            && let Some(reports) = body["values"].as_array_mut()
        {
            for r in reports {
                r["title"] = json!("Scan\u{1b}[2J\u{202e}gnp.exe");
                r["details"] = json!("ok \u{2066}x\u{2069} \u{200e}\u{200f}\u{061c}\u{7}");
                r["data"] = json!([{"title": "Note\u{1b}", "type": "TEXT", "value": "v\u{202a}\u{0}"}]);
            }
        }
        if req.path.ends_with("/annotations")
            && let Some(notes) = body["annotations"].as_array_mut()
        {
            for n in notes {
                n["message"] = json!("fix \u{1b}]8;;https://evil\u{7}this\u{202d}");
            }
        }
    });
    let a = d.call("get_code_insights", json!({"project": "BB", "repo": "api", "pr_id": 1}));
    assert!(!a.is_error, "{}", a.text);
    let raw: Vec<char> = a
        .text
        .chars()
        .filter(|c| {
            (c.is_control() && !matches!(c, '\n' | '\t'))
                || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}' | '\u{061C}')
        })
        .collect();
    assert!(raw.is_empty(), "raw controls reach the model: {raw:?}\n{}", a.text);
    assert!(a.text.contains("Scan⟨U+001B⟩[2J⟨U+202E⟩gnp.exe"), "{}", a.text);
    assert!(a.text.contains("ok ⟨U+2066⟩x⟨U+2069⟩ ⟨U+200E⟩⟨U+200F⟩⟨U+061C⟩⟨U+0007⟩"), "{}", a.text);
    assert!(a.text.contains("Note⟨U+001B⟩: v⟨U+202A⟩⟨U+0000⟩"), "{}", a.text);
    assert!(a.text.contains("fix ⟨U+001B⟩]8;;https://evil⟨U+0007⟩this⟨U+202D⟩"), "{}", a.text);
}
