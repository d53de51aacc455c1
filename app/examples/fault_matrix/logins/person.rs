//! The people of the login section: bb started as a child process with `--oauth` against a stand-in
//! whose incoming link names it, a person's whole login (bb's registration, consent page and cookie,
//! Bitbucket's consent as that user, the callback, the code exchanged with PKCE), a `tools/call` with
//! the person's bearer token, and a refresh.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, OnceLock};

use bb_stack::RunningStack;
use serde_json::{Value, json};

use super::wire::{self, Answer, KeptAlive, encode, field, param, path_of};

const LINK_ID: &str = "bb-link";
const LINK_SECRET: &str = "link-secret-of-the-fault-matrix";
/// Where the person's MCP client listens for the code (never reached: the code is read from the redirect).
const REDIRECT: &str = "http://127.0.0.1:1/callback";
/// Everything bb writes on stderr is kept up to this many bytes.
const STDERR_KEPT: usize = 64 * 1024;

/// The `bb` binary of the profile this program was built with.
fn binary() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            // In `cargo test` the integration test is given the binary; an example is not, and builds it.
            if let Some(bin) = option_env!("CARGO_BIN_EXE_bb") {
                return PathBuf::from(bin);
            }
            let exe = std::env::current_exe().expect("the example knows where it runs from");
            let profile_dir = exe.parent().and_then(|examples| examples.parent()).expect("<target>/<profile>/examples");
            let mut build = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
            build.args(["build", "-q", "-p", "bb", "--bin", "bb"]).current_dir(env!("CARGO_MANIFEST_DIR"));
            // Without what `cargo run` set for this program, so the build finds its own artifacts fresh.
            for (k, _) in std::env::vars_os() {
                let k = k.to_string_lossy();
                if k.starts_with("CARGO_PKG_") || k.starts_with("CARGO_MANIFEST_") || k.starts_with("RUST_RECURSION") {
                    build.env_remove(&*k);
                }
            }
            build.env_remove("OUT_DIR").env_remove("BB_COMMIT").env_remove("LD_LIBRARY_PATH");
            if profile_dir.file_name().is_some_and(|p| p == "release") {
                build.arg("--release");
            }
            let built = build.status().expect("cargo runs");
            assert!(built.success(), "cargo build -p bb --bin bb failed");
            profile_dir.join("bb")
        })
        .clone()
}

/// bb serving HTTP with `--oauth`; killed when dropped.
pub struct Bb {
    child: Child,
    pub addr: SocketAddr,
    /// What bb wrote on stderr (its first `STDERR_KEPT` bytes).
    pub stderr: Arc<Mutex<String>>,
}

impl Drop for Bb {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Bb {
    /// Starts bb against `stack` on a free loopback port, after adding its incoming link to the stand-in.
    pub fn start(stack: &RunningStack) -> Bb {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let public = format!("http://127.0.0.1:{port}");
        let link = json!({"clientId": LINK_ID, "clientSecret": LINK_SECRET, "redirectUri": format!("{public}/oauth/callback")});
        let json = [("Content-Type", "application/json")];
        let added = wire::request(stack.addr, "POST", "/_stack/oauth/links", &json, &link.to_string()).unwrap();
        assert_eq!(added.status, 200, "the stand-in took bb's link: {}", added.body);
        let listen = format!("127.0.0.1:{port}");
        let mut child = Command::new(binary())
            .args([
                "ai",
                "mcp",
                "serve",
                "--http",
                &listen,
                "--oauth",
                "--public-url",
                &public,
                "--max-connections",
                "512",
            ])
            .env("BITBUCKET_URL", &stack.base_url)
            .env("BITBUCKET_TOKEN", &stack.token)
            .env("BB_OAUTH_CLIENT_ID", LINK_ID)
            .env("BB_OAUTH_CLIENT_SECRET", LINK_SECRET)
            .env_remove("BITBUCKET_USER")
            .env_remove("BITBUCKET_PASSWORD")
            .env_remove("BB_HTTP_TOKEN")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("bb starts");
        let mut err = BufReader::new(child.stderr.take().unwrap());
        let mut first = String::new();
        err.read_line(&mut first).unwrap();
        assert!(first.contains(&listen), "bb listens on {listen}: {first}");
        let stderr = Arc::new(Mutex::new(first));
        let kept = Arc::clone(&stderr);
        // Read to the end, so bb never blocks on a full pipe; keep only the first bytes.
        std::thread::spawn(move || {
            let mut line = String::new();
            while err.read_line(&mut line).is_ok_and(|n| n > 0) {
                let mut k = kept.lock().unwrap();
                if k.len() < STDERR_KEPT {
                    k.push_str(&line);
                }
                line.clear();
            }
        });
        Bb { child, addr: listen.parse().unwrap(), stderr }
    }

    /// bb's peak resident memory so far (`VmHWM`), in KiB.
    pub fn peak_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap_or_default();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(u64::MAX)
    }
}

/// A person logged in to bb through Bitbucket, with their own client registration.
#[derive(Debug, Clone)]
pub struct Person {
    client_id: String,
    pub access: String,
    pub refresh: String,
}

fn form() -> (&'static str, &'static str) {
    ("Content-Type", "application/x-www-form-urlencoded")
}

fn expect(what: &str, a: &Answer, status: u16) -> Result<(), String> {
    if a.status == status {
        return Ok(());
    }
    Err(format!("{what}: {} (wanted {status}): {}", a.status, a.body.chars().take(300).collect::<String>()))
}

impl Person {
    /// `user` of the stand-in logs in to bb from 127.0.0.1, as their MCP client and browser do.
    pub fn log_in(bb: &Bb, stack: &RunningStack, user: &str) -> Result<Person, String> {
        let io = |e: std::io::Error| format!("{user}'s login: {e}");
        let json = [("Content-Type", "application/json")];
        let registration = json!({"redirect_uris": [REDIRECT], "client_name": format!("{user}'s client")});
        let a = wire::request(bb.addr, "POST", "/oauth/register", &json, &registration.to_string()).map_err(io)?;
        expect("register", &a, 201)?;
        let registered: Value = serde_json::from_str(&a.body).map_err(|e| e.to_string())?;
        let client_id = registered["client_id"].as_str().ok_or("no client_id")?.to_owned();

        let verifier = format!("a-verifier-of-the-fault-matrix-for-{user}-0123456789");
        let digest = ring::digest::digest(&ring::digest::SHA256, verifier.as_bytes());
        let challenge = bb_core::base64(digest.as_ref()).replace('+', "-").replace('/', "_").replace('=', "");
        let authorize = format!(
            "/oauth/authorize?client_id={client_id}&redirect_uri={}&response_type=code&state=s&code_challenge={challenge}\
             &code_challenge_method=S256",
            encode(REDIRECT)
        );
        let page = wire::request(bb.addr, "GET", &authorize, &[], "").map_err(io)?;
        expect("authorize", &page, 200)?;
        let browser = page.cookies();
        let (login, token) = (field(&page.body, "login"), field(&page.body, "token"));
        let (Some(login), Some(token)) = (login, token) else { return Err("no consent form".into()) };
        let allow = format!("login={login}&token={token}&decision=allow");
        let posted = [form(), ("Cookie", browser.as_str())];
        let to_bitbucket = wire::request(bb.addr, "POST", "/oauth/consent", &posted, &allow).map_err(io)?;
        expect("consent", &to_bitbucket, 303)?;
        let to_bitbucket = to_bitbucket.header("location").unwrap_or_default().to_owned();

        // Bitbucket's consent, as the user (their browser is logged in to Bitbucket).
        let users = wire::request(stack.addr, "GET", "/_stack", &[], "").map_err(io)?;
        let users: Value = serde_json::from_str(&users.body).map_err(|e| e.to_string())?;
        let password = users["users"]
            .as_array()
            .and_then(|u| u.iter().find(|u| u["slug"] == user))
            .and_then(|u| u["password"].as_str())
            .ok_or_else(|| format!("the stand-in has no {user}"))?;
        let basic = format!("Basic {}", bb_stack::auth::encode_base64(format!("{user}:{password}").as_bytes()));
        let asked = wire::request(stack.addr, "GET", path_of(&to_bitbucket), &[("Authorization", &basic)], "");
        let asked = asked.map_err(io)?;
        expect("Bitbucket's consent page", &asked, 200)?;
        let consent = field(&asked.body, "consent").ok_or("no consent on Bitbucket's page")?;
        let posted = [("Authorization", basic.as_str()), form()];
        let allowed = format!("consent={consent}&decision=allow");
        let to_bb = wire::request(stack.addr, "POST", "/rest/oauth2/latest/authorize", &posted, &allowed);
        let to_bb = to_bb.map_err(io)?;
        expect("Bitbucket's consent", &to_bb, 302)?;
        let to_bb = to_bb.header("location").unwrap_or_default().to_owned();

        let back = wire::request(bb.addr, "GET", path_of(&to_bb), &[("Cookie", &browser)], "").map_err(io)?;
        expect("callback", &back, 303)?;
        let code = back.header("location").and_then(|l| param(l, "code")).ok_or("no code in the redirect")?;
        let exchange = format!(
            "grant_type=authorization_code&client_id={client_id}&code={code}&redirect_uri={}&code_verifier={verifier}",
            encode(REDIRECT)
        );
        let tokens = wire::request(bb.addr, "POST", "/oauth/token", &[form()], &exchange).map_err(io)?;
        expect("code exchanged", &tokens, 200)?;
        let (access, refresh) = tokens_of(&tokens)?;
        Ok(Person { client_id, access, refresh })
    }

    /// The person's MCP client calls `list_pr_comments` (2026-07-28, no session) on a fresh connection.
    pub fn call(&self, bb: &Bb) -> Result<(), String> {
        let (headers, body) = self.call_request();
        let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let a = wire::request(bb.addr, "POST", "/mcp", &headers, &body).map_err(|e| e.to_string())?;
        answered(&a)
    }

    /// [`Person::call`] on `conn`, a connection kept alive between calls as an HTTP client keeps it.
    pub fn call_on(&self, conn: &mut KeptAlive, bb: &Bb) -> Result<(), String> {
        let (headers, body) = self.call_request();
        let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let bytes = wire::request_bytes(&bb.addr.to_string(), "POST", "/mcp", &headers, &body, false);
        answered(&conn.send(&bytes).map_err(|e| e.to_string())?)
    }

    fn call_request(&self) -> (Vec<(&'static str, String)>, String) {
        let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
            "name": "list_pr_comments", "arguments": {"project": "BB", "repo": "api", "pr_id": 2},
            "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientCapabilities": {}}}});
        let headers = vec![
            ("Content-Type", "application/json".to_owned()),
            ("Accept", "application/json, text/event-stream".to_owned()),
            ("MCP-Protocol-Version", "2026-07-28".to_owned()),
            ("Mcp-Method", "tools/call".to_owned()),
            ("Mcp-Name", "list_pr_comments".to_owned()),
            ("Authorization", format!("Bearer {}", self.access)),
        ];
        (headers, call.to_string())
    }

    /// The person's refresh token exchanged for new tokens (the old ones are spent).
    pub fn refreshed(&self, bb: &Bb) -> Result<Person, String> {
        let body = format!(
            "grant_type=refresh_token&client_id={}&refresh_token={}",
            encode(&self.client_id),
            encode(&self.refresh)
        );
        let a = wire::request(bb.addr, "POST", "/oauth/token", &[form()], &body).map_err(|e| e.to_string())?;
        expect("refresh", &a, 200)?;
        let (access, refresh) = tokens_of(&a)?;
        if access == self.access || refresh == self.refresh {
            return Err("the refresh gave the same tokens back".into());
        }
        Ok(Person { access, refresh, ..self.clone() })
    }
}

/// Whether a call's answer is a tool's result that is not an error.
fn answered(a: &Answer) -> Result<(), String> {
    expect("tools/call", a, 200)?;
    let message = a.body.lines().rev().find_map(|l| l.strip_prefix("data: ")).unwrap_or(&a.body);
    let message: Value = serde_json::from_str(message).map_err(|e| format!("not JSON ({e}): {}", a.body))?;
    if message["result"]["content"].is_null() {
        return Err(format!("no result: {message}"));
    }
    if message["result"]["isError"] == json!(true) {
        return Err(format!("a tool error: {message}"));
    }
    Ok(())
}

fn tokens_of(a: &Answer) -> Result<(String, String), String> {
    let v: Value = serde_json::from_str(&a.body).map_err(|e| format!("tokens not JSON ({e}): {}", a.body))?;
    match (v["access_token"].as_str(), v["refresh_token"].as_str()) {
        (Some(access), Some(refresh)) => Ok((access.to_owned(), refresh.to_owned())),
        _ => Err(format!("no tokens in {}", a.body)),
    }
}
