//! The page server: the host page's few static files, on loopback, over plain `std::net`.
//!
//! One thread accepts; each connection gets a short-lived thread, one request, and is closed. Only
//! `GET` and `HEAD` of the known files are answered, and only to a `Host` of the bound port on
//! 127.0.0.1 or localhost (a DNS-rebinding page elsewhere gets 403).

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

/// What the page is told about its surroundings.
#[derive(Debug, Clone)]
pub struct Settings {
    /// bb's MCP endpoint.
    pub mcp_url: String,
    /// Where bb reads Bitbucket, in words.
    pub bitbucket: String,
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
                .replace("__BB_SOURCE__", &escape_html(&settings.bitbucket)),
        );
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = Arc::clone(&stop);
        let thread = std::thread::Builder::new().name("view-preview-page".into()).spawn(move || {
            for stream in listener.incoming() {
                if stopping.load(Ordering::Relaxed) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                let index = Arc::clone(&index);
                // A failed spawn drops the connection; the browser retries.
                let _ = std::thread::Builder::new().name("view-preview-conn".into()).spawn(move || {
                    let _ = serve(stream, addr, &index);
                });
            }
        })?;
        Ok(PageServer { addr, stop, thread: Some(thread) })
    }

    /// The bound address.
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
fn serve(mut stream: TcpStream, addr: SocketAddr, index: &str) -> io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    stream.set_write_timeout(Some(Duration::from_secs(10)))?;
    let Some(head) = read_head(&mut stream)? else {
        return respond(&mut stream, false, 431, "text/plain; charset=utf-8", "Request head too large.\n");
    };
    let mut lines = head.split("\r\n");
    let mut start = lines.next().unwrap_or_default().split(' ');
    let (method, target) = (start.next().unwrap_or_default(), start.next().unwrap_or_default());
    let host = lines
        .filter_map(|l| l.split_once(':'))
        .find(|(name, _)| name.trim().eq_ignore_ascii_case("host"))
        .map(|(_, value)| value.trim().to_ascii_lowercase());
    let head_only = method == "HEAD";
    if method != "GET" && !head_only {
        return respond(&mut stream, false, 405, "text/plain; charset=utf-8", "Only GET and HEAD.\n");
    }
    let port = addr.port();
    if !host.is_some_and(|h| h == format!("127.0.0.1:{port}") || h == format!("localhost:{port}")) {
        return respond(&mut stream, head_only, 403, "text/plain; charset=utf-8", "Unknown Host.\n");
    }
    let path = target.split(['?', '#']).next().unwrap_or_default();
    if path == "/" || path == "/index.html" {
        return respond(&mut stream, head_only, 200, "text/html; charset=utf-8", index);
    }
    match FILES.iter().find(|(p, ..)| *p == path) {
        Some((_, content_type, body)) => respond(&mut stream, head_only, 200, content_type, body),
        None => respond(&mut stream, head_only, 404, "text/plain; charset=utf-8", "Not found.\n"),
    }
}

/// Reads up to the blank line that ends a request head; `None` when it is longer than [`MAX_HEAD`].
fn read_head(stream: &mut TcpStream) -> io::Result<Option<String>> {
    let mut head = Vec::with_capacity(1024);
    let mut buf = [0u8; 2048];
    loop {
        let n = stream.read(&mut buf)?;
        if n == 0 {
            break;
        }
        head.extend_from_slice(&buf[..n]);
        if let Some(end) = head.windows(4).position(|w| w == b"\r\n\r\n") {
            head.truncate(end);
            break;
        }
        if head.len() > MAX_HEAD {
            return Ok(None);
        }
    }
    Ok(Some(String::from_utf8_lossy(&head).into_owned()))
}

fn respond(stream: &mut TcpStream, head_only: bool, status: u16, content_type: &str, body: &str) -> io::Result<()> {
    let reason = match status {
        200 => "OK",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        _ => "Request Header Fields Too Large",
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
    fn the_page_has_the_places_its_settings_fill() {
        assert!(INDEX_HTML.contains("__BB_MCP_URL__"));
        assert!(INDEX_HTML.contains("__BB_SOURCE__"));
    }
}
