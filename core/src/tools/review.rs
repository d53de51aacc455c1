//! `submit_pr_review`: approve, request changes (Bitbucket's "Needs work") or withdraw a review, as
//! the user bb acts for, with an optional general comment.
//!
//! Requests: `PUT …/pull-requests/{id}/participants/{userSlug}` `{status}` acts for the current user
//! (400 for the author) [reference "Pull requests": spec]. The slug is the `X-AUSERNAME` of an earlier
//! answer [reference "Users": assumed for 9.x]; when no answer has named it yet, the pull request is
//! read first (1 GET), which also tells a missing pull request apart. The comment, if any, is posted
//! only once the status is set. Never retried: an unknown outcome says how to check.

use serde_json::{Map, Value, json};

use super::object;
use crate::args::string;
use crate::bitbucket::model::Comment;
use crate::errors::{self, Subject, Write};
use crate::fetch::{FetchOutcome, FetchRequest};
use crate::plan::{Fetches, Plan, Step, ToolResult};
use crate::reads::pull_request;
use crate::tool::{Access, Annotations, Call, Role, ToolSpec};
use crate::writes;
use crate::writes::comments::{self, Place};

/// Sets a status: a second identical call changes nothing; nothing is lost.
const SET: Annotations = Annotations { read_only: false, destructive: false, idempotent: true, open_world: true };

/// `submit_pr_review`, for the catalogue: a write as the current user.
pub const SPEC: ToolSpec = ToolSpec {
    name: "submit_pr_review",
    title: "Submit pull request review",
    description: "Approve, request changes (Needs work) or withdraw your review, with an optional comment.",
    input_schema: schema,
    access: Access::Write,
    role: Role::Data,
    annotations: SET,
    start,
};

fn schema() -> Value {
    object(
        json!({"project": super::project(), "repo": super::repo(), "pr_id": super::pr_id(),
               "action": {"type": "string", "enum": ["approve", "request_changes", "withdraw"], "description": "The verdict"},
               "comment": {"type": "string", "minLength": 1, "description": "A general comment to add with it (Markdown)"}}),
        &["project", "repo", "pr_id", "action"],
    )
}

/// The read and writes of `submit_pr_review`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ReviewRead {
    /// The pull request, whose response names the current user.
    PullRequest,
    /// The review status, set for the current user.
    Status,
    /// The review's comment.
    Comment,
}

fn start(args: &Map<String, Value>, call: &Call<'_>) -> Step {
    let (project, repo, id) = crate::args::pull_request(args);
    let (status, verb) = match string(args, "action") {
        Some("approve") => ("APPROVED", "Approved"),
        Some("request_changes") => ("NEEDS_WORK", "Marked as needs work"),
        _ => ("UNAPPROVED", "Withdrew the review of"),
    };
    let review =
        Review { project, repo, id, status, verb, comment: string(args, "comment").map(str::to_owned), user: None };
    let first = match call.bitbucket_user {
        Some(user) => (ReviewRead::Status, review.status_request(user)),
        None => (ReviewRead::PullRequest, pull_request::request(&review.project, &review.repo, id)),
    };
    let user = call.bitbucket_user.map(str::to_owned);
    Step::wait(Review { user, ..review }, vec![first])
}

#[derive(Debug)]
struct Review {
    project: String,
    repo: String,
    id: u64,
    status: &'static str,
    verb: &'static str,
    comment: Option<String>,
    user: Option<String>,
}

impl Review {
    fn status_request(&self, user: &str) -> FetchRequest {
        writes::pull_request::review(&self.project, &self.repo, self.id, user, self.status)
    }

    fn done(&self) -> String {
        format!(
            "{} PR #{} in {}/{} as {}",
            self.verb,
            self.id,
            self.project,
            self.repo,
            self.user.as_deref().unwrap_or("?")
        )
    }
}

impl Plan for Review {
    type Read = ReviewRead;

    fn on(
        &mut self,
        read: ReviewRead,
        outcome: FetchOutcome,
        f: &mut Fetches<'_, '_, ReviewRead>,
    ) -> Option<ToolResult> {
        let about = Subject { project: &self.project, repo: &self.repo, pr: Some(self.id) };
        match read {
            ReviewRead::PullRequest => {
                if let Err(e) = errors::body(&outcome, about, None) {
                    return Some(ToolResult::error(e));
                }
                let FetchOutcome::Response(r) = &outcome else { return None };
                let Some(user) = r.user.clone() else {
                    return Some(ToolResult::error(
                        "Bitbucket did not say which user bb acts as (no X-AUSERNAME header), so bb cannot set its review status; is bb configured with credentials?",
                    ));
                };
                f.fetch(ReviewRead::Status, self.status_request(&user));
                self.user = Some(user);
                None
            }
            ReviewRead::Status => {
                let write = Write {
                    effect: "the review status was set",
                    check: "read the pull request with get_pull_request to see its reviewers",
                };
                if let Err(e) = errors::body(&outcome, about, Some(write)) {
                    return Some(ToolResult::error(e));
                }
                match &self.comment {
                    Some(text) => {
                        let request =
                            comments::add(&self.project, &self.repo, self.id, text, Place::PullRequest, false);
                        f.fetch(ReviewRead::Comment, request);
                        None
                    }
                    None => Some(ToolResult::text(format!("{}.", self.done()))),
                }
            }
            _ => {
                let write =
                    Write { effect: "the comment was added", check: "look at list_pr_comments before adding it again" };
                Some(match errors::json::<Comment>(&outcome, about, Some(write)) {
                    Ok(c) => ToolResult::text(format!("{}, and added comment #{}.", self.done(), c.id.unwrap_or(0))),
                    Err(e) => ToolResult::error(format!("{}, but the comment failed: {e}", self.done())),
                })
            }
        }
    }
}
