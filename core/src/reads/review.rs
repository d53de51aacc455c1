//! The calling person's pending review: their drafts (comments created with `state: PENDING`, seen by no one
//! else until the review is finished), since 7.7.
//!
//! Request: `GET …/pull-requests/{id}/review` (DC OpenAPI 9.2 `getReview`, "Get pull request comment thread").
//! Its answer is a page; whether each value is a comment or a thread holding one is not confirmed by any public
//! source [assumed], so both are read: a value with `text` is the comment, else its `comment` or `rootComment`.
//! A server before 7.7 has no such endpoint (404). [javadoc PullRequestFinishReviewRequest "Since 7.7"]

use serde_json::Value;

use crate::bitbucket::model::Comment;
use crate::bitbucket::{RawPage, pr_path};
use crate::errors;
use crate::fetch::{FetchOutcome, FetchRequest};

/// The drafts Bitbucket lists on one page of the review (it lists far fewer than this in practice).
pub const DRAFTS_READ: u64 = 100;

/// The version from which Bitbucket keeps drafts and finishes reviews.
pub const SINCE: (u32, u32) = (7, 7);

/// `GET …/pull-requests/{id}/review`: the caller's drafts.
pub fn request(project: &str, repo: &str, id: u64) -> FetchRequest {
    FetchRequest::get(
        format!("{}/review", pr_path(project, repo, id)),
        vec![("start".into(), "0".into()), ("limit".into(), DRAFTS_READ.to_string())],
    )
}

/// Whether the answer says the server has no `…/review` at all (before 7.7: 404, or 405 for a path it maps
/// otherwise), rather than that the pull request is missing.
pub fn absent(outcome: &FetchOutcome) -> bool {
    matches!(outcome, FetchOutcome::Response(r) if r.status == 404 || r.status == 405)
        && errors::refusal(outcome).is_none_or(|r| !r.exception.contains("NoSuchPullRequest"))
}

/// The drafts of one page of the review, roots with their replies, in Bitbucket's order.
pub fn drafts(page: &RawPage) -> Vec<Comment> {
    page.values
        .iter()
        .filter_map(|v| {
            let c = if v.get("text").is_some() { v } else { v.get("comment").or_else(|| v.get("rootComment"))? };
            serde_json::from_value::<Comment>(c.clone()).ok()
        })
        .collect()
}

/// Every draft in these threads, counted once each: each root the review lists, and the pending replies under it.
pub fn count(drafts: &[Comment]) -> usize {
    fn replies(c: &Comment) -> usize {
        c.comments.iter().map(|r| usize::from(r.is_pending()) + replies(r)).sum()
    }
    drafts.iter().map(|c| 1 + replies(c)).sum()
}

/// The first draft's place, for a view to open at: `{path, line}`, or null for a general comment.
pub fn first_place(drafts: &[Comment]) -> Value {
    let Some(c) = drafts.first() else { return Value::Null };
    match c.anchor.as_ref().and_then(|a| a.path.as_ref().map(|p| (p, a.line))) {
        Some((path, line)) => serde_json::json!({"path": path, "line": line}),
        None => Value::Null,
    }
}
