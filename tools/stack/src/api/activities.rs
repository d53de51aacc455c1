//! A pull request's activity, newest first.
//!
//! Source: reference "Activity" [spec][rec]: newest first, the OPENED activity last; COMMENTED carries
//! `commentAction`, `comment` and, for file and line comments, `commentAnchor`; for a line comment, `diff`: the
//! hunk it sits in (`api::diffs::comment_diff`).
//!
//! Drafts (7.7+, `drafts`): the activities of a pending comment are listed for its author only, and a
//! REVIEW_DISCARDED for who discarded the review only. [assumed: the brief of issue #28; Bitbucket's own rule is not
//! public]

use super::{ReadCx, Reply, find_pr};
use crate::exchange::{Request, Response};
use crate::model::Activity;
use crate::paging::page_of;
use crate::render;

/// `GET …/pull-requests/{id}/activities?start&limit`. Activities of a deleted comment other than its DELETED
/// one are not listed; on a server before 7.0, neither are those of a task reply, which such a server holds in
/// its comment's `tasks` rather than as a comment ([`render::comment`]); nor, to anyone but their author, those of
/// a draft.
pub fn list(cx: &ReadCx, req: &Request, key: &str, slug: &str, id: &str) -> Reply {
    let pr = find_pr(cx.m, key, slug, id)?;
    let legacy = !cx.m.version_at_least(7, 0);
    let me = cx.me.as_str();
    let mut acts: Vec<&Activity> = pr
        .activities
        .iter()
        .filter(|a| a.action != "REVIEW_DISCARDED" || a.user == me)
        .filter(|a| match a.comment_id.and_then(|c| pr.comments.get(&c)) {
            Some(c) if !cx.v.sees(c) => false,
            Some(c) if c.deleted => a.comment_action.as_deref() == Some("DELETED"),
            Some(c) if legacy && c.severity == "BLOCKER" && c.parent.is_some() => false,
            _ => true,
        })
        .collect();
    acts.sort_by(|a, b| b.created.cmp(&a.created).then(b.id.cmp(&a.id)));
    let all = acts
        .into_iter()
        .map(|a| {
            let mut out = render::activity(&cx.v, cx.m, pr, a);
            // A line comment's activity carries the lines it was written on (`diff`), as Bitbucket's does.
            if a.action == "COMMENTED"
                && let Some(d) =
                    a.comment_id.and_then(|c| pr.comments.get(&c)).and_then(|c| super::diffs::comment_diff(cx.m, pr, c))
            {
                out["diff"] = d;
            }
            out
        })
        .collect();
    Ok(Response::json(200, &page_of(req, all)))
}
