//! Applying a suggestion: the lines a comment's ```` ```suggestion ```` block proposes, committed to the pull
//! request's source branch in place of the lines the comment is anchored to.
//!
//! Sources: `POST …/pull-requests/{id}/comments/{commentId}/apply-suggestion` `{suggestionIndex, commentVersion,
//! pullRequestVersion, message}` [spec: the DC OpenAPI, which names the commit message `commitMessage`; a peer DC
//! MCP server found against a running server that it is read from `message` ("'message' cannot be null or empty"
//! when absent), so the stand-in reads `message`, answers that 400 when it is missing or blank, and ignores
//! `commitMessage`]. A suggestion is a fenced block opened by ```` ```suggestion ````; `suggestionIndex` counts
//! them from 0 in the comment's text. A stale `commentVersion` is 409 CommentOutOfDateException, a stale
//! `pullRequestVersion` 409 PullRequestOutOfDateException [rec: the exceptions every versioned write answers].
//!
//! [assumed, the brief of issue #28]: only a published comment anchored to lines of the new version (ADDED or
//! CONTEXT, `fileType` TO) can be applied, and only on an open pull request (409 as other writes on a closed one);
//! the anchored lines (a multi-line anchor's from its marker's `startLine`) must read at the source branch's head as
//! they did at the anchor's `toHash`, else 409 (exception name null, the words the stand-in's); a suggestion that
//! changes nothing is 400. On success a new commit by the caller with `message` holds the file with those lines
//! replaced, the pull request is rescoped as a push rescopes it, and the answer is that commit as the commits
//! endpoints render one. The comment then records the suggestion as applied, in its `properties` as
//! `appliedSuggestions` (the indexes applied) [assumed: Bitbucket's page marks an applied suggestion and offers
//! no Apply again, but where its REST answers record it is not public]; applying it again is 409.

use super::lifecycle::{check_version, not_open, push_to_source};
use super::{Cx, Reply, anchors, comments, pr_key};
use crate::errors::{self, exception};
use crate::exchange::{Request, Response};
use crate::model::{Entry, PrState};
use crate::render;
use crate::trees;
use serde_json::Value;

/// The suggestion blocks of a comment's text, in order, each as its lines; a fence left open is no block.
pub fn blocks(text: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut open: Option<Vec<String>> = None;
    for line in text.lines() {
        let fence = line.trim();
        match open.as_mut() {
            None if fence == "```suggestion" => open = Some(Vec::new()),
            None => {}
            Some(_) if fence == "```" => out.extend(open.take()),
            Some(lines) => lines.push(line.to_string()),
        }
    }
    out
}

fn not_applicable(context: Option<&str>, message: &str) -> Response {
    errors::error_with(400, Some(exception::VALIDATION), context, message, Value::Null)
}

fn number(body: &Value, field: &str) -> Result<u64, Response> {
    body.get(field)
        .and_then(Value::as_u64)
        .ok_or_else(|| errors::field_error(field, &format!("{field} is required and must be a whole number.")))
}

fn text_lines(e: Option<&Entry>) -> Option<&[String]> {
    match e {
        Some(Entry::Text(l)) => Some(l.as_slice()),
        _ => None,
    }
}

/// `POST …/comments/{commentId}/apply-suggestion` — see the module's docs.
pub fn apply(cx: &mut Cx, req: &Request, key: &str, slug: &str, id: &str, cid: &str) -> Reply {
    let body = req.json().map_err(|e| errors::bad_request(&e))?;
    let Some(message) = body.get("message").and_then(Value::as_str).filter(|m| !m.trim().is_empty()) else {
        return Err(errors::field_error("message", "'message' cannot be null or empty"));
    };
    let message = message.to_string();
    let k = pr_key(cx.m, key, slug, id)?;
    let pr = cx.m.prs.get(&k).ok_or_else(|| errors::no_such_resource(id))?;
    let c = comments::find(&cx.v, pr, cid)?;
    let (index, comment_version, pr_version) =
        (number(&body, "suggestionIndex")?, number(&body, "commentVersion")?, number(&body, "pullRequestVersion")?);
    if pr.state != PrState::Open {
        return Err(not_open(pr, "changed by a suggestion"));
    }
    comments::check_comment_version(c, Some(comment_version))?;
    check_version(&cx.v, cx.m, pr, Some(pr_version))?;
    if c.is_pending() {
        return Err(not_applicable(None, "A suggestion in a pending comment cannot be applied. Publish it first."));
    }
    let anchor = c.anchor.as_ref().filter(|a| !a.is_null());
    let new_side = |t: Option<&str>| matches!(t, Some("ADDED" | "CONTEXT"));
    let on_new_lines = anchor.is_some_and(|a| {
        a.get("fileType").and_then(Value::as_str).unwrap_or("TO") == "TO"
            && new_side(a.get("lineType").and_then(Value::as_str))
            && a.get("multilineMarker").is_none_or(|m| new_side(m.get("startLineType").and_then(Value::as_str)))
    });
    let span = anchor.and_then(anchors::line_span);
    let (Some(anchor), Some((first, last)), true) = (anchor, span, on_new_lines) else {
        return Err(not_applicable(
            None,
            "Only a suggestion on lines of the new version (ADDED or CONTEXT, fileType TO) can be applied.",
        ));
    };
    let Some(proposed) = blocks(&c.text).into_iter().nth(index as usize) else {
        return Err(not_applicable(
            Some("suggestionIndex"),
            &format!("Comment {} has no suggestion at index {index}.", c.id),
        ));
    };
    if c.applied.contains(&index) {
        return Err(errors::error(409, None, "This suggestion has already been applied."));
    }
    let path = anchor.get("path").and_then(Value::as_str).unwrap_or("").to_string();
    let made_on = anchor.get("toHash").and_then(Value::as_str).unwrap_or(&pr.from_commit).to_string();
    let repo = cx.m.repos.get(&pr.from.repo).ok_or_else(|| errors::no_such_resource(id))?;
    let head = trees::tree_of(repo, &pr.from_commit).unwrap_or_default();
    let then = trees::tree_of(repo, &made_on).unwrap_or_default();
    let range = (first as usize - 1)..(last as usize);
    let now_lines = text_lines(head.get(&path)).and_then(|l| l.get(range.clone()));
    let then_lines = text_lines(then.get(&path)).and_then(|l| l.get(range.clone()));
    let (Some(now_lines), Some(then_lines)) = (now_lines, then_lines) else {
        return Err(lines_changed(&path, first, last));
    };
    if now_lines != then_lines {
        return Err(lines_changed(&path, first, last));
    }
    if now_lines == proposed.as_slice() {
        return Err(not_applicable(
            Some("suggestionIndex"),
            "The suggestion changes nothing: the lines already read so.",
        ));
    }
    let Some(whole) = text_lines(head.get(&path)) else {
        return Err(lines_changed(&path, first, last));
    };
    let mut lines = whole[..range.start].to_vec();
    lines.extend(proposed);
    lines.extend_from_slice(&whole[range.end..]);
    let tree = trees::with(&head, &path, Some(Entry::text(lines)));
    let me = cx.me.clone();
    let cid = c.id;
    let commit = push_to_source(cx.m, &cx.v, &k, &me, message, Some(tree))?;
    if let Some(c) = cx.m.prs.get_mut(&k).and_then(|pr| pr.comments.get_mut(&cid)) {
        c.applied.push(index);
    }
    Ok(Response::json(200, &render::commit(&cx.v, cx.m, &commit)))
}

/// 409: the anchored lines no longer read as they did when the suggestion was made. [assumed: the words]
fn lines_changed(path: &str, first: u64, last: u64) -> Response {
    let lines = if first == last { format!("line {last}") } else { format!("lines {first}–{last}") };
    errors::error(
        409,
        None,
        &format!(
            "The suggestion cannot be applied: {lines} of {path} have changed on the source branch since the \
             suggestion was made."
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestion_blocks_are_read_in_order_and_an_open_fence_is_none() {
        let text = "Try:\n```suggestion\n    a();\n    b();\n```\nor\n```rust\nnot this\n```\n```suggestion\n```\n\
                    ```suggestion\nleft open";
        assert_eq!(blocks(text), vec![vec!["    a();".to_string(), "    b();".to_string()], vec![]]);
    }
}
