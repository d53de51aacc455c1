//! A list of pull requests: a repository's, or the current user's dashboard or reviewer inbox, as one
//! call's arguments ask for it. `list_pull_requests` and the list view render the same read.
//!
//! Requests: one page (1); the inbox adds Bitbucket's count of it in parallel (2), the only pull request
//! total Bitbucket reports — no repository-wide count exists, so a page's size is never called a total.
//! [reference "Pull requests": spec]

use serde_json::{Map, Value};

use crate::args::{flag, number, paging, string};
use crate::bitbucket::model::PullRequest;
use crate::bitbucket::repo_path;
use crate::fetch::FetchRequest;

/// Names the reads of a list call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PullRequestsRead {
    /// The page of pull requests.
    Page,
    /// The reviewer inbox's count.
    Count,
}

/// Bitbucket's build totals for many commits in one request: `POST /rest/build-status/latest/commits/stats`
/// with a JSON array of commit ids → `{commitId: {successful, failed, inProgress}}`; a commit without
/// builds is left out of the answer. [reference "Builds"; the endpoint is documented as
/// `POST build-status/1.0/commits/stats`, "Produces a list of the build statistics for multiple commits"]
/// A read that carries its list in a body: never retried blindly, as every POST.
pub fn build_stats_request(commits: &[String]) -> FetchRequest {
    FetchRequest {
        method: crate::fetch::Method::Post,
        path: "/rest/build-status/latest/commits/stats".into(),
        query: vec![],
        body: Some(Value::from(commits.to_vec())),
        keep: None,
        refresh: None,
    }
}

/// What a list call asks Bitbucket, decided from its arguments (shared with the list view).
#[derive(Debug)]
pub struct ListQuery {
    /// The requests, each named.
    pub first: Vec<(PullRequestsRead, FetchRequest)>,
    /// What is listed, in words ("Pull requests of BB/api, state OPEN, newest first").
    pub scope: String,
    /// What Bitbucket calls the list: "Pull requests" (a repository's), "Your pull requests" (the
    /// dashboard) or "Reviewing" (the reviewer inbox). [reference bitbucket-ui "Pull request list page"]
    pub heading: &'static str,
    /// The state filter (OPEN, MERGED, DECLINED, ALL); `None` for the inbox, which has none.
    pub filter: Option<String>,
    /// Whether the list spans repositories (dashboard, inbox).
    pub across: bool,
    /// A source branch to keep, when the target branch was the server-side filter.
    pub source_filter: Option<String>,
    /// The project key, when one was given.
    pub project: String,
    /// The repository slug, when one was given.
    pub repo: String,
}

/// The requests of a list call, or the sentence that says which arguments do not go together.
pub fn query(args: &Map<String, Value>) -> Result<ListQuery, String> {
    let (project, repo) = (string(args, "project"), string(args, "repo"));
    let start = number(args, "start").unwrap_or(0);
    let limit = number(args, "limit").unwrap_or(25);
    let state = string(args, "state").unwrap_or("OPEN").to_owned();
    let order = string(args, "order").unwrap_or("NEWEST").to_owned();
    let role = string(args, "role");
    let mut query = Vec::new();
    let mut scope;
    let mut first = Vec::new();
    let mut source_filter = None;
    match (project, repo) {
        (Some(p), Some(r)) => {
            if flag(args, "inbox") == Some(true) {
                return Err("inbox lists across repositories: leave project and repo out.".into());
            }
            query.push(("state".into(), state.clone()));
            let (source, target) = (string(args, "source_branch"), string(args, "target_branch"));
            // `at` filters one ref, the direction says which end. [reference "Pull requests": spec]
            match (source, target) {
                (Some(src), None) => {
                    query.push(("direction".into(), "OUTGOING".into()));
                    query.push(("at".into(), full_ref(src)));
                }
                (_, Some(tgt)) => {
                    query.push(("direction".into(), "INCOMING".into()));
                    query.push(("at".into(), full_ref(tgt)));
                    source_filter = source.map(str::to_owned);
                }
                (None, None) => {}
            }
            if let Some(t) = string(args, "text") {
                query.push(("filterText".into(), t.to_owned()));
            }
            if let Some(d) = flag(args, "draft") {
                query.push(("draft".into(), d.to_string()));
            }
            match (role, string(args, "user")) {
                (Some(_), None) => {
                    return Err("In a repository, role filters by user: give user (a username) with role.".into());
                }
                (role, Some(u)) => {
                    query.push(("username.1".into(), u.to_owned()));
                    if let Some(role) = role {
                        query.push(("role.1".into(), role.to_owned()));
                    }
                }
                (None, None) => {}
            }
            query.push(("order".into(), order.clone()));
            query.extend(paging(start, limit));
            scope = format!("Pull requests of {p}/{r}");
            first
                .push((PullRequestsRead::Page, FetchRequest::get(format!("{}/pull-requests", repo_path(p, r)), query)));
        }
        (None, None) => {
            for arg in ["source_branch", "target_branch", "text", "draft", "user"] {
                if args.contains_key(arg) {
                    return Err(format!("{arg} needs a repository: give project and repo too."));
                }
            }
            if flag(args, "inbox") == Some(true) {
                query.push(("role".into(), "reviewer".into()));
                query.extend(paging(start, limit));
                scope = "Your reviewer inbox".to_owned();
                first.push((PullRequestsRead::Page, FetchRequest::get("/rest/api/latest/inbox/pull-requests", query)));
                first.push((
                    PullRequestsRead::Count,
                    FetchRequest::get(
                        "/rest/api/latest/inbox/pull-requests/count",
                        vec![("role".into(), "reviewer".into())],
                    ),
                ));
            } else {
                query.push(("state".into(), state.clone()));
                if let Some(role) = role {
                    query.push(("role".into(), role.to_owned()));
                }
                query.push(("order".into(), order.clone()));
                query.extend(paging(start, limit));
                scope = "Your pull requests (dashboard)".to_owned();
                first.push((
                    PullRequestsRead::Page,
                    FetchRequest::get("/rest/api/latest/dashboard/pull-requests", query),
                ));
            }
        }
        _ => return Err("Give both project and repo, or neither (your dashboard).".into()),
    }
    if flag(args, "inbox") != Some(true) {
        scope.push_str(&format!(", state {state}, {} first", if order == "OLDEST" { "oldest" } else { "newest" }));
    }
    let inbox = flag(args, "inbox") == Some(true);
    let heading = match (project, inbox) {
        (Some(_), _) => "Pull requests",
        (None, true) => "Reviewing",
        (None, false) => "Your pull requests",
    };
    Ok(ListQuery {
        first,
        scope,
        heading,
        filter: (!inbox).then(|| state.clone()),
        across: repo.is_none(),
        source_filter,
        project: project.unwrap_or("").to_owned(),
        repo: repo.unwrap_or("").to_owned(),
    })
}

/// Whether `pr`'s target repository is in `scope` (no scope holds every one): how the dashboard and the
/// inbox are narrowed to the admin's scope. A pull request that names no target repository is outside.
pub fn in_scope(scope: Option<&crate::scope::Scope>, pr: &PullRequest) -> bool {
    scope.is_none_or(|s| {
        let repo = pr.to_ref.as_ref().and_then(|r| r.repository.as_ref());
        repo.is_some_and(|r| s.holds_full_name(&r.full_name()))
    })
}

/// Whether `pr` passes the source-branch filter (none keeps every pull request).
pub fn keeps(source_filter: Option<&str>, pr: &PullRequest) -> bool {
    source_filter.is_none_or(|want| {
        let from = pr.from_ref.as_ref();
        from.is_some_and(|r| r.display_id.as_deref() == Some(want) || r.id.as_deref() == Some(&full_ref(want)))
    })
}

/// The open pull requests out of `from` (a page: a branch rarely has more), to find one into `to` before the
/// person creates another: `GET …/pull-requests?state=OPEN&direction=OUTGOING&at=refs/heads/{from}`.
/// [reference "Pull requests": spec]
pub fn open_from_request(project: &str, repo: &str, from: &str) -> FetchRequest {
    FetchRequest::get(
        format!("{}/pull-requests", crate::bitbucket::repo_path(project, repo)),
        vec![
            ("state".into(), "OPEN".into()),
            ("direction".into(), "OUTGOING".into()),
            ("at".into(), full_ref(from)),
            ("limit".into(), "50".into()),
        ],
    )
}

/// The open pull request among `prs` into `to`, as `{id, title}`.
pub fn open_into(prs: &[PullRequest], to: &str) -> Option<serde_json::Value> {
    let want = full_ref(to);
    prs.iter()
        .find(|p| p.to_ref.as_ref().and_then(|r| r.id.as_deref()) == Some(want.as_str()))
        .map(|p| serde_json::json!({"id": p.id, "title": p.title}))
}

/// A branch name as a full ref id (`main` → `refs/heads/main`); a full ref stays as it is.
pub fn full_ref(branch: &str) -> String {
    if branch.starts_with("refs/") { branch.to_owned() } else { format!("refs/heads/{branch}") }
}

/// The default reviewers for a branch pair in one repository: a bare array of users.
/// [reference "Pull requests": rec]
pub fn default_reviewers_request(
    project: &str,
    repo: &str,
    repo_id: u64,
    from: &str,
    to: Option<&str>,
) -> FetchRequest {
    FetchRequest::get(
        format!(
            "/rest/default-reviewers/latest/projects/{}/repos/{}/reviewers",
            crate::bitbucket::segment(project),
            crate::bitbucket::segment(repo)
        ),
        vec![
            ("sourceRepoId".into(), repo_id.to_string()),
            ("targetRepoId".into(), repo_id.to_string()),
            ("sourceRefId".into(), from.to_owned()),
            ("targetRefId".into(), to.unwrap_or_default().to_owned()),
        ],
    )
}
