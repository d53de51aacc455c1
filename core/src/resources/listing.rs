//! `resources/list`: the pull requests a person would attach — their own open ones (the dashboard,
//! author) and those awaiting their review (the reviewer inbox), [`PAGE`] of each per page, as
//! `bitbucket://` pull request resources. A cursor carries where each of the two lists goes on; a list
//! that has ended is not read again. What the admin's scope leaves out is never listed.
//!
//! ```text
//!   resources/list {cursor?} ──cursor──▶ (mine at, review at) ──▶ GET /rest/api/latest/dashboard/pull-requests
//!                                                                     ?state=OPEN&role=AUTHOR&order=NEWEST&start&limit=25
//!                                                                 GET /rest/api/latest/inbox/pull-requests
//!                                                                     ?role=reviewer&start&limit=25
//!        ◀── {resources: [{uri, name, title, description, mimeType, annotations}], nextCursor?}
//! ```
//!
//! A read that fails fails the list (-32603, in the read's words): a person is never shown half their
//! pull requests as if that were all. A bb with no Bitbucket configured lists nothing, as a failure it is not. [docs/reference/mcp.md "Resource lists"; the reads:
//! docs/reference/bitbucket-dc.md "Pull request lists across repositories: the dashboard and the reviewer inbox"]

use serde_json::{Map, Value, json};

use crate::args::paging;
use crate::bitbucket::model::PullRequest;
use crate::bitbucket::{Page, RawPage};
use crate::errors::{self, Subject};
use crate::fetch::{FetchErrorKind, FetchOutcome, FetchRequest};
use crate::plan::{Fetches, Plan, Step, ToolResult};
use crate::reads::pull_requests::in_scope;
use crate::resources::uri::{Named, What};
use crate::scope::Scope;
use crate::text::{short, visible};

/// Pull requests of each list on one page. [the issue: "25 each"]
pub(crate) const PAGE: u64 = 25;
/// A title's characters in a listed resource.
const TITLE_CHARS: usize = 200;
/// What every cursor bb gives begins with: a cursor without it is not bb's.
const CURSOR_TAG: &str = "bb1";

/// Where the two lists go on; `None`: that list has ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Cursor {
    mine: Option<u64>,
    review: Option<u64>,
}

impl Cursor {
    /// The first page of both lists.
    pub(crate) const FIRST: Cursor = Cursor { mine: Some(0), review: Some(0) };

    /// Reads a `cursor` param: absent or null is the first page; anything bb did not give is `Err`.
    pub(crate) fn read(params: &Value) -> Result<Cursor, String> {
        let cursor = match params.get("cursor") {
            None | Some(Value::Null) => return Ok(Cursor::FIRST),
            Some(Value::String(s)) => s.as_str(),
            Some(_) => return Err("Invalid params: `cursor` must be a string (a nextCursor bb gave).".into()),
        };
        let bad = || {
            let shown: String = cursor.chars().take(60).collect();
            format!("Invalid params: `{shown}` is not a cursor bb gave; list from the start without one.")
        };
        let mut parts = cursor.split(':');
        if parts.next() != Some(CURSOR_TAG) {
            return Err(bad());
        }
        let mut at = || -> Result<Option<u64>, String> {
            match parts.next() {
                Some("-") => Ok(None),
                Some(n) if !n.is_empty() && n.len() <= 9 && n.bytes().all(|b| b.is_ascii_digit()) => {
                    n.parse().map(Some).map_err(|_| bad())
                }
                _ => Err(bad()),
            }
        };
        let (mine, review) = (at()?, at()?);
        if parts.next().is_some() || (mine.is_none() && review.is_none()) {
            return Err(bad());
        }
        Ok(Cursor { mine, review })
    }

    /// The cursor's text, or `None` when both lists have ended.
    fn write(self) -> Option<String> {
        let part = |at: Option<u64>| at.map_or_else(|| "-".to_owned(), |n| n.to_string());
        (self.mine.is_some() || self.review.is_some())
            .then(|| format!("{CURSOR_TAG}:{}:{}", part(self.mine), part(self.review)))
    }
}

/// The two reads of a list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Read {
    /// The person's own open pull requests.
    Mine,
    /// Those awaiting their review.
    Review,
}

/// The plan that reads one page of the list from `at`, narrowed to `scope`; `annotated` adds each
/// resource's `annotations.lastModified` (2025-06-18 on).
pub(crate) fn plan(at: Cursor, scope: Option<&Scope>, annotated: bool) -> Step {
    let mut first = Vec::new();
    if let Some(start) = at.mine {
        let mut query = vec![
            ("state".to_owned(), "OPEN".to_owned()),
            ("role".to_owned(), "AUTHOR".to_owned()),
            ("order".to_owned(), "NEWEST".to_owned()),
        ];
        query.extend(paging(start, PAGE));
        first.push((Read::Mine, FetchRequest::get("/rest/api/latest/dashboard/pull-requests", query)));
    }
    if let Some(start) = at.review {
        let mut query = vec![("role".to_owned(), "reviewer".to_owned())];
        query.extend(paging(start, PAGE));
        first.push((Read::Review, FetchRequest::get("/rest/api/latest/inbox/pull-requests", query)));
    }
    let listing = Listing { scope: scope.cloned(), annotated, pages: Vec::new(), failed: None };
    Step::wait(listing, first)
}

/// A list's plan: each page as it comes.
#[derive(Debug)]
struct Listing {
    scope: Option<Scope>,
    annotated: bool,
    pages: Vec<(Read, Page<PullRequest>)>,
    failed: Option<String>,
}

impl Plan for Listing {
    type Read = Read;

    fn on(&mut self, read: Read, outcome: FetchOutcome, f: &mut Fetches<'_, '_, Read>) -> Option<ToolResult> {
        let about = Subject { project: "", repo: "", pr: None };
        // No Bitbucket configured: nobody's pull requests to list, which is no failure of a read (a host lists
        // resources as it connects; the tools say what to set).
        if let FetchOutcome::Failed(e) = &outcome
            && e.kind == FetchErrorKind::NotConfigured
        {
            self.pages.push((read, Page { values: Vec::new(), unreadable: 0, start: 0, next: None }));
            return (f.waiting() == 0).then(|| self.done());
        }
        match errors::json::<RawPage>(&outcome, about, None) {
            Ok(page) => self.pages.push((read, page.decode())),
            Err(e) => {
                let whose = match read {
                    Read::Mine => "your pull requests",
                    Read::Review => "the pull requests awaiting your review",
                };
                self.failed.get_or_insert(format!("Could not list {whose}: {e}"));
            }
        }
        (f.waiting() == 0).then(|| self.done())
    }
}

impl Listing {
    fn done(&mut self) -> ToolResult {
        if let Some(why) = self.failed.take() {
            return ToolResult::error(why);
        }
        self.pages.sort_by_key(|(read, _)| *read);
        let mut next = Cursor { mine: None, review: None };
        let mut seen = std::collections::BTreeSet::new();
        let mut resources = Vec::new();
        for (read, page) in &self.pages {
            match read {
                Read::Mine => next.mine = page.next,
                Read::Review => next.review = page.next,
            }
            for pr in page.values.iter().filter(|pr| in_scope(self.scope.as_ref(), pr)) {
                if let Some(resource) = resource(*read, pr, self.annotated)
                    && seen.insert(resource["uri"].as_str().unwrap_or_default().to_owned())
                {
                    resources.push(resource);
                }
            }
        }
        let mut listed = Map::new();
        listed.insert("resources".into(), Value::Array(resources));
        if let Some(cursor) = next.write() {
            listed.insert("nextCursor".into(), Value::from(cursor));
        }
        let mut result = ToolResult::text("");
        result.structured = Some(Value::Object(listed));
        result
    }
}

/// One listed pull request as a resource, or `None` when Bitbucket's answer does not say where it is.
fn resource(read: Read, pr: &PullRequest, annotated: bool) -> Option<Value> {
    let id = pr.id?;
    let to = pr.to_ref.as_ref()?;
    let repo = to.repository.as_ref()?;
    let project = repo.project.as_ref()?.key.clone()?;
    let slug = repo.slug.clone()?;
    let named = Named { project, repo: slug, what: What::PullRequest(id) };
    let title = visible(&short(pr.title.as_deref().unwrap_or(""), TITLE_CHARS)).into_owned();
    let from = pr.from_ref.as_ref().map_or("?", |r| r.name());
    let draft = if pr.draft == Some(true) { "Draft · " } else { "" };
    // Bitbucket's words: "Your pull requests", "Reviewing". [reference bitbucket-ui "Pull request list page"]
    let whose = match read {
        Read::Mine => "Your pull request".to_owned(),
        Read::Review => {
            let by = pr.author.as_ref().map_or_else(|| "?".to_owned(), |a| a.user.label());
            format!("Reviewing · by {}", visible(&short(&by, 80)))
        }
    };
    let description = format!(
        "{whose} · {draft}{}/{} #{id} · {} → {}",
        named.project,
        named.repo,
        visible(&short(from, 80)),
        visible(&short(to.name(), 80))
    );
    let mut resource = json!({
        "uri": named.uri(),
        "name": format!("{}/{}#{id}", named.project, named.repo),
        "title": if title.is_empty() { format!("Pull request #{id}") } else { title },
        "description": description,
        "mimeType": super::MIME,
    });
    if annotated && let Some(ms) = pr.updated_date.and_then(|ms| u64::try_from(ms).ok()) {
        resource["annotations"] = json!({"lastModified": crate::logging::rfc3339(ms)});
    }
    Some(resource)
}

/// The `resources/list` result from the plan's answer, or the sentence of its failure.
pub(crate) fn answer(result: &Value) -> Result<Value, String> {
    if result.get("isError").and_then(Value::as_bool) == Some(true) {
        let said = result.pointer("/content/0/text").and_then(Value::as_str).unwrap_or("Could not list pull requests.");
        return Err(said.to_owned());
    }
    result.get("structuredContent").cloned().ok_or_else(|| "Could not list pull requests.".to_owned())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_cursor_reads_back_what_it_wrote() {
        for c in [
            Cursor { mine: Some(25), review: Some(50) },
            Cursor { mine: None, review: Some(25) },
            Cursor { mine: Some(75), review: None },
        ] {
            let text = c.write().unwrap();
            assert_eq!(Cursor::read(&json!({"cursor": text})).unwrap(), c);
        }
        assert_eq!(Cursor { mine: None, review: None }.write(), None);
        assert_eq!(Cursor::read(&json!({})).unwrap(), Cursor::FIRST);
        assert_eq!(Cursor::read(&json!({"cursor": null})).unwrap(), Cursor::FIRST);
    }

    #[test]
    fn a_cursor_bb_did_not_give_is_refused() {
        for bad in ["", "bb1", "bb1:1", "bb1:-:-", "bb1:1:2:3", "bb2:1:2", "bb1:x:1", "bb1:1234567890:1", "bb1::1"] {
            assert!(Cursor::read(&json!({"cursor": bad})).is_err(), "{bad:?}");
        }
        assert!(Cursor::read(&json!({"cursor": 5})).is_err());
    }

    #[test]
    fn a_listed_pull_request_names_its_resource_and_quotes_its_title_visibly() {
        let pr: PullRequest = serde_json::from_value(json!({
            "id": 7, "title": "Fix\u{202e}txt.exe\nsecond line", "updatedDate": 1_764_672_000_000_i64,
            "fromRef": {"displayId": "feature/x"},
            "toRef": {"displayId": "main", "repository": {"slug": "api", "project": {"key": "BB"}}},
            "author": {"user": {"name": "alice", "slug": "alice", "displayName": "Alice Example"}}
        }))
        .unwrap();
        let r = resource(Read::Review, &pr, true).unwrap();
        assert_eq!(r["uri"], "bitbucket://projects/BB/repos/api/pull-requests/7");
        assert_eq!(r["name"], "BB/api#7");
        assert_eq!(r["title"], "Fix⟨U+202E⟩txt.exe⏎second line");
        assert_eq!(r["description"], "Reviewing · by Alice Example (alice) · BB/api #7 · feature/x → main");
        assert_eq!(r["annotations"]["lastModified"], "2025-12-02T10:40:00.000Z");
        assert!(resource(Read::Mine, &pr, false).unwrap().get("annotations").is_none());
        let nowhere: PullRequest = serde_json::from_value(json!({"id": 8, "toRef": {"displayId": "main"}})).unwrap();
        assert!(resource(Read::Mine, &nowhere, false).is_none());
    }
}
