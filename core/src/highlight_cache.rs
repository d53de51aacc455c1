//! Files bb has highlighted whole, kept for the next read of the same lines: a view refreshed
//! (`refresh_view`), shown again, or open for several people costs its reads and not its highlighting
//! again. Keyed by a hash of the language, the template switch and every line's side and text, so a
//! file whose lines changed is highlighted anew; a file cut by the deadline is not kept (the next read
//! tries it whole again). Oldest first out past a byte cap, as the avatar cache.

use std::collections::{HashMap, VecDeque};

pub use crate::highlight::Mark;

/// The most bytes of runs kept by default.
pub const MAX_CACHE_BYTES: usize = 8 << 20;

fn bytes(m: &Mark) -> usize {
    match m {
        Mark::Runs(s) => s.len() + 24,
        Mark::Plain(_) => 24,
    }
}

/// The cache: a plain struct, owned by the server and lent to plans.
#[derive(Debug)]
pub struct HighlightCache {
    entries: HashMap<u64, Vec<Mark>>,
    order: VecDeque<u64>,
    bytes: usize,
    cap: usize,
}

impl Default for HighlightCache {
    fn default() -> Self {
        HighlightCache::with_cap(MAX_CACHE_BYTES)
    }
}

impl HighlightCache {
    /// A cache holding at most `cap` bytes of runs (0 keeps nothing).
    pub fn with_cap(cap: usize) -> HighlightCache {
        HighlightCache { entries: HashMap::new(), order: VecDeque::new(), bytes: 0, cap }
    }

    /// The key of a file's lines: `(side, text)` in order, side `b'A'`, `b'R'` or `b'C'`.
    pub fn key<'a>(language: &str, templates: bool, lines: impl Iterator<Item = (u8, &'a str)>) -> u64 {
        let mut h = Fnv::new();
        h.write(language.as_bytes());
        h.write(&[u8::from(templates), 0]);
        for (side, text) in lines {
            h.write(&[side]);
            h.write(&(text.len() as u64).to_le_bytes());
            h.write(text.as_bytes());
        }
        h.0
    }

    /// The marks of the file `key` names, one per line, when it was highlighted whole.
    pub fn get(&self, key: u64) -> Option<&[Mark]> {
        self.entries.get(&key).map(Vec::as_slice)
    }

    /// Keeps a file's marks; the oldest go while the cap is passed.
    pub fn put(&mut self, key: u64, marks: Vec<Mark>) {
        let size: usize = marks.iter().map(bytes).sum();
        if size > self.cap || self.entries.contains_key(&key) {
            return;
        }
        while self.bytes + size > self.cap {
            let Some(old) = self.order.pop_front() else { break };
            if let Some(gone) = self.entries.remove(&old) {
                self.bytes -= gone.iter().map(bytes).sum::<usize>();
            }
        }
        self.bytes += size;
        self.order.push_back(key);
        self.entries.insert(key, marks);
    }

    /// Bytes held.
    pub fn bytes(&self) -> usize {
        self.bytes
    }
}

struct Fnv(u64);

impl Fnv {
    fn new() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }

    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 ^= u64::from(*b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::highlight::Plain;

    #[test]
    fn a_changed_line_or_side_or_language_is_another_key() {
        let k = |lang: &str, t: bool, lines: &[(u8, &str)]| HighlightCache::key(lang, t, lines.iter().copied());
        let base = k("Rust", false, &[(b'C', "fn a() {}"), (b'A', "let x = 1;")]);
        assert_eq!(base, k("Rust", false, &[(b'C', "fn a() {}"), (b'A', "let x = 1;")]));
        assert_ne!(base, k("Rust", false, &[(b'C', "fn a() {}"), (b'A', "let x = 2;")]));
        assert_ne!(base, k("Rust", false, &[(b'C', "fn a() {}"), (b'R', "let x = 1;")]));
        assert_ne!(base, k("C", false, &[(b'C', "fn a() {}"), (b'A', "let x = 1;")]));
        assert_ne!(base, k("Rust", true, &[(b'C', "fn a() {}"), (b'A', "let x = 1;")]));
        assert_ne!(k("Rust", false, &[(b'C', "ab"), (b'C', "c")]), k("Rust", false, &[(b'C', "a"), (b'C', "bc")]));
    }

    #[test]
    fn the_oldest_go_past_the_cap() {
        let mut c = HighlightCache::with_cap(120);
        c.put(1, vec![Mark::Runs("x".repeat(40))]);
        c.put(2, vec![Mark::Runs("y".repeat(20))]);
        assert!(c.get(1).is_some() && c.get(2).is_some());
        c.put(3, vec![Mark::Plain(Plain::Long)]);
        assert!(c.get(1).is_none(), "the oldest went");
        assert!(c.get(2).is_some() && c.get(3).is_some());
        assert!(c.bytes() <= 120);
        c.put(4, vec![Mark::Runs("z".repeat(200))]);
        assert!(c.get(4).is_none(), "larger than the cap: not kept");
    }
}
