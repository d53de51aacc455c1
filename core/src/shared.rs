//! What the sessions of one server share while one of them runs: the configuration, the caches (its
//! own, and those it was given to share with other servers, [`Caches`]), the table of calls' work, the
//! latest time seen and the outputs for the shell. The [`crate::Server`] owns it and lends it to the
//! session it drives.

use std::collections::VecDeque;
use std::sync::Arc;

use crate::avatar_cache::AvatarCache;
use crate::caches::Caches;
use crate::commit_cache::CommitCache;
use crate::completion::CompletionCache;
use crate::config::ServerConfig;
use crate::contract::Output;
use crate::highlight_cache::HighlightCache;
use crate::made::MadeOnce;
use crate::plan::Desk;
use crate::work::Work;

/// What the sessions of a server share while one of them runs.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) config: ServerConfig,
    /// What this server shares with the servers it was made beside (the answers made once, the
    /// session exposures, the batch counter), as whoever made it decided.
    pub(crate) caches: Caches,
    /// People's avatars, from [`Caches`]: shared with every server given the same.
    pub(crate) avatars: Arc<std::sync::Mutex<AvatarCache>>,
    /// The source commit each pull request was last seen at, shared as the avatars are.
    pub(crate) commits: Arc<std::sync::Mutex<CommitCache>>,
    /// Files highlighted whole, for the next read of the same lines.
    pub(crate) highlights: HighlightCache,
    /// Every ticket in flight: whose it is and what it waits on.
    pub(crate) work: Work,
    /// The latest wall-clock time seen, epoch milliseconds.
    pub(crate) now_ms: u64,
    pub(crate) out: VecDeque<Output>,
    pub(crate) made: Arc<MadeOnce>,
    /// The audit trail could not be written: tool calls are refused ([`crate::Server::set_audit_failing`]).
    pub(crate) audit_failing: bool,
    /// The listings `completion/complete` answered lately, per person ([`crate::completion`]).
    pub(crate) completions: CompletionCache,
}

impl Shared {
    pub(crate) fn new(config: ServerConfig, caches: Caches) -> Shared {
        Shared {
            made: caches.made_once(&config),
            avatars: caches.avatars(&config),
            commits: caches.commits(),
            caches,
            highlights: HighlightCache::default(),
            config,
            work: Work::default(),
            now_ms: 0,
            out: VecDeque::new(),
            audit_failing: false,
            completions: CompletionCache::default(),
        }
    }

    /// Where a plan files its reads, with the caches.
    pub(crate) fn desk(&mut self) -> Desk<'_> {
        Desk {
            issued: Vec::new(),
            next_ticket: self.work.numbering(),
            avatars: &self.avatars,
            commits: &self.commits,
            highlights: &mut self.highlights,
            computes: Vec::new(),
            now_ms: self.now_ms,
            batches: self.caches.batches(),
            asked: None,
        }
    }
}
