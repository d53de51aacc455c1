//! Avatars already fetched, shared by every session of a server: slug → `data:` URL, size-capped.
//! The server owns it and hands it to the plan that runs; nothing else holds it, so it needs no lock.
//!
//! What a fetch found is kept for the server's life, except a failure that may pass (a 5xx, a
//! timeout, a refused connection): that is kept for [`FAILURE_TTL_MS`], so a fault that clears is
//! seen again without a view asking in a loop. In per-person mode an avatar fetched with one
//! person's token is shown to another: acceptable for avatars only, which Bitbucket shows to every
//! signed-in user of the instance (reference "Avatars"); no other data is shared across people.

use std::collections::BTreeMap;

/// The most data the cache holds, in bytes of data URLs; past it, the oldest entries go.
pub const MAX_CACHE_BYTES: usize = 8 * 1024 * 1024;
/// How long a failure that may pass is remembered, in milliseconds.
pub const FAILURE_TTL_MS: u64 = 60_000;

/// Avatars already fetched: slug → data URL, or `None` when the person has none bb can show.
#[derive(Debug)]
pub struct AvatarCache {
    /// slug → (insertion order, the avatar, when the entry lapses if it does).
    entries: BTreeMap<String, (u64, Option<String>, Option<u64>)>,
    bytes: usize,
    cap: usize,
    next: u64,
}

impl Default for AvatarCache {
    fn default() -> AvatarCache {
        AvatarCache::with_cap(MAX_CACHE_BYTES)
    }
}

/// What the cache knows of one person's avatar.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Known {
    /// Never fetched, or what was kept has lapsed: fetch it.
    Nothing,
    /// Fetched, and there is no image to draw (Bitbucket's default, or a failure kept a while).
    NoImage,
    /// The image, as a `data:` URL.
    Image(String),
}

impl Known {
    /// The image, if there is one.
    pub fn image(self) -> Option<String> {
        match self {
            Known::Image(url) => Some(url),
            Known::Nothing | Known::NoImage => None,
        }
    }
}

impl AvatarCache {
    /// A cache that holds at most `cap` bytes of data URLs.
    pub fn with_cap(cap: usize) -> AvatarCache {
        AvatarCache { entries: BTreeMap::new(), bytes: 0, cap, next: 0 }
    }

    /// What is known of `slug` at `now_ms`: its image, that it has none to draw (the view draws
    /// initials), or nothing (never fetched, or what was kept has lapsed).
    pub fn get(&self, slug: &str, now_ms: u64) -> Known {
        match self.entries.get(slug).filter(|(_, _, until)| until.is_none_or(|u| now_ms < u)) {
            None => Known::Nothing,
            Some((_, None, _)) => Known::NoImage,
            Some((_, Some(url), _)) => Known::Image(url.clone()),
        }
    }

    /// Keeps what a fetch of `slug`'s avatar found — until `until` (epoch milliseconds) when given,
    /// else for good — evicting the oldest entries past the cap.
    pub fn put(&mut self, slug: &str, avatar: Option<String>, until: Option<u64>) {
        let size = avatar.as_ref().map_or(0, String::len) + slug.len();
        if let Some((_, old, _)) = self.entries.remove(slug) {
            self.bytes -= old.as_ref().map_or(0, String::len) + slug.len();
        }
        while self.bytes + size > self.cap {
            let Some(oldest) = self.entries.iter().min_by_key(|(_, (n, _, _))| *n).map(|(k, _)| k.clone()) else {
                break;
            };
            if let Some((_, a, _)) = self.entries.remove(&oldest) {
                self.bytes -= a.as_ref().map_or(0, String::len) + oldest.len();
            }
        }
        self.next += 1;
        self.bytes += size;
        self.entries.insert(slug.to_owned(), (self.next, avatar, until));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cache_keeps_its_cap_by_evicting_the_oldest() {
        let mut c = AvatarCache::default();
        let big = "x".repeat(MAX_CACHE_BYTES / 2);
        c.put("a", Some(big.clone()), None);
        c.put("b", Some(big.clone()), None);
        c.put("c", Some(big), None);
        assert!(c.bytes <= MAX_CACHE_BYTES);
        assert_eq!(c.get("a", 0), Known::Nothing, "the oldest went");
        assert!(matches!(c.get("c", 0), Known::Image(_)));
        c.put("none", None, None);
        assert_eq!(c.get("none", u64::MAX), Known::NoImage, "a person without an avatar is remembered for good");
    }

    #[test]
    fn a_failure_that_may_pass_is_forgotten_after_its_time() {
        let mut c = AvatarCache::default();
        c.put("flaky", None, Some(1_000 + FAILURE_TTL_MS));
        assert_eq!(c.get("flaky", 1_000), Known::NoImage);
        assert_eq!(c.get("flaky", 1_000 + FAILURE_TTL_MS), Known::Nothing, "fetched again once the failure lapsed");
    }
}
