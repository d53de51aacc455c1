//! The branch-pattern matcher against an independent reference, on generated patterns and refs.
#![allow(clippy::unwrap_used, clippy::panic)]

mod common;

use bb_core::testing::requirements::pattern_matches;
use common::proptest_config;
use proptest::prelude::*;

/// A direct recursive matcher over characters, written separately from the segment matcher in
/// bb-core: `**` as a whole segment spans segments, `*` and `?` never cross `/`, a trailing `/`
/// means `/**`, and the pattern matches a suffix of the ref that starts at a segment boundary.
fn reference(pattern: &str, ref_id: &str) -> bool {
    let mut p = pattern.to_lowercase().trim_start_matches('/').to_string();
    if p.is_empty() {
        return false;
    }
    if p.ends_with('/') {
        p.push_str("**");
    }
    let r = ref_id.to_lowercase();
    let p: Vec<char> = p.chars().collect();
    let r: Vec<char> = r.chars().collect();
    let starts = std::iter::once(0).chain(r.iter().enumerate().filter(|(_, c)| **c == '/').map(|(i, _)| i + 1));
    starts.into_iter().filter(|&i| i < r.len()).any(|i| m(&p, &r[i..], true))
}

fn m(p: &[char], s: &[char], at_segment_start: bool) -> bool {
    if p.is_empty() {
        return s.is_empty();
    }
    if at_segment_start && p.starts_with(&['*', '*', '/']) {
        // Zero segments, or one more segment and try again.
        if m(&p[3..], s, true) {
            return true;
        }
        return match s.iter().position(|c| *c == '/') {
            Some(i) => m(p, &s[i + 1..], true),
            None => false,
        };
    }
    if at_segment_start && p == ['*', '*'] {
        return true;
    }
    if p.starts_with(&['/', '*', '*']) && (p.len() == 3 || p[3] == '/') {
        // A `/**` segment: zero segments, or `/segment` and try again.
        if m(&p[3..], s, false) {
            return true;
        }
        if s.first() != Some(&'/') {
            return false;
        }
        let rest = &s[1..];
        let end = rest.iter().position(|c| *c == '/').unwrap_or(rest.len());
        return m(p, &rest[end..], false);
    }
    match p[0] {
        '*' => {
            let run = s.iter().position(|c| *c == '/').unwrap_or(s.len());
            (0..=run).any(|k| m(&p[1..], &s[k..], false))
        }
        '?' => !s.is_empty() && s[0] != '/' && m(&p[1..], &s[1..], false),
        c => !s.is_empty() && s[0] == c && m(&p[1..], &s[1..], c == '/'),
    }
}

fn pattern() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![Just("a"), Just("B"), Just("b"), Just("/"), Just("*"), Just("?"), Just("**"), Just("."), Just("-")],
        1..8,
    )
    .prop_map(|parts| parts.concat())
}

/// A valid git ref: non-empty segments (git refuses `//` and a trailing `/`).
fn ref_id() -> impl Strategy<Value = String> {
    let segment = proptest::collection::vec(prop_oneof![Just("a"), Just("A"), Just("b"), Just("."), Just("-")], 1..4)
        .prop_map(|parts| parts.concat());
    proptest::collection::vec(segment, 1..4).prop_map(|segs| format!("refs/heads/{}", segs.join("/")))
}

fn literal() -> impl Strategy<Value = String> {
    proptest::collection::vec(prop_oneof![Just("a"), Just("B"), Just("b"), Just("-"), Just(".")], 1..4)
        .prop_map(|parts| parts.concat())
}

proptest! {
    #![proptest_config(proptest_config(2048))]

    #[test]
    fn the_matcher_agrees_with_the_reference(p in pattern(), r in ref_id()) {
        prop_assert_eq!(pattern_matches(&p, &r), reference(&p, &r), "pattern {:?} ref {:?}", p, r);
    }

    #[test]
    fn a_pattern_without_wildcards_matches_exactly_the_refs_ending_with_it_at_a_segment_boundary(
        segs in proptest::collection::vec(literal(), 1..3),
        r in ref_id(),
    ) {
        let p = segs.join("/");
        let (pl, rl) = (p.to_lowercase(), r.to_lowercase());
        let ends = rl == pl || rl.ends_with(&format!("/{pl}"));
        prop_assert_eq!(pattern_matches(&p, &r), ends);
        // and the ref built to end with it always matches, in any letter case
        let built = format!("refs/heads/x/{}", p.to_uppercase());
        prop_assert!(pattern_matches(&p, &built));
    }
}

#[test]
fn the_reference_itself_knows_the_documented_examples() {
    assert!(reference("PROJECT-*", "refs/heads/PROJECT-1"));
    assert!(reference("heads/**/master", "refs/heads/master"));
    assert!(reference("tags/", "refs/tags/x/y"));
    assert!(!reference("?.?", "refs/tags/1.10"));
}
