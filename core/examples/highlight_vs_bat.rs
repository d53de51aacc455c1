//! bb's highlighting against `bat`'s, side by side on the same files: for each language a corpus of a
//! few thousand lines (files named below, present in this repository or on the development machine;
//! none is fetched or committed), written to one file that both read. Prints, per language, bb's lines
//! per second (warm: its grammar already compiled, as in a server that has warmed up; and cold: the
//! first pass of this process), `bat`'s (one whole process per round, its start included, as a person
//! would run it, and with its start on an empty file taken off), bb / bat, and how many lines bb
//! highlights within the diff view's 150 ms deadline. Five rounds each, interleaved, the median.
//! Asserts nothing: the figures depend on the machine and its load.
//!
//! ```text
//! nice -n 10 cargo install bat --locked --root /tmp/bat     # not a dependency of bb, nor of its CI
//! BAT=/tmp/bat/bin/bat cargo run --release -p bb-core --example highlight_vs_bat
//! ```
//! (`BAT` defaults to `bat`, then Debian's `batcat`, on the PATH; without either only bb's figures print.)
//! The engine measured is the one bb-core is built with: add `--no-default-features --features fancy`
//! for the pure-Rust engine.
#![allow(clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use bb_core::testing::highlight::{Language, SideHighlighter, encode};

/// Where a corpus file comes from.
enum Source {
    /// A file, relative to the repository unless absolute.
    File(&'static str),
    /// Every file with this extension directly in a folder (not below it), in name order.
    Folder(&'static str, &'static str),
    /// A member of a zip archive (the JDK's sources), read with `unzip -p`.
    Zip(&'static str, &'static str),
}

const JDK: &str = "/usr/lib/jvm/temurin-25-jdk-amd64/lib/src.zip";

/// The corpus: a language's name, the extension bb and bat detect it by, and its files.
const CORPUS: &[(&str, &str, &[Source])] = &[
    ("Rust", "rs", &[Source::Folder("core/src", "rs")]),
    (
        "Python",
        "py",
        &[
            Source::File("/root/.pyenv/versions/3.11.7/lib/python3.11/argparse.py"),
            Source::File("/root/.pyenv/versions/3.11.7/lib/python3.11/typing.py"),
            Source::File("/root/.pyenv/versions/3.11.7/lib/python3.11/inspect.py"),
        ],
    ),
    // tests/browser/node_modules is there after `npm ci` in tests/browser.
    (
        "JavaScript",
        "js",
        &[
            Source::File("tests/browser/node_modules/esbuild/lib/main.js"),
            Source::File("tests/browser/node_modules/zod/v3/types.js"),
        ],
    ),
    (
        "TypeScript",
        "ts",
        &[
            Source::File("tests/browser/node_modules/zod/src/v4/core/schemas.ts"),
            Source::File("tests/browser/node_modules/zod/src/v4/core/api.ts"),
        ],
    ),
    (
        "Go",
        "go",
        &[
            Source::Folder("/usr/share/doc/git/contrib/persistent-https", "go"),
            Source::File("tools/stack/seed/files/main.go"),
        ],
    ),
    (
        "Java",
        "java",
        &[Source::Zip(JDK, "java.base/java/util/HashMap.java"), Source::Zip(JDK, "java.base/java/util/ArrayList.java")],
    ),
    (
        "YAML",
        "yaml",
        &[Source::File("/usr/lib/google-cloud-sdk/lib/googlecloudsdk/command_lib/util/resource_map/resource_map.yaml")],
    ),
    ("Markdown", "md", &[Source::File("/usr/share/doc/nodejs/api/process.md")]),
];

const ROUNDS: usize = 5;
const DEADLINE: Duration = Duration::from_millis(150);

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let dir = std::env::temp_dir().join(format!("bb-highlight-vs-bat-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    let bat = find_bat();
    let bat_start = bat.as_ref().and_then(|b| {
        let empty = dir.join("empty.rs");
        std::fs::write(&empty, "").ok()?;
        bat_seconds(b, &empty)
    });
    match (&bat, bat_start) {
        (Some(b), Some(s)) => println!("bat: {} (start on an empty file: {:.1} ms)", b.display(), s * 1e3),
        _ => println!("bat: not found (set BAT=/path/to/bat); bb's figures only"),
    }
    println!(
        "{:<11} {:>6}  {:>10} {:>10}  {:>10} {:>10}  {:>6} {:>6}  {:>8}",
        "language", "lines", "bb warm", "bb cold", "bat", "bat -start", "bb/bat", "bb/bat", "in 150ms"
    );
    println!(
        "{:<11} {:>6}  {:>10} {:>10}  {:>10} {:>10}  {:>6} {:>6}  {:>8}",
        "", "", "lines/s", "lines/s", "lines/s", "lines/s", "", "-start", "lines"
    );
    for (name, extension, sources) in CORPUS {
        let (text, missing) = gather(&root, sources);
        if text.is_empty() {
            println!("{name:<11} (no corpus file on this machine: {})", missing.join(", "));
            continue;
        }
        let path = dir.join(format!("corpus.{extension}"));
        std::fs::write(&path, &text).expect("the corpus file is written");
        let lines: Vec<&str> = text.lines().collect();
        let language = Language::detect(&path.to_string_lossy(), lines.first().copied()).expect("a language");
        let cold = bb_seconds(language, &lines);
        let (mut bb, mut bat_s) = (Vec::new(), Vec::new());
        for _ in 0..ROUNDS {
            bb.push(bb_seconds(language, &lines));
            if let Some(s) = bat.as_ref().and_then(|b| bat_seconds(b, &path)) {
                bat_s.push(s);
            }
        }
        let n = lines.len() as f64;
        let bb_rate = n / median(&mut bb);
        let bat_rate = (!bat_s.is_empty()).then(|| n / median(&mut bat_s));
        let bat_net = bat_rate.zip(bat_start).map(|(r, s)| n / (n / r - s).max(1e-6));
        let cell = |r: Option<f64>| r.map_or("-".to_owned(), |r| format!("{r:.0}"));
        let ratio = |r: Option<f64>| r.map_or("-".to_owned(), |r| format!("{:.2}×", bb_rate / r));
        println!(
            "{name:<11} {:>6}  {:>10.0} {:>10.0}  {:>10} {:>10}  {:>6} {:>6}  {:>8}",
            lines.len(),
            bb_rate,
            n / cold,
            cell(bat_rate),
            cell(bat_net),
            ratio(bat_rate),
            ratio(bat_net),
            median_within(language, &lines)
        );
        if !missing.is_empty() {
            println!("{:<11} (missing, left out: {})", "", missing.join(", "));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The corpus text of `sources`, and the ones not found.
fn gather(root: &Path, sources: &[Source]) -> (String, Vec<String>) {
    let (mut text, mut missing) = (String::new(), Vec::new());
    let mut add = |t: Option<String>, what: String| match t {
        Some(t) => {
            text.push_str(&t);
            if !t.ends_with('\n') {
                text.push('\n');
            }
        }
        None => missing.push(what),
    };
    for source in sources {
        match source {
            Source::File(p) => add(std::fs::read_to_string(root.join(p)).ok(), (*p).to_owned()),
            Source::Folder(p, ext) => {
                let mut files: Vec<PathBuf> = std::fs::read_dir(root.join(p))
                    .into_iter()
                    .flatten()
                    .flatten()
                    .map(|e| e.path())
                    .filter(|f| f.is_file() && f.extension().is_some_and(|e| e == *ext))
                    .collect();
                files.sort();
                if files.is_empty() {
                    add(None, format!("{p}/*.{ext}"));
                }
                for f in files {
                    add(std::fs::read_to_string(&f).ok(), f.display().to_string());
                }
            }
            Source::Zip(zip, member) => {
                let out = Command::new("unzip").args(["-p", zip, member]).stderr(Stdio::null()).output().ok();
                let text = out.filter(|o| o.status.success()).and_then(|o| String::from_utf8(o.stdout).ok());
                add(text.filter(|t| !t.is_empty()), format!("{zip}!{member}"));
            }
        }
    }
    (text, missing)
}

/// Seconds bb takes over `lines` as the diff view does them (one side, runs encoded), with a fresh parse state.
fn bb_seconds(language: Language, lines: &[&str]) -> f64 {
    let started = Instant::now();
    let mut side = SideHighlighter::new(language, false);
    for line in lines {
        std::hint::black_box(side.line(line).ok().map(|runs| encode(&runs)));
    }
    started.elapsed().as_secs_f64()
}

/// How many lines a fresh parse state gets through before `deadline` (the corpus again from its start if it is
/// done sooner; its grammar is warm by now, as after the warm-up a server starts with).
fn within(language: Language, lines: &[&str], deadline: Duration) -> usize {
    let started = Instant::now();
    let mut side = SideHighlighter::new(language, false);
    let mut done = 0;
    for line in lines.iter().cycle() {
        let _ = std::hint::black_box(side.line(line));
        if started.elapsed() > deadline {
            break;
        }
        done += 1;
    }
    done
}

/// [`within`] over [`ROUNDS`] rounds, the median.
fn median_within(language: Language, lines: &[&str]) -> usize {
    let mut counts: Vec<usize> = (0..ROUNDS).map(|_| within(language, lines, DEADLINE)).collect();
    counts.sort_unstable();
    counts[counts.len() / 2]
}

/// `bat` itself: `$BAT`, else `bat`, else `batcat` on the PATH.
fn find_bat() -> Option<PathBuf> {
    let candidates: Vec<PathBuf> = match std::env::var_os("BAT") {
        Some(b) => vec![PathBuf::from(b)],
        None => vec!["bat".into(), "batcat".into()],
    };
    candidates.into_iter().find(|b| {
        Command::new(b).arg("--version").stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok_and(|s| s.success())
    })
}

/// Seconds one `bat` process takes to colour `path` for a terminal (its output thrown away).
fn bat_seconds(bat: &Path, path: &Path) -> Option<f64> {
    let started = Instant::now();
    let status = Command::new(bat)
        .args(["--color=always", "--paging=never", "--style=plain", "--theme=Monokai Extended"])
        .arg(path)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .ok()?;
    status.success().then(|| started.elapsed().as_secs_f64())
}

fn median(xs: &mut [f64]) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}
