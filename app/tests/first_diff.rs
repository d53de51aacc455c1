//! A fresh process highlights its first diff within the deadline: the grammars of the languages pull requests carry
//! most are prepared on a thread of their own at start (`HighlightJob::prepare_common`), so the first diff of a
//! session does not pay for compiling them (before, a 10-line Rust hunk came out "past bb's highlighting deadline").
//! The test waits for bb to say the grammars are prepared (a debug line), never for a time, then asks for the diff of
//! a pull request with Rust, Markdown and a new Rust file, and finds every line highlighted.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod io_support;

use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;
use std::sync::mpsc;
use std::time::Duration;

use io_support::*;
use serde_json::{Value, json};

#[test]
fn the_first_diff_of_a_fresh_process_is_highlighted_whole() {
    let stack = stack();
    let mut child = serve_over_stdio(&stack, &["--log-level", "debug"]).stderr(Stdio::piped()).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let stderr = BufReader::new(child.stderr.take().unwrap());
    let (said, prepared) = mpsc::channel();
    std::thread::spawn(move || {
        for line in stderr.lines().map_while(Result::ok) {
            if line.contains("grammars of the common languages prepared") {
                let _ = said.send(line);
            }
        }
    });
    // A debug build compiles grammars many times slower than a release one; the bound only ends a hung test.
    let line = prepared.recv_timeout(Duration::from_secs(300)).expect("bb said its grammars were prepared");
    eprintln!("{line}");

    let mut ask = |id: u64, method: &str, params: Value| -> Value {
        writeln!(stdin, "{}", json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})).unwrap();
        loop {
            let mut text = String::new();
            assert!(stdout.read_line(&mut text).unwrap() > 0, "bb ended");
            let v: Value = serde_json::from_str(&text).unwrap();
            if v["id"] == id {
                return v;
            }
        }
    };
    let ui = json!({"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}});
    ask(
        1,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": ui, "clientInfo": {"name": "first", "version": "1"}}),
    );
    let shown = ask(
        2,
        "tools/call",
        json!({"name": "show", "arguments": {"kind": "diff", "project": "BB", "repo": "api", "pr_id": 1}}),
    );
    let view = &shown["result"]["_meta"]["bb/view"]["diff"];
    let diffs = view["diffs"].as_array().expect("the diff view carries diffs");
    let mut lines = 0;
    for d in diffs {
        for line in
            d["hunks"].as_array().into_iter().flatten().flat_map(|h| h["lines"].as_array().into_iter().flatten())
        {
            lines += 1;
            assert_ne!(line["p"], "deadline", "{} line {line} went out plain: past the deadline", d["path"]);
        }
    }
    assert!(lines >= 20, "the diff drew its lines: {lines}");
    assert!(diffs.iter().any(|d| d["language"] == "Rust"), "{view}");
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
}
