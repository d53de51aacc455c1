//! Scale-out: two `bb ai mcp serve --http` processes behind haproxy (round robin, nothing shared)
//! answer 2026-07-28 requests (tools, `show`, the view page) whichever process gets them. Needs
//! Debian's `haproxy` (`.ci/run` installs it); without it the test says so and passes, except under
//! `CI=true`, where it fails.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// A child process killed when the test ends, however it ends.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Starts bb over HTTP on a free port; its address, from the first line bb writes on stderr.
fn bb(base_url: &str, token: &str, lb_port: u16) -> (Killed, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_bb"))
        .args(["ai", "mcp", "serve", "--http", "127.0.0.1:0", "--allow-host", &format!("127.0.0.1:{lb_port}")])
        .env("BITBUCKET_URL", base_url)
        .env("BITBUCKET_TOKEN", token)
        .env_remove("BITBUCKET_USER")
        .env_remove("BITBUCKET_PASSWORD")
        .env_remove("BB_HTTP_TOKEN")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut first = String::new();
    err.read_line(&mut first).unwrap();
    // Keep draining stderr so bb never blocks on a full pipe.
    std::thread::spawn(move || std::io::copy(&mut err, &mut std::io::sink()));
    let addr = first
        .split_whitespace()
        .find_map(|w| w.strip_prefix("http://"))
        .and_then(|w| w.strip_suffix("/mcp"))
        .unwrap_or_else(|| panic!("no URL in bb's first line: {first}"))
        .to_owned();
    (Killed(child), addr)
}

/// One 2026-07-28 POST through the load balancer: the answer's JSON and which bb served it.
fn post(lb: u16, method: &str, mut params: Value, views: bool) -> (Value, String) {
    let caps = if views {
        json!({"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}})
    } else {
        json!({})
    };
    params["_meta"] = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                             "io.modelcontextprotocol/clientCapabilities": caps});
    let name = params.get("name").or_else(|| params.get("uri")).and_then(Value::as_str).map(str::to_owned);
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string();
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{lb}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: {method}\r\n"
    );
    if let Some(name) = name {
        head.push_str(&format!("Mcp-Name: {name}\r\n"));
    }
    head.push_str(&format!("Content-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len()));
    let mut s = TcpStream::connect(("127.0.0.1", lb)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s.write_all(head.as_bytes()).unwrap();
    let mut raw = String::new();
    s.read_to_string(&mut raw).unwrap();
    let (headers, rest) = raw.split_once("\r\n\r\n").unwrap_or_else(|| panic!("no answer: {raw}"));
    assert!(headers.starts_with("HTTP/1.1 200"), "{raw}");
    let served = headers
        .lines()
        .find_map(|l| l.strip_prefix("x-served-by: ").or_else(|| l.strip_prefix("X-Served-By: ")))
        .unwrap_or_else(|| panic!("no X-Served-By: {headers}"))
        .to_owned();
    // The body is JSON, or SSE whose last data line is the answer.
    let json = rest.lines().rev().find_map(|l| l.strip_prefix("data: ")).unwrap_or(rest);
    let json = if json.starts_with('{') { json } else { rest.lines().find(|l| l.starts_with('{')).unwrap_or(rest) };
    (serde_json::from_str(json).unwrap_or_else(|e| panic!("not JSON ({e}): {rest}")), served)
}

fn haproxy() -> Option<String> {
    let found = Command::new("sh").args(["-c", "command -v haproxy"]).output().ok()?;
    found.status.success().then(|| String::from_utf8_lossy(&found.stdout).trim().to_owned())
}

#[test]
fn two_bb_processes_behind_a_round_robin_load_balancer_answer_every_stateless_request() {
    let Some(haproxy) = haproxy() else {
        assert_ne!(std::env::var("CI").as_deref(), Ok("true"), "CI must have haproxy (.ci/run installs it)");
        eprintln!("SKIPPED: haproxy is not installed (apt-get install haproxy); the scale-out test did not run");
        return;
    };
    let stack = bb_stack::Stack::start(bb_stack::StackConfig::default()).unwrap();
    let lb = free_port();
    let (_a, addr_a) = bb(&stack.base_url, &stack.token, lb);
    let (_b, addr_b) = bb(&stack.base_url, &stack.token, lb);
    let dir = std::env::temp_dir().join(format!("bb-scale-out-{}-{lb}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("haproxy.cfg");
    std::fs::write(
        &config,
        format!(
            "global\n  maxconn 256\ndefaults\n  mode http\n  timeout connect 5s\n  timeout client 30s\n  timeout server 30s\n\
             frontend mcp\n  bind 127.0.0.1:{lb}\n  default_backend bb\n\
             backend bb\n  balance roundrobin\n  http-response set-header X-Served-By %s\n\
             \x20 server a {addr_a}\n  server b {addr_b}\n"
        ),
    )
    .unwrap();
    let _lb = Killed(
        Command::new(&haproxy)
            .args(["-db", "-f"])
            .arg(&config)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let start = Instant::now();
    while TcpStream::connect(("127.0.0.1", lb)).is_err() {
        assert!(start.elapsed() < Duration::from_secs(10), "haproxy did not start");
        std::thread::sleep(Duration::from_millis(50));
    }

    let pr = json!({"project": "BB", "repo": "api", "pr_id": 1});
    let mut served = BTreeSet::new();
    let mut lists = BTreeSet::new();
    for _ in 0..3 {
        let (list, by) = post(lb, "tools/list", json!({}), false);
        served.insert(by);
        lists.insert(list["result"]["tools"].to_string());
        let (call, by) = post(lb, "tools/call", json!({"name": "get_pull_request", "arguments": pr}), false);
        served.insert(by);
        assert!(call["result"]["content"][0]["text"].as_str().unwrap().starts_with("PR #1 · OPEN"), "{call}");
        let mut show_args = pr.clone();
        show_args["kind"] = json!("pull_request");
        let (show, by) = post(lb, "tools/call", json!({"name": "show", "arguments": show_args}), true);
        served.insert(by);
        assert!(show["result"]["_meta"].is_object(), "{show}");
        assert!(show["result"].get("isError").is_none_or(|e| e == false), "{show}");
        let (unseen, by) = post(lb, "tools/call", json!({"name": "show", "arguments": show_args}), false);
        served.insert(by);
        assert!(unseen["result"]["content"][0]["text"].as_str().unwrap().contains("Nothing was shown"), "{unseen}");
        let (page, by) = post(lb, "resources/read", json!({"uri": "ui://bb/view"}), true);
        served.insert(by);
        assert_eq!(page["result"]["contents"][0]["mimeType"], "text/html;profile=mcp-app");
        assert_eq!(page["result"]["cacheScope"], "public");
    }
    assert_eq!(served, BTreeSet::from(["a".to_owned(), "b".to_owned()]), "both processes answered");
    assert_eq!(lists.len(), 1, "both list the same tools in the same order");
    let _ = std::fs::remove_dir_all(&dir);
}
