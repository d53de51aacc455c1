//! What a pull request changes: Bitbucket's file tree (the changed files, paged) and one file's diff with
//! the comments Bitbucket draws on it.
//!
//! Requests: `GET …/pull-requests/{id}/changes?withComments=true&start&limit` and
//! `GET …/pull-requests/{id}/diff/{path}?contextLines=N&withComments=true` — the diff endpoint is not paged:
//! the server caps lines and says `truncated`. [reference "Diff and changes": spec, rec]

use crate::bitbucket::budget::{self, Share};
use crate::bitbucket::errors::{self, Subject};
use crate::bitbucket::model::{Change, Diff, DiffSet};
use crate::bitbucket::{Page, RawPage, file_path, pr_path};
use crate::fetch::{FetchOutcome, FetchRequest};

/// A page of the changed files.
pub fn changes_request(project: &str, repo: &str, id: u64, start: u64, limit: u64) -> FetchRequest {
    let mut query = vec![("withComments".into(), "true".into())];
    query.extend(crate::args::paging(start, limit));
    FetchRequest::get(format!("{}/changes", pr_path(project, repo, id)), query)
}

/// One file's diff with `context` lines around each change (Bitbucket's default when `None`).
pub fn file_request(project: &str, repo: &str, id: u64, path: &str, context: Option<u64>) -> FetchRequest {
    let mut query = Vec::new();
    if let Some(n) = context {
        query.push(("contextLines".into(), n.to_string()));
    }
    query.push(("withComments".into(), "true".into()));
    FetchRequest::get(format!("{}/diff/{}", pr_path(project, repo, id), file_path(path)), query)
}

/// A page of changed files, or the sentence that says why it could not be read.
pub fn changes(outcome: &FetchOutcome, about: Subject<'_>) -> Result<Page<Change>, String> {
    errors::json::<RawPage>(outcome, about, None).map(RawPage::decode::<Change>)
}

/// One file's diff keeping at most `share` of its lines: the rest are skipped as the answer is read and
/// counted in [`Diff::left_out`].
pub fn file_within(outcome: &FetchOutcome, about: Subject<'_>, share: Share) -> Result<Diff, String> {
    let (read, skipped) = budget::keep(share, || file(outcome, about));
    read.map(|mut d| {
        d.left_out = skipped;
        d
    })
}

/// One file's diff (truncated when the set it came in was), or why it could not be read.
pub fn file(outcome: &FetchOutcome, about: Subject<'_>) -> Result<Diff, String> {
    errors::json::<DiffSet>(outcome, about, None).map(|set| {
        let mut d = set.diffs.into_iter().next().unwrap_or_default();
        if set.truncated == Some(true) {
            d.truncated = Some(true);
        }
        d
    })
}
