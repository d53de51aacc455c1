//! Whether a text matches a glob, in time linear in the text whatever the glob: `list_files`'s path
//! globs and the branch matchers' segment patterns (`requirements`) both run here.
//!
//! A glob is compiled once into a row of tokens, and the text is run through it as a small NFA whose
//! states (one per token, plus the end) are a bitset: each symbol of the text costs one pass over
//! ⌈(tokens + 1) / 64⌉ words, so a match costs O(|text| × |glob| / 64) and never backtracks. (A
//! backtracking matcher with one backtrack point per kind of star is O(|text|²) on `***b` against a
//! long segment ending in `/`: 7 million steps for a 3,800-byte path, where this takes 3,801.)
//!
//! A text that does not end with the glob's literal tail (`.rs` of `*.rs`) is refused before it is run:
//! most paths of a listing cost a comparison of a few bytes.
//!
//! The tokens: a literal symbol; `?` (one symbol but `/`); `*` (any run of symbols but `/`); `**`
//! (any run at all; a `/` right after it belongs to it, so `src/**/*.rs` finds `src/lib.rs`). Stars
//! in a row act as one (`***` is `**`). At the text's end only stars can match nothing: a `**/` that
//! is left when the text is used up does not match (`a/**/` does not find `a/`), as gitignore reads it.

/// One token of a glob.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Token {
    /// This symbol.
    Literal(u32),
    /// Any one symbol but `/`.
    One,
    /// Any run of symbols but `/` (none included).
    Star,
    /// Any run of symbols at all; `slash` when a `/` followed it, which then must be there when the
    /// text ends before it.
    Deep { slash: bool },
}

const SLASH: u32 = '/' as u32;
const STAR: u32 = '*' as u32;
const ONE: u32 = '?' as u32;

/// A compiled glob.
#[derive(Debug, Clone)]
pub struct Glob {
    /// Words per state set: ⌈(tokens + 1) / 64⌉.
    words: usize,
    /// Each literal symbol of the glob, sorted, with its class (2..): the row of `advance` it reads.
    literals: Vec<(u32, usize)>,
    /// The class of each ASCII symbol, looked up without a search.
    ascii: [usize; 128],
    /// Per class (0: a symbol that is no literal, 1: `/`, then the literals), the states that a symbol
    /// of that class moves one token on.
    advance: Vec<u64>,
    /// The stars' states, which a symbol but `/` keeps where they are (`Star` and `Deep`).
    stay: Vec<u64>,
    /// The `Deep` states, which `/` too keeps where they are.
    stay_slash: Vec<u64>,
    /// The star states, which are passed over without a symbol while the text goes on.
    skip: Vec<u64>,
    /// The states from which the text may end: nothing but stars without a `/` before the end.
    accept: Vec<u64>,
    /// The literal symbols the glob ends with (after its last star or `?`): a text that does not end
    /// with them is refused before it is run.
    tail: Vec<u32>,
}

impl Glob {
    /// The glob `pattern` over its bytes (what `list_files` matches paths with: `?` is one byte).
    pub fn bytes(pattern: &str) -> Glob {
        Glob::compile(pattern.bytes().map(u32::from))
    }

    /// The glob `pattern` over its characters (what the branch matchers use: `?` is one character).
    pub fn chars(pattern: &str) -> Glob {
        Glob::compile(pattern.chars().map(u32::from))
    }

    /// Whether `/` can be matched by anything in the glob (a literal `/` or a `**`).
    pub fn crosses_slash(&self) -> bool {
        self.stay_slash.iter().any(|w| *w != 0) || self.advance[self.words..2 * self.words].iter().any(|w| *w != 0)
    }

    /// Whether the whole of `text`'s bytes matches.
    pub fn matches_bytes(&self, text: &str) -> bool {
        let t = text.as_bytes();
        let ends = t.len() >= self.tail.len()
            && t[t.len() - self.tail.len()..].iter().zip(&self.tail).all(|(b, s)| u32::from(*b) == *s);
        ends && self.run(t.iter().map(|b| u32::from(*b)))
    }

    /// Whether the whole of `text`'s characters matches.
    pub fn matches_chars(&self, text: &str) -> bool {
        let mut back = text.chars().rev();
        let ends = self.tail.iter().rev().all(|s| back.next().map(u32::from) == Some(*s));
        ends && self.run(text.chars().map(u32::from))
    }

    fn compile(symbols: impl Iterator<Item = u32>) -> Glob {
        let symbols: Vec<u32> = symbols.collect();
        let mut tokens: Vec<Token> = Vec::new();
        let mut i = 0;
        while i < symbols.len() {
            let token = match symbols[i] {
                STAR if symbols.get(i + 1) == Some(&STAR) => {
                    i += 2;
                    let slash = symbols.get(i) == Some(&SLASH);
                    if slash {
                        i += 1;
                    }
                    Token::Deep { slash }
                }
                STAR => {
                    i += 1;
                    Token::Star
                }
                ONE => {
                    i += 1;
                    Token::One
                }
                s => {
                    i += 1;
                    Token::Literal(s)
                }
            };
            // Stars in a row are one star: the widest of them, keeping any `/` one of them needs at the end.
            match (tokens.last_mut(), token) {
                (Some(last @ (Token::Star | Token::Deep { .. })), Token::Star | Token::Deep { .. }) => {
                    let slash = matches!(*last, Token::Deep { slash: true }) || token == Token::Deep { slash: true };
                    let deep = matches!(*last, Token::Deep { .. }) || matches!(token, Token::Deep { .. });
                    *last = if deep { Token::Deep { slash } } else { Token::Star };
                }
                _ => tokens.push(token),
            }
        }

        let words = (tokens.len() + 1).div_ceil(64);
        let mut literals: Vec<(u32, usize)> = Vec::new();
        for t in &tokens {
            if let Token::Literal(s) = *t
                && s != SLASH
                && literals.binary_search_by_key(&s, |&(l, _)| l).is_err()
            {
                let at = literals.partition_point(|&(l, _)| l < s);
                literals.insert(at, (s, 0));
            }
        }
        for (class, entry) in literals.iter_mut().enumerate() {
            entry.1 = class + 2;
        }
        let classes = literals.len() + 2;
        let mut glob = Glob {
            words,
            ascii: [0; 128],
            literals,
            advance: vec![0; classes * words],
            stay: vec![0; words],
            stay_slash: vec![0; words],
            skip: vec![0; words],
            accept: vec![0; words],
            tail: tokens
                .iter()
                .rev()
                .map_while(|t| match t {
                    Token::Literal(s) => Some(*s),
                    _ => None,
                })
                .collect::<Vec<u32>>()
                .into_iter()
                .rev()
                .collect(),
        };
        glob.ascii[SLASH as usize] = 1;
        for &(symbol, class) in &glob.literals {
            if let Some(slot) = glob.ascii.get_mut(symbol as usize) {
                *slot = class;
            }
        }
        let set = |row: &mut [u64], state: usize| row[state / 64] |= 1 << (state % 64);
        for (state, t) in tokens.iter().enumerate() {
            let row = |class: usize| class * words..(class + 1) * words;
            match *t {
                Token::Literal(s) => {
                    let class = if s == SLASH { 1 } else { glob.class(s) };
                    set(&mut glob.advance[row(class)], state);
                }
                Token::One | Token::Star => {
                    for class in (0..classes).filter(|&c| c != 1) {
                        set(&mut glob.advance[row(class)], state);
                    }
                }
                Token::Deep { .. } => {
                    for class in 0..classes {
                        set(&mut glob.advance[row(class)], state);
                    }
                    set(&mut glob.stay_slash, state);
                }
            }
            if matches!(t, Token::Star | Token::Deep { .. }) {
                set(&mut glob.stay, state);
                set(&mut glob.skip, state);
            }
        }
        // The end is accepting, and so is every state from which only stars without a `/` are left.
        for state in (0..=tokens.len()).rev() {
            match tokens.get(state) {
                None | Some(Token::Star | Token::Deep { slash: false }) => set(&mut glob.accept, state),
                _ => break,
            }
        }
        glob
    }

    /// The class of a symbol: 1 for `/`, a literal's own, else 0.
    fn class(&self, symbol: u32) -> usize {
        if let Some(&class) = self.ascii.get(symbol as usize) {
            return class;
        }
        match self.literals.binary_search_by_key(&symbol, |&(l, _)| l) {
            Ok(i) => self.literals[i].1,
            Err(_) => 0,
        }
    }

    /// Runs the text through the states; whether it ends in an accepting one. A glob of up to 383
    /// tokens (every `list_files` glob) keeps its states in a fixed array, on the stack.
    fn run(&self, text: impl Iterator<Item = u32>) -> bool {
        match self.words {
            1 => self.run_in::<1>(text),
            2 => self.run_in::<2>(text),
            3 => self.run_in::<3>(text),
            4 => self.run_in::<4>(text),
            5 => self.run_in::<5>(text),
            6 => self.run_in::<6>(text),
            _ => self.run_any(text),
        }
    }

    /// [`Glob::run`] with `N` words of states.
    fn run_in<const N: usize>(&self, text: impl Iterator<Item = u32>) -> bool {
        let row = |v: &[u64]| -> [u64; N] {
            let mut out = [0; N];
            out.copy_from_slice(&v[..N]);
            out
        };
        let (skip, stay, stay_slash) = (row(&self.skip), row(&self.stay), row(&self.stay_slash));
        let mut now = [0u64; N];
        now[0] = 1;
        for symbol in text {
            #[cfg(test)]
            count_steps(N);
            let class = self.class(symbol);
            let advance = self.advance.get(class * N..(class + 1) * N).unwrap_or(&[]);
            let stay = if class == 1 { &stay_slash } else { &stay };
            if !step(&mut now, &skip, advance, stay) {
                return false;
            }
        }
        now.iter().zip(&self.accept).any(|(n, a)| n & a != 0)
    }

    /// [`Glob::run`] for a glob of any length.
    fn run_any(&self, text: impl Iterator<Item = u32>) -> bool {
        let w = self.words;
        let mut now = vec![0u64; w];
        now[0] = 1;
        for symbol in text {
            #[cfg(test)]
            count_steps(w);
            let class = self.class(symbol);
            let advance = self.advance.get(class * w..(class + 1) * w).unwrap_or(&[]);
            let stay = if class == 1 { &self.stay_slash } else { &self.stay };
            if !step(&mut now, &self.skip, advance, stay) {
                return false;
            }
        }
        now.iter().zip(&self.accept).any(|(n, a)| n & a != 0)
    }
}

/// One symbol's step of the states `now`: first pass over the stars without a symbol (`skip`; stars
/// never stand in a row, so once is enough), then move on what `advance`s on the symbol and keep what
/// `stay`s. Whether any state is left.
fn step(now: &mut [u64], skip: &[u64], advance: &[u64], stay: &[u64]) -> bool {
    let (mut skip_carry, mut carry, mut alive) = (0, 0, 0);
    for (((n, k), a), s) in now.iter_mut().zip(skip).zip(advance).zip(stay) {
        let passed = *n & k;
        let at = *n | (passed << 1) | skip_carry;
        skip_carry = passed >> 63;
        let moved = at & a;
        *n = (moved << 1) | carry | (at & s);
        carry = moved >> 63;
        alive |= *n;
    }
    alive != 0
}

#[cfg(test)]
thread_local! {
    static STEPS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

#[cfg(test)]
fn count_steps(words: usize) {
    STEPS.with(|s| s.set(s.get() + words as u64));
}

/// The words of state this thread's matches have passed over so far: the work a match costs.
#[cfg(test)]
pub fn steps() -> u64 {
    STEPS.with(|s| s.get())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(glob: &str, text: &str) -> bool {
        Glob::bytes(glob).matches_bytes(text)
    }

    #[test]
    fn stars_keep_within_a_segment_and_double_stars_cross_them() {
        assert!(path("a*c", "abbc"));
        assert!(!path("a*c", "ab/c"));
        assert!(path("a**c", "ab/c"));
        assert!(path("a/**/c", "a/c"));
        assert!(path("a/**/c", "a/b/d/c"));
        assert!(path("?", "x"));
        assert!(!path("?", "/"));
        assert!(!path("?", ""));
        assert!(path("", ""));
        assert!(!path("", "a"));
    }

    #[test]
    fn only_stars_without_a_slash_match_nothing_at_the_end() {
        assert!(path("a*", "a"));
        assert!(path("a/**", "a/"));
        assert!(!path("a/**/", "a/"));
        assert!(path("a/**/", "a/b"));
        assert!(!path("**/", ""));
        assert!(path("**/", "x"));
        assert!(path("***", ""));
        assert!(!path("a**/*", "a"));
    }

    #[test]
    fn a_character_glob_reads_one_question_mark_as_one_character() {
        assert!(Glob::chars("?").matches_chars("é"));
        assert!(!Glob::bytes("?").matches_bytes("é"));
        assert!(Glob::bytes("??").matches_bytes("é"));
    }

    #[test]
    fn a_glob_longer_than_one_word_of_states_carries_between_words() {
        let glob = format!("{}*b", "a".repeat(130));
        assert!(path(&glob, &format!("{}xxb", "a".repeat(130))));
        assert!(!path(&glob, &format!("{}xx", "a".repeat(130))));
        assert!(!path(&glob, &"a".repeat(129)));
    }

    #[test]
    fn a_glob_past_six_words_of_states_matches_as_a_short_one() {
        let glob = format!("{}*b?", "a".repeat(500));
        assert!(path(&glob, &format!("{}xxbc", "a".repeat(500))));
        assert!(!path(&glob, &format!("{}xxb", "a".repeat(500))));
        assert!(!path(&glob, &format!("{}/b", "a".repeat(500))));
    }

    #[test]
    fn a_match_costs_one_pass_over_the_states_per_symbol() {
        let text = format!("{}/", "a".repeat(3_800));
        let glob = Glob::bytes("***b");
        let before = steps();
        assert!(!glob.matches_bytes(&text));
        assert!(steps() - before <= text.len() as u64);
    }
}
