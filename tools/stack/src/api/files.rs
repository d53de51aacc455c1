//! A repository's files at a ref or commit: browse (a file's lines, a directory's children, blame), raw bytes,
//! and the recursive listing of paths.
//!
//! Source: reference "Files, blame, search". `at` is a branch (short or `refs/heads/…`), a tag or a commit id,
//! the default branch when absent; one that does not resolve is the 404 a missing commit gets. A path that the
//! tree does not hold is a 404 NoSuchPathException, `The path "x" does not exist at revision "at"` [assumed: the
//! wording]. Paging of a file's lines: 500 lines by default, at most 5,000 [assumed]; a directory's children and
//! the listing of paths page as every list does (`paging`).

use super::diffs::path_json;
use super::{ReadCx, Reply, find_repo};
use crate::errors::{self, exception};
use crate::exchange::{Request, Response};
use crate::model::{Entry, Model, Repo, Tree, hash_id};
use crate::paging::{PageRequest, page_of};
use crate::trees;
use serde::Serialize;
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// Lines of a file per page when the request names no limit. [assumed]
pub const DEFAULT_LINES: usize = 500;
/// The most lines of a file served per page. [assumed]
pub const MAX_LINES: usize = 5000;

/// The tree `at` names, with the revision as the answer names it and the commit.
fn at_tree(m: &Model, r: &Repo, req: &Request) -> Result<(String, String, Tree), Response> {
    let revision = match req.param("at").filter(|a| !a.is_empty()) {
        Some(a) => a.to_string(),
        None => format!("refs/heads/{}", r.default_branch),
    };
    let commit = m.resolve(r, &revision).ok_or_else(|| super::projects::no_such_commit(&revision))?;
    let tree = trees::tree_of(r, &commit).ok_or_else(|| super::projects::no_such_commit(&revision))?;
    Ok((revision, commit, tree))
}

/// Bitbucket's 404 for a path the revision does not hold.
pub fn no_such_path(path: &str, revision: &str) -> Response {
    errors::error(
        404,
        Some(exception::NO_SUCH_PATH),
        &format!("The path \"{path}\" does not exist at revision \"{revision}\""),
    )
}

/// What sits directly under a directory (`""` for the root): name → (type, entry for files and submodules).
fn children<'t>(tree: &'t Tree, dir: &str) -> BTreeMap<String, Option<&'t Entry>> {
    let prefix = if dir.is_empty() { String::new() } else { format!("{dir}/") };
    let mut out = BTreeMap::new();
    for (p, e) in tree.range(prefix.clone()..) {
        let Some(rest) = p.strip_prefix(&prefix) else {
            break;
        };
        match rest.split_once('/') {
            Some((d, _)) => {
                out.insert(d.to_string(), None);
            }
            None => {
                out.insert(rest.to_string(), Some(e));
            }
        }
    }
    out
}

fn content_id(e: &Entry) -> String {
    match e {
        Entry::Text(l) => hash_id(l.join("\n").as_bytes()),
        Entry::Binary(b) => hash_id(b),
        Entry::Submodule(c) => c.clone(),
    }
}

fn page_request(req: &Request, default: usize, max: usize) -> PageRequest {
    let start = req.param("start").and_then(|s| s.trim().parse::<usize>().ok()).unwrap_or(0);
    let limit = match req.param("limit").and_then(|s| s.trim().parse::<i64>().ok()) {
        Some(n) if n > 0 => (n as u64).min(max as u64) as usize,
        _ => default,
    };
    PageRequest { start, limit }
}

/// A page of a text file's lines, written without a `Value` per line (a window of 2,000 long lines is made in a
/// fraction of the time and memory); fields in sorted order, the order a `Value` writes its keys.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct LinesPage<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    blame: Option<Vec<Value>>,
    is_last_page: bool,
    limit: usize,
    lines: Vec<TextLine<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    next_page_start: Option<usize>,
    size: usize,
    start: usize,
}

/// One line of a page.
#[derive(Serialize)]
struct TextLine<'a> {
    text: &'a str,
}

/// `GET …/browse/{path}?at&start&limit[&blame=true&noContent=true]`.
///
/// - A text file: `{lines: [{text}], start, size, isLastPage, limit, nextPageStart?}`.
/// - With `blame` and `noContent`: a JSON array of blame entries for the lines of the page (see [`blame`]); with
///   `blame` alone, the lines page with those entries under `blame` [assumed].
/// - A directory (no path: the root): `{path, revision, children: {size, limit, isLastPage, start,
///   nextPageStart?, values: [{path: {components, name, toString, extension?} relative to the directory,
///   contentId, type: DIRECTORY|FILE|SUBMODULE, size? (files)}]}}`, directories first, then by name [assumed].
/// - A binary file: `{binary: true, path, revision}` [assumed].
/// - A submodule: `{path, revision, type: "SUBMODULE", submodule: {commitId, displayId, url}}` [assumed].
pub fn browse(cx: &ReadCx, req: &Request, key: &str, slug: &str, path: &[&str]) -> Reply {
    let r = find_repo(cx.m, key, slug)?;
    let (revision, commit, tree) = at_tree(cx.m, r, req)?;
    let path = path.join("/");
    match tree.get(&path) {
        Some(Entry::Text(lines)) => {
            let page = page_request(req, DEFAULT_LINES, MAX_LINES);
            let end = page.start.saturating_add(page.limit).min(lines.len());
            let window = lines.get(page.start..end).unwrap_or(&[]);
            let blame = req.param("blame").is_some_and(|b| b != "false");
            let entries = if blame { blame_entries(cx.m, r, &commit, &path, page.start, end) } else { Vec::new() };
            if blame && req.param("noContent").is_some_and(|b| b != "false") {
                return Ok(Response::json(200, &json!(entries)));
            }
            let is_last = end >= lines.len();
            Ok(Response::json(
                200,
                &LinesPage {
                    blame: blame.then_some(entries),
                    is_last_page: is_last,
                    limit: page.limit,
                    lines: window.iter().map(|text| TextLine { text }).collect(),
                    next_page_start: (!is_last).then_some(end),
                    size: window.len(),
                    start: page.start,
                },
            ))
        }
        Some(Entry::Binary(_)) => {
            Ok(Response::json(200, &json!({ "binary": true, "path": path_json(&path), "revision": revision })))
        }
        Some(Entry::Submodule(id)) => Ok(Response::json(
            200,
            &json!({
                "path": path_json(&path),
                "revision": revision,
                "type": "SUBMODULE",
                "submodule": { "commitId": id, "displayId": &id[..11.min(id.len())], "url": submodule_url(&tree, &path) },
            }),
        )),
        None => {
            let kids = children(&tree, &path);
            if kids.is_empty() && !(path.is_empty() && tree.is_empty()) {
                return Err(no_such_path(&path, &revision));
            }
            let mut values: Vec<(bool, String, Value)> = kids
                .into_iter()
                .map(|(name, e)| {
                    let mut v = json!({ "path": path_json(&name) });
                    let full = if path.is_empty() { name.clone() } else { format!("{path}/{name}") };
                    match e {
                        None => {
                            v["type"] = json!("DIRECTORY");
                            v["contentId"] = json!(hash_id(full.as_bytes()));
                        }
                        Some(e @ Entry::Submodule(_)) => {
                            v["type"] = json!("SUBMODULE");
                            v["contentId"] = json!(content_id(e));
                        }
                        Some(e) => {
                            v["type"] = json!("FILE");
                            v["contentId"] = json!(content_id(e));
                            v["size"] = json!(e.size());
                        }
                    }
                    if let Some(o) = v["path"].as_object_mut() {
                        o.remove("parent");
                    }
                    (e.is_some(), name, v)
                })
                .collect();
            values.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
            let page = PageRequest::from_request(req).page(values.into_iter().map(|(_, _, v)| v).collect());
            Ok(Response::json(200, &json!({ "path": path_json(&path), "revision": revision, "children": page })))
        }
    }
}

fn submodule_url(tree: &Tree, path: &str) -> Value {
    let Some(Entry::Text(lines)) = tree.get(".gitmodules") else {
        return Value::Null;
    };
    let mut inside = false;
    for l in lines.iter() {
        let l = l.trim();
        if l.starts_with('[') {
            inside = l == format!("[submodule \"{path}\"]");
        } else if inside && let Some(url) = l.strip_prefix("url = ") {
            return json!(url);
        }
    }
    Value::Null
}

/// Blame entries for lines `[from, to)` (0-based) of a file at a commit: one per run of consecutive lines that
/// the same commit last changed (found along first parents, `trees::blame`), cut to the window:
/// `{author {name, emailAddress, displayName}, authorTimestamp, committer {…}, committerTimestamp, commitHash,
/// displayCommitHash (11 characters), commitId, commitDisplayId, fileName, lineNumber (1-based), spannedLines}`.
/// [assumed: the fields follow Bitbucket's `Blame`; `fileName` is the whole path]
fn blame_entries(m: &Model, r: &Repo, commit: &str, path: &str, from: usize, to: usize) -> Vec<Value> {
    let Some(runs) = trees::blame(r, commit, path) else {
        return Vec::new();
    };
    runs.iter()
        .filter(|run| run.first < to && run.first + run.lines > from)
        .map(|run| {
            let first = run.first.max(from);
            let last = (run.first + run.lines).min(to);
            let c = r.commits.get(&run.commit);
            let who = c.map(|c| c.author.as_str()).unwrap_or("");
            let person = match m.user(who) {
                Some(u) => json!({ "name": u.slug, "emailAddress": u.email, "displayName": u.display_name }),
                None => json!({ "name": who, "emailAddress": Value::Null, "displayName": who }),
            };
            let at = c.map(|c| c.at).unwrap_or(0);
            let short = &run.commit[..11.min(run.commit.len())];
            json!({
                "author": person,
                "authorTimestamp": at,
                "committer": person,
                "committerTimestamp": at,
                "commitHash": run.commit,
                "displayCommitHash": short,
                "commitId": run.commit,
                "commitDisplayId": short,
                "fileName": path,
                "lineNumber": first + 1,
                "spannedLines": last - first,
            })
        })
        .collect()
}

/// `GET …/raw/{path}?at` — the file's bytes: text as `text/plain` (each line ending in a newline), a binary file
/// as `application/octet-stream` [assumed: Bitbucket guesses a type from the name]. A directory, a submodule or
/// a missing path is the 404 of a missing path.
pub fn raw(cx: &ReadCx, req: &Request, key: &str, slug: &str, path: &[&str]) -> Reply {
    let r = find_repo(cx.m, key, slug)?;
    let (revision, _, tree) = at_tree(cx.m, r, req)?;
    let path = path.join("/");
    match tree.get(&path) {
        Some(Entry::Text(lines)) => {
            let mut body = String::with_capacity(lines.iter().map(|l| l.len() + 1).sum());
            for l in lines.iter() {
                body.push_str(l);
                body.push('\n');
            }
            Ok(Response::bytes(200, "text/plain;charset=UTF-8", body.into_bytes()))
        }
        Some(Entry::Binary(b)) => Ok(Response::bytes(200, "application/octet-stream", b.as_ref().clone())),
        _ => Err(no_such_path(&path, &revision)),
    }
}

/// `GET …/files/{path}?at&start&limit` — a page of the paths of every file under the directory (the root without
/// a path), recursively, relative to it, in path order; submodules are not files [assumed]. A path that is not a
/// directory is the 404 of a missing path.
pub fn files(cx: &ReadCx, req: &Request, key: &str, slug: &str, path: &[&str]) -> Reply {
    let r = find_repo(cx.m, key, slug)?;
    let (revision, _, tree) = at_tree(cx.m, r, req)?;
    let dir = path.join("/");
    let prefix = if dir.is_empty() { String::new() } else { format!("{dir}/") };
    let all: Vec<Value> = tree
        .iter()
        .filter(|(_, e)| !matches!(e, Entry::Submodule(_)))
        .filter_map(|(p, _)| p.strip_prefix(&prefix))
        .map(|p| json!(p))
        .collect();
    if all.is_empty() && !dir.is_empty() {
        return Err(no_such_path(&dir, &revision));
    }
    Ok(Response::json(200, &page_of(req, all)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_typed_page_of_lines_writes_its_keys_as_a_value_does() {
        for full in [true, false] {
            let page = LinesPage {
                blame: full.then(|| vec![json!({"author": {"name": "alice"}})]),
                is_last_page: !full,
                limit: 2,
                lines: vec![TextLine { text: "a" }, TextLine { text: "b\"c" }],
                next_page_start: full.then_some(2),
                size: 2,
                start: 0,
            };
            let typed = serde_json::to_string(&page).unwrap_or_default();
            let value = serde_json::to_value(&page).map(|v| v.to_string()).unwrap_or_default();
            assert_eq!(typed, value);
            assert_eq!(typed.contains("nextPageStart"), full);
        }
    }
}
