//! How much of a diff bb keeps: a diff is cut while it is read, not after. Bitbucket serves up to
//! 10,000 lines of a file in one answer (reference "Diff and changes": the server caps lines and
//! sets `truncated`); a view carries a bounded share of them ([`crate::limits`]), so the lines past
//! the share are skipped as the JSON is read, never held, and only counted.
//!
//! serde's derived decoders cannot hand state down to a nested field, so the share is scoped to the
//! thread that decodes: [`keep`] sets it around one decode, and the `lines` of every segment read in
//! that scope draw from it ([`lines`], named by `Segment`'s `deserialize_with`). Outside a scope
//! every line is kept, as before.

use std::cell::Cell;
use std::fmt;

use serde::Deserializer;
use serde::de::{IgnoredAny, SeqAccess, Visitor};

use super::model::Line;

/// The most of a diff one decode keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Share {
    /// Diff lines kept at most; the rest are skipped unread and counted.
    pub lines: usize,
    /// Bytes of line text: lines are kept while any are left, so the last one kept may go past it.
    pub bytes: usize,
}

thread_local! {
    /// What the decode in progress on this thread may still keep, and how many lines it skipped.
    static SCOPE: Cell<Option<(Share, usize)>> = const { Cell::new(None) };
}

/// Runs `decode` keeping at most `share` of the diff lines it reads; returns what it made and how
/// many lines it skipped.
pub fn keep<T>(share: Share, decode: impl FnOnce() -> T) -> (T, usize) {
    let outer = SCOPE.with(|s| s.replace(Some((share, 0))));
    let made = decode();
    let skipped = SCOPE.with(|s| s.replace(outer)).map_or(0, |(_, skipped)| skipped);
    (made, skipped)
}

/// Whether the scope (if any) has room for one more line; counts a skipped line when it has not.
fn room() -> bool {
    SCOPE.with(|s| match s.get() {
        None => true,
        Some((share, skipped)) if share.lines == 0 || share.bytes == 0 => {
            s.set(Some((share, skipped + 1)));
            false
        }
        Some(_) => true,
    })
}

/// Takes a kept line's cost from the scope.
fn spend(line: &Line) {
    SCOPE.with(|s| {
        if let Some((share, skipped)) = s.get() {
            let bytes = line.line.as_ref().map_or(0, String::len);
            let left = Share { lines: share.lines.saturating_sub(1), bytes: share.bytes.saturating_sub(bytes.max(1)) };
            s.set(Some((left, skipped)));
        }
    });
}

/// A segment's lines, each kept while the scope has room and skipped unread after.
pub(super) fn lines<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Line>, D::Error> {
    struct Lines;
    impl<'de> Visitor<'de> for Lines {
        type Value = Vec<Line>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a list of diff lines")
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<Line>, A::Error> {
            let mut kept = Vec::new();
            loop {
                if room() {
                    let Some(line) = seq.next_element::<Line>()? else { break };
                    spend(&line);
                    kept.push(line);
                } else if seq.next_element::<IgnoredAny>()?.is_none() {
                    // `room` counted one more skipped line than there was.
                    SCOPE.with(|s| {
                        if let Some((share, skipped)) = s.get() {
                            s.set(Some((share, skipped.saturating_sub(1))));
                        }
                    });
                    break;
                }
            }
            Ok(kept)
        }
        // A segment whose `lines` is null has none (serde's `default` would refuse null for a list).
        fn visit_unit<E: serde::de::Error>(self) -> Result<Vec<Line>, E> {
            Ok(Vec::new())
        }
    }
    d.deserialize_any(Lines)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::bitbucket::model::DiffSet;

    const TWO_SEGMENTS: &str = r#"{"diffs":[{"hunks":[{"segments":[
        {"type":"CONTEXT","lines":[{"source":1,"destination":1,"line":"a"},{"source":2,"destination":2,"line":"b"}]},
        {"type":"ADDED","lines":[{"destination":3,"line":"c"},{"destination":4,"line":"d"},{"destination":5,"line":"e"}]}]}]}]}"#;

    fn texts(set: &DiffSet) -> Vec<String> {
        set.diffs[0].hunks[0].segments.iter().flat_map(|s| s.lines.iter().filter_map(|l| l.line.clone())).collect()
    }

    #[test]
    fn lines_past_the_share_are_skipped_in_order_and_counted() {
        let share = Share { lines: 3, bytes: 1 << 20 };
        let (set, skipped) = keep(share, || serde_json::from_str::<DiffSet>(TWO_SEGMENTS));
        let set = set.unwrap();
        assert_eq!(texts(&set), ["a", "b", "c"]);
        assert_eq!(skipped, 2);
    }

    #[test]
    fn the_byte_share_stops_a_diff_of_long_lines() {
        let long = "x".repeat(1000);
        let body = format!(
            r#"{{"diffs":[{{"hunks":[{{"segments":[{{"lines":[{{"line":"{long}"}},{{"line":"{long}"}},{{"line":"{long}"}}]}}]}}]}}]}}"#
        );
        let (set, skipped) = keep(Share { lines: 100, bytes: 1500 }, || serde_json::from_str::<DiffSet>(&body));
        assert_eq!(set.unwrap().diffs[0].hunks[0].segments[0].lines.len(), 2, "the second line crosses the share");
        assert_eq!(skipped, 1);
    }

    #[test]
    fn outside_a_scope_every_line_is_kept_and_a_scope_ends_with_its_decode() {
        let (_, skipped) = keep(Share { lines: 0, bytes: 0 }, || serde_json::from_str::<DiffSet>(TWO_SEGMENTS));
        assert_eq!(skipped, 5);
        let set: DiffSet = serde_json::from_str(TWO_SEGMENTS).unwrap();
        assert_eq!(texts(&set).len(), 5);
    }
}
