//! The page server: the host page's few static files, on loopback, over plain `std::net`.
//!
//! One thread accepts; each connection gets a short-lived thread, one request, and is closed. Only
//! `GET` and `HEAD` of the known files are answered, and only to a `Host` of the bound port on
//! 127.0.0.1 or localhost (a DNS-rebinding page elsewhere gets 403).
//!
//! When the preview runs its own stack, `POST /stack/builds` and `POST /stack/comments` pass a JSON
//! body on to the stack's control API (`/_stack/builds`, `/_stack/comments`), so a person can set a
//! build or add a comment as another user and watch a live view follow. Only JSON from the page's
//! own origin is passed on (a form elsewhere cannot send JSON, and another origin's fetch says so).

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

/// The host page; `__BB_MCP_URL__` and `__BB_SOURCE__` are filled in when served.
const INDEX_HTML: &str = include_str!("../page/index.html");

/// The other files, by path: (path, content type, body).
const FILES: &[(&str, &str, &str)] = &[
    ("/preview.css", "text/css; charset=utf-8", include_str!("../page/preview.css")),
    ("/el.js", "text/javascript; charset=utf-8", include_str!("../page/el.js")),
    ("/mcp.js", "text/javascript; charset=utf-8", include_str!("../page/mcp.js")),
    ("/host.js", "text/javascript; charset=utf-8", include_str!("../page/host.js")),
    ("/app.js", "text/javascript; charset=utf-8", include_str!("../page/app.js")),
];

/// The largest request head read; a longer one is refused.
const MAX_HEAD: usize = 16 * 1024;
/// The largest body passed on to the stack.
const MAX_BODY: usize = 64 * 1024;
/// The stack's control calls the page may make, by the page's path: the stack's path.
const CONTROL: &[(&str, &str)] = &[("/stack/builds", "/_stack/builds"), ("/stack/comments", "/_stack/comments")];

/// What the page is told about its surroundings.
#[derive(Debug, Clone)]
pub struct Settings {
    /// bb's MCP endpoint.
    pub mcp_url: String,
    /// Where bb reads Bitbucket, in words.
    pub bitbucket: String,
    /// The base URL of the stack this preview runs (plain HTTP on loopback), for the control calls.
    pub stack: Option<String>,
}

/// A page server running on its own thread; dropping it stops the server.
pub struct PageServer {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl PageServer {
    /// Serves the page on `listener` from a thread of its own.
    pub fn spawn(listener: TcpListener, settings: Settings) -> io::Result<PageServer> {
        let addr = listener.local_addr()?;
        let index = Arc::new(
            INDEX_HTML
                .replace("__BB_MCP_URL__", &escape_html(&settings.mcp_url))
                .replace("__BB_SOURCE__", &escape_html(&settings.bitbucket))
                .replace("__BB_STACK__", if settings.stack.is_some() { "1" } else { "" }),
        );
        let stack = Arc::new(settings.stack);
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = Arc::clone(&stop);
        let thread = std::thread::Builder::new().name("view-preview-page".into()).spawn(move || {
            for stream in listener.incoming() {
                if stopping.load(Ordering::Relaxed) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                let index = Arc::clone(&index);
                let stack = Arc::clone(&stack);
                // A failed spawn drops the connection; the browser retries.
                let _ = std::thread::Builder::new().name("view-preview-conn".into()).spawn(move || {
                    let _ = serve(stream, addr, &index, stack.as_deref());
                });
            }
        })?;
        Ok(PageServer { addr, stop, thread: Some(thread) })
    }

    /// The listener's address, with the real port when port 0 was asked for.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Blocks until the server stops (it stops only when the process ends).
    pub fn wait(mut self) {
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for PageServer {
    fn drop(&mut self) {
        let Some(thread) = self.thread.take() else { return };
        self.stop.store(true, Ordering::Relaxed);
        // Wake the accepting thread so it sees the flag.
        if TcpStream::connect_timeout(&self.addr, Duration::from_secs(1)).is_ok() {
            let _ = thread.join();
        }
    }
}

/// Answers one request on `stream` and closes it.
fn serve(mut stream: TcpStream, addr: SocketAddr, index: &str, stack: Option<&str>) -> io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    stream.set_write_timeout(Some(Duration::from_secs(10)))?;
    let Some((head, early)) = read_head(&mut stream)? else {
        return respond(&mut stream, false, 431, "text/plain; charset=utf-8", "Request head too large.\n");
    };
    let mut lines = head.split("\r\n");
    let mut start = lines.next().unwrap_or_default().split(' ');
    let (method, target) = (start.next().unwrap_or_default(), start.next().unwrap_or_default());
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_owned()))
        .collect();
    let header = |name: &str| headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str());
    let host = header("host").map(str::to_ascii_lowercase);
    let path = target.split(['?', '#']).next().unwrap_or_default();
    let head_only = method == "HEAD";
    let control = CONTROL.iter().find(|(p, _)| *p == path).map(|(_, to)| *to);
    if method == "POST" && control.is_some() {
        // Checked below with the Host, before anything is passed on.
    } else if method != "GET" && !head_only {
        return respond(&mut stream, false, 405, "text/plain; charset=utf-8", "Only GET and HEAD.\n");
    }
    let port = addr.port();
    let origins = [format!("127.0.0.1:{port}"), format!("localhost:{port}")];
    if !host.is_some_and(|h| origins.contains(&h)) {
        return respond(&mut stream, head_only, 403, "text/plain; charset=utf-8", "Unknown Host.\n");
    }
    if let (Some(to), "POST") = (control, method) {
        let own =
            header("origin").is_none_or(|o| origins.iter().any(|h| o.eq_ignore_ascii_case(&format!("http://{h}"))));
        let json = header("content-type").is_some_and(|t| t.to_ascii_lowercase().starts_with("application/json"));
        let Some(base) = stack.filter(|_| own && json) else {
            let why =
                if stack.is_none() { "This preview runs no stack.\n" } else { "Only JSON from the preview page.\n" };
            return respond(&mut stream, false, 403, "text/plain; charset=utf-8", why);
        };
        let length = header("content-length").and_then(|n| n.parse::<usize>().ok()).unwrap_or(0);
        if length > MAX_BODY {
            return respond(&mut stream, false, 413, "text/plain; charset=utf-8", "Body too large.\n");
        }
        let mut body = early;
        while body.len() < length {
            let mut buf = [0u8; 4096];
            let n = stream.read(&mut buf)?;
            if n == 0 {
                break;
            }
            body.extend_from_slice(&buf[..n]);
        }
        body.truncate(length);
        let (status, answer) = match forward(base, to, &body) {
            Ok(answer) => answer,
            Err(e) => (502, format!("{{\"message\": \"The stack did not answer: {e}\"}}")),
        };
        return respond(&mut stream, false, status, "application/json", &answer);
    }
    if path == "/" || path == "/index.html" {
        return respond(&mut stream, head_only, 200, "text/html; charset=utf-8", index);
    }
    match FILES.iter().find(|(p, ..)| *p == path) {
        Some((_, content_type, body)) => respond(&mut stream, head_only, 200, content_type, body),
        None => respond(&mut stream, head_only, 404, "text/plain; charset=utf-8", "Not found.\n"),
    }
}

/// Reads up to the blank line that ends a request head, and the body bytes read with it; `None` when
/// the head is longer than [`MAX_HEAD`].
fn read_head(stream: &mut TcpStream) -> io::Result<Option<(String, Vec<u8>)>> {
    let mut head = Vec::with_capacity(1024);
    let mut buf = [0u8; 2048];
    let mut rest = Vec::new();
    loop {
        let n = stream.read(&mut buf)?;
        if n == 0 {
            break;
        }
        head.extend_from_slice(&buf[..n]);
        if let Some(end) = head.windows(4).position(|w| w == b"\r\n\r\n") {
            rest = head.split_off(end + 4);
            head.truncate(end);
            break;
        }
        if head.len() > MAX_HEAD {
            return Ok(None);
        }
    }
    Ok(Some((String::from_utf8_lossy(&head).into_owned(), rest)))
}

/// POSTs `body` (JSON) to the stack at `base` + `path` over plain HTTP/1.1 on loopback, and answers
/// the stack's status and body.
fn forward(base: &str, path: &str, body: &[u8]) -> io::Result<(u16, String)> {
    let bad = |what: &str| io::Error::new(io::ErrorKind::InvalidData, what.to_owned());
    let rest = base.strip_prefix("http://").ok_or_else(|| bad("the stack is not plain HTTP"))?;
    let (authority, prefix) = rest.split_once('/').map_or((rest, ""), |(a, p)| (a, p));
    let mut stream = TcpStream::connect(authority)?;
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    let prefix = if prefix.is_empty() { String::new() } else { format!("/{}", prefix.trim_end_matches('/')) };
    let head = format!(
        "POST {prefix}{path} HTTP/1.1\r\nhost: {authority}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\
         connection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes())?;
    stream.write_all(body)?;
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw)?;
    let text = String::from_utf8_lossy(&raw);
    let (head, answer) = text.split_once("\r\n\r\n").ok_or_else(|| bad("no answer head"))?;
    let status = head.split(' ').nth(1).and_then(|s| s.parse().ok()).ok_or_else(|| bad("no status"))?;
    let chunked = head.to_ascii_lowercase().contains("transfer-encoding: chunked");
    Ok((status, if chunked { unchunk(answer) } else { answer.to_owned() }))
}

/// The body of a chunked answer.
fn unchunk(mut rest: &str) -> String {
    let mut out = String::new();
    while let Some((size, after)) = rest.split_once("\r\n") {
        let Ok(size) = usize::from_str_radix(size.split(';').next().unwrap_or_default().trim(), 16) else { break };
        if size == 0 || after.len() < size {
            break;
        }
        out.push_str(&after[..size]);
        rest = after[size..].trim_start_matches("\r\n");
    }
    out
}

fn respond(stream: &mut TcpStream, head_only: bool, status: u16, content_type: &str, body: &str) -> io::Result<()> {
    let reason = match status {
        200 => "OK",
        201 => "Created",
        400 => "Bad Request",
        403 => "Forbidden",
        413 => "Content Too Large",
        502 => "Bad Gateway",
        404 => "Not Found",
        405 => "Method Not Allowed",
        431 => "Request Header Fields Too Large",
        _ => "Answer",
    };
    let head = format!(
        "HTTP/1.1 {status} {reason}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\n\
         cache-control: no-store\r\nx-content-type-options: nosniff\r\nreferrer-policy: no-referrer\r\n\
         connection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes())?;
    if !head_only {
        stream.write_all(body.as_bytes())?;
    }
    stream.flush()
}

/// Escapes text for an HTML attribute or element.
fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_are_escaped_before_they_reach_the_page() {
        assert_eq!(escape_html(r#"http://x/?a=1&b="<i>'"#), "http://x/?a=1&amp;b=&quot;&lt;i&gt;&#39;");
    }

    #[test]
    fn the_page_can_show_bbs_question() {
        let file = |path: &str| FILES.iter().find(|(p, ..)| *p == path).map(|(.., body)| *body).unwrap_or_default();
        assert!(file("/mcp.js").contains("elicitation: { form: {} }"), "the client declares form elicitation");
        assert!(file("/app.js").contains("\"elicitation/create\""), "and answers bb's question");
        assert!(!file("/app.js").contains("innerHTML"), "whose message is text");
    }

    #[test]
    fn the_page_has_the_places_its_settings_fill() {
        assert!(INDEX_HTML.contains("__BB_MCP_URL__"));
        assert!(INDEX_HTML.contains("__BB_SOURCE__"));
        assert!(INDEX_HTML.contains("__BB_STACK__"));
    }
}
