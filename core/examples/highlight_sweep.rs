//! Highlights every file under the given paths, as bb would the new side of a diff that adds it, and
//! names each file that does not finish within a bound: syntect's parser cannot be stopped inside a
//! line, so a grammar that loops spins a thread forever (see `core/build.rs` for the ones mended).
//! Prints files, lines, languages, throughput and the files not done in time; exits 1 when there are any.
//!
//! `cargo run --release -p bb-core --example highlight_sweep -- /usr/lib/node_modules /usr/include`
//! (`--templates` also runs the syntaxes that embed others; `--bound SECONDS`, default 10).
#![allow(clippy::expect_used)]

#[path = "support/walk.rs"]
mod walk;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};
use walk::walk;

use bb_core::testing::highlight::{Language, MAX_LINE_CHARS, SideHighlighter};

/// Stop after this many unfinished files: a hung one leaves a thread spinning until the process ends.
const MAX_NOT_DONE: usize = 8;

fn main() {
    let mut roots = Vec::new();
    let mut templates = false;
    let mut bound = Duration::from_secs(10);
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--templates" => templates = true,
            "--bound" => {
                let s: u64 = args.next().and_then(|s| s.parse().ok()).expect("--bound SECONDS");
                bound = Duration::from_secs(s);
            }
            _ => roots.push(PathBuf::from(arg)),
        }
    }
    let mut files = Vec::new();
    for root in &roots {
        walk(root, &mut files);
    }
    let started = Instant::now();
    let (mut done, mut lines, mut busy) = (0usize, 0usize, Duration::ZERO);
    let mut by_language: BTreeMap<&'static str, usize> = BTreeMap::new();
    let mut not_done = Vec::new();
    for path in files {
        let Ok(text) = std::fs::read_to_string(&path) else { continue };
        let name = path.to_string_lossy().into_owned();
        let Some(language) = Language::detect(&name, text.lines().next()) else { continue };
        if language.is_template() && !templates {
            continue;
        }
        let file_lines = text.lines().count();
        let (tx, rx) = mpsc::channel();
        thread::spawn(move || {
            let t = Instant::now();
            let mut side = SideHighlighter::new(language, templates);
            let mut n = 0;
            for line in text.lines() {
                if line.chars().count() > MAX_LINE_CHARS {
                    break;
                }
                let _ = side.line(line);
                n += 1;
            }
            let _ = tx.send((n, t.elapsed()));
        });
        match rx.recv_timeout(bound) {
            Ok((n, took)) => {
                done += 1;
                lines += n;
                busy += took;
                *by_language.entry(language.name()).or_default() += 1;
            }
            Err(_) => {
                // A hang, or a very large file on a slow machine: the line count tells which to look at.
                println!("NOT DONE in {} s ({}, {file_lines} lines): {name}", bound.as_secs(), language.name());
                not_done.push(name);
                if not_done.len() >= MAX_NOT_DONE {
                    println!("stopping after {MAX_NOT_DONE} files not done");
                    break;
                }
            }
        }
    }
    let rate = lines as f64 / busy.as_secs_f64().max(1e-9);
    println!(
        "{done} files, {lines} lines in {:.1} s ({rate:.0} lines/s highlighting), {} not done",
        started.elapsed().as_secs_f64(),
        not_done.len()
    );
    let mut top: Vec<_> = by_language.into_iter().collect();
    top.sort_by_key(|(_, n)| std::cmp::Reverse(*n));
    let top: Vec<String> = top.iter().take(12).map(|(l, n)| format!("{l} {n}")).collect();
    println!("languages: {}", top.join(", "));
    if !not_done.is_empty() {
        std::process::exit(1);
    }
}
