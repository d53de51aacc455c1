//! The file-read benchmark (issue #27): `get_file` of the stand-in's 5,000-line file, a 200-line window and
//! the whole file window by window, in bytes the model reads and ms per call (bb's core with the stand-in
//! in-process: no network, so the figures are bb's own cost), beside what Bitbucket sent and beside what a
//! peer's "read file" tool returns for the same file: the peers measured (4 of 4) return the raw file whole,
//! unnumbered, in one answer (the raw endpoint's bytes, which this bench reads from the stand-in).
//!
//! Run: `cargo run --release -p bb-core --example file_bench`. Prints figures; asserts nothing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

#[path = "../tests/stack_harness/mod.rs"]
mod stack_harness;

use std::time::Instant;

use serde_json::json;
use stack_harness::StackHarness;

const PATH: &str = "src/generated/tables.rs";
const RUNS: usize = 50;

fn main() {
    let mut d = StackHarness::new();
    let raw = {
        let token = d.world.default_token();
        let req =
            bb_stack::exchange::Request::new("GET", &format!("/rest/api/latest/projects/BB/repos/api/raw/{PATH}"))
                .with_header("Authorization", &format!("Bearer {token}"));
        bb_stack::routes::serve(&mut d.world, &req).body.len()
    };
    let args = |start: u64, count: u64| json!({"project": "BB", "repo": "api", "path": PATH, "start_line": start, "line_count": count});

    // One 200-line window.
    let mut times = Vec::new();
    let mut bytes = 0;
    let mut from_bitbucket = 0;
    for _ in 0..RUNS {
        let t = Instant::now();
        let a = d.call("get_file", args(1, 200));
        times.push(t.elapsed().as_secs_f64() * 1000.0);
        bytes = a.text.len();
        from_bitbucket = d.raw_bytes;
    }
    times.sort_by(f64::total_cmp);
    println!("get_file {PATH} (5,000 lines)");
    println!("{:<34} {:>7} {:>12} {:>13} {:>9}", "read", "calls", "answer B", "Bitbucket B", "ms/call");
    println!("{:<34} {:>7} {:>12} {:>13} {:>9.3}", "window of 200 lines", 1, bytes, from_bitbucket, times[RUNS / 2]);

    // The whole file, window by window (2,000 lines each, the most one call reads).
    let mut times = Vec::new();
    let (mut calls, mut bytes, mut from_bitbucket) = (0, 0, 0);
    for run in 0..RUNS {
        let t = Instant::now();
        let (mut start, mut n, mut b, mut r) = (1, 0, 0, 0);
        loop {
            let a = d.call("get_file", args(start, 2_000));
            n += 1;
            b += a.text.len();
            r += d.raw_bytes;
            if a.text.ends_with("End of file.") || a.is_error || n > 10 {
                break;
            }
            start += 2_000;
        }
        times.push(t.elapsed().as_secs_f64() * 1000.0);
        if run == 0 {
            (calls, bytes, from_bitbucket) = (n, b, r);
        }
    }
    times.sort_by(f64::total_cmp);
    println!(
        "{:<34} {:>7} {:>12} {:>13} {:>9.3}",
        "whole file, 2,000-line windows",
        calls,
        bytes,
        from_bitbucket,
        times[RUNS / 2] / calls as f64
    );
    println!("{:<34} {:>7} {:>12} {:>13} {:>9}", "peer: raw file whole (reference)", 1, raw, raw, "-");
    println!(
        "A 200-line window is {:.1}% of the whole raw file; bb's answer numbers every line and says how to go on.",
        100.0 * (bytes_of_window(&mut d) as f64) / raw as f64
    );
}

fn bytes_of_window(d: &mut StackHarness) -> usize {
    d.call("get_file", json!({"project": "BB", "repo": "api", "path": PATH})).text.len()
}
