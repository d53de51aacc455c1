//! What the service tests share: bb over HTTP as a child process, its stderr kept, raw HTTP/1.1
//! requests to it (one connection each, `Connection: close`), and haproxy in front of replicas.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// bb serving HTTP; killed when dropped, unless it already exited.
pub struct Bb {
    pub child: Child,
    /// `127.0.0.1:PORT`.
    pub addr: String,
    /// Everything bb wrote on stderr so far.
    pub stderr: Arc<Mutex<String>>,
}

impl Drop for Bb {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Bb {
    /// Starts `bb ai mcp serve --http 127.0.0.1:0 ARGS` against the stand-in.
    pub fn start(base_url: &str, token: &str, args: &[&str]) -> Bb {
        Bb::start_with(base_url, token, args, &[])
    }

    /// [`Bb::start`] with more environment variables.
    pub fn start_with(base_url: &str, token: &str, args: &[&str], env: &[(&str, &str)]) -> Bb {
        Bb::start_on("127.0.0.1:0", base_url, token, args, env)
    }

    /// [`Bb::start_with`] listening on `listen`.
    pub fn start_on(listen: &str, base_url: &str, token: &str, args: &[&str], env: &[(&str, &str)]) -> Bb {
        let mut child = Command::new(env!("CARGO_BIN_EXE_bb"))
            .args(["ai", "mcp", "serve", "--http", listen])
            .args(args)
            .env("BITBUCKET_URL", base_url)
            .env("BITBUCKET_TOKEN", token)
            .env_remove("BITBUCKET_USER")
            .env_remove("BITBUCKET_PASSWORD")
            .env_remove("BB_HTTP_TOKEN")
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut err = BufReader::new(child.stderr.take().unwrap());
        let mut first = String::new();
        err.read_line(&mut first).unwrap();
        let stderr = Arc::new(Mutex::new(first.clone()));
        let kept = Arc::clone(&stderr);
        std::thread::spawn(move || {
            let mut line = String::new();
            while err.read_line(&mut line).is_ok_and(|n| n > 0) {
                kept.lock().unwrap().push_str(&line);
                line.clear();
            }
        });
        // As text the URL is the first line; as JSON, its `url`.
        let url = serde_json::from_str::<Value>(&first).ok().and_then(|v| v["url"].as_str().map(str::to_owned));
        let addr = url
            .as_deref()
            .unwrap_or(&first)
            .split_whitespace()
            .find_map(|w| w.strip_prefix("http://"))
            .and_then(|w| w.strip_suffix("/mcp"))
            .unwrap_or_else(|| panic!("no URL in bb's first line: {first}"))
            .to_owned();
        Bb { child, addr, stderr }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends the signal (`TERM`, `INT`).
    pub fn signal(&self, name: &str) {
        let ok = Command::new("kill").arg(format!("-{name}")).arg(self.pid().to_string()).status().unwrap();
        assert!(ok.success());
    }

    /// Waits for bb to exit (at most `limit`); its exit code.
    pub fn exit_code(&mut self, limit: Duration) -> Option<i32> {
        let mut code = None;
        until_within("bb exited", limit, || match self.child.try_wait().unwrap() {
            Some(status) => {
                code = status.code();
                true
            }
            None => false,
        });
        code
    }
}

/// A child process killed when the test ends, however it ends.
pub struct Killed(pub Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A loopback port free when asked.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Debian's haproxy, or None after saying the test did not run (`what`); under `CI=true` its absence fails.
pub fn haproxy(what: &str) -> Option<String> {
    let found = Command::new("sh").args(["-c", "command -v haproxy"]).output().ok();
    let path = found.filter(|f| f.status.success()).map(|f| String::from_utf8_lossy(&f.stdout).trim().to_owned());
    if path.is_none() {
        assert_ne!(std::env::var("CI").as_deref(), Ok("true"), "CI must have haproxy (.ci/run installs it)");
        eprintln!("SKIPPED: haproxy is not installed (apt-get install haproxy); {what} did not run");
    }
    path
}

/// An haproxy configuration that spreads `/mcp` round robin over `replicas` from 127.0.0.1:`lb`, with
/// `backend` lines added to the backend (e.g. a header naming the server that answered); its path.
pub fn haproxy_round_robin(lb: u16, replicas: &[&Bb], backend: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("bb-haproxy-{}-{lb}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("haproxy.cfg");
    let servers: String = replicas.iter().enumerate().map(|(i, r)| format!("  server r{i} {}\n", r.addr)).collect();
    std::fs::write(
        &config,
        format!(
            "global\n  maxconn 256\ndefaults\n  mode http\n  timeout connect 5s\n  timeout client 90s\n  timeout server 90s\n\
             frontend mcp\n  bind 127.0.0.1:{lb}\n  default_backend bb\nbackend bb\n  balance roundrobin\n{backend}{servers}"
        ),
    )
    .unwrap();
    config
}

/// haproxy with `config`, once it listens on `port`.
pub fn start_haproxy(haproxy: &str, config: &Path, port: u16) -> Killed {
    let child =
        Command::new(haproxy).args(["-db", "-f"]).arg(config).stdout(Stdio::null()).stderr(Stdio::null()).spawn();
    let lb = Killed(child.unwrap());
    until("haproxy listens", || TcpStream::connect(("127.0.0.1", port)).is_ok());
    lb
}

/// Debian's redis-server, or None after saying the test did not run (`what`); under `CI=true` its absence fails.
pub fn redis_server(what: &str) -> Option<String> {
    let found = Command::new("sh").args(["-c", "command -v redis-server"]).output().ok();
    let path = found.filter(|f| f.status.success()).map(|f| String::from_utf8_lossy(&f.stdout).trim().to_owned());
    if path.is_none() {
        assert_ne!(std::env::var("CI").as_deref(), Ok("true"), "CI must have redis-server (.ci/run installs it)");
        eprintln!("SKIPPED: redis-server is not installed (apt-get install redis-server); {what} did not run");
    }
    path
}

/// redis-server on 127.0.0.1:`port`, nothing saved, once it answers PING.
pub fn start_redis(redis_server: &str, port: u16) -> Killed {
    let child = Command::new(redis_server)
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    let redis = Killed(child.unwrap());
    let client = redis::Client::open(format!("redis://127.0.0.1:{port}")).unwrap();
    until("redis-server answers PING", || {
        client
            .get_connection_with_timeout(Duration::from_secs(1))
            .and_then(|mut c| redis::cmd("PING").query::<String>(&mut c))
            .is_ok()
    });
    redis
}

/// One raw request; the status, the headers (lowercased names) and the body.
pub fn request(addr: &str, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> (u16, String, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let mut head = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
    s.write_all(head.as_bytes()).unwrap();
    let mut raw = String::new();
    let _ = s.read_to_string(&mut raw);
    let (headers, rest) = raw.split_once("\r\n\r\n").unwrap_or_else(|| panic!("no answer: {raw:?}"));
    let status = headers.split_whitespace().nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
    let headers = headers.to_ascii_lowercase();
    let body = if headers.contains("transfer-encoding: chunked") { dechunk(rest) } else { rest.to_owned() };
    (status, headers, body)
}

/// A chunked body's bytes, without the chunks' sizes (an SSE event may span chunks).
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

/// A 2026-07-28 request (no session needed): the HTTP status and the JSON-RPC message (from JSON or
/// the last SSE event).
pub fn call(addr: &str, method: &str, mut params: Value) -> (u16, Value) {
    params["_meta"] = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                             "io.modelcontextprotocol/clientCapabilities": {}});
    let name = params.get("name").and_then(Value::as_str).unwrap_or_default().to_owned();
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params}).to_string();
    let mut headers = vec![
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", method),
    ];
    if !name.is_empty() {
        headers.push(("Mcp-Name", &name));
    }
    let (status, _, rest) = request(addr, "POST", "/mcp", &headers, &body);
    // Not JSON (a load balancer's own error page): kept as text, for the test to say what came.
    let json = rest.lines().rev().find_map(|l| l.strip_prefix("data: ")).unwrap_or(&rest);
    (status, serde_json::from_str(json).unwrap_or_else(|_| json!({ "notJson": rest })))
}

/// The JSON-RPC message of a body: the body itself, or an SSE stream's last `data:` line.
pub fn message(body: &str) -> Value {
    let json = body.lines().rev().find_map(|l| l.strip_prefix("data: ")).unwrap_or(body);
    serde_json::from_str(json).unwrap_or_else(|e| panic!("not JSON ({e}): {body}"))
}

/// Polls `f` until it holds (at most 20 s).
pub fn until(what: &str, f: impl FnMut() -> bool) {
    until_within(what, Duration::from_secs(20), f);
}

/// Polls `f` until it holds, asking every 20 ms; fails after `limit`, naming `what`.
pub fn until_within(what: &str, limit: Duration, mut f: impl FnMut() -> bool) {
    let start = Instant::now();
    while !f() {
        assert!(start.elapsed() < limit, "gave up waiting {limit:?}: {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `bb ai mcp serve --toolsets all,writes` over stdio (and `args`), initialized as a 2025-11-25 client
/// named `client` with `capabilities`, its messages read on a thread of their own; killed when dropped.
pub struct StdioBb {
    pub child: Child,
    stdin: ChildStdin,
    lines: Receiver<Value>,
}

impl Drop for StdioBb {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// How long any one stdio message may take to come.
const STDIO_WAIT: Duration = Duration::from_secs(60);

impl StdioBb {
    pub fn start(stack: &bb_stack::RunningStack, capabilities: Value, args: &[&str], client: &str) -> StdioBb {
        let mut child = Command::new(env!("CARGO_BIN_EXE_bb"))
            .args(["ai", "mcp", "serve", "--toolsets", "all,writes"])
            .args(args)
            .env("BITBUCKET_URL", &stack.base_url)
            .env("BITBUCKET_TOKEN", &stack.token)
            .env_remove("BITBUCKET_USER")
            .env_remove("BITBUCKET_PASSWORD")
            .env_remove("BB_CONFIRM")
            .env_remove("BB_AUDIT_FILE")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in stdout.lines() {
                let Ok(line) = line else { return };
                if tx.send(serde_json::from_str(&line).unwrap()).is_err() {
                    return;
                }
            }
        });
        let mut bb = StdioBb { child, stdin, lines };
        bb.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": capabilities,
            "clientInfo": {"name": client, "version": "7"}}}));
        let init = bb.answer(1);
        assert_eq!(init["result"]["protocolVersion"], "2025-11-25", "{init}");
        bb.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        bb
    }

    pub fn send(&mut self, message: &Value) {
        writeln!(self.stdin, "{message}").unwrap();
    }

    /// The next message that `pick` accepts (notifications and others are passed over).
    pub fn next(&self, what: &str, pick: impl Fn(&Value) -> bool) -> Value {
        loop {
            let m = self.lines.recv_timeout(STDIO_WAIT).unwrap_or_else(|_| panic!("no {what} within {STDIO_WAIT:?}"));
            if pick(&m) {
                return m;
            }
        }
    }

    /// The answer to request `id`.
    pub fn answer(&self, id: u64) -> Value {
        self.next(&format!("answer to {id}"), |m| m["id"] == id && m.get("method").is_none())
    }
}
