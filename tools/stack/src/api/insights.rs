//! Code Insights (5.15+): a commit's reports and their annotations, posting them, and the Code Insights merge
//! check's vetoes for required reports.
//!
//! Source: reference "Code Insights" — paths, fields, the 6 data fields and the unpaged `{annotations}` answer from
//! Atlassian's 9.4 OpenAPI [spec]; `totalCount` beside `annotations`, the order of the listings and the merge check's
//! words are [assumed].

use super::{Cx, ReadCx, Reply, find_repo};
use crate::errors;
use crate::exchange::{Request, Response};
use crate::model::{Annotation, Model, PullRequest, Report};
use crate::paging::page_of;
use serde_json::{Value, json};

const SEVERITIES: [&str; 3] = ["LOW", "MEDIUM", "HIGH"];
const TYPES: [&str; 3] = ["VULNERABILITY", "CODE_SMELL", "BUG"];

/// 404 for every insights path while the stand-in plays a server without Code Insights.
fn available(m: &Model) -> Result<(), Response> {
    if m.insights_off {
        return Err(errors::no_such_resource("/rest/insights"));
    }
    Ok(())
}

fn render_report(r: &Report) -> Value {
    let mut v = r.json.clone();
    if let Value::Object(o) = &mut v {
        o.insert("key".into(), Value::String(r.key.clone()));
    }
    v
}

fn render_annotation(a: &Annotation) -> Value {
    let mut v = a.json.clone();
    if let Value::Object(o) = &mut v {
        o.insert("reportKey".into(), Value::String(a.report.clone()));
    }
    v
}

/// The commit's reports in `repo`, in the order they were posted. [assumed: order]
fn reports_of<'m>(m: &'m Model, repo: &(String, String), commit: &str) -> Vec<&'m Report> {
    m.reports.iter().filter(|r| &r.repo == repo && r.commit == commit).collect()
}

/// `GET /rest/insights/latest/projects/{key}/repos/{slug}/commits/{commit}/reports` — a page of reports. [spec]
pub fn reports(cx: &ReadCx, req: &Request, key: &str, slug: &str, commit: &str) -> Reply {
    available(cx.m)?;
    let repo = find_repo(cx.m, key, slug)?.key.clone();
    let all = reports_of(cx.m, &repo, commit).into_iter().map(render_report).collect();
    Ok(Response::json(200, &page_of(req, all)))
}

fn no_report(key: &str) -> Response {
    errors::error(
        404,
        Some("com.atlassian.bitbucket.codeinsights.report.NoSuchReportException"),
        &format!("No report with key {key} exists for this commit."),
    )
}

/// `GET …/commits/{commit}/reports/{report}` — one report. [spec]
pub fn report(cx: &ReadCx, key: &str, slug: &str, commit: &str, report: &str) -> Reply {
    available(cx.m)?;
    let repo = find_repo(cx.m, key, slug)?.key.clone();
    let found =
        reports_of(cx.m, &repo, commit).into_iter().find(|r| r.key == report).ok_or_else(|| no_report(report))?;
    Ok(Response::json(200, &render_report(found)))
}

/// `PUT …/commits/{commit}/reports/{report}` `{title, data[≤6], result?, reporter?, link?, details?, …}` — creates or
/// replaces the report (its annotations stay). [spec: RestSetInsightReportRequest requires `title` and `data`]
pub fn put_report(cx: &mut Cx, req: &Request, key: &str, slug: &str, commit: &str, report: &str) -> Reply {
    available(cx.m)?;
    let repo = find_repo(cx.m, key, slug)?.key.clone();
    let mut body = req.json().map_err(|e| errors::bad_request(&e))?;
    if body.get("title").and_then(Value::as_str).is_none_or(str::is_empty) {
        return Err(errors::field_error("title", "A report needs a title."));
    }
    if body.get("data").and_then(Value::as_array).is_some_and(|d| d.len() > 6) {
        return Err(errors::field_error("data", "A report holds at most 6 data fields."));
    }
    if let Some(result) = body.get("result").and_then(Value::as_str)
        && result != "PASS"
        && result != "FAIL"
    {
        return Err(errors::field_error("result", "result must be PASS or FAIL."));
    }
    let now = cx.m.tick();
    if let Value::Object(o) = &mut body {
        o.remove("key");
        o.entry("createdDate").or_insert(Value::from(now));
        o.entry("data").or_insert(json!([]));
    }
    let r = Report { repo, commit: commit.to_owned(), key: report.to_owned(), json: body };
    let rendered = render_report(&r);
    match cx.m.reports.iter_mut().find(|x| x.repo == r.repo && x.commit == r.commit && x.key == r.key) {
        Some(x) => *x = r,
        None => cx.m.reports.push(r),
    }
    Ok(Response::json(200, &rendered))
}

/// The annotations answer: `{annotations, totalCount}`. [spec: `annotations`; assumed: `totalCount`]
fn annotations_answer(list: Vec<Value>) -> Response {
    let total = list.len();
    Response::json(200, &json!({ "annotations": list, "totalCount": total }))
}

/// `GET …/commits/{commit}/reports/{report}/annotations` — every annotation of the report, unpaged. [spec]
pub fn report_annotations(cx: &ReadCx, key: &str, slug: &str, commit: &str, report: &str) -> Reply {
    available(cx.m)?;
    let repo = find_repo(cx.m, key, slug)?.key.clone();
    if !reports_of(cx.m, &repo, commit).iter().any(|r| r.key == report) {
        return Err(no_report(report));
    }
    let list =
        cx.m.annotations
            .iter()
            .filter(|a| a.repo == repo && a.commit == commit && a.report == report)
            .map(render_annotation)
            .collect();
    Ok(annotations_answer(list))
}

/// `GET …/commits/{commit}/annotations?key=&path=&severity=&type=&externalId=` — the commit's annotations of
/// every report, filtered (each parameter may repeat: any of its values matches). [spec: the parameters]
pub fn commit_annotations(cx: &ReadCx, req: &Request, key: &str, slug: &str, commit: &str) -> Reply {
    available(cx.m)?;
    let repo = find_repo(cx.m, key, slug)?.key.clone();
    let wanted = |name: &str| -> Vec<String> { req.params(name).into_iter().map(str::to_owned).collect() };
    let (keys, paths, severities, types, ids) =
        (wanted("key"), wanted("path"), wanted("severity"), wanted("type"), wanted("externalId"));
    let field = |a: &Annotation, f: &str| a.json.get(f).and_then(Value::as_str).unwrap_or("").to_owned();
    let fits = |list: &[String], value: String| list.is_empty() || list.iter().any(|w| w.eq_ignore_ascii_case(&value));
    let list =
        cx.m.annotations
            .iter()
            .filter(|a| a.repo == repo && a.commit == commit)
            .filter(|a| keys.is_empty() || keys.contains(&a.report))
            .filter(|a| paths.is_empty() || paths.contains(&field(a, "path")))
            .filter(|a| fits(&severities, field(a, "severity")) && fits(&types, field(a, "type")))
            .filter(|a| ids.is_empty() || ids.contains(&field(a, "externalId")))
            .map(render_annotation)
            .collect();
    Ok(annotations_answer(list))
}

/// `POST …/commits/{commit}/reports/{report}/annotations` `{annotations: [{path, line, message, severity, type?,
/// link?, externalId?}]}` → 204. At most 1000 annotations a report. [spec: the body; doc: the 1000 cap, assumed]
pub fn post_annotations(cx: &mut Cx, req: &Request, key: &str, slug: &str, commit: &str, report: &str) -> Reply {
    available(cx.m)?;
    let repo = find_repo(cx.m, key, slug)?.key.clone();
    if !reports_of(cx.m, &repo, commit).iter().any(|r| r.key == report) {
        return Err(no_report(report));
    }
    let body = req.json().map_err(|e| errors::bad_request(&e))?;
    let Some(list) = body.get("annotations").and_then(Value::as_array) else {
        return Err(errors::field_error("annotations", "annotations must be a list."));
    };
    for a in list {
        let text = |f: &str| a.get(f).and_then(Value::as_str).unwrap_or("");
        if text("message").is_empty() {
            return Err(errors::field_error("message", "An annotation needs a message."));
        }
        if !SEVERITIES.contains(&text("severity")) {
            return Err(errors::field_error("severity", "severity must be LOW, MEDIUM or HIGH."));
        }
        if a.get("type").is_some() && !TYPES.contains(&text("type")) {
            return Err(errors::field_error("type", "type must be VULNERABILITY, CODE_SMELL or BUG."));
        }
    }
    let existing = cx.m.annotations.iter().filter(|a| a.repo == repo && a.commit == commit && a.report == report);
    if existing.count() + list.len() > 1000 {
        return Err(errors::field_error("annotations", "A report can have at most 1000 annotations."));
    }
    for a in list {
        let mut json = a.clone();
        if let Value::Object(o) = &mut json {
            o.remove("reportKey");
        }
        cx.m.annotations.push(Annotation {
            repo: repo.clone(),
            commit: commit.to_owned(),
            report: report.to_owned(),
            json,
        });
    }
    Ok(Response::empty(204))
}

/// The Code Insights merge check's vetoes: one for each report the target repository requires that failed or was
/// not published on the source commit, as `(summary, detail)`. [assumed: the words; Atlassian publishes none]
pub fn vetoes(m: &Model, pr: &PullRequest) -> Vec<Value> {
    let Some(repo) = m.repos.get(&pr.to.repo) else { return Vec::new() };
    let published = |key: &str| {
        m.reports
            .iter()
            .filter(|r| (r.repo == pr.to.repo || r.repo == pr.from.repo) && r.commit == pr.from_commit)
            .find(|r| r.key == key)
    };
    let mut out = Vec::new();
    for key in &repo.required_reports {
        let detail = match published(key) {
            None => format!("The required report \"{key}\" has not been published for the latest commit."),
            Some(r) if r.json.get("result").and_then(Value::as_str) == Some("PASS") => continue,
            Some(r) => {
                let title = r.json.get("title").and_then(Value::as_str).unwrap_or(key);
                match r.json.get("result").and_then(Value::as_str) {
                    Some("FAIL") => format!("The required report \"{title}\" has failed."),
                    _ => format!("The required report \"{title}\" has no result yet."),
                }
            }
        };
        out.push(json!({ "summaryMessage": "Code Insights requirements not met", "detailedMessage": detail }));
    }
    out
}
