//! Code search: `POST /rest/search/latest/search`, over the default branch of every repository.
//!
//! Request `{query, entities: {code: {start, limit}}, limits: {primary, secondary}}`; answer `{scope: {type:
//! GLOBAL}, code: {category: "primary", isLastPage, count, start, nextStart?, values: [{repository, file,
//! hitContexts: [[{line, text}]], pathMatches: [], hitCount}]}, query: {substituted: false}}`. [assumed: the
//! shape follows what Bitbucket's search UI reads; its REST resource is not in the public OpenAPI]
//!
//! Query: every word and `"quoted phrase"` must appear in the file (letter case ignored); `project:KEY`,
//! `repo:slug`, `ext:rs`, `lang:rust` and `path:src/` narrow the files; `AND` is ignored. A hit context is a
//! matching line with one line on each side, overlapping ones merged, at most 10 per file; its text is
//! HTML-escaped with each match in `<em>…</em>` [assumed]. `hitCount` counts the matching lines [assumed]. A query
//! without a word is a 400 [assumed]. With search switched off (`/_stack/search`, `--no-search`) it answers as a
//! server whose search index is missing: 503 SearchUnavailableException [assumed].

use super::{ReadCx, Reply};
use crate::errors::{self, exception};
use crate::exchange::{Request, Response};
use crate::model::Entry;
use crate::render;
use crate::sources;
use crate::trees;
use serde_json::{Value, json};

/// Files per page when the request names no limit. [assumed]
pub const DEFAULT_LIMIT: usize = 25;
/// The most files per page. [assumed]
pub const MAX_LIMIT: usize = 100;
/// The most hit contexts per file. [assumed]
pub const MAX_CONTEXTS: usize = 10;

/// The answer of a server without a search index. [assumed]
pub fn unavailable() -> Response {
    errors::error(
        503,
        Some(exception::SEARCH_UNAVAILABLE),
        "Search is currently unavailable: this server has no search index to query.",
    )
}

#[derive(Debug, Default)]
struct Query {
    terms: Vec<String>,
    project: Option<String>,
    repo: Option<String>,
    ext: Option<String>,
    lang: Option<String>,
    path: Option<String>,
}

fn parse(text: &str) -> Query {
    let mut q = Query::default();
    let mut rest = text;
    loop {
        rest = rest.trim_start();
        if rest.is_empty() {
            break;
        }
        if let Some(after) = rest.strip_prefix('"') {
            let (phrase, tail) = after.split_once('"').unwrap_or((after, ""));
            if !phrase.trim().is_empty() {
                q.terms.push(phrase.to_ascii_lowercase());
            }
            rest = tail;
            continue;
        }
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let (word, tail) = rest.split_at(end);
        rest = tail;
        let filter = word.split_once(':').filter(|(k, v)| !v.is_empty() && !k.is_empty());
        match filter.map(|(k, v)| (k.to_ascii_lowercase(), v.to_string())) {
            Some((k, v)) if k == "project" => q.project = Some(v),
            Some((k, v)) if k == "repo" => q.repo = Some(v),
            Some((k, v)) if k == "ext" => q.ext = Some(v.trim_start_matches('.').to_ascii_lowercase()),
            Some((k, v)) if k == "lang" => q.lang = Some(v.to_ascii_lowercase()),
            Some((k, v)) if k == "path" => q.path = Some(v.to_ascii_lowercase()),
            _ if word == "AND" => {}
            _ => q.terms.push(word.to_ascii_lowercase()),
        }
    }
    q
}

fn escape(s: &str, out: &mut String) {
    for c in s.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
}

/// The line HTML-escaped with every match of a term in `<em>`.
fn marked(line: &str, terms: &[String]) -> String {
    let lower = line.to_ascii_lowercase();
    let mut out = String::with_capacity(line.len() + 16);
    let mut at = 0;
    while at < line.len() {
        let next = terms
            .iter()
            .filter_map(|t| lower[at..].find(t.as_str()).map(|i| (at + i, t.len())))
            .min_by_key(|&(i, len)| (i, usize::MAX - len));
        match next {
            Some((i, len)) if line.is_char_boundary(i) && line.is_char_boundary(i + len) => {
                escape(&line[at..i], &mut out);
                out.push_str("<em>");
                escape(&line[i..i + len], &mut out);
                out.push_str("</em>");
                at = i + len;
            }
            _ => {
                escape(&line[at..], &mut out);
                break;
            }
        }
    }
    out
}

/// A file that matched: its repository, path, lines and the (0-based) lines with a match.
type Hit<'m> = (&'m crate::model::Repo, String, std::sync::Arc<Vec<String>>, Vec<usize>);

fn number(v: Option<&Value>) -> Option<usize> {
    v.and_then(Value::as_u64).map(|n| n.min(1 << 20) as usize)
}

/// `POST /rest/search/latest/search`.
pub fn search(cx: &ReadCx, req: &Request) -> Reply {
    if cx.m.search_off {
        return Err(unavailable());
    }
    let body = req.json().map_err(|e| errors::bad_request(&e))?;
    let text = body.get("query").and_then(Value::as_str).unwrap_or("");
    let q = parse(text);
    if q.terms.is_empty() {
        return Err(errors::error_with(
            400,
            Some(exception::INVALID_SEARCH_QUERY),
            Some("query"),
            "A search query needs at least one word to search for.",
            Value::Null,
        ));
    }
    let code = body.pointer("/entities/code");
    let start = number(code.and_then(|c| c.get("start"))).unwrap_or(0);
    let limit = number(code.and_then(|c| c.get("limit")))
        .or(number(body.pointer("/limits/primary")))
        .filter(|&n| n > 0)
        .unwrap_or(DEFAULT_LIMIT)
        .min(MAX_LIMIT);
    let mut hits: Vec<Hit> = Vec::new();
    for r in cx.m.repos.values() {
        if q.project.as_ref().is_some_and(|p| !p.eq_ignore_ascii_case(&r.key.0))
            || q.repo.as_ref().is_some_and(|s| !s.eq_ignore_ascii_case(&r.key.1))
        {
            continue;
        }
        let Some(head) = r.branches.get(&r.default_branch) else {
            continue;
        };
        let Some(tree) = trees::tree_of(r, head) else {
            continue;
        };
        for (path, entry) in tree.iter() {
            let Entry::Text(lines) = entry else {
                continue;
            };
            let lower_path = path.to_ascii_lowercase();
            let ext = lower_path.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
            if q.ext.as_ref().is_some_and(|e| e != ext)
                || q.lang.as_ref().is_some_and(|l| l != sources::language(path))
                || q.path
                    .as_ref()
                    .is_some_and(|p| !lower_path.starts_with(p.as_str()) && !lower_path.contains(&format!("/{p}")))
            {
                continue;
            }
            let lowered: Vec<String> = lines.iter().map(|l| l.to_ascii_lowercase()).collect();
            if !q.terms.iter().all(|t| lowered.iter().any(|l| l.contains(t.as_str()))) {
                continue;
            }
            let matching: Vec<usize> = lowered
                .iter()
                .enumerate()
                .filter(|(_, l)| q.terms.iter().any(|t| l.contains(t.as_str())))
                .map(|(i, _)| i)
                .collect();
            hits.push((r, path.clone(), lines.clone(), matching));
        }
    }
    let count = hits.len();
    let page: Vec<Value> = hits
        .into_iter()
        .skip(start)
        .take(limit)
        .map(|(r, path, lines, matching)| {
            let mut windows: Vec<(usize, usize)> = Vec::new();
            for &i in &matching {
                let (lo, hi) = (i.saturating_sub(1), (i + 2).min(lines.len()));
                match windows.last_mut() {
                    Some(w) if lo <= w.1 => w.1 = hi,
                    _ => windows.push((lo, hi)),
                }
            }
            let contexts: Vec<Value> = windows
                .into_iter()
                .take(MAX_CONTEXTS)
                .map(|(lo, hi)| {
                    (lo..hi)
                        .map(|n| json!({ "line": n + 1, "text": marked(&lines[n], &q.terms) }))
                        .collect::<Vec<_>>()
                        .into()
                })
                .collect();
            json!({
                "repository": render::repo(&cx.v, cx.m, r),
                "file": path,
                "hitContexts": contexts,
                "pathMatches": [],
                "hitCount": matching.len(),
            })
        })
        .collect();
    let shown = page.len();
    let is_last = start.saturating_add(shown) >= count;
    let mut code = json!({
        "category": "primary",
        "isLastPage": is_last,
        "count": count,
        "start": start,
        "values": page,
    });
    if !is_last {
        code["nextStart"] = json!(start + shown);
    }
    Ok(Response::json(200, &json!({ "scope": { "type": "GLOBAL" }, "code": code, "query": { "substituted": false } })))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_query_splits_into_words_phrases_and_filters() {
        let q = parse(r#"retry "with backoff" repo:api ext:.RS lang:Rust path:src/ AND"#);
        assert_eq!(q.terms, ["retry", "with backoff"]);
        assert_eq!((q.repo.as_deref(), q.ext.as_deref(), q.lang.as_deref()), (Some("api"), Some("rs"), Some("rust")));
        assert_eq!(q.path.as_deref(), Some("src/"));
        assert!(parse("  \"\" ").terms.is_empty());
    }

    #[test]
    fn matches_are_emphasised_and_the_rest_escaped() {
        assert_eq!(marked("fn Retry<T>(x)", &["retry".into()]), "fn <em>Retry</em>&lt;T&gt;(x)");
        assert_eq!(marked("é retry é", &["retry".into()]), "é <em>retry</em> é");
    }
}
