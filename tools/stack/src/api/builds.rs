//! Build statuses: the legacy listing and stats by commit, the repository-scoped build, the pull request page's
//! UI listing, posting a status, and the control API's build moves.
//!
//! Source: reference "Builds" [spec][rec]; the UI listing's shape and `page` wrapper are [assumed] there.

use super::{Cx, ReadCx, Reply, find_pr, find_repo, pr_key};
use crate::errors;
use crate::exchange::{Request, Response};
use crate::model::{Build, Model};
use crate::paging::page_of;
use crate::render;
use serde_json::{Value, json};

const STATES: [&str; 5] = ["SUCCESSFUL", "FAILED", "INPROGRESS", "CANCELLED", "UNKNOWN"];

fn of_commit<'m>(m: &'m Model, commit: &str) -> Vec<&'m Build> {
    let mut list: Vec<&Build> = m.builds.iter().filter(|b| b.commit == commit).collect();
    list.sort_by(|a, b| b.date_added.cmp(&a.date_added).then(a.key.cmp(&b.key)));
    list
}

/// `GET /rest/build-status/1.0/commits/{commit}` — every build of the commit, without ref or parent. [spec]
pub fn legacy(cx: &ReadCx, req: &Request, commit: &str) -> Reply {
    let all = of_commit(cx.m, commit).into_iter().map(render::build_legacy).collect();
    Ok(Response::json(200, &page_of(req, all)))
}

/// `GET /rest/build-status/1.0/commits/stats/{commit}` → `{successful, failed, inProgress, cancelled, unknown}`.
pub fn stats(cx: &ReadCx, commit: &str) -> Reply {
    let list = of_commit(cx.m, commit);
    let count = |s: &str| list.iter().filter(|b| b.state == s).count();
    Ok(Response::json(
        200,
        &json!({
            "successful": count("SUCCESSFUL"),
            "failed": count("FAILED"),
            "inProgress": count("INPROGRESS"),
            "cancelled": count("CANCELLED"),
            "unknown": count("UNKNOWN"),
        }),
    ))
}

/// `POST /rest/build-status/1.0/commits/stats` with a JSON array of commit ids → `{commit: {successful, failed,
/// inProgress}}`, leaving out the commits without builds. [doc: "Produces a list of the build statistics for
/// multiple commits"; the answer's per-commit shape is assumed to be the single-commit one's first three counts]
pub fn stats_of_many(cx: &ReadCx, req: &Request) -> Reply {
    let Some(commits) = req.json().ok().and_then(|v| v.as_array().cloned()) else {
        return Err(errors::field_error("commits", "a JSON array of commit ids is required"));
    };
    let mut out = serde_json::Map::new();
    for commit in commits.iter().filter_map(|c| c.as_str()) {
        let list = of_commit(cx.m, commit);
        if list.is_empty() {
            continue;
        }
        let count = |s: &str| list.iter().filter(|b| b.state == s).count();
        out.insert(
            commit.to_owned(),
            json!({"successful": count("SUCCESSFUL"), "failed": count("FAILED"), "inProgress": count("INPROGRESS")}),
        );
    }
    Ok(Response::json(200, &serde_json::Value::Object(out)))
}

/// `GET /rest/ui/latest/projects/{key}/repos/{slug}/pull-requests/{id}/builds` — the source commit's builds whose
/// `ref` is the source branch or absent, as a page under a `page` key. [assumed: shape]
pub fn pull_request_builds(cx: &ReadCx, req: &Request, key: &str, slug: &str, id: &str) -> Reply {
    let pr = find_pr(cx.m, key, slug, id)?;
    let source = pr.from.id();
    let all = of_commit(cx.m, &pr.from_commit)
        .into_iter()
        .filter(|b| b.ref_id.as_deref().is_none_or(|r| r == source))
        .map(render::build_full)
        .collect();
    Ok(Response::json(200, &json!({ "page": page_of(req, all) })))
}

/// `GET …/repos/{slug}/commits/{commit}/builds?key=K` — one build; 400 without `key`. [spec][rec]
pub fn repo_build(cx: &ReadCx, req: &Request, key: &str, slug: &str, commit: &str) -> Reply {
    find_repo(cx.m, key, slug)?;
    let k = req
        .param("key")
        .filter(|k| !k.is_empty())
        .ok_or_else(|| errors::field_error("key", "The build key is required."))?;
    let b = of_commit(cx.m, commit).into_iter().find(|b| b.key == k).ok_or_else(|| {
        errors::error(
            404,
            Some("com.atlassian.bitbucket.build.status.NoSuchBuildStatusException"),
            &format!("No build status with key {k} exists for commit {commit}."),
        )
    })?;
    Ok(Response::json(200, &render::build_full(b)))
}

fn upsert(m: &mut Model, b: Build) {
    match m.builds.iter_mut().find(|x| x.commit == b.commit && x.key == b.key && x.ref_id == b.ref_id) {
        Some(x) => *x = b,
        None => m.builds.push(b),
    }
}

/// `POST /rest/build-status/1.0/commits/{commit}` or `POST …/repos/{slug}/commits/{commit}/builds`
/// `{key, state, url, name?, description?, ref?, parent?, buildNumber?, duration?, testResults?}` → 204.
pub fn post(cx: &mut Cx, req: &Request, repo: Option<(&str, &str)>, commit: &str) -> Reply {
    if let Some((key, slug)) = repo {
        find_repo(cx.m, key, slug)?;
    }
    let body = req.json().map_err(|e| errors::bad_request(&e))?;
    let text = |f: &str| body.get(f).and_then(Value::as_str).map(str::to_string);
    let key = text("key").filter(|k| !k.is_empty()).ok_or_else(|| errors::field_error("key", "key is required"))?;
    let state = text("state").map(|s| s.to_ascii_uppercase()).filter(|s| STATES.contains(&s.as_str()));
    let state = state.ok_or_else(|| {
        errors::field_error("state", "state must be SUCCESSFUL, FAILED, INPROGRESS, CANCELLED or UNKNOWN")
    })?;
    let url = text("url").ok_or_else(|| errors::field_error("url", "url is required"))?;
    let now = cx.m.tick();
    let b = Build {
        commit: commit.to_string(),
        name: text("name").unwrap_or(key.clone()),
        key,
        state,
        url,
        description: text("description").unwrap_or_default(),
        date_added: now,
        ref_id: text("ref"),
        parent: text("parent"),
        build_number: text("buildNumber"),
        duration: body.get("duration").and_then(Value::as_u64),
        test_results: body.get("testResults").cloned(),
    };
    upsert(cx.m, b);
    Ok(Response::empty(204))
}

/// Control API: `POST /_stack/builds {project, repo, pullRequest | commit, key, state, name?, ref?, parent?,
/// description?}` — moves the build with that key on the commit (the pull request's source commit) to `state`,
/// or adds it (for a pull request, on its source branch unless `ref` says otherwise).
pub fn control_set_build(m: &mut Model, body: &Value) -> Response {
    let text = |f: &str| body.get(f).and_then(Value::as_str).map(str::to_string);
    let (commit, source_ref) = match (text("commit"), body.get("pullRequest")) {
        (Some(c), _) => (c, None),
        (None, Some(id)) => {
            let key = text("project").unwrap_or_default();
            let slug = text("repo").unwrap_or_default();
            let found = pr_key(m, &key, &slug, id.to_string().trim_matches('"'))
                .map(|k| m.prs.get(&k).map(|p| (p.from_commit.clone(), p.from.id())));
            match found {
                Ok(Some((c, r))) => (c, Some(r)),
                Ok(None) => return errors::no_such_resource("pull request"),
                Err(r) => return r,
            }
        }
        (None, None) => {
            return errors::field_error("commit", "commit or pullRequest (with project and repo) is required");
        }
    };
    let Some(key) = text("key") else {
        return errors::field_error("key", "key is required");
    };
    let Some(state) = text("state").map(|s| s.to_ascii_uppercase()).filter(|s| STATES.contains(&s.as_str())) else {
        return errors::field_error("state", "state must be SUCCESSFUL, FAILED, INPROGRESS, CANCELLED or UNKNOWN");
    };
    let now = m.tick();
    let wanted_ref = text("ref");
    let existing = m
        .builds
        .iter_mut()
        .find(|b| b.commit == commit && b.key == key && (wanted_ref.is_none() || b.ref_id == wanted_ref));
    let build = match existing {
        Some(b) => {
            b.state = state;
            b.date_added = now;
            if let Some(d) = text("description") {
                b.description = d;
            }
            b.clone()
        }
        None => {
            let b = Build {
                commit,
                name: text("name").unwrap_or(key.clone()),
                url: format!("https://ci.example.invalid/{key}"),
                key,
                state,
                description: text("description").unwrap_or_default(),
                date_added: now,
                ref_id: wanted_ref.or(source_ref),
                parent: text("parent"),
                build_number: None,
                duration: None,
                test_results: None,
            };
            m.builds.push(b.clone());
            b
        }
    };
    Response::json(200, &json!({ "commit": build.commit, "build": render::build_full(&build) }))
}
