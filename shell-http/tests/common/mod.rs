//! Shared by the raw-socket tests: a server over bb-core's test catalogue on 127.0.0.1:0, and a
//! minimal HTTP/1.1 client that writes exactly the bytes a test wants and reads the whole answer.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bb_core::{ExposureOptions, FetchOutcome, Level, ServerConfig};
use bb_drive::{Bitbucket, Cancel, Logger, Process};
use bb_http::{HttpOptions, HttpServer, PersonalToken, Running};

/// A running server, what it logged, and its own metrics and memory budget.
pub struct TestServer {
    pub running: Running,
    pub addr: SocketAddr,
    pub logs: Arc<Mutex<Vec<String>>>,
    pub process: Process,
}

/// A Bitbucket that answers every request with 200 and `thing <path>`.
pub fn plain_fetch() -> Arc<dyn Bitbucket> {
    Arc::new(|req: bb_core::FetchRequest, _: Option<&PersonalToken>, _: &Cancel| {
        FetchOutcome::response(200, format!("thing {}", req.path))
    })
}

/// A server over the test catalogue with every tool exposed.
pub fn start(options: HttpOptions, fetch: Arc<dyn Bitbucket>) -> TestServer {
    let exposed = bb_core::testing::test_catalogue().expose(&ExposureOptions::everything()).unwrap();
    start_exposing(exposed, options, fetch)
}

/// A server over bb's own catalogue with its default toolsets, as `bb ai mcp serve --http` starts.
pub fn start_standard() -> TestServer {
    let exposed = bb_core::Catalogue::standard().expose(&ExposureOptions::default()).unwrap();
    start_exposing(exposed, HttpOptions::default(), plain_fetch())
}

fn start_exposing(exposed: Arc<bb_core::Exposed>, options: HttpOptions, fetch: Arc<dyn Bitbucket>) -> TestServer {
    let config = ServerConfig::new(exposed, "0.0.0-test");
    let logs = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&logs);
    let log = Logger::to(Some(Level::Debug), move |level: Level, line: &str| {
        sink.lock().unwrap().push(format!("{}: {line}", level.as_str()));
    });
    let process = Process::default();
    let server = HttpServer::bind("127.0.0.1:0".parse().unwrap(), options, config, &process, fetch, log).unwrap();
    let addr = server.local_addr();
    TestServer { running: server.spawn(2), addr, logs, process }
}

/// A server with default options and [`plain_fetch`].
pub fn start_default() -> TestServer {
    start(HttpOptions::default(), plain_fetch())
}

/// One answer as read off the socket.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Answer {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }

    /// The JSON messages of an SSE body's `data:` lines.
    pub fn events(&self) -> Vec<serde_json::Value> {
        self.body.lines().filter_map(|l| l.strip_prefix("data: ")).map(|d| serde_json::from_str(d).unwrap()).collect()
    }
}

/// A request to build.
pub struct Req {
    method: &'static str,
    path: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Req {
    pub fn post(body: impl Into<Vec<u8>>) -> Req {
        Req {
            method: "POST",
            path: "/mcp".into(),
            headers: vec![
                ("Content-Type".into(), "application/json".into()),
                ("Accept".into(), "application/json, text/event-stream".into()),
            ],
            body: body.into(),
        }
    }

    pub fn new(method: &'static str) -> Req {
        Req { method, path: "/mcp".into(), headers: Vec::new(), body: Vec::new() }
    }

    pub fn path(mut self, p: &str) -> Req {
        self.path = p.into();
        self
    }

    /// Sets a header, replacing one of the same name.
    pub fn header(mut self, name: &str, value: &str) -> Req {
        self.headers.retain(|(k, _)| !k.eq_ignore_ascii_case(name));
        self.headers.push((name.into(), value.into()));
        self
    }

    pub fn without(mut self, name: &str) -> Req {
        self.headers.retain(|(k, _)| !k.eq_ignore_ascii_case(name));
        self
    }

    pub fn session(self, id: &str) -> Req {
        self.header("Mcp-Session-Id", id)
    }

    /// The request's bytes, with `Host` (unless set), `Content-Length` and `Connection: close`.
    pub fn bytes(&self, addr: SocketAddr) -> Vec<u8> {
        let mut out = format!("{} {} HTTP/1.1\r\n", self.method, self.path);
        if !self.headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
            out.push_str(&format!("Host: {addr}\r\n"));
        }
        for (k, v) in &self.headers {
            out.push_str(&format!("{k}: {v}\r\n"));
        }
        out.push_str(&format!("Content-Length: {}\r\nConnection: close\r\n\r\n", self.body.len()));
        let mut bytes = out.into_bytes();
        bytes.extend_from_slice(&self.body);
        bytes
    }

    /// Sends the request on a fresh connection from the loopback address `from` (see
    /// [`connect_from`]) and reads the answer to the end.
    pub fn send_from(&self, from: std::net::Ipv4Addr, addr: SocketAddr) -> Answer {
        let mut s = connect_from(from, addr);
        s.write_all(&self.bytes(addr)).unwrap();
        read_answer(&mut s)
    }

    /// Sends the request on a fresh connection and reads the answer to the end.
    pub fn send(&self, addr: SocketAddr) -> Answer {
        let mut s = connect(addr);
        s.write_all(&self.bytes(addr)).unwrap();
        read_answer(&mut s)
    }
}

/// Sends `req` on `s` without `Connection: close`, so the connection stays open, and reads one
/// answer (by its Content-Length).
pub fn send_keep_alive(s: &mut TcpStream, addr: SocketAddr, req: &Req) -> Answer {
    let bytes = String::from_utf8(req.bytes(addr)).unwrap().replacen("Connection: close\r\n", "", 1);
    s.write_all(bytes.as_bytes()).unwrap();
    read_one(s)
}

/// Reads one answer whose body has a Content-Length, leaving the connection open.
pub fn read_one(s: &mut TcpStream) -> Answer {
    let mut raw = Vec::new();
    let mut byte = [0u8; 1];
    while !raw.ends_with(b"\r\n\r\n") {
        match s.read(&mut byte) {
            Ok(1) => raw.push(byte[0]),
            Ok(_) => panic!("the connection closed before a whole head: {:?}", String::from_utf8_lossy(&raw)),
            Err(e) => panic!("no answer in time: {e}"),
        }
    }
    let head = parse(&raw);
    let length: usize = head.header("content-length").map_or(0, |v| v.parse().unwrap());
    let mut body = vec![0u8; length];
    s.read_exact(&mut body).unwrap();
    Answer { body: String::from_utf8_lossy(&body).into_owned(), ..head }
}

/// Whether the server closed `s` (end of stream or a reset) rather than leaving it open.
pub fn closed_by_server(s: &mut TcpStream) -> bool {
    let mut buf = [0u8; 256];
    loop {
        match s.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => continue,
            Err(e) => return e.kind() == std::io::ErrorKind::ConnectionReset,
        }
    }
}

/// A connection with a read timeout, so a broken server fails the test instead of hanging it.
pub fn connect(addr: SocketAddr) -> TcpStream {
    let s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s
}

/// A connection to `addr` from the loopback address `from` (such as 127.0.0.2): to the server,
/// another peer than [`connect`]'s 127.0.0.1.
pub fn connect_from(from: std::net::Ipv4Addr, addr: SocketAddr) -> TcpStream {
    use rustix::net::{AddressFamily, SocketType, bind, connect, socket};
    let fd = socket(AddressFamily::INET, SocketType::STREAM, None).unwrap();
    bind(&fd, &SocketAddr::from((from, 0))).unwrap();
    connect(&fd, &addr).unwrap();
    let s = TcpStream::from(fd);
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s
}

/// Reads until the server closes, then parses the answer (de-chunking the body).
pub fn read_answer(s: &mut TcpStream) -> Answer {
    let mut raw = Vec::new();
    let mut buf = [0u8; 16 * 1024];
    loop {
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => raw.extend_from_slice(&buf[..n]),
            // A reset after the answer arrived still leaves the answer to read.
            Err(e) if !raw.is_empty() && e.kind() == std::io::ErrorKind::ConnectionReset => break,
            Err(e) => panic!("the server neither answered nor closed in time: {e}"),
        }
    }
    parse(&raw)
}

pub fn parse(raw: &[u8]) -> Answer {
    let text = String::from_utf8_lossy(raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or_else(|| panic!("no complete head in {text:?}"));
    let mut lines = head.lines();
    let status = lines.next().unwrap().split(' ').nth(1).unwrap().parse().unwrap();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let chunked = headers.iter().any(|(k, v)| k == "transfer-encoding" && v.contains("chunked"));
    let body = if chunked { dechunk(body) } else { body.to_owned() };
    Answer { status, headers, body }
}

fn dechunk(mut s: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = s.split_once("\r\n") {
        let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if n == 0 || rest.len() < n {
            break;
        }
        out.push_str(&rest[..n]);
        s = rest[n..].strip_prefix("\r\n").unwrap_or(&rest[n..]);
    }
    out
}

pub const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;

/// Initializes a session and returns its id.
pub fn initialize(addr: SocketAddr) -> String {
    initialize_with(addr, &[])
}

/// Initializes a session sending `headers` on both of its requests, and returns its id.
pub fn initialize_with(addr: SocketAddr, headers: &[(&str, &str)]) -> String {
    let with = |mut r: Req| {
        for (k, v) in headers {
            r = r.header(k, v);
        }
        r
    };
    let a = with(Req::post(INITIALIZE)).send(addr);
    assert_eq!(a.status, 200, "{a:?}");
    let id = a.header("mcp-session-id").expect("initialize hands out a session id").to_owned();
    let note = with(Req::post(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#))
        .session(&id)
        .header("MCP-Protocol-Version", "2025-11-25")
        .send(addr);
    assert_eq!(note.status, 202, "{note:?}");
    id
}

/// A request of `method` with `params` and id 1.
pub fn request(method: &str, params: serde_json::Value) -> String {
    serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string()
}
