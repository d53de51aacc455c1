//! Code Insights as the views draw them (assets/VIEW_DATA.md, `insights` on the card and `annotations` in the diff):
//! the card's Reports section — each report with its result, its first data fields and its link, failed first, and
//! the annotations counted by severity — and each diff file's annotations, HIGH first then by line.
//!
//! Every text is plain (the page puts it in text nodes), cut where VIEW_DATA.md says with `…`; a link is kept only
//! when it is http(s). Which reports the Code Insights merge check requires is not in Bitbucket's REST API
//! [assumed: no public source names an endpoint for the merge check's settings], so the views carry no "required"
//! mark: the card's merge verdict carries the check's vetoes for a failed or missing required report, in its words.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::reads::insights::{Annotation, InsightsReader, Report};
use crate::text::insights::{cut, field_text, http_url};

/// Data fields drawn per report.
pub const MAX_FIELDS: usize = 6;
/// Characters of a report's details.
pub const DETAILS_CHARS: usize = 500;
/// Characters of an annotation's message.
pub const MESSAGE_CHARS: usize = 2000;
/// Annotations drawn per diff file; the rest are counted in `annotationsMore`.
pub const MAX_PER_FILE: usize = 50;

/// `{HIGH, MEDIUM, LOW}` counts of these annotations (anything else is not counted).
fn by_severity<'a>(list: impl Iterator<Item = &'a Annotation>) -> [u64; 3] {
    let mut counts = [0u64; 3];
    for a in list {
        if let Some(i) = counts.get_mut(usize::from(a.rank())) {
            *i += 1;
        }
    }
    counts
}

/// The card's `insights`: null when the server has no Code Insights or the reports could not be read.
pub fn card(reader: &InsightsReader) -> Value {
    if reader.absent || reader.error.is_some() {
        return Value::Null;
    }
    let Some(all) = &reader.reports else { return Value::Null };
    let notes = reader.annotations.as_ref();
    let mut per_report: BTreeMap<&str, Vec<&Annotation>> = BTreeMap::new();
    for a in notes.into_iter().flatten() {
        per_report.entry(a.report_key.as_deref().unwrap_or("")).or_default().push(a);
    }
    let mut ordered: Vec<&Report> = all.iter().collect();
    ordered.sort_by_key(|r| crate::reads::insights::result_rank(r.result.as_deref()));
    let reports: Vec<Value> = ordered
        .iter()
        .map(|r| {
            let key = r.key.as_deref().unwrap_or("");
            let data: Vec<Value> = r
                .data
                .iter()
                .take(MAX_FIELDS)
                .map(|f| {
                    let (text, url) = field_text(f.kind.as_deref(), &f.value);
                    json!({"title": f.title.as_deref().map(|t| cut(t, 200)), "text": text, "url": url})
                })
                .collect();
            let annotations = notes.map(|_| {
                let [high, medium, low] = by_severity(per_report.get(key).into_iter().flatten().copied());
                json!({"HIGH": high, "MEDIUM": medium, "LOW": low})
            });
            json!({
                "key": key,
                "title": r.title.as_deref().map_or_else(|| key.to_owned(), |t| cut(t, 200)),
                "result": r.result.as_deref().filter(|s| *s == "PASS" || *s == "FAIL"),
                "reporter": r.reporter.as_deref().map(|s| cut(s, 200)),
                "url": http_url(r.link.as_deref()),
                "details": r.details.as_deref().filter(|d| !d.trim().is_empty()).map(|d| cut(d, DETAILS_CHARS)),
                "data": data,
                "dataMore": r.data.len().saturating_sub(MAX_FIELDS),
                "annotations": annotations,
            })
        })
        .collect();
    let annotations = notes.map(|list| {
        let [high, medium, low] = by_severity(list.iter());
        json!({"total": reader.annotations_total.unwrap_or(list.len() as u64), "HIGH": high, "MEDIUM": medium, "LOW": low})
    });
    json!({"reports": reports, "annotations": annotations})
}

/// A diff file's annotations as drawn: HIGH first then by line, at most [`MAX_PER_FILE`]; and how many were left
/// out. `titles` names each report by its key.
pub fn for_file(list: &[Annotation], path: &str, titles: &BTreeMap<String, String>) -> (Value, usize) {
    let mut here: Vec<&Annotation> = list.iter().filter(|a| a.path.as_deref() == Some(path)).collect();
    here.sort_by_key(|a| (a.rank(), a.line.unwrap_or(0)));
    let more = here.len().saturating_sub(MAX_PER_FILE);
    let drawn: Vec<Value> = here
        .iter()
        .take(MAX_PER_FILE)
        .map(|a| {
            let report = a.report_key.as_deref().unwrap_or("");
            json!({
                "line": a.line.unwrap_or(0).max(0),
                "severity": a.severity.as_deref().filter(|s| ["HIGH", "MEDIUM", "LOW"].contains(s)).unwrap_or("LOW"),
                "type": a.kind.as_deref().filter(|s| ["BUG", "CODE_SMELL", "VULNERABILITY"].contains(s)),
                "message": cut(a.message.as_deref().unwrap_or(""), MESSAGE_CHARS),
                "url": http_url(a.link.as_deref()),
                "report": report,
                "reportTitle": titles.get(report).cloned(),
            })
        })
        .collect();
    (Value::Array(drawn), more)
}

/// The line for `missing` when Bitbucket sent reports or annotations bb could not read: left out, never silently.
pub fn unreadable_line(n: usize) -> String {
    format!("Code Insights: {n} report(s) or annotation(s) Bitbucket sent could not be read and are left out.")
}

/// How many annotations each path has.
pub fn counts_by_path(list: &[Annotation]) -> BTreeMap<&str, u64> {
    let mut out = BTreeMap::new();
    for a in list {
        *out.entry(a.path.as_deref().unwrap_or("")).or_default() += 1;
    }
    out
}

/// Each report's title by its key.
pub fn titles(reader: &InsightsReader) -> BTreeMap<String, String> {
    reader.reports.iter().flatten().filter_map(|r| Some((r.key.clone()?, cut(r.title.as_deref()?, 200)))).collect()
}
