//! The writes to a repository's refs and commits: a tag created, a build result posted on a commit.

use serde_json::json;

use super::request;
use crate::bitbucket::{repo_path, segment};
use crate::fetch::{FetchRequest, Method};

/// `POST …/repos/{slug}/tags` `{name, startPoint, message?}` → 200 with the tag `{id, displayId, latestCommit,
/// hash?}`; a message makes it annotated [reference "Projects, repositories, branches, commits, tags, users":
/// spec, 9.4 `createTag`]. A name already taken: 409 DuplicateTagException [assumed: the 9.4 spec lists no 409
/// here; its `/git/latest` twin answers 400 "the provided ref name already existed"].
pub fn create_tag(project: &str, repo: &str, name: &str, start_point: &str, message: Option<&str>) -> FetchRequest {
    let mut body = json!({"name": name, "startPoint": start_point});
    if let Some(m) = message {
        body["message"] = json!(m);
    }
    request(Method::Post, format!("{}/tags", repo_path(project, repo)), vec![], Some(body))
}

/// A build's result, as a CI server reports it.
#[derive(Debug, Clone, Copy)]
pub struct BuildResult<'a> {
    /// The build's key: the same key on the same commit replaces the earlier result.
    pub key: &'a str,
    /// `SUCCESSFUL`, `FAILED`, `INPROGRESS`, `CANCELLED` or `UNKNOWN`.
    pub state: &'a str,
    /// The build's page.
    pub url: &'a str,
    /// The build's name; left out when `None`.
    pub name: Option<&'a str>,
}

/// `POST …/repos/{slug}/commits/{commitId}/builds` `{key, state, url, name?}` (Bitbucket also takes
/// `description` and `ref`) → 204 [reference "Builds": repository-scoped, 7.4+; spec]. Nothing deletes a result
/// through this API; the same key on the same commit replaces it.
pub fn build_status(project: &str, repo: &str, commit: &str, build: &BuildResult<'_>) -> FetchRequest {
    let mut body = json!({"key": build.key, "state": build.state, "url": build.url});
    if let Some(n) = build.name {
        body["name"] = json!(n);
    }
    request(
        Method::Post,
        format!("{}/commits/{}/builds", repo_path(project, repo), segment(commit)),
        vec![],
        Some(body),
    )
}
