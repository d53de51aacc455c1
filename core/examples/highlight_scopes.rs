//! What syntect's parser makes of files, line by line, as scope operations: run it once with each regex
//! engine and compare the outputs, to see that switching engines changes no scope (or which, and where).
//! Prints one line per source line, `path:line: offset push scope; offset pop n; …`, for every file under the
//! given paths whose language bb highlights (templates and lines over the length cap left out, as bb does).
//!
//! ```text
//! cargo run --release -p bb-core --example highlight_scopes -- core/src > /tmp/onig.txt
//! cargo run --release -p bb-core --no-default-features --features fancy --example highlight_scopes -- core/src > /tmp/fancy.txt
//! diff /tmp/fancy.txt /tmp/onig.txt
//! ```
//! The last line printed counts files, lines and the engine, so that two outputs are never of one engine unseen.
#![allow(clippy::expect_used)]

#[path = "support/walk.rs"]
mod walk;
use std::path::Path;
use walk::walk;

use bb_core::testing::highlight::{ENGINE, Language, MAX_LINE_CHARS, scope_operations};

fn main() {
    let mut files = Vec::new();
    for root in std::env::args().skip(1) {
        walk(Path::new(&root), &mut files);
    }
    let (mut done, mut lines) = (0, 0);
    for path in files {
        let Ok(text) = std::fs::read_to_string(&path) else { continue };
        let name = path.to_string_lossy();
        let Some(language) = Language::detect(&name, text.lines().next()) else { continue };
        if language.is_template() {
            continue;
        }
        let sample: Vec<&str> = text.lines().take_while(|l| l.chars().count() <= MAX_LINE_CHARS).collect();
        for (n, ops) in scope_operations(language, &sample).iter().enumerate() {
            println!("{name}:{}: {ops}", n + 1);
        }
        done += 1;
        lines += sample.len();
    }
    println!("{done} files, {lines} lines, parsed with {ENGINE}");
}
