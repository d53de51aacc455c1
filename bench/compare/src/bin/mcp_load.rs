//! A lean closed-loop load generator for MCP servers on Streamable HTTP: one thread, epoll (mio),
//! N keep-alive HTTP/1.1 connections, each sending its next request when the previous answer is
//! complete (plain JSON with a Content-Length, or `text/event-stream`, chunked: read to its last
//! chunk).
//!
//! ```text
//! mcp-load run --url http://127.0.0.1:P/mcp --request list|show --mode session|stateless
//!              [--connections 16] [--warmup 1] [--duration 5] [--pid SERVER_PID]
//! mcp-load sessions --url URL --count 64 --pid SERVER_PID      # VmRSS with COUNT open sessions
//! mcp-load dump --url URL --out FILE                           # bb's catalogue for rmcp-ref
//! ```
//!
//! `session`: each connection initializes its own session first (2025-11-25: `initialize`, then
//! `notifications/initialized`), then sends its requests with `Mcp-Session-Id` and
//! `MCP-Protocol-Version: 2025-11-25`; at the end each session is closed with DELETE.
//! `stateless`: no initialize; every request carries the 2026-07-28 `_meta`
//! (`io.modelcontextprotocol/protocolVersion` and `clientCapabilities`) and the headers
//! `MCP-Protocol-Version: 2026-07-28`, `Mcp-Method` and, for the call, `Mcp-Name`.
//!
//! `run` prints one line of `key=value` pairs: requests per second and p50/p99 latency over the
//! measured window (after the warm-up), and with `--pid` the server's CPU time (utime+stime from
//! /proc/PID/stat) per request in that window; `gen_cpu_pct` is this generator's own CPU share,
//! `answer_bytes` the size of one answer's body (de-chunked; the event stream as sent).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use mio::net::TcpStream as MioStream;
use mio::{Events, Interest, Poll, Token};

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"mcp-load","version":"1"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
const TOOLS_LIST: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
const SHOW: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"show","arguments":{}}}"#;
const TOOLS_LIST_2026: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
const SHOW_2026: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"show","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
const LIST_HEADERS_2026: &str = "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/list\r\n";
const SHOW_HEADERS_2026: &str = "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: show\r\n";

fn fail(msg: impl std::fmt::Display) -> ! {
    eprintln!("mcp-load: {msg}");
    std::process::exit(1);
}

/// `http://HOST:PORT/PATH`: the socket address, the Host header and the path.
struct Url {
    addr: SocketAddr,
    host: String,
    path: String,
}

fn parse_url(url: &str) -> Url {
    let rest = url.strip_prefix("http://").unwrap_or_else(|| fail(format!("not an http:// URL: {url}")));
    let (host, path) = rest.split_once('/').map_or((rest, "/".to_owned()), |(h, p)| (h, format!("/{p}")));
    let addr = host.parse().unwrap_or_else(|_| fail(format!("not IP:PORT: {host}")));
    Url { addr, host: host.to_owned(), path }
}

fn request_bytes(url: &Url, method: &str, body: &str, extra: &str) -> Vec<u8> {
    format!(
        "{method} {} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n{extra}\r\n{body}",
        url.path,
        url.host,
        body.len()
    )
    .into_bytes()
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Incremental parser of one HTTP/1.1 response at the start of a buffer that grows.
#[derive(Default)]
struct Parse {
    /// Length of the status line and headers with the blank line; 0 until they are all in.
    head: usize,
    scanned: usize,
    status: u16,
    length: Option<usize>,
    chunked: bool,
    /// Chunked: where the next chunk-size line starts.
    pos: usize,
    session: Option<String>,
    want_session: bool,
}

impl Parse {
    fn reset(&mut self) {
        let want_session = self.want_session;
        *self = Parse { want_session, ..Parse::default() };
    }

    /// The response's total length once it is complete in `buf`; appends the (de-chunked) body to
    /// `body` if given.
    fn feed(&mut self, buf: &[u8], mut body: Option<&mut Vec<u8>>) -> Result<Option<usize>, String> {
        if self.head == 0 {
            let from = self.scanned.saturating_sub(3);
            let Some(i) = find(&buf[from..], b"\r\n\r\n") else {
                self.scanned = buf.len();
                return Ok(None);
            };
            self.head = from + i + 4;
            let text = std::str::from_utf8(&buf[..self.head]).map_err(|_| "response head is not UTF-8")?;
            let mut lines = text.split("\r\n");
            let status_line = lines.next().unwrap_or_default();
            self.status = status_line
                .split(' ')
                .nth(1)
                .and_then(|s| s.parse().ok())
                .ok_or_else(|| format!("bad status line: {status_line:?}"))?;
            for line in lines {
                let Some((k, v)) = line.split_once(':') else { continue };
                let v = v.trim();
                if k.eq_ignore_ascii_case("content-length") {
                    self.length = Some(v.parse().map_err(|_| format!("bad content-length {v}"))?);
                } else if k.eq_ignore_ascii_case("transfer-encoding") {
                    self.chunked = v.eq_ignore_ascii_case("chunked");
                } else if self.want_session && k.eq_ignore_ascii_case("mcp-session-id") {
                    self.session = Some(v.to_owned());
                }
            }
            self.pos = self.head;
        }
        if self.chunked {
            loop {
                let Some(eol) = find(&buf[self.pos..], b"\r\n") else { return Ok(None) };
                let line = std::str::from_utf8(&buf[self.pos..self.pos + eol]).map_err(|_| "bad chunk line")?;
                let hex = line.split(';').next().unwrap_or_default().trim();
                let size = usize::from_str_radix(hex, 16).map_err(|_| format!("bad chunk size {line:?}"))?;
                let data = self.pos + eol + 2;
                if size == 0 {
                    if buf.len() < data + 2 {
                        return Ok(None);
                    }
                    if &buf[data..data + 2] == b"\r\n" {
                        return Ok(Some(data + 2));
                    }
                    return Ok(find(&buf[data..], b"\r\n\r\n").map(|i| data + i + 4));
                }
                if buf.len() < data + size + 2 {
                    return Ok(None);
                }
                if let Some(b) = body.as_deref_mut() {
                    b.extend_from_slice(&buf[data..data + size]);
                }
                self.pos = data + size + 2;
            }
        }
        let n = self.length.unwrap_or(0);
        if buf.len() < self.head + n {
            return Ok(None);
        }
        if let Some(b) = body {
            b.extend_from_slice(&buf[self.head..self.head + n]);
        }
        Ok(Some(self.head + n))
    }
}

/// A blocking exchange: status, session id (if the response names one) and the body.
fn exchange(stream: &mut TcpStream, req: &[u8]) -> (u16, Option<String>, Vec<u8>) {
    try_exchange(stream, req).unwrap_or_else(|e| fail(e))
}

fn try_exchange(stream: &mut TcpStream, req: &[u8]) -> Result<(u16, Option<String>, Vec<u8>), String> {
    stream.write_all(req).map_err(|e| format!("write: {e}"))?;
    let mut buf = Vec::new();
    let mut body = Vec::new();
    let mut parse = Parse { want_session: true, ..Parse::default() };
    let mut chunk = [0u8; 65536];
    loop {
        if parse.feed(&buf, Some(&mut body))?.is_some() {
            return Ok((parse.status, parse.session, body));
        }
        body.clear();
        parse.pos = parse.head; // the chunk cursor restarts with the body
        let n = stream.read(&mut chunk).map_err(|e| format!("read: {e}"))?;
        if n == 0 {
            return Err("the server closed the connection mid-response".into());
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

/// The JSON-RPC message with an `id` in a body that is JSON or an event stream.
fn jsonrpc(body: &[u8]) -> serde_json::Value {
    let text = String::from_utf8_lossy(body);
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) {
        return v;
    }
    for line in text.lines() {
        if let Some(data) = line.strip_prefix("data:")
            && let Ok(v) = serde_json::from_str::<serde_json::Value>(data.trim())
            && v.get("id").is_some()
        {
            return v;
        }
    }
    fail(format!("no JSON-RPC answer in {text:.300}"))
}

fn connect(url: &Url) -> TcpStream {
    let s = TcpStream::connect(url.addr).unwrap_or_else(|e| fail(format!("connect {}: {e}", url.addr)));
    s.set_nodelay(true).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s
}

/// A connection with an initialized session; its id.
fn initialized(url: &Url) -> (TcpStream, String) {
    let mut s = connect(url);
    let (status, session, body) = exchange(&mut s, &request_bytes(url, "POST", INITIALIZE, ""));
    if status != 200 {
        fail(format!("initialize: HTTP {status}: {}", String::from_utf8_lossy(&body)));
    }
    let session = session.unwrap_or_else(|| fail("initialize answered no Mcp-Session-Id"));
    let extra = session_headers(&session);
    let (status, _, _) = exchange(&mut s, &request_bytes(url, "POST", INITIALIZED, &extra));
    if status != 202 && status != 200 {
        fail(format!("notifications/initialized: HTTP {status}"));
    }
    (s, session)
}

fn session_headers(session: &str) -> String {
    format!("Mcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-11-25\r\n")
}

/// utime+stime of a process, in microseconds.
fn cpu_us(pid: &str) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = &stat[stat.rfind(')')? + 1..];
    let f: Vec<&str> = after.split_whitespace().collect();
    let ticks: u64 = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
    // SAFETY: sysconf has no preconditions.
    #[allow(unsafe_code)]
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as u64;
    Some(ticks * 1_000_000 / hz)
}

fn status_kib(pid: &str, key: &str) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    s.lines().find(|l| l.starts_with(key)).and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
}

struct Args(Vec<String>);

impl Args {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.iter().position(|a| a == key).and_then(|i| self.0.get(i + 1)).map(String::as_str)
    }
    fn num(&self, key: &str, default: f64) -> f64 {
        self.get(key).map_or(default, |v| v.parse().unwrap_or_else(|_| fail(format!("{key} {v}: not a number"))))
    }
}

fn main() {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let Some(cmd) = argv.first().cloned() else {
        fail("usage: mcp-load run|sessions|dump --url URL ... (see the source's header)")
    };
    let args = Args(argv);
    let url = parse_url(args.get("--url").unwrap_or_else(|| fail("--url http://IP:PORT/mcp")));
    match cmd.as_str() {
        "dump" => dump(&url, args.get("--out").unwrap_or_else(|| fail("--out FILE"))),
        "sessions" => sessions(&url, args.num("--count", 64.0) as usize, args.get("--pid")),
        "run" => run(&url, &args),
        other => fail(format!("unknown command {other}")),
    }
}

/// Asks a running server (bb) for its initialize result, its tools and its answer to `show {}`,
/// and writes them as one JSON file for `rmcp-ref --catalogue`.
fn dump(url: &Url, out: &str) {
    let mut s = connect(url);
    let (status, session, body) = exchange(&mut s, &request_bytes(url, "POST", INITIALIZE, ""));
    if status != 200 {
        fail(format!("initialize: HTTP {status}"));
    }
    let init = jsonrpc(&body)["result"].clone();
    let extra = session_headers(&session.unwrap_or_else(|| fail("no Mcp-Session-Id")));
    exchange(&mut s, &request_bytes(url, "POST", INITIALIZED, &extra));
    let (_, _, body) = exchange(&mut s, &request_bytes(url, "POST", TOOLS_LIST, &extra));
    let list = jsonrpc(&body);
    let tools = list["result"]["tools"].clone();
    if !tools.is_array() {
        fail(format!("tools/list answered no tools: {list}"));
    }
    let (_, _, body) = exchange(&mut s, &request_bytes(url, "POST", SHOW, &extra));
    let show = jsonrpc(&body)["result"].clone();
    let n = tools.as_array().map_or(0, Vec::len);
    let file = serde_json::json!({ "initialize": init, "tools": tools, "show": show });
    std::fs::write(out, serde_json::to_vec_pretty(&file).unwrap()).unwrap_or_else(|e| fail(format!("{out}: {e}")));
    let _ = try_exchange(&mut s, &request_bytes(url, "DELETE", "", &extra));
    println!("tools={n} out={out}");
}

/// Opens `count` initialized sessions, each on its own open connection, and prints the server's
/// VmRSS while they are open; then closes them (DELETE).
fn sessions(url: &Url, count: usize, pid: Option<&str>) {
    let mut open: Vec<(TcpStream, String)> = (0..count).map(|_| initialized(url)).collect();
    // Each session answered one cheap request: it is alive, not only minted.
    for (s, id) in &mut open {
        let (status, _, _) = exchange(s, &request_bytes(url, "POST", r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#, &session_headers(id)));
        if status != 200 {
            fail(format!("ping in a session: HTTP {status}"));
        }
    }
    std::thread::sleep(Duration::from_millis(300));
    let rss = pid.and_then(|p| status_kib(p, "VmRSS:")).unwrap_or(0);
    println!("sessions={} rss_kib={rss}", open.len());
    for (s, id) in &mut open {
        let _ = try_exchange(s, &request_bytes(url, "DELETE", "", &session_headers(id)));
    }
}

struct Conn {
    stream: MioStream,
    /// A blocking handle on the same socket, for the DELETE at the end.
    std: TcpStream,
    session: Option<String>,
    req: Vec<u8>,
    written: usize,
    buf: Vec<u8>,
    parse: Parse,
    sent: Instant,
    busy: bool,
    dead: bool,
}

impl Conn {
    /// Writes what is left of the request; false if the connection failed.
    fn write_some(&mut self) -> bool {
        while self.written < self.req.len() {
            match self.stream.write(&self.req[self.written..]) {
                Ok(0) => return false,
                Ok(n) => self.written += n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => return true,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => return false,
            }
        }
        true
    }

    fn send(&mut self) -> bool {
        self.written = 0;
        self.busy = true;
        self.sent = Instant::now();
        self.write_some()
    }
}

fn run(url: &Url, args: &Args) {
    let connections = args.num("--connections", 1.0).max(1.0) as usize;
    let warmup = Duration::from_secs_f64(args.num("--warmup", 1.0));
    let duration = Duration::from_secs_f64(args.num("--duration", 5.0));
    let stateless = match args.get("--mode").unwrap_or("session") {
        "session" => false,
        "stateless" => true,
        m => fail(format!("--mode session|stateless, not {m}")),
    };
    let (body, headers_2026) = match (args.get("--request").unwrap_or("list"), stateless) {
        ("list", false) => (TOOLS_LIST, ""),
        ("show", false) => (SHOW, ""),
        ("list", true) => (TOOLS_LIST_2026, LIST_HEADERS_2026),
        ("show", true) => (SHOW_2026, SHOW_HEADERS_2026),
        (r, _) => fail(format!("--request list|show, not {r}")),
    };
    let pid = args.get("--pid");

    // Set up every connection (and its session) blocking, check one answer, then go non-blocking.
    let poll = Poll::new().unwrap();
    let mut conns: Vec<Conn> = Vec::with_capacity(connections);
    let mut answer_bytes = 0;
    for i in 0..connections {
        let (mut s, session) = if stateless { (connect(url), None) } else {
            let (s, id) = initialized(url);
            (s, Some(id))
        };
        let extra = session.as_deref().map_or_else(|| headers_2026.to_owned(), session_headers);
        let req = request_bytes(url, "POST", body, &extra);
        if i == 0 {
            let (status, _, answer) = exchange(&mut s, &req);
            answer_bytes = answer.len();
            let v = jsonrpc(&answer);
            if status != 200 || v.get("result").is_none() {
                fail(format!("the benchmarked request failed: HTTP {status}: {:.300}", v.to_string()));
            }
        }
        let std = s.try_clone().unwrap();
        s.set_nonblocking(true).unwrap();
        let mut stream = MioStream::from_std(s);
        poll.registry().register(&mut stream, Token(i), Interest::READABLE | Interest::WRITABLE).unwrap();
        conns.push(Conn {
            stream,
            std,
            session,
            req,
            written: 0,
            buf: Vec::with_capacity(64 * 1024),
            parse: Parse::default(),
            sent: Instant::now(),
            busy: false,
            dead: false,
        });
    }
    let mut poll = poll;
    let mut events = Events::with_capacity(1024);
    let mut chunk = vec![0u8; 256 * 1024];
    let mut latencies: Vec<u64> = Vec::with_capacity(1 << 20);
    let (mut count, mut errors, mut dead) = (0u64, 0u64, 0usize);

    let t0 = Instant::now();
    let t_measure = t0 + warmup;
    let t_end = t_measure + duration;
    let t_give_up = t_end + Duration::from_secs(10);
    let (mut measuring, mut stopping) = (false, false);
    let (mut cpu0, mut self0, mut start) = (0u64, 0u64, t0);
    let (mut cpu_used, mut self_used, mut elapsed) = (0u64, 0u64, Duration::ZERO);
    for c in &mut conns {
        if !c.send() {
            c.dead = true;
        }
    }
    loop {
        let now = Instant::now();
        if !measuring && !stopping && now >= t_measure {
            measuring = true;
            start = now;
            cpu0 = pid.and_then(cpu_us).unwrap_or(0);
            self0 = cpu_us("self").unwrap_or(0);
        }
        if measuring && now >= t_end {
            measuring = false;
            stopping = true;
            elapsed = now - start;
            cpu_used = pid.and_then(cpu_us).unwrap_or(0).saturating_sub(cpu0);
            self_used = cpu_us("self").unwrap_or(0).saturating_sub(self0);
        }
        if stopping && (conns.iter().all(|c| !c.busy || c.dead) || now >= t_give_up) {
            break;
        }
        let next = if !measuring && !stopping { t_measure } else if measuring { t_end } else { t_give_up };
        poll.poll(&mut events, Some(next.saturating_duration_since(now).max(Duration::from_micros(100)))).unwrap();
        for ev in &events {
            let c = &mut conns[ev.token().0];
            if c.dead {
                continue;
            }
            if ev.is_writable() && c.busy && c.written < c.req.len() && !c.write_some() {
                c.dead = true;
                dead += 1;
                continue;
            }
            if !ev.is_readable() {
                continue;
            }
            let mut closed = false;
            loop {
                match c.stream.read(&mut chunk) {
                    Ok(0) => {
                        closed = true;
                        break;
                    }
                    Ok(n) => c.buf.extend_from_slice(&chunk[..n]),
                    Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                    Err(e) if e.kind() == ErrorKind::Interrupted => {}
                    Err(_) => {
                        closed = true;
                        break;
                    }
                }
            }
            loop {
                match c.parse.feed(&c.buf, None) {
                    Ok(Some(n)) => {
                        let done = Instant::now();
                        if measuring {
                            count += 1;
                            latencies.push((done - c.sent).as_nanos() as u64);
                            if c.parse.status != 200 {
                                errors += 1;
                            }
                        }
                        c.buf.drain(..n);
                        c.parse.reset();
                        c.busy = false;
                        if !stopping && !c.send() {
                            closed = true;
                        }
                        if c.buf.is_empty() {
                            break;
                        }
                    }
                    Ok(None) => break,
                    Err(e) => fail(e),
                }
            }
            if closed {
                c.dead = true;
                dead += 1;
            }
        }
    }
    if elapsed.is_zero() {
        fail("the run ended before its measured window did");
    }
    latencies.sort_unstable();
    let pct = |p: f64| {
        if latencies.is_empty() {
            0.0
        } else {
            latencies[((latencies.len() as f64 * p) as usize).min(latencies.len() - 1)] as f64 / 1000.0
        }
    };
    let secs = elapsed.as_secs_f64();
    let server_cpu = if pid.is_some() && count > 0 { cpu_used as f64 / count as f64 } else { 0.0 };
    println!(
        "rps={:.1} p50_us={:.1} p99_us={:.1} requests={count} errors={errors} dead={dead} server_cpu_us_per_req={server_cpu:.2} server_cpu_pct={:.1} gen_cpu_pct={:.1} seconds={secs:.3} late_ms={:.1} answer_bytes={answer_bytes}",
        count as f64 / secs,
        pct(0.50),
        pct(0.99),
        cpu_used as f64 / 1e4 / secs,
        self_used as f64 / 1e4 / secs,
        (start - t_measure).as_secs_f64() * 1e3,
    );
    // Close the sessions, as a client that is done does.
    for c in &mut conns {
        let _ = poll.registry().deregister(&mut c.stream);
        if let (Some(id), false, false) = (&c.session, c.dead, c.busy) {
            c.std.set_nonblocking(false).unwrap();
            let _ = try_exchange(&mut c.std, &request_bytes(url, "DELETE", "", &session_headers(id)));
        }
    }
}
