//! A pull request's builds as its page lists them, written once for every tool and view that shows them.
//!
//! Requests: the pull request page's own listing `GET /rest/ui/latest/projects/{key}/repos/{slug}/pull-requests/{id}/builds`
//! (the source commit's builds for the pull request's branch or for none, each naming the key it reports
//! under), up to `max_pages` pages. On a server without that listing (404), once the pull request names its
//! source commit: the commit's legacy listing `GET /rest/build-status/latest/commits/{commit}` and/or its totals
//! `GET /rest/build-status/latest/commits/stats/{commit}`, as the reader was told. When the listing has more
//! pages than read, the commit's totals, if asked for. [reference "Builds": spec, rec; the UI listing's shape
//! and its `page` wrapper are assumed]

use serde_json::Value;

use crate::bitbucket::model::{Build, BuildStats};
use crate::bitbucket::{Page, RawPage, segment};
use crate::errors::{self, BitbucketError, Subject};
use crate::fetch::{FetchOutcome, FetchRequest};

/// Builds asked for in one page when requirements are to be decided: a pull request with more builds
/// than this is not decided on (a build past the page could satisfy a required key).
pub const WHOLE_LISTING: u64 = 100;

/// Names the reads of a [`BuildsReader`]; a plan files them under a read name of its own that wraps these.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BuildsRead {
    /// A page of the pull request page's listing.
    Listing,
    /// A page of the source commit's legacy listing.
    Legacy,
    /// The source commit's build totals.
    Stats,
}

/// Where the builds read came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// The pull request page's listing: the builds for its branch, each with the key it reports under.
    PullRequestPage,
    /// The source commit's legacy listing: every build of the commit, whatever branch it ran for.
    Commit,
}

/// What to read when the server has no pull request build listing (404).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fallback {
    /// Nothing: the reader ends with no listing.
    Nothing,
    /// The source commit's totals only.
    Stats,
    /// The source commit's legacy listing (a page of `limit` from `start`) and its totals.
    CommitListing,
}

/// The pull request page's listing. [reference "Builds": assumed shape, `page` wrapper]
pub fn listing_request(project: &str, repo: &str, id: u64, start: u64, limit: u64) -> FetchRequest {
    FetchRequest::get(
        format!("/rest/ui/latest/projects/{}/repos/{}/pull-requests/{id}/builds", segment(project), segment(repo)),
        vec![("start".into(), start.to_string()), ("limit".into(), limit.to_string())],
    )
}

/// A commit's legacy listing. [reference "Builds": spec]
pub fn legacy_request(commit: &str, start: u64, limit: u64) -> FetchRequest {
    FetchRequest::get(
        format!("/rest/build-status/latest/commits/{}", segment(commit)),
        vec![("start".into(), start.to_string()), ("limit".into(), limit.to_string())],
    )
}

/// A commit's build totals. [reference "Builds": spec]
pub fn stats_request(commit: &str) -> FetchRequest {
    FetchRequest::get(format!("/rest/build-status/latest/commits/stats/{}", segment(commit)), vec![])
}

/// A page of a build listing; the pull request page's listing wraps it under `page`. [reference "Builds": assumed shape]
pub fn decode_listing(v: Value) -> Page<Build> {
    let page: RawPage = serde_json::from_value(v.get("page").cloned().unwrap_or(v)).unwrap_or_default();
    page.decode()
}

/// The pull request's source commit, as far as the reader knows it.
#[derive(Debug, PartialEq, Eq)]
enum Commit {
    /// The pull request has not been read yet.
    Unknown,
    /// The pull request names none.
    Missing,
    /// The commit.
    Known(String),
}

/// Reads a pull request's builds: its page's listing, or what the reader falls back to.
#[derive(Debug)]
pub struct BuildsReader {
    project: String,
    repo: String,
    id: u64,
    limit: u64,
    /// The page of the commit's legacy listing to read on fallback.
    legacy: (u64, u64),
    max_pages: usize,
    fallback: Fallback,
    stats_if_incomplete: bool,
    pages: usize,
    /// What waits for the source commit, which the pull request names.
    waiting: Option<Fallback>,
    commit: Commit,
    /// The builds read so far (every page), or `None` before the first.
    pub page: Option<Page<Build>>,
    /// Where they came from.
    pub source: Option<Source>,
    /// The commit's totals, when asked for: Bitbucket's count of the whole.
    pub stats: Option<Result<BuildStats, BitbucketError>>,
    /// Why a listing could not be read, in one sentence.
    pub error: Option<BitbucketError>,
    /// The server has no pull request build listing (404).
    pub no_listing: bool,
}

impl BuildsReader {
    /// A reader of pull request `id`'s listing from `start`, `limit` a page, reading up to `max_pages` pages;
    /// `fallback` says what to read on a server without the listing, `stats_if_incomplete` whether to read the
    /// commit's totals when more pages exist than are read. Returns the first read.
    pub fn new(
        (project, repo, id): (&str, &str, u64),
        start: u64,
        limit: u64,
        max_pages: usize,
        fallback: Fallback,
        stats_if_incomplete: bool,
    ) -> (BuildsReader, FetchRequest) {
        let reader = BuildsReader {
            project: project.to_owned(),
            repo: repo.to_owned(),
            id,
            limit,
            legacy: (start, limit),
            max_pages,
            fallback,
            stats_if_incomplete,
            pages: 0,
            waiting: None,
            commit: Commit::Unknown,
            page: None,
            source: None,
            stats: None,
            error: None,
            no_listing: false,
        };
        let first = listing_request(project, repo, id, start, limit);
        (reader, first)
    }

    /// Reads this page of the commit's legacy listing on fallback, instead of the listing's own `start` and `limit`.
    pub fn legacy_page(mut self, start: u64, limit: u64) -> BuildsReader {
        self.legacy = (start, limit);
        self
    }

    /// The source commit, once the pull request has been read (`None` inside when it names none);
    /// a fallback that waited for it is asked for now.
    pub fn source_commit(&mut self, commit: Option<&str>, more: &mut dyn FnMut(BuildsRead, FetchRequest)) {
        self.commit = commit.map_or(Commit::Missing, |c| Commit::Known(c.to_owned()));
        if let Some(w) = self.waiting.take() {
            self.by_commit(w, more);
        }
    }

    /// The source commit, when the pull request named one.
    pub fn commit(&self) -> Option<&str> {
        match &self.commit {
            Commit::Known(c) => Some(c),
            Commit::Unknown | Commit::Missing => None,
        }
    }

    /// Takes the outcome of `read`; may ask for more through `more`.
    pub fn on(&mut self, read: BuildsRead, outcome: &FetchOutcome, more: &mut dyn FnMut(BuildsRead, FetchRequest)) {
        let about = Subject { project: &self.project, repo: &self.repo, pr: Some(self.id) };
        match read {
            BuildsRead::Listing => match outcome {
                FetchOutcome::Response(r) if r.status == 404 => {
                    // No pull request build listing on this server. [reference "Builds"]
                    self.no_listing = true;
                    self.want(self.fallback, more);
                }
                _ => match errors::json::<Value>(outcome, about, None) {
                    Ok(v) => {
                        let page = decode_listing(v);
                        self.pages += 1;
                        self.source = Some(Source::PullRequestPage);
                        let next = page.next;
                        match &mut self.page {
                            None => self.page = Some(page),
                            Some(p) => {
                                p.values.extend(page.values);
                                p.unreadable += page.unreadable;
                                p.next = page.next;
                            }
                        }
                        match next {
                            Some(next) if self.pages < self.max_pages => {
                                more(
                                    BuildsRead::Listing,
                                    listing_request(&self.project, &self.repo, self.id, next, self.limit),
                                );
                            }
                            Some(_) if self.stats_if_incomplete => self.want(Fallback::Stats, more),
                            _ => {}
                        }
                    }
                    Err(e) => self.error = Some(e),
                },
            },
            BuildsRead::Legacy => match errors::json::<RawPage>(outcome, about, None) {
                Ok(p) => {
                    self.page = Some(p.decode());
                    self.source = Some(Source::Commit);
                }
                Err(e) => self.error = Some(e),
            },
            BuildsRead::Stats => self.stats = Some(errors::json::<BuildStats>(outcome, about, None)),
        }
    }

    /// Asks for `w` now if the source commit is known, else once the pull request names it.
    fn want(&mut self, w: Fallback, more: &mut dyn FnMut(BuildsRead, FetchRequest)) {
        if w == Fallback::Nothing {
            return;
        }
        if self.commit != Commit::Unknown {
            self.by_commit(w, more);
        } else {
            self.waiting = Some(w);
        }
    }

    fn by_commit(&mut self, w: Fallback, more: &mut dyn FnMut(BuildsRead, FetchRequest)) {
        let Some(commit) = self.commit().map(str::to_owned) else {
            self.error = Some(BitbucketError::Failed("the pull request names no source commit.".into()));
            return;
        };
        if w == Fallback::CommitListing {
            more(BuildsRead::Legacy, legacy_request(&commit, self.legacy.0, self.legacy.1));
        }
        more(BuildsRead::Stats, stats_request(&commit));
    }

    /// Whether a fallback still waits for the pull request's source commit.
    pub fn waits_for_commit(&self) -> bool {
        self.waiting.is_some()
    }

    /// The builds read, when every one of them was read: the listing is whole (the decode fuzz target's).
    #[cfg(fuzzing)]
    pub fn whole(&self) -> Option<&Page<Build>> {
        self.page.as_ref().filter(|p| p.next.is_none())
    }
}
