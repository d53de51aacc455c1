//! How the shell carries out the Bitbucket requests a session asks for.
//!
//! A [`Fetcher`] is blocking (bb's HTTP client is ureq) and runs on smol's blocking pool, so a
//! slow Bitbucket never holds up the driver loop or another request.

use bb_core::plan::FetchErrorKind;
use bb_core::{FetchOutcome, FetchRequest};

/// Carries out one Bitbucket request.
pub trait Fetcher: Send + Sync + 'static {
    /// Makes the request and reports what happened. Never panics; errors name no secret.
    fn fetch(&self, request: FetchRequest) -> FetchOutcome;
}

/// The fetcher of a bb with no Bitbucket configured: every request fails with what to set.
#[derive(Debug, Clone, Copy, Default)]
pub struct Unconfigured;

impl Fetcher for Unconfigured {
    fn fetch(&self, _request: FetchRequest) -> FetchOutcome {
        FetchOutcome::failed(
            FetchErrorKind::NotConfigured,
            "no Bitbucket server is configured: set BITBUCKET_URL and BITBUCKET_TOKEN.",
        )
    }
}
