//! Reviews: who takes part in a pull request and the caller's review status.
//!
//! Source: reference "Pull requests" [spec]: `PUT …/participants/{userSlug}` `{status}` acts for the current user,
//! 400 for the author; approvals do not change the pull request's `version` or `updatedDate` [rec + seed].
//! Setting a status this way does not publish the caller's draft comments (a peer DC MCP server found this against
//! a running DC 9.3 and moved to `…/review`); finishing the review does (`drafts`), and shares
//! [`record_review`] with it.

use super::{Cx, ReadCx, Reply, find_pr, pr_key};
use crate::errors::{self, exception};
use crate::exchange::{Request, Response};
use crate::model::{Activity, Model, Participant, PrState, RepoKey};
use crate::paging::page_of;
use crate::render;
use serde_json::{Value, json};

/// `GET …/pull-requests/{id}/participants` — the author, reviewers and other participants.
pub fn list(cx: &ReadCx, req: &Request, key: &str, slug: &str, id: &str) -> Reply {
    let pr = find_pr(cx.m, key, slug, id)?;
    let author = Participant { user: pr.author.clone(), status: "UNAPPROVED".into(), last_reviewed: None };
    let mut all = vec![render::participant(&cx.v, cx.m, &author, "AUTHOR")];
    all.extend(pr.reviewers.iter().map(|p| render::participant(&cx.v, cx.m, p, "REVIEWER")));
    all.extend(pr.participants.iter().map(|p| render::participant(&cx.v, cx.m, p, "PARTICIPANT")));
    Ok(Response::json(200, &page_of(req, all)))
}

/// `PUT …/participants/{userSlug}` `{status: APPROVED|NEEDS_WORK|UNAPPROVED}`: sets the caller's status (a
/// non-reviewer becomes a participant) and adds APPROVED, REVIEWED or UNAPPROVED to the activity.
pub fn set_status(cx: &mut Cx, req: &Request, key: &str, slug: &str, id: &str, user: &str) -> Reply {
    let body = req.json().map_err(|e| errors::bad_request(&e))?;
    let k = pr_key(cx.m, key, slug, id)?;
    let pr = cx.m.prs.get(&k).ok_or_else(|| errors::no_such_resource(id))?;
    if user != cx.me {
        // Acting for someone else. [assumed: 401, Bitbucket's status for "not permitted"]
        return Err(errors::error(
            401,
            Some(exception::NOT_PERMITTED),
            &format!("You may only set your own review status, not {user}'s."),
        ));
    }
    if pr.author == cx.me {
        return Err(errors::error(
            400,
            Some(exception::INVALID_PARTICIPANT),
            "The author of a pull request cannot review it.",
        ));
    }
    if pr.state != PrState::Open {
        return Err(errors::error(
            409,
            Some(exception::ILLEGAL_PR_STATE),
            "Only an open pull request can be reviewed.",
        ));
    }
    let status = body.get("status").and_then(Value::as_str).unwrap_or("").to_ascii_uppercase();
    if status_action(&status).is_none() {
        return Err(errors::field_error("status", "status must be APPROVED, NEEDS_WORK or UNAPPROVED."));
    }
    let me = cx.me.clone();
    let (entry, role) = record_review(cx.m, &k, &me, Some(&status))?;
    Ok(Response::json(200, &render::participant(&cx.v, cx.m, &entry, role)))
}

/// The activity a review status leaves (NEEDS_WORK's is REVIEWED [reference "Activity"]); none for a word that is
/// no status.
pub(super) fn status_action(status: &str) -> Option<&'static str> {
    match status {
        "APPROVED" => Some("APPROVED"),
        "NEEDS_WORK" => Some("REVIEWED"),
        "UNAPPROVED" => Some("UNAPPROVED"),
        _ => None,
    }
}

/// Records that `me` reviewed the pull request's source commit: a non-reviewer becomes a participant, their
/// `lastReviewedCommit` is the source commit, and `status` (already checked), when given, is theirs with the
/// activity it leaves. The author takes no part this way and is answered as the author. The clock moves for the
/// activity's time, but the pull request's version and updatedDate do not.
pub(super) fn record_review(
    m: &mut Model,
    k: &(RepoKey, u64),
    me: &str,
    status: Option<&str>,
) -> Result<(Participant, &'static str), Response> {
    let missing = || errors::no_such_resource(&k.1.to_string());
    let pr = m.prs.get(k).ok_or_else(missing)?;
    if pr.author == me {
        return Ok((Participant { user: me.to_string(), status: "UNAPPROVED".into(), last_reviewed: None }, "AUTHOR"));
    }
    let act = status.and_then(status_action).map(|action| Activity {
        created: m.tick(),
        id: m.activity_id(),
        user: me.to_string(),
        action: action.into(),
        comment_id: None,
        comment_action: None,
        extra: json!({}),
    });
    let pr = m.prs.get_mut(k).ok_or_else(missing)?;
    let head = pr.from_commit.clone();
    if !pr.reviewers.iter().chain(&pr.participants).any(|p| p.user == me) {
        pr.participants.push(Participant { user: me.to_string(), status: "UNAPPROVED".into(), last_reviewed: None });
    }
    let role = if pr.reviewers.iter().any(|p| p.user == me) { "REVIEWER" } else { "PARTICIPANT" };
    let entry = pr.reviewers.iter_mut().chain(pr.participants.iter_mut()).find(|p| p.user == me).ok_or_else(missing)?;
    if let Some(s) = status {
        entry.status = s.to_string();
    }
    entry.last_reviewed = Some(head);
    let entry = entry.clone();
    pr.activities.extend(act);
    Ok((entry, role))
}
