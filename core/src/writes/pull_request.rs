//! The writes to a pull request: its creation, its update, its state (decline, reopen, merge, auto-merge) and
//! the current user's review.
//!
//! A write that changes a pull request carries the version bb (or the model) read: a decline, reopen or merge
//! both as `?version=N` and in its body, an update in its body; a stale one is 409 (for an update, with the pull
//! request as it is now [rec: sourcegraph/sourcegraph-public-snapshot
//! BitbucketServerSource_UpdateChangeset_outdated.yaml]). A branch in a body is `{id, repository {slug, project
//! {key}}}`, in the pull request's own repository. [reference "Pull requests": spec, rec]

use serde_json::{Value, json};

use super::request;
use crate::bitbucket::{pr_path, repo_path, segment};
use crate::fetch::{FetchRequest, Method};

/// A branch of `project`/`repo` as a pull request's body names it.
fn branch(project: &str, repo: &str, id: &str) -> Value {
    json!({"id": id, "repository": {"slug": repo, "project": {"key": project}}})
}

/// Each name as a reviewer `{user {name}}`.
fn reviewers(names: &[String]) -> Vec<Value> {
    names.iter().map(|n| json!({"user": {"name": n}})).collect()
}

/// A pull request to open, as `create_pull_request` decided it.
#[derive(Debug, Clone, Copy)]
pub struct New<'a> {
    pub title: &'a str,
    /// The description (Markdown); left out when `None`.
    pub description: Option<&'a str>,
    /// The source branch, a full ref.
    pub from: &'a str,
    /// The target branch, a full ref.
    pub to: &'a str,
    /// The reviewers' user names, all of them: those asked for and the default reviewers the tool read.
    pub reviewers: &'a [String],
    /// Open it as a draft (8.18+); `draft` is sent only when true.
    pub draft: bool,
}

/// `POST …/pull-requests` `{title, description?, fromRef, toRef, reviewers [{user {name}}], draft?}` → the pull
/// request. [reference "Pull requests": spec, rec]
pub fn create(project: &str, repo: &str, new: &New<'_>) -> FetchRequest {
    let mut body = json!({
        "title": new.title,
        "fromRef": branch(project, repo, new.from),
        "toRef": branch(project, repo, new.to),
        "reviewers": reviewers(new.reviewers),
    });
    if let Some(d) = new.description {
        body["description"] = json!(d);
    }
    if new.draft {
        body["draft"] = json!(true);
    }
    request(Method::Post, format!("{}/pull-requests", repo_path(project, repo)), vec![], Some(body))
}

/// What an update sends, as `update_pull_request` decided it from the pull request it read.
#[derive(Debug, Clone, Copy)]
pub struct Update<'a> {
    /// The pull request's `version` as bb read it just before: Bitbucket answers a stale one with a 409.
    pub version: u64,
    /// The title to keep or set; left out when `None`.
    pub title: Option<&'a str>,
    /// The description to keep or set; left out when `None`.
    pub description: Option<&'a str>,
    /// Every reviewer the pull request is to have, by user name.
    pub reviewers: &'a [String],
    /// A new target branch (a full ref in the same repository); left out when `None`.
    pub to: Option<&'a str>,
    /// Draft or ready (8.18+); left out when `None`.
    pub draft: Option<bool>,
}

/// `PUT …/pull-requests/{id}` `{version, title, description, reviewers [{user {name}}], toRef?, draft?}` → the pull
/// request [spec: 9.4 `update`]. The PUT replaces the reviewers with the list sent (an absent list
/// removes them all: the known failure of other servers) [issue b1ff/atlassian-dc-mcp#84], so the list is
/// always sent, whole.
pub fn update(project: &str, repo: &str, id: u64, update: &Update<'_>) -> FetchRequest {
    let mut body = json!({"version": update.version, "reviewers": reviewers(update.reviewers)});
    if let Some(t) = update.title {
        body["title"] = json!(t);
    }
    if let Some(d) = update.description {
        body["description"] = json!(d);
    }
    if let Some(t) = update.to {
        // The target stays in the pull request's repository. [rec: the sourcegraph recording's body]
        body["toRef"] = branch(project, repo, t);
    }
    if let Some(d) = update.draft {
        body["draft"] = json!(d);
    }
    request(Method::Put, pr_path(project, repo, id), vec![], Some(body))
}

/// `POST …/pull-requests/{id}/{action}?version=N` `{version}`.
fn state(project: &str, repo: &str, id: u64, action: &str, version: u64) -> FetchRequest {
    let path = format!("{}/{action}", pr_path(project, repo, id));
    request(Method::Post, path, vec![("version".into(), version.to_string())], Some(json!({"version": version})))
}

/// `POST …/pull-requests/{id}/decline?version=N` `{version}` → the pull request; 409 when it is not open or
/// changed since that version. [spec: 9.4 `decline`]
pub fn decline(project: &str, repo: &str, id: u64, version: u64) -> FetchRequest {
    state(project, repo, id, "decline", version)
}

/// `POST …/pull-requests/{id}/reopen?version=N` `{version}` → the pull request; 409 when it is not declined or
/// changed since that version. [spec: 9.4 `reopen`]
pub fn reopen(project: &str, repo: &str, id: u64, version: u64) -> FetchRequest {
    state(project, repo, id, "reopen", version)
}

/// `POST …/pull-requests/{id}/merge?version=N` with `body`, which carries the version too.
fn merge_request(project: &str, repo: &str, id: u64, version: u64, body: Value) -> FetchRequest {
    let path = format!("{}/merge", pr_path(project, repo, id));
    request(Method::Post, path, vec![("version".into(), version.to_string())], Some(body))
}

/// `POST …/pull-requests/{id}/merge?version=N` `{version, message?}` → the merged pull request; a veto comes back
/// with Bitbucket's reasons, a stale version with the current one. [reference "Pull requests": rec]
/// `strategy`: the merge strategy's id (`strategyId`, 4.9+) the person was shown, so what merges is what they
/// confirmed [assumed: the body field's name, from the Data Center REST docs' merge request body].
pub fn merge(
    project: &str,
    repo: &str,
    id: u64,
    version: u64,
    message: Option<&str>,
    strategy: Option<&str>,
) -> FetchRequest {
    let mut body = json!({"version": version});
    if let Some(m) = message {
        body["message"] = json!(m);
    }
    if let Some(s) = strategy {
        body["strategyId"] = json!(s);
    }
    merge_request(project, repo, id, version, body)
}

/// Auto-merge requested (8.15+) is a merge with `autoMerge: true`: `POST …/pull-requests/{id}/merge?version=N`
/// `{version, autoMerge: true}` → 200 with the pull request (merged at once when its checks already pass
/// [assumed]); 403 when auto-merge is turned off for the repository; 409 for conflicts, a stale version or a pull
/// request not open. A server before 8.15 does not know the field and would merge at once [assumed], so the tool
/// reads the server's version first. [Atlassian's 9.4 OpenAPI, `…/pull-requests/{pullRequestId}/merge`]
pub fn auto_merge(project: &str, repo: &str, id: u64, version: u64) -> FetchRequest {
    merge_request(project, repo, id, version, json!({"version": version, "autoMerge": true}))
}

/// `DELETE …/pull-requests/{id}/auto-merge` → 204 "The auto-merge request was cancelled"; 409 when the pull
/// request is not open; 404 on a server before 8.15, which has no such path. [Atlassian's 9.4 OpenAPI,
/// `…/auto-merge`]
pub fn cancel_auto_merge(project: &str, repo: &str, id: u64) -> FetchRequest {
    request(Method::Delete, format!("{}/auto-merge", pr_path(project, repo, id)), vec![], None)
}

/// `PUT …/pull-requests/{id}/participants/{userSlug}` `{status}`: the review of `user`, who must be the user bb
/// acts as (`status` is `APPROVED`, `NEEDS_WORK` or `UNAPPROVED`); 400 for the pull request's author.
/// [reference "Pull requests": spec]
pub fn review(project: &str, repo: &str, id: u64, user: &str, status: &str) -> FetchRequest {
    let path = format!("{}/participants/{}", pr_path(project, repo, id), segment(user));
    request(Method::Put, path, vec![], Some(json!({"status": status})))
}
