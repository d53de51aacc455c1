//! A view's Bitbucket requests go out in as few rounds as their dependencies allow: the stand-in adds
//! latency to every request and logs when each arrived and was answered, and the test reads the rounds
//! from that log (a request's round is one more than the latest round answered before it arrived),
//! not from the wall clock. The bb binary over stdio, with the default limits.
//!
//! | view | cold | warm (avatars cached) |
//! |---|---|---|
//! | card | 2: pull request, builds, activity, conditions, merge check · then avatars | 1 |
//! | list | 2: the page · then build stats and avatars | 2: the page · then build stats |
//! | diff | 3: pull request, changes · then each file · then avatars | 2 |
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod io_support;

use std::io::{BufRead, BufReader, Write};

use io_support::*;
use serde_json::{Value, json};

/// Added to every Bitbucket request: larger than any delay a noisy machine puts between two reads bb
/// sends at once.
const LATENCY_MS: u64 = 200;

struct Bb {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    stdout: BufReader<std::process::ChildStdout>,
    next: u64,
}

impl Bb {
    fn start(stack: &bb_stack::RunningStack) -> Bb {
        let mut child = bb_stdio(stack, &["--log-level", "off"]).spawn().unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut bb = Bb { child, stdin, stdout, next: 1 };
        let ui = json!({"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}});
        bb.ask("initialize", json!({"protocolVersion": "2025-11-25", "capabilities": ui, "clientInfo": {"name": "rounds", "version": "1"}}));
        writeln!(bb.stdin, "{}", json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).unwrap();
        bb
    }

    fn ask(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let id = self.next;
        writeln!(self.stdin, "{}", json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})).unwrap();
        loop {
            let mut line = String::new();
            assert!(self.stdout.read_line(&mut line).unwrap() > 0, "bb ended");
            let v: Value = serde_json::from_str(&line).unwrap();
            if v["id"] == id {
                return v;
            }
        }
    }

    fn show(&mut self, args: Value) {
        let answer = self.ask("tools/call", json!({"name": "show", "arguments": args}));
        assert!(answer["result"].is_object() && answer["result"]["isError"] != true, "{}", answer["result"]["content"]);
    }
}

impl Drop for Bb {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The rounds the log's requests since `since` went out in, and their paths round by round. A
/// request's round is one more than the latest round of the requests that had ended when it arrived
/// (all it could have waited for): a request that left late, but before its round's answers came, is
/// still in that round, so the machine's noise does not count as a round while bb's waiting does.
fn rounds(log: &Value, since: usize) -> Vec<Vec<String>> {
    let mut entries: Vec<(f64, f64, String)> = log.as_array().unwrap()[since..]
        .iter()
        .map(|e| {
            let start = e["startMs"].as_f64().unwrap();
            (start, e["endMs"].as_f64().unwrap_or(f64::INFINITY), e["path"].as_str().unwrap().to_owned())
        })
        .collect();
    entries.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut depth = vec![0usize; entries.len()];
    for i in 0..entries.len() {
        let before = (0..i).filter(|&j| entries[j].1 <= entries[i].0).map(|j| depth[j]).max().unwrap_or(0);
        depth[i] = before + 1;
    }
    let mut out: Vec<Vec<String>> = vec![Vec::new(); depth.iter().copied().max().unwrap_or(0)];
    for (i, (_, _, path)) in entries.into_iter().enumerate() {
        out[depth[i] - 1].push(path);
    }
    out
}

fn measure(args: Value) -> (Vec<Vec<String>>, Vec<Vec<String>>) {
    let stack = stack();
    let ctl = control_client(&stack, |_| {});
    let control = Control::new(&ctl);
    control.latency("/", LATENCY_MS);
    let mut bb = Bb::start(&stack);
    bb.show(args.clone());
    let cold_end = control.log().as_array().unwrap().len();
    let cold = rounds(&control.log(), 0);
    bb.show(args);
    let warm = rounds(&control.log(), cold_end);
    if std::env::var_os("BB_ROUNDS_DEBUG").is_some() {
        eprintln!("{:#}", control.log());
    }
    (cold, warm)
}

#[test]
fn a_card_reads_in_two_rounds_cold_and_one_warm() {
    let (cold, warm) = measure(json!({"kind": "pull_request", "project": "BB", "repo": "api", "pr_id": 1}));
    assert_eq!(cold.len(), 2, "{cold:#?}");
    assert!(cold[0].iter().any(|p| p.ends_with("/merge")), "the merge check goes with the pull request: {cold:#?}");
    // Only avatars and the source commit's Code Insights (its reports and annotations, which need the commit the pull
    // request names: no pull request path serves them [reference "Code Insights": spec]) wait for the pull request.
    let second_round = |p: &String| p.contains("/avatar") || p.starts_with("/rest/insights/");
    assert!(cold[1].iter().all(second_round), "only avatars and insights wait for the pull request: {cold:#?}");
    assert_eq!(warm.len(), 2, "the pull request, then its commit's insights: {warm:#?}");
    assert!(warm[1].iter().all(|p| p.starts_with("/rest/insights/")), "{warm:#?}");
}

#[test]
fn a_list_reads_in_two_rounds() {
    let (cold, warm) = measure(json!({"kind": "pull_requests", "project": "BB", "repo": "api"}));
    assert_eq!(cold.len(), 2, "the page, then what it names: {cold:#?}");
    assert!(
        cold[1].iter().any(|p| p.contains("/avatar")) && cold[1].iter().any(|p| p.ends_with("/stats")),
        "{cold:#?}"
    );
    assert_eq!(warm.len(), 2, "the page, then its build stats: {warm:#?}");
}

#[test]
fn a_diff_reads_every_file_in_one_round() {
    let (cold, warm) = measure(json!({"kind": "diff", "project": "BB", "repo": "api", "pr_id": 1}));
    assert_eq!(cold.len(), 3, "pull request and changes, the files, the avatars: {cold:#?}");
    assert_eq!(warm.len(), 2, "{warm:#?}");
    for rounds in [&cold, &warm] {
        // The three files' diffs, and the source commit's Code Insights reports and annotations, together.
        assert_eq!(
            rounds[1].iter().filter(|p| p.contains("/diff/")).count(),
            3,
            "the three files' diffs together: {rounds:#?}"
        );
        assert!(rounds[1].iter().all(|p| p.contains("/diff/") || p.starts_with("/rest/insights/")), "{rounds:#?}");
    }
}
