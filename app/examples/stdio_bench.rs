//! Prints bb's stdio figures: cold start to the initialize answer, idle RSS, and 10,000 ping
//! round trips, each the median of repeated runs.
//!
//! Run against a release build: `cargo build --release -p bb && cargo run --release -p bb --example stdio_bench`
//! (or pass the binary: `... --example stdio_bench -- path/to/bb`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

const INIT: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}"#;

struct Bb {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    line: String,
}

impl Bb {
    fn start(bin: &str) -> Bb {
        let mut child = Command::new(bin)
            .args(["ai", "mcp", "serve", "--log-level", "off"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("bb starts");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Bb { child, stdin, stdout, line: String::new() }
    }

    fn round_trip(&mut self, message: &str) {
        self.stdin.write_all(message.as_bytes()).unwrap();
        self.stdin.write_all(b"\n").unwrap();
        self.stdin.flush().unwrap();
        self.line.clear();
        self.stdout.read_line(&mut self.line).unwrap();
        assert!(self.line.contains("\"result\""), "unexpected answer: {}", self.line);
    }

    fn rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap()
    }

    fn stop(mut self) {
        drop(self.stdin);
        self.child.wait().unwrap();
    }
}

fn median(mut xs: Vec<Duration>) -> Duration {
    xs.sort();
    xs[xs.len() / 2]
}

fn main() {
    let bin = std::env::args().nth(1).unwrap_or_else(|| "target/release/bb".into());
    let runs = 21;

    let starts: Vec<Duration> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            let mut bb = Bb::start(&bin);
            bb.round_trip(INIT);
            let d = t.elapsed();
            bb.stop();
            d
        })
        .collect();

    let mut rss = Vec::new();
    let mut pings = Vec::new();
    for _ in 0..7 {
        let mut bb = Bb::start(&bin);
        bb.round_trip(INIT);
        bb.stdin.write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n").unwrap();
        std::thread::sleep(Duration::from_millis(200));
        rss.push(bb.rss_kib());
        let t = Instant::now();
        for i in 0..10_000 {
            bb.round_trip(&format!(r#"{{"jsonrpc":"2.0","id":{i},"method":"ping"}}"#));
        }
        pings.push(t.elapsed());
        bb.stop();
    }
    rss.sort_unstable();

    println!("bb stdio bench ({bin})");
    println!(
        "cold start to initialize answer: median {:.2} ms over {runs} runs (target < 20 ms)",
        median(starts).as_secs_f64() * 1e3
    );
    println!(
        "idle RSS after initialize:       median {:.2} MiB over 7 runs (target < 15 MiB)",
        rss[rss.len() / 2] as f64 / 1024.0
    );
    let p = median(pings);
    println!(
        "10,000 ping round trips:         median {:.0} ms over 7 runs, {:.1} µs each (target < 1 s)",
        p.as_secs_f64() * 1e3,
        p.as_secs_f64() * 1e6 / 10_000.0
    );
}
