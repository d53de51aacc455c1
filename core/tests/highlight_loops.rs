//! Lines that made syntect's parser spin forever in the JavaScript grammar (two contexts that `set`
//! each other without consuming), which `build.rs` mends: each file here must highlight, and in good
//! time. A hang cannot be stopped, so each runs on its own thread and the test fails when the answer
//! has not come within a bound far above the milliseconds it takes.
#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use bb_core::testing::highlight::{Class, Language, Runs, SideHighlighter};

/// Far above the few milliseconds a file takes, so a slow machine does not fail it; a hang never answers.
const BOUND: Duration = Duration::from_secs(60);

/// Each line's runs, highlighted on a thread of its own; `None` when it did not finish within [`BOUND`].
fn highlight(path: &'static str, text: &'static str) -> Option<Vec<Runs>> {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let language = Language::detect(path, text.lines().next()).expect("a language");
        let mut side = SideHighlighter::new(language, false);
        let runs = text.lines().map(|l| side.line(l).expect("highlighted")).collect();
        let _ = tx.send(runs);
    });
    rx.recv_timeout(BOUND).ok()
}

#[test]
fn an_unclosed_block_comment_after_an_expression_does_not_hang() {
    for line in ["x /*", "$ /*}}", "$\t/*}}", "$\u{b}/*}}", "let a = b /* and", "f(x) /* note"] {
        let runs = highlight("a.js", line).unwrap_or_else(|| panic!("{line:?} did not finish"));
        // The comment is a comment, from its `/*` to the end of the line.
        let (n, class) = *runs[0].last().expect("runs");
        let comment_at = line.find("/*").expect("a comment");
        assert_eq!(class, Some(Class::Comment), "{line:?}: {runs:?}");
        assert!(line.chars().count() - n <= line[..comment_at].chars().count(), "{line:?}: {runs:?}");
    }
}

#[test]
fn a_doc_comment_after_a_line_without_a_semicolon_does_not_hang() {
    // Code written without semicolons: an expression ends a line, and the next opens a doc comment.
    let text = "const limit = max\n\t/**\n\t * The default.\n\t */\nexport default limit\n";
    let runs = highlight("lib/limit.js", text).expect("finished");
    assert_eq!(runs[1].last().map(|r| r.1), Some(Some(Class::Comment)), "{runs:?}");
    assert_eq!(runs[2].last().map(|r| r.1), Some(Some(Class::Comment)), "{runs:?}");
    // The fuzzer's case: the same shape, reached through lines of noise.
    assert!(highlight("a.js", "\u{b}\n\n\n\n\n<\n<2\n\n\n\t/**").is_some(), "the fuzzer's case did not finish");
}

#[test]
fn division_that_continues_on_the_next_line_is_still_an_operator() {
    let runs = highlight("a.js", "const half = total\n  / 2\n").expect("finished");
    assert_eq!(runs[1].iter().find(|r| r.1.is_some()).map(|r| r.1), Some(Some(Class::Operator)), "{runs:?}");
}
