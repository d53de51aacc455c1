//! What servers share when they are given the same [`Caches`]: people's avatars, the source commit
//! each pull request was last seen at, the numbering of refreshes' batches, and the answers made once
//! (the first `tools/list` page, the view page, the instructions; one set per group of tools sessions
//! turned on). The core names what is shared and how each part is kept; whoever makes the servers
//! decides which share: the drive makes one `Caches` per application and hands it to each server it
//! makes (the HTTP shell's eight shards share theirs), a test makes one per server. A
//! [`crate::ServerConfig`] is plain data: its clones share nothing.
//!
//! Shards run on different threads, so what they change (the avatars, the commits) sits behind a
//! mutex here, in the value the servers were given, and the batch counter is atomic; the answers made
//! once are made by the first server that needs them and only read afterwards.

use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, OnceLock};

use crate::avatar_cache::AvatarCache;
use crate::commit_cache::CommitCache;
use crate::config::ServerConfig;
use crate::made::MadeOnce;
use crate::toolsets::Toolsets;

/// What the servers given clones of one value share; cloning it shares it (every part is an `Arc`).
#[derive(Debug, Clone, Default)]
pub struct Caches {
    /// The answers made once, made by the first server and reused by the rest while what they
    /// depend on (the exposure, the version, the page size) is the same.
    made: Arc<OnceLock<Arc<MadeOnce>>>,
    /// What sessions see, by the groups they turned on (`enable_toolset`), each made when a session
    /// first needs it; with the address of the exposure it widens.
    widened: Arc<[Widened; 16]>,
    /// People's avatars, made (with the `avatar_cache_bytes` of the first server's configuration)
    /// when the first server is.
    avatars: Arc<OnceLock<Arc<Mutex<AvatarCache>>>>,
    /// The source commit each pull request was last seen at.
    commits: Arc<Mutex<CommitCache>>,
    /// Numbers refreshes' batches of reads ([`crate::Batch`]).
    batches: Arc<AtomicU64>,
}

/// The answers of sessions that turned one set of groups on, with the address of the exposure they widen.
type Widened = OnceLock<(usize, Arc<MadeOnce>)>;

impl Caches {
    /// Nothing kept yet: the servers given this value (or its clones) fill it.
    pub fn new() -> Caches {
        Caches::default()
    }

    /// The answers that never change for `config`, made once across the servers sharing these caches.
    pub(crate) fn made_once(&self, config: &ServerConfig) -> Arc<MadeOnce> {
        let fresh = || Arc::new(MadeOnce::new(Arc::clone(&config.exposed), config.version, config.tools_page_size));
        let made = self.made.get_or_init(fresh);
        if made.made_for(&config.exposed, config.version, config.tools_page_size) { Arc::clone(made) } else { fresh() }
    }

    /// What a session of a server of `config` that turned the groups of `extra` on sees, and its
    /// answers made once: the exposure with `enable_toolset` while groups are left to turn on. `None`
    /// when sessions see what requests without one see ([`Caches::made_once`]): no group can be turned on.
    pub(crate) fn session_made(&self, config: &ServerConfig, extra: Toolsets) -> Option<Arc<MadeOnce>> {
        let widen = config.exposed.widen.as_ref()?;
        let base = Arc::as_ptr(&config.exposed) as usize;
        let fresh = || {
            let exposed = Arc::new(widen.exposure(extra));
            (base, Arc::new(MadeOnce::new(exposed, config.version, config.tools_page_size)))
        };
        let (made_base, made) = self.widened[extra.index()].get_or_init(fresh);
        if *made_base == base && made.made_with(config.version, config.tools_page_size) {
            Some(Arc::clone(made))
        } else {
            Some(fresh().1)
        }
    }

    /// The avatar cache, of the first server's `avatar_cache_bytes`.
    pub(crate) fn avatars(&self, config: &ServerConfig) -> Arc<Mutex<AvatarCache>> {
        let fresh = || Arc::new(Mutex::new(AvatarCache::with_cap(config.avatar_cache_bytes)));
        Arc::clone(self.avatars.get_or_init(fresh))
    }

    /// The source commits pull requests were last seen at.
    pub(crate) fn commits(&self) -> Arc<Mutex<CommitCache>> {
        Arc::clone(&self.commits)
    }

    /// The counter refreshes' batches are numbered from.
    pub(crate) fn batches(&self) -> &AtomicU64 {
        &self.batches
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::{Catalogue, ExposureOptions};

    #[test]
    fn servers_given_one_caches_share_one_avatar_cache_of_the_first_ones_size_and_the_commits_seen() {
        let exposed = Catalogue::standard().expose(&ExposureOptions::default()).unwrap();
        let mut config = ServerConfig::new(exposed, "0.0.0-test");
        config.avatar_cache_bytes = 1 << 20;
        let caches = Caches::new();
        let shard = caches.clone();
        assert!(
            Arc::ptr_eq(&caches.avatars(&config), &shard.avatars(&config.clone())),
            "the HTTP shell's shards share it"
        );
        let other = Caches::new();
        assert!(!Arc::ptr_eq(&caches.avatars(&config), &other.avatars(&config)), "other caches are others'");
        assert!(Arc::ptr_eq(&caches.commits(), &shard.commits()), "and the source commits they saw");
        assert!(!Arc::ptr_eq(&caches.commits(), &other.commits()));
    }

    #[test]
    fn a_copy_of_a_configuration_is_its_settings_and_shares_nothing() {
        let exposed = Catalogue::standard().expose(&ExposureOptions::default()).unwrap();
        let config = ServerConfig::new(exposed, "0.0.0-test");
        let (one, two) = (Caches::new(), Caches::new());
        assert!(!Arc::ptr_eq(&one.made_once(&config), &two.made_once(&config.clone())), "each caches makes its own");
        assert!(Arc::ptr_eq(&one.made_once(&config), &one.clone().made_once(&config.clone())));
    }
}
