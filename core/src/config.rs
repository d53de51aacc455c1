//! What a server is made with, fixed at start: the exposed tools, bb's version, Bitbucket's base URL,
//! the caches' sizes and the highlighting options the operator chose; the caches its clones share.

use std::sync::Arc;

use crate::avatar_cache::AvatarCache;
use crate::commit_cache::CommitCache;
use crate::made::MadeOnce;
use crate::tool::Exposed;
use crate::toolsets::Toolsets;

/// The server's identity and exposure, fixed at start.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// The tools this server exposes and the kinds `show` offers: `tools/list` lists them, and a call to any
    /// other tool is refused.
    pub exposed: Arc<Exposed>,
    /// bb's version, for `serverInfo`.
    pub version: &'static str,
    /// How many tools one `tools/list` page holds.
    pub tools_page_size: usize,
    /// Bitbucket's base URL (with its context path), for the links views build; `None` when unknown.
    pub base_url: Option<String>,
    /// The most bytes of avatars kept, by every server made from this configuration or a clone of it
    /// together (they share one cache: the HTTP shell's shards fetch a person's avatar once, not once each).
    pub avatar_cache_bytes: usize,
    /// Highlight with lexers that embed other languages and cannot be stopped midway (`--highlight-templates`).
    pub highlight_templates: bool,
    /// How long a call's CPU work (highlighting) may take before its answer goes out with what is done,
    /// in milliseconds (`--highlight-deadline`): the core fixes a call's deadline from it and the time of
    /// the input that first asks for steps, and says it in [`crate::Output::Work`]; the shell's timer
    /// only feeds the step due then.
    pub highlight_deadline_ms: u64,
    /// The answers made once, shared by every server made from this configuration or a clone of it
    /// (the HTTP shell runs eight): made by the first, reused by the rest while what they depend
    /// on (the exposure, the version, the page size) is the same.
    made: Arc<std::sync::OnceLock<Arc<MadeOnce>>>,
    /// The avatar cache the servers made from this configuration and its clones share, made (with
    /// the `avatar_cache_bytes` of the first) when the first server is.
    avatars: Arc<std::sync::OnceLock<Arc<std::sync::Mutex<AvatarCache>>>>,
    /// Numbers refreshes' batches of reads ([`crate::Batch`]), shared by the clones.
    batches: Arc<std::sync::atomic::AtomicU64>,
    /// What sessions see, by the groups they turned on (`enable_toolset`), each made when a session
    /// first needs it and shared by the clones; with the address of the exposure it widens.
    widened: Arc<[Widened; 16]>,
    /// The source commit each pull request was last seen at, shared by the clones.
    commits: Arc<std::sync::Mutex<CommitCache>>,
}

/// The answers of sessions that turned one set of groups on, with the address of the exposure they widen.
type Widened = std::sync::OnceLock<(usize, Arc<MadeOnce>)>;

impl ServerConfig {
    /// The answers that never change for this configuration, made once across its clones.
    pub(crate) fn made_once(&self) -> Arc<MadeOnce> {
        let fresh = || Arc::new(MadeOnce::new(Arc::clone(&self.exposed), self.version, self.tools_page_size));
        let made = self.made.get_or_init(fresh);
        if made.made_for(&self.exposed, self.version, self.tools_page_size) { Arc::clone(made) } else { fresh() }
    }

    /// What a session that turned the groups of `extra` on sees, and its answers made once: the
    /// exposure with `enable_toolset` while groups are left to turn on. `None` when sessions see
    /// what requests without one see ([`ServerConfig::made_once`]): no group can be turned on.
    pub(crate) fn session_made(&self, extra: Toolsets) -> Option<Arc<MadeOnce>> {
        let widen = self.exposed.widen.as_ref()?;
        let base = Arc::as_ptr(&self.exposed) as usize;
        let fresh = || {
            let exposed = Arc::new(widen.exposure(extra));
            (base, Arc::new(MadeOnce::new(exposed, self.version, self.tools_page_size)))
        };
        let (made_base, made) = self.widened[extra.index()].get_or_init(fresh);
        if *made_base == base && made.made_with(self.version, self.tools_page_size) {
            Some(Arc::clone(made))
        } else {
            Some(fresh().1)
        }
    }

    /// The avatar cache shared by every server made from this configuration and its clones.
    pub(crate) fn avatars(&self) -> Arc<std::sync::Mutex<AvatarCache>> {
        let fresh = || Arc::new(std::sync::Mutex::new(AvatarCache::with_cap(self.avatar_cache_bytes)));
        Arc::clone(self.avatars.get_or_init(fresh))
    }

    /// The source commits pull requests were last seen at, shared by every server made from this
    /// configuration and its clones.
    pub(crate) fn commits(&self) -> Arc<std::sync::Mutex<CommitCache>> {
        Arc::clone(&self.commits)
    }

    /// The counter refreshes' batches are numbered from, shared by the clones.
    pub(crate) fn batches(&self) -> &std::sync::atomic::AtomicU64 {
        &self.batches
    }

    /// A configuration for `exposed` (its instructions are made from it when first asked for).
    pub fn new(exposed: Arc<Exposed>, version: &'static str) -> ServerConfig {
        ServerConfig {
            exposed,
            version,
            tools_page_size: 100,
            base_url: None,
            avatar_cache_bytes: crate::avatar_cache::MAX_CACHE_BYTES,
            highlight_templates: false,
            highlight_deadline_ms: 150,
            made: Arc::default(),
            avatars: Arc::default(),
            batches: Arc::default(),
            widened: Arc::new(std::array::from_fn(|_| std::sync::OnceLock::new())),
            commits: Arc::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::{Catalogue, ExposureOptions};

    #[test]
    fn servers_made_from_clones_of_one_configuration_share_one_avatar_cache_of_its_size_and_the_commits_seen() {
        let exposed = Catalogue::standard().expose(&ExposureOptions::default()).unwrap();
        let mut config = ServerConfig::new(exposed, "0.0.0-test");
        config.avatar_cache_bytes = 1 << 20;
        let shard = config.clone();
        assert!(Arc::ptr_eq(&config.avatars(), &shard.avatars()), "the HTTP shell's shards share it");
        let other = ServerConfig::new(Arc::clone(&config.exposed), "0.0.0-test");
        assert!(!Arc::ptr_eq(&config.avatars(), &other.avatars()), "another configuration has its own");
        assert!(Arc::ptr_eq(&config.commits(), &shard.commits()), "and the source commits they saw");
        assert!(!Arc::ptr_eq(&config.commits(), &other.commits()));
    }
}
