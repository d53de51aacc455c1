//! Feeds arbitrary patterns and refs to the required-builds branch matcher and arbitrary globs and
//! paths to the glob matcher (`list_files`): neither may panic, and both stay linear (a bitset NFA,
//! O(|text| × |glob| / 64)), whatever the input.
#![no_main]

use bb_core::fuzzing::glob::Glob;
use bb_core::fuzzing::requirements::{RefMatcher, matches, pattern_matches};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: (&str, &str)| {
    let (pattern, ref_id) = input;
    let a = pattern_matches(pattern, ref_id);
    // The PATTERN matcher is the same function behind the enum.
    assert_eq!(matches(&RefMatcher::Pattern(pattern.to_owned()), None, ref_id), Ok(a));
    // A literal pattern always matches itself as a branch's last segment.
    if !pattern.is_empty() && !pattern.contains(['*', '?', '/']) {
        assert!(pattern_matches(pattern, &format!("refs/heads/{pattern}")));
    }
    // A glob without stars or `?` matches itself and nothing else; `**` matches anything.
    let by_bytes = Glob::bytes(pattern).matches_bytes(ref_id);
    if !pattern.contains(['*', '?']) {
        assert_eq!(by_bytes, pattern == ref_id);
        assert!(Glob::chars(pattern).matches_chars(pattern));
    }
    assert!(Glob::bytes("**").matches_bytes(ref_id));
    // Over characters and over bytes, a glob without `?` reads the same.
    if !pattern.contains('?') {
        assert_eq!(Glob::chars(pattern).matches_chars(ref_id), by_bytes);
    }
});
