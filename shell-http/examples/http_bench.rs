//! Prints bb-http's throughput and latency, and its memory with many idle sessions.
//!
//! Starts the server in-process on 127.0.0.1:0 over bb-core's test catalogue, then drives it with
//! 1, 16 and 64 keep-alive clients sending `tools/list` and a cheap `tools/call` (`echo`), a bounded
//! number of requests each, in both eras side by side: each client its own session (2025-11-25,
//! initialize first), and without sessions (2026-07-28: every request carries its `_meta` and the
//! MCP-Protocol-Version, Mcp-Method and Mcp-Name headers, and is served by a core session of its
//! own). Then it opens 1,000 initialized sessions and reads VmRSS. Figures, not a test: run it with
//! `cargo run --release -p bb-http --example http_bench`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bb_core::{ExposureOptions, FetchOutcome, FetchRequest, ServerConfig};
use bb_drive::{Bitbucket, Cancel, Logger};
use bb_http::{HttpOptions, PersonalToken, Server};

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
const TOOLS_LIST: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
const ECHO: &str =
    r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}"#;
const TOOLS_LIST_2026: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
const ECHO_2026: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;

/// One benchmarked request in both eras: the session body, and the 2026-07-28 body with its headers.
struct Request {
    name: &'static str,
    session: &'static str,
    stateless: &'static str,
    headers: &'static str,
}

const REQUESTS: [Request; 2] = [
    Request {
        name: "tools/list",
        session: TOOLS_LIST,
        stateless: TOOLS_LIST_2026,
        headers: "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/list\r\n",
    },
    Request {
        name: "tools/call",
        session: ECHO,
        stateless: ECHO_2026,
        headers: "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: echo\r\n",
    },
];

/// A keep-alive HTTP/1.1 client bound to one session, or to none (2026-07-28: `headers` per request).
struct Client {
    addr: SocketAddr,
    reader: BufReader<TcpStream>,
    writer: TcpStream,
    session: Option<String>,
    headers: &'static str,
}

impl Client {
    fn connect(addr: SocketAddr) -> Client {
        let s = TcpStream::connect(addr).unwrap();
        s.set_nodelay(true).unwrap();
        Client { addr, reader: BufReader::new(s.try_clone().unwrap()), writer: s, session: None, headers: "" }
    }

    /// Sends one POST and reads its answer; returns the status.
    fn post(&mut self, body: &str) -> u16 {
        let mut req = format!(
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
            self.addr,
            body.len()
        );
        if let Some(id) = &self.session {
            req.push_str(&format!("Mcp-Session-Id: {id}\r\nMCP-Protocol-Version: 2025-11-25\r\n"));
        }
        req.push_str(self.headers);
        req.push_str("\r\n");
        req.push_str(body);
        self.writer.write_all(req.as_bytes()).unwrap();
        let mut line = String::new();
        self.reader.read_line(&mut line).unwrap();
        let status: u16 = line.split(' ').nth(1).unwrap().parse().unwrap();
        let mut length = 0usize;
        loop {
            line.clear();
            self.reader.read_line(&mut line).unwrap();
            let l = line.trim_end();
            if l.is_empty() {
                break;
            }
            let (k, v) = l.split_once(':').unwrap();
            if k.eq_ignore_ascii_case("content-length") {
                length = v.trim().parse().unwrap();
            } else if k.eq_ignore_ascii_case("mcp-session-id") {
                assert!(self.headers.is_empty(), "no session is minted for a 2026-07-28 request");
                self.session = Some(v.trim().to_owned());
            }
        }
        let mut body = vec![0u8; length];
        self.reader.read_exact(&mut body).unwrap();
        status
    }

    fn initialized(addr: SocketAddr) -> Client {
        let mut c = Client::connect(addr);
        assert_eq!(c.post(INITIALIZE), 200);
        assert_eq!(c.post(INITIALIZED), 202);
        c
    }
}

/// `clients` keep-alive clients sending `per_client` requests each, with a session (initialized
/// first) or without (`stateless`); returns requests per second and the p50 and p99 latencies.
fn run(
    addr: SocketAddr,
    request: &Request,
    stateless: bool,
    clients: usize,
    per_client: usize,
) -> (f64, Duration, Duration) {
    let connect = |_| {
        if stateless {
            let mut c = Client::connect(addr);
            c.headers = request.headers;
            c
        } else {
            Client::initialized(addr)
        }
    };
    let body = if stateless { request.stateless } else { request.session };
    let mut ready: Vec<Client> = (0..clients).map(connect).collect();
    let start = Instant::now();
    let handles: Vec<_> = ready
        .drain(..)
        .map(|mut c| {
            std::thread::spawn(move || {
                let mut lat = Vec::with_capacity(per_client);
                for _ in 0..per_client {
                    let t = Instant::now();
                    assert_eq!(c.post(body), 200);
                    lat.push(t.elapsed());
                }
                lat
            })
        })
        .collect();
    let mut all: Vec<Duration> = handles.into_iter().flat_map(|h| h.join().unwrap()).collect();
    let elapsed = start.elapsed();
    all.sort();
    let pct = |p: f64| all[((all.len() as f64 * p) as usize).min(all.len() - 1)];
    (all.len() as f64 / elapsed.as_secs_f64(), pct(0.50), pct(0.99))
}

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("VmRSS:")).map(str::to_owned))
        .and_then(|l| l.split_whitespace().nth(1).and_then(|n| n.parse().ok()))
        .unwrap_or(0)
}

fn main() {
    let exposed = bb_core::testing::test_catalogue().expose(&ExposureOptions::default()).unwrap();
    let config = ServerConfig::new(exposed, "bench");
    let bitbucket: Arc<dyn Bitbucket> =
        Arc::new(|_: FetchRequest, _: Option<&PersonalToken>, _: &Cancel| FetchOutcome::response(200, "{}"));
    let server =
        Server::bind("127.0.0.1:0".parse().unwrap(), HttpOptions::default(), config, bitbucket, Logger::new(None))
            .unwrap();
    let addr = server.local_addr();
    let threads = std::thread::available_parallelism().map_or(2, usize::from);
    let _running = server.spawn(threads);
    println!("bb-http bench on {addr}: {threads} server threads, clients in the same process");
    let before = rss_kib();
    // Each session is initialized on its own connection, which then closes: the sessions stay.
    let idle: Vec<String> = (0..1_000).filter_map(|_| Client::initialized(addr).session).collect();
    std::thread::sleep(Duration::from_millis(200));
    for id in [idle.first(), idle.last()].into_iter().flatten() {
        let mut c = Client::connect(addr);
        c.session = Some(id.clone());
        assert_eq!(c.post(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#), 200, "the idle sessions are alive");
    }
    let after = rss_kib();
    println!(
        "RSS with {} idle initialized sessions: {:.1} MiB (was {:.1} MiB before them; server and clients share the process)",
        idle.len(),
        after as f64 / 1024.0,
        before as f64 / 1024.0
    );
    println!("{:<12} {:>8} | {:>27} | {:>27}", "", "", "sessions (2025-11-25)", "stateless (2026-07-28)");
    println!(
        "{:<12} {:>8} | {:>9} {:>8} {:>8} | {:>9} {:>8} {:>8}",
        "request", "clients", "req/s", "p50 µs", "p99 µs", "req/s", "p50 µs", "p99 µs"
    );
    for request in &REQUESTS {
        for clients in [1usize, 16, 64] {
            let total = if clients == 1 { 5_000 } else { 40_000 };
            let (rps, p50, p99) = run(addr, request, false, clients, total / clients);
            let (srps, sp50, sp99) = run(addr, request, true, clients, total / clients);
            println!(
                "{:<12} {clients:>8} | {rps:>9.0} {:>8} {:>8} | {srps:>9.0} {:>8} {:>8}",
                request.name,
                p50.as_micros(),
                p99.as_micros(),
                sp50.as_micros(),
                sp99.as_micros()
            );
        }
    }
    drop(idle);
}
