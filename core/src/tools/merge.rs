//! `merge_pull_request`: merges with Bitbucket's version check; vetoes come back in Bitbucket's words.
//! An unsafe write: exposed only with `--allow-writes` or when named in `--tools`.
//!
//! Requests: one POST `…/merge?version=N` `{version, message?}` [reference "Pull requests": rec], never
//! retried; a stale version answers with the current one, a veto with Bitbucket's reasons.

use serde_json::{Map, Value, json};

use super::flow::{self, Fetcher, Flow};
use super::text::short_commit;
use super::{Decl, MERGE, n, object, pr_args, s};
use crate::bitbucket::errors::{self, Subject, Write};
use crate::bitbucket::model::PullRequest;
use crate::bitbucket::pr_path;
use crate::catalogue::{Access, CallContext};
use crate::plan::{FetchOutcome, FetchRequest, Method, PlanContext, Step, ToolResult};

/// The tool.
pub const SPEC: Decl = Decl {
    name: "merge_pull_request",
    title: "Merge pull request",
    description: "Merge a pull request. Needs the version get_pull_request showed; a changed pull request or a failing merge check (builds, approvals, tasks) is refused with Bitbucket's reasons.",
    schema,
    access: Access::UnsafeWrite,
    annotations: MERGE,
    start,
};

fn schema() -> Value {
    object(
        json!({"project": super::project(), "repo": super::repo(), "pr_id": super::pr_id(),
               "version": {"type": "integer", "minimum": 0, "description": "The version you read"},
               "message": {"type": "string", "description": "Merge commit message"}}),
        &["project", "repo", "pr_id", "version"],
    )
}

fn start(args: &Map<String, Value>, cx: &mut PlanContext, _: &CallContext<'_>) -> Step {
    let (project, repo, id) = pr_args(args);
    let version = n(args, "version").unwrap_or(0);
    let mut body = json!({"version": version});
    if let Some(m) = s(args, "message") {
        body["message"] = json!(m);
    }
    let request = FetchRequest {
        method: Method::Post,
        path: format!("{}/merge", pr_path(&project, &repo, id)),
        query: vec![("version".into(), version.to_string())],
        body: Some(body),
    };
    flow::start(Merge { project, repo, id }, cx, vec![(0, request)])
}

#[derive(Debug)]
struct Merge {
    project: String,
    repo: String,
    id: u64,
}

impl Flow for Merge {
    fn on(&mut self, _: u32, outcome: FetchOutcome, _: &mut Fetcher<'_>) -> Option<ToolResult> {
        let about = Subject { project: &self.project, repo: &self.repo, pr: Some(self.id) };
        let write = Write {
            effect: "the pull request was merged",
            check: "read it with get_pull_request (state MERGED or not) before merging again",
        };
        Some(match errors::json::<PullRequest>(&outcome, about, Some(write)) {
            Ok(pr) => {
                let to = pr.to_ref.as_ref().map(|r| r.name().to_owned()).unwrap_or_else(|| "?".into());
                let state = pr.state.as_deref().unwrap_or("?");
                let head = pr.to_ref.as_ref().and_then(|r| r.latest_commit.as_deref());
                let mut text = format!(
                    "Merged PR #{} into {to} in {}/{}: state {state}, version {}",
                    self.id,
                    self.project,
                    self.repo,
                    pr.version.unwrap_or(0)
                );
                if head.is_some() {
                    text.push_str(&format!(", target at {}", short_commit(head)));
                }
                text.push('.');
                ToolResult::text(text)
            }
            Err(e) => ToolResult::error(e),
        })
    }
}
