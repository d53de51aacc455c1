//! The glob benchmark (issue #37): `list_files`'s glob over a page of 500 paths of 3.8 KB each, for
//! hostile globs of 299 characters, with the backtracking matcher bb had before (`tests/glob_oracle/`)
//! beside the linear one it has now (`core/src/glob.rs`). The old one ran on the driver thread for
//! 0.48 s a call, holding every other session of the process behind it.
//!
//! Run: `cargo run --release -p bb-core --example glob_bench`. Prints figures; asserts nothing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

#[path = "../tests/glob_oracle/mod.rs"]
mod glob_oracle;

use std::time::Instant;

use bb_core::testing::glob::glob_match;

const PATHS: usize = 500;
const PATH_BYTES: usize = 3_800;

/// Milliseconds for one call: the glob over every path of the page, best of `runs`.
fn per_call(runs: usize, glob: &str, paths: &[String], matcher: fn(&str, &str) -> bool) -> f64 {
    let mut best = f64::MAX;
    for _ in 0..runs {
        let t = Instant::now();
        let hits = paths.iter().filter(|p| matcher(glob, p)).count();
        std::hint::black_box(hits);
        best = best.min(t.elapsed().as_secs_f64() * 1000.0);
    }
    best
}

fn main() {
    // A long last component (a glob without `/` is matched against it as well as the whole path),
    // ending in `b` as the globs do, so that no matcher can refuse a path by its end alone.
    let paths: Vec<String> = (0..PATHS).map(|i| format!("src/{i:03}/{}b", "a".repeat(PATH_BYTES - 9))).collect();
    let globs = [
        ("*, then a 297 times, then b", format!("*{}b", "a".repeat(297))),
        ("*a 149 times, then b", format!("{}b", "*a".repeat(149))),
        ("**/, then *, then a 295 times, then b", format!("**/*{}b", "a".repeat(295))),
        ("***b (a `**` and a `*` backtracking)", "***b".to_owned()),
    ];
    println!("a glob over {PATHS} paths of {} bytes, ms a call (before: once; after: best of 5):", paths[0].len());
    println!("{:<40} {:>6} {:>10} {:>10} {:>8}", "glob", "chars", "before", "after", "×");
    for (name, glob) in &globs {
        let before = per_call(1, glob, &paths, glob_oracle::glob_match);
        let after = per_call(5, glob, &paths, glob_match);
        println!("{name:<40} {:>6} {before:>10.2} {after:>10.2} {:>8.1}", glob.len(), before / after);
    }
}
