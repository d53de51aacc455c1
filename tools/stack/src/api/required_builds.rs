//! What a repository requires and suggests: required-build conditions, the branching model, default reviewers.
//!
//! Source: reference "Required builds" [spec][rec] and "Pull requests" (default reviewers: a bare JSON array of
//! users, as real servers return, not the spec's shape [rec]).

use super::{Cx, Reply, find_repo};
use crate::errors;
use crate::exchange::{Request, Response};
use crate::paging::page_of;
use crate::ref_matchers;
use crate::render;
use serde_json::{Value, json};

/// `GET /rest/required-builds/latest/projects/{key}/repos/{slug}/conditions` — a page of conditions as seeded.
pub fn conditions(cx: &mut Cx, req: &Request, key: &str, slug: &str) -> Reply {
    let repo = find_repo(cx.m, key, slug)?;
    Ok(Response::json(200, &page_of(req, repo.conditions.clone())))
}

/// `GET /rest/branch-utils/latest/projects/{key}/repos/{slug}/branchmodel`; 404 when the repository has none.
/// [assumed: the status for a repository without a model]
pub fn branch_model(cx: &mut Cx, key: &str, slug: &str) -> Reply {
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
pub fn default_reviewers(cx: &mut Cx, req: &Request, key: &str, slug: &str) -> Reply {
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
pub fn default_reviewer_conditions(cx: &mut Cx, key: &str, slug: &str) -> Reply {
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
