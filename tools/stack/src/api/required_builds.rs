//! What a repository requires and suggests: required-build conditions, the branching model, default reviewers.
//!
//! Source: reference "Required builds" [spec][rec] and "Pull requests" (default reviewers: a bare JSON array of
//! users, as real servers return, not the spec's shape [rec]).

use super::{ReadCx, Reply, find_repo};
use crate::errors;
use crate::exchange::{Request, Response};
use crate::model::{Model, PullRequest};
use crate::paging::page_of;
use crate::ref_matchers;
use crate::render;
use serde_json::{Value, json};

/// `GET /rest/required-builds/latest/projects/{key}/repos/{slug}/conditions` — a page of conditions as seeded.
pub fn conditions(cx: &ReadCx, req: &Request, key: &str, slug: &str) -> Reply {
    let repo = find_repo(cx.m, key, slug)?;
    Ok(Response::json(200, &page_of(req, repo.conditions.clone())))
}

/// How many of the keys the target repository's conditions require of the pull request have passed, and how many
/// it requires: a condition applies when its `refMatcher` selects the target branch and its `exemptRefMatcher` does
/// not select the source branch; a key passes when the latest build of the source commit reporting under it (its
/// `parent`, else its `key`), for the source branch or for no ref, is SUCCESSFUL. [spec: reference "Required
/// builds"; assumed: the latest build decides, as bb-core's requirements module reads it]
pub fn standing(m: &Model, pr: &PullRequest) -> (usize, usize) {
    let Some(repo) = m.repos.get(&pr.to.repo) else { return (0, 0) };
    let model = repo.branch_model.as_ref();
    let (target, source) = (pr.to.id(), pr.from.id());
    let mut keys: Vec<&str> = repo
        .conditions
        .iter()
        .filter(|c| c.get("refMatcher").is_some_and(|r| ref_matchers::matches(r, &target, model)))
        .filter(|c| {
            !c.get("exemptRefMatcher").is_some_and(|r| !r.is_null() && ref_matchers::matches(r, &source, model))
        })
        .flat_map(|c| c.get("buildParentKeys").and_then(Value::as_array).into_iter().flatten())
        .filter_map(Value::as_str)
        .collect();
    keys.sort_unstable();
    keys.dedup();
    let passed = keys
        .iter()
        .filter(|key| {
            m.builds
                .iter()
                .filter(|b| b.commit == pr.from_commit && b.ref_id.as_deref().is_none_or(|r| r == source))
                .filter(|b| b.parent.as_deref().filter(|p| !p.is_empty()).unwrap_or(&b.key) == **key)
                .max_by_key(|b| b.date_added)
                .is_some_and(|b| b.state == "SUCCESSFUL")
        })
        .count();
    (passed, keys.len())
}

/// `GET /rest/branch-utils/latest/projects/{key}/repos/{slug}/branchmodel`; 404 when the repository has none.
/// [assumed: the status for a repository without a model]
pub fn branch_model(cx: &ReadCx, key: &str, slug: &str) -> Reply {
    let repo = find_repo(cx.m, key, slug)?;
    let model = repo.branch_model.as_ref().ok_or_else(|| {
        errors::error(
            404,
            Some("com.atlassian.bitbucket.branch.model.NoSuchBranchModelException"),
            "This repository has no branching model.",
        )
    })?;
    Ok(Response::json(200, model))
}

/// `GET /rest/default-reviewers/latest/projects/{key}/repos/{slug}/reviewers?sourceRefId&targetRefId` — the
/// users of every condition whose matchers select the pair, sorted by slug, as a bare array.
pub fn default_reviewers(cx: &ReadCx, req: &Request, key: &str, slug: &str) -> Reply {
    let repo = find_repo(cx.m, key, slug)?;
    let source =
        req.param("sourceRefId").ok_or_else(|| errors::field_error("sourceRefId", "sourceRefId is required"))?;
    let target =
        req.param("targetRefId").ok_or_else(|| errors::field_error("targetRefId", "targetRefId is required"))?;
    let model = repo.branch_model.as_ref();
    let mut slugs: Vec<&String> = repo
        .default_reviewers
        .iter()
        .filter(|d| ref_matchers::matches(&d.source, source, model) && ref_matchers::matches(&d.target, target, model))
        .flat_map(|d| &d.reviewers)
        .collect();
    slugs.sort();
    slugs.dedup();
    let users: Vec<Value> = slugs.into_iter().filter_map(|s| cx.m.user(s)).map(|u| render::user(&cx.v, u)).collect();
    Ok(Response::json(200, &Value::Array(users)))
}

/// `GET /rest/default-reviewers/latest/projects/{key}/repos/{slug}/conditions` — the conditions themselves.
pub fn default_reviewer_conditions(cx: &ReadCx, key: &str, slug: &str) -> Reply {
    let repo = find_repo(cx.m, key, slug)?;
    let list: Vec<Value> = repo
        .default_reviewers
        .iter()
        .map(|d| {
            json!({
                "id": d.id,
                "sourceRefMatcher": d.source,
                "targetRefMatcher": d.target,
                "reviewers": d.reviewers.iter().filter_map(|s| cx.m.user(s)).map(|u| render::user(&cx.v, u)).collect::<Vec<_>>(),
                "requiredApprovals": d.required_approvals,
            })
        })
        .collect();
    Ok(Response::json(200, &Value::Array(list)))
}
