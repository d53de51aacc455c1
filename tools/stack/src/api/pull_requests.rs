//! Pull requests: listing (per repository, dashboard, inbox), one, create, edit, merge, decline, reopen, and the
//! control API's push to a source branch.
//!
//! Source: reference "Pull requests" [spec][rec]. Which events change `version` and `updatedDate` [rec + seed]:
//! reviewer changes, decline, reopen, merge and title/description edits do; comments, replies, task changes and
//! approvals do not (those live in `comments` and `review`, which leave both alone).
//!
//! The checks every change passes (version, state), the activity it leaves, the vetoes and the merge itself are
//! `lifecycle`'s, which auto-merge shares; a merge that asks for auto-merge goes to `auto_merge`.

use super::lifecycle::{activity, check_version, given_version, merge_now, not_open, push_to_source, vetoed, vetoes};
use super::{Cx, ReadCx, Reply, auto_merge, find_pr, find_repo, pr_key, upper_param};
use crate::errors::{self, exception};
use crate::exchange::{Request, Response};
use crate::model::*;
use crate::paging::page_of;
use crate::render::{self, View};
use serde_json::{Value, json};
use std::collections::BTreeMap;

fn order(list: &mut [&PullRequest], req: &Request) {
    // NEWEST (the default) lists the most recently updated first, OLDEST the reverse. [assumed: the sort key]
    list.sort_by(|a, b| b.updated.cmp(&a.updated).then(b.id.cmp(&a.id)));
    if upper_param(req, "order").as_deref() == Some("OLDEST") {
        list.reverse();
    }
}

fn state_filter(req: &Request, default: &str) -> Option<PrState> {
    let s = upper_param(req, "state").unwrap_or(default.to_string());
    if s == "ALL" { None } else { PrState::parse(&s).or(Some(PrState::Open)) }
}

/// `GET …/pull-requests?state&direction&at&order&filterText&draft&role.N&username.N&approved.N`.
pub fn list(cx: &ReadCx, req: &Request, key: &str, slug: &str) -> Reply {
    let repo = find_repo(cx.m, key, slug)?.key.clone();
    let state = state_filter(req, "OPEN");
    let outgoing = upper_param(req, "direction").as_deref() == Some("OUTGOING");
    let at = req
        .param("at")
        .filter(|s| !s.is_empty())
        .map(|a| if a.starts_with("refs/") { a.to_string() } else { format!("refs/heads/{a}") });
    let text = req.param("filterText").unwrap_or("").to_lowercase();
    let draft = req.param("draft").and_then(|d| d.parse::<bool>().ok());
    let mut user_filters = Vec::new();
    for n in 1..=10 {
        let Some(user) = req.param(&format!("username.{n}")) else {
            continue;
        };
        let role = upper_param(req, &format!("role.{n}"));
        let approved = req.param(&format!("approved.{n}")).and_then(|a| a.parse::<bool>().ok());
        user_filters.push((user.to_string(), role, approved));
    }
    let mut list: Vec<&PullRequest> = cx
        .m
        .prs
        .values()
        .filter(|pr| if outgoing { pr.from.repo == repo } else { pr.to.repo == repo })
        .filter(|pr| state.is_none_or(|s| pr.state == s))
        .filter(|pr| at.as_ref().is_none_or(|a| *a == if outgoing { pr.from.id() } else { pr.to.id() }))
        .filter(|pr| {
            text.is_empty() || pr.title.to_lowercase().contains(&text) || pr.description.to_lowercase().contains(&text)
        })
        .filter(|pr| draft.is_none_or(|d| pr.draft == d))
        .filter(|pr| user_filters.iter().all(|(u, role, approved)| matches_user(pr, u, role.as_deref(), *approved)))
        .collect();
    order(&mut list, req);
    let all = list.into_iter().map(|pr| render::pull_request(&cx.v, cx.m, pr)).collect();
    Ok(Response::json(200, &page_of(req, all)))
}

fn matches_user(pr: &PullRequest, user: &str, role: Option<&str>, approved: Option<bool>) -> bool {
    let Some(actual) = pr.role_of(user) else {
        return false;
    };
    if role.is_some_and(|r| r != actual) {
        return false;
    }
    match approved {
        None => true,
        Some(want) => {
            let status =
                pr.reviewers.iter().chain(&pr.participants).find(|p| p.user == user).map(|p| p.status.as_str());
            (status == Some("APPROVED")) == want
        }
    }
}

fn my_status<'p>(pr: &'p PullRequest, me: &str) -> Option<&'p str> {
    pr.reviewers.iter().chain(&pr.participants).find(|p| p.user == me).map(|p| p.status.as_str())
}

/// `GET /rest/api/latest/dashboard/pull-requests?state&role&participantStatus&order` — the caller's pull requests
/// across repositories. Without `state` it lists open ones. [assumed: the default]
pub fn dashboard(cx: &ReadCx, req: &Request) -> Reply {
    let state = state_filter(req, "OPEN");
    let role = upper_param(req, "role");
    let statuses: Vec<String> = upper_param(req, "participantStatus")
        .map(|s| s.split(',').map(|x| x.trim().to_string()).collect())
        .unwrap_or_default();
    let me = cx.me.clone();
    let mut list: Vec<&PullRequest> =
        cx.m.prs
            .values()
            .filter(|pr| state.is_none_or(|s| pr.state == s))
            .filter(|pr| match (pr.role_of(&me), role.as_deref()) {
                (None, _) => false,
                (Some(_), None) => true,
                (Some(actual), Some(want)) => actual == want,
            })
            .filter(|pr| statuses.is_empty() || my_status(pr, &me).is_some_and(|s| statuses.iter().any(|w| w == s)))
            .collect();
    order(&mut list, req);
    let all = list.into_iter().map(|pr| render::pull_request(&cx.v, cx.m, pr)).collect();
    Ok(Response::json(200, &page_of(req, all)))
}

/// The inbox: open pull requests the caller reviews and has not approved (`role=reviewer`, the default), or
/// authored (`role=author`). [assumed: which reviewer statuses count]
fn inbox_list<'m>(m: &'m Model, me: &str, req: &Request) -> Vec<&'m PullRequest> {
    let author = upper_param(req, "role").as_deref() == Some("AUTHOR");
    let mut list: Vec<&PullRequest> = m
        .prs
        .values()
        .filter(|pr| pr.state == PrState::Open)
        .filter(|pr| {
            if author { pr.author == me } else { pr.reviewers.iter().any(|r| r.user == me && r.status != "APPROVED") }
        })
        .collect();
    list.sort_by(|a, b| b.updated.cmp(&a.updated).then(b.id.cmp(&a.id)));
    list
}

/// `GET /rest/api/latest/inbox/pull-requests?role=reviewer`.
pub fn inbox(cx: &ReadCx, req: &Request) -> Reply {
    let all = inbox_list(cx.m, &cx.me, req).into_iter().map(|pr| render::pull_request(&cx.v, cx.m, pr)).collect();
    Ok(Response::json(200, &page_of(req, all)))
}

/// `GET /rest/api/latest/inbox/pull-requests/count` → `{"count": n}`, the only PR total Bitbucket reports. [spec]
pub fn inbox_count(cx: &ReadCx, req: &Request) -> Reply {
    Ok(Response::json(200, &json!({ "count": inbox_list(cx.m, &cx.me, req).len() })))
}

/// `GET …/pull-requests/{id}`.
pub fn one(cx: &ReadCx, key: &str, slug: &str, id: &str) -> Reply {
    let pr = find_pr(cx.m, key, slug, id)?;
    Ok(Response::json(200, &render::pull_request(&cx.v, cx.m, pr)))
}

/// `GET …/pull-requests/{id}/commits` — commits on the source not on the target.
pub fn commits(cx: &ReadCx, req: &Request, key: &str, slug: &str, id: &str) -> Reply {
    let pr = find_pr(cx.m, key, slug, id)?;
    let repo = cx.m.repos.get(&pr.from.repo).ok_or_else(|| errors::no_such_resource(id))?;
    let all =
        cx.m.history(repo, &pr.from_commit, Some(&pr.to_commit))
            .iter()
            .map(|c| render::commit(&cx.v, cx.m, c))
            .collect();
    Ok(Response::json(200, &page_of(req, all)))
}

fn ref_of(m: &Model, v: &Value, field: &str) -> Result<(RepoKey, String), Response> {
    let id = v
        .get("id")
        .and_then(Value::as_str)
        .ok_or_else(|| errors::field_error(field, &format!("{field}.id is required")))?;
    let branch = id.strip_prefix("refs/heads/").unwrap_or(id).to_string();
    let repo =
        v.get("repository").ok_or_else(|| errors::field_error(field, &format!("{field}.repository is required")))?;
    let slug = repo.get("slug").and_then(Value::as_str).unwrap_or("");
    let key = repo.pointer("/project/key").and_then(Value::as_str).unwrap_or("");
    let r = find_repo(m, key, slug)?;
    if !r.branches.contains_key(&branch) {
        return Err(errors::error(
            404,
            Some(exception::NO_SUCH_REF),
            &format!("Repository {key}/{slug} has no branch {id}. [assumed: 404 NoSuchBranch]"),
        ));
    }
    Ok((r.key.clone(), branch))
}

/// `POST …/pull-requests` `{title, description, fromRef, toRef, reviewers[{user{name}}], draft?}` → 201;
/// 409 DuplicatePullRequestException with `existingPullRequest` when one is open for the same branches. [rec]
pub fn create(cx: &mut Cx, req: &Request, key: &str, slug: &str) -> Reply {
    let target = find_repo(cx.m, key, slug)?.key.clone();
    let body = req.json().map_err(|e| errors::bad_request(&e))?;
    let title = body.get("title").and_then(Value::as_str).map(str::trim).unwrap_or("");
    if title.is_empty() {
        return Err(errors::field_error("title", "A title is required."));
    }
    let (from_repo, from_branch) = ref_of(cx.m, body.get("fromRef").unwrap_or(&Value::Null), "fromRef")?;
    let (to_repo, to_branch) = ref_of(cx.m, body.get("toRef").unwrap_or(&Value::Null), "toRef")?;
    if to_repo != target {
        return Err(errors::field_error("toRef", "toRef must be a branch of this repository."));
    }
    if from_repo == to_repo && from_branch == to_branch {
        return Err(errors::error(
            409,
            Some("com.atlassian.bitbucket.pull.EmptyPullRequestException"),
            "The source and target are the same branch.",
        ));
    }
    let from = RefKey { repo: from_repo, branch: from_branch };
    let to = RefKey { repo: to_repo, branch: to_branch };
    if let Some(existing) = cx.m.prs.values().find(|p| p.state == PrState::Open && p.from == from && p.to == to) {
        let existing_json = render::pull_request(&cx.v, cx.m, existing);
        return Err(errors::error_with(
            409,
            Some(exception::DUPLICATE_PR),
            None,
            &format!("Only one pull request may be open for a given source and target branch ({}).", existing.id),
            json!({ "existingPullRequest": existing_json }),
        ));
    }
    let head = |m: &Model, r: &RefKey| {
        m.repos.get(&r.repo).and_then(|x| x.branches.get(&r.branch)).cloned().unwrap_or_default()
    };
    // Nothing on the source that the target lacks: Bitbucket opens no pull request. [assumed: the
    // exception Bitbucket names for the same branch, 409, and its words]
    let (from_head, to_head) = (head(cx.m, &from), head(cx.m, &to));
    let no_changes = cx.m.repos.get(&from.repo).is_some_and(|r| cx.m.history(r, &from_head, Some(&to_head)).is_empty());
    if no_changes {
        return Err(errors::error(
            409,
            Some("com.atlassian.bitbucket.pull.EmptyPullRequestException"),
            &format!("There are no changes to merge from {} to {}.", from.branch, to.branch),
        ));
    }
    // A reviewer who cannot review (no such user, the author): 409, as an edit's reviewers are refused.
    let mut reviewers = Vec::new();
    let mut bad = Vec::new();
    for r in body.get("reviewers").and_then(Value::as_array).into_iter().flatten() {
        let name = r.pointer("/user/name").or_else(|| r.pointer("/user/slug")).and_then(Value::as_str).unwrap_or("");
        if !cx.m.users.contains_key(name) || name == cx.me {
            let why = if name == cx.me { "is the author and cannot review" } else { "is not a user" };
            bad.push(json!({ "context": name, "message": format!("{name} {why}."), "exceptionName": Value::Null }));
        } else if !reviewers.iter().any(|p: &Participant| p.user == name) {
            reviewers.push(Participant { user: name.to_string(), status: "UNAPPROVED".into(), last_reviewed: None });
        }
    }
    if !bad.is_empty() {
        return Err(errors::error_with(
            409,
            Some("com.atlassian.bitbucket.pull.InvalidPullRequestReviewersException"),
            None,
            "Errors encountered while adding some reviewers to this pull request.",
            json!({ "reviewerErrors": bad, "validReviewers": [] }),
        ));
    }
    let now = cx.m.tick();
    let id = cx.m.prs.keys().filter(|(k, _)| *k == target).map(|(_, n)| *n).max().unwrap_or(0) + 1;
    let activity_id = cx.m.activity_id();
    let pr = PullRequest {
        id,
        version: 0,
        title: title.to_string(),
        description: body.get("description").and_then(Value::as_str).unwrap_or("").to_string(),
        state: PrState::Open,
        draft: body.get("draft").and_then(Value::as_bool).unwrap_or(false),
        locked: false,
        created: now,
        updated: now,
        closed: None,
        from_commit: from_head,
        to_commit: to_head,
        from,
        to,
        author: cx.me.clone(),
        reviewers,
        participants: Vec::new(),
        conflicted: false,
        vetoes: Vec::new(),
        files: Vec::new(),
        comments: BTreeMap::new(),
        activities: vec![Activity {
            id: activity_id,
            created: now,
            user: cx.me.clone(),
            action: "OPENED".into(),
            comment_id: None,
            comment_action: None,
            extra: json!({}),
        }],
        merge_commit: None,
        auto_merge: None,
    };
    let json = render::pull_request(&cx.v, cx.m, &pr);
    cx.m.prs.insert((target, id), pr);
    Ok(Response::json(201, &json))
}

/// `GET …/pull-requests/{id}/merge` → `{canMerge, conflicted, outcome, vetoes[]}`. [rec]
pub fn merge_check(cx: &ReadCx, key: &str, slug: &str, id: &str) -> Reply {
    let pr = find_pr(cx.m, key, slug, id)?;
    let mut v = vetoes(cx.m, pr);
    if pr.state != PrState::Open {
        v.push(json!({ "summaryMessage": "Pull request is closed", "detailedMessage": "Only open pull requests can be merged." }));
    }
    Ok(Response::json(
        200,
        &json!({
            "canMerge": v.is_empty(),
            "conflicted": pr.conflicted,
            "outcome": if pr.conflicted { "CONFLICTED" } else { "CLEAN" },
            "vetoes": v,
        }),
    ))
}

/// `POST …/merge?version=N` `{version, message?}` — 409 when stale (currentVersion, expectedVersion) or vetoed
/// (`vetoes`); otherwise MERGED, with a merge commit on the target branch.
pub fn merge(cx: &mut Cx, req: &Request, key: &str, slug: &str, id: &str) -> Reply {
    let body = req.json().map_err(|e| errors::bad_request(&e))?;
    // `autoMerge` on a server that has it (8.15+); an older one ignores the field and merges. [auto_merge]
    if body.get("autoMerge") == Some(&Value::Bool(true))
        && cx.m.version_at_least(auto_merge::SINCE.0, auto_merge::SINCE.1)
    {
        return auto_merge::request(cx, req, &body, key, slug, id);
    }
    let k = pr_key(cx.m, key, slug, id)?;
    let pr = cx.m.prs.get(&k).ok_or_else(|| errors::no_such_resource(id))?;
    if pr.state != PrState::Open {
        return Err(not_open(pr, "merged"));
    }
    check_version(&cx.v, cx.m, pr, given_version(req, &body))?;
    let v = vetoes(cx.m, pr);
    if !v.is_empty() {
        return Err(vetoed(pr, v));
    }
    merge_now(cx, &body, key, slug, id)
}

/// `POST …/decline?version=N` — 409 when stale or not open; otherwise DECLINED.
pub fn decline(cx: &mut Cx, req: &Request, key: &str, slug: &str, id: &str) -> Reply {
    close_or_reopen(cx, req, key, slug, id, PrState::Open, PrState::Declined, "DECLINED", "declined")
}

/// `POST …/reopen?version=N` — only a declined pull request can be reopened.
pub fn reopen(cx: &mut Cx, req: &Request, key: &str, slug: &str, id: &str) -> Reply {
    close_or_reopen(cx, req, key, slug, id, PrState::Declined, PrState::Open, "REOPENED", "reopened")
}

#[allow(clippy::too_many_arguments)]
fn close_or_reopen(
    cx: &mut Cx,
    req: &Request,
    key: &str,
    slug: &str,
    id: &str,
    from: PrState,
    to: PrState,
    action: &str,
    verb: &str,
) -> Reply {
    let body = req.json().map_err(|e| errors::bad_request(&e))?;
    let k = pr_key(cx.m, key, slug, id)?;
    let pr = cx.m.prs.get(&k).ok_or_else(|| errors::no_such_resource(id))?;
    if pr.state != from {
        return Err(not_open(pr, verb));
    }
    check_version(&cx.v, cx.m, pr, given_version(req, &body))?;
    let now = cx.m.tick();
    let me = cx.me.clone();
    let act = activity(cx.m, &me, action, json!({}));
    if let Some(pr) = cx.m.prs.get_mut(&k) {
        pr.state = to;
        pr.closed = (to != PrState::Open).then_some(now);
        pr.updated = now;
        pr.version += 1;
        pr.activities.push(act);
    }
    one(&cx.read(), key, slug, id)
}

/// `PUT …/pull-requests/{id}` `{version, title?, description?, reviewers, toRef?{id}, draft?}` — an edit: version and
/// updatedDate move; a reviewer change adds an UPDATED activity with `addedReviewers`/`removedReviewers`.
///
/// As Bitbucket does it:
/// - `version` is required (400 without it) [spec: 9.4 `update`, 400 "The pull request's version attribute was not
///   specified"]; a stale one is 409 with the current pull request ([`check_version`]).
/// - `reviewers` is the whole new list: a reviewer not in it is removed, and an absent list removes them all
///   [issues: b1ff/atlassian-dc-mcp#84, sourcegraph/sourcegraph-public-snapshot#46970 and #49913: "a missing
///   `reviewers` key means this pull request has no reviewers"]; a removed reviewer becomes a participant
///   [doc: javadoc 9.4 `PullRequestUpdateRequest.getReviewers`: "Any current reviewer not in this set will be relegated
///   to participant status"]. A reviewer that cannot be added (no such user, the author) is 409 [spec: 409 "One of the
///   reviewers could not be added"] [assumed: the exception's name and `reviewerErrors`].
/// - `title` and `draft` absent are kept [issue b1ff/atlassian-dc-mcp#84]; `description` absent is kept [assumed].
/// - `toRef.id` absent keeps the target [doc: javadoc `getToBranchId`: "null which will be ignored"]; a new target that
///   does not exist is 404, the source branch itself or the target of another open pull request from the same branch
///   is 409 [spec: 409 list].
pub fn update(cx: &mut Cx, req: &Request, key: &str, slug: &str, id: &str) -> Reply {
    let body = req.json().map_err(|e| errors::bad_request(&e))?;
    let k = pr_key(cx.m, key, slug, id)?;
    let pr = cx.m.prs.get(&k).ok_or_else(|| errors::no_such_resource(id))?;
    let Some(given) = given_version(req, &body) else {
        return Err(errors::field_error("version", "The pull request's version must be specified."));
    };
    check_version(&cx.v, cx.m, pr, Some(given))?;
    let names: Vec<String> = body
        .get("reviewers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|r| r.pointer("/user/name").or_else(|| r.pointer("/user/slug")).and_then(Value::as_str))
        .map(str::to_string)
        .collect();
    let bad: Vec<Value> = names
        .iter()
        .filter(|n| !cx.m.users.contains_key(*n) || **n == pr.author)
        .map(|n| {
            let why = if *n == pr.author { "is the author and cannot review" } else { "is not a user" };
            json!({ "context": n, "message": format!("{n} {why}."), "exceptionName": Value::Null })
        })
        .collect();
    if !bad.is_empty() {
        return Err(errors::error_with(
            409,
            Some("com.atlassian.bitbucket.pull.InvalidPullRequestReviewersException"),
            None,
            "Errors encountered while adding some reviewers to this pull request.",
            json!({ "reviewerErrors": bad, "validReviewers": [] }),
        ));
    }
    let new_target = match body.pointer("/toRef/id").and_then(Value::as_str) {
        Some(to) => {
            let branch = to.strip_prefix("refs/heads/").unwrap_or(to).to_string();
            let repo = cx.m.repos.get(&pr.to.repo).ok_or_else(|| errors::no_such_resource(id))?;
            let Some(head) = repo.branches.get(&branch).cloned() else {
                return Err(errors::error(404, Some(exception::NO_SUCH_REF), &format!("Branch {to} does not exist.")));
            };
            let target = RefKey { repo: pr.to.repo.clone(), branch };
            if target == pr.from {
                return Err(errors::error(
                    409,
                    Some("com.atlassian.bitbucket.pull.EmptyPullRequestException"),
                    "The source and target are the same branch.",
                ));
            }
            let other =
                cx.m.prs
                    .iter()
                    .find(|(key, p)| **key != k && p.state == PrState::Open && p.from == pr.from && p.to == target);
            if let Some((_, existing)) = other {
                return Err(errors::error_with(
                    409,
                    Some(exception::DUPLICATE_PR),
                    None,
                    &format!(
                        "Only one pull request may be open for a given source and target branch ({}).",
                        existing.id
                    ),
                    json!({ "existingPullRequest": render::pull_request(&cx.v, cx.m, existing) }),
                ));
            }
            (target != pr.to).then_some((target, head))
        }
        None => None,
    };
    let now = cx.m.tick();
    let v = cx.v.clone();
    let me = cx.me.clone();
    let aid = cx.m.activity_id();
    let users: Vec<User> = cx.m.users.values().cloned().collect();
    let user_json =
        |slug: &str| users.iter().find(|u| u.slug == slug).map(|u| render::user(&v, u)).unwrap_or(Value::Null);
    let Some(pr) = cx.m.prs.get_mut(&k) else {
        return Err(errors::no_such_resource(id));
    };
    if let Some(t) = body.get("title").and_then(Value::as_str) {
        pr.title = t.to_string();
    }
    if let Some(d) = body.get("description").and_then(Value::as_str) {
        pr.description = d.to_string();
    }
    if let Some(d) = body.get("draft").and_then(Value::as_bool) {
        pr.draft = d;
    }
    if let Some((target, head)) = new_target {
        pr.to = target;
        pr.to_commit = head;
    }
    let added: Vec<Value> =
        names.iter().filter(|n| !pr.reviewers.iter().any(|r| &r.user == *n)).map(|n| user_json(n)).collect();
    let removed: Vec<Participant> = pr.reviewers.iter().filter(|r| !names.contains(&r.user)).cloned().collect();
    pr.reviewers.retain(|r| names.contains(&r.user));
    for n in names {
        if !pr.reviewers.iter().any(|r| r.user == n) {
            // A participant who becomes a reviewer keeps their status.
            let was = pr.participants.iter().position(|p| p.user == n).map(|i| pr.participants.remove(i));
            let status = was.map(|p| p.status).unwrap_or_else(|| "UNAPPROVED".into());
            pr.reviewers.push(Participant { user: n, status, last_reviewed: None });
        }
    }
    let removed_json: Vec<Value> = removed.iter().map(|r| user_json(&r.user)).collect();
    for r in removed {
        if !pr.participants.iter().any(|p| p.user == r.user) {
            pr.participants.push(r);
        }
    }
    if !added.is_empty() || !removed_json.is_empty() {
        pr.activities.push(Activity {
            id: aid,
            created: now,
            user: me,
            action: "UPDATED".into(),
            comment_id: None,
            comment_action: None,
            extra: json!({ "addedReviewers": added, "removedReviewers": removed_json }),
        });
    }
    pr.version += 1;
    pr.updated = now;
    one(&cx.read(), key, slug, id)
}

/// Control API: `POST /_stack/push {project, repo, pullRequest, user?, message?}` — a new commit on the pull
/// request's source branch that keeps the files as they were (so the diff stays as it was), and the pull request
/// rescoped ([`push_to_source`]). Answers the pull request.
pub fn control_push(m: &mut Model, v: &View, body: &Value) -> Response {
    let key = body.get("project").and_then(Value::as_str).unwrap_or("");
    let slug = body.get("repo").and_then(Value::as_str).unwrap_or("");
    let id = body.get("pullRequest").map(|x| x.to_string()).unwrap_or_default();
    let k = match pr_key(m, key, slug, id.trim_matches('"')) {
        Ok(k) => k,
        Err(r) => return r,
    };
    let Some(pr) = m.prs.get(&k) else {
        return errors::no_such_resource(&id);
    };
    let user = body.get("user").and_then(Value::as_str).unwrap_or(&pr.author).to_string();
    if !m.users.contains_key(&user) {
        return errors::field_error("user", &format!("{user} is not a user."));
    }
    let message =
        body.get("message").and_then(Value::as_str).map(str::to_string).unwrap_or(format!("Follow-up on #{}", k.1));
    if let Err(r) = push_to_source(m, v, &k, &user, message, None) {
        return r;
    }
    let pr = &m.prs[&k];
    Response::json(200, &render::pull_request(v, m, pr))
}
