//! Raw HTTP/1.1 over loopback for the login section: a connection from a chosen 127.0.0.x address,
//! one request written, one answer read (by its `Content-Length`, its chunks, or to the close), and
//! the few pieces of an answer the login flow reads (status, a header, cookies, a form field).

use std::io::{BufRead, BufReader, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::time::Duration;

/// How long any read of this section waits before it gives up on bb.
pub const READ_TIMEOUT: Duration = Duration::from_secs(20);

/// An answer: its status, its head as sent (names as bb wrote them) and its body (de-chunked).
#[derive(Debug, Clone, Default)]
pub struct Answer {
    pub status: u16,
    pub head: String,
    pub body: String,
}

impl Answer {
    /// The value of the header `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.head
            .lines()
            .find_map(|l| l.split_once(':').filter(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.trim()))
    }

    /// The `name=value` pairs of the `Set-Cookie` headers, as a `Cookie` header sends them.
    pub fn cookies(&self) -> String {
        self.head
            .lines()
            .filter_map(|l| l.split_once(':').filter(|(k, _)| k.eq_ignore_ascii_case("set-cookie")))
            .filter_map(|(_, v)| v.trim().split(';').next().map(str::to_owned))
            .collect::<Vec<_>>()
            .join("; ")
    }

    /// Whether bb said it closes the connection after this answer.
    pub fn closes(&self) -> bool {
        self.header("connection").is_some_and(|v| v.eq_ignore_ascii_case("close"))
    }
}

/// A blocking connection to `to` from the loopback address `from` (127.0.0.1 for a person, 127.0.0.2–9
/// for attackers: to bb, each is another peer).
pub fn connect_from(from: Ipv4Addr, to: SocketAddr) -> std::io::Result<TcpStream> {
    use rustix::net::{AddressFamily, SocketType, bind, connect, socket};
    let fd = socket(AddressFamily::INET, SocketType::STREAM, None)?;
    bind(&fd, &SocketAddr::from((from, 0)))?;
    connect(&fd, &to)?;
    let s = TcpStream::from(fd);
    s.set_read_timeout(Some(READ_TIMEOUT))?;
    s.set_nodelay(true)?;
    Ok(s)
}

/// The bytes of a request to `host` (`Content-Length` always said, `Connection: close` when `close`).
pub fn request_bytes(
    host: &str,
    method: &str,
    target: &str,
    headers: &[(&str, &str)],
    body: &str,
    close: bool,
) -> Vec<u8> {
    let mut head = format!("{method} {target} HTTP/1.1\r\nHost: {host}\r\n");
    if close {
        head.push_str("Connection: close\r\n");
    }
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
    head.into_bytes()
}

/// Reads one answer from `r`: the head, then the body by its length or chunks (or to the close).
pub fn read_answer(r: &mut impl BufRead) -> std::io::Result<Answer> {
    let mut head = String::new();
    loop {
        let mut line = String::new();
        if r.read_line(&mut line)? == 0 {
            return Err(std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "closed before a whole head"));
        }
        if line == "\r\n" {
            break;
        }
        head.push_str(&line);
    }
    let status = head.split_whitespace().nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
    let mut answer = Answer { status, head, body: String::new() };
    let mut body = Vec::new();
    if answer.header("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked")) {
        loop {
            let mut size = String::new();
            r.read_line(&mut size)?;
            let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
            let mut chunk = vec![0; n + 2];
            r.read_exact(&mut chunk)?;
            if n == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..n]);
        }
    } else if let Some(n) = answer.header("content-length").and_then(|v| v.parse::<usize>().ok()) {
        body.resize(n, 0);
        r.read_exact(&mut body)?;
    } else {
        r.read_to_end(&mut body)?;
    }
    answer.body = String::from_utf8_lossy(&body).into_owned();
    Ok(answer)
}

/// One request on a fresh connection from 127.0.0.1, closed after its answer.
pub fn request(
    to: SocketAddr,
    method: &str,
    target: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> std::io::Result<Answer> {
    let mut s = connect_from(Ipv4Addr::LOCALHOST, to)?;
    s.write_all(&request_bytes(&to.to_string(), method, target, headers, body, true))?;
    read_answer(&mut BufReader::new(s))
}

/// A connection kept alive across requests from one address: opened again when bb closed it.
pub struct KeptAlive {
    from: Ipv4Addr,
    to: SocketAddr,
    stream: Option<BufReader<TcpStream>>,
    /// How many connections it opened.
    pub opened: usize,
}

impl KeptAlive {
    pub fn new(from: Ipv4Addr, to: SocketAddr) -> KeptAlive {
        KeptAlive { from, to, stream: None, opened: 0 }
    }

    /// Sends `bytes` and reads the answer; an error drops the connection (the next send opens another).
    pub fn send(&mut self, bytes: &[u8]) -> std::io::Result<Answer> {
        let answered = self.try_send(bytes);
        match &answered {
            Ok(a) if !a.closes() => {}
            _ => self.stream = None,
        }
        answered
    }

    fn try_send(&mut self, bytes: &[u8]) -> std::io::Result<Answer> {
        if self.stream.is_none() {
            self.stream = Some(BufReader::new(connect_from(self.from, self.to)?));
            self.opened += 1;
        }
        let Some(s) = self.stream.as_mut() else { unreachable!("opened above") };
        s.get_mut().write_all(bytes)?;
        read_answer(s)
    }
}

/// The value of the hidden form field `name` in a page.
pub fn field(html: &str, name: &str) -> Option<String> {
    html.split(&format!("name=\"{name}\" value=\"")).nth(1).and_then(|r| r.split('"').next()).map(str::to_owned)
}

/// The path and query of an absolute URL.
pub fn path_of(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    rest.find('/').map_or("/", |i| &rest[i..])
}

/// The query parameter `name` of a URL, its `%2F`s and `%3A`s decoded.
pub fn param(url: &str, name: &str) -> Option<String> {
    url.split_once('?')?
        .1
        .split('&')
        .find_map(|kv| kv.strip_prefix(&format!("{name}=")))
        .map(|v| v.replace("%2F", "/").replace("%3A", ":"))
}

/// `s` with the characters a query or form value cannot hold as they are percent-encoded.
pub fn encode(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}
