//! Draft reviews (Bitbucket 7.7+): the caller's pending comments as a page, finishing the review (publishing them,
//! with a general comment and a status if asked), and discarding it.
//!
//! Sources: the DC OpenAPI 9.2+ has `GET|PUT|DELETE …/pull-requests/{id}/review` (getReview "Get pull request
//! comment thread", finishReview "Complete pull request review", discardReview "Discard pull request review").
//! PUT's body is `{commentText?, participantStatus?, lastReviewedCommit?}` [doc: Atlassian's javadoc,
//! `PullRequestFinishReviewRequest`, since 7.7; `lastReviewedCommit` since 8.9.18, 8.19.7, 9.0.1 and 9.1: when it is
//! not the pull request's latest commit, `PullRequestOutOfDateException` and nothing changes]. A comment becomes a
//! draft as `comments` says; `PUT …/participants/{slug}` publishes none (`review`).
//!
//! [assumed, the brief of issue #28, until a real server says otherwise]:
//! - GET answers a page (paged as every listing is) of the caller's pending root comments, oldest first, each as a
//!   comment reads with its anchor and replies; nothing pending is an empty page. A draft reply on a published thread
//!   is not listed (it reads in its thread).
//! - PUT, on an open pull request only (409 as other writes on a closed one): the stale-commit check first, then the
//!   caller's drafts published (state OPEN; with their activities, which keep their times), `commentText` added as a
//!   published general comment, `participantStatus` set as `PUT …/participants` sets it (400 for the author), the
//!   caller's `lastReviewedCommit` the source commit and the caller a participant if they were none, and a
//!   REVIEW_FINISHED activity. It answers 200 with the caller as a participant, as `PUT …/participants` does.
//! - DELETE removes the caller's drafts, replies included, with their activities, and leaves a REVIEW_DISCARDED
//!   activity only the caller sees (`activities`); 204, also when there was nothing to discard (then no activity).
//! - On a server before 7.7 the three answer 404, as any path it does not know.

use super::lifecycle::{activity, not_open};
use super::review::{record_review, status_action};
use super::{Cx, ReadCx, Reply, comments, find_pr, pr_key};
use crate::errors::{self, exception};
use crate::exchange::{Request, Response};
use crate::model::{Comment, Model, PrState};
use crate::paging::page_of;
use crate::render;
use serde_json::{Value, json};
use std::collections::BTreeSet;

/// Whether this server keeps drafts; a 404 for `req`'s path, as an unknown path, when it does not.
fn available(m: &Model, req: &Request) -> Result<(), Response> {
    if m.has_drafts() { Ok(()) } else { Err(errors::no_such_resource(&req.path)) }
}

/// `GET …/pull-requests/{id}/review` — the caller's pending root comments, oldest first.
pub fn get(cx: &ReadCx, req: &Request, key: &str, slug: &str, id: &str) -> Reply {
    available(cx.m, req)?;
    let pr = find_pr(cx.m, key, slug, id)?;
    let mut roots: Vec<&Comment> = pr
        .comments
        .values()
        .filter(|c| !c.deleted && c.parent.is_none() && c.is_pending() && c.author == cx.me)
        .collect();
    roots.sort_by_key(|c| (c.created, c.id));
    let all = roots.into_iter().map(|c| render::comment(&cx.v, cx.m, pr, c)).collect();
    Ok(Response::json(200, &page_of(req, all)))
}

/// `PUT …/pull-requests/{id}/review` `{commentText?, participantStatus?, lastReviewedCommit?}` — finishes the
/// caller's review (see the module's list).
pub fn finish(cx: &mut Cx, req: &Request, key: &str, slug: &str, id: &str) -> Reply {
    available(cx.m, req)?;
    let body = req.json().map_err(|e| errors::bad_request(&e))?;
    let k = pr_key(cx.m, key, slug, id)?;
    let pr = cx.m.prs.get(&k).ok_or_else(|| errors::no_such_resource(id))?;
    let me = cx.me.clone();
    if pr.state != PrState::Open {
        return Err(not_open(pr, "reviewed"));
    }
    let status = match body.get("participantStatus") {
        None | Some(Value::Null) => None,
        Some(s) => match s.as_str().map(str::to_ascii_uppercase).filter(|s| status_action(s).is_some()) {
            Some(s) => Some(s),
            None => {
                return Err(errors::field_error(
                    "participantStatus",
                    "participantStatus must be APPROVED, NEEDS_WORK or UNAPPROVED.",
                ));
            }
        },
    };
    if status.is_some() && pr.author == me {
        return Err(errors::error(
            400,
            Some(exception::INVALID_PARTICIPANT),
            "The author of a pull request cannot review it.",
        ));
    }
    let text = match body.get("commentText") {
        None | Some(Value::Null) => None,
        Some(t) => match t.as_str() {
            Some(t) => Some(t.to_string()).filter(|t| !t.trim().is_empty()),
            None => return Err(errors::field_error("commentText", "commentText must be text.")),
        },
    };
    match body.get("lastReviewedCommit") {
        None | Some(Value::Null) => {}
        Some(Value::String(c)) if *c == pr.from_commit => {}
        Some(Value::String(c)) => {
            // [assumed: the words and the extra fields, after the version 409's]
            return Err(errors::error_with(
                409,
                Some(exception::PR_OUT_OF_DATE),
                None,
                &format!(
                    "The pull request has been updated since you reviewed it: you reviewed {c}, its latest commit \
                     is {}. Review the new changes and finish the review again.",
                    pr.from_commit
                ),
                json!({ "lastReviewedCommit": c, "latestCommit": pr.from_commit }),
            ));
        }
        Some(_) => return Err(errors::field_error("lastReviewedCommit", "lastReviewedCommit must be a commit id.")),
    }
    let drafts: Vec<u64> =
        pr.comments.values().filter(|c| c.is_pending() && c.author == me && !c.deleted).map(|c| c.id).collect();
    if let Some(pr) = cx.m.prs.get_mut(&k) {
        for n in drafts {
            if let Some(c) = pr.comments.get_mut(&n) {
                c.state = "OPEN".into();
            }
        }
    }
    if let Some(t) = text {
        comments::add(cx.m, &cx.v, &k, &me, &json!({ "text": t }))?;
    }
    let (entry, role) = record_review(cx.m, &k, &me, status.as_deref())?;
    cx.m.tick();
    let finished = activity(cx.m, &me, "REVIEW_FINISHED", json!({}));
    if let Some(pr) = cx.m.prs.get_mut(&k) {
        pr.activities.push(finished);
    }
    Ok(Response::json(200, &render::participant(&cx.v, cx.m, &entry, role)))
}

/// `DELETE …/pull-requests/{id}/review` — discards the caller's drafts (see the module's list); 204.
pub fn discard(cx: &mut Cx, req: &Request, key: &str, slug: &str, id: &str) -> Reply {
    available(cx.m, req)?;
    let k = pr_key(cx.m, key, slug, id)?;
    let pr = cx.m.prs.get(&k).ok_or_else(|| errors::no_such_resource(id))?;
    let mut gone: BTreeSet<u64> =
        pr.comments.values().filter(|c| c.is_pending() && c.author == cx.me).map(|c| c.id).collect();
    if gone.is_empty() {
        return Ok(Response::empty(204));
    }
    // Whatever hangs under a discarded draft goes with it.
    loop {
        let more: Vec<u64> = pr
            .comments
            .values()
            .filter(|c| !gone.contains(&c.id) && c.parent.is_some_and(|p| gone.contains(&p)))
            .map(|c| c.id)
            .collect();
        if more.is_empty() {
            break;
        }
        gone.extend(more);
    }
    let me = cx.me.clone();
    cx.m.tick();
    let discarded = activity(cx.m, &me, "REVIEW_DISCARDED", json!({}));
    if let Some(pr) = cx.m.prs.get_mut(&k) {
        pr.comments.retain(|n, _| !gone.contains(n));
        pr.activities.retain(|a| a.comment_id.is_none_or(|c| !gone.contains(&c)));
        pr.activities.push(discarded);
    }
    Ok(Response::empty(204))
}
