//! Projects, repositories, branches, commits, tags and the server's version.
//!
//! Source: reference "Projects, repositories, branches, commits, tags, users" [spec][rec].

use super::{Cx, ReadCx, Reply, find_repo};
use crate::errors::{self, exception};
use crate::exchange::{Request, Response};
use crate::model::{Model, Repo, Tag};
use crate::paging::page_of;
use crate::render;
use serde_json::{Value, json};

/// `GET /rest/api/latest/application-properties` → `{version, buildNumber, buildDate, displayName}`. [spec]
pub fn application(m: &Model) -> Response {
    Response::json(200, &m.application)
}

fn contains_ci(hay: &str, needle: &str) -> bool {
    hay.to_lowercase().contains(&needle.to_lowercase())
}

/// `GET /rest/api/latest/projects?name=` (name is a case-insensitive substring).
pub fn list_projects(cx: &ReadCx, req: &Request) -> Reply {
    let name = req.param("name").unwrap_or("");
    let all =
        cx.m.projects.values().filter(|p| contains_ci(&p.name, name)).map(|p| render::project(&cx.v, p)).collect();
    Ok(Response::json(200, &page_of(req, all)))
}

/// `GET /rest/api/latest/projects/{key}`.
pub fn one_project(cx: &ReadCx, key: &str) -> Reply {
    let p = cx.m.projects.get(&key.to_ascii_uppercase()).ok_or_else(|| {
        errors::error(404, Some(exception::NO_SUCH_PROJECT), &format!("Project {key} does not exist."))
    })?;
    Ok(Response::json(200, &render::project(&cx.v, p)))
}

/// `GET /rest/api/latest/projects/{key}/repos`.
pub fn list_repos(cx: &ReadCx, req: &Request, key: &str) -> Reply {
    let key = key.to_ascii_uppercase();
    if !cx.m.projects.contains_key(&key) {
        return Err(errors::error(404, Some(exception::NO_SUCH_PROJECT), &format!("Project {key} does not exist.")));
    }
    let all = cx.m.repos.values().filter(|r| r.key.0 == key).map(|r| render::repo(&cx.v, cx.m, r)).collect();
    Ok(Response::json(200, &page_of(req, all)))
}

/// `GET /rest/api/latest/repos?name=&projectname=` (case-insensitive substrings; `permission` is accepted and
/// ignored: every seeded user may read everything).
pub fn search_repos(cx: &ReadCx, req: &Request) -> Reply {
    let name = req.param("name").unwrap_or("");
    let project = req.param("projectname").unwrap_or("");
    let all =
        cx.m.repos
            .values()
            .filter(|r| contains_ci(&r.name, name))
            .filter(|r| cx.m.projects.get(&r.key.0).is_some_and(|p| contains_ci(&p.name, project)))
            .map(|r| render::repo(&cx.v, cx.m, r))
            .collect();
    Ok(Response::json(200, &page_of(req, all)))
}

/// `GET …/repos/{slug}`.
pub fn one_repo(cx: &ReadCx, key: &str, slug: &str) -> Reply {
    let r = find_repo(cx.m, key, slug)?;
    Ok(Response::json(200, &render::repo(&cx.v, cx.m, r)))
}

fn branch_json(m: &Model, repo: &Repo, name: &str, head: &str) -> Value {
    let _ = m;
    json!({
        "id": format!("refs/heads/{name}"),
        "displayId": name,
        "type": "BRANCH",
        "latestCommit": head,
        "latestChangeset": head,
        "isDefault": name == repo.default_branch,
    })
}

/// `GET …/branches?filterText=&orderBy=ALPHABETICAL|MODIFICATION` (modification: newest head first; the
/// default branch first either way, as Bitbucket lists it).
pub fn branches(cx: &ReadCx, req: &Request, key: &str, slug: &str) -> Reply {
    let repo = find_repo(cx.m, key, slug)?;
    let filter = req.param("filterText").unwrap_or("");
    let mut list: Vec<(&String, &String)> = repo.branches.iter().filter(|(n, _)| contains_ci(n, filter)).collect();
    if req.param("orderBy").is_some_and(|o| o.eq_ignore_ascii_case("MODIFICATION")) {
        let at = |id: &String| repo.commits.get(id).map(|c| c.at).unwrap_or(0);
        list.sort_by(|a, b| at(b.1).cmp(&at(a.1)).then(a.0.cmp(b.0)));
    }
    list.sort_by_key(|(n, _)| **n != repo.default_branch);
    let all = list.into_iter().map(|(n, h)| branch_json(cx.m, repo, n, h)).collect();
    Ok(Response::json(200, &page_of(req, all)))
}

/// `GET …/default-branch` (and the older `…/branches/default`).
pub fn default_branch(cx: &ReadCx, key: &str, slug: &str) -> Reply {
    let repo = find_repo(cx.m, key, slug)?;
    let head = repo.branches.get(&repo.default_branch).cloned().unwrap_or_default();
    Ok(Response::json(200, &branch_json(cx.m, repo, &repo.default_branch, &head)))
}

/// `GET …/settings/pull-requests` — the repository's pull request settings; bb reads the merge strategy Bitbucket
/// will use (`mergeConfig.defaultStrategy`). The stand-in's repositories keep Bitbucket's default, "Merge commit"
/// (`no-ff`), as a new repository does (docs/reference/bitbucket-dc.md "Merge strategies").
pub fn pull_request_settings(cx: &ReadCx, key: &str, slug: &str) -> Reply {
    find_repo(cx.m, key, slug)?;
    let strategy = |id: &str, name: &str, flag: &str, description: &str, enabled: bool| serde_json::json!({"id": id, "name": name, "flag": flag, "description": description, "enabled": enabled});
    let strategies = vec![
        strategy("no-ff", "Merge commit", "--no-ff", "Always create a new merge commit", true),
        strategy(
            "ff",
            "Fast-forward",
            "--ff",
            "Do not create a merge commit if the target branch is an ancestor",
            true,
        ),
        strategy("squash", "Squash", "--squash", "Combine all commits into one new non-merge commit", true),
    ];
    Ok(Response::json(
        200,
        &serde_json::json!({
            "mergeConfig": {"defaultStrategy": strategies[0].clone(), "strategies": strategies, "type": "DEFAULT"},
            "requiredAllApprovers": false, "requiredAllTasksComplete": false, "requiredApprovers": 0,
            "requiredSuccessfulBuilds": 0,
        }),
    ))
}

pub(super) fn no_such_commit(name: &str) -> Response {
    errors::error(404, Some(exception::NO_SUCH_COMMIT), &format!("Commit '{name}' does not exist in this repository."))
}

/// `GET …/commits?until=&since=&path=&merges=` — newest first from `until` (default branch when absent),
/// excluding what `since` reaches. `path` and `merges` are accepted; the seed's history has no merges.
pub fn commits(cx: &ReadCx, req: &Request, key: &str, slug: &str) -> Reply {
    let repo = find_repo(cx.m, key, slug)?;
    let until = req.param("until").filter(|s| !s.is_empty()).unwrap_or(&repo.default_branch);
    let head = cx.m.resolve(repo, until).ok_or_else(|| no_such_commit(until))?;
    let since = match req.param("since").filter(|s| !s.is_empty()) {
        Some(s) => Some(cx.m.resolve(repo, s).ok_or_else(|| no_such_commit(s))?),
        None => None,
    };
    let all = cx.m.history(repo, &head, since.as_deref()).iter().map(|c| render::commit(&cx.v, cx.m, c)).collect();
    Ok(Response::json(200, &page_of(req, all)))
}

/// `GET …/commits/{commitId}`.
pub fn one_commit(cx: &ReadCx, key: &str, slug: &str, id: &str) -> Reply {
    let repo = find_repo(cx.m, key, slug)?;
    let full = cx.m.resolve(repo, id).ok_or_else(|| no_such_commit(id))?;
    let c = repo.commits.get(&full).ok_or_else(|| no_such_commit(id))?;
    Ok(Response::json(200, &render::commit(&cx.v, cx.m, c)))
}

/// `GET …/compare/commits?from=&to=` — commits `from` has that `to` has not.
pub fn compare_commits(cx: &ReadCx, req: &Request, key: &str, slug: &str) -> Reply {
    let repo = find_repo(cx.m, key, slug)?;
    let from = req.param("from").ok_or_else(|| errors::field_error("from", "from is required"))?;
    let head = cx.m.resolve(repo, from).ok_or_else(|| no_such_commit(from))?;
    let stop = match req.param("to").filter(|s| !s.is_empty()) {
        Some(t) => Some(cx.m.resolve(repo, t).ok_or_else(|| no_such_commit(t))?),
        None => None,
    };
    let all = cx.m.history(repo, &head, stop.as_deref()).iter().map(|c| render::commit(&cx.v, cx.m, c)).collect();
    Ok(Response::json(200, &page_of(req, all)))
}

fn tag_json(t: &Tag) -> Value {
    json!({
        "id": format!("refs/tags/{}", t.name),
        "displayId": t.name,
        "type": "TAG",
        "latestCommit": t.commit,
        "latestChangeset": t.commit,
        "hash": if t.message.is_some() { Value::from(format!("{:0>40}", &t.commit[..8.min(t.commit.len())])) } else { Value::Null },
    })
}

/// `GET …/tags?filterText=&orderBy=ALPHABETICAL|MODIFICATION`.
pub fn tags(cx: &ReadCx, req: &Request, key: &str, slug: &str) -> Reply {
    let repo = find_repo(cx.m, key, slug)?;
    let filter = req.param("filterText").unwrap_or("");
    let mut list: Vec<&Tag> = repo.tags.values().filter(|t| contains_ci(&t.name, filter)).collect();
    if req.param("orderBy").is_some_and(|o| o.eq_ignore_ascii_case("MODIFICATION")) {
        let at = |t: &Tag| repo.commits.get(&t.commit).map(|c| c.at).unwrap_or(0);
        list.sort_by(|a, b| at(b).cmp(&at(a)).then(a.name.cmp(&b.name)));
    }
    Ok(Response::json(200, &page_of(req, list.into_iter().map(tag_json).collect())))
}

/// `GET …/tags/{name}`.
pub fn one_tag(cx: &ReadCx, key: &str, slug: &str, name: &str) -> Reply {
    let repo = find_repo(cx.m, key, slug)?;
    let t = repo.tags.get(name.strip_prefix("refs/tags/").unwrap_or(name)).ok_or_else(|| {
        errors::error(404, Some(exception::NO_SUCH_REF), &format!("Tag {name} does not exist in this repository."))
    })?;
    Ok(Response::json(200, &tag_json(t)))
}

/// `POST /rest/api/latest/projects/{key}/repos/{slug}/tags` `{name, startPoint, message?}` → 200 with the tag. [spec]
pub fn create_tag(cx: &mut Cx, req: &Request, key: &str, slug: &str) -> Reply {
    let body = req.json().map_err(|e| errors::bad_request(&e))?;
    let name = body.get("name").and_then(Value::as_str).filter(|s| !s.is_empty());
    let name = name.ok_or_else(|| errors::field_error("name", "A tag name is required."))?.to_string();
    let start = body.get("startPoint").and_then(Value::as_str).unwrap_or("").to_string();
    let repo = find_repo(cx.m, key, slug)?;
    if repo.tags.contains_key(&name) {
        return Err(errors::error(
            409,
            Some(exception::DUPLICATE_TAG),
            &format!("Tag {name} already exists in this repository."),
        ));
    }
    let commit = cx.m.resolve(repo, &start).ok_or_else(|| {
        errors::field_error("startPoint", &format!("'{start}' is not a commit or ref in this repository."))
    })?;
    let tag =
        Tag { name: name.clone(), commit, message: body.get("message").and_then(Value::as_str).map(str::to_string) };
    let json = tag_json(&tag);
    let repo_key = repo.key.clone();
    if let Some(r) = cx.m.repos.get_mut(&repo_key) {
        r.tags.insert(name, tag);
    }
    Ok(Response::json(200, &json))
}
