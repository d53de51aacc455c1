//! `get_build_status` and `list_required_builds`: the builds of a commit or of a pull request's source
//! commit, and the repository's required-build conditions in words.
//!
//! Requests: for a pull request, in parallel, the listing its page reads, the pull request (for its
//! branches) and, from the first page on, the required-build conditions (3; 4 when a condition needs
//! the branching model); on a server without the listing (404), the legacy listing and stats of the
//! source commit instead (5). For a commit, the legacy listing and its stats in parallel (2).
//! Required builds: one page of conditions (1); for a pull request also its listing and the pull
//! request, and every page of conditions, to say which required builds pass, fail, run or are missing.
//! [reference "Builds", "Required builds": spec, rec; the UI listing's shape is assumed]

use serde_json::{Map, Value, json};

use super::flow::{self, Fetcher, Flow};
use super::get::builds_request;
use super::required_builds::{self, CONDITIONS, ConditionsReader, MODEL};
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
    description: "A repository's required-build conditions in words: which target branches need which successful builds, and which source branches are exempt. With pr_id: which required builds of that pull request pass, fail, run or are missing.",
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
        json!({"project": super::project(), "repo": super::repo(), "pr_id": super::pr_id(),
               "start": super::start(), "limit": super::limit(25, 100)}),
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
        pr: None,
        fallback_wanted: false,
        required: None,
    };
    match (s(args, "commit_id"), project, repo, id) {
        (Some(c), None, None, None) => {
            st.commit = Some(c.to_owned());
            let first = vec![(LEGACY, legacy_request(c, start, limit)), (STATS, get_stats(c))];
            flow::start(st, cx, first)
        }
        (None, Some(p), Some(r), Some(i)) => {
            // From the first page, read enough of the listing to decide requirements (the page
            // shows `limit` of them); later pages are plain pages.
            let mut req = builds_request(p, r, i);
            req.query.clear();
            paging(&mut req.query, start, if start == 0 { limit.max(REQUIREMENTS_LIMIT) } else { limit });
            let mut first = vec![(UI, req), (PR, FetchRequest::get(pr_path(p, r, i), vec![]))];
            if start == 0 {
                let (reader, conditions) = ConditionsReader::new(p, r);
                st.required = Some(reader);
                first.push((CONDITIONS, conditions));
            }
            flow::start(st, cx, first)
        }
        _ => Step::Done(ToolResult::error("Give either commit_id, or project, repo and pr_id.")),
    }
}

/// Builds read from the first page of a pull request's listing, so requirements are decided on all of them.
const REQUIREMENTS_LIMIT: u64 = 100;

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
    pr: Option<PullRequest>,
    fallback_wanted: bool,
    required: Option<ConditionsReader>,
}

impl Flow for Status {
    fn on(&mut self, slot: u32, outcome: FetchOutcome, f: &mut Fetcher<'_>) -> Option<ToolResult> {
        let (project, repo) = (self.project.clone(), self.repo.clone());
        let about = Subject { project: &project, repo: &repo, pr: self.id };
        match slot {
            UI => match outcome {
                FetchOutcome::Response(ref r) if r.status == 404 => {
                    // No pull request build listing on this server: the legacy listing of the source
                    // commit, once the pull request names it.
                    self.fallback_wanted = true;
                    if self.pr.is_some() {
                        return self.fall_back(f);
                    }
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
                Ok(pr) => {
                    self.pr = Some(pr);
                    if self.fallback_wanted {
                        return self.fall_back(f);
                    }
                }
                Err(e) => return Some(ToolResult::error(e)),
            },
            CONDITIONS | MODEL => {
                if let Some(r) = self.required.as_mut() {
                    r.on(slot, &outcome, f);
                }
            }
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
        let ui = *ui;
        let mut out = Vec::new();
        let subject = match (self.id, &self.commit) {
            (Some(id), _) if ui => {
                format!("Builds of PR #{id}'s source commit for its branch (as its page lists them)")
            }
            (Some(id), Some(c)) => format!(
                "Builds of PR #{id}'s source commit {} (any branch; this server has no pull request build listing)",
                short_commit(Some(c))
            ),
            (_, c) => format!("Builds of commit {}", short_commit(c.as_deref())),
        };
        let shown = page.values.len().min(self.limit as usize);
        out.push(format!("{subject}: {shown} shown (start={}).", page.start));
        if let Some(st) = &self.stats {
            out.push(st.clone());
        }
        out.extend(self.requirement_lines(page, ui));
        for b in page.values.iter().take(shown) {
            out.push(build_line(b));
        }
        if shown < page.values.len() {
            out.push(format!("More builds exist — start={}.", page.start + shown as u64));
        } else {
            out.push(page.more_line("builds"));
        }
        Some(ToolResult::text(out.join("\n")))
    }
}

impl Status {
    /// Asks for the source commit's legacy listing and stats.
    fn fall_back(&mut self, f: &mut Fetcher<'_>) -> Option<ToolResult> {
        self.fallback_wanted = false;
        match self.pr.as_ref().and_then(|p| p.from_ref.as_ref()).and_then(|r| r.latest_commit.clone()) {
            Some(c) => {
                f.fetch(LEGACY, legacy_request(&c, self.start, self.limit));
                f.fetch(STATS, get_stats(&c));
                self.commit = Some(c);
                None
            }
            None => Some(ToolResult::error("The pull request names no source commit.")),
        }
    }

    /// Which required builds pass, fail, run or are missing, in words; or why bb cannot say.
    fn requirement_lines(&self, page: &Page<Build>, ui: bool) -> Vec<String> {
        let (Some(reader), Some(pr)) = (&self.required, &self.pr) else { return vec![] };
        if !ui {
            return vec!["Required builds: not decided — this server has no pull request build listing, which names the key each build reports under.".into()];
        }
        if page.next.is_some() {
            return vec![format!(
                "Required builds: not decided — the pull request has more than {} builds.",
                page.values.len()
            )];
        }
        let (Some(target), Some(source)) =
            (pr.to_ref.as_ref().and_then(|r| r.id.as_deref()), pr.from_ref.as_ref().and_then(|r| r.id.as_deref()))
        else {
            return vec![];
        };
        let facts: Vec<_> = page.values.iter().map(Build::facts).collect();
        required_lines(reader, target, source, &facts)
    }
}

/// The lines that say, for a pull request, where each required build stands.
pub fn required_lines(
    reader: &ConditionsReader,
    target: &str,
    source: &str,
    facts: &[crate::requirements::BuildFacts],
) -> Vec<String> {
    let into = target.strip_prefix("refs/heads/").unwrap_or(target);
    match required_builds::evaluate(reader, target, source, facts) {
        Ok((_, statuses)) if statuses.is_empty() => vec![format!("Required builds (into {}): none.", one_line(into))],
        Ok((_, statuses)) => {
            let parts: Vec<String> = statuses
                .iter()
                .map(|s| {
                    let state = match s.state.as_str() {
                        "MISSING" => "missing (no build yet: the merge check blocks on it)".to_owned(),
                        other => build_state(Some(other)).to_owned(),
                    };
                    format!("{} {state}", one_line(&s.key))
                })
                .collect();
            vec![format!(
                "Required builds (into {}): {} — {}.",
                one_line(into),
                crate::requirements::summary(&statuses),
                parts.join("; ")
            )]
        }
        Err(why) => vec![format!("Required builds: bb cannot tell as Bitbucket's merge check would ({why}).")],
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
    if let Some(id) = n(args, "pr_id") {
        // Every condition (read by the same reader the card uses), the pull request and its listing.
        let (reader, conditions) = ConditionsReader::new(&project, &repo);
        let mut listing = builds_request(&project, &repo, id);
        listing.query.clear();
        paging(&mut listing.query, 0, REQUIREMENTS_LIMIT);
        let first = vec![
            (CONDITIONS, conditions),
            (PR, FetchRequest::get(pr_path(&project, &repo, id), vec![])),
            (UI, listing),
        ];
        let flow = ForPullRequest { project, repo, id, reader, pr: None, listing: None };
        return flow::start(flow, cx, first);
    }
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
        out.extend(page.values.iter().map(condition_line));
        out.push(page.more_line("conditions"));
        Some(ToolResult::text(out.join("\n")))
    }
}

/// `list_required_builds` for a pull request: every condition, and where each required build stands.
#[derive(Debug)]
struct ForPullRequest {
    project: String,
    repo: String,
    id: u64,
    reader: ConditionsReader,
    pr: Option<PullRequest>,
    /// The listing, or `None` inside when the server has none (404).
    listing: Option<Option<Page<Build>>>,
}

impl Flow for ForPullRequest {
    fn on(&mut self, slot: u32, outcome: FetchOutcome, f: &mut Fetcher<'_>) -> Option<ToolResult> {
        let (project, repo) = (self.project.clone(), self.repo.clone());
        let about = Subject { project: &project, repo: &repo, pr: Some(self.id) };
        match slot {
            CONDITIONS | MODEL => self.reader.on(slot, &outcome, f),
            PR => match errors::json::<PullRequest>(&outcome, about, None) {
                Ok(pr) => self.pr = Some(pr),
                Err(e) => return Some(ToolResult::error(e)),
            },
            _ => {
                self.listing = Some(match &outcome {
                    FetchOutcome::Response(r) if r.status == 404 => None,
                    _ => match errors::json::<Value>(&outcome, about, None) {
                        Ok(v) => Some(
                            serde_json::from_value::<RawPage>(v.get("page").cloned().unwrap_or(v))
                                .unwrap_or_default()
                                .decode(),
                        ),
                        Err(e) => return Some(ToolResult::error(e)),
                    },
                })
            }
        }
        if f.waiting() > 0 {
            return None;
        }
        let pr = self.pr.as_ref()?;
        let mut out = vec![format!("Required builds of {}/{} for PR #{}:", self.project, self.repo, self.id)];
        match self.reader.cannot_tell() {
            Some(why) => out.push(format!("Conditions: not all read ({why}).")),
            None => {
                let conditions: Vec<Condition> =
                    self.reader.raw().iter().filter_map(|v| serde_json::from_value(v.clone()).ok()).collect();
                out.push(format!("{} condition(s):", conditions.len()));
                out.extend(conditions.iter().map(condition_line));
            }
        }
        let (target, source) =
            (pr.to_ref.as_ref().and_then(|r| r.id.as_deref()), pr.from_ref.as_ref().and_then(|r| r.id.as_deref()));
        match (&self.listing, target, source) {
            (Some(Some(page)), Some(t), Some(s)) if page.next.is_none() => {
                let facts: Vec<_> = page.values.iter().map(Build::facts).collect();
                out.extend(required_lines(&self.reader, t, s, &facts));
            }
            (Some(Some(page)), _, _) if page.next.is_some() => out.push(format!(
                "Required builds: not decided — the pull request has more than {} builds.",
                page.values.len()
            )),
            _ => out.push("Required builds: not decided — this server has no pull request build listing, which names the key each build reports under.".into()),
        }
        Some(ToolResult::text(out.join("\n")))
    }
}

/// One condition in words.
fn condition_line(c: &Condition) -> String {
    let target = c.ref_matcher.as_ref().map(matcher).unwrap_or_else(|| "?".into());
    let mut line = format!(
        "#{}: pull requests into {target} need successful builds: {}",
        c.id.unwrap_or(0),
        c.build_parent_keys.iter().map(|k| one_line(k)).collect::<Vec<_>>().join(", ")
    );
    if let Some(e) = &c.exempt_ref_matcher {
        line.push_str(&format!("; except pull requests from {}", matcher(e)));
    }
    line
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
