//! `create_pull_request`: opens a pull request; the target defaults to the repository's default branch and
//! the repository's default reviewers are added unless told not to.
//!
//! Requests, in stages: the repository (its id, for default reviewers) and the default branch (when no
//! `to_ref`) in parallel; then the default reviewers for the branch pair; then the POST (never retried).
//! 4 at most, 1 with `to_ref` and `default_reviewers: false`. A default-reviewer lookup that fails costs
//! one line, not the pull request. [reference "Pull requests" and "Projects, …": spec, rec]

use serde_json::{Map, Value, json};

use super::flow::{self, Fetcher, Flow};
use super::text::one_line;
use super::{ADD, Decl, b, object, s};
use crate::bitbucket::errors::{self, Subject, Write};
use crate::bitbucket::model::{PullRequest, Repository, User};
use crate::bitbucket::{repo_path, segment};
use crate::catalogue::{Access, CallContext};
use crate::plan::{FetchOutcome, FetchRequest, Method, PlanContext, Step, ToolResult};

/// The tool.
pub const SPEC: Decl = Decl {
    name: "create_pull_request",
    title: "Create pull request",
    description: "Open a pull request from from_ref into to_ref (default: the default branch), adding the repository's default reviewers unless default_reviewers=false.",
    schema,
    access: Access::Write,
    annotations: ADD,
    start,
};

fn schema() -> Value {
    object(
        json!({"project": super::project(), "repo": super::repo(),
               "title": {"type": "string", "minLength": 1, "description": "Title"},
               "from_ref": {"type": "string", "minLength": 1, "description": "Source branch"},
               "to_ref": {"type": "string", "minLength": 1, "description": "Target branch"},
               "description": {"type": "string", "description": "Description (Markdown)"},
               "reviewers": {"type": "array", "items": {"type": "string"}, "maxItems": 50, "description": "Reviewer usernames"},
               "default_reviewers": {"type": "boolean", "default": true, "description": "Add default reviewers"},
               "draft": {"type": "boolean", "description": "Open as a draft (8.18+)"}}),
        &["project", "repo", "title", "from_ref"],
    )
}

const REPO: u32 = 0;
const DEFAULT_BRANCH: u32 = 1;
const DEFAULT_REVIEWERS: u32 = 2;
const CREATE: u32 = 3;

fn full_ref(branch: &str) -> String {
    if branch.starts_with("refs/") { branch.to_owned() } else { format!("refs/heads/{branch}") }
}

fn start(args: &Map<String, Value>, cx: &mut PlanContext, _: &CallContext<'_>) -> Step {
    let project = s(args, "project").unwrap_or("").to_owned();
    let repo = s(args, "repo").unwrap_or("").to_owned();
    let reviewers: Vec<String> = args
        .get("reviewers")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).map(str::to_owned).collect())
        .unwrap_or_default();
    let c = Create {
        project,
        repo,
        title: s(args, "title").unwrap_or("").to_owned(),
        description: s(args, "description").map(str::to_owned),
        from: full_ref(s(args, "from_ref").unwrap_or("")),
        to: s(args, "to_ref").map(full_ref),
        reviewers,
        want_defaults: b(args, "default_reviewers") != Some(false),
        draft: b(args, "draft") == Some(true),
        repo_id: None,
        defaults: Vec::new(),
        notes: Vec::new(),
    };
    let mut first = Vec::new();
    if c.want_defaults {
        first.push((REPO, FetchRequest::get(repo_path(&c.project, &c.repo), vec![])));
    }
    if c.to.is_none() {
        // The default branch (older servers: `…/branches/default`). [reference "Projects, …": spec]
        first.push((
            DEFAULT_BRANCH,
            FetchRequest::get(format!("{}/default-branch", repo_path(&c.project, &c.repo)), vec![]),
        ));
    }
    if first.is_empty() {
        first.push((CREATE, c.create_request()));
    }
    flow::start(c, cx, first)
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

    /// `POST …/pull-requests` `{title, description, fromRef, toRef, reviewers[{user{name}}], draft?}`. [reference: rec]
    fn create_request(&self) -> FetchRequest {
        let end = |id: &str| json!({"id": id, "repository": {"slug": self.repo, "project": {"key": self.project}}});
        let reviewers: Vec<Value> = self.all_reviewers().iter().map(|r| json!({"user": {"name": r}})).collect();
        let mut body = json!({
            "title": self.title,
            "fromRef": end(&self.from),
            "toRef": end(self.to.as_deref().unwrap_or("")),
            "reviewers": reviewers,
        });
        if let Some(d) = &self.description {
            body["description"] = json!(d);
        }
        if self.draft {
            body["draft"] = json!(true);
        }
        FetchRequest {
            method: Method::Post,
            path: format!("{}/pull-requests", repo_path(&self.project, &self.repo)),
            query: vec![],
            body: Some(body),
        }
    }

    /// Default reviewers for the pair: a bare array of users. [reference "Pull requests": rec]
    fn defaults_request(&self, repo_id: u64) -> FetchRequest {
        FetchRequest::get(
            format!(
                "/rest/default-reviewers/latest/projects/{}/repos/{}/reviewers",
                segment(&self.project),
                segment(&self.repo)
            ),
            vec![
                ("sourceRepoId".into(), repo_id.to_string()),
                ("targetRepoId".into(), repo_id.to_string()),
                ("sourceRefId".into(), self.from.clone()),
                ("targetRefId".into(), self.to.clone().unwrap_or_default()),
            ],
        )
    }
}

impl Flow for Create {
    fn on(&mut self, slot: u32, outcome: FetchOutcome, f: &mut Fetcher<'_>) -> Option<ToolResult> {
        let (project, repo) = (self.project.clone(), self.repo.clone());
        let about = Subject { project: &project, repo: &repo, pr: None };
        match slot {
            REPO => match errors::json::<Repository>(&outcome, about, None) {
                Ok(r) => self.repo_id = r.id,
                Err(e) => return Some(ToolResult::error(e)),
            },
            DEFAULT_BRANCH => match errors::json::<Value>(&outcome, about, None) {
                Ok(v) => match v.get("id").and_then(Value::as_str) {
                    Some(id) => self.to = Some(id.to_owned()),
                    None => return Some(ToolResult::error("The repository has no default branch: give to_ref.")),
                },
                Err(e) => {
                    return Some(ToolResult::error(format!("The default branch could not be read: {e} Give to_ref.")));
                }
            },
            DEFAULT_REVIEWERS => match errors::json::<Vec<Value>>(&outcome, about, None) {
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
        match (slot, self.repo_id) {
            (REPO | DEFAULT_BRANCH, Some(id)) if self.want_defaults => {
                f.fetch(DEFAULT_REVIEWERS, self.defaults_request(id))
            }
            _ => {
                if self.want_defaults && self.repo_id.is_none() && slot != DEFAULT_REVIEWERS {
                    self.notes.push("Default reviewers: not added — Bitbucket did not say the repository's id.".into());
                }
                f.fetch(CREATE, self.create_request());
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
