//! A pull request's file tree (changes) and diff, with comments placed on their lines; compare between any two refs.
//!
//! Source: reference "Diff and changes" [spec][rec]. Where a comment goes [rec]: a line's `commentIds` lists the
//! root comments Bitbucket draws on that line: ADDED lines by destination number, REMOVED lines by source number,
//! CONTEXT lines by the anchor's side (`fileType` TO: destination, FROM: source). Orphaned comments sit on no line.
//! `lineComments`/`fileComments` on a file diff and `activeComments` on a change are [assumed]. A draft (7.7+)
//! is placed and counted for its author only, as everywhere else. [assumed: the brief of issue #28]
//!
//! Every diff is computed from the files at the two commits (`trees`): which paths differ, then each file's
//! hunks with the context lines asked for (`trees::DEFAULT_CONTEXT` when none), cut at the line cap. A pull
//! request's comments sit on its effective diff only (not on a range of its commits). [assumed]

use super::{ReadCx, Reply, find_pr, find_repo, upper_param};
use crate::errors;
use crate::exchange::{Request, Response};
use crate::model::{Comment, FileDiff, Hunk, Model, PullRequest, Repo, RepoKey, Tree};
use crate::paging::PageRequest;
use crate::patches;
use crate::render::{self, View};
use crate::trees;
use serde::Serialize;
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

/// The root comments on a file that `viewer` sees.
fn anchored_roots<'p>(
    viewer: Option<&'p str>,
    pr: &'p PullRequest,
    path: &str,
) -> impl Iterator<Item = &'p Comment> + 'p {
    let path = path.to_string();
    pr.comments.values().filter(move |c| {
        !c.deleted
            && c.parent.is_none()
            && c.seen_by(viewer)
            && c.anchor.as_ref().and_then(|a| a.get("path")).and_then(Value::as_str) == Some(&path)
    })
}

fn change_json(v: &View, f: &FileDiff, pr: Option<&PullRequest>) -> Value {
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
        let active = anchored_roots(v.viewer.as_deref(), pr, &f.path).filter(|c| !c.is_orphaned()).count();
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

/// The two trees a diff is between, the hashes it reports, and whether it is the pull request's effective diff
/// (the one its comments sit on).
pub struct Range {
    /// The tree before.
    pub before: Tree,
    /// The tree after.
    pub after: Tree,
    /// `fromHash`.
    pub from_hash: String,
    /// `toHash`.
    pub to_hash: String,
    /// The effective diff (target to source), where comments are placed.
    pub effective: bool,
}

/// The repository that holds a pull request's source commits (its source repository, a fork's own copy of the
/// target's history).
fn source_repo<'m>(m: &'m Model, pr: &PullRequest) -> Option<&'m Repo> {
    m.repos.get(&pr.from.repo).or_else(|| m.repos.get(&pr.to.repo))
}

/// A pull request's effective diff: from the merge base of its target and source commits (the target commit's
/// tree when none is found) to its source commit.
pub fn effective_trees(m: &Model, pr: &PullRequest) -> (Tree, Tree) {
    let Some(r) = source_repo(m, pr) else {
        return (Tree::default(), Tree::default());
    };
    let after = trees::tree_of(r, &pr.from_commit).unwrap_or_default();
    let before = trees::merge_base(r, &pr.to_commit, &pr.from_commit)
        .and_then(|b| trees::tree_of(r, &b))
        .or_else(|| m.repos.get(&pr.to.repo).and_then(|t| trees::tree_of(t, &pr.to_commit)))
        .unwrap_or_default();
    (before, after)
}

fn commit_tree(r: &Repo, id: &str) -> Result<(String, Tree), Response> {
    let full = r.commits.keys().find(|c| c.starts_with(&id.to_ascii_lowercase()) && id.len() >= 4).cloned();
    full.and_then(|c| trees::tree_of(r, &c).map(|t| (c, t))).ok_or_else(|| super::projects::no_such_commit(id))
}

fn range_between(m: &Model, pr: &PullRequest, since: &str, until: &str) -> Result<Range, Response> {
    let r = source_repo(m, pr).ok_or_else(|| errors::no_such_resource(&pr.id.to_string()))?;
    let (since, before) = commit_tree(r, since)?;
    let (until, after) = commit_tree(r, until)?;
    Ok(Range { before, after, from_hash: since, to_hash: until, effective: false })
}

fn effective_range(m: &Model, pr: &PullRequest) -> Range {
    let (before, after) = effective_trees(m, pr);
    Range { before, after, from_hash: pr.to_commit.clone(), to_hash: pr.from_commit.clone(), effective: true }
}

/// Which part of a pull request `…/changes` lists: `changeScope` ALL (the default), RANGE (the commits after
/// `sinceId` up to `untilId`; ALL when either is missing) or UNREVIEWED (after the caller's
/// `lastReviewedCommit` up to the source commit; ALL when they have none or it is the source commit).
/// Source: Atlassian's javadoc, `PullRequestChangeScope` and `PullRequestChangesRequest` (changeScope since 4.10,
/// sinceId/untilId since 5.0; docs.atlassian.com/bitbucket-server/javadoc/9.4.0/api/com/atlassian/bitbucket/pull/).
/// [assumed: the REST query parameters carry the same names]
fn changes_range(m: &Model, pr: &PullRequest, req: &Request, me: &str) -> Result<Range, Response> {
    let param = |n: &str| req.param(n).filter(|s| !s.is_empty());
    match upper_param(req, "changeScope").as_deref() {
        None | Some("ALL") => Ok(effective_range(m, pr)),
        Some("RANGE") => match (param("sinceId"), param("untilId")) {
            (Some(since), Some(until)) => range_between(m, pr, since, until),
            _ => Ok(effective_range(m, pr)),
        },
        Some("UNREVIEWED") => {
            let last = pr
                .reviewers
                .iter()
                .chain(&pr.participants)
                .find(|p| p.user == me)
                .and_then(|p| p.last_reviewed.as_deref());
            match last {
                Some(c) if c != pr.from_commit => range_between(m, pr, c, &pr.from_commit),
                _ => Ok(effective_range(m, pr)),
            }
        }
        Some(other) => Err(errors::field_error(
            "changeScope",
            &format!("changeScope must be ALL, UNREVIEWED or RANGE, not {other}."),
        )),
    }
}

/// Which part of a pull request `…/diff/{path}` shows: the effective diff, or with `sinceId` the commits after
/// it up to `untilId` (the source commit when absent; `diffType` RANGE, the default then), or with `diffType`
/// COMMIT the commit `untilId` against its first parent. [assumed: Bitbucket's 9.4 REST lists `sinceId`,
/// `untilId` and `diffType` (EFFECTIVE, COMMIT, RANGE) for this endpoint; how it combines them is the stand-in's]
fn diff_range(m: &Model, pr: &PullRequest, req: &Request) -> Result<Range, Response> {
    let param = |n: &str| req.param(n).filter(|s| !s.is_empty());
    let until = param("untilId").unwrap_or(&pr.from_commit);
    match upper_param(req, "diffType").as_deref() {
        Some("COMMIT") => {
            let r = source_repo(m, pr).ok_or_else(|| errors::no_such_resource(&pr.id.to_string()))?;
            let (until, _) = commit_tree(r, until)?;
            let parent = r.commits.get(&until).and_then(|c| c.parents.first().cloned()).unwrap_or_default();
            range_between(m, pr, &parent, &until)
        }
        Some("EFFECTIVE") => Ok(effective_range(m, pr)),
        None | Some("RANGE") => match param("sinceId") {
            Some(since) => range_between(m, pr, since, until),
            None => Ok(effective_range(m, pr)),
        },
        Some(other) => {
            Err(errors::field_error("diffType", &format!("diffType must be EFFECTIVE, COMMIT or RANGE, not {other}.")))
        }
    }
}

/// `GET …/pull-requests/{id}/changes?start&limit&withComments&changeScope&sinceId&untilId` — the paths that
/// differ, with `fromHash`/`toHash` naming the range used.
pub fn changes(cx: &ReadCx, req: &Request, key: &str, slug: &str, id: &str) -> Reply {
    let pr = find_pr(cx.m, key, slug, id)?;
    let with_comments = req.param("withComments") != Some("false");
    let range = changes_range(cx.m, pr, req, &cx.me)?;
    let files = trees::changes(&range.before, &range.after, &pr.files);
    let on = (with_comments && range.effective).then_some(pr);
    let all = files.iter().map(|f| change_json(&cx.v, f, on)).collect();
    let mut page = PageRequest::from_request(req).page(all);
    page["fromHash"] = json!(range.from_hash);
    page["toHash"] = json!(range.to_hash);
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

// A diff is written through these types rather than `Value`s, one map per line: a 10,000-line file is made in a
// fraction of the time and memory. Fields are declared in sorted order, the order a `Value` writes its keys, so the
// bytes are the same (`typed_answers_write_their_keys_as_a_value_does`).

/// A diff answer.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct DiffJson<'a> {
    context_lines: i64,
    diffs: Vec<FileDiffJson<'a>>,
    from_hash: &'a str,
    to_hash: &'a str,
    truncated: bool,
    whitespace: String,
}

/// One file's diff.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct FileDiffJson<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    binary: Option<bool>,
    destination: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    file_comments: Option<Vec<Value>>,
    hunks: Vec<HunkJson<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    line_comments: Option<Vec<Value>>,
    source: Value,
    truncated: bool,
}

/// A hunk.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct HunkJson<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    context: Option<&'a str>,
    destination_line: u32,
    destination_span: u32,
    segments: Vec<SegmentJson<'a>>,
    source_line: u32,
    source_span: u32,
    truncated: bool,
}

/// A run of lines of one kind.
#[derive(Serialize)]
struct SegmentJson<'a> {
    lines: Vec<LineJson<'a>>,
    truncated: bool,
    #[serde(rename = "type")]
    kind: &'static str,
}

/// A line, with the root comments drawn on it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct LineJson<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    comment_ids: Option<Vec<u64>>,
    destination: u32,
    line: &'a str,
    source: u32,
    truncated: bool,
}

fn hunk_json<'a>(h: &'a Hunk, roots: &[&Comment]) -> HunkJson<'a> {
    let mut placed: Vec<u64> = Vec::new();
    let segments = h
        .segments
        .iter()
        .map(|s| {
            let lines = s
                .lines
                .iter()
                .map(|l| {
                    let ids: Vec<u64> = roots
                        .iter()
                        .filter(|c| !placed.contains(&c.id) && on_line(c, s.kind, l.source, l.destination))
                        .map(|c| c.id)
                        .collect();
                    placed.extend(&ids);
                    LineJson {
                        comment_ids: (!ids.is_empty()).then_some(ids),
                        destination: l.destination,
                        line: &l.text,
                        source: l.source,
                        truncated: false,
                    }
                })
                .collect();
            SegmentJson { lines, truncated: s.truncated, kind: s.kind }
        })
        .collect();
    HunkJson {
        context: h.context.as_deref(),
        destination_line: h.destination_line,
        destination_span: h.destination_span,
        segments,
        source_line: h.source_line,
        source_span: h.source_span,
        truncated: h.truncated,
    }
}

fn file_diff_json<'a>(v: &View, m: &Model, f: &'a FileDiff, pr: Option<&PullRequest>) -> FileDiffJson<'a> {
    let roots: Vec<&Comment> =
        pr.map(|p| anchored_roots(v.viewer.as_deref(), p, &f.path).collect()).unwrap_or_default();
    let source = match f.change.as_str() {
        "ADD" => Value::Null,
        _ => path_json(f.src_path.as_deref().unwrap_or(&f.path)),
    };
    let destination = if f.change == "DELETE" { Value::Null } else { path_json(&f.path) };
    let (mut line_comments, mut file_comments) = (None, None);
    if let Some(pr) = pr {
        let render_c = |c: &&Comment| render::comment(v, m, pr, c);
        let line: Vec<Value> = roots
            .iter()
            .filter(|c| c.anchor.as_ref().and_then(|a| a.get("line")).is_some() && !c.is_orphaned())
            .map(render_c)
            .collect();
        let file: Vec<Value> =
            roots.iter().filter(|c| c.anchor.as_ref().and_then(|a| a.get("line")).is_none()).map(render_c).collect();
        line_comments = (!line.is_empty()).then_some(line);
        file_comments = (!file.is_empty()).then_some(file);
    }
    FileDiffJson {
        binary: f.binary.then_some(true),
        destination,
        file_comments,
        hunks: f.hunks.iter().map(|h| hunk_json(h, &roots)).collect(),
        line_comments,
        source,
        truncated: f.truncated,
    }
}

/// The context lines a request asks for (`contextLines`; the default when absent or unusable), and the number
/// the answer echoes.
fn context_lines(req: &Request) -> (usize, i64) {
    match req.param("contextLines").and_then(|c| c.trim().parse::<i64>().ok()) {
        Some(n) if n >= 0 => (n.min(100_000) as usize, n),
        _ => (trees::DEFAULT_CONTEXT, trees::DEFAULT_CONTEXT as i64),
    }
}

/// The diff of the chosen files (all without a path) between a range's trees, each cut to the line cap.
fn diff_response(
    v: &View,
    m: &Model,
    req: &Request,
    range: &Range,
    declared: &[FileDiff],
    pr: Option<&PullRequest>,
    path: &[&str],
) -> Reply {
    let wanted = path.join("/");
    let (context, asked) = context_lines(req);
    let whitespace =
        req.param("whitespace").filter(|w| !w.is_empty()).map(str::to_ascii_uppercase).unwrap_or("SHOW".into());
    let chosen: Vec<FileDiff> = trees::changes(&range.before, &range.after, declared)
        .into_iter()
        .filter(|f| wanted.is_empty() || f.path == wanted || f.src_path.as_deref() == Some(&wanted))
        .map(|mut f| {
            let src = f.src_path.clone().unwrap_or(f.path.clone());
            f.hunks = trees::file_hunks(range.before.get(&src), range.after.get(&f.path), context);
            f.truncated = patches::cap_lines(&mut f.hunks, patches::MAX_DIFF_LINES);
            f
        })
        .collect();
    let pr = pr.filter(|_| range.effective);
    let diffs = chosen.iter().map(|f| file_diff_json(v, m, f, pr)).collect();
    let truncated = chosen.iter().any(|f| f.truncated);
    Ok(Response::json(
        200,
        &DiffJson {
            context_lines: asked,
            diffs,
            from_hash: &range.from_hash,
            to_hash: &range.to_hash,
            truncated,
            whitespace,
        },
    ))
}

/// `GET …/pull-requests/{id}/diff/{path}?contextLines&whitespace&srcPath&withComments&avatarSize&sinceId&untilId&diffType`
/// (all files without a path). Not paged; lines past the cap are cut and marked `truncated`.
pub fn diff(cx: &ReadCx, req: &Request, key: &str, slug: &str, id: &str, path: &[&str]) -> Reply {
    let pr = find_pr(cx.m, key, slug, id)?;
    let with_comments = req.param("withComments") != Some("false");
    let range = diff_range(cx.m, pr, req)?;
    diff_response(&cx.v, cx.m, req, &range, &pr.files, with_comments.then_some(pr), path)
}

/// `GET …/pull-requests/{id}.patch` — the pull request's changes as one unified diff in git's format, as text
/// ("Stream a patch representing a pull-request" in the DC REST reference [assumed: the path and that its body is
/// `git diff`'s text; not seen in a recorded answer]). Every changed file with three lines of context; a binary
/// file is said in one line, as git says it without `--binary`.
pub fn patch(cx: &ReadCx, req: &Request, key: &str, slug: &str, id: &str) -> Reply {
    let pr = find_pr(cx.m, key, slug, id)?;
    let range = diff_range(cx.m, pr, req)?;
    let mut out = String::new();
    for f in trees::changes(&range.before, &range.after, &pr.files) {
        let src = f.src_path.clone().unwrap_or(f.path.clone());
        let (old, new) = match f.change.as_str() {
            "ADD" => ("/dev/null".to_owned(), format!("b/{}", f.path)),
            "DELETE" => (format!("a/{src}"), "/dev/null".to_owned()),
            _ => (format!("a/{src}"), format!("b/{}", f.path)),
        };
        out.push_str(&format!("diff --git a/{src} b/{}\n", f.path));
        if f.binary {
            out.push_str(&format!("Binary files {old} and {new} differ\n"));
            continue;
        }
        out.push_str(&format!("--- {old}\n+++ {new}\n"));
        for h in trees::file_hunks(range.before.get(&src), range.after.get(&f.path), 3) {
            let ctx = h.context.as_deref().map(|c| format!(" {c}")).unwrap_or_default();
            out.push_str(&format!(
                "@@ -{},{} +{},{} @@{ctx}\n",
                h.source_line, h.source_span, h.destination_line, h.destination_span
            ));
            for seg in &h.segments {
                let sign = match seg.kind {
                    "ADDED" => '+',
                    "REMOVED" => '-',
                    _ => ' ',
                };
                for l in &seg.lines {
                    out.push(sign);
                    out.push_str(&l.text);
                    out.push('\n');
                }
            }
        }
    }
    Ok(Response::bytes(200, "text/plain;charset=UTF-8", out.into_bytes()))
}

/// What `from` has that `to` lacks in a repository: the diff from their merge base to `from`, the files of the
/// pull requests whose source commits are among them first, in their order. `to` defaults to the default
/// branch. A ref that does not resolve is Bitbucket's 404. `fromHash` is `to`'s commit and `toHash` `from`'s.
fn between(m: &Model, repo: &RepoKey, req: &Request) -> Result<(Range, Vec<FileDiff>), Response> {
    let r = m.repo(&repo.0, &repo.1).ok_or_else(|| errors::no_such_resource(&req.path))?;
    let from = req.param("from").ok_or_else(|| errors::field_error("from", "from is required"))?;
    let to = req.param("to").filter(|t| !t.is_empty()).unwrap_or(&r.default_branch);
    let head = m.resolve(r, from).ok_or_else(|| super::projects::no_such_commit(from))?;
    let base = m.resolve(r, to).ok_or_else(|| super::projects::no_such_commit(to))?;
    let range = m.history(r, &head, Some(&base));
    let ids: std::collections::BTreeSet<&str> = range.iter().map(|c| c.id.as_str()).collect();
    let mut declared: Vec<FileDiff> = Vec::new();
    for p in m.prs.values().filter(|p| p.from.repo == *repo && ids.contains(p.from_commit.as_str())) {
        for f in &p.files {
            if !declared.iter().any(|g| g.path == f.path) {
                declared.push(f.clone());
            }
        }
    }
    let after = trees::tree_of(r, &head).unwrap_or_default();
    let before = trees::merge_base(r, &base, &head).and_then(|b| trees::tree_of(r, &b)).unwrap_or_default();
    Ok((Range { before, after, from_hash: base, to_hash: head, effective: false }, declared))
}

/// `GET …/compare/changes?from=&to=` — the files `from` changes against `to` (see [`between`]).
pub fn compare_changes(cx: &ReadCx, req: &Request, key: &str, slug: &str) -> Reply {
    let repo = find_repo(cx.m, key, slug)?.key.clone();
    let (range, declared) = between(cx.m, &repo, req)?;
    let files = trees::changes(&range.before, &range.after, &declared);
    let all = files.iter().map(|f| change_json(&cx.v, f, None)).collect();
    let mut page = PageRequest::from_request(req).page(all);
    page["fromHash"] = json!(range.to_hash);
    page["toHash"] = json!(range.from_hash);
    Ok(Response::json(200, &page))
}

/// `GET …/compare/diff{/path}?from=&to=&contextLines` — the diff of those files.
pub fn compare_diff(cx: &ReadCx, req: &Request, key: &str, slug: &str, path: &[&str]) -> Reply {
    let repo = find_repo(cx.m, key, slug)?.key.clone();
    let (range, declared) = between(cx.m, &repo, req)?;
    diff_response(&cx.v, cx.m, req, &range, &declared, None, path)
}

/// A commit's range: from `since` (its first parent when absent; nothing for a root commit) to the commit.
fn commit_range(m: &Model, key: &str, slug: &str, id: &str, req: &Request) -> Result<Range, Response> {
    let r = find_repo(m, key, slug)?;
    let commit = m.resolve(r, id).ok_or_else(|| super::projects::no_such_commit(id))?;
    let after = trees::tree_of(r, &commit).ok_or_else(|| super::projects::no_such_commit(id))?;
    let (since, before) = match req.param("since").filter(|s| !s.is_empty()) {
        Some(s) => {
            let c = m.resolve(r, s).ok_or_else(|| super::projects::no_such_commit(s))?;
            let t = trees::tree_of(r, &c).unwrap_or_default();
            (c, t)
        }
        None => match r.commits.get(&commit).and_then(|c| c.parents.first()) {
            Some(p) => (p.clone(), trees::tree_of(r, p).unwrap_or_default()),
            None => (String::new(), Tree::default()),
        },
    };
    Ok(Range { before, after, from_hash: since, to_hash: commit, effective: false })
}

/// `GET …/commits/{id}/changes?since&start&limit` — the paths that differ between `since` (the first parent by
/// default) and the commit, as the pull request's changes are written, with `fromHash` (null for a root commit
/// without `since`) and `toHash`.
pub fn commit_changes(cx: &ReadCx, req: &Request, key: &str, slug: &str, id: &str) -> Reply {
    let range = commit_range(cx.m, key, slug, id, req)?;
    let files = trees::changes(&range.before, &range.after, &[]);
    let all = files.iter().map(|f| change_json(&cx.v, f, None)).collect();
    let mut page = PageRequest::from_request(req).page(all);
    page["fromHash"] = if range.from_hash.is_empty() { Value::Null } else { json!(range.from_hash) };
    page["toHash"] = json!(range.to_hash);
    Ok(Response::json(200, &page))
}

/// `GET …/commits/{id}/diff{/path}?since&contextLines&whitespace` — the commit's diff, as the pull request's
/// is written, without comments.
pub fn commit_diff(cx: &ReadCx, req: &Request, key: &str, slug: &str, id: &str, path: &[&str]) -> Reply {
    let range = commit_range(cx.m, key, slug, id, req)?;
    diff_response(&cx.v, cx.m, req, &range, &[], None, path)
}

/// The `diff` of a COMMENTED activity whose comment sits on a line: the hunk of the pull request's effective diff
/// that holds the line, with the comment's id on it, as Bitbucket's activity carries it for its overview to draw
/// the lines leading to the comment (`PullRequestCommentActivity.getDiff`, since 5.0: "the diff of the contents
/// that the comment is anchored to, or null if this is a general comment or a comment not associated with
/// contents changed as part of this pull request (e.g. a file comment)"). `None` for a general, file or outdated
/// comment. [assumed: the hunk whole, at the diff's default context; which lines Bitbucket's REST answer keeps is
/// not public]
pub fn comment_diff(m: &Model, pr: &PullRequest, c: &Comment) -> Option<Value> {
    let anchor = c.anchor.as_ref()?;
    anchor.get("line")?;
    if c.is_orphaned() {
        return None;
    }
    let path = anchor.get("path").and_then(Value::as_str)?;
    let src = anchor.get("srcPath").and_then(Value::as_str).unwrap_or(path);
    let range = effective_range(m, pr);
    let hunks = trees::file_hunks(range.before.get(src), range.after.get(path), trees::DEFAULT_CONTEXT);
    let roots = [c];
    let hunk = hunks
        .iter()
        .find(|h| h.segments.iter().any(|s| s.lines.iter().any(|l| on_line(c, s.kind, l.source, l.destination))))?;
    let source = if range.before.get(src).is_some() { path_json(src) } else { Value::Null };
    let destination = if range.after.get(path).is_some() { path_json(path) } else { Value::Null };
    Some(json!({"source": source, "destination": destination, "hunks": [hunk_json(hunk, &roots)], "truncated": false}))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bytes a typed answer writes, and those of the same answer as a `Value` (keys sorted).
    fn both(answer: &impl Serialize) -> (String, String) {
        let typed = serde_json::to_string(answer).unwrap_or_default();
        let value = serde_json::to_value(answer).map(|v| v.to_string()).unwrap_or_default();
        (typed, value)
    }

    #[test]
    fn typed_answers_write_their_keys_as_a_value_does() {
        let line = |ids: Option<Vec<u64>>| LineJson {
            comment_ids: ids,
            destination: 2,
            line: "x",
            source: 1,
            truncated: false,
        };
        let hunk = |context: Option<&'static str>| HunkJson {
            context,
            destination_line: 1,
            destination_span: 2,
            segments: vec![SegmentJson {
                lines: vec![line(Some(vec![7])), line(None)],
                truncated: false,
                kind: "ADDED",
            }],
            source_line: 1,
            source_span: 1,
            truncated: false,
        };
        for full in [true, false] {
            let file = FileDiffJson {
                binary: full.then_some(true),
                destination: json!({"toString": "a.rs"}),
                file_comments: full.then(|| vec![json!({"id": 1})]),
                hunks: vec![hunk(full.then_some("fn main"))],
                line_comments: full.then(|| vec![json!({"id": 7})]),
                source: Value::Null,
                truncated: full,
            };
            let answer = DiffJson {
                context_lines: 10,
                diffs: vec![file],
                from_hash: "a",
                to_hash: "b",
                truncated: false,
                whitespace: "SHOW".into(),
            };
            let (typed, value) = both(&answer);
            assert_eq!(typed, value);
            assert!(typed.contains("commentIds"));
            assert_eq!(typed.contains("lineComments"), full);
        }
    }
}
