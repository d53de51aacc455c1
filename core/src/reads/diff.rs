//! What a pull request changes: Bitbucket's file tree (the changed files, paged) and one file's diff with
//! the comments Bitbucket draws on it.
//!
//! Requests: `GET …/pull-requests/{id}/changes?withComments=true&start&limit` and
//! `GET …/pull-requests/{id}/diff/{path}?contextLines=N&withComments=true` — the diff endpoint is not paged:
//! the server caps lines and says `truncated`. [reference "Diff and changes": spec, rec]

use crate::bitbucket::budget::{self, Share};
use crate::bitbucket::model::{Change, Diff, DiffSet};
use crate::bitbucket::{Page, RawPage, file_path, pr_path};
use crate::errors::{self, Subject};
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
    // Decoded by the shell as it read the answer (a 2xx for a request that said `keep`).
    if let FetchOutcome::Response(r) = outcome
        && let Some(answer) = &r.diff
    {
        return match &*answer.0 {
            Ok((set, skipped)) => Ok(first_of(set.clone(), *skipped)),
            Err(e) => Err(e.clone()),
        };
    }
    let (read, skipped) = budget::keep(share, || file(outcome, about));
    read.map(|mut d| {
        d.left_out = skipped;
        d
    })
}

/// The set's first file, `truncated` when the set was, with the lines its share skipped.
fn first_of(set: DiffSet, skipped: usize) -> Diff {
    let mut d = set.diffs.into_iter().next().unwrap_or_default();
    if set.truncated == Some(true) {
        d.truncated = Some(true);
    }
    d.left_out = skipped;
    d
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::fetch::{FetchResponse, read_diff};

    const ABOUT: Subject<'static> = Subject { project: "BB", repo: "api", pr: Some(1) };
    const BODY: &str = r#"{"truncated":true,"diffs":[{"hunks":[{"segments":[{"type":"ADDED","lines":[{"destination":1,"line":"a"},{"destination":2,"line":"b"},{"destination":3,"line":"c"}]}]}]}]}"#;

    fn decoded(share: Share, body: &str) -> FetchOutcome {
        let diff = read_diff(share, &mut body.as_bytes()).unwrap();
        FetchOutcome::Response(FetchResponse {
            status: 200,
            body: vec![],
            retry_after_s: None,
            user: None,
            diff: Some(diff),
        })
    }

    #[test]
    fn a_diff_the_shell_decoded_as_it_read_is_the_diff_the_core_would_have_cut_from_the_bytes() {
        let share = Share { lines: 2, bytes: 1 << 20 };
        let from_shell = file_within(&decoded(share, BODY), ABOUT, share).unwrap();
        let from_bytes = file_within(&FetchOutcome::response(200, BODY), ABOUT, share).unwrap();
        for d in [&from_shell, &from_bytes] {
            let texts: Vec<_> = d.hunks[0].segments[0].lines.iter().filter_map(|l| l.line.clone()).collect();
            assert_eq!(texts, ["a", "b"]);
            assert_eq!((d.left_out, d.truncated), (1, Some(true)));
        }
    }

    #[test]
    fn json_the_shell_could_not_read_is_said_and_a_body_that_breaks_off_is_the_shells_error() {
        let share = Share { lines: 2, bytes: 1 << 20 };
        let e = file_within(&decoded(share, "{\"diffs\": [nope"), ABOUT, share).unwrap_err();
        assert!(e.starts_with("Bitbucket's answer could not be read"), "{e}");
        struct Breaks;
        impl std::io::Read for Breaks {
            fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
                Err(std::io::Error::other("reset"))
            }
        }
        assert!(read_diff(share, &mut Breaks).is_err());
    }
}
