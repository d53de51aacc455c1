//! `get_build_status`: the builds of a commit, or of a pull request's source commit as its page lists
//! them, with Bitbucket's totals and, for a pull request, where each required build stands.
//!
//! Requests: for a pull request, in parallel, the listing its page reads, the pull request (for its
//! branches) and, from the first page on, the required-build conditions (3; 4 when a condition needs
//! the branching model); on a server without the listing (404), the legacy listing and totals of the
//! source commit instead (5). For a commit, the legacy listing and its totals in parallel (2).
//! [reference "Builds", "Required builds": spec, rec; the UI listing's shape is assumed]

use serde_json::{Map, Value, json};

use super::object;
use crate::args::{number, string};
use crate::bitbucket::Page;
use crate::bitbucket::model::{Build, PullRequest};
use crate::errors::{self, Subject};
use crate::fetch::FetchOutcome;
use crate::plan::{Fetches, Plan, Step, ToolResult};
use crate::reads::builds::{BuildsRead, BuildsReader, Fallback, Source, WHOLE_LISTING, legacy_request, stats_request};
use crate::reads::conditions::{self, ConditionsRead, ConditionsReader};
use crate::reads::pull_request;
use crate::text::builds::{required_lines, stats_line};
use crate::text::{build_state, one_line, short_commit};
use crate::tool::{Access, Annotations, Asks, Call, Role, Scoped, ToolSpec, Toolset};

/// `get_build_status`, for the catalogue: reads only.
pub const SPEC: ToolSpec = ToolSpec {
    name: "get_build_status",
    title: "Get build status",
    description: "Builds of a commit, or of a pull request's source commit, with state counts.",
    input_schema: status_schema,
    access: Access::Read,
    asks: Asks::Never,
    scope: Scoped::Commit,
    role: Role::Data(Toolset::Builds),
    annotations: Annotations::READ,
    start,
};

fn status_schema() -> Value {
    object(
        json!({"commit_id": {"type": "string", "minLength": 4, "description": "Commit id (or give project, repo, pr_id)"},
               "project": super::project(), "repo": super::repo(), "pr_id": super::pr_id(),
               "start": super::start(), "limit": super::limit(25, 100)}),
        &[],
    )
}

const NO_COMMIT: &str = "The pull request names no source commit.";

/// The reads of `get_build_status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StatusRead {
    /// The pull request, for its source commit and branches.
    PullRequest,
    /// Its builds (or the commit's).
    Builds(BuildsRead),
    /// The required-build conditions.
    Conditions(ConditionsRead),
}

fn start(args: &Map<String, Value>, _: &Call<'_>) -> Step {
    let start = number(args, "start").unwrap_or(0);
    let limit = number(args, "limit").unwrap_or(25);
    let (project, repo, id) = (string(args, "project"), string(args, "repo"), number(args, "pr_id"));
    match (string(args, "commit_id"), project, repo, id) {
        (Some(c), None, None, None) => {
            let (builds, _) = BuildsReader::new(("", "", 0), start, limit, 1, Fallback::CommitListing, false);
            let status = Status {
                project: String::new(),
                repo: String::new(),
                id: None,
                limit,
                commit: Some(c.to_owned()),
                pr: None,
                builds,
                required: None,
            };
            let first = vec![
                (StatusRead::Builds(BuildsRead::Legacy), legacy_request(c, start, limit)),
                (StatusRead::Builds(BuildsRead::Stats), stats_request(c)),
            ];
            Step::wait(status, first)
        }
        (None, Some(p), Some(r), Some(i)) => {
            // From the first page, read enough of the listing to decide requirements (the page
            // shows `limit` of them); later pages are plain pages. On fallback, the commit's page as asked.
            let listing_limit = if start == 0 { limit.max(WHOLE_LISTING) } else { limit };
            let (builds, listing) =
                BuildsReader::new((p, r, i), start, listing_limit, 1, Fallback::CommitListing, false);
            let builds = builds.legacy_page(start, limit);
            let mut first = vec![
                (StatusRead::Builds(BuildsRead::Listing), listing),
                (StatusRead::PullRequest, pull_request::request(p, r, i)),
            ];
            let mut required = None;
            if start == 0 {
                let (reader, conditions) = ConditionsReader::new(p, r);
                required = Some(reader);
                first.push((StatusRead::Conditions(ConditionsRead::Page), conditions));
            }
            let status = Status {
                project: p.to_owned(),
                repo: r.to_owned(),
                id: Some(i),
                limit,
                commit: None,
                pr: None,
                builds,
                required,
            };
            Step::wait(status, first)
        }
        _ => Step::Done(ToolResult::error("Give either commit_id, or project, repo and pr_id.")),
    }
}

#[derive(Debug)]
struct Status {
    project: String,
    repo: String,
    id: Option<u64>,
    limit: u64,
    /// The commit asked for, or the pull request's source commit once the listing fell back to it.
    commit: Option<String>,
    pr: Option<PullRequest>,
    builds: BuildsReader,
    required: Option<ConditionsReader>,
}

impl Plan for Status {
    type Read = StatusRead;

    fn on(
        &mut self,
        read: StatusRead,
        outcome: FetchOutcome,
        f: &mut Fetches<'_, '_, StatusRead>,
    ) -> Option<ToolResult> {
        let about = Subject { project: &self.project, repo: &self.repo, pr: self.id };
        match read {
            StatusRead::PullRequest => match errors::json::<PullRequest>(&outcome, about, None) {
                Ok(pr) => {
                    let commit = pr.from_ref.as_ref().and_then(|r| r.latest_commit.clone());
                    let fell_back = self.builds.waits_for_commit();
                    self.builds.source_commit(commit.as_deref(), &mut |r, q| f.fetch(StatusRead::Builds(r), q));
                    self.pr = Some(pr);
                    if fell_back {
                        match commit {
                            Some(c) => self.commit = Some(c),
                            None => return Some(ToolResult::error(NO_COMMIT)),
                        }
                    }
                }
                Err(e) => return Some(ToolResult::error(e)),
            },
            StatusRead::Builds(r) => {
                let fell_back = self.builds.no_listing;
                self.builds.on(r, &outcome, &mut |r, q| f.fetch(StatusRead::Builds(r), q));
                if let Some(e) = self.builds.error.take() {
                    let no_commit = self.pr.is_some() && self.builds.commit().is_none();
                    return Some(ToolResult::error(if no_commit { NO_COMMIT.to_owned() } else { e.into() }));
                }
                if !fell_back && self.builds.no_listing && !self.builds.waits_for_commit() {
                    self.commit = self.builds.commit().map(str::to_owned);
                }
            }
            StatusRead::Conditions(r) => {
                if let Some(reader) = self.required.as_mut() {
                    reader.on(r, &outcome, &mut |r, q| f.fetch(StatusRead::Conditions(r), q));
                }
            }
        }
        if f.waiting() > 0 || self.builds.waits_for_commit() {
            return None;
        }
        let page = self.builds.page.as_ref()?;
        let ui = self.builds.source == Some(Source::PullRequestPage);
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
        match &self.builds.stats {
            Some(Ok(s)) => out.push(stats_line(s, "Bitbucket's totals for the commit (any branch)")),
            Some(Err(e)) => out.push(format!("Bitbucket's build totals: not read — {e}")),
            None => {}
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
        required_lines(target, conditions::evaluate(reader, target, source, &facts))
    }
}

fn build_line(b: &Build) -> String {
    let mut line =
        format!("{} {}", build_state(b.state.as_deref()).to_uppercase(), one_line(b.key.as_deref().unwrap_or("?")));
    if let Some(name) = b.name.as_deref().filter(|n| Some(*n) != b.key.as_deref()) {
        line.push_str(&format!(" \"{}\"", crate::text::short(name, 80)));
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
        line.push_str(&format!(" — {}", crate::text::short(d, 120)));
    }
    if let Some(u) = b.url.as_deref().filter(|u| !u.is_empty()) {
        line.push_str(&format!(" · {u}"));
    }
    line
}
