//! What a pull request changes: Bitbucket's file tree (the changed files, paged) and one file's diff with
//! the comments Bitbucket draws on it.
//!
//! Requests: `GET …/pull-requests/{id}/changes?withComments=true&start&limit` and
//! `GET …/pull-requests/{id}/diff/{path}?contextLines=N&withComments=true` — the diff endpoint is not paged:
//! the server caps lines and says `truncated`. [reference "Diff and changes": spec, rec]

use crate::bitbucket::budget::{self, Share};
use crate::bitbucket::model::{Change, Diff, DiffSet, PullRequest};
use crate::bitbucket::{Page, RawPage, file_path, pr_path};
use crate::errors::{self, BitbucketError, Subject};
use crate::fetch::{Decoded, FetchOutcome, FetchRequest};

/// The commits of a pull request whose changes are asked for: those after `since` up to `until` (both
/// commit ids). Bitbucket's changes take `changeScope=RANGE` with `sinceId`/`untilId` (without both it
/// answers ALL), the diff `sinceId`/`untilId`. [spec: Atlassian's javadoc, PullRequestChangesRequest and
/// PullRequestChangeScope ("RANGE: limits the scope … to one or more commits between sinceId and untilId").
/// The REST query parameters `changeScope`, `sinceId`, `untilId` of `…/pull-requests/{id}/changes` and
/// `…/diff/{path}` carry the javadoc's names: [assumed] (no public REST page found that lists them; recorded in
/// reference "Files, blame, search")]
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Range {
    /// The last commit left out (the one reviewed).
    pub since: String,
    /// The last commit taken (the source branch's tip).
    pub until: String,
}

/// The word `since` takes for the calling person's last review.
pub const LAST_REVIEW: &str = "last_review";

/// What `since` means for a pull request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Since {
    /// The commits after `range.since`; `yours` when it is the person's last review.
    Range { range: Range, yours: bool },
    /// The person has no review on record: every change.
    NoReview { you: String },
    /// Nothing after it: the commit is the source branch's tip.
    Nothing { commit: String },
    /// It cannot be resolved, in a sentence.
    Unknown(String),
}

/// The person's last reviewed commit on `pr`: `you` is whom bb acts as (`X-AUSERNAME`, a user name, or a slug).
pub fn last_reviewed<'p>(pr: &'p PullRequest, you: &str) -> Option<&'p str> {
    pr.reviewers
        .iter()
        .chain(&pr.participants)
        .find(|p| p.user.name.as_deref() == Some(you) || p.user.slug.as_deref() == Some(you))
        .and_then(|p| p.last_reviewed_commit.as_deref())
}

/// What `since` (a commit id, or [`LAST_REVIEW`]) means on `pr` for `you`.
pub fn since(pr: &PullRequest, since: &str, you: Option<&str>) -> Since {
    let Some(until) = pr.from_ref.as_ref().and_then(|r| r.latest_commit.clone()) else {
        return Since::Unknown(
            "Bitbucket did not say the pull request's source commit, so `since` cannot be used.".into(),
        );
    };
    let (from, yours) = if since == LAST_REVIEW {
        let Some(you) = you else {
            return Since::Unknown("Bitbucket did not say whom bb acts as, so your last review is unknown: give since a commit id (list_pr_commits lists them).".into());
        };
        match last_reviewed(pr, you) {
            Some(c) => (c.to_owned(), true),
            None => return Since::NoReview { you: you.to_owned() },
        }
    } else {
        (since.to_owned(), false)
    };
    if from == until || (from.len() >= 7 && until.starts_with(&from)) {
        return Since::Nothing { commit: from };
    }
    Since::Range { range: Range { since: from, until }, yours }
}

/// A page of the changed files (of the commits in `range` when given).
pub fn changes_request(
    project: &str,
    repo: &str,
    id: u64,
    start: u64,
    limit: u64,
    range: Option<&Range>,
) -> FetchRequest {
    let mut query = vec![("withComments".into(), "true".into())];
    if let Some(r) = range {
        query.push(("changeScope".into(), "RANGE".into()));
        query.push(("sinceId".into(), r.since.clone()));
        query.push(("untilId".into(), r.until.clone()));
    }
    query.extend(crate::args::paging(start, limit));
    FetchRequest::get(format!("{}/changes", pr_path(project, repo, id)), query)
}

/// One file's diff with `context` lines around each change (Bitbucket's default when `None`), of the
/// commits in `range` when given.
pub fn file_request(
    project: &str,
    repo: &str,
    id: u64,
    path: &str,
    context: Option<u64>,
    range: Option<&Range>,
) -> FetchRequest {
    let mut query = Vec::new();
    if let Some(n) = context {
        query.push(("contextLines".into(), n.to_string()));
    }
    if let Some(r) = range {
        query.push(("sinceId".into(), r.since.clone()));
        query.push(("untilId".into(), r.until.clone()));
    }
    query.push(("withComments".into(), "true".into()));
    FetchRequest::get(format!("{}/diff/{}", pr_path(project, repo, id), file_path(path)), query)
}

/// A page of changed files, or the sentence that says why it could not be read.
pub fn changes(outcome: &FetchOutcome, about: Subject<'_>) -> Result<Page<Change>, BitbucketError> {
    errors::json::<RawPage>(outcome, about, None).map(RawPage::decode::<Change>)
}

/// One file's diff keeping at most `share` of its lines: the rest are skipped as the answer is read and
/// counted in [`Diff::left_out`].
pub fn file_within(outcome: &FetchOutcome, about: Subject<'_>, share: Share) -> Result<Diff, BitbucketError> {
    // Decoded by the shell as it read the answer (a 2xx for a request that said `keep`).
    if let FetchOutcome::Response(r) = outcome
        && let Some(Decoded::Diff(answer)) = &r.decoded
    {
        return match &*answer.0 {
            Ok((set, skipped)) => Ok(first_of(set.clone(), *skipped)),
            Err(e) => Err(BitbucketError::Failed(e.clone())),
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
    let mut d = first(set);
    d.left_out = skipped;
    d
}

/// One file's diff (truncated when the set it came in was), or why it could not be read.
pub fn file(outcome: &FetchOutcome, about: Subject<'_>) -> Result<Diff, BitbucketError> {
    errors::json::<DiffSet>(outcome, about, None).map(first)
}

/// The set's first file, `truncated` when the set was, with the set's context lines.
fn first(set: DiffSet) -> Diff {
    let context = set.context_lines.as_ref().and_then(serde_json::Value::as_u64);
    let mut d = set.diffs.into_iter().next().unwrap_or_default();
    if set.truncated == Some(true) {
        d.truncated = Some(true);
    }
    d.context_lines = context;
    d
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::fetch::{FetchResponse, Keep, decode};

    const ABOUT: Subject<'static> = Subject { project: "BB", repo: "api", pr: Some(1) };
    const BODY: &str = r#"{"truncated":true,"diffs":[{"hunks":[{"segments":[{"type":"ADDED","lines":[{"destination":1,"line":"a"},{"destination":2,"line":"b"},{"destination":3,"line":"c"}]}]}]}]}"#;

    fn decoded(share: Share, body: &str) -> FetchOutcome {
        let decoded = decode(Keep::Diff(share), &mut body.as_bytes()).unwrap();
        FetchOutcome::Response(FetchResponse {
            status: 200,
            body: vec![],
            retry_after_s: None,
            user: None,
            decoded: Some(decoded),
            credential: Default::default(),
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
    fn the_context_lines_of_the_answer_come_with_its_file_when_they_are_a_count() {
        let share = Share { lines: 10, bytes: 1 << 20 };
        let with = BODY.replacen('{', r#"{"contextLines":10,"#, 1);
        for outcome in [decoded(share, &with), FetchOutcome::response(200, with.as_str())] {
            assert_eq!(file_within(&outcome, ABOUT, share).unwrap().context_lines, Some(10));
        }
        let odd = BODY.replacen('{', r#"{"contextLines":-1,"#, 1);
        assert_eq!(file(&FetchOutcome::response(200, odd.as_str()), ABOUT).unwrap().context_lines, None);
        assert_eq!(file(&FetchOutcome::response(200, BODY), ABOUT).unwrap().context_lines, None);
    }

    #[test]
    fn json_the_shell_could_not_read_is_said_and_a_body_that_breaks_off_is_the_shells_error() {
        let share = Share { lines: 2, bytes: 1 << 20 };
        let e = file_within(&decoded(share, "{\"diffs\": [nope"), ABOUT, share).unwrap_err().to_string();
        assert!(e.starts_with("Bitbucket's answer could not be read"), "{e}");
        struct Breaks;
        impl std::io::Read for Breaks {
            fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
                Err(std::io::Error::other("reset"))
            }
        }
        assert!(decode(Keep::Diff(share), &mut Breaks).is_err());
    }
}
