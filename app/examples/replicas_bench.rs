//! One Bitbucket user's rate budget across replicas (issue 38): 1, 2 and 3 `bb ai mcp serve --http`
//! processes with one credential, each sent `get_pull_request` in a loop by two sessions for a bounded
//! time, against the stand-in's limiter at Bitbucket's defaults (60 tokens, 5 a second); each
//! process keeping its own bucket, then all sharing one in Redis (`--rate-store`). Printed side by
//! side: calls a second, Bitbucket requests and their 429s, failed calls, and the calls' p50 and p99.
//!
//! Loopback only: the stand-in in-process, bb built in this example's profile, `redis-server` on a
//! free port (without it the shared rows are skipped). Figures, not a test:
//! `cargo run --release -p bb --example replicas_bench [-- SECONDS]` (default 15 s a row).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const SESSIONS_PER_PROCESS: usize = 2;

/// A child process killed when dropped.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Builds bb in this example's profile; the directory it is in.
fn build_bb() -> PathBuf {
    let mut cargo = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    cargo.args(["build", "-q", "-p", "bb", "--bin", "bb"]).current_dir(env!("CARGO_MANIFEST_DIR"));
    if !cfg!(debug_assertions) {
        cargo.arg("--release");
    }
    assert!(cargo.status().unwrap().success(), "cargo build -p bb failed");
    let exe = std::env::current_exe().unwrap();
    exe.parent().and_then(Path::parent).unwrap().to_path_buf()
}

/// bb on a free loopback port; its address.
fn start_bb(bin: &Path, base_url: &str, token: &str, store: Option<(&str, usize)>) -> (Killed, String) {
    let mut cmd = Command::new(bin.join("bb"));
    cmd.args(["ai", "mcp", "serve", "--http", "127.0.0.1:0"]);
    if let Some((url, replicas)) = store {
        cmd.args(["--rate-store", url, "--replicas", &replicas.to_string()]);
    }
    let mut child = cmd
        .env("BITBUCKET_URL", base_url)
        .env("BITBUCKET_TOKEN", token)
        .env_remove("BITBUCKET_USER")
        .env_remove("BITBUCKET_PASSWORD")
        .env_remove("BB_HTTP_TOKEN")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut first = String::new();
    err.read_line(&mut first).unwrap();
    std::thread::spawn(move || std::io::copy(&mut err, &mut std::io::sink()));
    let addr = first
        .split_whitespace()
        .find_map(|w| w.strip_prefix("http://"))
        .and_then(|w| w.strip_suffix("/mcp"))
        .unwrap_or_else(|| panic!("no address in bb's first line: {first}"))
        .to_owned();
    (Killed(child), addr)
}

/// One raw HTTP/1.1 request; the status and the body.
fn request(addr: &str, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> Option<(u16, String)> {
    let mut s = TcpStream::connect(addr).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(120))).ok()?;
    let mut head = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
    s.write_all(head.as_bytes()).ok()?;
    let mut raw = String::new();
    let _ = s.read_to_string(&mut raw);
    let (headers, rest) = raw.split_once("\r\n\r\n")?;
    let status = headers.split_whitespace().nth(1).and_then(|c| c.parse().ok())?;
    Some((status, rest.to_owned()))
}

/// One `get_pull_request` (2026-07-28, no session): whether it was answered with the pull request.
fn get_pull_request(addr: &str) -> bool {
    let params = json!({"name": "get_pull_request", "arguments": {"project": "BB", "repo": "api", "pr_id": 1},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}});
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}).to_string();
    let headers = [
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "get_pull_request"),
    ];
    let Some((200, rest)) = request(addr, "POST", "/mcp", &headers, &body) else { return false };
    let json = rest.lines().rev().find_map(|l| l.strip_prefix("data: ")).unwrap_or(&rest);
    let answer: Value = serde_json::from_str(json).unwrap_or(Value::Null);
    answer["result"]["isError"] != true
        && answer["result"]["content"][0]["text"].as_str().is_some_and(|t| t.starts_with("PR #1"))
}

fn stack_json(stack: &str, method: &str, path: &str, body: Value) -> Value {
    let (_, body) = request(stack, method, path, &[("Content-Type", "application/json")], &body.to_string()).unwrap();
    serde_json::from_str(&body).unwrap_or(Value::Null)
}

struct Row {
    calls: usize,
    failed: usize,
    seconds: f64,
    sent: u64,
    refused: u64,
    p50: Duration,
    p99: Duration,
}

fn run(bin: &Path, stack: &bb_stack::RunningStack, replicas: usize, store: Option<&str>, length: Duration) -> Row {
    let control = stack.addr.to_string();
    if let Some(url) = store {
        let mut c = redis::Client::open(url).unwrap().get_connection().unwrap();
        let _: () = redis::cmd("FLUSHALL").query(&mut c).unwrap();
    }
    let processes: Vec<_> =
        (0..replicas).map(|_| start_bb(bin, &stack.base_url, &stack.token, store.map(|u| (u, replicas)))).collect();
    // Every bucket full, every counter at zero.
    stack_json(&control, "POST", "/_stack/rate-limit", json!({"capacity": 60, "refill": 5}));
    stack_json(&control, "POST", "/_stack/requests/reset", json!({}));
    let times = Arc::new(Mutex::new(Vec::new()));
    let failed = Arc::new(Mutex::new(0));
    let started = Instant::now();
    let sessions: Vec<_> = processes
        .iter()
        .flat_map(|(_, addr)| std::iter::repeat_n(addr.clone(), SESSIONS_PER_PROCESS))
        .map(|addr| {
            let (times, failed) = (Arc::clone(&times), Arc::clone(&failed));
            std::thread::spawn(move || {
                while started.elapsed() < length {
                    let asked = Instant::now();
                    let ok = get_pull_request(&addr);
                    times.lock().unwrap().push(asked.elapsed());
                    if !ok {
                        *failed.lock().unwrap() += 1;
                    }
                }
            })
        })
        .collect();
    for s in sessions {
        s.join().unwrap();
    }
    let seconds = started.elapsed().as_secs_f64();
    let counters = stack_json(&control, "GET", "/_stack/requests", Value::Null);
    drop(processes);
    let mut times = std::mem::take(&mut *times.lock().unwrap());
    times.sort();
    let at = |q: f64| times.get(((times.len() as f64 * q) as usize).min(times.len().saturating_sub(1))).copied();
    let failed = *failed.lock().unwrap();
    Row {
        calls: times.len(),
        failed,
        seconds,
        sent: counters["total"].as_u64().unwrap_or(0),
        refused: counters["rateLimited"].as_u64().unwrap_or(0),
        p50: at(0.5).unwrap_or_default(),
        p99: at(0.99).unwrap_or_default(),
    }
}

fn main() {
    let length = Duration::from_secs(std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(15));
    let bin = build_bb();
    let stack = bb_stack::Stack::start(bb_stack::StackConfig::default()).unwrap();
    let redis_port = free_port();
    let redis = Command::new("redis-server")
        .args(["--port", &redis_port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .ok()
        .map(Killed);
    let url = format!("redis://127.0.0.1:{redis_port}");
    let store = redis.as_ref().and_then(|_| {
        let client = redis::Client::open(url.as_str()).ok()?;
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(10) {
            let pong = client
                .get_connection_with_timeout(Duration::from_secs(1))
                .and_then(|mut c| redis::cmd("PING").query::<String>(&mut c));
            if pong.is_ok() {
                return Some(url.as_str());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    });
    if store.is_none() {
        println!("redis-server is not installed or did not start (apt-get install redis-server): shared rows skipped");
    }
    println!(
        "one credential, the stand-in's limit 60/5, {SESSIONS_PER_PROCESS} sessions per bb process calling get_pull_request for {} s\n",
        length.as_secs()
    );
    println!(
        "{:<10} {:<16} {:>7} {:>8} {:>10} {:>8} {:>7} {:>8} {:>8}",
        "replicas", "budget", "calls", "calls/s", "Bitbucket", "429s", "failed", "p50", "p99"
    );
    for replicas in 1..=3 {
        let stores: Vec<(&str, Option<&str>)> = match store {
            Some(url) => vec![("each its own", None), ("shared (Redis)", Some(url))],
            None => vec![("each its own", None)],
        };
        for (label, store) in stores {
            let r = run(&bin, &stack, replicas, store, length);
            let share = if r.sent > 0 { 100.0 * r.refused as f64 / r.sent as f64 } else { 0.0 };
            println!(
                "{:<10} {:<16} {:>7} {:>8.2} {:>10} {:>8} {:>7} {:>7.2}s {:>7.2}s",
                replicas,
                label,
                r.calls,
                r.calls as f64 / r.seconds,
                r.sent,
                format!("{} ({share:.0}%)", r.refused),
                r.failed,
                r.p50.as_secs_f64(),
                r.p99.as_secs_f64()
            );
        }
    }
}
