//! Code Insights (Bitbucket 5.15+) for a commit, written once for `get_code_insights`, the card and the diff view:
//! the commit's reports and the annotations of all its reports.
//!
//! Requests, in parallel once the commit is known: every page of the commit's reports
//! `GET /rest/insights/latest/projects/{key}/repos/{slug}/commits/{commit}/reports?start&limit` (up to
//! [`MAX_REPORT_PAGES`]) and, when asked for, the commit's annotations
//! `GET …/commits/{commit}/annotations?severity&type&path`, which Bitbucket answers unpaged as `{annotations}`.
//! A 404 on the reports path is a server without Code Insights (before 5.15): nothing is drawn and the tool says so
//! in one sentence. [reference "Code Insights": spec; the 404 reading is assumed, and so is `totalCount`]

use serde::Deserialize;
use serde_json::Value;

use crate::bitbucket::{RawPage, segment};
use crate::errors::{self, BitbucketError, Subject};
use crate::fetch::{FetchOutcome, FetchRequest};

/// Reports read per page.
pub const REPORTS_LIMIT: u64 = 100;
/// Pages of reports read at most; a commit with more is said to have more.
pub const MAX_REPORT_PAGES: usize = 2;

/// A Code Insights report. [reference "Code Insights": spec RestInsightReport]
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", default)]
pub struct Report {
    /// Unique per commit.
    pub key: Option<String>,
    /// What it is called on the pull request page.
    pub title: Option<String>,
    /// `PASS`, `FAIL`, or absent while the scanner has not decided.
    pub result: Option<String>,
    /// The tool that made it.
    pub reporter: Option<String>,
    /// A link back to the tool.
    pub link: Option<String>,
    /// Free text.
    pub details: Option<String>,
    /// Up to 6 typed fields.
    pub data: Vec<DataField>,
    /// Epoch ms.
    pub created_date: Option<i64>,
}

/// One data field of a report: a title and a typed value. [reference "Code Insights": spec RestInsightReportData]
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(default)]
pub struct DataField {
    /// What the value is.
    pub title: Option<String>,
    /// BOOLEAN, DATE, DURATION, LINK, NUMBER, PERCENTAGE or TEXT; absent: guessed from the value.
    #[serde(rename = "type")]
    pub kind: Option<String>,
    /// The value: a boolean, a number, a string or (LINK) `{linktext, href}`.
    pub value: Value,
}

/// An annotation of a report. [reference "Code Insights": spec RestInsightAnnotation]
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", default)]
pub struct Annotation {
    /// The report it belongs to.
    pub report_key: Option<String>,
    /// The file, from the repository's root.
    pub path: Option<String>,
    /// The line of the file at the commit; 0 or absent: the file as a whole.
    pub line: Option<i64>,
    /// What is wrong.
    pub message: Option<String>,
    /// LOW, MEDIUM or HIGH.
    pub severity: Option<String>,
    /// BUG, CODE_SMELL or VULNERABILITY.
    #[serde(rename = "type")]
    pub kind: Option<String>,
    /// A link to more about it.
    pub link: Option<String>,
    /// The reporter's own id for it.
    pub external_id: Option<String>,
}

impl Annotation {
    /// HIGH first: 0 for HIGH, 1 MEDIUM, 2 LOW, 3 anything else.
    pub fn rank(&self) -> u8 {
        severity_rank(self.severity.as_deref())
    }
}

/// HIGH first: 0 for HIGH, 1 MEDIUM, 2 LOW, 3 anything else.
pub fn severity_rank(severity: Option<&str>) -> u8 {
    match severity {
        Some("HIGH") => 0,
        Some("MEDIUM") => 1,
        Some("LOW") => 2,
        _ => 3,
    }
}

/// Failed first, then without a result (pending), then passed: the order the card and the tool list reports in.
pub fn result_rank(result: Option<&str>) -> u8 {
    match result {
        Some("FAIL") => 0,
        Some("PASS") => 2,
        _ => 1,
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct AnnotationsAnswer {
    annotations: Vec<Value>,
    total_count: Option<u64>,
}

/// Filters of the commit's annotations, passed to Bitbucket. [reference "Code Insights": spec, the query parameters]
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filter {
    /// `severity`.
    pub severity: Option<String>,
    /// `type`.
    pub kind: Option<String>,
    /// `path`.
    pub path: Option<String>,
}

fn base(project: &str, repo: &str, commit: &str) -> String {
    format!("/rest/insights/latest/projects/{}/repos/{}/commits/{}", segment(project), segment(repo), segment(commit))
}

/// A page of the commit's reports.
pub fn reports_request(project: &str, repo: &str, commit: &str, start: u64) -> FetchRequest {
    FetchRequest::get(
        format!("{}/reports", base(project, repo, commit)),
        vec![("start".into(), start.to_string()), ("limit".into(), REPORTS_LIMIT.to_string())],
    )
}

/// The commit's annotations of every report, filtered.
pub fn annotations_request(project: &str, repo: &str, commit: &str, filter: &Filter) -> FetchRequest {
    let mut query = Vec::new();
    for (name, value) in [("severity", &filter.severity), ("type", &filter.kind), ("path", &filter.path)] {
        if let Some(v) = value {
            query.push((name.to_owned(), v.clone()));
        }
    }
    FetchRequest::get(format!("{}/annotations", base(project, repo, commit)), query)
}

/// Names the reads of an [`InsightsReader`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InsightsRead {
    /// A page of reports.
    Reports,
    /// The commit's annotations.
    Annotations,
}

/// Reads a commit's reports (every page up to a cap) and, when asked, its annotations.
#[derive(Debug)]
pub struct InsightsReader {
    project: String,
    repo: String,
    commit: String,
    pages: usize,
    /// The reports read, in Bitbucket's order; `None` before the first page or when it could not be read.
    pub reports: Option<Vec<Report>>,
    /// More reports exist than were read.
    pub reports_more: bool,
    /// Reports or annotations Bitbucket sent that bb could not read.
    pub unreadable: usize,
    /// The annotations read; `None` when not asked for, not read yet or not readable.
    pub annotations: Option<Vec<Annotation>>,
    /// Bitbucket's count of the annotations, when it gave one; else the number it sent.
    pub annotations_total: Option<u64>,
    /// The server has no Code Insights (404 on the reports path).
    pub absent: bool,
    /// Why the reports could not be read, in one sentence.
    pub error: Option<BitbucketError>,
    /// Why the annotations could not be read, in one sentence.
    pub annotations_error: Option<BitbucketError>,
}

impl InsightsReader {
    /// A reader of `commit`'s insights in `project`/`repo`; with `annotations`, the commit's annotations filtered
    /// by it are read too. Returns the first reads.
    pub fn new(
        (project, repo, commit): (&str, &str, &str),
        annotations: Option<&Filter>,
    ) -> (InsightsReader, Vec<(InsightsRead, FetchRequest)>) {
        let mut first = vec![(InsightsRead::Reports, reports_request(project, repo, commit, 0))];
        if let Some(filter) = annotations {
            first.push((InsightsRead::Annotations, annotations_request(project, repo, commit, filter)));
        }
        let reader = InsightsReader {
            project: project.to_owned(),
            repo: repo.to_owned(),
            commit: commit.to_owned(),
            pages: 0,
            reports: None,
            reports_more: false,
            unreadable: 0,
            annotations: None,
            annotations_total: None,
            absent: false,
            error: None,
            annotations_error: None,
        };
        (reader, first)
    }

    /// Takes the outcome of `read`; may ask for the next page of reports through `more`.
    pub fn on(&mut self, read: InsightsRead, outcome: &FetchOutcome, more: &mut dyn FnMut(InsightsRead, FetchRequest)) {
        let about = Subject { project: &self.project, repo: &self.repo, pr: None };
        let missing = matches!(outcome, FetchOutcome::Response(r) if r.status == 404);
        match read {
            InsightsRead::Reports if missing => self.absent = true,
            InsightsRead::Reports => match errors::json::<RawPage>(outcome, about, None) {
                Ok(raw) => {
                    let page = raw.decode::<Report>();
                    self.pages += 1;
                    self.unreadable += page.unreadable;
                    self.reports.get_or_insert_with(Vec::new).extend(page.values);
                    match page.next {
                        Some(next) if self.pages < MAX_REPORT_PAGES => {
                            more(InsightsRead::Reports, reports_request(&self.project, &self.repo, &self.commit, next))
                        }
                        Some(_) => self.reports_more = true,
                        None => {}
                    }
                }
                Err(e) => self.error = Some(e),
            },
            // Without Code Insights the reports' 404 says so; the annotations' adds nothing.
            InsightsRead::Annotations if missing => self.absent = true,
            InsightsRead::Annotations => match errors::json::<AnnotationsAnswer>(outcome, about, None) {
                Ok(a) => {
                    let sent = a.annotations.len();
                    let list: Vec<Annotation> =
                        a.annotations.into_iter().filter_map(|v| serde_json::from_value(v).ok()).collect();
                    self.unreadable += sent - list.len();
                    self.annotations_total = Some(a.total_count.unwrap_or(sent as u64).max(sent as u64));
                    self.annotations = Some(list);
                }
                Err(e) => self.annotations_error = Some(e),
            },
        }
    }

    /// The commit whose insights it reads.
    pub fn commit(&self) -> &str {
        &self.commit
    }

    /// The reports in the order bb shows them: failed, pending, passed; Bitbucket's order within each.
    pub fn ordered(&self) -> Vec<&Report> {
        let mut list: Vec<&Report> = self.reports.iter().flatten().collect();
        list.sort_by_key(|r| result_rank(r.result.as_deref()));
        list
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn reader() -> InsightsReader {
        InsightsReader::new(("BB", "api", "abc"), Some(&Filter::default())).0
    }

    proptest! {
        /// Whatever Bitbucket sends on either read, the reader keeps a sentence or what it could read, never panics.
        #[test]
        fn any_answer_is_read_or_said_never_a_panic(status in prop::sample::select(vec![200u16, 404, 500]),
                                                    body in prop::collection::vec(any::<u8>(), 0..200),
                                                    reports in any::<bool>()) {
            let mut r = reader();
            let read = if reports { InsightsRead::Reports } else { InsightsRead::Annotations };
            r.on(read, &FetchOutcome::response(status, body), &mut |_, _| {});
            let said = r.absent || r.error.is_some() || r.annotations_error.is_some();
            prop_assert!(said || r.reports.is_some() || r.annotations.is_some());
        }
    }

    #[test]
    fn a_value_of_the_wrong_shape_is_counted_and_the_rest_kept() {
        let mut r = reader();
        let body =
            br#"{"annotations":[{"path":"a","line":3,"severity":"HIGH","message":"m"},{"line":"x"}],"totalCount":2}"#;
        r.on(InsightsRead::Annotations, &FetchOutcome::response(200, body.to_vec()), &mut |_, _| {});
        assert_eq!(r.annotations.as_ref().map(Vec::len), Some(1));
        assert_eq!((r.unreadable, r.annotations_total), (1, Some(2)));
    }

    #[test]
    fn reports_are_ordered_failed_pending_passed_keeping_bitbuckets_order_within() {
        let mut r = reader();
        let body = br#"{"values":[{"key":"a","result":"PASS"},{"key":"b"},{"key":"c","result":"FAIL"},{"key":"d","result":"PASS"}],"isLastPage":true}"#;
        r.on(InsightsRead::Reports, &FetchOutcome::response(200, body.to_vec()), &mut |_, _| {});
        let keys: Vec<_> = r.ordered().iter().filter_map(|x| x.key.as_deref()).collect();
        assert_eq!(keys, ["c", "b", "a", "d"]);
    }

    #[test]
    fn a_second_page_of_reports_is_asked_for_and_past_the_cap_said() {
        let mut r = reader();
        let mut asked = Vec::new();
        let page =
            |next: u64| format!(r#"{{"values":[{{"key":"k{next}"}}],"isLastPage":false,"nextPageStart":{next}}}"#);
        r.on(InsightsRead::Reports, &FetchOutcome::response(200, page(100)), &mut |_, q| asked.push(q));
        assert_eq!(asked.len(), 1);
        r.on(InsightsRead::Reports, &FetchOutcome::response(200, page(200)), &mut |_, q| asked.push(q));
        assert_eq!(asked.len(), 1, "no third page");
        assert!(r.reports_more);
    }
}
