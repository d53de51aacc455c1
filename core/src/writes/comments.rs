//! The writes to a pull request's conversation: a comment added (general, on a file or a line, as a reply,
//! or as a task) and a comment edited (its text, or a task resolved or reopened).
//!
//! Tasks are comments with `severity: BLOCKER`, resolved with `state: RESOLVED` (7.0+).
//! [reference "Pull requests": spec, rec]

use serde_json::json;

use super::request;
use crate::bitbucket::pr_path;
use crate::fetch::{FetchRequest, Method};

/// Where a new comment goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place<'a> {
    /// On the pull request as a whole.
    PullRequest,
    /// In the thread of the comment with this id.
    Reply(u64),
    /// On a file of the diff.
    File(&'a str),
    /// On a line of a file of the diff: its number on the side its type is on (`ADDED` and `CONTEXT` the new
    /// file's, `REMOVED` the old one's).
    Line {
        path: &'a str,
        /// The line's number.
        line: u64,
        /// `ADDED`, `REMOVED` or `CONTEXT`.
        line_type: &'a str,
        /// The first line of a comment on several lines (same side and type), `line` being the last.
        from: Option<u64>,
    },
}

/// `POST …/pull-requests/{id}/comments` `{text, parent? {id}, anchor?, severity?}` → the comment. An anchor is
/// `{path, diffType: EFFECTIVE}`, for a line with `line`, `lineType` and `fileType` (`FROM` for a REMOVED line,
/// which is the old file's; `TO` otherwise) [reference "Pull requests": spec]; a task adds `severity: BLOCKER`.
/// A comment on several lines adds `multilineMarker {startLine, startLineType}` [assumed: a peer's recorded DC
/// types]. A draft adds `state: PENDING` (7.7+: `AddCommentRequest.isPending`; the REST field is a peer DC
/// server's [assumed]) — an older server ignores it and publishes, so the caller checks the version first.
pub fn add(
    project: &str,
    repo: &str,
    id: u64,
    text: &str,
    place: Place<'_>,
    task: bool,
    pending: bool,
) -> FetchRequest {
    let mut body = json!({"text": text});
    match place {
        Place::PullRequest => {}
        Place::Reply(parent) => body["parent"] = json!({"id": parent}),
        Place::File(path) => body["anchor"] = json!({"path": path, "diffType": "EFFECTIVE"}),
        Place::Line { path, line, line_type, from } => {
            let side = if line_type == "REMOVED" { "FROM" } else { "TO" };
            body["anchor"] =
                json!({"path": path, "diffType": "EFFECTIVE", "line": line, "lineType": line_type, "fileType": side});
            if let Some(first) = from.filter(|&f| f < line) {
                body["anchor"]["multilineMarker"] = json!({"startLine": first, "startLineType": line_type});
            }
        }
    }
    if task {
        body["severity"] = json!("BLOCKER");
    }
    if pending {
        body["state"] = json!("PENDING");
    }
    request(Method::Post, format!("{}/comments", pr_path(project, repo, id)), vec![], Some(body))
}

/// `PUT …/pull-requests/{id}/comments/{commentId}` `{version, text?, state?}` → the comment. The version read is
/// required; a stale one is 409 CommentOutOfDateException. [spec: 9.4 `updateComment_2`]
pub fn edit(
    project: &str,
    repo: &str,
    id: u64,
    comment: u64,
    version: u64,
    text: Option<&str>,
    state: Option<&str>,
) -> FetchRequest {
    let mut body = json!({"version": version});
    if let Some(t) = text {
        body["text"] = json!(t);
    }
    if let Some(s) = state {
        body["state"] = json!(s);
    }
    request(Method::Put, format!("{}/comments/{comment}", pr_path(project, repo, id)), vec![], Some(body))
}

/// `DELETE …/pull-requests/{id}/comments/{commentId}?version=N` → 204. A stale version is 409
/// CommentOutOfDateException; a comment with replies cannot be deleted. [spec: 9.4 `deleteComment_2`]
pub fn delete(project: &str, repo: &str, id: u64, comment: u64, version: u64) -> FetchRequest {
    request(
        Method::Delete,
        format!("{}/comments/{comment}", pr_path(project, repo, id)),
        vec![("version".into(), version.to_string())],
        None,
    )
}

/// `PUT …/pull-requests/{id}/review` `{participantStatus?, commentText?, lastReviewedCommit?}`: publishes the
/// caller's drafts, adds the text as a general comment and sets the status, in one request (7.7+; a stale
/// lastReviewedCommit, since 8.9.18/8.19.7/9.0.1/9.1, is 409 PullRequestOutOfDateException).
/// [javadoc PullRequestFinishReviewRequest; DC OpenAPI 9.2 `finishReview`]
pub fn finish_review(
    project: &str,
    repo: &str,
    id: u64,
    status: Option<&str>,
    text: Option<&str>,
    commit: Option<&str>,
) -> FetchRequest {
    let mut body = json!({});
    if let Some(s) = status {
        body["participantStatus"] = json!(s);
    }
    if let Some(t) = text {
        body["commentText"] = json!(t);
    }
    if let Some(c) = commit {
        body["lastReviewedCommit"] = json!(c);
    }
    request(Method::Put, format!("{}/review", pr_path(project, repo, id)), vec![], Some(body))
}

/// `DELETE …/pull-requests/{id}/review`: deletes the caller's drafts (7.7+). [DC OpenAPI 9.2 `discardReview`]
pub fn discard_review(project: &str, repo: &str, id: u64) -> FetchRequest {
    request(Method::Delete, format!("{}/review", pr_path(project, repo, id)), vec![], None)
}

/// `POST …/pull-requests/{id}/comments/{commentId}/apply-suggestion` `{suggestionIndex, commentVersion,
/// pullRequestVersion, message}`: commits the suggestion to the source branch. The OpenAPI names the message
/// `commitMessage`; a peer found a running server reads `message` ("'message' cannot be null or empty"), so bb
/// sends `message` [DC OpenAPI `applySuggestion`; the field name per that peer, assumed]. The versions are the
/// comment's and the pull request's, as read.
pub fn apply_suggestion(
    project: &str,
    repo: &str,
    id: u64,
    comment: u64,
    index: u64,
    (comment_version, pr_version): (u64, u64),
    message: &str,
) -> FetchRequest {
    let body = json!({"suggestionIndex": index, "commentVersion": comment_version,
                      "pullRequestVersion": pr_version, "message": message});
    request(
        Method::Post,
        format!("{}/comments/{comment}/apply-suggestion", pr_path(project, repo, id)),
        vec![],
        Some(body),
    )
}
