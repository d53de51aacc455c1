//! A repository's refs and history: its branches and tags (filtered, paged), the commits of a branch or a
//! range, one commit, and the commit a ref names.
//!
//! Requests: `GET …/repos/{slug}/branches?filterText&orderBy&start&limit` → a page of
//! `{id, displayId, latestCommit, isDefault}`; `GET …/repos/{slug}/tags?filterText&orderBy&start&limit` → a page
//! of `{id, displayId, latestCommit, hash}` (`hash` set for an annotated tag); `GET …/repos/{slug}/commits?until&since&path&start&limit`
//! → a page of commits, newest first from `until` (the default branch without it), without what `since` reaches;
//! `GET …/repos/{slug}/commits/{commitId}` → one commit. A ref is resolved by `…/commits?until={ref}&limit=1`,
//! whose `until` takes a branch, a tag or a commit id (short or full, `refs/…` or not) and whose first value is
//! the commit it names — a query parameter, as a ref's `/` in a path segment is refused by servers that do not
//! allow encoded slashes. [reference "Projects, repositories, branches, commits, tags, users": spec]

use serde::Deserialize;

use crate::bitbucket::model::Commit;
use crate::bitbucket::{Page, RawPage, file_path, repo_path, segment};
use crate::errors::{self, BitbucketError, Subject};
use crate::fetch::{FetchOutcome, FetchRequest};

/// What a listing of branches or tags asks for.
#[derive(Debug, Clone, Copy, Default)]
pub struct Listing<'a> {
    /// Only names that contain this (`filterText`, sent even when empty); all without it.
    pub filter: Option<&'a str>,
    /// `orderBy`: `ALPHABETICAL`, or `MODIFICATION` (the most recently changed first); Bitbucket's own without it.
    pub order: Option<&'a str>,
    /// The first value's index; without it Bitbucket starts at the first (and the query leaves `start` out).
    pub start: Option<u64>,
    /// Values asked for at most.
    pub limit: u64,
}

impl Listing<'_> {
    fn request(&self, project: &str, repo: &str, what: &str) -> FetchRequest {
        let mut query = Vec::new();
        if let Some(f) = self.filter {
            query.push(("filterText".into(), f.to_owned()));
        }
        if let Some(o) = self.order {
            query.push(("orderBy".into(), o.to_owned()));
        }
        query.extend(super::page(self.start, self.limit));
        FetchRequest::get(format!("{}/{what}", repo_path(project, repo)), query)
    }
}

/// A page of the repository's branches.
pub fn branches_request(project: &str, repo: &str, listing: &Listing<'_>) -> FetchRequest {
    listing.request(project, repo, "branches")
}

/// A page of the repository's tags.
pub fn tags_request(project: &str, repo: &str, listing: &Listing<'_>) -> FetchRequest {
    listing.request(project, repo, "tags")
}

/// What a listing of commits asks for.
#[derive(Debug, Clone, Copy, Default)]
pub struct Commits<'a> {
    /// The newest ref (a branch, tag or commit id); the default branch without it.
    pub until: Option<&'a str>,
    /// A ref whose commits are left out.
    pub since: Option<&'a str>,
    /// Only commits that touch this path.
    pub path: Option<&'a str>,
    /// The first value's index; left out of the query without it.
    pub start: Option<u64>,
    /// Values asked for at most.
    pub limit: u64,
}

/// A page of the repository's commits, newest first.
pub fn commits_request(project: &str, repo: &str, commits: &Commits<'_>) -> FetchRequest {
    let mut query = Vec::new();
    for (param, value) in [("until", commits.until), ("since", commits.since), ("path", commits.path)] {
        if let Some(v) = value {
            query.push((param.to_owned(), v.to_owned()));
        }
    }
    query.extend(super::page(commits.start, commits.limit));
    FetchRequest::get(format!("{}/commits", repo_path(project, repo)), query)
}

/// The commit `name` (a branch, tag or commit id) names: the first of its commits.
pub fn resolve_request(project: &str, repo: &str, name: &str) -> FetchRequest {
    commits_request(project, repo, &Commits { until: Some(name), limit: 1, ..Commits::default() })
}

/// One commit by its id.
pub fn commit_request(project: &str, repo: &str, id: &str) -> FetchRequest {
    FetchRequest::get(format!("{}/commits/{}", repo_path(project, repo), segment(id)), vec![])
}

/// A page of the files commit `id` changed against its first parent. [reference "Files, blame, search":
/// `GET …/commits/{commitId}/changes?since&start&limit`, spec]
pub fn commit_changes_request(project: &str, repo: &str, id: &str, start: u64, limit: u64) -> FetchRequest {
    let path = format!("{}/commits/{}/changes", repo_path(project, repo), segment(id));
    FetchRequest::get(path, crate::args::paging(start, limit).to_vec())
}

/// One file's diff in commit `id` against its first parent, `context` lines around each change.
/// [reference "Files, blame, search": `GET …/commits/{commitId}/diff/{path}?contextLines&since`, spec]
pub fn commit_diff_request(project: &str, repo: &str, id: &str, path: &str, context: u64) -> FetchRequest {
    let path = format!("{}/commits/{}/diff/{}", repo_path(project, repo), segment(id), file_path(path));
    FetchRequest::get(path, vec![("contextLines".into(), context.to_string())])
}

/// A page of commits (a repository's, a pull request's, or a compare's), or the sentence that says why it
/// could not be read.
pub fn commits(outcome: &FetchOutcome, about: Subject<'_>) -> Result<Page<Commit>, BitbucketError> {
    errors::json::<RawPage>(outcome, about, None).map(RawPage::decode::<Commit>)
}

/// A branch or tag as listed, and a tag as its creation answers it. [reference "Projects, …": spec]
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct RefEntry {
    id: Option<String>,
    display_id: Option<String>,
    latest_commit: Option<String>,
    /// Before 4.0 a ref names its commit `latestChangeset`. [reference "Older servers": rec]
    latest_changeset: Option<String>,
    is_default: Option<bool>,
    /// The tag object of an annotated tag.
    hash: Option<String>,
}

impl RefEntry {
    /// Its name as shown (`main`), else its full ref, else `?`.
    pub fn name(&self) -> &str {
        self.display_id.as_deref().or(self.id.as_deref()).unwrap_or("?")
    }

    /// The commit it points at.
    pub fn commit(&self) -> Option<&str> {
        self.latest_commit.as_deref().or(self.latest_changeset.as_deref())
    }

    /// Whether Bitbucket marks it as the repository's default branch.
    pub fn is_default(&self) -> bool {
        self.is_default == Some(true)
    }

    /// Whether it is an annotated tag (a tag object of its own).
    pub fn annotated(&self) -> bool {
        self.hash.is_some()
    }
}
