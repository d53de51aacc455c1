//! Highlighting, side by side in one run on the same files: bb's (the core's stepped highlighter, lines
//! per second) against Debian's `bat` (`batcat --color=always`, the same syntaxes' source), and the size
//! of the view data of a 5,000-line diff. Prints figures; asserts nothing.
//!
//! `cargo run --release -p bb-core --example highlight_bench` (installs nothing: run `apt-get install bat`
//! for the comparison).
#![allow(clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use bb_core::testing::highlight::{Language, SideHighlighter};

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let files =
        ["core/src/session.rs", "core/src/requirements.rs", "assets/view/card.js", "tools/stack/seed/seed.json"];
    println!("{:<32} {:>7} {:>14} {:>14}", "file", "lines", "bb lines/s", "bat lines/s");
    for f in files {
        let path = root.join(f);
        let Ok(text) = std::fs::read_to_string(&path) else { continue };
        let lines: Vec<&str> = text.lines().collect();
        let language = Language::detect(f, lines.first().copied()).expect("a known language");
        // Five rounds, the median.
        let mut rates = Vec::new();
        for _ in 0..5 {
            let started = Instant::now();
            let mut h = SideHighlighter::new(language, false);
            for l in &lines {
                let _ = h.line(l);
            }
            rates.push(lines.len() as f64 / started.elapsed().as_secs_f64());
        }
        rates.sort_by(f64::total_cmp);
        let bat = bat_rate(&path, lines.len());
        println!(
            "{:<32} {:>7} {:>14.0} {:>14}",
            f,
            lines.len(),
            rates[2],
            bat.map_or("(no batcat)".into(), |r| format!("{r:.0}"))
        );
    }
    println!();
    pathological();
    view_bytes();
}

/// The longest single line the stepped work may meet: a 20,000-character minified line goes plain
/// without being parsed; a regex-heavy line just under the cap is parsed. Prints how long each takes,
/// which is how far past its deadline an answer can be held (the work stops between lines).
fn pathological() {
    let js = Language::detect("app.min.js", None).expect("JavaScript");
    let minified = "var a=function(b){return b.replace(/(a+)+$/g,'x')};".repeat(400);
    let started = Instant::now();
    let long = SideHighlighter::new(js, false).line(&minified);
    println!("a {}-character minified line: {:?} in {:.3} ms", minified.chars().count(), long.err(), ms(started));
    let perl = Language::detect("x.pl", None).expect("Perl");
    let regexy: String = "s/(?:(a|b)*c){2,}\\d+[^/]*/$1/gx; ".repeat(50).chars().take(1_990).collect();
    let mut worst = 0.0f64;
    for (lang, line) in [(js, regexy.clone()), (perl, regexy)] {
        let started = Instant::now();
        let _ = SideHighlighter::new(lang, false).line(&line);
        println!("  {}: {:.3} ms", lang.name(), ms(started));
        worst = worst.max(ms(started));
    }
    println!("worst regex-heavy line under the cap: {worst:.3} ms (the answer waits at most this past its deadline)");
}

fn ms(started: Instant) -> f64 {
    started.elapsed().as_secs_f64() * 1000.0
}

/// `batcat` over the file, timed as a whole process (its start-up included), five rounds, the median.
fn bat_rate(path: &Path, lines: usize) -> Option<f64> {
    let mut rates = Vec::new();
    for _ in 0..5 {
        let started = Instant::now();
        let status = Command::new("batcat")
            .args(["--color=always", "--paging=never", "--style=plain"])
            .arg(path)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .ok()?;
        if !status.success() {
            return None;
        }
        rates.push(lines as f64 / started.elapsed().as_secs_f64());
    }
    rates.sort_by(f64::total_cmp);
    Some(rates[2])
}

/// The runs of a 5,000-line Rust diff as the view data carries them: bytes of the lines' JSON.
fn view_bytes() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut lines = Vec::new();
    let mut sources = Vec::new();
    for dir in ["", "views", "tools", "reads", "bitbucket"] {
        sources.extend(std::fs::read_dir(root.join(dir)).into_iter().flatten().flatten().map(|e| e.path()));
    }
    sources.sort();
    for f in sources.iter().filter(|p| p.extension().is_some_and(|e| e == "rs")) {
        if let Ok(t) = std::fs::read_to_string(f) {
            lines.extend(t.lines().map(str::to_owned));
        }
    }
    lines.truncate(5_000);
    let language = Language::detect("x.rs", None).expect("Rust");
    let mut h = SideHighlighter::new(language, false);
    let mut out = Vec::new();
    let mut text_bytes = 0;
    for (i, l) in lines.iter().enumerate() {
        text_bytes += l.len();
        let mut line = serde_json::json!({"t": "A", "n": i + 1, "s": l});
        if let Ok(runs) = h.line(l) {
            line["r"] = serde_json::json!(bb_core::testing::highlight::encode(&runs));
        }
        out.push(line);
    }
    let bytes = serde_json::to_vec(&out).map_or(0, |v| v.len());
    println!(
        "view data of a {}-line diff: {} KB ({} KB of it the code itself; target under 400 KB)",
        lines.len(),
        bytes / 1024,
        text_bytes / 1024
    );
}
