//! Avatars already fetched, shared by every session of a server: slug → `data:` URL, size-capped.
//! The server owns it and hands it to the plan that runs; nothing else holds it, so it needs no lock.

use std::collections::BTreeMap;

/// The most data the cache holds, in bytes of data URLs; past it, the oldest entries go.
pub const MAX_CACHE_BYTES: usize = 8 * 1024 * 1024;

/// Avatars already fetched: slug → data URL, or `None` when the person has none bb can show.
#[derive(Debug)]
pub struct AvatarCache {
    entries: BTreeMap<String, (u64, Option<String>)>,
    bytes: usize,
    cap: usize,
    next: u64,
}

impl Default for AvatarCache {
    fn default() -> AvatarCache {
        AvatarCache::with_cap(MAX_CACHE_BYTES)
    }
}

impl AvatarCache {
    /// A cache that holds at most `cap` bytes of data URLs.
    pub fn with_cap(cap: usize) -> AvatarCache {
        AvatarCache { entries: BTreeMap::new(), bytes: 0, cap, next: 0 }
    }

    /// What is known of `slug`: `Some(avatar)` once fetched (the avatar itself may be `None`).
    pub fn get(&self, slug: &str) -> Option<Option<String>> {
        self.entries.get(slug).map(|(_, a)| a.clone())
    }

    /// Keeps what a fetch of `slug`'s avatar found, evicting the oldest entries past the cap.
    pub fn put(&mut self, slug: &str, avatar: Option<String>) {
        let size = avatar.as_ref().map_or(0, String::len) + slug.len();
        if let Some((_, old)) = self.entries.remove(slug) {
            self.bytes -= old.as_ref().map_or(0, String::len) + slug.len();
        }
        while self.bytes + size > self.cap {
            let Some(oldest) = self.entries.iter().min_by_key(|(_, (n, _))| *n).map(|(k, _)| k.clone()) else {
                break;
            };
            if let Some((_, a)) = self.entries.remove(&oldest) {
                self.bytes -= a.as_ref().map_or(0, String::len) + oldest.len();
            }
        }
        self.next += 1;
        self.bytes += size;
        self.entries.insert(slug.to_owned(), (self.next, avatar));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cache_keeps_its_cap_by_evicting_the_oldest() {
        let mut c = AvatarCache::default();
        let big = "x".repeat(MAX_CACHE_BYTES / 2);
        c.put("a", Some(big.clone()));
        c.put("b", Some(big.clone()));
        c.put("c", Some(big));
        assert!(c.bytes <= MAX_CACHE_BYTES);
        assert_eq!(c.get("a"), None, "the oldest went");
        assert!(c.get("c").is_some());
        c.put("none", None);
        assert_eq!(c.get("none"), Some(None), "a person without an avatar is remembered too");
    }
}
