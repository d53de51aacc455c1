//! Bitbucket's REST endpoints, as plain functions over the model and a request.

pub mod activities;
pub mod anchors;
pub mod auto_merge;
pub mod builds;
pub mod comments;
pub mod diffs;
pub mod drafts;
pub mod files;
pub mod insights;
mod lifecycle;
pub mod projects;
pub mod pull_requests;
pub mod required_builds;
pub mod review;
pub mod search;
pub mod suggestions;
pub mod users;

use crate::errors::{self, exception};
use crate::exchange::{Request, Response};
use crate::model::{Model, PullRequest, Repo, RepoKey};
use crate::render::View;

/// A handler's answer: the error arm is an error response, so handlers can use `?`.
pub type Reply = Result<Response, Response>;

/// What a handler that changes the model gets: the model, the rendering context and the caller's slug.
#[derive(Debug)]
pub struct Cx<'a> {
    /// The model, to read and change: the handler holds the world's write lock while it runs, alone.
    pub m: &'a mut Model,
    /// Rendering context for this request.
    pub v: View,
    /// The authenticated user's slug.
    pub me: String,
}

impl Cx<'_> {
    /// The same request seen as a read, for a write that answers as a read does.
    pub fn read(&self) -> ReadCx<'_> {
        ReadCx { m: self.m, v: self.v.clone(), me: self.me.clone() }
    }
}

/// What a handler that only reads gets: the same as [`Cx`] with the model shared, so reads are served at once
/// (the server holds the world's read lock; a write waits until they are done).
#[derive(Debug)]
pub struct ReadCx<'a> {
    /// The model, to read.
    pub m: &'a Model,
    /// Rendering context for this request.
    pub v: View,
    /// The authenticated user's slug.
    pub me: String,
}

/// The repository a path names, or Bitbucket's 404 for the project or the repository.
pub fn find_repo<'m>(m: &'m Model, key: &str, slug: &str) -> Result<&'m Repo, Response> {
    if !m.projects.contains_key(&key.to_ascii_uppercase()) {
        return Err(errors::error(404, Some(exception::NO_SUCH_PROJECT), &format!("Project {key} does not exist.")));
    }
    m.repo(key, slug).ok_or_else(|| {
        errors::error(404, Some(exception::NO_SUCH_REPOSITORY), &format!("Repository {key}/{slug} does not exist."))
    })
}

/// The key of the pull request a path names, or a 404.
pub fn pr_key(m: &Model, key: &str, slug: &str, id: &str) -> Result<(RepoKey, u64), Response> {
    let repo = find_repo(m, key, slug)?;
    let missing = || {
        errors::error(
            404,
            Some(exception::NO_SUCH_PULL_REQUEST),
            &format!("No pull request exists with ID {id} for this repository {key}/{slug}."),
        )
    };
    let n: u64 = id.parse().map_err(|_| missing())?;
    let k = (repo.key.clone(), n);
    if m.prs.contains_key(&k) { Ok(k) } else { Err(missing()) }
}

/// The pull request a path names, or a 404.
pub fn find_pr<'m>(m: &'m Model, key: &str, slug: &str, id: &str) -> Result<&'m PullRequest, Response> {
    let k = pr_key(m, key, slug, id)?;
    m.prs.get(&k).ok_or_else(|| errors::no_such_resource(id))
}

/// `avatarSize` from the query.
pub fn avatar_size(req: &Request) -> Option<u32> {
    req.param("avatarSize").and_then(|s| s.parse().ok())
}

/// A query parameter's value, upper-cased, if present and not empty.
pub fn upper_param(req: &Request, name: &str) -> Option<String> {
    req.param(name).filter(|s| !s.is_empty()).map(str::to_ascii_uppercase)
}
