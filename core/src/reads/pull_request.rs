//! One pull request and its activity, as every tool and view that shows them asks for them.
//!
//! Requests: `GET …/pull-requests/{id}` (state, branches, reviewers, Bitbucket's counts in `properties`)
//! and `GET …/pull-requests/{id}/activities?start&limit` (newest first, the OPENED activity last; a thread
//! may surface in several activities). [reference "Pull requests", "Activity": spec, rec]

use crate::args::paging;
use crate::bitbucket::pr_path;
use crate::fetch::FetchRequest;

/// The pull request.
pub fn request(project: &str, repo: &str, id: u64) -> FetchRequest {
    FetchRequest::get(pr_path(project, repo, id), vec![])
}

/// A page of its activity, newest first.
pub fn activity_request(project: &str, repo: &str, id: u64, start: u64, limit: u64) -> FetchRequest {
    FetchRequest::get(format!("{}/activities", pr_path(project, repo, id)), paging(start, limit).to_vec())
}
