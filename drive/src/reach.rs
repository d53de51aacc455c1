//! What a shell gives the driver to reach Bitbucket, and the person a request acts for.

use std::sync::Arc;

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

/// Which kind of work a Bitbucket request is, which decides its place among the others for a thread
/// and a connection (issue 58: a thousand people's refreshes filled every connection to Bitbucket, and
/// a model's call and a new person's token check queued behind them).
///
/// ```text
///   a connection comes free ──▶ Check (a quarter of them at most) ──▶ Call ──▶ Refresh (never the last quarter)
/// ```
///
/// A `Check` goes first, within a bounded share, so a thousand people connecting at once cannot take
/// the model's connections; a `Call` next; a `Refresh` only while a quarter of the connections (and of
/// the read threads) stay free for the other two, so a refresh burst never holds them all. Within a lane,
/// queues take turns as before.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum Lane {
    /// Whether a new person's token is a Bitbucket user's (the HTTP transport's per-person mode),
    /// asked before their first session.
    Check,
    /// A request of a model's call (or of anything else a person waits on).
    #[default]
    Call,
    /// A live view's refresh ([`FetchRequest::refresh`]): nobody waits on it but the view.
    Refresh,
}

impl Lane {
    /// The lanes in the order they are served.
    pub const ALL: [Lane; 3] = [Lane::Check, Lane::Call, Lane::Refresh];

    /// The lane of `request` made for a call: a refresh's reads are `Refresh`, the rest `Call`.
    pub fn of(request: &FetchRequest) -> Lane {
        if request.refresh.is_some() { Lane::Refresh } else { Lane::Call }
    }

    /// Its place in [`Lane::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// How many of `total` places (threads, connections) this lane may hold at once: a check a
    /// quarter (at least one), a call all, a refresh all but a quarter (at least one left for the
    /// others, when there are two or more).
    pub fn most_of(self, total: usize) -> usize {
        let quarter = (total / 4).max(1);
        match self {
            Lane::Check => quarter.min(total),
            Lane::Call => total,
            Lane::Refresh => total.saturating_sub(quarter).max(1).min(total),
        }
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
    /// Its lane: which requests it goes before and after.
    pub lane: Lane,
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

/// A person's own Bitbucket token: as their client sent it on `initialize` (per-person mode), or
/// the token of their Bitbucket login (`--oauth`), which names the Bitbucket user it acts for and
/// the grant that renews it.
///
/// It is used for that session's Bitbucket requests only; its `Debug` form hides it, and bb never
/// logs or echoes it.
#[derive(Clone)]
pub struct PersonalToken {
    secret: String,
    user: Option<String>,
    grant: Option<Arc<dyn Grant>>,
}

/// A person's Bitbucket grant behind a login (`--oauth`): what to do when Bitbucket refuses its token.
pub trait Grant: Send + Sync + 'static {
    /// Bitbucket answered 401 to a request made with `secret` (blocking; called on a read thread).
    /// `Ok` with the token to send again (a refreshed one; `secret` itself when it is still good and
    /// the refusal was about permission), or `Err` with a sentence for the person when the grant has
    /// ended (revoked in Bitbucket, or expired): they must log in again.
    fn refused(&self, secret: &str) -> Result<String, String>;
}

impl PersonalToken {
    /// Keeps `token` as the client sent it, unchecked: Bitbucket's answers are what judge it.
    pub fn new(token: impl Into<String>) -> PersonalToken {
        PersonalToken { secret: token.into(), user: None, grant: None }
    }

    /// The Bitbucket token of `user`'s login, renewed through `grant`.
    pub fn of_login(token: impl Into<String>, user: impl Into<String>, grant: Arc<dyn Grant>) -> PersonalToken {
        PersonalToken { secret: token.into(), user: Some(user.into()), grant: Some(grant) }
    }

    /// The token itself, for the `Authorization` header of a Bitbucket request. Never log it.
    pub fn secret(&self) -> &str {
        &self.secret
    }

    /// The Bitbucket user a login acts for (`None` for a token a client sent).
    pub fn user(&self) -> Option<&str> {
        self.user.as_deref()
    }

    /// What the person is counted and kept apart by: the user of a login (whatever token it holds
    /// now), else the token. Hash it; never log it.
    pub fn identity(&self) -> (u8, &str) {
        match &self.user {
            Some(u) => (1, u),
            None => (0, &self.secret),
        }
    }

    /// The grant behind a login.
    pub fn grant(&self) -> Option<&Arc<dyn Grant>> {
        self.grant.as_ref()
    }
}

impl PartialEq for PersonalToken {
    fn eq(&self, other: &PersonalToken) -> bool {
        self.secret == other.secret && self.user == other.user
    }
}

impl Eq for PersonalToken {}

impl std::fmt::Debug for PersonalToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.user {
            Some(u) => write!(f, "PersonalToken(<hidden>, login of {u})"),
            None => f.write_str("PersonalToken(<hidden>)"),
        }
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
