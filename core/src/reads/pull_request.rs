//! One pull request, its merge check, its activity, its commits and one of its comments, as every tool and view
//! that shows them asks for them.
//!
//! Requests: `GET …/pull-requests/{id}` (state, branches, reviewers, Bitbucket's counts in `properties`),
//! `GET …/pull-requests/{id}/merge` (whether Bitbucket would merge it now, and its vetoes in its own words;
//! only worth asking for an open pull request) and `GET …/pull-requests/{id}/activities?start&limit`
//! (newest first, the OPENED activity last; a thread may surface in several activities).
//! [reference "Pull requests", "Activity": spec, rec] `GET …/pull-requests/{id}/commits?start&limit` → a page of
//! the commits on the source that the target lacks, newest first [spec: 9.4 `getCommits_1`];
//! `GET …/pull-requests/{id}/comments/{commentId}` → one comment with its `version`, which an edit must send
//! [spec: 9.4 `getComment_2`].

use crate::args::paging;
use crate::bitbucket::{pr_path, segment};
use crate::fetch::FetchRequest;

/// The pull request itself: `GET …/pull-requests/{id}`.
pub fn request(project: &str, repo: &str, id: u64) -> FetchRequest {
    FetchRequest::get(pr_path(project, repo, id), vec![])
}

/// A page of its activity, newest first.
pub fn activity_request(project: &str, repo: &str, id: u64, start: u64, limit: u64) -> FetchRequest {
    FetchRequest::get(format!("{}/activities", pr_path(project, repo, id)), paging(start, limit).to_vec())
}

/// A page of its commits, newest first.
pub fn commits_request(project: &str, repo: &str, id: u64, start: u64, limit: u64) -> FetchRequest {
    FetchRequest::get(format!("{}/commits", pr_path(project, repo, id)), paging(start, limit).to_vec())
}

/// One of its comments (or tasks), by id.
pub fn comment_request(project: &str, repo: &str, id: u64, comment: u64) -> FetchRequest {
    FetchRequest::get(format!("{}/comments/{comment}", pr_path(project, repo, id)), vec![])
}

/// Bitbucket's merge check of an open pull request.
pub fn merge_check_request(project: &str, repo: &str, id: u64) -> FetchRequest {
    FetchRequest::get(format!("{}/merge", pr_path(project, repo, id)), vec![])
}

/// A pull request's page in Bitbucket, from the base URL (for a link bb builds itself).
pub fn page_url(base: &str, project: &str, repo: &str, id: u64) -> String {
    format!("{}/pull-requests/{id}", repo_url(base, project, repo))
}

/// A repository's page in Bitbucket.
pub fn repo_url(base: &str, project: &str, repo: &str) -> String {
    format!("{}/projects/{}/repos/{}", base.trim_end_matches('/'), segment(project), segment(repo))
}

/// A commit's page in Bitbucket (`…/commits/{id}`).
pub fn commit_url(base: &str, project: &str, repo: &str, id: &str) -> String {
    format!("{}/commits/{}", repo_url(base, project, repo), segment(id))
}

/// A branch's files in Bitbucket (`…/browse?at=refs%2Fheads%2Fx`, as Bitbucket's own links write it).
pub fn branch_url(base: &str, project: &str, repo: &str, ref_id: &str) -> String {
    format!("{}/browse?at={}", repo_url(base, project, repo), segment(ref_id))
}

/// A person's profile in Bitbucket.
pub fn profile_url(base: &str, slug: &str) -> String {
    format!("{}/users/{}", base.trim_end_matches('/'), segment(slug))
}
