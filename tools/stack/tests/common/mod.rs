//! A tiny HTTP/1.1 client over `std::net::TcpStream` and helpers to start a stack, for the integration tests.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, dead_code)]

use bb_stack::{RunningStack, Stack, StackConfig};
use serde_json::Value;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// A response as read off the socket.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// The declared Content-Length, if any.
    pub declared_length: Option<usize>,
}

impl Reply {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&self.body)))
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

pub fn start() -> RunningStack {
    Stack::start(StackConfig::default()).expect("the stack starts")
}

/// One request on a fresh connection (`Connection: close`), read to the end.
pub fn send(
    addr: SocketAddr,
    method: &str,
    path: &str,
    auth: Option<&str>,
    body: Option<&Value>,
) -> std::io::Result<Reply> {
    send_with_timeout(addr, method, path, auth, body, Duration::from_secs(30))
}

pub fn send_with_timeout(
    addr: SocketAddr,
    method: &str,
    path: &str,
    auth: Option<&str>,
    body: Option<&Value>,
    timeout: Duration,
) -> std::io::Result<Reply> {
    let mut s = TcpStream::connect(addr)?;
    s.set_read_timeout(Some(timeout))?;
    let payload = body.map(|b| b.to_string()).unwrap_or_default();
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: {}\r\n",
        payload.len()
    );
    if let Some(a) = auth {
        head.push_str(&format!("Authorization: {a}\r\n"));
    }
    if body.is_some() {
        head.push_str("Content-Type: application/json\r\n");
    }
    head.push_str("\r\n");
    s.write_all(head.as_bytes())?;
    s.write_all(payload.as_bytes())?;
    let mut raw = Vec::new();
    s.read_to_end(&mut raw)?;
    parse(&raw)
}

fn parse(raw: &[u8]) -> std::io::Result<Reply> {
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(|| std::io::Error::other(format!("no header end in {} bytes", raw.len())))?;
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let mut lines = head.split("\r\n");
    let status = lines.next().and_then(|l| l.split(' ').nth(1)).and_then(|s| s.parse().ok()).unwrap_or(0);
    let headers: Vec<(String, String)> =
        lines.filter_map(|l| l.split_once(':')).map(|(k, v)| (k.trim().to_string(), v.trim().to_string())).collect();
    let declared_length =
        headers.iter().find(|(k, _)| k.eq_ignore_ascii_case("content-length")).and_then(|(_, v)| v.parse().ok());
    Ok(Reply { status, headers, body: raw[split + 4..].to_vec(), declared_length })
}

/// The bearer header for a token.
pub fn bearer(token: &str) -> String {
    format!("Bearer {token}")
}

/// GET as the default user; panics on socket errors.
pub fn get(stack: &RunningStack, path: &str) -> Reply {
    send(stack.addr, "GET", path, Some(&bearer(&stack.token)), None).expect("GET")
}

/// A request with a JSON body as the given user's token.
pub fn call_as(stack: &RunningStack, token: &str, method: &str, path: &str, body: &Value) -> Reply {
    send(stack.addr, method, path, Some(&bearer(token)), Some(body)).expect("request")
}

/// A request with a JSON body as the default user.
pub fn call(stack: &RunningStack, method: &str, path: &str, body: &Value) -> Reply {
    call_as(stack, &stack.token, method, path, body)
}

/// A control API request (no authentication).
pub fn control(stack: &RunningStack, method: &str, path: &str, body: &Value) -> Reply {
    send(stack.addr, method, path, None, Some(body)).expect("control request")
}

pub const PR1: &str = "/rest/api/latest/projects/BB/repos/api/pull-requests/1";

/// Waits, polling every 5 ms for at most 30 s, until `done` holds; panics naming `what` if it never does.
pub fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let start = std::time::Instant::now();
    while !done() {
        assert!(start.elapsed() < Duration::from_secs(30), "gave up waiting until {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The basic-authentication header for a user and password.
pub fn basic(user: &str, password: &str) -> String {
    format!("Basic {}", bb_stack::auth::encode_base64(format!("{user}:{password}").as_bytes()))
}
