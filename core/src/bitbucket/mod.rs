//! What bb knows about Bitbucket Data Center's REST API: the JSON it answers with ([`model`]), how its
//! pages continue ([`Page`]), how much of a diff a call keeps ([`budget`]) and of a file's window ([`window`]) and how a path is written
//! ([`path`]). How an answer becomes its body or one sentence is [`crate::errors`], beside the fetch
//! types it reads (this module knows JSON, not requests).
//!
//! Every field of Bitbucket's JSON is parsed as optional and unknown fields are ignored (reference,
//! "Bitbucket Data Center: the facts bb depends on": "Parse every field as optional unless a real response
//! always has it"). A list is decoded value by value, so one value bb cannot read does not sink the others.

pub mod budget;
pub mod model;
pub mod window;

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// A page as Bitbucket sends it: `{size, limit, isLastPage, start, values, nextPageStart}`.
/// `size` counts this page only, never the whole. [reference "Conventions": spec, rec]
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct RawPage {
    /// The values, still JSON (decoded one by one).
    pub values: Vec<Value>,
    /// `size`: this page's count (never the whole); without `nextPageStart` the next page starts at `start + size`.
    pub size: Option<u64>,
    /// The index of this page's first value.
    pub start: Option<u64>,
    /// `isLastPage`: true ends the paging, whatever `nextPageStart` says.
    pub is_last_page: Option<bool>,
    /// Where the next page starts (absent or null on the last page).
    pub next_page_start: Option<u64>,
}

/// A decoded page.
#[derive(Debug)]
pub struct Page<T> {
    /// The values bb could read.
    pub values: Vec<T>,
    /// How many values Bitbucket sent that bb could not read.
    pub unreadable: usize,
    /// The index of this page's first value.
    pub start: u64,
    /// Where the next page starts, when more exist.
    pub next: Option<u64>,
}

impl RawPage {
    /// Decodes each value; a value that does not fit `T` is counted, not fatal.
    pub fn decode<T: DeserializeOwned>(self) -> Page<T> {
        let start = self.start.unwrap_or(0);
        let size = self.size.unwrap_or(self.values.len() as u64);
        // When `isLastPage` is false without `nextPageStart`, continue at `start + size`. [reference "Conventions": rec]
        let next = match (self.is_last_page, self.next_page_start) {
            (Some(true), _) => None,
            (_, Some(n)) => Some(n),
            (Some(false), None) if size > 0 => Some(start + size),
            _ => None,
        };
        let total = self.values.len();
        let values: Vec<T> = self.values.into_iter().filter_map(|v| serde_json::from_value(v).ok()).collect();
        Page { unreadable: total - values.len(), values, start, next }
    }
}

impl<T> Page<T> {
    /// The line every list ends with: whether more exist and where they start, and what could not be read.
    pub fn more_line(&self, noun: &str) -> String {
        let mut out = match self.next {
            Some(n) => format!("More {noun} exist — start={n}."),
            None => format!("No more {noun}."),
        };
        if self.unreadable > 0 {
            out.push_str(&format!(" {} value(s) Bitbucket sent could not be read and are left out.", self.unreadable));
        }
        out
    }
}

/// Percent-encodes one path segment (a project key, a slug, a branch or a file name component). A
/// segment of dots only (`.`, `..`) is encoded too, so no proxy or server can read it as a step up the
/// path and send the request (and its credentials) elsewhere; the arguments refuse them before that.
pub fn segment(s: &str) -> String {
    if !s.is_empty() && s.bytes().all(|b| b == b'.') {
        return "%2E".repeat(s.len());
    }
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// `/rest/api/latest/projects/{key}/repos/{slug}` with both segments encoded.
pub fn repo_path(project: &str, repo: &str) -> String {
    format!("/rest/api/latest/projects/{}/repos/{}", segment(project), segment(repo))
}

/// `…/repos/{slug}/pull-requests/{id}`.
pub fn pr_path(project: &str, repo: &str, id: u64) -> String {
    format!("{}/pull-requests/{id}", repo_path(project, repo))
}

/// A file path below a URL, each component encoded and `/` kept.
pub fn file_path(path: &str) -> String {
    path.split('/').filter(|c| !c.is_empty()).map(segment).collect::<Vec<_>>().join("/")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_page_without_next_page_start_continues_at_start_plus_size() {
        let raw: RawPage =
            serde_json::from_value(json!({"values": [1, 2], "size": 2, "start": 4, "isLastPage": false}))
                .unwrap_or_default();
        let page = raw.decode::<u64>();
        assert_eq!(page.next, Some(6));
    }

    #[test]
    fn a_value_that_cannot_be_read_is_counted_not_fatal() {
        let raw: RawPage =
            serde_json::from_value(json!({"values": [1, "x", 3], "isLastPage": true})).unwrap_or_default();
        let page = raw.decode::<u64>();
        assert_eq!(page.values, [1, 3]);
        assert_eq!(page.unreadable, 1);
        assert!(page.more_line("things").contains("1 value(s)"));
    }

    #[test]
    fn segments_are_percent_encoded() {
        assert_eq!(segment("a b/c%"), "a%20b%2Fc%25");
        assert_eq!(file_path("src/a b.rs"), "src/a%20b.rs");
        assert_eq!(segment(".."), "%2E%2E");
        assert_eq!(segment("."), "%2E");
        assert_eq!(segment("a..b"), "a..b");
        assert_eq!(file_path("../../rest/api/latest/admin"), "%2E%2E/%2E%2E/rest/api/latest/admin");
    }
}
