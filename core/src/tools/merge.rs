//! `merge_pull_request`: merges with Bitbucket's version check; vetoes come back in Bitbucket's words.
//! An unsafe write: exposed only with `--allow-writes` or when named in `--tools`.
//!
//! Requests: one POST `…/merge?version=N` `{version, message?}` [reference "Pull requests": rec], never
//! retried; a stale version answers with the current one, a veto with Bitbucket's reasons.

use serde_json::{Map, Value, json};

use super::object;
use crate::args::{number, string};
use crate::bitbucket::model::PullRequest;
use crate::errors::{self, Subject, Write};
use crate::fetch::FetchOutcome;
use crate::plan::{Fetches, Plan, Step, ToolResult};
use crate::text::short_commit;
use crate::tool::{Asks, Access, Annotations, Call, Role, ToolSpec, Toolset};
use crate::writes;

/// `merge_pull_request`, for the catalogue: an unsafe write, exposed only when asked for.
pub const SPEC: ToolSpec = ToolSpec {
    name: "merge_pull_request",
    title: "Merge pull request",
    description: "Merge a pull request at the version you read; a veto comes back in Bitbucket's words.",
    input_schema: schema,
    access: Access::UnsafeWrite,
    asks: Asks::Never,
    role: Role::Data(Toolset::PullRequests),
    annotations: Annotations::IRREVERSIBLE,
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

fn start(args: &Map<String, Value>, _: &Call<'_>) -> Step {
    let (project, repo, id) = crate::args::pull_request(args);
    let version = number(args, "version").unwrap_or(0);
    let request = writes::pull_request::merge(&project, &repo, id, version, string(args, "message"));
    Step::wait(Merge { project, repo, id }, vec![((), request)])
}

#[derive(Debug)]
struct Merge {
    project: String,
    repo: String,
    id: u64,
}

impl Plan for Merge {
    type Read = ();

    fn on(&mut self, _: (), outcome: FetchOutcome, _: &mut Fetches<'_, '_, ()>) -> Option<ToolResult> {
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
