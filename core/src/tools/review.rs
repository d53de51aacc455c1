//! `submit_pr_review`: finishes the review of the user bb acts as — publishes their drafts and approves,
//! requests changes (Bitbucket's "Needs work"), only comments, or withdraws — with an optional summary comment
//! and the commit reviewed; and `discard_pr_review`, which deletes the drafts.
//!
//! Requests (7.7+): `GET …/pull-requests/{id}/review` (the drafts, to count them and to tell whether the server
//! keeps reviews at all), then `PUT …/review` `{participantStatus?, commentText?, lastReviewedCommit?}`, which
//! publishes every draft, adds the summary and sets the status in one request; a stale lastReviewedCommit is 409
//! PullRequestOutOfDateException and nothing changes. `DELETE …/review` discards. [javadoc
//! PullRequestFinishReviewRequest "Since 7.7", lastReviewedCommit "Since 8.9.18, 8.19.7, 9.0.1, 9.1"; DC OpenAPI
//! 9.2 `finishReview`, `discardReview`] `PUT …/participants/{slug}` sets a status but leaves drafts unpublished
//! (a peer found this live on DC 9.3), so it is used only where the server has no `…/review` (before 7.7, a 404):
//! there the status is set with it (400 for the author) [reference "Pull requests": spec], the slug being the
//! `X-AUSERNAME` of an earlier answer or, when none has named it yet, of the pull request read first, and the
//! summary is posted once the status is set. Never retried: an unknown outcome says how to check.

use serde_json::{Map, Value, json};

use super::ask::{self, About};
use super::object;
use super::versioned::{self, Written};
use crate::args::string;
use crate::bitbucket::RawPage;
use crate::bitbucket::model::Comment;
use crate::bitbucket::model::PullRequest;
use crate::confirm::{Confirming, Question};
use crate::errors::{self, Subject, Write};
use crate::fetch::{FetchOutcome, FetchRequest};
use crate::plan::{Fetches, Plan, Step, ToolResult};
use crate::reads::{pull_request, review};
use crate::text::short;
use crate::tool::{Access, Annotations, Asks, Call, Role, Scoped, ToolSpec, Toolset};
use crate::writes;
use crate::writes::comments::{self, Place};

/// Sets a status: a second identical call changes nothing; nothing is lost.
const SET: Annotations = Annotations { read_only: false, destructive: false, idempotent: true, open_world: true };

/// `submit_pr_review`, for the catalogue: a write as the current user.
pub const SPEC: ToolSpec = ToolSpec {
    name: "submit_pr_review",
    title: "Submit pull request review",
    description: "Finish your review: publish your drafts; approve, request changes (Needs work), comment only or withdraw.",
    input_schema: schema,
    access: Access::Write,
    asks: Asks::When {
        applies: decides,
        case: "when it approves or says Needs work",
        untouched: "the review was not submitted",
    },
    scope: Scoped::Repository,
    role: Role::Data(Toolset::PullRequests),
    annotations: SET,
    start,
};

fn schema() -> Value {
    object(
        json!({"project": super::project(), "repo": super::repo(), "pr_id": super::pr_id(),
               "action": {"type": "string", "enum": ["approve", "request_changes", "comment", "withdraw"], "description": "Verdict"},
               "comment": {"type": "string", "description": "Summary (Markdown)"},
               "commit": {"type": "string", "description": "Commit reviewed (refused if stale)"}}),
        &["project", "repo", "pr_id", "action"],
    )
}

/// The reads and writes of `submit_pr_review`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ReviewRead {
    /// The pending review: its drafts, and whether the server keeps reviews (7.7+).
    Drafts,
    /// `PUT …/review`.
    Finish,
    /// Before 7.7: the pull request, whose response names the current user.
    PullRequest,
    /// Before 7.7: the review status, set for the current user.
    Status,
    /// Before 7.7: the summary comment.
    Comment,
}

/// Whether a review decides whether the pull request may merge (approve, Needs work): then it asks.
fn decides(args: &Map<String, Value>) -> bool {
    matches!(string(args, "action"), Some("approve" | "request_changes"))
}

/// The question before an approval or a Needs work.
fn question(about: &About, pr: &PullRequest, args: &Map<String, Value>) -> Result<Question, String> {
    ask::open(about, pr, "is reviewed")?;
    let (verb, confirm) = match string(args, "action") {
        Some("approve") => ("Approve", format!("Approve #{}", about.id)),
        _ => ("Mark as Needs work", format!("Needs work on #{}", about.id)),
    };
    Ok(Question {
        message: format!(
            "{verb} {} as you, publishing your draft comments{}.",
            about.named(pr),
            if string(args, "comment").is_some() { " and the summary comment" } else { "" }
        ),
        confirm,
        pin: ask::pin(pr),
    })
}

fn start(args: &Map<String, Value>, call: &Call<'_>) -> Step {
    let (project, repo, id) = crate::args::pull_request(args);
    if call.confirming == Confirming::Ask {
        return ask::about_pull_request(About::new(project, repo, id), args, false, question);
    }
    let (status, verb) = match string(args, "action") {
        Some("approve") => (Some("APPROVED"), "approved"),
        Some("request_changes") => (Some("NEEDS_WORK"), "marked as needs work"),
        Some("comment") => (None, "commented on"),
        _ => (Some("UNAPPROVED"), "withdrew the review of"),
    };
    let first = review::request(&project, &repo, id);
    let review = Review {
        project,
        repo,
        id,
        status,
        verb,
        comment: string(args, "comment").map(str::to_owned),
        commit: string(args, "commit").map(str::to_owned),
        user: call.bitbucket_user.map(str::to_owned),
        drafts: None,
    };
    Step::wait(review, vec![(ReviewRead::Drafts, first)])
}

#[derive(Debug)]
struct Review {
    project: String,
    repo: String,
    id: u64,
    status: Option<&'static str>,
    verb: &'static str,
    comment: Option<String>,
    commit: Option<String>,
    user: Option<String>,
    /// The drafts counted before publishing.
    drafts: Option<usize>,
}

impl Review {
    fn status_request(&self, user: &str, status: &str) -> FetchRequest {
        writes::pull_request::review(&self.project, &self.repo, self.id, user, status)
    }

    fn name(&self) -> String {
        format!("PR #{} in {}/{}", self.id, self.project, self.repo)
    }

    /// What the finished review did, as one sentence's start.
    fn done(&self) -> String {
        let who = self.user.as_deref().map(|u| format!(" as {u}")).unwrap_or_default();
        let published = match self.drafts {
            Some(0) | None => String::new(),
            Some(1) => "Published 1 draft comment and ".to_owned(),
            Some(n) => format!("Published {n} draft comments and "),
        };
        let verb = if published.is_empty() {
            let mut v = self.verb.to_owned();
            v[..1].make_ascii_uppercase();
            v
        } else {
            self.verb.to_owned()
        };
        format!("{published}{verb} {}{who}", self.name())
    }

    /// The old path (before 7.7): the status with the participants PUT, then the summary.
    fn old_path(&mut self, f: &mut Fetches<'_, '_, ReviewRead>) -> Option<ToolResult> {
        match (self.status, self.user.clone()) {
            (Some(status), Some(user)) => f.fetch(ReviewRead::Status, self.status_request(&user, status)),
            (Some(_), None) => {
                f.fetch(ReviewRead::PullRequest, pull_request::request(&self.project, &self.repo, self.id));
            }
            (None, _) => return self.post_comment(f),
        }
        None
    }

    fn post_comment(&mut self, f: &mut Fetches<'_, '_, ReviewRead>) -> Option<ToolResult> {
        match &self.comment {
            Some(text) => {
                let request = comments::add(&self.project, &self.repo, self.id, text, Place::PullRequest, false, false);
                f.fetch(ReviewRead::Comment, request);
                None
            }
            None if self.status.is_none() => {
                Some(ToolResult::error(format!("Nothing to submit on {}: no drafts and no comment.", self.name())))
            }
            None => Some(ToolResult::text(format!("{}.", self.done()))),
        }
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
            ReviewRead::Drafts => {
                if let FetchOutcome::Response(r) = &outcome
                    && let Some(user) = &r.user
                {
                    self.user = Some(user.clone());
                }
                if review::absent(&outcome) {
                    // No `…/review` here: a server before 7.7, which keeps no drafts.
                    return self.old_path(f);
                }
                let drafts = match errors::json::<RawPage>(&outcome, about, None) {
                    Ok(p) => review::drafts(&p),
                    Err(e) => return Some(ToolResult::error(format!("{e} Nothing was submitted."))),
                };
                let count = review::count(&drafts);
                self.drafts = Some(count);
                if count == 0 && self.status.is_none() && self.comment.is_none() {
                    return Some(ToolResult::error(format!(
                        "Nothing to submit on {}: you have no drafts and gave no comment.",
                        self.name()
                    )));
                }
                let request = writes::comments::finish_review(
                    &self.project,
                    &self.repo,
                    self.id,
                    self.status,
                    self.comment.as_deref(),
                    self.commit.as_deref(),
                );
                f.fetch(ReviewRead::Finish, request);
                None
            }
            ReviewRead::Finish => {
                let write = Write {
                    effect: "the review was published",
                    check: "list_pr_comments with drafts: true shows what is still a draft",
                };
                match versioned::written(&outcome, about, write, errors::body) {
                    Written::Done(_) => {
                        let summary = if self.comment.is_some() { ", with your summary comment" } else { "" };
                        Some(ToolResult::text(format!("{}{summary}.", self.done())))
                    }
                    Written::Stale { said, .. } => Some(ToolResult::error(format!(
                        "{} has changed since commit {}{}: nothing was published and your status is unchanged. Read what changed (get_pull_request_diff with since: {}), then submit again.",
                        self.name(),
                        self.commit.as_deref().map(|c| short(c, 12)).unwrap_or_else(|| "reviewed".into()),
                        Some(said)
                            .filter(|m| !m.is_empty())
                            .map(|m| format!(" (Bitbucket: \"{m}\")"))
                            .unwrap_or_default(),
                        self.commit.as_deref().unwrap_or("last_review"),
                    ))),
                    Written::Failed(e) => Some(ToolResult::error(e)),
                }
            }
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
                self.user = Some(user);
                self.old_path(f)
            }
            ReviewRead::Status => {
                let write = Write {
                    effect: "the review status was set",
                    check: "read the pull request with get_pull_request to see its reviewers",
                };
                if let Err(e) = errors::body(&outcome, about, Some(write)) {
                    return Some(ToolResult::error(e));
                }
                self.post_comment(f)
            }
            ReviewRead::Comment => {
                let write =
                    Write { effect: "the comment was added", check: "look at list_pr_comments before adding it again" };
                Some(match errors::json::<Comment>(&outcome, about, Some(write)) {
                    Ok(c) if self.status.is_none() => ToolResult::text(format!(
                        "Added comment #{} to {} (this Bitbucket, before 7.7, keeps no drafts).",
                        c.id.unwrap_or(0),
                        self.name()
                    )),
                    Ok(c) => ToolResult::text(format!("{}, and added comment #{}.", self.done(), c.id.unwrap_or(0))),
                    Err(e) if self.status.is_none() => ToolResult::error(e),
                    Err(e) => ToolResult::error(format!("{}, but the comment failed: {e}", self.done())),
                })
            }
        }
    }
}

/// Deletes drafts: gone from Bitbucket, and a second call finds none. A write the person cannot undo.
const DISCARD: Annotations = Annotations { read_only: false, destructive: true, idempotent: true, open_world: true };

/// `discard_pr_review`, for the catalogue.
pub const DISCARD_SPEC: ToolSpec = ToolSpec {
    name: "discard_pr_review",
    title: "Discard pull request review",
    description: "Delete your unpublished drafts on a pull request.",
    input_schema: discard_schema,
    access: Access::Write,
    asks: Asks::Never,
    scope: Scoped::Repository,
    role: Role::Data(Toolset::PullRequests),
    annotations: DISCARD,
    start: start_discard,
};

fn discard_schema() -> Value {
    object(
        json!({"project": super::project(), "repo": super::repo(), "pr_id": super::pr_id()}),
        &["project", "repo", "pr_id"],
    )
}

fn start_discard(args: &Map<String, Value>, _: &Call<'_>) -> Step {
    let (project, repo, id) = crate::args::pull_request(args);
    let first = review::request(&project, &repo, id);
    Step::wait(Discard { project, repo, id, drafts: 0 }, vec![(DiscardRead::Drafts, first)])
}

/// The read and the write of `discard_pr_review`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DiscardRead {
    /// The drafts, counted.
    Drafts,
    /// `DELETE …/review`.
    Delete,
}

#[derive(Debug)]
struct Discard {
    project: String,
    repo: String,
    id: u64,
    drafts: usize,
}

impl Plan for Discard {
    type Read = DiscardRead;

    fn on(
        &mut self,
        read: DiscardRead,
        outcome: FetchOutcome,
        f: &mut Fetches<'_, '_, DiscardRead>,
    ) -> Option<ToolResult> {
        let about = Subject { project: &self.project, repo: &self.repo, pr: Some(self.id) };
        let name = format!("PR #{} in {}/{}", self.id, self.project, self.repo);
        match read {
            DiscardRead::Drafts => {
                if review::absent(&outcome) {
                    return Some(ToolResult::error(format!(
                        "This Bitbucket keeps no drafts (before 7.7): there is no review to discard on {name}."
                    )));
                }
                match errors::json::<RawPage>(&outcome, about, None) {
                    Ok(p) => self.drafts = review::count(&review::drafts(&p)),
                    Err(e) => return Some(ToolResult::error(format!("{e} Nothing was discarded."))),
                }
                if self.drafts == 0 {
                    return Some(ToolResult::text(format!("You have no drafts on {name}: nothing to discard.")));
                }
                f.fetch(DiscardRead::Delete, writes::comments::discard_review(&self.project, &self.repo, self.id));
                None
            }
            DiscardRead::Delete => {
                let write = Write {
                    effect: "the drafts were discarded",
                    check: "list_pr_comments with drafts: true shows what is still a draft",
                };
                Some(match errors::body(&outcome, about, Some(write)) {
                    Ok(_) => ToolResult::text(format!(
                        "Discarded your review of {name}: {} draft comment{} deleted, none published.",
                        self.drafts,
                        if self.drafts == 1 { "" } else { "s" }
                    )),
                    Err(e) => ToolResult::error(e),
                })
            }
        }
    }
}
