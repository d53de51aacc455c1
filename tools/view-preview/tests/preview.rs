//! The preview started in-process, checked over real sockets: the host page is served, bb behind it
//! speaks MCP Apps to a client that declares the UI extension, `show` answers with view data, and
//! bb admits the page's origin for CORS.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use serde_json::{Value, json};
use view_preview::{Options, Preview, Source};

/// One answer as read off the socket (the connection is closed after it).
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    /// The JSON-RPC message of a JSON body, or of the SSE event that carries the answer.
    fn message(&self) -> Value {
        if self.header("content-type").is_some_and(|t| t.starts_with("text/event-stream")) {
            let data = self
                .body
                .lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .map(|d| serde_json::from_str::<Value>(d.trim()).unwrap())
                .find(|m| m.get("id").is_some() && m.get("method").is_none());
            return data.unwrap_or_else(|| panic!("no answer in the event stream: {}", self.body));
        }
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }
}

/// Sends one request with `Connection: close` and reads the whole answer.
fn exchange(addr: SocketAddr, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> Answer {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut request = format!("{method} {path} HTTP/1.1\r\nhost: {addr}\r\nconnection: close\r\n");
    for (k, v) in headers {
        request.push_str(&format!("{k}: {v}\r\n"));
    }
    request.push_str(&format!("content-length: {}\r\n\r\n{body}", body.len()));
    stream.write_all(request.as_bytes()).unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).unwrap();
    let text = String::from_utf8(raw).unwrap();
    let (head, rest) = text.split_once("\r\n\r\n").unwrap();
    let mut lines = head.split("\r\n");
    let status = lines.next().unwrap().split(' ').nth(1).unwrap().parse().unwrap();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let chunked = headers.iter().any(|(k, v)| k == "transfer-encoding" && v.contains("chunked"));
    let body = if chunked { unchunk(rest) } else { rest.to_owned() };
    Answer { status, headers, body }
}

fn unchunk(mut rest: &str) -> String {
    let mut out = String::new();
    while let Some((size, after)) = rest.split_once("\r\n") {
        let size = usize::from_str_radix(size.split(';').next().unwrap().trim(), 16).unwrap();
        if size == 0 {
            break;
        }
        out.push_str(&after[..size]);
        rest = &after[size + 2..];
    }
    out
}

/// A preview on free ports over its own stack, whatever the environment says.
fn preview() -> Preview {
    view_preview::start(&Options { port: 0 }, &|_| None).unwrap()
}

/// An MCP session with bb, as the page opens it: initialize with the UI extension, then initialized.
struct Mcp {
    addr: SocketAddr,
    origin: String,
    session: String,
    next_id: u64,
}

impl Mcp {
    fn open(preview: &Preview) -> (Mcp, Value) {
        let origin = format!("http://127.0.0.1:{}", preview.page_addr().port());
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}},
            "clientInfo": {"name": "preview-test", "version": "0"}}});
        let answer = exchange(
            preview.mcp_addr(),
            "POST",
            "/mcp",
            &[
                ("origin", &origin),
                ("content-type", "application/json"),
                ("accept", "application/json, text/event-stream"),
            ],
            &init.to_string(),
        );
        assert_eq!(answer.status, 200, "{}", answer.body);
        assert_eq!(answer.header("access-control-allow-origin"), Some(origin.as_str()));
        let session = answer.header("mcp-session-id").expect("a session id").to_owned();
        let mcp = Mcp { addr: preview.mcp_addr(), origin, session, next_id: 1 };
        let initialized = mcp.post(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string());
        assert_eq!(initialized.status, 202);
        (mcp, answer.message())
    }

    fn post(&self, body: &str) -> Answer {
        exchange(
            self.addr,
            "POST",
            "/mcp",
            &[
                ("origin", &self.origin),
                ("content-type", "application/json"),
                ("accept", "application/json, text/event-stream"),
                ("mcp-session-id", &self.session),
                ("mcp-protocol-version", "2025-11-25"),
            ],
            body,
        )
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let answer = self.post(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string());
        assert_eq!(answer.status, 200, "{}", answer.body);
        let message = answer.message();
        assert_eq!(message["id"], json!(id));
        message
    }
}

#[test]
fn the_host_page_and_its_scripts_are_served_on_loopback_and_name_bbs_endpoint() {
    let preview = preview();
    assert!(matches!(preview.source(), Source::Stack(_)));
    let addr = preview.page_addr();
    assert!(addr.ip().is_loopback());
    assert_eq!(preview.page_url(), format!("http://{addr}/"));

    let page = exchange(addr, "GET", "/?show=BB/api/1", &[], "");
    assert_eq!(page.status, 200);
    assert!(page.header("content-type").unwrap().starts_with("text/html"));
    assert!(page.body.contains(&format!(r#"<meta name="bb-mcp-url" content="{}">"#, preview.mcp_url())));
    for script in ["/el.js", "/mcp.js", "/host.js", "/app.js"] {
        assert!(page.body.contains(&format!(r#"<script src="{script}">"#)), "{script} is not loaded");
        let file = exchange(addr, "GET", script, &[], "");
        assert_eq!(file.status, 200, "{script}");
        assert!(file.header("content-type").unwrap().starts_with("text/javascript"), "{script}");
    }
    let host = exchange(addr, "GET", "/host.js", &[], "");
    assert!(host.body.contains(r#"sandbox: "allow-scripts""#), "the view's frame is sandboxed with scripts only");
    assert!(host.body.contains("event.source === v.frame.contentWindow"), "only the frame's messages are read");
    assert_eq!(exchange(addr, "GET", "/preview.css", &[], "").status, 200);
    assert_eq!(exchange(addr, "GET", "/nothing-here", &[], "").status, 404);
    assert_eq!(exchange(addr, "POST", "/", &[], "x").status, 405);
}

#[test]
fn the_page_server_refuses_a_host_other_than_loopback() {
    let preview = preview();
    let mut stream = TcpStream::connect(preview.page_addr()).unwrap();
    stream.write_all(b"GET / HTTP/1.1\r\nhost: evil.example.com\r\nconnection: close\r\n\r\n").unwrap();
    let mut text = String::new();
    stream.read_to_string(&mut text).unwrap();
    assert!(text.starts_with("HTTP/1.1 403"), "{text}");
}

#[test]
fn bb_answers_the_pages_initialize_with_the_ui_extension_and_serves_the_view_page() {
    let preview = preview();
    let (mut mcp, init) = Mcp::open(&preview);
    assert!(init["result"]["capabilities"]["extensions"]["io.modelcontextprotocol/ui"].is_object(), "{init}");

    let read = mcp.request("resources/read", json!({"uri": "ui://bb/view"}));
    let item = &read["result"]["contents"][0];
    assert_eq!(item["mimeType"], "text/html;profile=mcp-app");
    assert!(item["text"].as_str().unwrap().contains("<html"));
}

#[test]
fn show_through_bb_answers_a_stack_pull_request_with_its_view_data() {
    let preview = preview();
    let (mut mcp, _) = Mcp::open(&preview);
    let answer = mcp.request(
        "tools/call",
        json!({"name": "show", "arguments": {"kind": "pull_request", "project": "BB", "repo": "api", "pr_id": 1}}),
    );
    let result = &answer["result"];
    assert_ne!(result["isError"], json!(true), "{result}");
    let data = &result["_meta"]["bb/view"];
    assert_eq!(data["kind"], "pull_request", "{result}");
    assert_eq!(data["pullRequest"]["id"], 1);
    assert!(result["content"][0]["text"].as_str().is_some_and(|t| !t.is_empty()));
}

#[test]
fn bb_allows_the_pages_origin_a_cors_preflight_and_refuses_others() {
    let preview = preview();
    let port = preview.page_addr().port();
    for origin in [format!("http://127.0.0.1:{port}"), format!("http://localhost:{port}")] {
        let answer = exchange(
            preview.mcp_addr(),
            "OPTIONS",
            "/mcp",
            &[
                ("origin", &origin),
                ("access-control-request-method", "POST"),
                ("access-control-request-headers", "content-type, mcp-session-id, mcp-protocol-version"),
            ],
            "",
        );
        assert!((200..300).contains(&answer.status), "{origin}: {}", answer.status);
        assert_eq!(answer.header("access-control-allow-origin"), Some(origin.as_str()));
        let allowed = answer.header("access-control-allow-headers").unwrap_or_default();
        assert!(allowed.contains("mcp-session-id") && allowed.contains("mcp-protocol-version"), "{allowed}");
    }
    let other = exchange(
        preview.mcp_addr(),
        "OPTIONS",
        "/mcp",
        &[("origin", "http://127.0.0.1:1"), ("access-control-request-method", "POST")],
        "",
    );
    assert_eq!(other.status, 403);
}

#[test]
fn with_bitbucket_url_set_the_preview_reads_that_server_instead_of_starting_a_stack() {
    let elsewhere = bb_stack::Stack::start(bb_stack::StackConfig::default()).unwrap();
    let (url, token) = (elsewhere.base_url.clone(), elsewhere.token.clone());
    let env = move |name: &str| match name {
        "BITBUCKET_URL" => Some(url.clone()),
        "BITBUCKET_TOKEN" => Some(token.clone()),
        _ => None,
    };
    let preview = view_preview::start(&Options { port: 0 }, &env).unwrap();
    assert_eq!(preview.source(), &Source::Configured(elsewhere.base_url.clone()));
    assert_eq!(preview.stack_token(), None);
    let (mut mcp, _) = Mcp::open(&preview);
    let answer = mcp.request(
        "tools/call",
        json!({"name": "show", "arguments": {"kind": "pull_requests", "project": "BB", "repo": "cli", "state": "OPEN"}}),
    );
    assert_eq!(answer["result"]["_meta"]["bb/view"]["kind"], "pull_requests", "{answer}");
    assert!(answer["result"]["_meta"]["bb/view"]["list"]["items"].as_array().is_some_and(|items| !items.is_empty()));
}

#[test]
fn the_page_sets_a_build_and_adds_a_comment_in_the_stack_and_the_next_read_carries_them() {
    let preview = preview();
    let addr = preview.page_addr();
    let origin = format!("http://{addr}");
    let json_from = |origin: &str| [("origin", origin.to_owned()), ("content-type", "application/json".to_owned())];
    let post = |path: &str, headers: &[(&str, String)], body: &Value| {
        let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
        exchange(addr, "POST", path, &headers, &body.to_string())
    };
    let build = json!({"project": "BB", "repo": "api", "pullRequest": 1, "key": "LIVE-1", "state": "INPROGRESS"});
    let set = post("/stack/builds", &json_from(&origin), &build);
    assert_eq!(set.status, 200, "{}", set.body);
    assert!(set.body.contains("LIVE-1"), "{}", set.body);
    let comment =
        json!({"project": "BB", "repo": "api", "pullRequest": 1, "user": "carol", "text": "Seen from the preview."});
    let added = post("/stack/comments", &json_from(&origin), &comment);
    assert_eq!(added.status, 201, "{}", added.body);

    let (mut mcp, _) = Mcp::open(&preview);
    let answer = mcp.request(
        "tools/call",
        json!({"name": "show", "arguments": {"kind": "pull_request", "project": "BB", "repo": "api", "pr_id": 1}}),
    );
    let view = answer["result"]["_meta"]["bb/view"].to_string();
    assert!(view.contains("LIVE-1") && view.contains("Seen from the preview."), "{view}");

    // Only JSON from the page's own origin is passed on.
    assert_eq!(post("/stack/builds", &json_from("http://evil.example.com"), &build).status, 403);
    assert_eq!(post("/stack/builds", &[("content-type", "text/plain".to_owned())], &build).status, 403);
    assert_eq!(post("/stack/faults", &json_from(&origin), &json!({})).status, 405, "only builds and comments");
}
