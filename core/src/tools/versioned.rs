//! A write made at the version bb read itself, and what a stale version says.
//!
//! Bitbucket takes a pull request's or a comment's changes only with the version they were read at, and
//! answers 409 (…OutOfDateException) when it moved on meanwhile: nothing was written. Five tools write this
//! way — `decline_pull_request` and `reopen_pull_request` (`state.rs`), `update_pull_request`,
//! `update_pr_comment`, `delete_pr_comment` (`drafts.rs`) and `submit_pr_review` (`review.rs`, the commit
//! reviewed) — and each reads the write's answer through [`written`]. The three that read the version first
//! as a whole thing ([`read`]) read it once more after a 409 that did not carry it, and say so alike
//! ([`again_failed`]). The write itself is never retried.

use serde::de::DeserializeOwned;

use crate::bitbucket::model::PullRequest;
use crate::errors::{self, BitbucketError, Subject, Write};
use crate::fetch::{FetchOutcome, FetchRequest};
use crate::plan::{Fetches, ToolResult};

/// The version read: the write `plan` makes of the thing is asked for as `write`, and the thing comes back as
/// Bitbucket sent it; or the answer, when the read failed or `plan` finds nothing to write.
pub(super) fn read<T: DeserializeOwned, R>(
    outcome: &FetchOutcome,
    about: Subject<'_>,
    plan: impl FnOnce(&T) -> Result<FetchRequest, ToolResult>,
    f: &mut Fetches<'_, '_, R>,
    write: R,
) -> Result<T, ToolResult> {
    let read = errors::json::<T>(outcome, about, None).map_err(ToolResult::error)?;
    f.fetch(write, plan(&read)?);
    Ok(read)
}

/// What a write made at a version bb read came to.
#[derive(Debug)]
pub(super) enum Written<T> {
    /// Bitbucket wrote it: its answer, as `answer` read it.
    Done(T),
    /// The version was stale (409): nothing was written.
    Stale {
        /// The pull request as it is now, when the 409 carried it (with its id).
        now: Option<Box<PullRequest>>,
        /// Bitbucket's own message, clipped (may be empty).
        said: String,
    },
    /// Not written, or not known to be: the sentence.
    Failed(BitbucketError),
}

/// The write's answer: read by `answer` ([`errors::body`], or [`errors::json`] for a type), with `write` saying
/// what it would have done when its outcome is unknown.
pub(super) fn written<'o, T>(
    outcome: &'o FetchOutcome,
    about: Subject<'_>,
    write: Write<'_>,
    answer: impl FnOnce(&'o FetchOutcome, Subject<'_>, Option<Write<'_>>) -> Result<T, BitbucketError>,
) -> Written<T> {
    match answer(outcome, about, Some(write)) {
        Ok(t) => Written::Done(t),
        Err(BitbucketError::Stale { now, refusal, .. }) => {
            Written::Stale { now: now.filter(|p| p.id.is_some()), said: refusal.message }
        }
        Err(e) => Written::Failed(e),
    }
}

/// The sentence when the version was stale and reading `what` once more failed as well: "PR #7 changed after
/// bb read it and was not updated; reading it again failed: …".
pub(super) fn again_failed(what: &str, done: &str, e: &BitbucketError) -> String {
    format!("{what} changed after bb read it and was not {done}; reading it again failed: {e}")
}
