//! Code Insights in the stand-in: the seeded reports and annotations, their filters, posting, the merge check's
//! vetoes for required reports, and a server without Code Insights.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use bb_stack::exchange::{Request, Response};
use bb_stack::routes;
use bb_stack::world::World;
use serde_json::{Value, json};

fn call(world: &mut World, req: Request) -> Response {
    let token = world.default_token();
    routes::serve(world, &req.with_header("Authorization", &format!("Bearer {token}")))
}

fn get(world: &mut World, path: &str) -> Value {
    let r = call(world, Request::new("GET", path));
    assert_eq!(r.status, 200, "{path}: {}", String::from_utf8_lossy(&r.body));
    r.body_json()
}

fn source_commit(world: &mut World, repo: &str, id: u64) -> String {
    let (key, slug) = repo.split_once('/').unwrap();
    let pr = get(world, &format!("/rest/api/latest/projects/{key}/repos/{slug}/pull-requests/{id}"));
    pr["fromRef"]["latestCommit"].as_str().unwrap().to_owned()
}

fn insights(world: &mut World, repo: &str, id: u64) -> String {
    let (key, slug) = repo.split_once('/').unwrap();
    format!("/rest/insights/latest/projects/{key}/repos/{slug}/commits/{}", source_commit(world, repo, id))
}

#[test]
fn a_pull_requests_source_commit_has_a_failing_a_passing_and_a_pending_report_in_pages() {
    let mut w = World::from_default_seed().unwrap();
    let base = insights(&mut w, "BB/api", 1);
    let page = get(&mut w, &format!("{base}/reports?limit=2"));
    assert_eq!(page["isLastPage"], false);
    let keys: Vec<_> = page["values"].as_array().unwrap().iter().map(|r| r["key"].as_str().unwrap()).collect();
    assert_eq!(keys, ["sonar", "tests"]);
    let rest = get(&mut w, &format!("{base}/reports?start=2"));
    assert_eq!(rest["values"][0]["key"], "security");
    assert!(rest["values"][0].get("result").is_none_or(Value::is_null), "pending: no result");
    let sonar = get(&mut w, &format!("{base}/reports/sonar"));
    assert_eq!(sonar["result"], "FAIL");
    assert_eq!(sonar["data"].as_array().unwrap().len(), 6);
}

#[test]
fn annotations_are_read_by_report_and_by_commit_with_filters() {
    let mut w = World::from_default_seed().unwrap();
    let base = insights(&mut w, "BB/api", 1);
    let sonar = get(&mut w, &format!("{base}/reports/sonar/annotations"));
    assert_eq!(sonar["annotations"].as_array().unwrap().len(), 5);
    assert!(sonar["annotations"].as_array().unwrap().iter().all(|a| a["reportKey"] == "sonar"));
    let all = get(&mut w, &format!("{base}/annotations"));
    assert_eq!(all["totalCount"], 6);
    let high = get(&mut w, &format!("{base}/annotations?severity=HIGH&path=src/client.rs"));
    assert_eq!(high["annotations"].as_array().unwrap().len(), 1);
    assert_eq!(high["annotations"][0]["line"], 12);
    let long = all["annotations"].as_array().unwrap().iter().find(|a| a["externalId"] == "s-5").unwrap();
    assert!(long["message"].as_str().unwrap().len() >= 100 * 1024, "a 100 KB message");
    let nine = insights(&mut w, "BB/api", 9);
    let many = get(&mut w, &format!("{nine}/annotations?path=vendor/bindings.rs"));
    assert_eq!(many["annotations"].as_array().unwrap().len(), 500);
}

#[test]
fn a_report_and_its_annotations_can_be_posted_and_replace_the_old_one() {
    let mut w = World::from_default_seed().unwrap();
    let base = insights(&mut w, "BB/api", 1);
    let put = Request::new("PUT", &format!("{base}/reports/security"))
        .with_json(&json!({"title": "Security scan", "result": "PASS", "data": []}));
    assert_eq!(call(&mut w, put).status, 200);
    assert_eq!(get(&mut w, &format!("{base}/reports/security"))["result"], "PASS");
    let post = Request::new("POST", &format!("{base}/reports/security/annotations"))
        .with_json(&json!({"annotations": [{"path": "src/retry.rs", "line": 2, "message": "m", "severity": "LOW"}]}));
    assert_eq!(call(&mut w, post).status, 204);
    assert_eq!(
        get(&mut w, &format!("{base}/reports/security/annotations"))["annotations"].as_array().unwrap().len(),
        2
    );
    let bad = Request::new("PUT", &format!("{base}/reports/x"))
        .with_json(&json!({"title": "X", "data": [{}, {}, {}, {}, {}, {}, {}]}));
    assert_eq!(call(&mut w, bad).status, 400);
}

#[test]
fn the_merge_check_vetoes_a_failed_and_a_missing_required_report() {
    let mut w = World::from_default_seed().unwrap();
    let check = get(&mut w, "/rest/api/latest/projects/OPS/repos/infra/pull-requests/1/merge");
    let details: Vec<&str> = check["vetoes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|v| v["summaryMessage"] == "Code Insights requirements not met")
        .map(|v| v["detailedMessage"].as_str().unwrap())
        .collect();
    assert_eq!(
        details,
        [
            "The required report \"SonarQube\" has failed.",
            "The required report \"security\" has not been published for the latest commit."
        ]
    );
    let base = insights(&mut w, "OPS/infra", 2);
    let check = get(&mut w, "/rest/api/latest/projects/OPS/repos/infra/pull-requests/2/merge");
    assert!(!check.to_string().contains("Code Insights"), "both required reports passed: {check}");
    let pending = Request::new("PUT", &format!("{base}/reports/security"))
        .with_json(&json!({"title": "Security scan", "data": []}));
    assert_eq!(call(&mut w, pending).status, 200);
    let check = get(&mut w, "/rest/api/latest/projects/OPS/repos/infra/pull-requests/2/merge");
    assert!(check.to_string().contains("has no result yet"), "{check}");
    let put = Request::new("PUT", &format!("{base}/reports/security"))
        .with_json(&json!({"title": "Security scan", "result": "PASS", "data": []}));
    assert_eq!(call(&mut w, put).status, 200);
    let check = get(&mut w, "/rest/api/latest/projects/OPS/repos/infra/pull-requests/2/merge");
    assert!(!check.to_string().contains("Code Insights"), "{check}");
}

#[test]
fn a_server_without_code_insights_answers_404_on_every_insights_path() {
    let mut w = World::from_default_seed().unwrap();
    let base = insights(&mut w, "BB/api", 1);
    w.model.insights_off = true;
    for path in ["reports", "reports/sonar", "reports/sonar/annotations", "annotations"] {
        assert_eq!(call(&mut w, Request::new("GET", &format!("{base}/{path}"))).status, 404, "{path}");
    }
}
