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
    },
}

/// `POST …/pull-requests/{id}/comments` `{text, parent? {id}, anchor?, severity?}` → the comment. An anchor is
/// `{path, diffType: EFFECTIVE}`, for a line with `line`, `lineType` and `fileType` (`FROM` for a REMOVED line,
/// which is the old file's; `TO` otherwise) [reference "Pull requests": spec]; a task adds `severity: BLOCKER`.
pub fn add(project: &str, repo: &str, id: u64, text: &str, place: Place<'_>, task: bool) -> FetchRequest {
    let mut body = json!({"text": text});
    match place {
        Place::PullRequest => {}
        Place::Reply(parent) => body["parent"] = json!({"id": parent}),
        Place::File(path) => body["anchor"] = json!({"path": path, "diffType": "EFFECTIVE"}),
        Place::Line { path, line, line_type } => {
            let side = if line_type == "REMOVED" { "FROM" } else { "TO" };
            body["anchor"] =
                json!({"path": path, "diffType": "EFFECTIVE", "line": line, "lineType": line_type, "fileType": side});
        }
    }
    if task {
        body["severity"] = json!("BLOCKER");
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
