//! `list_required_builds`: a repository's required-build conditions in words; for a pull request,
//! which of its required builds pass, fail, run or are missing.
//!
//! Requests: one page of conditions (1); for a pull request, every page of conditions (and the
//! branching model when a condition needs it), the pull request and its page's build listing, in
//! parallel (3–4). [reference "Required builds": spec, rec; the UI listing's shape is assumed]

use serde_json::{Map, Value, json};

use super::object;
use crate::args::number;
use crate::bitbucket::RawPage;
use crate::bitbucket::model::{Build, Condition, Matcher, PullRequest};
use crate::errors::{self, Subject};
use crate::fetch::FetchOutcome;
use crate::plan::{Fetches, Plan, Step, ToolResult};
use crate::reads::builds::{BuildsRead, BuildsReader, Fallback, WHOLE_LISTING};
use crate::reads::conditions::{self, ConditionsRead, ConditionsReader};
use crate::reads::pull_request;
use crate::text::builds::required_lines;
use crate::text::one_line;
use crate::tool::{Access, Annotations, Asks, Call, Role, Scoped, ToolSpec, Toolset};

/// `list_required_builds`, for the catalogue: reads only.
pub const SPEC: ToolSpec = ToolSpec {
    name: "list_required_builds",
    title: "List required builds",
    description: "Required builds per target branch with exemptions; with pr_id, which pass, fail, run or are missing.",
    input_schema: required_schema,
    access: Access::Read,
    asks: Asks::Never,
    scope: Scoped::Repository,
    role: Role::Data(Toolset::Builds),
    annotations: Annotations::READ,
    start: start_required,
};

fn required_schema() -> Value {
    object(
        json!({"project": super::project(), "repo": super::repo(), "pr_id": super::pr_id(),
               "start": super::start(), "limit": super::limit(25, 100)}),
        &["project", "repo"],
    )
}

fn start_required(args: &Map<String, Value>, _: &Call<'_>) -> Step {
    let (project, repo) = crate::args::repository(args);
    if let Some(id) = number(args, "pr_id") {
        // Every condition (read by the same reader the card uses), the pull request and its listing.
        let (reader, conditions) = ConditionsReader::new(&project, &repo);
        let (builds, listing) = BuildsReader::new((&project, &repo, id), 0, WHOLE_LISTING, 1, Fallback::Nothing, false);
        let first = vec![
            (ForPullRequestRead::Conditions(ConditionsRead::Page), conditions),
            (ForPullRequestRead::PullRequest, pull_request::request(&project, &repo, id)),
            (ForPullRequestRead::Builds(BuildsRead::Listing), listing),
        ];
        let plan = ForPullRequest { project, repo, id, reader, pr: None, builds };
        return Step::wait(plan, first);
    }
    let (start, limit) = (number(args, "start").unwrap_or(0), number(args, "limit").unwrap_or(25));
    let request = conditions::page_request(&project, &repo, start, limit);
    Step::wait(Required { project, repo }, vec![((), request)])
}

#[derive(Debug)]
struct Required {
    project: String,
    repo: String,
}

impl Plan for Required {
    type Read = ();

    fn on(&mut self, _: (), outcome: FetchOutcome, _: &mut Fetches<'_, '_, ()>) -> Option<ToolResult> {
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

/// The reads of `list_required_builds` for a pull request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ForPullRequestRead {
    /// The required-build conditions.
    Conditions(ConditionsRead),
    /// The pull request, for its branches.
    PullRequest,
    /// Its page's build listing.
    Builds(BuildsRead),
}

/// `list_required_builds` for a pull request: every condition, and where each required build stands.
#[derive(Debug)]
struct ForPullRequest {
    project: String,
    repo: String,
    id: u64,
    reader: ConditionsReader,
    pr: Option<PullRequest>,
    builds: BuildsReader,
}

impl Plan for ForPullRequest {
    type Read = ForPullRequestRead;

    fn on(
        &mut self,
        read: ForPullRequestRead,
        outcome: FetchOutcome,
        f: &mut Fetches<'_, '_, ForPullRequestRead>,
    ) -> Option<ToolResult> {
        let about = Subject { project: &self.project, repo: &self.repo, pr: Some(self.id) };
        match read {
            ForPullRequestRead::Conditions(r) => {
                self.reader.on(r, &outcome, &mut |r, q| f.fetch(ForPullRequestRead::Conditions(r), q));
            }
            ForPullRequestRead::PullRequest => match errors::json::<PullRequest>(&outcome, about, None) {
                Ok(pr) => self.pr = Some(pr),
                Err(e) => return Some(ToolResult::error(e)),
            },
            ForPullRequestRead::Builds(r) => {
                self.builds.on(r, &outcome, &mut |r, q| f.fetch(ForPullRequestRead::Builds(r), q));
                if let Some(e) = self.builds.error.take() {
                    return Some(ToolResult::error(e));
                }
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
        match (&self.builds.page, target, source) {
            (Some(page), Some(t), Some(s)) if page.next.is_none() => {
                let facts: Vec<_> = page.values.iter().map(Build::facts).collect();
                out.extend(required_lines(t, conditions::evaluate(&self.reader, t, s, &facts)));
            }
            (Some(page), _, _) if page.next.is_some() => out.push(format!(
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
