//! Two `bb ai mcp serve --http --oauth` replicas share people's logins through Redis
//! (`--rate-store`), encrypted with `BB_OAUTH_STORE_KEY`: a person sent to Bitbucket by one replica
//! comes back to the other, the client exchanges its code at the first and calls a tool at the
//! second, as that person (never the operator's configured user); the store holds no token in the
//! clear; a replica with another key cannot read the logins. Needs Debian's `redis-server`; without
//! it the test says so and passes, except under `CI=true`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod service;

use serde_json::{Value, json};
use service::{Bb, free_port, redis_server, request, start_redis};

const LINK_ID: &str = "bb-link";
const LINK_SECRET: &str = "link-secret-7f3a9c-never-shown";
const KEY: &str = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
const REDIRECT: &str = "http://127.0.0.1:1/callback";

fn header<'a>(headers: &'a str, name: &str) -> Option<&'a str> {
    headers.lines().find_map(|l| l.strip_prefix(&format!("{name}: ")))
}

/// A request whose answer's `Location` is wanted as sent (service's `request` lowercases headers).
fn located(addr: &str, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> (u16, String, String) {
    let (status, location, body, _) = located_with_head(addr, method, path, headers, body);
    (status, location, body)
}

/// As [`located`], with the answer's head as sent.
fn located_with_head(
    addr: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, String, String, String) {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    let mut head = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
    s.write_all(head.as_bytes()).unwrap();
    let mut raw = String::new();
    let _ = s.read_to_string(&mut raw);
    let (h, rest) = raw.split_once("\r\n\r\n").unwrap_or((&raw, ""));
    let status = h.split_whitespace().nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
    let location = h.lines().find_map(|l| {
        l.split_once(':').filter(|(k, _)| k.eq_ignore_ascii_case("location")).map(|(_, v)| v.trim().to_owned())
    });
    (status, location.unwrap_or_default(), rest.to_owned(), h.to_owned())
}

/// The `name=value` pairs of the answer's `Set-Cookie` headers, as a `Cookie` header sends them.
fn cookies_of(head: &str) -> String {
    head.lines()
        .filter_map(|l| l.split_once(':').filter(|(k, _)| k.eq_ignore_ascii_case("set-cookie")))
        .filter_map(|(_, v)| v.trim().split(';').next().map(str::to_owned))
        .collect::<Vec<_>>()
        .join("; ")
}

/// The value of the consent page's hidden field `name`.
fn field(html: &str, name: &str) -> String {
    html.split(&format!("name=\"{name}\" value=\"")).nth(1).and_then(|r| r.split('"').next()).unwrap().to_owned()
}

/// The path and query of an absolute URL.
fn path_of(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    rest.find('/').map_or("/", |i| &rest[i..])
}

fn param(url: &str, name: &str) -> Option<String> {
    url.split_once('?')?.1.split('&').find_map(|kv| kv.strip_prefix(&format!("{name}="))).map(|v| v.replace("%2F", "/"))
}

fn base64url(data: &[u8]) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::new();
    for chunk in data.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..=chunk.len() {
            out.push(char::from(ABC[(n >> (18 - 6 * i) & 63) as usize]));
        }
    }
    out
}

fn start(stack: &bb_stack::RunningStack, public: &str, store: &str, key: &str) -> Bb {
    let args = ["--oauth", "--public-url", public, "--rate-store", store, "--log-level", "info"];
    let env = [("BB_OAUTH_CLIENT_ID", LINK_ID), ("BB_OAUTH_CLIENT_SECRET", LINK_SECRET), ("BB_OAUTH_STORE_KEY", key)];
    Bb::start_with(&stack.base_url, &stack.token, &args, &env)
}

#[test]
fn a_login_begun_at_one_replica_ends_at_another_and_its_token_works_at_both() {
    let Some(redis_server) = redis_server("logins shared by replicas") else { return };
    let stack = bb_stack::Stack::start(bb_stack::StackConfig::default()).unwrap();
    let redis_port = free_port();
    let _redis = start_redis(&redis_server, redis_port);
    let store = format!("redis://127.0.0.1:{redis_port}");
    // Behind a load balancer both answer to one public URL; here the test plays the balancer.
    let public = format!("http://127.0.0.1:{}", free_port());
    let link =
        json!({"clientId": LINK_ID, "clientSecret": LINK_SECRET, "redirectUri": format!("{public}/oauth/callback")});
    let stack_addr = stack.addr.to_string();
    let json = [("Content-Type", "application/json")];
    assert_eq!(request(&stack_addr, "POST", "/_stack/oauth/links", &json, &link.to_string()).0, 200);
    let (a, b) = (start(&stack, &public, &store, KEY), start(&stack, &public, &store, KEY));

    // The client registers at A and sends the person to A's authorization endpoint.
    let (status, _, body) =
        request(&a.addr, "POST", "/oauth/register", &json, &json!({"redirect_uris": [REDIRECT]}).to_string());
    assert_eq!(status, 201, "{body}");
    let client_id = serde_json::from_str::<Value>(&body).unwrap()["client_id"].as_str().unwrap().to_owned();
    let verifier = "a-verifier-of-this-test-that-is-long-enough-0123456789";
    let challenge = base64url(ring::digest::digest(&ring::digest::SHA256, verifier.as_bytes()).as_ref());
    let authorize = format!(
        "/oauth/authorize?client_id={client_id}&redirect_uri={}&response_type=code&state=s&code_challenge={challenge}&code_challenge_method=S256",
        REDIRECT.replace(':', "%3A").replace('/', "%2F")
    );
    // A asks the person whether this client may act as them; they allow it at B (the same browser).
    let (status, _, page, head) = located_with_head(&a.addr, "GET", &authorize, &[], "");
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("this computer (127.0.0.1, port 1)"), "{page}");
    let browser = cookies_of(&head);
    assert!(browser.starts_with("bb_browser="), "{head}");
    let allow = format!("login={}&token={}&decision=allow", field(&page, "login"), field(&page, "token"));
    let posted = [("Content-Type", "application/x-www-form-urlencoded"), ("Cookie", browser.as_str())];
    let (status, to_bitbucket, body) = located(&b.addr, "POST", "/oauth/consent", &posted, &allow);
    assert_eq!(status, 303, "{body}");

    // Bitbucket's consent, as carol (her browser is logged in to Bitbucket).
    let users = request(&stack_addr, "GET", "/_stack", &[], "").2;
    let users: Value = serde_json::from_str(&users).unwrap();
    let carol = users["users"].as_array().unwrap().iter().find(|u| u["slug"] == "carol").unwrap();
    let login = format!("carol:{}", carol["password"].as_str().unwrap());
    let basic = format!("Basic {}", bb_stack::auth::encode_base64(login.as_bytes()));
    let (status, headers, page) = request(&stack_addr, "GET", path_of(&to_bitbucket), &[("Authorization", &basic)], "");
    assert_eq!(status, 200, "{to_bitbucket} → {headers} {page}");
    let consent = page.split("name=\"consent\" value=\"").nth(1).and_then(|r| r.split('"').next()).unwrap().to_owned();
    let form = [("Authorization", basic.as_str()), ("Content-Type", "application/x-www-form-urlencoded")];
    let (status, to_bb, _) = located(
        &stack_addr,
        "POST",
        "/rest/oauth2/latest/authorize",
        &form,
        &format!("consent={consent}&decision=allow"),
    );
    assert_eq!(status, 302);
    assert!(to_bb.starts_with(&format!("{public}/oauth/callback?")), "{to_bb}");

    // Bitbucket sends the person back to the other replica.
    let (status, back, body) = located(&b.addr, "GET", path_of(&to_bb), &[("Cookie", &browser)], "");
    assert_eq!(status, 303, "{body}");
    assert!(back.starts_with(REDIRECT), "{back}");
    let code = param(&back, "code").unwrap();

    // The code is exchanged at A; B and A both honour the token.
    let form = format!(
        "grant_type=authorization_code&client_id={client_id}&code={code}&redirect_uri={}&code_verifier={verifier}",
        REDIRECT.replace(':', "%3A").replace('/', "%2F")
    );
    let (status, _, body) =
        request(&a.addr, "POST", "/oauth/token", &[("Content-Type", "application/x-www-form-urlencoded")], &form);
    assert_eq!(status, 200, "{body}");
    let token = serde_json::from_str::<Value>(&body).unwrap()["access_token"].as_str().unwrap().to_owned();

    for replica in [&b, &a] {
        let bearer = format!("Bearer {token}");
        let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
            "name": "list_pr_comments", "arguments": {"project": "BB", "repo": "api", "pr_id": 2},
            "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}}});
        let headers = [
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "list_pr_comments"),
            ("Authorization", bearer.as_str()),
        ];
        let (status, _, body) = request(&replica.addr, "POST", "/mcp", &headers, &call.to_string());
        assert_eq!(status, 200, "{body}");
        assert!(!body.contains("\"isError\":true"), "{body}");
    }
    let log: Value = serde_json::from_str(&request(&stack_addr, "GET", "/_stack/log", &[], "").2).unwrap();
    let reads: Vec<&Value> = log["requests"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["path"].as_str().unwrap_or_default().contains("/pull-requests/2"))
        .collect();
    assert!(!reads.is_empty());
    assert!(reads.iter().all(|r| r["user"] == "carol"), "as carol, never the operator's user: {reads:?}");

    // Nothing in the store is a token in the clear.
    let keys = std::process::Command::new("redis-cli")
        .args(["-p", &redis_port.to_string(), "--raw", "KEYS", "bb:oauth:*"])
        .output();
    if let Some(out) = keys.ok().filter(|o| o.status.success()) {
        let keys = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(keys.contains("bb:oauth:grant:"), "{keys}");
        for k in keys.lines().filter(|k| !k.is_empty()) {
            let v = std::process::Command::new("redis-cli")
                .args(["-p", &redis_port.to_string(), "--raw", "GET", k])
                .output()
                .unwrap();
            let v = String::from_utf8_lossy(&v.stdout);
            assert!(!v.contains("bbat-") && !v.contains("bbrt-") && !v.contains("carol"), "{k} holds plain text");
        }
    }

    // A replica with another key reads none of it: the token is refused there.
    let other = start(&stack, &public, &store, &"ff".repeat(32));
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let bearer = format!("Bearer {token}");
    let h = [
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("Authorization", bearer.as_str()),
    ];
    let (status, headers, _) = request(&other.addr, "POST", "/mcp", &h, &ping.to_string());
    assert_eq!(status, 401);
    assert!(header(&headers, "www-authenticate").unwrap().contains("invalid_token"));

    // The code replayed at B: refused, and the tokens its first use gave at A are revoked everywhere.
    let replay =
        request(&b.addr, "POST", "/oauth/token", &[("Content-Type", "application/x-www-form-urlencoded")], &form);
    assert_eq!(replay.0, 400, "a code is single-use across replicas too: {}", replay.2);
    let headers = [
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("Authorization", bearer.as_str()),
    ];
    let (status, _, body) = request(&a.addr, "POST", "/mcp", &headers, &ping.to_string());
    assert_eq!(status, 401, "the replayed code's tokens are revoked at A too: {body}");

    for replica in [&a, &b, &other] {
        let said = replica.stderr.lock().unwrap().clone();
        assert!(!said.contains(LINK_SECRET) && !said.contains("bbat-") && !said.contains(&token), "{said}");
    }
}
