//! A pull request's file tree (changes) and diff, with comments placed on their lines; compare between any two refs.
//!
//! Source: reference "Diff and changes" [spec][rec]. Where a comment goes [rec]: a line's `commentIds` lists the
//! root comments Bitbucket draws on that line: ADDED lines by destination number, REMOVED lines by source number,
//! CONTEXT lines by the anchor's side (`fileType` TO: destination, FROM: source). Orphaned comments sit on no line.
//! `lineComments`/`fileComments` on a file diff and `activeComments` on a change are [assumed].

use super::{Cx, Reply, find_pr, find_repo};
use crate::errors;
use crate::exchange::{Request, Response};
use crate::model::{Comment, Commit, FileDiff, Hunk, Line, Model, PullRequest, RepoKey, Segment};
use crate::paging::PageRequest;
use crate::render::{self, View};
use serde_json::{Value, json};

/// A path as Bitbucket writes it: `{components, parent, name, extension?, toString}`.
pub fn path_json(p: &str) -> Value {
    let components: Vec<&str> = p.split('/').filter(|s| !s.is_empty()).collect();
    let name = components.last().copied().unwrap_or("");
    let mut out = json!({
        "components": components,
        "parent": components[..components.len().saturating_sub(1)].join("/"),
        "name": name,
        "toString": p,
    });
    if let Some((_, ext)) = name.rsplit_once('.').filter(|(stem, _)| !stem.is_empty()) {
        out["extension"] = json!(ext);
    }
    out
}

fn git_change_type(change: &str) -> &str {
    match change {
        "MOVE" => "RENAME",
        other => other,
    }
}

fn anchored_roots<'p>(pr: &'p PullRequest, path: &str) -> impl Iterator<Item = &'p Comment> + 'p {
    let path = path.to_string();
    pr.comments.values().filter(move |c| {
        !c.deleted
            && c.parent.is_none()
            && c.anchor.as_ref().and_then(|a| a.get("path")).and_then(Value::as_str) == Some(&path)
    })
}

fn change_json(f: &FileDiff, pr: Option<&PullRequest>) -> Value {
    let mut out = json!({
        "contentId": render_hash(&format!("{}+", f.path)),
        "fromContentId": render_hash(&format!("{}-", f.src_path.as_deref().unwrap_or(&f.path))),
        "path": path_json(&f.path),
        "executable": false,
        "percentUnchanged": -1,
        "type": f.change,
        "nodeType": "FILE",
        "srcExecutable": false,
        "properties": { "gitChangeType": git_change_type(&f.change) },
    });
    if let Some(src) = &f.src_path {
        out["srcPath"] = path_json(src);
    }
    if let Some(pr) = pr {
        let active = anchored_roots(pr, &f.path).filter(|c| !c.is_orphaned()).count();
        if active > 0 {
            out["properties"]["activeComments"] = json!(active);
        }
        // A conflicted pull request's modified files carry Bitbucket's `conflict` (RestChange.conflict:
        // `{ourChange, theirChange}` [spec]); which files conflict is the stand-in's choice: every modified one.
        if pr.conflicted && f.change == "MODIFY" {
            let side = |p: &str| json!({"path": path_json(p), "type": "MODIFY"});
            out["conflict"] = json!({"ourChange": side(&f.path), "theirChange": side(&f.path)});
        }
    }
    out
}

fn render_hash(label: &str) -> String {
    crate::model::commit_id(label)
}

/// `GET …/pull-requests/{id}/changes?start&limit&withComments` — the file tree, with `fromHash`/`toHash`.
pub fn changes(cx: &mut Cx, req: &Request, key: &str, slug: &str, id: &str) -> Reply {
    let pr = find_pr(cx.m, key, slug, id)?;
    let with_comments = req.param("withComments") != Some("false");
    let all = pr.files.iter().map(|f| change_json(f, with_comments.then_some(pr))).collect();
    let mut page = PageRequest::from_request(req).page(all);
    page["fromHash"] = json!(pr.to_commit);
    page["toHash"] = json!(pr.from_commit);
    Ok(Response::json(200, &page))
}

/// Whether a root comment's anchor puts it on this line of this segment.
fn on_line(c: &Comment, kind: &str, source: u32, destination: u32) -> bool {
    let Some(a) = c.anchor.as_ref() else {
        return false;
    };
    if c.is_orphaned() {
        return false;
    }
    let Some(line) = a.get("line").and_then(Value::as_u64) else {
        return false;
    };
    let line_type = a.get("lineType").and_then(Value::as_str).unwrap_or("CONTEXT");
    let from_side = a.get("fileType").and_then(Value::as_str) == Some("FROM");
    if line_type != kind {
        return false;
    }
    let n = match kind {
        "REMOVED" => source,
        "ADDED" => destination,
        _ if from_side => source,
        _ => destination,
    };
    u64::from(n) == line
}

fn hunk_json(h: &Hunk, roots: &[&Comment]) -> Value {
    let mut placed: Vec<u64> = Vec::new();
    let segments: Vec<Value> = h
        .segments
        .iter()
        .map(|s| {
            let lines: Vec<Value> = s
                .lines
                .iter()
                .map(|l| {
                    let mut line =
                        json!({ "source": l.source, "destination": l.destination, "line": l.text, "truncated": false });
                    let ids: Vec<u64> = roots
                        .iter()
                        .filter(|c| !placed.contains(&c.id) && on_line(c, s.kind, l.source, l.destination))
                        .map(|c| c.id)
                        .collect();
                    if !ids.is_empty() {
                        placed.extend(&ids);
                        line["commentIds"] = json!(ids);
                    }
                    line
                })
                .collect();
            json!({ "type": s.kind, "lines": lines, "truncated": s.truncated })
        })
        .collect();
    let mut out = json!({
        "sourceLine": h.source_line,
        "sourceSpan": h.source_span,
        "destinationLine": h.destination_line,
        "destinationSpan": h.destination_span,
        "segments": segments,
        "truncated": h.truncated,
    });
    if let Some(c) = &h.context {
        out["context"] = json!(c);
    }
    out
}

fn file_diff_json(v: &View, m: &Model, f: &FileDiff, pr: Option<&PullRequest>) -> Value {
    let roots: Vec<&Comment> = pr.map(|p| anchored_roots(p, &f.path).collect()).unwrap_or_default();
    let source = match f.change.as_str() {
        "ADD" => Value::Null,
        _ => path_json(f.src_path.as_deref().unwrap_or(&f.path)),
    };
    let destination = if f.change == "DELETE" { Value::Null } else { path_json(&f.path) };
    let mut out = json!({
        "source": source,
        "destination": destination,
        "hunks": f.hunks.iter().map(|h| hunk_json(h, &roots)).collect::<Vec<_>>(),
        "truncated": f.truncated,
    });
    if f.binary {
        out["binary"] = json!(true);
    }
    if let Some(pr) = pr {
        let render_c = |c: &&Comment| render::comment(v, m, pr, c);
        let line: Vec<Value> = roots
            .iter()
            .filter(|c| c.anchor.as_ref().and_then(|a| a.get("line")).is_some() && !c.is_orphaned())
            .map(render_c)
            .collect();
        let file: Vec<Value> =
            roots.iter().filter(|c| c.anchor.as_ref().and_then(|a| a.get("line")).is_none()).map(render_c).collect();
        if !line.is_empty() {
            out["lineComments"] = json!(line);
        }
        if !file.is_empty() {
            out["fileComments"] = json!(file);
        }
    }
    out
}

fn diff_response(
    v: &View,
    m: &Model,
    req: &Request,
    files: &[FileDiff],
    pr: Option<&PullRequest>,
    hashes: (&str, &str),
    path: &[&str],
) -> Reply {
    let wanted = path.join("/");
    let chosen: Vec<&FileDiff> = files
        .iter()
        .filter(|f| wanted.is_empty() || f.path == wanted || f.src_path.as_deref() == Some(&wanted))
        .collect();
    let context_lines: i64 = req.param("contextLines").and_then(|c| c.parse().ok()).unwrap_or(10);
    let whitespace =
        req.param("whitespace").filter(|w| !w.is_empty()).map(str::to_ascii_uppercase).unwrap_or("SHOW".into());
    let diffs: Vec<Value> = chosen.iter().map(|f| file_diff_json(v, m, f, pr)).collect();
    let truncated = chosen.iter().any(|f| f.truncated);
    Ok(Response::json(
        200,
        &json!({
            "fromHash": hashes.0,
            "toHash": hashes.1,
            "contextLines": context_lines,
            "whitespace": whitespace,
            "diffs": diffs,
            "truncated": truncated,
        }),
    ))
}

/// `GET …/pull-requests/{id}/diff/{path}?contextLines&whitespace&srcPath&withComments&avatarSize` (all files
/// without a path). Not paged; lines past the cap are cut and marked `truncated`.
pub fn diff(cx: &mut Cx, req: &Request, key: &str, slug: &str, id: &str, path: &[&str]) -> Reply {
    let pr = find_pr(cx.m, key, slug, id)?;
    let with_comments = req.param("withComments") != Some("false");
    diff_response(&cx.v, cx.m, req, &pr.files, with_comments.then_some(pr), (&pr.to_commit, &pr.from_commit), path)
}

/// What `from` has that `to` lacks in a repository, as files: each pull request whose source head is among the
/// commits `from` has and `to` lacks brings its files (its branch's commits are its own); every other such commit
/// adds its message as a line of `CHANGELOG.md`, so any two refs of a repository have a diff. `to` defaults to the
/// default branch. A ref that does not resolve is Bitbucket's 404. Returns the files and (`to`, `from`) commits.
fn between(m: &Model, repo: &RepoKey, req: &Request) -> Result<(Vec<FileDiff>, (String, String)), Response> {
    let r = m.repo(&repo.0, &repo.1).ok_or_else(|| errors::no_such_resource(&req.path))?;
    let from = req.param("from").ok_or_else(|| errors::field_error("from", "from is required"))?;
    let to = req.param("to").filter(|t| !t.is_empty()).unwrap_or(&r.default_branch);
    let head = m.resolve(r, from).ok_or_else(|| super::projects::no_such_commit(from))?;
    let base = m.resolve(r, to).ok_or_else(|| super::projects::no_such_commit(to))?;
    let range = m.history(r, &head, Some(&base));
    let ids: std::collections::BTreeSet<&str> = range.iter().map(|c| c.id.as_str()).collect();
    let mut files: Vec<FileDiff> = Vec::new();
    let mut covered = std::collections::BTreeSet::new();
    for p in m.prs.values().filter(|p| p.from.repo == *repo && ids.contains(p.from_commit.as_str())) {
        covered.extend(m.history(r, &p.from_commit, Some(&p.to_commit)).into_iter().map(|c| c.id));
        for f in &p.files {
            if !files.iter().any(|g| g.path == f.path) {
                files.push(f.clone());
            }
        }
    }
    let rest: Vec<&Commit> = range.iter().rev().filter(|c| !covered.contains(&c.id)).collect();
    if !rest.is_empty() && !files.iter().any(|f| f.path == CHANGELOG) {
        files.push(changelog(&rest));
    }
    Ok((files, (base, head)))
}

/// The stand-in's file that commits outside any pull request change: one line each, oldest first.
const CHANGELOG: &str = "CHANGELOG.md";

fn changelog(commits: &[&Commit]) -> FileDiff {
    let n = commits.len() as u32;
    let mut lines = vec![Line { source: 1, destination: 1, text: "# Changelog".into() }];
    let added: Vec<Line> = commits
        .iter()
        .zip(2..)
        .map(|(c, at)| Line {
            source: 2,
            destination: at,
            text: format!("- {} ({})", c.message.lines().next().unwrap_or(""), &c.id[..7.min(c.id.len())]),
        })
        .collect();
    let context = Segment { kind: "CONTEXT", lines: std::mem::take(&mut lines), truncated: false };
    let added = Segment { kind: "ADDED", lines: added, truncated: false };
    FileDiff {
        path: CHANGELOG.into(),
        src_path: None,
        change: "MODIFY".into(),
        binary: false,
        hunks: vec![Hunk {
            context: None,
            source_line: 1,
            source_span: 1,
            destination_line: 1,
            destination_span: n + 1,
            segments: vec![context, added],
            truncated: false,
        }],
        truncated: false,
    }
}

/// `GET …/compare/changes?from=&to=` — the files `from` changes against `to` (see [`between`]).
pub fn compare_changes(cx: &mut Cx, req: &Request, key: &str, slug: &str) -> Reply {
    let repo = find_repo(cx.m, key, slug)?.key.clone();
    let (files, (to, from)) = between(cx.m, &repo, req)?;
    let all = files.iter().map(|f| change_json(f, None)).collect();
    let mut page = PageRequest::from_request(req).page(all);
    page["fromHash"] = json!(from);
    page["toHash"] = json!(to);
    Ok(Response::json(200, &page))
}

/// `GET …/compare/diff{/path}?from=&to=` — the diff of those files.
pub fn compare_diff(cx: &mut Cx, req: &Request, key: &str, slug: &str, path: &[&str]) -> Reply {
    let repo = find_repo(cx.m, key, slug)?.key.clone();
    let (files, hashes) = between(cx.m, &repo, req)?;
    diff_response(&cx.v, cx.m, req, &files, None, (&hashes.0, &hashes.1), path)
}
