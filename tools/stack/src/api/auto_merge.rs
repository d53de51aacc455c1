//! Auto-merge (Bitbucket 8.15+): a pull request merged once every merge check passes, the repository setting
//! that allows it, and what a server older than 8.15 does instead.
//!
//! Sources: Atlassian's 9.4 OpenAPI. `POST …/pull-requests/{id}/merge` with `autoMerge: true` requests it (403
//! "The auto-merge setting is not enabled for the repository that this pull request targets"); `GET`, `POST` (try
//! a requested merge now; 400 when none was requested) and `DELETE` (cancel; 204, 409 when not open) of
//! `…/pull-requests/{id}/auto-merge`; `GET`/`PUT …/repos/{slug}/settings/auto-merge` `{enabled}`.
//! [assumed] Bitbucket merges at once when nothing vetoes the merge; a conflicted pull request is refused as a
//! plain merge is; `GET …/auto-merge` with no request answers 204; cancelling with none is a 204 too; the exact
//! words of the 403. On a server before 8.15 (`application.version`), every path here is unknown (404) and the
//! merge endpoint ignores `autoMerge`, as an older server ignores a field it does not know: it merges.

use super::lifecycle::{activity, check_version, given_version, merge_now, not_open, vetoed, vetoes};
use super::{Cx, ReadCx, Reply, find_pr, find_repo, pr_key};
use crate::errors::{self, exception};
use crate::exchange::{Request, Response};
use crate::model::{AutoMerge, Model, PrState};
use crate::render;
use serde_json::{Value, json};

/// The release that brought auto-merge.
pub const SINCE: (u32, u32) = (8, 15);

/// The 403 of a repository whose setting is off. [assumed: the words; the spec gives the meaning]
const SWITCHED_OFF: &str = "The auto-merge setting is not enabled for the repository that this pull request targets.";

/// Whether this server has auto-merge; a 404 for `req`'s path when it has not.
fn available(m: &Model, req: &Request) -> Result<(), Response> {
    if m.version_at_least(SINCE.0, SINCE.1) { Ok(()) } else { Err(errors::no_such_resource(&req.path)) }
}

/// `POST …/merge` with `autoMerge: true` on a server that has it: 403 when the repository's setting is off, the
/// merge itself when nothing vetoes it, otherwise the request recorded (AUTO_MERGE_REQUESTED) and the pull request
/// answered as it is, still open.
pub fn request(cx: &mut Cx, req: &Request, body: &Value, key: &str, slug: &str, id: &str) -> Reply {
    let k = pr_key(cx.m, key, slug, id)?;
    if !find_repo(cx.m, key, slug)?.auto_merge {
        return Err(errors::error(403, Some(exception::NOT_PERMITTED), SWITCHED_OFF));
    }
    let pr = cx.m.prs.get(&k).ok_or_else(|| errors::no_such_resource(id))?;
    if pr.state != PrState::Open {
        return Err(not_open(pr, "merged"));
    }
    check_version(&cx.v, cx.m, pr, given_version(req, body))?;
    let v = vetoes(cx.m, pr);
    if pr.conflicted {
        return Err(vetoed(pr, v));
    }
    if v.is_empty() {
        return merge_now(cx, body, key, slug, id);
    }
    let from_hash = pr.from_commit.clone();
    let request = AutoMerge {
        user: cx.me.clone(),
        created: cx.m.tick(),
        from_hash,
        message: body.get("message").and_then(Value::as_str).map(str::to_string),
    };
    let me = cx.me.clone();
    let act = activity(cx.m, &me, "AUTO_MERGE_REQUESTED", json!({}));
    if let Some(pr) = cx.m.prs.get_mut(&k) {
        pr.auto_merge = Some(request);
        pr.activities.push(act);
    }
    let pr = find_pr(cx.m, key, slug, id)?;
    Ok(Response::json(200, &render::pull_request(&cx.v, cx.m, pr)))
}

/// `GET …/pull-requests/{id}/auto-merge` → the request, or 204 when there is none.
pub fn get(cx: &ReadCx, req: &Request, key: &str, slug: &str, id: &str) -> Reply {
    available(cx.m, req)?;
    let k = pr_key(cx.m, key, slug, id)?;
    let pr = cx.m.prs.get(&k).ok_or_else(|| errors::no_such_resource(id))?;
    Ok(match &pr.auto_merge {
        Some(a) => Response::json(
            200,
            &json!({"createdDate": a.created, "fromHash": a.from_hash, "toRefId": pr.to.id(), "autoSubject": true,
                    "message": a.message}),
        ),
        None => Response::empty(204),
    })
}

/// `DELETE …/pull-requests/{id}/auto-merge` → 204 (AUTO_MERGE_CANCELLED when there was a request); 409 when the
/// pull request is not open.
pub fn cancel(cx: &mut Cx, req: &Request, key: &str, slug: &str, id: &str) -> Reply {
    available(cx.m, req)?;
    let k = pr_key(cx.m, key, slug, id)?;
    let pr = cx.m.prs.get(&k).ok_or_else(|| errors::no_such_resource(id))?;
    if pr.state != PrState::Open {
        return Err(not_open(pr, "changed"));
    }
    if pr.auto_merge.is_some() {
        cx.m.tick();
        let me = cx.me.clone();
        let act = activity(cx.m, &me, "AUTO_MERGE_CANCELLED", json!({}));
        if let Some(pr) = cx.m.prs.get_mut(&k) {
            pr.auto_merge = None;
            pr.activities.push(act);
        }
    }
    Ok(Response::empty(204))
}

/// `POST …/pull-requests/{id}/auto-merge` → `{autoMergeProcessingStatus, pullRequest}`: tries a requested merge
/// now (MERGED, or VETOED while a check still says no); 400 when none was requested, 403 when the setting is off.
pub fn try_now(cx: &mut Cx, req: &Request, key: &str, slug: &str, id: &str) -> Reply {
    available(cx.m, req)?;
    let k = pr_key(cx.m, key, slug, id)?;
    if !find_repo(cx.m, key, slug)?.auto_merge {
        return Err(errors::error(403, Some(exception::NOT_PERMITTED), SWITCHED_OFF));
    }
    let pr = cx.m.prs.get(&k).ok_or_else(|| errors::no_such_resource(id))?;
    let Some(asked) = pr.auto_merge.clone() else {
        return Err(errors::bad_request("An auto-merge request was not submitted for this pull request."));
    };
    if !vetoes(cx.m, pr).is_empty() {
        let json = render::pull_request(&cx.v, cx.m, pr);
        return Ok(Response::json(200, &json!({"autoMergeProcessingStatus": "VETOED", "pullRequest": json})));
    }
    let body = json!({"message": asked.message});
    let merged = merge_now(cx, &body, key, slug, id)?;
    Ok(Response::json(200, &json!({"autoMergeProcessingStatus": "MERGED", "pullRequest": merged.body_json()})))
}

/// `GET …/repos/{slug}/settings/auto-merge` → `{enabled, scope}`.
pub fn settings(cx: &ReadCx, req: &Request, key: &str, slug: &str) -> Reply {
    available(cx.m, req)?;
    let repo = find_repo(cx.m, key, slug)?;
    Ok(Response::json(
        200,
        &json!({"enabled": repo.auto_merge, "restrictionState": "NONE",
                                   "scope": {"type": "REPOSITORY", "resourceId": repo.id}}),
    ))
}

/// `PUT …/repos/{slug}/settings/auto-merge` `{enabled}` → the settings.
pub fn set_settings(cx: &mut Cx, req: &Request, key: &str, slug: &str) -> Reply {
    available(cx.m, req)?;
    let body = req.json().map_err(|e| errors::bad_request(&e))?;
    let Some(enabled) = body.get("enabled").and_then(Value::as_bool) else {
        return Err(errors::field_error("enabled", "The 'enabled' field was not provided correctly."));
    };
    let k = find_repo(cx.m, key, slug)?.key.clone();
    if let Some(r) = cx.m.repos.get_mut(&k) {
        r.auto_merge = enabled;
    }
    settings(&cx.read(), req, key, slug)
}
