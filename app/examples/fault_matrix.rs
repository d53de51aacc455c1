//! `cargo run --release -p bb --example fault_matrix [-- --write | --check]`: every tool and `show` kind
//! against every fault, one row each, as the Markdown table committed in `docs/fault-matrix.md`.
//!
//! Each row is one whole stdio session (`bb_stdio::serve`, bb's real Bitbucket client configured through
//! `bb::config::load` as a person configures bb) with one `tools/call`, against an in-process stand-in
//! (`bb-stack`) that was reset to its seed and given one fault first. A row says how many Bitbucket requests
//! the call's attempts made, the first line of the answer, which writes reached the server and whether any
//! form of the token appeared in the answer or in bb's log. Rows run on a few threads, each with its own
//! stand-in; the output depends on none of that (no times, no ports, no random ids).
//!
//! A second section (`fault_matrix/logins.rs`) runs the `bb` binary with `--oauth` under floods of anonymous
//! login traffic while a person who logged in keeps calling a tool; its rows say outcomes in words, and the
//! figures behind them go to stderr.
//!
//! With no flag the table goes to stdout; `--write` writes it to `docs/fault-matrix.md`; `--check` compares
//! it with that file and fails (exit 1) naming the rows that differ; `--full` prints whole first lines (to read
//! them, not to commit); `--logins` prints only the login section.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "fault_matrix/asking.rs"]
mod asking;
#[path = "fault_matrix/logins.rs"]
mod logins;

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bb::config::{Auth, BitbucketConfig, ConnectionFlags};
use bb_bitbucket::Client;
use bb_core::{Catalogue, ExposureOptions, FetchOutcome, FetchRequest, Method, ServerConfig};
use bb_drive::{Bitbucket, Cancel, Logger, PersonalToken, Requester};
use bb_stack::tls::StackTls;
use bb_stack::{RunningStack, Stack, StackConfig};
use serde_json::{Value, json};

/// How many rows run at once (each on its own stand-in). Rows mostly wait (retry backoff, `Retry-After`,
/// timeouts), so this is more than the cores.
const WORKERS: usize = 8;

/// The answer's first line is cut to this many characters.
const FIRST_LINE: usize = 120;

/// A fault with this count meets every request of a call, retries included.
const EVERY: u64 = 1000;

/// The request timeout of the client that meets `hang` (`BB_REQUEST_TIMEOUT`); every other has bb's default.
const HANG_TIMEOUT: &str = "1s";

/// The one request that is a read although it is a POST: the build totals of many commits at once.
const READ_BY_POST: &str = "POST /rest/build-status/latest/commits/stats";

/// What a row does to Bitbucket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Nothing: the baseline, so each subject's arguments are seen to work.
    None,
    /// This status, with Bitbucket's error JSON whose message repeats the request's `Authorization` header
    /// (the stand-in's `echo` fault), so the secret check has something to find.
    Status(u16),
    /// 429 with `Retry-After: 1`.
    RateLimited,
    /// The server never answers; the faulty client runs with `BB_REQUEST_TIMEOUT=1s`.
    Hang,
    /// The whole body's length is declared, half of it sent, then the connection closed.
    Truncated,
    /// Nothing listens on the port (a port bound and released again).
    Refused,
    /// The stand-in over HTTPS with the test CA, which bb is not told to trust.
    Tls,
}

impl Fault {
    /// Every fault of the matrix, in column order.
    pub fn all() -> Vec<Fault> {
        let mut all = vec![Fault::None];
        all.extend([401, 403, 404, 409, 414].map(Fault::Status));
        all.push(Fault::RateLimited);
        all.extend([500, 502, 503, 504].map(Fault::Status));
        all.extend([Fault::Hang, Fault::Truncated, Fault::Refused, Fault::Tls]);
        all
    }

    fn label(self) -> String {
        match self {
            Fault::None => "none".into(),
            Fault::Status(s) => s.to_string(),
            Fault::RateLimited => "429 (Retry-After: 1)".into(),
            Fault::Hang => "hang".into(),
            Fault::Truncated => "truncated body".into(),
            Fault::Refused => "connection refused".into(),
            Fault::Tls => "TLS failure".into(),
        }
    }

    /// The stand-in's fault for this row (`None` when the stand-in is untouched or not involved).
    fn control(self) -> Option<Value> {
        let mut f = match self {
            Fault::None | Fault::Refused | Fault::Tls => return None,
            Fault::Status(s) => json!({ "kind": "echo", "status": s }),
            Fault::RateLimited => json!({ "kind": "status", "status": 429, "retryAfter": 1 }),
            Fault::Hang => json!({ "kind": "hang" }),
            Fault::Truncated => json!({ "kind": "truncate" }),
        };
        f["count"] = json!(EVERY);
        Some(f)
    }

    /// A rough cost in seconds, so the slow rows start first.
    fn cost(self) -> u32 {
        match self {
            Fault::RateLimited => 4,
            Fault::Status(502..=504) | Fault::Refused | Fault::Hang => 2,
            _ => 1,
        }
    }
}

/// One tool (or `show` kind) called with arguments that work against the seed.
#[derive(Debug, Clone)]
pub struct Subject {
    /// `tool` or `show kind`, plus where the fault applies when not to every request.
    pub label: String,
    tool: String,
    /// Its arguments, when the matrix knows some (a new tool has none until it is added to `args_for`).
    pub args: Option<Value>,
    /// The request the fault meets (every attempt of it): the call's first, or the write of a tool that reads first.
    target: (Method, String),
}

const PR: &str = "/rest/api/latest/projects/BB/repos/api/pull-requests";
/// A commit the matrix posts a build result on.
const MATRIX_COMMIT: &str = "0123456789abcdef0123456789abcdef01234567";
const REPO: &str = "/rest/api/latest/projects/BB/repos/api";
/// The seed's pull request and comment with a suggestion that applies.
const SUGGESTION_PR: u64 = 11;
const SUGGESTION_COMMENT: u64 = 1019;

/// Arguments that work against the seed (core/tests/answers_snapshot.rs uses the same).
fn args_for(tool: &str) -> Option<Value> {
    let pr = |id: u64| json!({ "project": "BB", "repo": "api", "pr_id": id });
    Some(match tool {
        "get_pull_request"
        | "get_pull_request_diff"
        | "list_pr_comments"
        | "get_build_status"
        | "get_code_insights"
        | "download_file" => pr(1),
        "list_pull_requests" => json!({ "project": "BB", "repo": "api" }),
        "list_pr_tasks" => json!({ "project": "BB", "repo": "api", "pr_id": 1, "state": "OPEN" }),
        "add_pr_comment" => json!({ "project": "BB", "repo": "api", "pr_id": 3, "text": "from the fault matrix" }),
        "submit_pr_review" => json!({ "project": "BB", "repo": "api", "pr_id": 10, "action": "approve" }),
        "create_pull_request" => json!({ "project": "BB", "repo": "api", "title": "T", "from_ref": "docs/typo" }),
        "merge_pull_request" => json!({ "project": "BB", "repo": "api", "pr_id": 11, "version": 0 }),
        "list_required_builds" => pr(1),
        "show pull_request" => json!({ "kind": "pull_request", "project": "BB", "repo": "api", "pr_id": 1 }),
        "show pull_requests" => json!({ "kind": "pull_requests", "project": "BB", "repo": "api" }),
        "show diff" => json!({ "kind": "diff", "project": "BB", "repo": "api", "pr_id": 1 }),
        "show threads" => json!({ "kind": "threads", "project": "BB", "repo": "api", "pr_id": 1 }),
        "show file" => json!({ "kind": "file", "project": "BB", "repo": "api", "path": "src/lib.rs" }),
        "show compare" => {
            json!({ "kind": "compare", "project": "BB", "repo": "api", "from_ref": "feature/retry", "to_ref": "main" })
        }
        "refresh_view" => json!({ "show": { "kind": "pull_request", "project": "BB", "repo": "api", "pr_id": 1 } }),
        "show pull_request_form" => {
            json!({ "kind": "pull_request_form", "project": "BB", "repo": "api", "from_ref": "docs/typo" })
        }
        "suggest_form_values" => {
            json!({ "project": "BB", "repo": "api", "want": "commits", "from_ref": "feature/retry", "to_ref": "main" })
        }
        "update_pr_comment" => {
            json!({ "project": "BB", "repo": "api", "pr_id": 1, "comment_id": 1013, "state": "RESOLVED" })
        }
        "update_pull_request" => {
            json!({ "project": "BB", "repo": "api", "pr_id": 10, "title": "From the fault matrix" })
        }
        "decline_pull_request" => pr(10),
        "reopen_pull_request" => pr(5),
        "list_pr_commits" => pr(1),
        "search_repositories" => json!({ "name": "api" }),
        "get_repository_clone_info" => json!({ "project": "BB", "repo": "api" }),
        "set_build_status" => json!({ "project": "BB", "repo": "api", "commit": MATRIX_COMMIT, "key": "matrix",
            "state": "SUCCESSFUL", "url": "https://ci.example.invalid/matrix" }),
        "list_branches" | "list_tags" | "list_commits" => json!({ "project": "BB", "repo": "api" }),
        "get_commit" => json!({ "project": "BB", "repo": "api", "commit_id": "main" }),
        "get_file" | "blame_file" => json!({ "project": "BB", "repo": "api", "path": "src/lib.rs" }),
        "list_files" => json!({ "project": "BB", "repo": "api", "path": "src" }),
        "search_code" => json!({ "query": "retry_with_backoff" }),
        "resolve_ref" => json!({ "project": "BB", "repo": "api", "ref": "main" }),
        "compare_refs" => json!({ "project": "BB", "repo": "api", "from_ref": "feature/retry", "to_ref": "main" }),
        "create_tag" => json!({ "project": "BB", "repo": "api", "name": "matrix", "start_point": "main" }),
        "enable_auto_merge" | "disable_auto_merge" => pr(10),
        "discard_pr_review" => pr(11),
        "delete_pr_comment" => json!({ "project": "BB", "repo": "api", "pr_id": 1, "comment_id": 1013 }),
        "apply_pr_suggestion" => {
            json!({ "project": "BB", "repo": "api", "pr_id": SUGGESTION_PR, "comment_id": SUGGESTION_COMMENT })
        }
        _ => return None,
    })
}

/// The call's first request (the one every other request of the call waits for or runs beside).
fn first_request(tool: &str) -> (Method, String) {
    let get = |p: &str| (Method::Get, p.to_string());
    match tool {
        "list_pull_requests" | "show pull_requests" => get(PR),
        "get_pull_request_diff" | "show diff" => get(&format!("{PR}/1/changes")),
        "download_file" => get(&format!("{PR}/1.patch")),
        "list_pr_comments" => get(&format!("{PR}/1/activities")),
        "add_pr_comment" => (Method::Post, format!("{PR}/3/comments")),
        "submit_pr_review" => get(&format!("{PR}/10/review")),
        "discard_pr_review" => get(&format!("{PR}/11/review")),
        "delete_pr_comment" => get(&format!("{PR}/1/comments/1013")),
        "apply_pr_suggestion" => get(&format!("{PR}/{SUGGESTION_PR}")),
        "create_pull_request" => get("/rest/api/latest/projects/BB/repos/api"),
        "merge_pull_request" => (Method::Post, format!("{PR}/11/merge")),
        "update_pr_comment" => get(&format!("{PR}/1/comments/1013")),
        "update_pull_request" | "decline_pull_request" => get(&format!("{PR}/10")),
        "reopen_pull_request" => get(&format!("{PR}/5")),
        "list_pr_commits" => get(&format!("{PR}/1/commits")),
        "search_repositories" => get("/rest/api/latest/repos"),
        "get_repository_clone_info" => get("/rest/api/latest/projects/BB/repos/api"),
        "set_build_status" => {
            (Method::Post, format!("/rest/api/latest/projects/BB/repos/api/commits/{MATRIX_COMMIT}/builds"))
        }
        "list_branches" => get(&format!("{REPO}/branches")),
        "list_tags" => get(&format!("{REPO}/tags")),
        "list_commits" | "resolve_ref" => get(&format!("{REPO}/commits")),
        "get_commit" => get(&format!("{REPO}/commits/main")),
        "get_file" | "blame_file" | "show file" => get(&format!("{REPO}/browse/src/lib.rs")),
        "list_files" => get(&format!("{REPO}/browse/src")),
        "search_code" => (Method::Post, "/rest/search/latest/search".to_string()),
        "compare_refs" | "suggest_form_values" => get(&format!("{REPO}/compare/commits")),
        "show compare" => get(&format!("{REPO}/compare/changes")),
        "show pull_request_form" => get(REPO),
        "create_tag" => (Method::Post, format!("{REPO}/tags")),
        "enable_auto_merge" => get("/rest/api/latest/application-properties"),
        "disable_auto_merge" => (Method::Delete, format!("{PR}/10/auto-merge")),
        _ => get(&format!("{PR}/1")),
    }
}

/// The write of a tool that reads before it writes: a second row for it puts the fault on the write.
fn write_after_reads(tool: &str) -> Option<(Method, String)> {
    match tool {
        "submit_pr_review" => Some((Method::Put, format!("{PR}/10/review"))),
        "discard_pr_review" => Some((Method::Delete, format!("{PR}/11/review"))),
        "delete_pr_comment" => Some((Method::Delete, format!("{PR}/1/comments/1013"))),
        "apply_pr_suggestion" => {
            Some((Method::Post, format!("{PR}/{SUGGESTION_PR}/comments/{SUGGESTION_COMMENT}/apply-suggestion")))
        }
        "create_pull_request" => Some((Method::Post, PR.to_string())),
        "update_pr_comment" => Some((Method::Put, format!("{PR}/1/comments/1013"))),
        "update_pull_request" => Some((Method::Put, format!("{PR}/10"))),
        "decline_pull_request" => Some((Method::Post, format!("{PR}/10/decline"))),
        "reopen_pull_request" => Some((Method::Post, format!("{PR}/5/reopen"))),
        "enable_auto_merge" => Some((Method::Post, format!("{PR}/10/merge"))),
        _ => None,
    }
}

/// Every tool of the standard catalogue (writes allowed) and every `show` kind.
pub fn subjects() -> Vec<Subject> {
    let exposed = Catalogue::standard().expose(&ExposureOptions::everything()).unwrap();
    let mut out = Vec::new();
    for t in exposed.tools() {
        let names: Vec<String> = if t.name == "show" {
            exposed.kinds().iter().map(|k| format!("show {}", k.name)).collect()
        } else {
            vec![t.name.to_string()]
        };
        for name in names {
            let tool = if name.starts_with("show ") { "show".to_string() } else { name.clone() };
            out.push(Subject {
                label: name.clone(),
                tool: tool.clone(),
                args: args_for(&name),
                target: first_request(&name),
            });
            if let Some(target) = write_after_reads(&name) {
                out.push(Subject {
                    label: format!("{name} (fault on the write)"),
                    tool,
                    args: args_for(&name),
                    target,
                });
            }
        }
    }
    out
}

/// What one row found.
#[derive(Debug, Clone)]
struct Row {
    attempts: String,
    first_line: String,
    writes: String,
    secret: String,
}

/// Servers shared by every row: the closed port and the HTTPS stand-in nobody trusts.
struct Shared {
    refused_url: String,
    tls: RunningStack,
}

/// A stand-in and the client that drives its control API.
struct Stand {
    stack: RunningStack,
    control: Client,
}

impl Stand {
    fn new() -> Stand {
        let stack = Stack::start(StackConfig::default()).expect("the stand-in starts");
        let mut config = BitbucketConfig::new(&stack.base_url, Auth::Anonymous).unwrap();
        config.retry.retries = 0;
        let control = Client::new(config).unwrap();
        Stand { stack, control }
    }

    fn control(&self, method: Method, path: &str, body: Value) -> Value {
        let request =
            FetchRequest { method, path: path.into(), query: vec![], body: Some(body), keep: None, refresh: None };
        match self.control.fetch(request, None, &Cancel::new()) {
            FetchOutcome::Response(r) if r.status < 300 => serde_json::from_slice(&r.body).unwrap(),
            other => panic!("the stand-in's control {path} failed: {other:?}"),
        }
    }

    /// The Bitbucket requests it received since its reset, by `METHOD /path`.
    fn requests(&self) -> BTreeMap<String, u64> {
        let counts = self.control(Method::Get, "/_stack/requests", Value::Null);
        let map = counts["requests"].as_object().cloned().unwrap_or_default();
        map.into_iter().map(|(k, v)| (k, v.as_u64().unwrap_or(0))).collect()
    }
}

/// A worker's two seeded stand-ins: `faulty` gets the row's fault and the call's target request, `clean`
/// serves the call's other requests.
struct Worker {
    clean: Stand,
    faulty: Stand,
}

/// The Bitbucket a row's session uses: bb's client to the faulty place for the target request, bb's client
/// to the clean stand-in for every other; it notes the attempts the faulty client says it made.
struct Routed {
    target: (Method, String),
    faulty: Client,
    clean: Client,
    attempts: Mutex<Vec<u32>>,
}

impl Routed {
    fn route(&self, request: &FetchRequest) -> bool {
        request.method == self.target.0 && request.path == self.target.1
    }

    fn note(&self, outcome: &FetchOutcome) {
        let attempts = match outcome {
            FetchOutcome::Failed(e) => e
                .detail
                .rsplit_once("(after ")
                .and_then(|(_, rest)| rest.split_once(" attempts)"))
                .and_then(|(n, _)| n.parse().ok())
                .unwrap_or(1),
            FetchOutcome::Response(_) => 1,
        };
        self.attempts.lock().unwrap().push(attempts);
    }
}

impl Bitbucket for Routed {
    fn fetch(&self, request: FetchRequest, person: Option<&PersonalToken>, cancel: &Cancel) -> FetchOutcome {
        if !self.route(&request) {
            return self.clean.fetch(request, person, cancel);
        }
        let outcome = self.faulty.fetch(request, person, cancel);
        self.note(&outcome);
        outcome
    }

    fn fetch_for(&self, request: FetchRequest, requester: Requester<'_>, cancel: &Cancel) -> FetchOutcome {
        if !self.route(&request) {
            return self.clean.fetch_for(request, requester, cancel);
        }
        let outcome = self.faulty.fetch_for(request, requester, cancel);
        self.note(&outcome);
        outcome
    }
}

/// What a session left behind: the call's answer line and bb's log.
struct Session {
    answer: Value,
    answer_text: String,
    log: String,
}

/// One stdio session: initialize (declaring the MCP Apps UI extension), one `tools/call`, end of input.
fn session(config: BitbucketConfig, bitbucket: Arc<dyn Bitbucket>, tool: &str, args: &Value) -> Session {
    let (mut to_bb, bb_in) = UnixStream::pair().unwrap();
    let (bb_out, from_bb) = UnixStream::pair().unwrap();
    let exposed = Catalogue::standard().expose(&ExposureOptions::everything()).unwrap();
    let mut server_config = ServerConfig::new(exposed, "fault-matrix");
    server_config.base_url = Some(config.base_url.clone());
    // These rows are about each write meeting Bitbucket's faults: they run with the admin's switch that turns
    // asking off (`--confirm off`). The section *Asking the person* (fault_matrix/asking.rs) answers the question.
    server_config.confirm = false;
    let log = Arc::new(Mutex::new(String::new()));
    let sink = Arc::clone(&log);
    let logger = Logger::to(Some(bb_core::Level::Debug), move |_, line| {
        let mut log = sink.lock().unwrap();
        log.push_str(line);
        log.push('\n');
    })
    .scrubbing(bb_bitbucket::secrets(&config));
    let server = std::thread::spawn(move || {
        let input = smol::Async::new(bb_in).unwrap();
        let output = smol::Async::new(bb_out).unwrap();
        smol::block_on(bb_stdio::serve(
            input,
            output,
            server_config,
            bb_drive::Process::default(),
            bitbucket,
            logger,
            bb_stdio::MAX_LINE,
        ))
    });
    from_bb.set_read_timeout(Some(Duration::from_secs(120))).unwrap();
    let mut from_bb = BufReader::new(from_bb);
    let mut send = |v: Value| writeln!(to_bb, "{v}").unwrap();
    let ui = json!({ "extensions": { "io.modelcontextprotocol/ui": { "mimeTypes": ["text/html;profile=mcp-app"] } } });
    send(json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": { "protocolVersion": "2025-11-25", "capabilities": ui, "clientInfo": { "name": "fault-matrix", "version": "1" } } }));
    send(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
    send(json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": tool, "arguments": args } }));
    let mut answer_text = String::new();
    let answer = loop {
        let mut line = String::new();
        assert!(from_bb.read_line(&mut line).unwrap() > 0, "bb ended the session without answering the call");
        let v: Value = serde_json::from_str(&line).unwrap();
        answer_text.push_str(&line);
        if v["id"] == 1 {
            break v;
        }
    };
    drop(to_bb);
    server.join().unwrap().unwrap();
    let log = log.lock().unwrap().clone();
    Session { answer, answer_text, log }
}

/// The first line of the answer in words: the result's first text, or the JSON-RPC error.
fn first_line(answer: &Value) -> String {
    if let Some(e) = answer.get("error") {
        return format!("JSON-RPC error {}: {}", e["code"], e["message"].as_str().unwrap_or(""));
    }
    let result = &answer["result"];
    let text = result["content"][0]["text"].as_str().unwrap_or("(no text)");
    let line = text.lines().next().unwrap_or("");
    let mark = if result["isError"] == true { "error: " } else { "" };
    format!("{mark}{line}")
}

/// Every form the token travels in: raw (so `Bearer <token>` too), base64, and the base64 of Basic forms.
fn secret_forms(token: &str) -> Vec<String> {
    let b64 = bb_core::base64;
    vec![
        token.to_string(),
        b64(token.as_bytes()),
        b64(format!("Bearer {token}").as_bytes()),
        b64(format!(":{token}").as_bytes()),
        b64(format!("x-token-auth:{token}").as_bytes()),
    ]
}

fn run_row(worker: &Worker, shared: &Shared, subject: &Subject, fault: Fault) -> Row {
    let Some(args) = &subject.args else {
        let none = "—".to_string();
        return Row {
            attempts: none.clone(),
            first_line: "(the fault matrix has no arguments for this tool: add them to args_for)".into(),
            writes: none.clone(),
            secret: none,
        };
    };
    for stand in [&worker.clean, &worker.faulty] {
        stand.control(Method::Post, "/_stack/reset", Value::Null);
    }
    if let Some(f) = fault.control() {
        worker.faulty.control(Method::Post, "/_stack/faults", f);
    }
    let token = worker.clean.stack.token.clone();
    let faulty_url = match fault {
        Fault::Refused => shared.refused_url.clone(),
        Fault::Tls => shared.tls.base_url.clone(),
        _ => worker.faulty.stack.base_url.clone(),
    };
    // bb's configuration as a person gives it: the URL, the token, and for the client that meets `hang` a short
    // request timeout (the clean one keeps the default, so a slow machine makes no row flaky).
    let load = |url: &str, faulty: bool| {
        let mut env: HashMap<&str, String> =
            HashMap::from([("BITBUCKET_URL", url.to_string()), ("BITBUCKET_TOKEN", token.clone())]);
        if faulty && fault == Fault::Hang {
            env.insert("BB_REQUEST_TIMEOUT", HANG_TIMEOUT.into());
        }
        bb::config::load(&ConnectionFlags::default(), &|k| env.get(k).cloned()).unwrap().unwrap()
    };
    let config = load(&worker.clean.stack.base_url, false);
    let routed = Arc::new(Routed {
        target: subject.target.clone(),
        faulty: Client::new(load(&faulty_url, true)).unwrap(),
        clean: Client::new(config.clone()).unwrap(),
        attempts: Mutex::default(),
    });
    let seen = session(config, Arc::clone(&routed) as Arc<dyn Bitbucket>, &subject.tool, args);

    // Writes: what either stand-in received. Attempts: what the faulty stand-in received (the target request,
    // every attempt of it), or for refused and TLS, where nothing is received, what bb's client reports.
    let clean = worker.clean.requests();
    let faulty = worker.faulty.requests();
    let mut writes: BTreeMap<String, u64> = BTreeMap::new();
    for (key, n) in clean.iter().chain(faulty.iter()) {
        let method = key.split(' ').next().unwrap_or("");
        if method != "GET" && key != READ_BY_POST {
            *writes.entry(method.to_string()).or_default() += n;
        }
    }
    let mut writes = if writes.is_empty() {
        "no".to_string()
    } else {
        writes.iter().map(|(m, n)| format!("{m}×{n}")).collect::<Vec<_>>().join(", ")
    };
    let attempts = match fault {
        Fault::Refused | Fault::Tls => {
            let n: u32 = routed.attempts.lock().unwrap().iter().sum();
            if subject.target.0 != Method::Get && n > 0 {
                writes = format!("{writes} ({}×{n} tried, none connected)", subject.target.0.as_str());
            }
            format!("{n} (client)")
        }
        _ => faulty.values().sum::<u64>().to_string(),
    };

    let forms = secret_forms(&token);
    let found = |text: &str| forms.iter().any(|f| text.contains(f.as_str()));
    let mut where_ = Vec::new();
    if found(&seen.answer_text) {
        where_.push("answer");
    }
    if found(&seen.log) {
        where_.push("log");
    }
    let secret = if where_.is_empty() { "no".to_string() } else { format!("**YES** ({})", where_.join(", ")) };

    let mut line = first_line(&seen.answer);
    for url in [&worker.clean.stack.base_url, &worker.faulty.stack.base_url, &shared.tls.base_url, &shared.refused_url]
    {
        line = line.replace(url.as_str(), "<bitbucket>");
        if let Some((_, host)) = url.split_once("://") {
            line = line.replace(host, "<host:port>");
        }
    }
    let max = if std::env::args().any(|a| a == "--full") { usize::MAX } else { FIRST_LINE };
    Row { attempts, first_line: cell(&cut(&line, max)), writes, secret }
}

fn cut(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max).collect();
    out.push('…');
    out
}

/// Text safe in a Markdown table cell.
fn cell(s: &str) -> String {
    s.replace('\\', "\\\\").replace('|', "\\|").replace('`', "'")
}

/// Runs every row and returns the document.
pub fn render() -> String {
    let subjects = subjects();
    let faults = Fault::all();
    let mut jobs: Vec<(usize, usize)> =
        (0..subjects.len()).flat_map(|s| (0..faults.len()).map(move |f| (s, f))).collect();
    jobs.sort_by_key(|&(s, f)| (std::cmp::Reverse(faults[f].cost()), s, f));
    let jobs = Arc::new(Mutex::new(VecDeque::from(jobs)));
    let results: Arc<Mutex<BTreeMap<(usize, usize), Row>>> = Arc::default();
    let refused_url = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", l.local_addr().unwrap())
    };
    let tls = Stack::start(StackConfig { tls: Some(StackTls::test()), ..Default::default() }).unwrap();
    let shared = Arc::new(Shared { refused_url, tls });
    let subjects = Arc::new(subjects);
    let threads: Vec<_> = (0..WORKERS)
        .map(|_| {
            let (jobs, results, shared, subjects, faults) =
                (Arc::clone(&jobs), Arc::clone(&results), Arc::clone(&shared), Arc::clone(&subjects), faults.clone());
            std::thread::spawn(move || {
                let worker = Worker { clean: Stand::new(), faulty: Stand::new() };
                loop {
                    let Some((s, f)) = jobs.lock().unwrap().pop_front() else { return };
                    let row = run_row(&worker, &shared, &subjects[s], faults[f]);
                    results.lock().unwrap().insert((s, f), row);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let results = results.lock().unwrap();
    let mut doc = String::from(HEADER);
    doc.push_str("| tool / kind | fault | attempts | answer (first line) | write reached Bitbucket | secret seen |\n");
    doc.push_str("|---|---|---|---|---|---|\n");
    for (s, subject) in subjects.iter().enumerate() {
        for (f, fault) in faults.iter().enumerate() {
            let r = &results[&(s, f)];
            doc.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} |\n",
                subject.label,
                fault.label(),
                r.attempts,
                r.first_line,
                r.writes,
                r.secret
            ));
        }
    }
    doc.push_str(&asking::render());
    doc.push_str(&logins::render());
    doc
}

const HEADER: &str = "# Fault matrix

Every tool of the standard catalogue (with `--allow-writes`, and with asking off, `--confirm off`: the section
*Asking the person* below is about the question) and every `show` kind, called once while the
Bitbucket stand-in (`tools/stack`) meets each fault. Generated by `app/examples/fault_matrix.rs`; do not
edit by hand. Regenerate with

    cargo run -p bb --example fault_matrix -- --write

(`--release` works too; the output is the same) and check it with `-- --check`: CI does, after the fuzz step.

How a row is made: two stand-ins are reset to the seed, one of them given the fault; then one whole stdio
session runs (`bb_stdio::serve`: `initialize` declaring the MCP Apps UI extension, one `tools/call`, end of
input) with bb's real Bitbucket client, configured through `bb::config::load` from `BITBUCKET_URL` and
`BITBUCKET_TOKEN` only, so with bb's defaults: 3 retries (250 ms backoff doubling, `Retry-After` honoured up to
30 s), a 30 s request timeout, retries only where they are safe (GET on 429, 502, 503, 504 and on failing to
connect; PUT and DELETE on 429, 503 and on failing to connect; POST never).

- **Where the fault applies**: to the call's first request, every attempt of it: the session's Bitbucket sends
  that one request (same method and path) through a second client to the faulty place (the faulty stand-in, the
  closed port, the untrusted HTTPS stand-in) and every other request of the call to the clean stand-in. So
  each row is decided by one request and the matrix is the same on every run (with every request faulted,
  which of a stage's parallel requests fails first, and how many of its siblings were sent, is a race). For the
  two tools that read before they write (`submit_pr_review`, `create_pull_request`) a second row, *(fault on
  the write)*, puts the fault on the write instead.
- **401 … 504** (but 429): Bitbucket's error JSON with that status whose message repeats the request's
  `Authorization` header (the stand-in's `echo` fault), as a careless server or proxy does, so the secret check
  has something to find. **429**: `Retry-After: 1`. **hang**: the server never answers; the client that
  sends the faulted request runs with `BB_REQUEST_TIMEOUT=1s`. **truncated body**: the whole length is declared, half of the body sent, the
  connection closed (the stand-in has carried out the request). **connection refused**: a 127.0.0.1 port bound
  and released. **TLS failure**: the stand-in over HTTPS with the test CA (`tools/stack/certs/`), which bb is
  not told to trust (no `BB_CA_FILE`).
- **attempts**: how many times the faulted request reached the faulty stand-in. For *connection refused* and
  *TLS failure* nothing reaches a server: the count is the one bb's client reports in its failure (`(client)`).
- **answer (first line)**: the first line of the result's text (`error:` when `isError`), cut to 120
  characters; a stand-in's address is written `<bitbucket>`, its host and port `<host:port>`.
- **write reached Bitbucket**: the POST, PUT and DELETE requests either stand-in received
  (`POST /rest/build-status/latest/commits/stats`, a read, aside).
- **secret seen**: whether the token appeared, raw (so `Bearer <token>` too) or base64-encoded (alone, as
  `Bearer <token>`, `:<token>` or `x-token-auth:<token>`), anywhere in the answer or in bb's log lines (level
  debug).

";

/// Where the committed document lives.
pub fn doc_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs/fault-matrix.md")
}

/// The rows of `now` that differ from `was` (or are missing from it), as text for a failure message.
pub fn differences(was: &str, now: &str) -> Vec<String> {
    let was_lines: BTreeSet<&str> = was.lines().collect();
    let now_lines: BTreeSet<&str> = now.lines().collect();
    let mut out: Vec<String> = now.lines().filter(|l| !was_lines.contains(l)).map(|l| format!("+ {l}")).collect();
    out.extend(was.lines().filter(|l| !now_lines.contains(l)).map(|l| format!("- {l}")));
    out
}

#[allow(dead_code)]
fn main() {
    let mode = std::env::args().nth(1).unwrap_or_default();
    let started = Instant::now();
    let doc = if mode == "--logins" { String::new() } else { render() };
    let took = started.elapsed().as_secs_f64();
    match mode.as_str() {
        "--write" => {
            std::fs::write(doc_path(), &doc).unwrap();
            eprintln!("fault matrix: wrote {} in {took:.1} s", doc_path().display());
        }
        "--check" => {
            let was = std::fs::read_to_string(doc_path()).unwrap_or_default();
            let diff = differences(&was, &doc);
            if !diff.is_empty() {
                eprintln!("docs/fault-matrix.md is not what bb does now ({took:.1} s); regenerate it with --write:");
                for d in diff {
                    eprintln!("{d}");
                }
                std::process::exit(1);
            }
            eprintln!("fault matrix: docs/fault-matrix.md holds ({took:.1} s)");
        }
        "--logins" => {
            print!("{}", logins::render());
            eprintln!("fault matrix (the login section only): {:.1} s", started.elapsed().as_secs_f64());
        }
        "" | "--full" => {
            print!("{doc}");
            eprintln!("fault matrix: {took:.1} s");
        }
        other => {
            eprintln!("fault_matrix: unknown argument {other}: use --write, --check, --full, --logins or nothing");
            std::process::exit(2);
        }
    }
}
