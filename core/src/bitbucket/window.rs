//! How much of a file's window bb keeps: a browse answer's lines are cut while they are read, not
//! after. Bitbucket pages a file's lines (reference "Files, blame, search": `…/browse/{path}?start&limit`,
//! `{lines[{text}], start, size, isLastPage}`), so a window's *count* is bounded by what bb asks; its
//! *bytes* are not: 2,000 lines of 15 KB are 30 MB. A call keeps a [`LineShare`]: each line at most
//! `line_chars` characters (the rest is counted, so the answer can say "N of M characters shown"), and
//! lines while `bytes` are left; the lines past it are skipped as the JSON is read, never held, and counted.
//!
//! As in [`super::budget`], the share is scoped to the thread that decodes ([`keep`]): the shell's read
//! thread when it decodes the answer as it arrives, or the core when a shell hands it the bytes. Outside a
//! scope every line is kept whole.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::fmt;

use serde::Deserialize;
use serde::de::{Deserializer, IgnoredAny, SeqAccess, Visitor};

use super::RawPage;

/// The most of a file's window one decode keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LineShare {
    /// Bytes of line text kept at most: lines are kept while any are left, so the last one kept may go
    /// past it by at most one (cut) line.
    pub bytes: usize,
    /// The longest line kept whole, in characters; a longer one is cut there and its length counted.
    pub line_chars: usize,
}

thread_local! {
    /// What the decode in progress on this thread may still keep.
    static SCOPE: Cell<Option<LineShare>> = const { Cell::new(None) };
}

/// Runs `decode` keeping at most `share` of the lines it reads.
pub fn keep<T>(share: LineShare, decode: impl FnOnce() -> T) -> T {
    let outer = SCOPE.with(|s| s.replace(Some(share)));
    let made = decode();
    SCOPE.with(|s| s.set(outer));
    made
}

/// The lines of a window as a share kept them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Kept {
    /// The lines kept, in order, each cut to the share's `line_chars`.
    pub lines: Vec<String>,
    /// The lines that were cut: their index in `lines` and their whole length in characters.
    pub cut: BTreeMap<usize, usize>,
    /// Lines of the page past the share's bytes: skipped unread, never held.
    pub dropped: u64,
}

/// A browse answer as Bitbucket sends it (`…/browse/{path}`: a page of a file's lines, a folder's
/// children, or `{binary: true}`; reference "Files, blame, search"), its lines kept as the decode's
/// share allows.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct BrowseJson {
    /// The page's lines, when it is a text file's.
    pub lines: Option<Kept>,
    /// The folder's page of children, when it is a folder.
    pub children: Option<RawPage>,
    /// `true` for a binary file [assumed].
    pub binary: Option<bool>,
    /// The 0-based index of the page's first line.
    pub start: Option<u64>,
    /// Whether the file ends with this page.
    pub is_last_page: Option<bool>,
}

#[derive(Deserialize)]
struct LineJson {
    #[serde(default)]
    text: CutText,
}

/// A line's text as it is read: cut to the scope's characters while it is still the reader's (a line
/// of 15 KB costs the kept part, never a 15 KB string), with its whole length when cut.
#[derive(Default)]
struct CutText {
    text: String,
    whole: Option<usize>,
}

impl<'de> Deserialize<'de> for CutText {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<CutText, D::Error> {
        struct Text(Option<usize>);
        impl Visitor<'_> for Text {
            type Value = CutText;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a line's text")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<CutText, E> {
                let at = self.0.and_then(|chars| v.char_indices().nth(chars).map(|(at, _)| (chars, at)));
                Ok(match at {
                    None => CutText { text: v.to_owned(), whole: None },
                    Some((chars, at)) => {
                        CutText { text: v[..at].to_owned(), whole: Some(chars + v[at..].chars().count()) }
                    }
                })
            }
        }
        d.deserialize_str(Text(SCOPE.with(Cell::get).map(|s| s.line_chars)))
    }
}

/// `text` cut to `chars` characters: the kept part and, when cut, the whole length in characters. A cut
/// line is a new string of its kept part: the whole one's memory goes (a truncated string keeps it).
pub fn cut(text: String, chars: usize) -> (String, Option<usize>) {
    match text.char_indices().nth(chars) {
        None => (text, None),
        Some((at, _)) => {
            let whole = chars + text[at..].chars().count();
            (text[..at].to_owned(), Some(whole))
        }
    }
}

impl<'de> Deserialize<'de> for Kept {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Kept, D::Error> {
        struct Lines;
        impl<'de> Visitor<'de> for Lines {
            type Value = Kept;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a list of lines")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Kept, A::Error> {
                let share = SCOPE.with(Cell::get);
                let mut left = share.map_or(usize::MAX, |s| s.bytes);
                let mut kept = Kept::default();
                loop {
                    if left > 0 {
                        // A line without `text` (null, or another object) is an empty line.
                        let Some(line) = seq.next_element::<Option<LineJson>>()? else { break };
                        let CutText { text, whole } = line.map(|l| l.text).unwrap_or_default();
                        if let Some(whole) = whole {
                            kept.cut.insert(kept.lines.len(), whole);
                        }
                        left = left.saturating_sub(text.len() + 1);
                        kept.lines.push(text);
                    } else if seq.next_element::<IgnoredAny>()?.is_some() {
                        kept.dropped += 1;
                    } else {
                        break;
                    }
                }
                Ok(kept)
            }
            // `"lines": null` holds none.
            fn visit_unit<E: serde::de::Error>(self) -> Result<Kept, E> {
                Ok(Kept::default())
            }
        }
        d.deserialize_any(Lines)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[derive(Deserialize)]
    struct Page {
        lines: Kept,
    }

    fn read(share: Option<LineShare>, json: &str) -> Kept {
        match share {
            Some(s) => keep(s, || serde_json::from_str::<Page>(json)).unwrap().lines,
            None => serde_json::from_str::<Page>(json).unwrap().lines,
        }
    }

    #[test]
    fn outside_a_scope_every_line_is_kept_whole() {
        let k = read(None, r#"{"lines":[{"text":"a"},{"text":"bcd"}]}"#);
        assert_eq!(k, Kept { lines: vec!["a".into(), "bcd".into()], cut: BTreeMap::new(), dropped: 0 });
    }

    #[test]
    fn a_long_line_is_cut_at_its_characters_and_its_length_counted() {
        let k = read(Some(LineShare { bytes: 1000, line_chars: 3 }), r#"{"lines":[{"text":"ééééé"},{"text":"ab"}]}"#);
        assert_eq!(k.lines, ["ééé", "ab"]);
        assert_eq!(k.cut, BTreeMap::from([(0, 5)]));
    }

    #[test]
    fn a_cut_line_holds_only_the_memory_of_what_it_keeps() {
        let (kept, whole) = cut("x".repeat(15_000), 500);
        assert_eq!((kept.len(), whole), (500, Some(15_000)));
        assert!(kept.capacity() < 1_000, "a cut line of 500 bytes holds {} bytes", kept.capacity());
    }

    #[test]
    fn lines_past_the_bytes_are_skipped_and_counted() {
        let json = r#"{"lines":[{"text":"aaaa"},{"text":"bbbb"},{"text":"cccc"},{"text":"dddd"}]}"#;
        let k = read(Some(LineShare { bytes: 7, line_chars: 100 }), json);
        assert_eq!(k.lines, ["aaaa", "bbbb"], "the line that crosses the bytes is kept, none after");
        assert_eq!(k.dropped, 2);
    }

    #[test]
    fn a_line_of_another_shape_is_an_empty_line_and_null_lines_are_none() {
        let k = read(Some(LineShare { bytes: 100, line_chars: 10 }), r#"{"lines":[null,{"x":1},{"text":"z"}]}"#);
        assert_eq!(k.lines, ["", "", "z"]);
        assert_eq!(read(None, r#"{"lines":null}"#), Kept::default());
    }

    #[test]
    fn scopes_nest_and_end() {
        let inner = LineShare { bytes: 1, line_chars: 1 };
        let outer = LineShare { bytes: 100, line_chars: 2 };
        keep(outer, || {
            keep(inner, || ());
            assert_eq!(SCOPE.with(Cell::get), Some(outer));
        });
        assert_eq!(SCOPE.with(Cell::get), None);
    }
}
