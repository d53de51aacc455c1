//! `submit_pr_review`: approve, request changes (Bitbucket's "Needs work") or withdraw a review, as
//! the user bb acts for, with an optional general comment.
//!
//! Requests: `PUT …/pull-requests/{id}/participants/{userSlug}` `{status}` acts for the current user
//! (400 for the author) [reference "Pull requests": spec]. The slug is the `X-AUSERNAME` of an earlier
//! answer [reference "Users": assumed for 9.x]; when no answer has named it yet, the pull request is
//! read first (1 GET), which also tells a missing pull request apart. The comment, if any, is posted
//! only once the status is set. Never retried: an unknown outcome says how to check.

use serde_json::{Map, Value, json};

use super::flow::{self, Fetcher, Flow};
use super::{Decl, object, pr_args, s};
use crate::bitbucket::errors::{self, Subject, Write};
use crate::bitbucket::model::Comment;
use crate::bitbucket::{pr_path, segment};
use crate::catalogue::{Access, Annotations, CallContext};
use crate::plan::{FetchOutcome, FetchRequest, Method, PlanContext, Step, ToolResult};

/// Sets a status: a second identical call changes nothing; nothing is lost.
const SET: Annotations = Annotations { read_only: false, destructive: false, idempotent: true, open_world: true };

/// The tool.
pub const SPEC: Decl = Decl {
    name: "submit_pr_review",
    title: "Submit pull request review",
    description: "Review a pull request as bb's user: approve, request_changes (Bitbucket's \"Needs work\") or withdraw (back to no verdict), with an optional comment. The author cannot review their own pull request.",
    schema,
    access: Access::Write,
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

const READ_PR: u32 = 0;
const SET_STATUS: u32 = 1;
const COMMENT: u32 = 2;

fn start(args: &Map<String, Value>, cx: &mut PlanContext, call: &CallContext<'_>) -> Step {
    let (project, repo, id) = pr_args(args);
    let (status, verb) = match s(args, "action") {
        Some("approve") => ("APPROVED", "Approved"),
        Some("request_changes") => ("NEEDS_WORK", "Marked as needs work"),
        _ => ("UNAPPROVED", "Withdrew the review of"),
    };
    let review = Review { project, repo, id, status, verb, comment: s(args, "comment").map(str::to_owned), user: None };
    let first = match call.bitbucket_user {
        Some(user) => (SET_STATUS, review.status_request(user)),
        None => (READ_PR, FetchRequest::get(pr_path(&review.project, &review.repo, id), vec![])),
    };
    let user = call.bitbucket_user.map(str::to_owned);
    flow::start(Review { user, ..review }, cx, vec![first])
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
        FetchRequest {
            method: Method::Put,
            path: format!("{}/participants/{}", pr_path(&self.project, &self.repo, self.id), segment(user)),
            query: vec![],
            body: Some(json!({"status": self.status})),
        }
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

impl Flow for Review {
    fn on(&mut self, slot: u32, outcome: FetchOutcome, f: &mut Fetcher<'_>) -> Option<ToolResult> {
        let about = Subject { project: &self.project, repo: &self.repo, pr: Some(self.id) };
        match slot {
            READ_PR => {
                if let Err(e) = errors::body(&outcome, about, None) {
                    return Some(ToolResult::error(e));
                }
                let FetchOutcome::Response(r) = &outcome else { return None };
                let Some(user) = r.user.clone() else {
                    return Some(ToolResult::error(
                        "Bitbucket did not say which user bb acts as (no X-AUSERNAME header), so bb cannot set its review status; is bb configured with credentials?",
                    ));
                };
                f.fetch(SET_STATUS, self.status_request(&user));
                self.user = Some(user);
                None
            }
            SET_STATUS => {
                let write = Write {
                    effect: "the review status was set",
                    check: "read the pull request with get_pull_request to see its reviewers",
                };
                if let Err(e) = errors::body(&outcome, about, Some(write)) {
                    return Some(ToolResult::error(e));
                }
                match &self.comment {
                    Some(text) => {
                        let request = FetchRequest {
                            method: Method::Post,
                            path: format!("{}/comments", pr_path(&self.project, &self.repo, self.id)),
                            query: vec![],
                            body: Some(json!({"text": text})),
                        };
                        f.fetch(COMMENT, request);
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
