//! A view's Bitbucket requests go out in as few rounds as their dependencies allow: the stand-in adds
//! latency to every request and logs when each arrived and was answered, and the test reads the rounds
//! from that log (a request's round is one more than the latest round answered before it arrived),
//! not from the wall clock. The bb binary over stdio, with the default limits.
//!
//! | view | cold | warm (avatars cached, the pull request's source commit remembered) |
//! |---|---|---|
//! | card | 2: pull request, builds, activity, conditions, merge check, drafts · then avatars and the source commit's Code Insights | 1: the same, with the remembered commit's Code Insights |
//! | card, pushed to between the two | 2, as the card | 2: the same, with the remembered commit's Code Insights (not drawn) · then the new commit's |
//! | list | 2: the page · then build stats and avatars | 2: the page · then build stats |
//! | diff | 3: pull request, changes, drafts · then each file and Code Insights · then avatars | 2 |
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod io_support;

use std::io::{BufRead, BufReader, Write};

use bb_bitbucket::Client;
use bb_core::Method;
use bb_drive::{Bitbucket, Cancel};
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
        let mut child = serve_over_stdio(stack, &["--log-level", "off"]).spawn().unwrap();
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

    /// Shows a view; its data.
    fn show(&mut self, args: Value) -> Value {
        let answer = self.ask("tools/call", json!({"name": "show", "arguments": args}));
        assert!(answer["result"].is_object() && answer["result"]["isError"] != true, "{}", answer["result"]["content"]);
        answer["result"]["_meta"]["bb/view"].clone()
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

/// What a view read cold and then warm: the rounds of each, and the warm view's data.
struct Measured {
    cold: Vec<Vec<String>>,
    warm: Vec<Vec<String>>,
    warm_view: Value,
}

fn measure(args: Value) -> (Vec<Vec<String>>, Vec<Vec<String>>) {
    let m = measure_with(args, |_| {}, |_| {});
    (m.cold, m.warm)
}

/// Shows `args` twice, `before` run on the stand-in before the first and `between` between the two (through
/// a client that reaches its control API and its REST API with bb's token).
fn measure_with(args: Value, before: impl FnOnce(&Client), between: impl FnOnce(&Client)) -> Measured {
    let stack = stack();
    let ctl = control_client(&stack, |_| {});
    let control = Control::new(&ctl);
    let logged = || control.log().as_array().unwrap().len();
    before(&ctl);
    control.latency("/", LATENCY_MS);
    let mut bb = Bb::start(&stack);
    let cold_start = logged();
    bb.show(args.clone());
    let cold = rounds(&control.log(), cold_start);
    between(&ctl);
    let warm_start = logged();
    let warm_view = bb.show(args);
    let warm = rounds(&control.log(), warm_start);
    if std::env::var_os("BB_ROUNDS_DEBUG").is_some() {
        eprintln!("{:#}", control.log());
    }
    Measured { cold, warm, warm_view }
}

/// Sends `method path` with `body` through `via` (bb's token) and answers its JSON.
fn send(via: &Client, method: Method, path: &str, body: Value) -> Value {
    let r = response(via.fetch(request(method, path, body), None, &Cancel::new()));
    assert!(r.status < 300, "{path}: {} {}", r.status, String::from_utf8_lossy(&r.body));
    serde_json::from_slice(&r.body).unwrap_or(Value::Null)
}

/// The person's draft on BB/api #1: a pending comment of the token's user.
fn add_draft(via: &Client) {
    let draft = json!({"project": "BB", "repo": "api", "pullRequest": 1, "text": "A draft", "state": "PENDING"});
    send(via, Method::Post, "/_stack/comments", draft);
}

/// The keys of the reports a card draws.
fn report_keys(view: &Value) -> Vec<String> {
    let reports = view["pullRequest"]["insights"]["reports"].as_array().cloned().unwrap_or_default();
    reports.iter().filter_map(|r| r["key"].as_str().map(str::to_owned)).collect()
}

fn card() -> Value {
    json!({"kind": "pull_request", "project": "BB", "repo": "api", "pr_id": 1})
}

#[test]
fn a_card_reads_in_two_rounds_cold_and_one_warm() {
    // BB/api #1's source commit has Code Insights reports in the seed; the person has a draft on it.
    let Measured { cold, warm, warm_view } = measure_with(card(), add_draft, |_| {});
    assert_eq!(cold.len(), 2, "{cold:#?}");
    assert!(cold[0].iter().any(|p| p.ends_with("/merge")), "the merge check goes with the pull request: {cold:#?}");
    // Only avatars and the source commit's Code Insights (its reports and annotations, which need the commit the pull
    // request names: no pull request path serves them [reference "Code Insights": spec]) wait for the pull request.
    let second_round = |p: &String| p.contains("/avatar") || p.starts_with("/rest/insights/");
    assert!(cold[1].iter().all(second_round), "only avatars and insights wait for the pull request: {cold:#?}");
    assert_eq!(warm.len(), 1, "the commit the last card saw has its insights read with the pull request: {warm:#?}");
    let reads = |end: &str| warm[0].iter().filter(|p| p.starts_with("/rest/insights/") && p.ends_with(end)).count();
    assert_eq!((reads("/reports"), reads("/annotations")), (1, 1), "{warm:#?}");
    for read in ["/pull-requests/1", "/pull-requests/1/review", "/merge", "/builds", "/conditions", "/activities"] {
        assert!(warm[0].iter().any(|p| p.ends_with(read)), "{read} in the one round: {warm:#?}");
    }
    assert_eq!(warm_view["pullRequest"]["drafts"]["count"], 1, "{:#}", warm_view["pullRequest"]["drafts"]);
    assert_eq!(report_keys(&warm_view), ["sonar", "security", "tests"]);
}

#[test]
fn a_card_of_a_pull_request_pushed_to_since_reads_the_new_commits_insights_in_a_second_round() {
    let mut pushed = String::new();
    let push = |via: &Client| {
        let pr = send(via, Method::Post, "/_stack/push", json!({"project": "BB", "repo": "api", "pullRequest": 1}));
        pushed = pr["fromRef"]["latestCommit"].as_str().unwrap().to_owned();
        let report = json!({"title": "Scan of the new commit", "result": "PASS"});
        send(
            via,
            Method::Put,
            &format!("/rest/insights/latest/projects/BB/repos/api/commits/{pushed}/reports/rescan"),
            report,
        );
    };
    let Measured { warm, warm_view, .. } = measure_with(card(), |_| {}, push);
    assert_eq!(
        warm.len(),
        2,
        "the remembered commit's insights with the pull request, then the new commit's: {warm:#?}"
    );
    let old_commit = |p: &&String| p.starts_with("/rest/insights/") && !p.contains(&pushed);
    assert_eq!(warm[0].iter().filter(old_commit).count(), 2, "the guess: {warm:#?}");
    assert!(warm[1].iter().all(|p| p.starts_with("/rest/insights/") && p.contains(&pushed)), "{warm:#?}");
    assert_eq!(warm[1].len(), 2, "{warm:#?}");
    assert_eq!(report_keys(&warm_view), ["rescan"], "the new commit's reports, not the old one's");
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
