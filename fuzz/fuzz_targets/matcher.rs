//! Feeds arbitrary patterns and refs to the required-builds branch matcher: it must never panic
//! and must stay fast (it is iterative, O(pattern × ref)), whatever the input.
#![no_main]

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
});
