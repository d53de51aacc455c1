//! `create_pull_request`: opens a pull request; the target defaults to the repository's default branch and
//! the repository's default reviewers are added unless told not to.
//!
//! Requests, in stages: the repository (its id, for default reviewers) and the default branch (when no
//! `to_ref`) in parallel; then the default reviewers for the branch pair; then the POST (never retried).
//! 4 at most, 1 with `to_ref` and `default_reviewers: false`. A default-reviewer lookup that fails costs
//! one line, not the pull request. [reference "Pull requests" and "Projects, …": spec, rec] The reads are
//! [`crate::reads::repository`]'s and [`crate::reads::pull_requests`]'s.

use serde_json::{Map, Value, json};

use super::object;
use crate::args::{flag, string};
use crate::bitbucket::model::{PullRequest, User};
use crate::errors::{self, Subject, Write};
use crate::fetch::{FetchOutcome, FetchRequest};
use crate::plan::{Fetches, Plan, Step, ToolResult};
use crate::reads::pull_requests::full_ref;
use crate::reads::repository;
use crate::text::one_line;
use crate::tool::{Access, Annotations, Asks, Call, Role, Scoped, ToolSpec, Toolset};
use crate::writes::pull_request;

/// `create_pull_request`, for the catalogue: a write that adds (not undoable by bb, but by declining it).
pub const SPEC: ToolSpec = ToolSpec {
    name: "create_pull_request",
    title: "Create pull request",
    description: "Open a pull request from from_ref into to_ref (default branch unless given), with default reviewers.",
    input_schema: schema,
    access: Access::Write,
    asks: Asks::Never,
    scope: Scoped::Repository,
    role: Role::Data(Toolset::PullRequests),
    annotations: Annotations::ADD,
    start,
};

fn schema() -> Value {
    object(
        json!({"project": super::project(), "repo": super::repo(),
               "title": {"type": "string", "description": "Title"},
               "from_ref": {"type": "string", "description": "Source branch"},
               "to_ref": {"type": "string", "description": "Target branch"},
               "description": {"type": "string", "description": "Description (Markdown)"},
               "reviewers": {"type": "array", "items": {"type": "string"}, "maxItems": 50, "description": "Reviewer usernames"},
               "default_reviewers": {"type": "boolean", "default": true, "description": "Add default reviewers"},
               "draft": {"type": "boolean", "description": "Open as a draft (8.18+)"}}),
        &["project", "repo", "title", "from_ref"],
    )
}

/// The reads (and the one write) of `create_pull_request`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CreateRead {
    /// The repository, for its id (default reviewers need it).
    Repo,
    /// The default branch, when no target was given.
    DefaultBranch,
    /// The default reviewers for the branch pair.
    DefaultReviewers,
    /// The pull request's creation.
    Create,
}

fn start(args: &Map<String, Value>, _: &Call<'_>) -> Step {
    let (project, repo) = crate::args::repository(args);
    let reviewers: Vec<String> = args
        .get("reviewers")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).map(str::to_owned).collect())
        .unwrap_or_default();
    let c = Create {
        project,
        repo,
        title: string(args, "title").unwrap_or("").to_owned(),
        description: string(args, "description").map(str::to_owned),
        from: full_ref(string(args, "from_ref").unwrap_or("")),
        to: string(args, "to_ref").map(full_ref),
        reviewers,
        want_defaults: flag(args, "default_reviewers") != Some(false),
        draft: flag(args, "draft") == Some(true),
        repo_id: None,
        defaults: Vec::new(),
        notes: Vec::new(),
    };
    let mut first = Vec::new();
    if c.want_defaults {
        first.push((CreateRead::Repo, repository::request(&c.project, &c.repo)));
    }
    if c.to.is_none() {
        first.push((CreateRead::DefaultBranch, repository::default_branch_request(&c.project, &c.repo)));
    }
    if first.is_empty() {
        first.push((CreateRead::Create, c.create_request()));
    }
    Step::wait(c, first)
}

#[derive(Debug)]
struct Create {
    project: String,
    repo: String,
    title: String,
    description: Option<String>,
    from: String,
    to: Option<String>,
    reviewers: Vec<String>,
    want_defaults: bool,
    draft: bool,
    repo_id: Option<u64>,
    defaults: Vec<String>,
    notes: Vec<String>,
}

impl Create {
    fn all_reviewers(&self) -> Vec<String> {
        let mut all = self.reviewers.clone();
        for d in &self.defaults {
            if !all.contains(d) {
                all.push(d.clone());
            }
        }
        all
    }

    /// The creation, with the reviewers asked for and the default ones.
    fn create_request(&self) -> FetchRequest {
        let reviewers = self.all_reviewers();
        let new = pull_request::New {
            title: &self.title,
            description: self.description.as_deref(),
            from: &self.from,
            to: self.to.as_deref().unwrap_or(""),
            reviewers: &reviewers,
            draft: self.draft,
        };
        pull_request::create(&self.project, &self.repo, &new)
    }
}

impl Plan for Create {
    type Read = CreateRead;

    fn on(
        &mut self,
        read: CreateRead,
        outcome: FetchOutcome,
        f: &mut Fetches<'_, '_, CreateRead>,
    ) -> Option<ToolResult> {
        let (project, repo) = (self.project.clone(), self.repo.clone());
        let about = Subject { project: &project, repo: &repo, pr: None };
        match read {
            CreateRead::Repo => match repository::id(&outcome, about) {
                Ok(id) => self.repo_id = id,
                Err(e) => return Some(ToolResult::error(e)),
            },
            CreateRead::DefaultBranch => match repository::default_branch(&outcome, about) {
                Ok(b) => match b.id {
                    Some(id) => self.to = Some(id),
                    None => return Some(ToolResult::error("The repository has no default branch: give to_ref.")),
                },
                Err(e) => {
                    return Some(ToolResult::error(format!("The default branch could not be read: {e} Give to_ref.")));
                }
            },
            CreateRead::DefaultReviewers => match errors::json::<Vec<Value>>(&outcome, about, None) {
                Ok(users) => {
                    self.defaults = users
                        .into_iter()
                        .filter_map(|u| serde_json::from_value::<User>(u).ok())
                        .filter_map(|u| u.name.or(u.slug))
                        .collect();
                }
                Err(e) => self.notes.push(format!("Default reviewers: not added — {e}")),
            },
            _ => return Some(self.created(&outcome)),
        }
        if f.waiting() > 0 {
            return None;
        }
        match (read, self.repo_id) {
            (CreateRead::Repo | CreateRead::DefaultBranch, Some(id)) if self.want_defaults => f.fetch(
                CreateRead::DefaultReviewers,
                crate::reads::pull_requests::default_reviewers_request(
                    &self.project,
                    &self.repo,
                    id,
                    &self.from,
                    self.to.as_deref(),
                ),
            ),
            _ => {
                if self.want_defaults && self.repo_id.is_none() && read != CreateRead::DefaultReviewers {
                    self.notes.push("Default reviewers: not added — Bitbucket did not say the repository's id.".into());
                }
                f.fetch(CreateRead::Create, self.create_request());
            }
        }
        None
    }
}

impl Create {
    fn created(&self, outcome: &FetchOutcome) -> ToolResult {
        let about = Subject { project: &self.project, repo: &self.repo, pr: None };
        let short = |r: &str| r.strip_prefix("refs/heads/").unwrap_or(r).to_owned();
        let check = format!(
            "look with list_pull_requests project={} repo={} source_branch={} before creating it again",
            self.project,
            self.repo,
            short(&self.from)
        );
        let write = Write { effect: "the pull request was created", check: &check };
        match errors::json::<PullRequest>(outcome, about, Some(write)) {
            Ok(pr) => {
                let reviewers: Vec<String> = pr.reviewers.iter().map(|r| r.user.handle().to_owned()).collect();
                let mut lines = vec![format!(
                    "Created PR #{} in {}/{}: {} → {}, version {}{}.",
                    pr.id.unwrap_or(0),
                    self.project,
                    self.repo,
                    one_line(&short(&self.from)),
                    one_line(&short(self.to.as_deref().unwrap_or("?"))),
                    pr.version.unwrap_or(0),
                    if pr.draft == Some(true) { ", draft" } else { "" }
                )];
                let from_defaults: Vec<&String> =
                    self.defaults.iter().filter(|d| !self.reviewers.contains(d)).collect();
                lines.push(match (reviewers.is_empty(), from_defaults.is_empty()) {
                    (true, _) => "Reviewers: none.".to_owned(),
                    (false, true) => format!("Reviewers: {}.", reviewers.join(", ")),
                    (false, false) => format!(
                        "Reviewers: {} (default reviewers added: {}).",
                        reviewers.join(", "),
                        from_defaults.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
                    ),
                });
                lines.extend(self.notes.iter().cloned());
                ToolResult::text(lines.join("\n"))
            }
            Err(e) => ToolResult::error(e),
        }
    }
}
