//! Bitbucket's code search, where the server has its search index (Bitbucket's bundled OpenSearch or an
//! Elasticsearch it is connected to).
//!
//! Request: `POST /rest/search/latest/search` with `{query, entities: {code: {start, limit}}, limits:
//! {primary, secondary}}`; the query takes Bitbucket's search syntax (terms all present, `"a phrase"`,
//! `project:KEY`, `repo:slug`, `ext:`, `lang:`, `path:`). Answer: `{code: {isLastPage, count, start,
//! nextStart, values: [{repository, file, hitContexts: [[{line, text}]], hitCount}]}}` where `text` is HTML-escaped
//! with each match in `<em>…</em>`. A server without a search index has no such resource or says search is
//! unavailable. [assumed: the request and answer shapes, the escaping and the no-index answer are not in
//! Atlassian's public REST reference; recorded in reference "Files, blame, search"]
//!
//! A POST that only reads: never retried blindly, as every POST.

use serde::Deserialize;
use serde_json::{Value, json};

use crate::bitbucket::model::Repository;
use crate::errors::{self, BitbucketError, Subject};
use crate::fetch::{FetchOutcome, FetchRequest, Method};

/// The search resource.
const PATH: &str = "/rest/search/latest/search";

/// A page of code search results for `query` (Bitbucket's syntax, filters included).
pub fn request(query: &str, start: u64, limit: u64) -> FetchRequest {
    FetchRequest {
        method: Method::Post,
        path: PATH.into(),
        query: vec![],
        body: Some(json!({"query": query, "entities": {"code": {"start": start, "limit": limit}},
                          "limits": {"primary": limit, "secondary": 10}})),
        keep: None,
        refresh: None,
    }
}

/// One file that matched.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Hit {
    /// `KEY/slug`.
    pub repository: String,
    /// The file's path in it.
    pub file: String,
    /// Its matching lines: line number and plain text (marks and escapes taken out).
    pub lines: Vec<(u64, String)>,
    /// How many matches Bitbucket counted in the file.
    pub count: u64,
}

/// A page of results.
#[derive(Debug, Default)]
pub struct Found {
    /// Files matched in all, as Bitbucket counted them.
    pub total: Option<u64>,
    /// The index of this page's first file.
    pub start: u64,
    /// Where the next page starts, when more exist.
    pub next: Option<u64>,
    /// This page's files.
    pub hits: Vec<Hit>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Answer {
    code: Option<CodePage>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct CodePage {
    is_last_page: Option<bool>,
    count: Option<u64>,
    start: Option<u64>,
    next_start: Option<u64>,
    values: Vec<Value>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct HitJson {
    repository: Option<Repository>,
    file: Option<String>,
    hit_contexts: Vec<Value>,
    hit_count: Option<u64>,
}

/// The sentence for a server that cannot search code.
pub const NO_SEARCH: &str = "This Bitbucket cannot search code: its search index is not set up or not available. List files with list_files (it takes a glob) and read them with get_file.";

/// A page of results, or the sentence that says why there is none.
pub fn found(outcome: &FetchOutcome) -> Result<Found, BitbucketError> {
    if unavailable(outcome) {
        return Err(BitbucketError::Failed(NO_SEARCH.to_owned()));
    }
    let about = Subject { project: "", repo: "", pr: None };
    let answer: Answer = errors::json(outcome, about, None)?;
    let Some(code) = answer.code else {
        return Err(BitbucketError::Failed("Bitbucket's search answered without code results.".to_owned()));
    };
    let start = code.start.unwrap_or(0);
    let shown = code.values.len() as u64;
    let next = match (code.is_last_page, code.next_start) {
        (Some(true), _) => None,
        (_, Some(n)) => Some(n),
        (Some(false), None) if shown > 0 => Some(start + shown),
        _ => None,
    };
    let hits = code.values.into_iter().filter_map(|v| serde_json::from_value::<HitJson>(v).ok()).map(hit).collect();
    Ok(Found { total: code.count, start, next, hits })
}

fn hit(h: HitJson) -> Hit {
    let mut all = Vec::new();
    let mut marked = Vec::new();
    // Each context is a list of lines, the hit among those around it; some servers wrap it as `{lines}`. [assumed]
    for context in &h.hit_contexts {
        let lines = match context {
            Value::Array(a) => a.as_slice(),
            Value::Object(o) => o.get("lines").and_then(Value::as_array).map_or(&[][..], Vec::as_slice),
            _ => &[],
        };
        for l in lines {
            let (Some(n), Some(text)) = (l.get("line").and_then(Value::as_u64), l.get("text").and_then(Value::as_str))
            else {
                continue;
            };
            let entry = (n, plain(text));
            if text.contains("<em>") {
                marked.push(entry.clone());
            }
            all.push(entry);
        }
    }
    // The lines with a match; every line when none is marked (a server that marks nothing).
    let mut lines = if marked.is_empty() { all } else { marked };
    lines.sort();
    lines.dedup();
    Hit {
        repository: h.repository.map(|r| r.full_name()).unwrap_or_else(|| "?".into()),
        file: h.file.unwrap_or_else(|| "?".into()),
        count: h.hit_count.unwrap_or(lines.len() as u64),
        lines,
    }
}

/// A hit's text without its marks and HTML escapes, as a string (never parsed as HTML).
fn plain(text: &str) -> String {
    let unmarked = text.replace("<em>", "").replace("</em>", "");
    let mut out = String::with_capacity(unmarked.len());
    let mut rest = unmarked.as_str();
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        rest = &rest[i..];
        let entity = [("&lt;", '<'), ("&gt;", '>'), ("&quot;", '"'), ("&#39;", '\''), ("&#x27;", '\''), ("&amp;", '&')]
            .into_iter()
            .find(|(e, _)| rest.starts_with(e));
        match entity {
            Some((e, c)) => {
                out.push(c);
                rest = &rest[e.len()..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// Whether the answer says the server has no code search: no such resource (a 404 that names no project
/// or repository), not implemented, unavailable, or an error that says search is not available.
fn unavailable(outcome: &FetchOutcome) -> bool {
    let FetchOutcome::Response(r) = outcome else { return false };
    let body = String::from_utf8_lossy(&r.body[..r.body.len().min(4096)]).to_ascii_lowercase();
    match r.status {
        404 => !body.contains("nosuchproject") && !body.contains("nosuchrepository"),
        501 | 503 => true,
        s if s >= 400 => {
            body.contains("search")
                && (body.contains("unavailable") || body.contains("not available") || body.contains("not configured"))
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_request_asks_code_only_with_its_page() {
        let r = request("retry project:BB", 25, 25);
        assert_eq!(r.method, Method::Post);
        assert_eq!(r.body.unwrap()["entities"]["code"]["start"], 25);
    }

    #[test]
    fn hits_are_the_marked_lines_unescaped_in_order() {
        let body = r#"{"code":{"isLastPage":false,"count":7,"start":0,"nextStart":1,"values":[
            {"repository":{"slug":"api","project":{"key":"BB"}},"file":"src/a.rs","hitCount":2,
             "hitContexts":[[{"line":11,"text":"// before"},{"line":12,"text":"fn <em>retry</em>() -&gt; &amp;str"}],
                            [{"line":3,"text":"use <em>retry</em>;"}]]}]}}"#;
        let f = found(&FetchOutcome::response(200, body)).unwrap();
        assert_eq!((f.total, f.next), (Some(7), Some(1)));
        assert_eq!(f.hits[0].repository, "BB/api");
        assert_eq!(f.hits[0].lines, [(3, "use retry;".to_owned()), (12, "fn retry() -> &str".to_owned())]);
    }

    #[test]
    fn a_server_without_search_gets_the_sentence_never_a_raw_404() {
        for (status, body) in [
            (404, r#"{"errors":[{"message":"not found"}]}"#),
            (503, ""),
            (400, r#"{"errors":[{"message":"Search is unavailable"}]}"#),
        ] {
            assert_eq!(found(&FetchOutcome::response(status, body)).unwrap_err().said(), NO_SEARCH, "{status}");
        }
        let bad = found(&FetchOutcome::response(400, r#"{"errors":[{"message":"The query is too short"}]}"#));
        assert!(bad.unwrap_err().said().contains("too short"));
    }

    #[test]
    fn an_ampersand_that_starts_no_escape_is_kept() {
        assert_eq!(plain("a & b &amp;&amp; c"), "a & b && c");
    }
}
