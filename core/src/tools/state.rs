//! `decline_pull_request` and `reopen_pull_request`: a pull request's state, with the version bb reads itself.
//!
//! Requests: `GET …/pull-requests/{id}` (its state and version), then `POST …/decline?version=N` or
//! `POST …/reopen?version=N` with `{version}` [spec: 9.4 `decline`, `reopen`: 409 when the pull request is not in
//! the state the action needs or changed since the version given]. Only an open pull request is declined and only a
//! declined one reopened: bb says so from its read without writing. The POST is never retried; a stale version is
//! answered with what changed meanwhile ([`crate::text::pull_request::stale`]). 2 requests; 1 when there is nothing to do.

use serde_json::{Map, Value, json};

use super::object;
use super::versioned::{self, Written};
use crate::bitbucket::model::PullRequest;
use crate::errors::{self, Subject, Write};
use crate::fetch::{FetchOutcome, FetchRequest};
use crate::plan::{Fetches, Plan, Step, ToolResult};
use crate::reads::pull_request;
use crate::text::pull_request::stale;
use crate::tool::{Access, Annotations, Asks, Call, Role, Scoped, ToolSpec, Toolset};
use crate::writes;

/// Not destructive: a decline changes only the state, and reopen_pull_request sets it back (reviewers, comments
/// and the branches stay; [assumed] approvals too), and the reverse. Idempotent: the same call again finds the
/// pull request already in that state and writes nothing. A write a person can undo: exposed without
/// `--allow-writes`.
const TOGGLE: Annotations = Annotations { read_only: false, destructive: false, idempotent: true, open_world: true };

/// `decline_pull_request`.
pub const DECLINE_SPEC: ToolSpec = ToolSpec {
    name: "decline_pull_request",
    title: "Decline pull request",
    description: "Decline an open pull request (reopen_pull_request undoes it).",
    input_schema: schema,
    access: Access::Write,
    asks: Asks::Never,
    scope: Scoped::Repository,
    role: Role::Data(Toolset::PullRequests),
    annotations: TOGGLE,
    start: start_decline,
};

/// `reopen_pull_request`.
pub const REOPEN_SPEC: ToolSpec = ToolSpec {
    name: "reopen_pull_request",
    title: "Reopen pull request",
    description: "Reopen a declined pull request.",
    input_schema: schema,
    access: Access::Write,
    asks: Asks::Never,
    scope: Scoped::Repository,
    role: Role::Data(Toolset::PullRequests),
    annotations: TOGGLE,
    start: start_reopen,
};

fn schema() -> Value {
    object(
        json!({"project": super::project(), "repo": super::repo(), "pr_id": super::pr_id()}),
        &["project", "repo", "pr_id"],
    )
}

/// Which way the state goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Action {
    Decline,
    Reopen,
}

impl Action {
    /// The state it needs, the state it leaves, and the past participle.
    fn states(self) -> (&'static str, &'static str, &'static str) {
        match self {
            Action::Decline => ("OPEN", "DECLINED", "declined"),
            Action::Reopen => ("DECLINED", "OPEN", "reopened"),
        }
    }
}

fn start_decline(args: &Map<String, Value>, _: &Call<'_>) -> Step {
    start(args, Action::Decline)
}

fn start_reopen(args: &Map<String, Value>, _: &Call<'_>) -> Step {
    start(args, Action::Reopen)
}

fn start(args: &Map<String, Value>, action: Action) -> Step {
    let (project, repo, id) = crate::args::pull_request(args);
    let first = pull_request::request(&project, &repo, id);
    Step::wait(Change { project, repo, id, action, read: None }, vec![(StateRead::PullRequest, first)])
}

/// The reads and the write of a state change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StateRead {
    /// The pull request, for its state and version.
    PullRequest,
    /// The decline or reopen.
    Act,
    /// The pull request once more, after a 409 that did not carry it.
    Again,
}

#[derive(Debug)]
struct Change {
    project: String,
    repo: String,
    id: u64,
    action: Action,
    read: Option<PullRequest>,
}

impl Change {
    fn name(&self) -> String {
        format!("PR #{} in {}/{}", self.id, self.project, self.repo)
    }

    /// The request, or the answer when the state says there is nothing to write.
    fn plan(&self, pr: &PullRequest) -> Result<FetchRequest, ToolResult> {
        let (needs, leaves, done) = self.action.states();
        match pr.state.as_deref() {
            Some(s) if s == leaves => {
                let now = leaves.to_lowercase();
                return Err(ToolResult::text(format!("{} is already {now}: nothing to do.", self.name())));
            }
            Some(s) if s == needs => {}
            other => {
                let state = other.unwrap_or("in no state Bitbucket named").to_lowercase();
                return Err(ToolResult::error(format!(
                    "{} is {state}; only {} pull request can be {done}.",
                    self.name(),
                    if needs == "OPEN" { "an open" } else { "a declined" }
                )));
            }
        }
        let Some(version) = pr.version else {
            return Err(ToolResult::error(format!(
                "Bitbucket did not say {}'s version, so bb cannot change it; nothing was changed.",
                self.name()
            )));
        };
        Ok(match self.action {
            Action::Decline => writes::pull_request::decline(&self.project, &self.repo, self.id, version),
            Action::Reopen => writes::pull_request::reopen(&self.project, &self.repo, self.id, version),
        })
    }
}

impl Plan for Change {
    type Read = StateRead;

    fn on(&mut self, read: StateRead, outcome: FetchOutcome, f: &mut Fetches<'_, '_, StateRead>) -> Option<ToolResult> {
        let (project, repo) = (self.project.clone(), self.repo.clone());
        let about = Subject { project: &project, repo: &repo, pr: Some(self.id) };
        let (_, _, done) = self.action.states();
        match read {
            StateRead::PullRequest => {
                let read = versioned::read(&outcome, about, |pr| self.plan(pr), f, StateRead::Act);
                read.map(|pr| self.read = Some(pr)).err()
            }
            StateRead::Act => {
                let effect = format!("the pull request was {done}");
                let write = Write { effect: &effect, check: "read it with get_pull_request before trying again" };
                match versioned::written(&outcome, about, write, errors::json::<PullRequest>) {
                    Written::Done(after) => {
                        let undo = if self.action == Action::Decline { " reopen_pull_request undoes it." } else { "" };
                        Some(ToolResult::text(format!(
                            "{} {}: state {}, version {}.{undo}",
                            if self.action == Action::Decline { "Declined" } else { "Reopened" },
                            self.name(),
                            after.state.as_deref().unwrap_or("?"),
                            after.version.map(|v| v.to_string()).unwrap_or_else(|| "?".into())
                        )))
                    }
                    Written::Stale { now: Some(now), .. } => {
                        Some(ToolResult::error(stale(self.id, self.read.as_ref(), &now, done)))
                    }
                    Written::Stale { now: None, .. } => {
                        f.fetch(StateRead::Again, pull_request::request(&self.project, &self.repo, self.id));
                        None
                    }
                    Written::Failed(e) => Some(ToolResult::error(e)),
                }
            }
            StateRead::Again => Some(ToolResult::error(match errors::json::<PullRequest>(&outcome, about, None) {
                Ok(now) => stale(self.id, self.read.as_ref(), &now, done),
                Err(e) => versioned::again_failed(&format!("PR #{}", self.id), done, &e),
            })),
        }
    }
}
