//! Comments, replies and tasks on a pull request: add, read, edit, resolve, delete.
//!
//! Source: reference "Pull requests" [spec][rec]: `POST …/comments` `{text, parent?{id}, anchor?, severity?}` → 201;
//! tasks are comments with `severity: BLOCKER`; resolve with `PUT …/comments/{id}` `{version, state: RESOLVED}`.
//! None of this changes the pull request's `version` or `updatedDate` [rec + seed].
//!
//! Drafts (7.7+): a comment posted with `"state": "PENDING"` is a draft [doc: Atlassian's javadoc,
//! `AddCommentRequest.isPending` and `AddCommentReplyRequest` pending, "Since 7.7"; the REST field is what a peer DC
//! MCP server sends, assumed beyond that]; a reply under a draft is one too. A draft reads with `state: PENDING`
//! (never a `pending` or `anchored` flag: a peer checked against a running 10.4.3) and is seen by its author only:
//! to anyone else `GET`, `PUT` and `DELETE` of it answer 404 as for no comment. [assumed: the 404] Its author edits
//! and deletes it as any comment; it is published by finishing the review (`drafts`). A server before 7.7 knows no
//! drafts: it ignores the field and publishes the comment, which is why a client checks the version first.

use super::{Cx, ReadCx, Reply, anchors, find_pr, pr_key};
use crate::errors::{self, exception};
use crate::exchange::{Request, Response};
use crate::model::{Activity, Comment, Model, PullRequest, RepoKey};
use crate::paging::page_of;
use crate::render::{self, View};
use serde_json::{Value, json};

fn no_such_comment(id: &str) -> Response {
    errors::error(
        404,
        Some(exception::NO_SUCH_COMMENT),
        &format!("No comment with id {id} exists on this pull request."),
    )
}

/// Adds a comment (or reply, or task) by `author` from a request body; returns the new comment's JSON as its
/// author sees it.
pub fn add(m: &mut Model, v: &View, k: &(RepoKey, u64), author: &str, body: &Value) -> Result<Value, Response> {
    let text = body.get("text").and_then(Value::as_str).unwrap_or("");
    if text.trim().is_empty() {
        return Err(errors::field_error("text", "A comment needs text."));
    }
    let pr = m.prs.get(k).ok_or_else(|| errors::no_such_resource("pull request"))?;
    let (parent, under_draft) = match body.pointer("/parent/id") {
        Some(p) => {
            let pid = p.as_u64().ok_or_else(|| errors::field_error("parent", "parent.id must be a number"))?;
            match pr.comments.get(&pid) {
                Some(c) if !c.deleted && c.seen_by(Some(author)) => (Some(pid), c.is_pending()),
                _ => return Err(no_such_comment(&pid.to_string())),
            }
        }
        None => (None, false),
    };
    let severity = body.get("severity").and_then(Value::as_str).unwrap_or("NORMAL").to_ascii_uppercase();
    if severity != "NORMAL" && severity != "BLOCKER" {
        return Err(errors::field_error("severity", "severity must be NORMAL or BLOCKER"));
    }
    let anchor = match (parent, body.get("anchor")) {
        (None, Some(a)) if a.is_object() => Some(anchors::accept(a, pr)?),
        _ => None,
    };
    let asked_pending = body.get("state").and_then(Value::as_str).is_some_and(|s| s.eq_ignore_ascii_case("PENDING"));
    let pending = under_draft || (asked_pending && m.has_drafts());
    let now = m.tick();
    let id = m.comment_id();
    let aid = m.activity_id();
    let comment = Comment {
        id,
        version: 0,
        text: text.to_string(),
        author: author.to_string(),
        created: now,
        updated: now,
        parent,
        anchor,
        severity,
        state: if pending { "PENDING" } else { "OPEN" }.into(),
        thread_resolved: false,
        resolver: None,
        resolved_date: None,
        deleted: false,
        applied: Vec::new(),
    };
    let pr = m.prs.get_mut(k).ok_or_else(|| errors::no_such_resource("pull request"))?;
    pr.comments.insert(id, comment);
    pr.activities.push(Activity {
        id: aid,
        created: now,
        user: author.to_string(),
        action: "COMMENTED".into(),
        comment_id: Some(id),
        comment_action: Some(if parent.is_some() { "REPLIED" } else { "ADDED" }.into()),
        extra: json!({}),
    });
    let pr = m.prs.get(k).ok_or_else(|| errors::no_such_resource("pull request"))?;
    let c = pr.comments.get(&id).ok_or_else(|| no_such_comment(&id.to_string()))?;
    let as_author = View { viewer: Some(author.to_string()), ..v.clone() };
    Ok(render::comment(&as_author, m, pr, c))
}

/// `POST …/pull-requests/{id}/comments` → 201 with the comment.
pub fn create(cx: &mut Cx, req: &Request, key: &str, slug: &str, id: &str) -> Reply {
    let body = req.json().map_err(|e| errors::bad_request(&e))?;
    let k = pr_key(cx.m, key, slug, id)?;
    let me = cx.me.clone();
    Ok(Response::json(201, &add(cx.m, &cx.v, &k, &me, &body)?))
}

/// Control API: `POST /_stack/comments {project, repo, pullRequest, user, text, parent?, anchor?, severity?,
/// state?}` — a comment as another user, as if they had posted it (`state: PENDING`: their draft).
pub fn control_add_comment(m: &mut Model, v: &View, body: &Value) -> Response {
    let key = body.get("project").and_then(Value::as_str).unwrap_or("");
    let slug = body.get("repo").and_then(Value::as_str).unwrap_or("");
    let id = body.get("pullRequest").map(|x| x.to_string()).unwrap_or_default();
    let user = body.get("user").and_then(Value::as_str).unwrap_or(&m.default_user).to_string();
    if !m.users.contains_key(&user) {
        return errors::field_error("user", &format!("{user} is not a user."));
    }
    let result = pr_key(m, key, slug, id.trim_matches('"')).and_then(|k| add(m, v, &k, &user, body));
    match result {
        Ok(c) => Response::json(201, &c),
        Err(r) => r,
    }
}

/// The comment a path names, if the viewer sees it (someone else's draft is no comment to them); else a 404.
pub(super) fn find<'p>(v: &View, pr: &'p PullRequest, cid: &str) -> Result<&'p Comment, Response> {
    cid.parse::<u64>()
        .ok()
        .and_then(|n| pr.comments.get(&n))
        .filter(|c| !c.deleted && v.sees(c))
        .ok_or_else(|| no_such_comment(cid))
}

/// `GET …/comments/{commentId}`.
pub fn one(cx: &ReadCx, key: &str, slug: &str, id: &str, cid: &str) -> Reply {
    let pr = find_pr(cx.m, key, slug, id)?;
    let c = find(&cx.v, pr, cid)?;
    Ok(Response::json(200, &render::comment(&cx.v, cx.m, pr, c)))
}

/// `GET …/comments?path=` — the root comments anchored to a file. [spec: `path` is required]
pub fn list(cx: &ReadCx, req: &Request, key: &str, slug: &str, id: &str) -> Reply {
    let path = req.param("path").ok_or_else(|| errors::field_error("path", "path is required"))?;
    let pr = find_pr(cx.m, key, slug, id)?;
    let all = pr
        .comments
        .values()
        .filter(|c| !c.deleted && c.parent.is_none() && cx.v.sees(c))
        .filter(|c| c.anchor.as_ref().and_then(|a| a.get("path")).and_then(Value::as_str) == Some(path))
        .map(|c| render::comment(&cx.v, cx.m, pr, c))
        .collect();
    Ok(Response::json(200, &page_of(req, all)))
}

/// 409 CommentOutOfDateException with `currentVersion` and `expectedVersion` when `given` is stale.
pub(super) fn check_comment_version(c: &Comment, given: Option<u64>) -> Result<(), Response> {
    match given {
        Some(v) if v != c.version => Err(errors::error_with(
            409,
            Some(exception::COMMENT_OUT_OF_DATE),
            None,
            &format!(
                "You are attempting to modify a comment based on out-of-date information (version {v}, current {}).",
                c.version
            ),
            json!({ "currentVersion": c.version, "expectedVersion": v }),
        )),
        _ => Ok(()),
    }
}

/// `PUT …/comments/{commentId}` `{version, text?, state?, severity?, threadResolved?}` — edits (EDITED activity),
/// resolves or reopens a task (`state`), or marks a thread resolved. The comment's version moves; the pull
/// request's does not. A draft stays a draft: its `state` can only be given as PENDING (only finishing the review
/// publishes it). [assumed]
pub fn update(cx: &mut Cx, req: &Request, key: &str, slug: &str, id: &str, cid: &str) -> Reply {
    let body = req.json().map_err(|e| errors::bad_request(&e))?;
    let k = pr_key(cx.m, key, slug, id)?;
    let pr = cx.m.prs.get(&k).ok_or_else(|| errors::no_such_resource(id))?;
    let c = find(&cx.v, pr, cid)?;
    // The body must carry the comment's version. [spec: 9.4 `updateComment_2`: "the supplied JSON object must contain
    // a `version` that must match the server's version of the comment or the update will fail"]
    let Some(given) = body.get("version").and_then(Value::as_u64) else {
        return Err(errors::field_error("version", "The comment's version must be specified."));
    };
    check_comment_version(c, Some(given))?;
    let n = c.id;
    let mut state = body.get("state").and_then(Value::as_str).map(str::to_ascii_uppercase);
    if c.is_pending() {
        if state.as_deref().is_some_and(|s| s != "PENDING") {
            return Err(errors::field_error(
                "state",
                "A pending comment stays pending until its review is finished; it cannot be resolved or reopened.",
            ));
        }
        state = None;
    } else if let Some(s) = &state
        && !["OPEN", "RESOLVED"].contains(&s.as_str())
    {
        return Err(errors::field_error("state", "state must be OPEN or RESOLVED"));
    }
    let now = cx.m.tick();
    let aid = cx.m.activity_id();
    let me = cx.me.clone();
    let Some(pr) = cx.m.prs.get_mut(&k) else {
        return Err(errors::no_such_resource(id));
    };
    let Some(c) = pr.comments.get_mut(&n) else {
        return Err(no_such_comment(cid));
    };
    let mut edited = false;
    if let Some(t) = body.get("text").and_then(Value::as_str)
        && t != c.text
    {
        c.text = t.to_string();
        edited = true;
    }
    if let Some(s) = body.get("severity").and_then(Value::as_str) {
        c.severity = s.to_ascii_uppercase();
    }
    if let Some(s) = state {
        let resolved = s == "RESOLVED";
        c.state = s;
        c.resolver = resolved.then(|| me.clone());
        c.resolved_date = resolved.then_some(now);
    }
    if let Some(t) = body.get("threadResolved").and_then(Value::as_bool) {
        c.thread_resolved = t;
        c.resolver = t.then(|| me.clone());
        c.resolved_date = t.then_some(now);
    }
    c.version += 1;
    c.updated = now;
    if edited {
        pr.activities.push(Activity {
            id: aid,
            created: now,
            user: me,
            action: "COMMENTED".into(),
            comment_id: Some(n),
            comment_action: Some("EDITED".into()),
            extra: json!({}),
        });
    }
    let pr = cx.m.prs.get(&k).ok_or_else(|| errors::no_such_resource(id))?;
    let c = find(&cx.v, pr, cid)?;
    Ok(Response::json(200, &render::comment(&cx.v, cx.m, pr, c)))
}

/// `DELETE …/comments/{commentId}?version=N` → 204; a comment with replies cannot be deleted (409).
pub fn delete(cx: &mut Cx, req: &Request, key: &str, slug: &str, id: &str, cid: &str) -> Reply {
    let k = pr_key(cx.m, key, slug, id)?;
    let pr = cx.m.prs.get(&k).ok_or_else(|| errors::no_such_resource(id))?;
    let c = find(&cx.v, pr, cid)?;
    check_comment_version(c, req.param("version").and_then(|v| v.parse().ok()))?;
    let n = c.id;
    if pr.comments.values().any(|r| r.parent == Some(n) && !r.deleted) {
        return Err(errors::error(
            409,
            Some("com.atlassian.bitbucket.comment.CommentDeletionException"),
            "A comment with replies cannot be deleted.",
        ));
    }
    let now = cx.m.tick();
    let aid = cx.m.activity_id();
    let me = cx.me.clone();
    if let Some(pr) = cx.m.prs.get_mut(&k) {
        if let Some(c) = pr.comments.get_mut(&n) {
            c.deleted = true;
        }
        pr.activities.push(Activity {
            id: aid,
            created: now,
            user: me,
            action: "COMMENTED".into(),
            comment_id: Some(n),
            comment_action: Some("DELETED".into()),
            extra: json!({}),
        });
    }
    Ok(Response::empty(204))
}
