//! `delete_pr_comment` and `apply_pr_suggestion`: the rest of a review's comment work — a draft or a published
//! comment deleted, and a comment's suggested change committed to the source branch.
//!
//! `delete_pr_comment`: `GET …/comments/{commentId}` for its version, then `DELETE …/comments/{commentId}?version=N`
//! (a stale version is 409 CommentOutOfDateException, said in Bitbucket's words; a comment with replies is
//! refused by Bitbucket) [spec: 9.4 `getComment_2`, `deleteComment_2`]. 2 requests.
//!
//! `apply_pr_suggestion`: the pull request (its version, state and source branch) and the comment (its version,
//! text and anchor) in parallel, then `POST …/comments/{commentId}/apply-suggestion` `{suggestionIndex,
//! commentVersion, pullRequestVersion, message}` [DC OpenAPI `applySuggestion`; `message` rather than the
//! OpenAPI's `commitMessage`, as a peer found a running server reads it: assumed]. It adds a commit to the source
//! branch, so it cannot be taken back: exposed only with `--allow-writes`, like merge. Lines changed since the
//! suggestion, a stale version or a closed pull request: Bitbucket's refusal in its words, nothing applied.
//! 3 requests. Never retried.

use serde_json::{Map, Value, json};

use super::ask::{self, About};
use super::object;
use super::versioned::{self, Written};
use crate::args::{number, string};
use crate::bitbucket::model::{Comment, PullRequest};
use crate::confirm::{Confirming, Question};
use crate::errors::{self, BitbucketError, Subject, Write};
use crate::fetch::FetchOutcome;
use crate::plan::{Fetches, Plan, Step, ToolResult};
use crate::reads::pull_request;
use crate::text::{cap, one_line, short};
use crate::tool::{Access, Annotations, Asks, Call, Role, Scoped, ToolSpec, Toolset};
use crate::writes::comments;

/// `delete_pr_comment`, for the catalogue. Destructive (the text is gone); idempotent (a second call finds no
/// comment and deletes nothing). A person can write it again, so it is exposed without `--allow-writes`, as
/// update_pr_comment is.
pub const DELETE_SPEC: ToolSpec = ToolSpec {
    name: "delete_pr_comment",
    title: "Delete pull request comment",
    description: "Delete a comment or draft without replies.",
    input_schema: delete_schema,
    access: Access::Write,
    asks: Asks::Always { untouched: "the comment was not deleted" },
    scope: Scoped::Repository,
    role: Role::Data(Toolset::PullRequests),
    annotations: Annotations { read_only: false, destructive: true, idempotent: true, open_world: true },
    start: start_delete,
};

fn delete_schema() -> Value {
    object(
        json!({"project": super::project(), "repo": super::repo(), "pr_id": super::pr_id(),
               "comment_id": {"type": "integer", "minimum": 1, "description": "Comment id"}}),
        &["project", "repo", "pr_id", "comment_id"],
    )
}

fn start_delete(args: &Map<String, Value>, call: &Call<'_>) -> Step {
    let (project, repo, id) = crate::args::pull_request(args);
    let comment = number(args, "comment_id").unwrap_or(0);
    if call.confirming == Confirming::Ask {
        return ask::about_pull_request(About::new(project, repo, id), args, false, delete_question);
    }
    let first = pull_request::comment_request(&project, &repo, id, comment);
    Step::wait(Delete { project, repo, id, comment, read: None }, vec![(DeleteRead::Comment, first)])
}

/// The read and the write of `delete_pr_comment`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DeleteRead {
    /// The comment, for its version and what it says.
    Comment,
    /// The `DELETE`.
    Delete,
}

#[derive(Debug)]
struct Delete {
    project: String,
    repo: String,
    id: u64,
    comment: u64,
    read: Option<Comment>,
}

impl Plan for Delete {
    type Read = DeleteRead;

    fn on(
        &mut self,
        read: DeleteRead,
        outcome: FetchOutcome,
        f: &mut Fetches<'_, '_, DeleteRead>,
    ) -> Option<ToolResult> {
        let about = Subject { project: &self.project, repo: &self.repo, pr: Some(self.id) };
        let n = self.comment;
        match read {
            DeleteRead::Comment => {
                let c = match errors::json::<Comment>(&outcome, about, None) {
                    Ok(c) => c,
                    Err(e) => return Some(ToolResult::error(format!("{e} Nothing was deleted."))),
                };
                let Some(version) = c.version else {
                    return Some(ToolResult::error(format!(
                        "Bitbucket did not say comment #{n}'s version, so bb cannot delete it; nothing was deleted."
                    )));
                };
                if !c.comments.is_empty() {
                    return Some(ToolResult::error(format!(
                        "Comment #{n} has {} repl{}, and Bitbucket deletes only a comment without replies; nothing was deleted.",
                        c.comments.len(),
                        if c.comments.len() == 1 { "y" } else { "ies" }
                    )));
                }
                f.fetch(DeleteRead::Delete, comments::delete(&self.project, &self.repo, self.id, n, version));
                self.read = Some(c);
                None
            }
            DeleteRead::Delete => {
                let write =
                    Write { effect: "the comment was deleted", check: "look at list_pr_comments before trying again" };
                Some(match versioned::written(&outcome, about, write, errors::body) {
                    Written::Done(_) => {
                        let c = self.read.as_ref();
                        let kind = if c.is_some_and(Comment::is_pending) { "draft" } else { "comment" };
                        let text = c.and_then(|c| c.text.as_deref()).unwrap_or("");
                        ToolResult::text(format!(
                            "Deleted {kind} #{n} on PR #{} in {}/{}. It said: {}",
                            self.id,
                            self.project,
                            self.repo,
                            one_line(&cap(text, 300, "text", ""))
                        ))
                    }
                    Written::Stale { said, .. } => ToolResult::error(format!(
                        "Comment #{n} changed after bb read it, and Bitbucket refused the delete: \"{said}\" Nothing was deleted; read it again (list_pr_comments) before deciding."
                    )),
                    Written::Failed(e) => ToolResult::error(e),
                })
            }
        }
    }
}

/// `apply_pr_suggestion`, for the catalogue: a commit on the source branch, which no one can take back without
/// another commit — an unsafe write, exposed only with `--allow-writes`.
pub const APPLY_SPEC: ToolSpec = ToolSpec {
    name: "apply_pr_suggestion",
    title: "Apply PR suggestion",
    description: "Commit a comment's suggestion to the source branch.",
    input_schema: apply_schema,
    access: Access::UnsafeWrite,
    asks: Asks::Always { untouched: "the suggestion was not applied" },
    scope: Scoped::Repository,
    role: Role::Data(Toolset::PullRequests),
    annotations: Annotations { read_only: false, destructive: false, idempotent: false, open_world: true },
    start: start_apply,
};

fn apply_schema() -> Value {
    object(
        json!({"project": super::project(), "repo": super::repo(), "pr_id": super::pr_id(),
               "comment_id": {"type": "integer", "minimum": 1, "description": "Comment id"},
               "index": {"type": "integer", "minimum": 0, "default": 0, "description": "Which of its suggestions"},
               "message": {"type": "string", "description": "Commit message"}}),
        &["project", "repo", "pr_id", "comment_id"],
    )
}

/// The longest commit message `apply_pr_suggestion` sends, in bytes: 64 KiB. [assumed: neither the
/// reference nor Atlassian's docs give Bitbucket's own limit; git has none, and a squash commit of a
/// million lines made Bitbucket answer 500 on its history (BCLOUD-15569), so bb stays far below.]
pub const MAX_COMMIT_MESSAGE_BYTES: usize = 64 * 1024;

/// Why `message` cannot be a commit message, before anything is sent: a control character other than
/// a line break or a tab (a NUL ends a C string in git's tools; an ESC rewrites a terminal), or past
/// [`MAX_COMMIT_MESSAGE_BYTES`].
fn commit_message_problem(message: &str) -> Option<String> {
    if let Some(c) = message.chars().find(|c| c.is_control() && !matches!(c, '\n' | '\t')) {
        return Some(format!(
            "`message` holds the control character U+{:04X}: a commit message may hold line breaks and tabs, no other control character. Nothing was sent.",
            u32::from(c)
        ));
    }
    (message.len() > MAX_COMMIT_MESSAGE_BYTES).then(|| {
        format!(
            "`message` is {} bytes: bb sends a commit message of at most {MAX_COMMIT_MESSAGE_BYTES} bytes (64 KiB); shorten it. Nothing was sent.",
            message.len()
        )
    })
}

/// The question before a comment is deleted.
fn delete_question(about: &About, pr: &PullRequest, args: &Map<String, Value>) -> Result<Question, String> {
    let comment = number(args, "comment_id").unwrap_or(0);
    Ok(Question {
        message: format!("Delete comment {comment} on {}. A deleted comment cannot be restored.", about.named(pr)),
        confirm: format!("Delete comment {comment}"),
        pin: ask::pin(pr),
    })
}

/// The question before a suggestion is committed to the pull request's branch.
fn apply_question(about: &About, pr: &PullRequest, args: &Map<String, Value>) -> Result<Question, String> {
    ask::open(about, pr, "takes suggestions")?;
    let comment = number(args, "comment_id").unwrap_or(0);
    Ok(Question {
        message: format!(
            "Commit the suggestion in comment {comment} to the branch {} of {}. The commit cannot be taken back.",
            ask::from(pr),
            about.named(pr)
        ),
        confirm: format!("Apply the suggestion of comment {comment}"),
        pin: ask::pin(pr),
    })
}

fn start_apply(args: &Map<String, Value>, call: &Call<'_>) -> Step {
    if call.confirming == Confirming::Ask {
        let (project, repo, id) = crate::args::pull_request(args);
        return ask::about_pull_request(About::new(project, repo, id), args, false, apply_question);
    }
    let (project, repo, id) = crate::args::pull_request(args);
    let comment = number(args, "comment_id").unwrap_or(0);
    let index = number(args, "index").unwrap_or(0);
    let message = string(args, "message").map(str::to_owned);
    if let Some(problem) = message.as_deref().and_then(commit_message_problem) {
        return Step::Done(ToolResult::error(problem));
    }
    let first = vec![
        (ApplyRead::PullRequest, pull_request::request(&project, &repo, id)),
        (ApplyRead::Comment, pull_request::comment_request(&project, &repo, id, comment)),
    ];
    Step::wait(Apply { project, repo, id, comment, index, message, pr: None, read: None, branch: None, of: 0 }, first)
}

/// The reads and the write of `apply_pr_suggestion`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ApplyRead {
    /// The pull request: version, state, source branch.
    PullRequest,
    /// The comment: version, text, anchor.
    Comment,
    /// The `POST …/apply-suggestion`.
    Apply,
}

#[derive(Debug)]
struct Apply {
    project: String,
    repo: String,
    id: u64,
    comment: u64,
    index: u64,
    message: Option<String>,
    pr: Option<Result<PullRequest, BitbucketError>>,
    read: Option<Result<Comment, BitbucketError>>,
    branch: Option<String>,
    /// How many suggestions the comment holds, once read.
    of: usize,
}

impl Apply {
    fn name(&self) -> String {
        format!("PR #{} in {}/{}", self.id, self.project, self.repo)
    }

    /// The suggestion as a person names it: "the suggestion of comment #5", or "suggestion 2 of 3 (index 1) of
    /// comment #5" when it holds several (the index is what the tool takes).
    fn which(&self) -> String {
        let (n, i) = (self.comment, self.index);
        if self.of > 1 {
            format!("suggestion {} of {} (index {i}) of comment #{n}", i + 1, self.of)
        } else {
            format!("the suggestion of comment #{n}")
        }
    }
}

impl Plan for Apply {
    type Read = ApplyRead;

    fn on(&mut self, read: ApplyRead, outcome: FetchOutcome, f: &mut Fetches<'_, '_, ApplyRead>) -> Option<ToolResult> {
        let about = Subject { project: &self.project, repo: &self.repo, pr: Some(self.id) };
        let (n, i) = (self.comment, self.index);
        match read {
            ApplyRead::PullRequest => self.pr = Some(errors::json::<PullRequest>(&outcome, about, None)),
            ApplyRead::Comment => self.read = Some(errors::json::<Comment>(&outcome, about, None)),
            ApplyRead::Apply => {
                let message = self.message.clone().unwrap_or_default();
                let write = Write {
                    effect: "the suggestion was committed",
                    check: "look at the source branch's latest commit (list_commits) before applying it again",
                };
                return Some(match errors::body(&outcome, about, Some(write)) {
                    Ok(body) => {
                        let commit = serde_json::from_slice::<Value>(body)
                            .ok()
                            .and_then(|v| {
                                v.get("id").and_then(Value::as_str).map(|c| format!(" as commit {}", short(c, 12)))
                            })
                            .unwrap_or_default();
                        ToolResult::text(format!(
                            "Applied {} on {}: committed to {}{commit} with the message \"{}\".",
                            self.which(),
                            self.name(),
                            self.branch.as_deref().unwrap_or("the source branch"),
                            one_line(&message)
                        ))
                    }
                    Err(e) => match e.refusal() {
                        Some(r) => ToolResult::error(format!(
                            "Bitbucket did not apply {} on {}: \"{}\" (HTTP {}{}). Nothing was committed.",
                            self.which(),
                            self.name(),
                            r.message,
                            r.status,
                            if r.exception.is_empty() {
                                String::new()
                            } else {
                                format!(", {}", r.exception.rsplit('.').next().unwrap_or(""))
                            }
                        )),
                        None => ToolResult::error(e),
                    },
                });
            }
        }
        if f.waiting() > 0 {
            return None;
        }
        let pr = match self.pr.take()? {
            Ok(p) => p,
            Err(e) => return Some(ToolResult::error(format!("{e} Nothing was committed."))),
        };
        let c = match self.read.take()? {
            Ok(c) => c,
            Err(e) => return Some(ToolResult::error(format!("{e} Nothing was committed."))),
        };
        if pr.state.as_deref() != Some("OPEN") {
            return Some(ToolResult::error(format!(
                "{} is {}: a suggestion is applied only to an open pull request. Nothing was committed.",
                self.name(),
                pr.state.as_deref().unwrap_or("not open").to_lowercase()
            )));
        }
        if c.is_pending() {
            return Some(ToolResult::error(format!(
                "Comment #{n} is a draft: a suggestion is applied once its review is published. Nothing was committed."
            )));
        }
        let blocks = crate::markdown::suggestions(c.text.as_deref().unwrap_or(""));
        if usize::try_from(i).map_or(true, |i| i >= blocks.len()) {
            return Some(ToolResult::error(format!(
                "Comment #{n} holds {} suggestion{} (```suggestion blocks), so there is no suggestion {i}. Nothing was committed.",
                blocks.len(),
                if blocks.len() == 1 { "" } else { "s" }
            )));
        }
        self.of = blocks.len();
        let (Some(pr_version), Some(c_version)) = (pr.version, c.version) else {
            return Some(ToolResult::error(
                "Bitbucket did not say the pull request's or the comment's version, which applying needs. Nothing was committed.",
            ));
        };
        let place = c.anchor.as_ref().and_then(|a| a.path.clone()).unwrap_or_default();
        self.branch = pr.from_ref.as_ref().and_then(|r| r.display_id.clone());
        let message = self.message.get_or_insert_with(|| {
            format!(
                "Apply suggestion from comment #{n}{}",
                if place.is_empty() { String::new() } else { format!(" on {place}") }
            )
        });
        let request =
            comments::apply_suggestion(&self.project, &self.repo, self.id, n, i, (c_version, pr_version), message);
        f.fetch(ApplyRead::Apply, request);
        None
    }
}
