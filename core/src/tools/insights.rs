//! `get_code_insights`: a pull request's (or a commit's) Code Insights — its reports with their results and data
//! fields formatted by type, and its annotations, filtered by severity, type or path, HIGH first, within an
//! answer budget whose cut is said.
//!
//! Requests: the pull request, for its source commit (1, skipped for `commit_id`); then, in parallel, every page of
//! the commit's reports and its annotations (2+). A server without Code Insights (404) is one sentence.
//! [reference "Code Insights": spec; see `reads::insights`]

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::object;
use crate::args::{number, string};
use crate::bitbucket::model::PullRequest;
use crate::errors::{self, Subject};
use crate::fetch::FetchOutcome;
use crate::plan::{Fetches, Plan, Step, ToolResult};
use crate::reads::insights::{Annotation, Filter, InsightsRead, InsightsReader, Report};
use crate::reads::pull_request;
use crate::text::insights::{field_line, http_url, result_word};
use crate::text::{cap, one_line, short, short_commit};
use crate::tool::{Access, Annotations, Asks, Call, Role, Scoped, ToolSpec, Toolset};

/// `get_code_insights`, for the catalogue: reads only.
pub const SPEC: ToolSpec = ToolSpec {
    name: "get_code_insights",
    title: "Get Code Insights",
    description: "Code Insights reports and annotations (HIGH first) of a PR's source commit.",
    input_schema: schema,
    access: Access::Read,
    asks: Asks::Never,
    scope: Scoped::Repository,
    role: Role::Data(Toolset::Builds),
    annotations: Annotations::READ,
    start,
};

/// The default answer budget in bytes.
const DEFAULT_BUDGET: u64 = 12_000;
/// Characters of an annotation's message in a line.
const MESSAGE_CHARS: usize = 300;
/// Characters of a report's details in a line.
const DETAILS_CHARS: usize = 300;
/// What a server without Code Insights answers.
pub const ABSENT: &str =
    "This Bitbucket has no Code Insights (added in 5.15): there are no reports or annotations to read.";

fn schema() -> Value {
    object(
        json!({"project": super::project(), "repo": super::repo(), "pr_id": super::pr_id(),
               "commit_id": {"type": "string", "minLength": 4, "description": "Or a commit"},
               "severity": {"type": "string", "enum": ["HIGH", "MEDIUM", "LOW"], "description": "Filter"},
               "type": {"type": "string", "enum": ["BUG", "CODE_SMELL", "VULNERABILITY"], "description": "Filter"},
               "path": {"type": "string", "description": "Filter: a file"},
               "limit": super::limit(50, 1000),
               "max_bytes": {"type": "integer", "minimum": 2000, "maximum": 100000, "default": DEFAULT_BUDGET, "description": "Answer budget"}}),
        &["project", "repo"],
    )
}

/// The reads of `get_code_insights`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Read {
    /// The pull request, for its source commit.
    PullRequest,
    /// The commit's insights.
    Insights(InsightsRead),
}

fn start(args: &Map<String, Value>, _: &Call<'_>) -> Step {
    let (project, repo) = crate::args::repository(args);
    let filter = Filter {
        severity: string(args, "severity").map(str::to_ascii_uppercase),
        kind: string(args, "type").map(str::to_ascii_uppercase),
        path: string(args, "path").map(str::to_owned),
    };
    let mut plan = Insights {
        project: project.clone(),
        repo: repo.clone(),
        id: number(args, "pr_id"),
        commit: None,
        filter,
        limit: number(args, "limit").unwrap_or(50).max(1) as usize,
        budget: number(args, "max_bytes").unwrap_or(DEFAULT_BUDGET).clamp(2000, 100_000) as usize,
        reader: None,
    };
    match (plan.id, string(args, "commit_id")) {
        (Some(id), None) => Step::wait(plan, vec![(Read::PullRequest, pull_request::request(&project, &repo, id))]),
        (None, Some(c)) => {
            let first = plan.read(c);
            Step::wait(plan, first)
        }
        _ => Step::Done(ToolResult::error("Give project, repo and either pr_id or commit_id.")),
    }
}

#[derive(Debug)]
struct Insights {
    project: String,
    repo: String,
    id: Option<u64>,
    commit: Option<String>,
    filter: Filter,
    limit: usize,
    budget: usize,
    reader: Option<InsightsReader>,
}

impl Insights {
    fn read(&mut self, commit: &str) -> Vec<(Read, crate::fetch::FetchRequest)> {
        self.commit = Some(commit.to_owned());
        let (reader, first) = InsightsReader::new((&self.project, &self.repo, commit), Some(&self.filter));
        self.reader = Some(reader);
        first.into_iter().map(|(r, q)| (Read::Insights(r), q)).collect()
    }
}

impl Plan for Insights {
    type Read = Read;

    fn on(&mut self, read: Read, outcome: FetchOutcome, f: &mut Fetches<'_, '_, Read>) -> Option<ToolResult> {
        let about = Subject { project: &self.project, repo: &self.repo, pr: self.id };
        match read {
            Read::PullRequest => match errors::json::<PullRequest>(&outcome, about, None) {
                Ok(pr) => match pr.from_ref.as_ref().and_then(|r| r.latest_commit.clone()) {
                    Some(c) => {
                        for (r, q) in self.read(&c) {
                            f.fetch(r, q);
                        }
                    }
                    None => return Some(ToolResult::error("The pull request names no source commit.")),
                },
                Err(e) => return Some(ToolResult::error(e)),
            },
            Read::Insights(r) => {
                let reader = self.reader.as_mut()?;
                reader.on(r, &outcome, &mut |r, q| f.fetch(Read::Insights(r), q));
            }
        }
        if f.waiting() > 0 {
            return None;
        }
        let reader = self.reader.as_ref()?;
        if reader.absent {
            return Some(ToolResult::text(ABSENT));
        }
        if let Some(e) = &reader.error {
            return Some(ToolResult::error(format!("Code Insights reports: not read — {e}")));
        }
        Some(ToolResult::text(self.answer(reader)))
    }
}

impl Insights {
    fn answer(&self, reader: &InsightsReader) -> String {
        let reports = reader.ordered();
        let whose = match self.id {
            Some(id) => format!("PR #{id}'s source commit {}", short_commit(self.commit.as_deref())),
            None => format!("commit {}", short_commit(self.commit.as_deref())),
        };
        let mut out = Vec::new();
        if reports.is_empty() {
            out.push(format!("Code Insights of {whose}: no reports."));
        } else {
            let count = |w: &str| reports.iter().filter(|r| result_word(r.result.as_deref()) == w).count();
            out.push(format!(
                "Code Insights of {whose}: {} report(s) — {} failed, {} pending, {} passed{}.",
                reports.len(),
                count("failed"),
                count("pending"),
                count("passed"),
                if reader.reports_more { "; more exist than were read" } else { "" }
            ));
        }
        let per_report = reader.annotations.as_ref().filter(|_| self.filter == Filter::default()).map(|list| {
            let mut by: BTreeMap<&str, [usize; 3]> = BTreeMap::new();
            // A severity Bitbucket does not document is listed but counted under none.
            for a in list {
                let counts = by.entry(a.report_key.as_deref().unwrap_or("")).or_default();
                if let Some(n) = counts.get_mut(usize::from(a.rank())) {
                    *n += 1;
                }
            }
            by
        });
        for r in &reports {
            out.push(report_line(r));
            if !r.data.is_empty() {
                let fields: Vec<String> =
                    r.data.iter().map(|d| field_line(d.title.as_deref(), d.kind.as_deref(), &d.value)).collect();
                out.push(format!("  {}", fields.join(" · ")));
            }
            if let Some(counts) = per_report.as_ref().and_then(|m| m.get(r.key.as_deref().unwrap_or(""))) {
                out.push(format!("  annotations: {}", severity_words(*counts)));
            }
        }
        out.extend(self.annotation_lines(reader));
        if reader.unreadable > 0 {
            out.push(format!("{} value(s) Bitbucket sent could not be read and are left out.", reader.unreadable));
        }
        self.within_budget(out)
    }

    fn annotation_lines(&self, reader: &InsightsReader) -> Vec<String> {
        let list = match (&reader.annotations, &reader.annotations_error) {
            (_, Some(e)) => return vec![format!("Annotations: not read — {e}")],
            (Some(list), None) => list,
            (None, None) => return Vec::new(),
        };
        let total = reader.annotations_total.unwrap_or(list.len() as u64);
        let filters: Vec<String> =
            [("severity", &self.filter.severity), ("type", &self.filter.kind), ("path", &self.filter.path)]
                .iter()
                .filter_map(|(n, v)| v.as_ref().map(|v| format!("{n}={}", one_line(v))))
                .collect();
        let filtered = if filters.is_empty() { String::new() } else { format!(" ({})", filters.join(", ")) };
        if list.is_empty() {
            return vec![format!("Annotations{filtered}: none.")];
        }
        let mut counts = [0usize; 3];
        for a in list {
            if let Some(n) = counts.get_mut(usize::from(a.rank())) {
                *n += 1;
            }
        }
        let mut sorted: Vec<&Annotation> = list.iter().collect();
        sorted.sort_by(|a, b| {
            (a.rank(), a.path.as_deref(), a.line.unwrap_or(0)).cmp(&(b.rank(), b.path.as_deref(), b.line.unwrap_or(0)))
        });
        let shown = sorted.len().min(self.limit);
        let mut out = vec![format!(
            "Annotations{filtered}: {total} (Bitbucket's count) — {}; {shown} shown, HIGH first.",
            severity_words(counts)
        )];
        out.extend(sorted.iter().take(shown).map(|a| annotation_line(a)));
        if shown < sorted.len() {
            out.push(format!(
                "[{} more annotation(s) not shown — filter by severity, type or path, or raise limit]",
                sorted.len() - shown
            ));
        }
        out
    }

    /// Joins the lines, cutting whole lines past the budget and saying how many were left out.
    fn within_budget(&self, lines: Vec<String>) -> String {
        let mut out = String::new();
        for (i, line) in lines.iter().enumerate() {
            if out.len() + line.len() + 1 > self.budget.saturating_sub(160) {
                let left = lines.len() - i;
                out.push_str(&format!(
                    "[budget of {} bytes reached: {left} more line(s) not shown — filter by severity, type or path, or ask with a larger max_bytes]",
                    self.budget
                ));
                return out;
            }
            out.push_str(line);
            out.push('\n');
        }
        out.pop();
        out
    }
}

/// `HIGH 2, MEDIUM 0, LOW 5`.
fn severity_words([high, medium, low]: [usize; 3]) -> String {
    format!("{high} high, {medium} medium, {low} low")
}

/// A report in one line: result, title, key, reporter, details and link.
fn report_line(r: &Report) -> String {
    let mut line = format!(
        "{} {} [{}]",
        result_word(r.result.as_deref()).to_uppercase(),
        short(r.title.as_deref().unwrap_or("(untitled)"), 120),
        short(r.key.as_deref().unwrap_or("?"), 80)
    );
    if let Some(by) = r.reporter.as_deref().filter(|s| !s.is_empty()) {
        line.push_str(&format!(" by {}", short(by, 80)));
    }
    if let Some(d) = r.details.as_deref().filter(|s| !s.trim().is_empty()) {
        line.push_str(&format!(" — {}", short(d, DETAILS_CHARS)));
    }
    if let Some(url) = http_url(r.link.as_deref()) {
        line.push_str(&format!(" <{}>", short(&url, 300)));
    }
    line
}

/// An annotation in one line: severity, type, where, report and message.
fn annotation_line(a: &Annotation) -> String {
    let at = match a.line {
        Some(n) if n > 0 => format!("{}:{n}", short(a.path.as_deref().unwrap_or("?"), 200)),
        _ => format!("{} (file)", short(a.path.as_deref().unwrap_or("?"), 200)),
    };
    let mut line = format!(
        "{} {} {at} [{}] {}",
        a.severity.as_deref().unwrap_or("?"),
        a.kind.as_deref().unwrap_or("-"),
        short(a.report_key.as_deref().unwrap_or("?"), 60),
        one_line(&cap(a.message.as_deref().unwrap_or(""), MESSAGE_CHARS, "message", ""))
    );
    if let Some(url) = http_url(a.link.as_deref()) {
        line.push_str(&format!(" <{}>", short(&url, 300)));
    }
    line
}
