//! A repository: itself (its id, names and clone addresses), its default branch, and the search for
//! repositories across projects.
//!
//! Requests: `GET …/projects/{key}/repos/{slug}` → `{id, slug, name, project {key}, public, links {clone
//! [{href, name: http|ssh}]}}`; `GET …/repos/{slug}/default-branch` → the branch `{id, displayId, …}` (older
//! servers: `…/branches/default`; an empty repository has none yet); `GET /rest/api/latest/repos?name&projectname&start&limit`
//! → a page of repositories as the first request answers them, `name` and `projectname` matching
//! case-insensitively within names. [reference "Projects, repositories, branches, commits, tags, users": spec]

use serde::Deserialize;
use serde_json::Value;

use crate::args::paging;
use crate::bitbucket::model::Repository;
use crate::bitbucket::repo_path;
use crate::errors::{self, BitbucketError, Subject};
use crate::fetch::{FetchOutcome, FetchRequest};

/// The repository itself: `GET …/repos/{slug}`.
pub fn request(project: &str, repo: &str) -> FetchRequest {
    FetchRequest::get(repo_path(project, repo), vec![])
}

/// Its default branch.
pub fn default_branch_request(project: &str, repo: &str) -> FetchRequest {
    FetchRequest::get(format!("{}/default-branch", repo_path(project, repo)), vec![])
}

/// A page of the repositories whose name contains `name` in projects whose name contains `project_name`;
/// an empty text is left out of the query (it would match everything anyway).
pub fn search_request(name: &str, project_name: &str, start: u64, limit: u64) -> FetchRequest {
    let mut query = Vec::new();
    if !name.is_empty() {
        query.push(("name".into(), name.to_owned()));
    }
    if !project_name.is_empty() {
        query.push(("projectname".into(), project_name.to_owned()));
    }
    query.extend(paging(start, limit));
    FetchRequest::get("/rest/api/latest/repos", query)
}

/// A page of every repository of project `key`. [reference "Projects, repositories, branches, commits, tags,
/// users": `GET …/projects/{projectKey}/repos`, spec]
pub fn project_repos_request(key: &str, start: u64, limit: u64) -> FetchRequest {
    let path = format!("/rest/api/latest/projects/{}/repos", crate::bitbucket::segment(key));
    FetchRequest::get(path, paging(start, limit).to_vec())
}

/// The repository's numeric id (what the default reviewers are asked by), `None` when Bitbucket left it
/// out; or the sentence that says why the repository could not be read.
pub fn id(outcome: &FetchOutcome, about: Subject<'_>) -> Result<Option<u64>, BitbucketError> {
    errors::json::<Repository>(outcome, about, None).map(|r| r.id)
}

/// The default branch as its read answered.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DefaultBranch {
    /// The full ref (`refs/heads/main`), when Bitbucket named one.
    pub id: Option<String>,
    /// The branch's name as shown (`main`).
    pub display_id: Option<String>,
    /// The commit the branch points at (`latestCommit`), when Bitbucket said it.
    pub latest_commit: Option<String>,
}

/// The default branch, or the sentence that says why it could not be read. A field that is not text is
/// left out, as a repository without a default branch would.
pub fn default_branch(outcome: &FetchOutcome, about: Subject<'_>) -> Result<DefaultBranch, BitbucketError> {
    let v = errors::json::<Value>(outcome, about, None)?;
    let text = |key: &str| v.get(key).and_then(Value::as_str).map(str::to_owned);
    Ok(DefaultBranch { id: text("id"), display_id: text("displayId"), latest_commit: text("latestCommit") })
}

/// A repository as the search lists it and its own read answers: names, visibility, clone addresses.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Summary {
    /// `slug`: what URLs and bb's `repo` arguments name the repository by.
    pub slug: Option<String>,
    /// The name, which may differ from the slug.
    pub name: Option<String>,
    /// Its project.
    pub project: Option<ProjectKey>,
    /// Whether anyone may read it without logging in.
    pub public: Option<bool>,
    links: Option<Links>,
}

/// A repository's project, by key.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct ProjectKey {
    pub key: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Links {
    clone: Vec<Link>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Link {
    href: Option<String>,
    name: Option<String>,
}

impl Summary {
    /// Each clone address Bitbucket gave with both its kind and its address, as `(kind, href)`, in its order.
    pub fn clone_links(&self) -> impl Iterator<Item = (&str, &str)> {
        self.links.iter().flat_map(|l| &l.clone).filter_map(|l| Some((l.name.as_deref()?, l.href.as_deref()?)))
    }
}
