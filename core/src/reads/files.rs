//! A repository's files at a ref: a window of a file's lines, a folder's entries, every path under a
//! folder, and who last changed each line (blame).
//!
//! Requests [reference "Files, blame, search"]:
//! - `GET …/repos/{slug}/browse/{path}?at&start&limit`: a text file answers a page of its lines,
//!   `{lines[{text}], start, size, isLastPage, nextPageStart?}` (`size` counts this page's lines, never
//!   the file's); a folder answers `{path, revision, children: page of {path (relative), type FILE |
//!   DIRECTORY | SUBMODULE, size?, contentId}}`; a binary file answers `{binary: true}` [assumed]. Bitbucket
//!   pages the lines, so a window of a 200,000-line file costs the window, not the file.
//! - `…/browse/{path}?at&blame=true&noContent=true&start&limit`: the blame of those lines, a JSON array of
//!   `{author {name, emailAddress, displayName}, authorTimestamp, commitId, displayCommitHash, lineNumber,
//!   spannedLines}` [spec: the browse resource's `blame` and `noContent` flags; the entry's fields as
//!   recorded].
//! - `GET …/repos/{slug}/files/{path}?at&start&limit`: a page of every file path under the folder,
//!   relative to it [assumed: relative].
//! - `GET …/repos/{slug}/raw/{path}?at`: the file's bytes, as they are in the repository (a picture's, for
//!   `get_file` and the views); read only to a cap, the bytes past it never read.
//!
//! `at` is a branch, tag or commit; without it Bitbucket reads the default branch. A path that is not there
//! answers 404 `NoSuchPathException` ("The path \"…\" does not exist at revision \"…\""), a ref that is not
//! there 404 `NoSuchCommitException`; both are quoted as Bitbucket words them.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use crate::bitbucket::model::Path;
use crate::bitbucket::window::{self, BrowseJson, LineShare};
use crate::bitbucket::{Page, RawPage, file_path, repo_path};
use crate::errors::{self, BitbucketError, Subject};
use crate::fetch::{BytesAnswer, Decoded, FetchOutcome, FetchRequest};

/// A place in a repository: a path (empty for the root) at a ref (the default branch when `None`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Place {
    /// The project key.
    pub project: String,
    /// The repository slug.
    pub repo: String,
    /// The path, without leading or trailing `/`; empty for the repository's root.
    pub path: String,
    /// A branch, tag or commit; the default branch without it.
    pub at: Option<String>,
}

impl Place {
    fn request(&self, what: &str, mut query: Vec<(String, String)>) -> FetchRequest {
        if let Some(at) = &self.at {
            query.insert(0, ("at".into(), at.clone()));
        }
        let path = file_path(&self.path);
        let sep = if path.is_empty() { "" } else { "/" };
        FetchRequest::get(format!("{}/{what}{sep}{path}", repo_path(&self.project, &self.repo)), query)
    }

    /// Lines `first`.. (0-based) of a file, `count` at most; a folder's first entries when it is one.
    pub fn browse_request(&self, first: u64, count: u64) -> FetchRequest {
        self.request("browse", page(first, count))
    }

    /// The same window, of which the call keeps `share`: a shell that reads the answer as it arrives
    /// cuts it there, never holding the lines past it ([`crate::bitbucket::window`]).
    pub fn window_request(&self, first: u64, count: u64, share: LineShare) -> FetchRequest {
        self.browse_request(first, count).keeping_lines(share)
    }

    /// The blame of lines `first`.. (0-based), `count` at most, without the lines' text.
    pub fn blame_request(&self, first: u64, count: u64) -> FetchRequest {
        let mut query = vec![("blame".into(), "true".into()), ("noContent".into(), "true".into())];
        query.extend(page(first, count));
        self.request("browse", query)
    }

    /// The file's bytes, of which the call keeps `cap` ([`crate::fetch::Keep::Bytes`]).
    pub fn raw_request(&self, cap: usize) -> FetchRequest {
        let mut r = self.request("raw", Vec::new());
        r.keep = Some(crate::fetch::Keep::Bytes(cap));
        r
    }

    /// A page of every file path under the folder.
    pub fn files_request(&self, start: u64, limit: u64) -> FetchRequest {
        self.request("files", page(start, limit))
    }

    /// How the place is named in an answer: `src/lib.rs at main in BB/api`.
    pub fn name(&self) -> String {
        let path = if self.path.is_empty() { "/" } else { &self.path };
        let at = match &self.at {
            Some(a) => crate::text::short(&crate::text::one_line(a), 100),
            None => "the default branch".to_owned(),
        };
        format!("{path} at {at} in {}/{}", self.project, self.repo)
    }

    /// What a request about this place was about, for Bitbucket's errors.
    pub fn subject(&self) -> Subject<'_> {
        Subject { project: &self.project, repo: &self.repo, pr: None }
    }
}

fn page(start: u64, limit: u64) -> Vec<(String, String)> {
    vec![("start".into(), start.to_string()), ("limit".into(), limit.to_string())]
}

/// What a browse answered.
#[derive(Debug)]
pub enum Browsed {
    /// A page of a text file's lines.
    Lines(Lines),
    /// A page of a folder's entries.
    Folder(Page<Child>),
    /// A binary file: Bitbucket shows no lines.
    Binary,
    /// An answer that is neither (a submodule, or a shape bb does not know).
    Other,
}

/// A page of a file's lines.
#[derive(Debug, Default)]
pub struct Lines {
    /// The lines' text, in order, each cut to the call's share (see `cut`).
    pub lines: Vec<String>,
    /// The 0-based index of the first.
    pub start: u64,
    /// Whether the file ends with this page.
    pub last: bool,
    /// The lines cut to the share's characters: their index in `lines` and their whole length in characters.
    pub cut: BTreeMap<usize, usize>,
    /// Lines of the page past the share's bytes, skipped unread: the window ends early by this many.
    pub dropped: u64,
}

/// One entry of a folder. [reference "Files, blame, search"]
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Child {
    /// Its path, relative to the folder.
    pub path: Option<Path>,
    /// FILE, DIRECTORY or SUBMODULE.
    #[serde(rename = "type")]
    pub kind: Option<String>,
    /// A file's size in bytes.
    pub size: Option<u64>,
}

impl Child {
    /// Its name relative to the folder (`?` when Bitbucket gave none).
    pub fn name(&self) -> &str {
        self.path.as_ref().and_then(|p| p.whole.as_deref()).unwrap_or("?")
    }
}

/// What a browse answered, or the sentence that says why it could not be read; every line kept whole.
pub fn browsed(outcome: &FetchOutcome, place: &Place) -> Result<Browsed, BitbucketError> {
    let b: BrowseJson = errors::json(outcome, place.subject(), None)?;
    Ok(of(b))
}

/// What a browse answered, keeping `share` of its lines: the shell's decode when it cut the answer as
/// it read it ([`crate::decode`]), else the bytes cut the same way here.
pub fn browsed_within(outcome: &FetchOutcome, place: &Place, share: LineShare) -> Result<Browsed, BitbucketError> {
    if let FetchOutcome::Response(r) = outcome
        && let Some(Decoded::Lines(answer)) = &r.decoded
    {
        return (*answer.0).clone().map(of).map_err(BitbucketError::Failed);
    }
    window::keep(share, || errors::json::<BrowseJson>(outcome, place.subject(), None)).map(of)
}

fn of(b: BrowseJson) -> Browsed {
    if let Some(kept) = b.lines {
        return Browsed::Lines(Lines {
            lines: kept.lines,
            start: b.start.unwrap_or(0),
            // Lines the share dropped: the file goes on past what is kept, whatever the page said.
            last: b.is_last_page != Some(false) && kept.dropped == 0,
            cut: kept.cut,
            dropped: kept.dropped,
        });
    }
    if let Some(children) = b.children {
        return Browsed::Folder(children.decode());
    }
    if b.binary == Some(true) {
        return Browsed::Binary;
    }
    Browsed::Other
}

/// A file's bytes within `cap` (the shell's decode, else the body cut the same way), or why they could not be read.
pub fn raw(outcome: &FetchOutcome, place: &Place, cap: usize) -> Result<BytesAnswer, BitbucketError> {
    if let FetchOutcome::Response(r) = outcome
        && let Some(Decoded::Bytes(answer)) = &r.decoded
    {
        return Ok(answer.clone());
    }
    errors::body(outcome, place.subject(), None).map(|b| BytesAnswer::of(b, cap))
}

/// The picture a raw read holds, for the view: `None` when it could not be read or is no picture bb draws.
pub fn picture(place: &Place, outcome: &FetchOutcome) -> Option<Value> {
    let raw = raw(outcome, place, crate::pictures::VIEW_BYTES).ok()?;
    let picture = crate::pictures::of(&place.path, &raw.bytes)?;
    let mut v = picture.to_value();
    if raw.whole {
        v["bytes"] = serde_json::json!(raw.bytes.len());
        v["data"] = serde_json::json!(crate::encoding::base64(&raw.bytes));
    } else {
        // Past the cap: the page says so and offers the file in Bitbucket.
        v["over"] = serde_json::json!(crate::pictures::VIEW_BYTES);
    }
    Some(v)
}

/// A page of file paths under a folder.
pub fn files(outcome: &FetchOutcome, place: &Place) -> Result<Page<String>, BitbucketError> {
    errors::json::<RawPage>(outcome, place.subject(), None).map(RawPage::decode::<String>)
}

/// One blame entry: the commit that last changed `spanned` lines from `line` (1-based).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Blame {
    /// The commit's full id.
    pub commit: String,
    /// Its author's name as shown.
    pub author: String,
    /// Its author's user name (Bitbucket's `name`, a slug for most people), when Bitbucket knows them.
    pub user: Option<String>,
    /// When it was authored, epoch ms.
    pub at: Option<i64>,
    /// The first line the entry covers, 1-based.
    pub line: u64,
    /// How many lines it covers.
    pub spanned: u64,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct BlameJson {
    author: Option<Person>,
    author_timestamp: Option<i64>,
    commit_id: Option<String>,
    commit_hash: Option<String>,
    line_number: Option<u64>,
    spanned_lines: Option<u64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct Person {
    name: Option<String>,
    display_name: Option<String>,
}

/// The blame entries of an answer, in line order; an entry bb cannot read is left out and counted.
pub fn blame(outcome: &FetchOutcome, place: &Place) -> Result<(Vec<Blame>, usize), BitbucketError> {
    let raw: Value = errors::json(outcome, place.subject(), None)?;
    // Without `noContent` Bitbucket wraps the entries with the lines (`{lines, blame}`); either is read.
    let values = match raw {
        Value::Array(a) => a,
        Value::Object(mut o) => match o.remove("blame") {
            Some(Value::Array(a)) => a,
            _ => return Err(BitbucketError::Failed(format!("Bitbucket sent no blame for {}.", place.name()))),
        },
        _ => return Err(BitbucketError::Failed(format!("Bitbucket sent no blame for {}.", place.name()))),
    };
    let total = values.len();
    let mut out: Vec<Blame> = values
        .into_iter()
        .filter_map(|v| serde_json::from_value::<BlameJson>(v).ok())
        .filter_map(|b| {
            let person = b.author.unwrap_or_default();
            Some(Blame {
                commit: b.commit_id.or(b.commit_hash)?,
                author: person.display_name.or(person.name.clone()).unwrap_or_else(|| "?".into()),
                user: person.name,
                at: b.author_timestamp,
                line: b.line_number?,
                spanned: b.spanned_lines.unwrap_or(1).max(1),
            })
        })
        .collect();
    out.sort_by_key(|b| b.line);
    let unreadable = total - out.len();
    Ok((out, unreadable))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn place(path: &str, at: Option<&str>) -> Place {
        Place { project: "BB".into(), repo: "api".into(), path: path.into(), at: at.map(str::to_owned) }
    }

    #[test]
    fn requests_encode_each_path_component_and_ask_at_the_ref() {
        let r = place("src/a b.rs", Some("feature/x")).browse_request(199, 200);
        assert_eq!(r.path, "/rest/api/latest/projects/BB/repos/api/browse/src/a%20b.rs");
        assert_eq!(r.query[0], ("at".to_owned(), "feature/x".to_owned()));
        assert!(r.query.contains(&("start".to_owned(), "199".to_owned())));
        let root = place("", None).files_request(0, 100);
        assert_eq!(root.path, "/rest/api/latest/projects/BB/repos/api/files");
        let b = place("x.rs", None).blame_request(0, 10);
        assert!(b.query.contains(&("noContent".to_owned(), "true".to_owned())));
    }

    #[test]
    fn a_browse_answer_is_lines_a_folder_a_binary_or_neither() {
        let p = place("x", None);
        let lines = browsed(
            &FetchOutcome::response(
                200,
                r#"{"lines":[{"text":"a"},{"text":"b"}],"start":10,"size":2,"isLastPage":false}"#,
            ),
            &p,
        )
        .unwrap();
        assert!(matches!(lines, Browsed::Lines(Lines { ref lines, start: 10, last: false, .. }) if lines.len() == 2));
        let folder = browsed(
            &FetchOutcome::response(
                200,
                r#"{"children":{"values":[{"path":{"toString":"src"},"type":"DIRECTORY"}],"isLastPage":true}}"#,
            ),
            &p,
        )
        .unwrap();
        assert!(matches!(folder, Browsed::Folder(ref page) if page.values[0].name() == "src"));
        assert!(matches!(browsed(&FetchOutcome::response(200, r#"{"binary":true}"#), &p).unwrap(), Browsed::Binary));
        assert!(matches!(browsed(&FetchOutcome::response(200, "{}"), &p).unwrap(), Browsed::Other));
    }

    #[test]
    fn blame_entries_are_read_in_line_order_and_a_broken_one_is_counted() {
        let body = r#"[{"author":{"name":"bob","displayName":"Bob"},"commitId":"b1","lineNumber":5,"spannedLines":2},
                      {"author":{"name":"al"},"commitHash":"a1","lineNumber":1,"spannedLines":4},
                      {"lineNumber":"x"}]"#;
        let (entries, unreadable) = blame(&FetchOutcome::response(200, body), &place("x", None)).unwrap();
        assert_eq!(entries.iter().map(|b| (b.line, b.commit.as_str())).collect::<Vec<_>>(), [(1, "a1"), (5, "b1")]);
        assert_eq!(entries[1].author, "Bob");
        assert_eq!(unreadable, 1);
    }
}
