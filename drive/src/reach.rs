//! What a shell gives the driver to reach Bitbucket, and the person a request acts for.

use bb_core::{FetchOutcome, FetchRequest};

use crate::cancel::Cancel;

/// Carries out one Bitbucket request, blocking: the driver runs it on its pool of read threads, so a
/// slow Bitbucket holds up neither the driver nor another request.
///
/// Implementations make the request with the base URL, credentials, timeouts and retries they
/// hold, never panic, and name no secret in a failure. When `cancel` is set they return promptly
/// with any failure (its outcome is dropped): a request not yet sent is never sent, and no retry follows.
pub trait Bitbucket: Send + Sync + 'static {
    /// Makes `request`, with `person`'s own token when the session has one (the HTTP transport's
    /// per-person mode) or else the operator's configured credentials.
    fn fetch(&self, request: FetchRequest, person: Option<&PersonalToken>, cancel: &Cancel) -> FetchOutcome;

    /// Makes `request` for `requester`: the driver calls this one. A Bitbucket that bounds its
    /// requests in flight queues each requester's apart and serves the queues in turn; by default
    /// it is [`Bitbucket::fetch`] with the requester's person.
    fn fetch_for(&self, request: FetchRequest, requester: Requester<'_>, cancel: &Cancel) -> FetchOutcome {
        self.fetch(request, requester.person, cancel)
    }
}

/// Whom a request is for.
#[derive(Debug, Clone, Copy)]
pub struct Requester<'a> {
    /// The queue it waits in for a slot: one per person in per-person mode, else one per session
    /// (unique in the process, whichever driver opened it).
    pub queue: u64,
    /// The person whose token it carries, in per-person mode.
    pub person: Option<&'a PersonalToken>,
}

/// A closure is a Bitbucket: for tests and small adapters.
impl<F> Bitbucket for F
where
    F: Fn(FetchRequest, Option<&PersonalToken>, &Cancel) -> FetchOutcome + Send + Sync + 'static,
{
    fn fetch(&self, request: FetchRequest, person: Option<&PersonalToken>, cancel: &Cancel) -> FetchOutcome {
        self(request, person, cancel)
    }
}

/// A person's own Bitbucket token, as their client sent it on `initialize`.
///
/// It is used for that session's Bitbucket requests only; its `Debug` form hides it, and bb never
/// logs or echoes it.
#[derive(Clone, PartialEq, Eq)]
pub struct PersonalToken(String);

impl PersonalToken {
    /// Keeps `token` as the client sent it, unchecked: Bitbucket's answers are what judge it.
    pub fn new(token: impl Into<String>) -> PersonalToken {
        PersonalToken(token.into())
    }

    /// The token itself, for the `Authorization` header of a Bitbucket request. Never log it.
    pub fn secret(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for PersonalToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PersonalToken(<hidden>)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_personal_token_never_shows_in_debug_output() {
        let t = PersonalToken::new("s3cret");
        assert!(!format!("{t:?}").contains("s3cret"));
    }
}
