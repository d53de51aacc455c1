//! `get_build_status` and `list_required_builds`: the builds of a commit or of a pull request's source
//! commit, and the repository's required-build conditions in words.
//!
//! Requests: for a pull request, the listing its page reads (1); on a server without it (404), the
//! pull request, then the legacy listing and stats of its source commit (4). For a commit, the legacy
//! listing and its stats in parallel (2). Required builds: one page of conditions (1).
//! [reference "Builds", "Required builds": spec, rec; the UI listing's shape is assumed]

use serde_json::{Map, Value, json};

use super::flow::{self, Fetcher, Flow};
use super::get::builds_request;
use super::text::{build_state, one_line, short_commit};
use super::{Decl, READ, n, object, paging, s};
use crate::bitbucket::errors::{self, Subject};
use crate::bitbucket::model::{Build, BuildStats, Condition, Matcher, PullRequest};
use crate::bitbucket::{Page, RawPage, pr_path, segment};
use crate::catalogue::{Access, CallContext};
use crate::plan::{FetchOutcome, FetchRequest, PlanContext, Step, ToolResult};

/// `get_build_status`.
pub const STATUS_SPEC: Decl = Decl {
    name: "get_build_status",
    title: "Get build status",
    description: "Builds of a commit (commit_id) or of a pull request's source commit (project, repo, pr_id) as its page lists them, with state counts.",
    schema: status_schema,
    access: Access::Read,
    annotations: READ,
    start: start_status,
};

/// `list_required_builds`.
pub const REQUIRED_SPEC: Decl = Decl {
    name: "list_required_builds",
    title: "List required builds",
    description: "A repository's required-build conditions in words: which target branches need which successful builds, and which source branches are exempt.",
    schema: required_schema,
    access: Access::Read,
    annotations: READ,
    start: start_required,
};

fn status_schema() -> Value {
    object(
        json!({"commit_id": {"type": "string", "minLength": 4, "description": "Commit id (or give project, repo, pr_id)"},
               "project": super::project(), "repo": super::repo(), "pr_id": super::pr_id(),
               "start": super::start(), "limit": super::limit(25, 100)}),
        &[],
    )
}

fn required_schema() -> Value {
    object(
        json!({"project": super::project(), "repo": super::repo(), "start": super::start(), "limit": super::limit(25, 100)}),
        &["project", "repo"],
    )
}

const UI: u32 = 0;
const PR: u32 = 1;
const LEGACY: u32 = 2;
const STATS: u32 = 3;

fn legacy_request(commit: &str, start: u64, limit: u64) -> FetchRequest {
    let mut query = Vec::new();
    paging(&mut query, start, limit);
    FetchRequest::get(format!("/rest/build-status/latest/commits/{}", segment(commit)), query)
}

fn start_status(args: &Map<String, Value>, cx: &mut PlanContext, _: &CallContext<'_>) -> Step {
    let start = n(args, "start").unwrap_or(0);
    let limit = n(args, "limit").unwrap_or(25);
    let (project, repo, id) = (s(args, "project"), s(args, "repo"), n(args, "pr_id"));
    let mut st = Status {
        project: project.unwrap_or("").to_owned(),
        repo: repo.unwrap_or("").to_owned(),
        id,
        start,
        limit,
        commit: None,
        list: None,
        stats: None,
    };
    match (s(args, "commit_id"), project, repo, id) {
        (Some(c), None, None, None) => {
            st.commit = Some(c.to_owned());
            let first = vec![(LEGACY, legacy_request(c, start, limit)), (STATS, get_stats(c))];
            flow::start(st, cx, first)
        }
        (None, Some(p), Some(r), Some(i)) => {
            let mut req = builds_request(p, r, i);
            req.query.clear();
            paging(&mut req.query, start, limit);
            flow::start(st, cx, vec![(UI, req)])
        }
        _ => Step::Done(ToolResult::error("Give either commit_id, or project, repo and pr_id.")),
    }
}

fn get_stats(commit: &str) -> FetchRequest {
    super::get::stats_request(commit)
}

#[derive(Debug)]
struct Status {
    project: String,
    repo: String,
    id: Option<u64>,
    start: u64,
    limit: u64,
    commit: Option<String>,
    list: Option<Result<(Page<Build>, bool), String>>,
    stats: Option<String>,
}

impl Flow for Status {
    fn on(&mut self, slot: u32, outcome: FetchOutcome, f: &mut Fetcher<'_>) -> Option<ToolResult> {
        let (project, repo) = (self.project.clone(), self.repo.clone());
        let about = Subject { project: &project, repo: &repo, pr: self.id };
        match slot {
            UI => match outcome {
                FetchOutcome::Response(ref r) if r.status == 404 => {
                    // No pull request build listing on this server: the legacy listing of the source commit.
                    let id = self.id.unwrap_or(0);
                    f.fetch(PR, FetchRequest::get(pr_path(&project, &repo, id), vec![]));
                    return None;
                }
                _ => match errors::json::<Value>(&outcome, about, None) {
                    Ok(v) => {
                        let raw: RawPage =
                            serde_json::from_value(v.get("page").cloned().unwrap_or(v)).unwrap_or_default();
                        self.list = Some(Ok((raw.decode(), true)));
                    }
                    Err(e) => return Some(ToolResult::error(e)),
                },
            },
            PR => match errors::json::<PullRequest>(&outcome, about, None) {
                Ok(pr) => match pr.from_ref.and_then(|r| r.latest_commit) {
                    Some(c) => {
                        f.fetch(LEGACY, legacy_request(&c, self.start, self.limit));
                        f.fetch(STATS, get_stats(&c));
                        self.commit = Some(c);
                        return None;
                    }
                    None => return Some(ToolResult::error("The pull request names no source commit.")),
                },
                Err(e) => return Some(ToolResult::error(e)),
            },
            LEGACY => match errors::json::<RawPage>(&outcome, about, None) {
                Ok(raw) => self.list = Some(Ok((raw.decode(), false))),
                Err(e) => return Some(ToolResult::error(e)),
            },
            _ => {
                self.stats = Some(match errors::json::<BuildStats>(&outcome, about, None) {
                    Ok(st) => super::get::stats_line(&st).replace(
                        "Builds of the source commit (any branch; this server has no pull request build listing)",
                        "Bitbucket's totals for the commit (any branch)",
                    ),
                    Err(e) => format!("Bitbucket's build totals: not read — {e}"),
                })
            }
        }
        if f.waiting() > 0 {
            return None;
        }
        let Some(Ok((page, ui))) = &self.list else { return None };
        let mut out = Vec::new();
        let subject = match (self.id, &self.commit) {
            (Some(id), _) if *ui => {
                format!("Builds of PR #{id}'s source commit for its branch (as its page lists them)")
            }
            (Some(id), Some(c)) => format!(
                "Builds of PR #{id}'s source commit {} (any branch; this server has no pull request build listing)",
                short_commit(Some(c))
            ),
            (_, c) => format!("Builds of commit {}", short_commit(c.as_deref())),
        };
        out.push(format!("{subject}: {} shown (start={}).", page.values.len(), page.start));
        if let Some(st) = &self.stats {
            out.push(st.clone());
        }
        for b in &page.values {
            out.push(build_line(b));
        }
        out.push(page.more_line("builds"));
        Some(ToolResult::text(out.join("\n")))
    }
}

fn build_line(b: &Build) -> String {
    let mut line =
        format!("{} {}", build_state(b.state.as_deref()).to_uppercase(), one_line(b.key.as_deref().unwrap_or("?")));
    if let Some(name) = b.name.as_deref().filter(|n| Some(*n) != b.key.as_deref()) {
        line.push_str(&format!(" \"{}\"", super::text::short(name, 80)));
    }
    match &b.build_number {
        Some(Value::String(s)) => line.push_str(&format!(" #{s}")),
        Some(Value::Number(n)) => line.push_str(&format!(" #{n}")),
        _ => {}
    }
    if let Some(p) = &b.parent {
        line.push_str(&format!(" (reports as {p})"));
    }
    if let Some(t) = &b.test_results {
        let get = |k: &str| t.get(k).and_then(Value::as_u64).unwrap_or(0);
        line.push_str(&format!(
            " · tests {} passed, {} failed, {} skipped",
            get("successful"),
            get("failed"),
            get("skipped")
        ));
    }
    if let Some(d) = b.description.as_deref().filter(|d| !d.is_empty()) {
        line.push_str(&format!(" — {}", super::text::short(d, 120)));
    }
    if let Some(u) = b.url.as_deref().filter(|u| !u.is_empty()) {
        line.push_str(&format!(" · {u}"));
    }
    line
}

fn start_required(args: &Map<String, Value>, cx: &mut PlanContext, _: &CallContext<'_>) -> Step {
    let project = s(args, "project").unwrap_or("").to_owned();
    let repo = s(args, "repo").unwrap_or("").to_owned();
    let mut query = Vec::new();
    paging(&mut query, n(args, "start").unwrap_or(0), n(args, "limit").unwrap_or(25));
    let request = FetchRequest::get(
        format!("/rest/required-builds/latest/projects/{}/repos/{}/conditions", segment(&project), segment(&repo)),
        query,
    );
    flow::start(Required { project, repo }, cx, vec![(0, request)])
}

#[derive(Debug)]
struct Required {
    project: String,
    repo: String,
}

impl Flow for Required {
    fn on(&mut self, _: u32, outcome: FetchOutcome, _: &mut Fetcher<'_>) -> Option<ToolResult> {
        let about = Subject { project: &self.project, repo: &self.repo, pr: None };
        let page = match errors::json::<RawPage>(&outcome, about, None) {
            Ok(p) => p.decode::<Condition>(),
            Err(e) => return Some(ToolResult::error(e)),
        };
        let mut out = vec![format!(
            "Required builds of {}/{}: {} condition(s) shown (start={}).",
            self.project,
            self.repo,
            page.values.len(),
            page.start
        )];
        for c in &page.values {
            let target = c.ref_matcher.as_ref().map(matcher).unwrap_or_else(|| "?".into());
            let mut line = format!(
                "#{}: pull requests into {target} need successful builds: {}",
                c.id.unwrap_or(0),
                c.build_parent_keys.iter().map(|k| one_line(k)).collect::<Vec<_>>().join(", ")
            );
            if let Some(e) = &c.exempt_ref_matcher {
                line.push_str(&format!("; except pull requests from {}", matcher(e)));
            }
            out.push(line);
        }
        out.push(page.more_line("conditions"));
        Some(ToolResult::text(out.join("\n")))
    }
}

/// A ref matcher in words. [reference "Required builds": spec, rec]
fn matcher(m: &Matcher) -> String {
    let id = one_line(m.id.as_deref().unwrap_or("?"));
    let shown = one_line(m.display_id.as_deref().unwrap_or(&id));
    match m.kind.as_ref().and_then(|t| t.id.as_deref()) {
        Some("ANY_REF") => "any branch".into(),
        Some("BRANCH") => format!("branch {shown}"),
        Some("PATTERN") => format!("branches matching {id}"),
        Some("MODEL_CATEGORY") => format!("{shown} branches (branching model)"),
        Some("MODEL_BRANCH") => format!("the {shown} branch (branching model)"),
        Some(other) => format!("{other} {id}"),
        None => id,
    }
}
