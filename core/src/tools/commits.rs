//! `list_pr_commits`: a pull request's commits, newest first, paged as the other lists are.
//!
//! Requests: 1, `GET …/pull-requests/{id}/commits?start&limit` → a page of commits on the source that the target
//! lacks [spec: 9.4 `getCommits_1`; commit shape: reference "Projects, …": spec, rec].

use serde_json::{Map, Value, json};

use super::object;
use crate::args::number;
use crate::errors::Subject;
use crate::fetch::FetchOutcome;
use crate::plan::{Fetches, Plan, Step, ToolResult};
use crate::reads::refs;
use crate::text::commit_line;
use crate::tool::{Access, Annotations, Asks, Call, Role, Scoped, ToolSpec, Toolset};

/// `list_pr_commits`.
pub const SPEC: ToolSpec = ToolSpec {
    name: "list_pr_commits",
    title: "List pull request commits",
    description: "A pull request's commits, newest first.",
    input_schema: schema,
    access: Access::Read,
    asks: Asks::Never,
    scope: Scoped::Repository,
    role: Role::Data(Toolset::PullRequests),
    annotations: Annotations::READ,
    start,
};

fn schema() -> Value {
    object(
        json!({"project": super::project(), "repo": super::repo(), "pr_id": super::pr_id(),
               "start": super::start(), "limit": super::limit(25, 500)}),
        &["project", "repo", "pr_id"],
    )
}

fn start(args: &Map<String, Value>, _: &Call<'_>) -> Step {
    let (project, repo, id) = crate::args::pull_request(args);
    let (start, limit) = (number(args, "start").unwrap_or(0), number(args, "limit").unwrap_or(25));
    let request = crate::reads::pull_request::commits_request(&project, &repo, id, start, limit);
    Step::wait(Commits { project, repo, id }, vec![((), request)])
}

#[derive(Debug)]
struct Commits {
    project: String,
    repo: String,
    id: u64,
}

impl Plan for Commits {
    type Read = ();

    fn on(&mut self, _: (), outcome: FetchOutcome, _: &mut Fetches<'_, '_, ()>) -> Option<ToolResult> {
        let about = Subject { project: &self.project, repo: &self.repo, pr: Some(self.id) };
        let page = match refs::commits(&outcome, about) {
            Ok(p) => p,
            Err(e) => return Some(ToolResult::error(e)),
        };
        let mut out = vec![format!(
            "Commits of PR #{} in {}/{}, from start={} (newest first): {} shown.",
            self.id,
            self.project,
            self.repo,
            page.start,
            page.values.len()
        )];
        out.extend(page.values.iter().map(commit_line));
        out.push(page.more_line("commits"));
        Some(ToolResult::text(out.join("\n")))
    }
}
