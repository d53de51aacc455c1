//! The linear glob matchers (issue #37) match exactly what the backtracking ones they replaced did:
//! `list_files`'s path globs and the branch matchers' patterns, held to the old code (`glob_oracle/`)
//! on small inputs over an alphabet small enough that stars, slashes and repeats meet often.
#![allow(clippy::unwrap_used, clippy::panic)]

mod common;
mod glob_oracle;

use bb_core::testing::glob::glob_match;
use bb_core::testing::requirements::pattern_matches;
use common::proptest_config;
use proptest::prelude::*;

/// A glob of up to 10 symbols from `*`, `?`, `/`, `a`, `b` (and `é`, one character of two bytes).
fn glob() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![Just("*"), Just("*"), Just("?"), Just("/"), Just("a"), Just("b"), Just("é")],
        0..10,
    )
    .prop_map(|s| s.concat())
}

/// A path of up to 12 symbols from `/`, `a`, `b`, `é`.
fn path() -> impl Strategy<Value = String> {
    proptest::collection::vec(prop_oneof![Just("/"), Just("a"), Just("a"), Just("b"), Just("é")], 0..12)
        .prop_map(|s| s.concat())
}

proptest! {
    #![proptest_config(proptest_config(20_000))]

    #[test]
    fn a_path_glob_matches_exactly_what_the_backtracking_one_did(g in glob(), p in path()) {
        prop_assert_eq!(glob_match(&g, &p), glob_oracle::glob_match(&g, &p), "glob {:?} path {:?}", g, p);
    }

    #[test]
    fn a_branch_pattern_matches_exactly_what_the_backtracking_one_did(g in glob(), p in path()) {
        prop_assert_eq!(pattern_matches(&g, &p), glob_oracle::pattern_matches(&g, &p), "pattern {:?} ref {:?}", g, p);
    }
}

#[test]
fn the_cases_the_old_matchers_were_tested_on_still_hold() {
    for (g, p, want) in [
        ("*.rs", "src/lib.rs", true),
        ("src/**/*.rs", "src/lib.rs", true),
        ("src/**/x.rs", "src/abx.rs", true),
        ("a/**/", "a/", false),
        ("**/", "", false),
        ("a**/*", "a", false),
    ] {
        assert_eq!(glob_match(g, p), want, "{g} {p}");
        assert_eq!(glob_oracle::glob_match(g, p), want, "old: {g} {p}");
    }
}
