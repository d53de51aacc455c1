//! The source commit each pull request was last seen at, by a card, a diff view or a refresh of
//! either. Code Insights are read per commit (no pull request path serves them, reference "Code
//! Insights"), so a card would wait for its pull request to name the commit, a round trip after
//! everything else it reads; with the commit remembered, a card shown again reads its Code Insights
//! beside the pull request, in one round trip.
//!
//! Shared like the avatar cache by every server given the same [`crate::Caches`] (the HTTP shell's
//! shards alike), keyed by project, repository and pull request id: a process talks to one Bitbucket.
//! Bounded at [`MAX_ENTRIES`]: past it the pull request seen longest ago goes.
//!
//! What it holds is a guess. The card's early reads go out with the caller's own credentials, and their
//! answer is drawn only when the caller's own pull request names the same commit; else it is dropped and
//! the named commit read. So a commit id one person's card saw may steer another person's read, and
//! nothing one person reads reaches another.

use std::collections::{BTreeMap, HashMap};

/// The most pull requests whose source commit is remembered (a few hundred kilobytes at most).
pub const MAX_ENTRIES: usize = 4096;

/// A pull request: project key, repository slug and id, as the call named them.
type Key = (String, String, u64);

/// The source commit each pull request was last seen at.
#[derive(Debug)]
pub struct CommitCache {
    /// Pull request → (when it was last seen, in the cache's own count; its source commit).
    entries: HashMap<Key, (u64, String)>,
    /// When each entry was last seen → its pull request: the first goes first.
    order: BTreeMap<u64, Key>,
    next: u64,
    cap: usize,
}

impl Default for CommitCache {
    fn default() -> CommitCache {
        CommitCache::with_cap(MAX_ENTRIES)
    }
}

impl CommitCache {
    /// A cache of at most `cap` pull requests (0 keeps nothing).
    pub fn with_cap(cap: usize) -> CommitCache {
        CommitCache { entries: HashMap::new(), order: BTreeMap::new(), next: 0, cap }
    }

    /// The source commit `project`/`repo` #`id` was last seen at, if it is remembered.
    pub fn get(&self, project: &str, repo: &str, id: u64) -> Option<&str> {
        self.entries.get(&(project.to_owned(), repo.to_owned(), id)).map(|(_, commit)| commit.as_str())
    }

    /// Remembers that `project`/`repo` #`id` was seen at `commit`, the pull request seen longest ago
    /// going when the cache is full.
    pub fn remember(&mut self, project: &str, repo: &str, id: u64, commit: &str) {
        let key = (project.to_owned(), repo.to_owned(), id);
        if let Some((seen, _)) = self.entries.remove(&key) {
            self.order.remove(&seen);
        }
        while self.entries.len() >= self.cap {
            let Some((_, oldest)) = self.order.pop_first() else { return };
            self.entries.remove(&oldest);
        }
        self.next += 1;
        self.order.insert(self.next, key.clone());
        self.entries.insert(key, (self.next, commit.to_owned()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_latest_commit_seen_is_the_one_remembered() {
        let mut c = CommitCache::default();
        assert_eq!(c.get("BB", "api", 1), None);
        c.remember("BB", "api", 1, "aaa");
        c.remember("BB", "api", 1, "bbb");
        c.remember("BB", "cli", 1, "ccc");
        assert_eq!(c.get("BB", "api", 1), Some("bbb"));
        assert_eq!(c.get("BB", "cli", 1), Some("ccc"), "another repository's pull request 1 is another");
        assert_eq!(c.entries.len(), 2);
    }

    #[test]
    fn past_its_bound_the_pull_request_seen_longest_ago_goes() {
        let mut c = CommitCache::with_cap(3);
        for id in 1..=3 {
            c.remember("BB", "api", id, "x");
        }
        c.remember("BB", "api", 1, "y");
        c.remember("BB", "api", 4, "z");
        assert_eq!((c.entries.len(), c.order.len()), (3, 3));
        assert_eq!(c.get("BB", "api", 2), None, "seen longest ago");
        assert_eq!(c.get("BB", "api", 1), Some("y"), "seen again, so kept");
        assert_eq!(c.get("BB", "api", 4), Some("z"));
        let mut none = CommitCache::with_cap(0);
        none.remember("BB", "api", 1, "x");
        assert_eq!(none.get("BB", "api", 1), None);
    }
}
