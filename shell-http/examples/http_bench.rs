//! Prints bb-http's throughput and latency, and its memory with many idle sessions.
//!
//! Starts the server in-process on 127.0.0.1:0 over bb-core's test catalogue, then drives it with
//! 1, 16 and 64 keep-alive clients sending `tools/list` and a cheap `tools/call` (`echo`), a bounded
//! number of requests each, in both eras side by side: each client its own session (2025-11-25,
//! initialize first), and without sessions (2026-07-28: every request carries its `_meta` and the
//! MCP-Protocol-Version, Mcp-Method and Mcp-Name headers, and is served by a core session of its
//! own). Then it opens 1,000 initialized sessions and reads VmRSS. Last, the same stateless load at
//! 16 and 64 clients against `bb ai mcp serve --http` processes (built here with `cargo build -p bb
//! -p bb-stack`, over the stand-in `bb-stack --port 0`): one on its own, and two behind haproxy
//! (round robin, as `app/tests/scale_out.rs`), beside the in-process figures; without
//! haproxy it says so and skips only that column. Figures, not a test: run it with
//! `cargo run --release -p bb-http --example http_bench`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, TryLockError};
use std::time::{Duration, Instant};

use bb_core::{ExposureOptions, FetchOutcome, FetchRequest, ServerConfig};
use bb_drive::{Bitbucket, Cancel, Logger};
use bb_http::{HttpOptions, HttpServer, PersonalToken};

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
const TOOLS_LIST: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
const ECHO: &str =
    r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}"#;
const TOOLS_LIST_2026: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
const ECHO_2026: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;

/// One benchmarked request in both eras: the session body, and the 2026-07-28 body with its headers.
#[derive(Clone, Copy)]
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

/// The cheap call against a real bb: `show` for a client that renders no views, answered without
/// Bitbucket (bb's catalogue has no `echo`).
const SHOW_2026: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"show","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;

/// What the bb processes are sent: `tools/list` as in-process, and `show` in place of `echo`.
const BB_REQUESTS: [Request; 2] = [
    REQUESTS[0],
    Request {
        name: "tools/call",
        session: r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"show","arguments":{}}}"#,
        stateless: SHOW_2026,
        headers: "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: show\r\n",
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
    let server = HttpServer::bind(
        "127.0.0.1:0".parse().unwrap(),
        HttpOptions::default(),
        config,
        &bb_drive::Process::default(),
        bitbucket,
        Logger::new(None),
    )
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
    let mut in_process = Vec::new();
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
            in_process.push((srps, sp50, sp99));
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
    across_processes(&in_process);
}

/// The processes the bench started. The release profile aborts on panic, so no `Drop` runs then:
/// the panic hook kills them too.
static CHILDREN: Mutex<Vec<Child>> = Mutex::new(Vec::new());

fn kill_children() {
    let mut children = match CHILDREN.try_lock() {
        Ok(c) => c,
        Err(TryLockError::Poisoned(p)) => p.into_inner(),
        Err(TryLockError::WouldBlock) => return,
    };
    for mut child in children.drain(..) {
        let _ = child.kill();
        let _ = child.wait();
    }
}

/// Kills every child the bench started when dropped, however the bench ends.
struct Children;

impl Children {
    fn guard() -> Children {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            kill_children();
            default(info);
        }));
        Children
    }

    fn spawn(
        command: &mut Command,
    ) -> std::io::Result<(Option<std::process::ChildStdout>, Option<std::process::ChildStderr>)> {
        let mut child = command.spawn()?;
        let out = (child.stdout.take(), child.stderr.take());
        CHILDREN.lock().unwrap().push(child);
        Ok(out)
    }
}

impl Drop for Children {
    fn drop(&mut self) {
        kill_children();
    }
}

/// Builds bb and the stand-in in the bench's own profile; the directory they are in (the bench's
/// `target/<profile>/`).
fn build_binaries() -> Result<PathBuf, String> {
    let mut cargo = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    cargo.args(["build", "-q", "-p", "bb", "-p", "bb-stack"]).current_dir(env!("CARGO_MANIFEST_DIR"));
    if !cfg!(debug_assertions) {
        cargo.arg("--release");
    }
    let status = cargo.status().map_err(|e| format!("cannot run cargo: {e}"))?;
    if !status.success() {
        return Err(format!("cargo build -p bb -p bb-stack: {status}"));
    }
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    // target/<profile>/examples/http_bench
    exe.parent()
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .ok_or_else(|| format!("no profile directory above {}", exe.display()))
}

/// Starts `bb ai mcp serve --http 127.0.0.1:0` against the stand-in; its address, from the first
/// line bb writes on stderr.
fn start_bb(bin: &Path, base_url: &str, token: &str, lb_port: u16) -> Result<SocketAddr, String> {
    let (_, err) = Children::spawn(
        Command::new(bin.join("bb"))
            .args(["ai", "mcp", "serve", "--http", "127.0.0.1:0", "--allow-host", &format!("127.0.0.1:{lb_port}")])
            .env("BITBUCKET_URL", base_url)
            .env("BITBUCKET_TOKEN", token)
            .env_remove("BITBUCKET_USER")
            .env_remove("BITBUCKET_PASSWORD")
            .env_remove("BB_HTTP_TOKEN")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped()),
    )
    .map_err(|e| format!("cannot start bb: {e}"))?;
    let mut err = BufReader::new(err.ok_or("bb has no stderr")?);
    let mut first = String::new();
    err.read_line(&mut first).map_err(|e| e.to_string())?;
    // Keep draining stderr so bb never blocks on a full pipe.
    std::thread::spawn(move || std::io::copy(&mut err, &mut std::io::sink()));
    first
        .split_whitespace()
        .find_map(|w| w.strip_prefix("http://"))
        .and_then(|w| w.strip_suffix("/mcp"))
        .and_then(|w| w.parse().ok())
        .ok_or_else(|| format!("no address in bb's first line: {first}"))
}

fn haproxy() -> Option<String> {
    let found = Command::new("sh").args(["-c", "command -v haproxy"]).output().ok()?;
    found.status.success().then(|| String::from_utf8_lossy(&found.stdout).trim().to_owned())
}

/// haproxy on `lb` in front of `backends`, round robin; waits until it accepts connections.
fn start_haproxy(haproxy: &str, lb: u16, backends: [SocketAddr; 2]) -> Result<(), String> {
    let dir = std::env::temp_dir().join(format!("bb-http-bench-{}-{lb}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let config = dir.join("haproxy.cfg");
    let [a, b] = backends;
    std::fs::write(
        &config,
        format!(
            "global\n  maxconn 256\ndefaults\n  mode http\n  timeout connect 5s\n  timeout client 30s\n  timeout server 30s\n\
             frontend mcp\n  bind 127.0.0.1:{lb}\n  default_backend bb\n\
             backend bb\n  balance roundrobin\n  server a {a}\n  server b {b}\n"
        ),
    )
    .map_err(|e| e.to_string())?;
    let started = Children::spawn(
        Command::new(haproxy).args(["-db", "-f"]).arg(&config).stdout(Stdio::null()).stderr(Stdio::null()),
    );
    let start = Instant::now();
    let up = loop {
        if TcpStream::connect(("127.0.0.1", lb)).is_ok() {
            break Ok(());
        }
        if started.is_err() || start.elapsed() > Duration::from_secs(10) {
            break Err(format!("haproxy did not start on 127.0.0.1:{lb}"));
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let _ = std::fs::remove_dir_all(&dir);
    up
}

/// The stateless rows at 16 and 64 clients against one bb process and two behind haproxy, beside
/// `in_process` (the in-process stateless figures, in the main table's order).
fn across_processes(in_process: &[(f64, Duration, Duration)]) {
    let _children = Children::guard();
    let bin = match build_binaries() {
        Ok(bin) => bin,
        Err(e) => {
            println!("bb processes: skipped, the binaries did not build ({e})");
            return;
        }
    };
    let (out, _) = match Children::spawn(
        Command::new(bin.join("bb-stack"))
            .args(["--port", "0"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null()),
    ) {
        Ok(out) => out,
        Err(e) => {
            println!("bb processes: skipped, the stand-in did not start ({e})");
            return;
        }
    };
    let mut lines = BufReader::new(out.unwrap()).lines();
    let base_url = lines.next().unwrap().unwrap();
    let token = lines.next().unwrap().unwrap();
    // haproxy takes no port 0: a free one, found by binding 0.
    let lb = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let one = start_bb(&bin, &base_url, &token, lb).unwrap();
    let balanced = match haproxy() {
        None => {
            println!("haproxy is not installed (apt-get install haproxy): the two-process column is skipped");
            None
        }
        Some(haproxy) => {
            let two = start_bb(&bin, &base_url, &token, lb).unwrap();
            start_haproxy(&haproxy, lb, [one, two]).unwrap();
            Some(SocketAddr::from(([127, 0, 0, 1], lb)))
        }
    };
    println!(
        "stateless (2026-07-28) across processes: `bb ai mcp serve --http` over the stand-in, clients in this process; \
         in-process calls `echo` (test catalogue), bb calls `show` without views (bb's catalogue, no Bitbucket request)"
    );
    println!(
        "{:<12} {:>8} | {:>27} | {:>27} | {:>27}",
        "", "", "in-process", "one bb process", "two bb behind haproxy"
    );
    println!(
        "{:<12} {:>8} | {:>9} {:>8} {:>8} | {:>9} {:>8} {:>8} | {:>9} {:>8} {:>8}",
        "request", "clients", "req/s", "p50 µs", "p99 µs", "req/s", "p50 µs", "p99 µs", "req/s", "p50 µs", "p99 µs"
    );
    let cell = |(rps, p50, p99): (f64, Duration, Duration)| {
        format!("{rps:>9.0} {:>8} {:>8}", p50.as_micros(), p99.as_micros())
    };
    for (r, request) in BB_REQUESTS.iter().enumerate() {
        // The main table's rows are 1, 16 and 64 clients per request.
        for (i, clients) in [(1usize, 16usize), (2, 64)] {
            let per_client = 40_000 / clients;
            let single = run(one, request, true, clients, per_client);
            let two =
                balanced.map_or_else(|| format!("{:>27}", "-"), |lb| cell(run(lb, request, true, clients, per_client)));
            println!("{:<12} {clients:>8} | {} | {} | {two}", request.name, cell(in_process[r * 3 + i]), cell(single));
        }
    }
}
