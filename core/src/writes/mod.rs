//! Each Bitbucket write written once: the request a write tool sends, built from what the tool decided.
//! The tool keeps the rest — what it reads first, the version it checks, when there is nothing to write,
//! and the sentences of its answer. A POST is never sent twice; a PUT or DELETE is sent again only when
//! Bitbucket cannot have acted on it ([`crate::retry`]); past that, the tool's answer says how to check an
//! unknown outcome rather than write again.
//!
//! | write | request | tool |
//! |---|---|---|
//! | [`pull_request::create`] | `POST …/pull-requests` | create_pull_request |
//! | [`pull_request::update`] | `PUT …/pull-requests/{id}` | update_pull_request |
//! | [`pull_request::decline`] | `POST …/pull-requests/{id}/decline?version` | decline_pull_request |
//! | [`pull_request::reopen`] | `POST …/pull-requests/{id}/reopen?version` | reopen_pull_request |
//! | [`pull_request::merge`] | `POST …/pull-requests/{id}/merge?version` | merge_pull_request |
//! | [`pull_request::auto_merge`] | `POST …/pull-requests/{id}/merge?version` with `autoMerge` | enable_auto_merge |
//! | [`pull_request::cancel_auto_merge`] | `DELETE …/pull-requests/{id}/auto-merge` | disable_auto_merge |
//! | [`pull_request::review`] | `PUT …/pull-requests/{id}/participants/{userSlug}` | submit_pr_review |
//! | [`comments::add`] | `POST …/pull-requests/{id}/comments` | add_pr_comment, submit_pr_review (its comment, before 7.7) |
//! | [`comments::edit`] | `PUT …/pull-requests/{id}/comments/{commentId}` | update_pr_comment |
//! | [`comments::delete`] | `DELETE …/pull-requests/{id}/comments/{commentId}?version` | delete_pr_comment |
//! | [`comments::finish_review`] | `PUT …/pull-requests/{id}/review` (7.7+) | submit_pr_review |
//! | [`comments::discard_review`] | `DELETE …/pull-requests/{id}/review` (7.7+) | discard_pr_review |
//! | [`comments::apply_suggestion`] | `POST …/comments/{commentId}/apply-suggestion` | apply_pr_suggestion |
//! | [`repository::create_tag`] | `POST …/repos/{slug}/tags` | create_tag |
//! | [`repository::build_status`] | `POST …/repos/{slug}/commits/{commitId}/builds` | set_build_status |
//!
//! What a write's answer says is read by the tool with [`crate::errors::json`] (or `body`) and a
//! [`crate::errors::Write`], which turns an answer that does not say whether the write happened
//! into the sentence that says how to check.

pub mod comments;
pub mod pull_request;
pub mod repository;

use serde_json::Value;

use crate::fetch::{FetchRequest, Method};

/// A write of `body` to `path` with `method`, with this query.
fn request(method: Method, path: String, query: Vec<(String, String)>, body: Option<Value>) -> FetchRequest {
    FetchRequest { method, path, query, body, keep: None, refresh: None }
}
