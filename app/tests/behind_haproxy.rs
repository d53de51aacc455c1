//! Behind haproxy with `--trusted-proxy 127.0.0.1`: every person reaches bb from haproxy's address,
//! yet bb counts each by their own, through `option forwardfor` (X-Forwarded-For, a forged value
//! before haproxy's not believed) and through `send-proxy-v2` (a PROXY protocol v2 header). Seen
//! through the session share per address (`--max-sessions 8`: two each): people at 127.0.0.2 and
//! 127.0.0.3 hold two sessions each, where as one address they would share two. Needs Debian's
//! `haproxy` (`.ci/run` installs it); without it the test says so and passes, except under `CI=true`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod service;

use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::time::Duration;

use service::{Bb, free_port, haproxy, request, start_haproxy};

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;

/// Initializes a session through haproxy at `lb` from the loopback address `from`, sending `extra`
/// headers; its id.
fn initialize(lb: u16, from: Ipv4Addr, extra: &str) -> String {
    use rustix::net::{AddressFamily, SocketType, bind, connect, socket};
    let fd = socket(AddressFamily::INET, SocketType::STREAM, None).unwrap();
    bind(&fd, &SocketAddr::from((from, 0))).unwrap();
    connect(&fd, &SocketAddr::from(([127, 0, 0, 1], lb))).unwrap();
    let mut s = TcpStream::from(fd);
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{lb}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\n{extra}Content-Length: {}\r\nConnection: close\r\n\r\n{INITIALIZE}",
        INITIALIZE.len()
    );
    s.write_all(head.as_bytes()).unwrap();
    let mut raw = String::new();
    s.read_to_string(&mut raw).unwrap();
    let (headers, _) = raw.split_once("\r\n\r\n").unwrap_or_else(|| panic!("no answer: {raw}"));
    assert!(headers.starts_with("HTTP/1.1 200"), "{raw}");
    headers
        .lines()
        .find_map(|l| l.split_once(':').filter(|(k, _)| k.eq_ignore_ascii_case("mcp-session-id")))
        .map(|(_, v)| v.trim().to_owned())
        .unwrap_or_else(|| panic!("no session id: {headers}"))
}

/// Whether bb still knows session `id` (asked directly, not through haproxy).
fn alive(bb: &Bb, id: &str) -> bool {
    let headers = [
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("Mcp-Session-Id", id),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    let (status, _, body) = request(&bb.addr, "POST", "/mcp", &headers, r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#);
    assert!(matches!(status, 200 | 404), "{status} {body}");
    status == 200
}

#[test]
fn behind_haproxy_each_person_holds_their_own_share_through_forwardfor_and_send_proxy_v2() {
    let Some(haproxy) = haproxy("the trusted-proxy test") else { return };
    let stack = bb_stack::Stack::start(bb_stack::StackConfig::default()).unwrap();
    let (forwarded, proxied) = (free_port(), free_port());
    let hosts = [format!("127.0.0.1:{forwarded}"), format!("127.0.0.1:{proxied}")];
    let args =
        ["--max-sessions", "8", "--trusted-proxy", "127.0.0.1", "--allow-host", &hosts[0], "--allow-host", &hosts[1]];
    let bb = Bb::start(&stack.base_url, &stack.token, &args);
    let dir = std::env::temp_dir().join(format!("bb-trusted-proxy-{}-{forwarded}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("haproxy.cfg");
    let addr = &bb.addr;
    std::fs::write(
        &config,
        format!(
            "global\n  maxconn 256\ndefaults\n  mode http\n  timeout connect 5s\n  timeout client 30s\n  timeout server 30s\n\
             frontend forwarded\n  bind 127.0.0.1:{forwarded}\n  option forwardfor\n  default_backend bb_forwarded\n\
             frontend proxied\n  bind 127.0.0.1:{proxied}\n  default_backend bb_proxied\n\
             backend bb_forwarded\n  server bb {addr}\n\
             backend bb_proxied\n  server bb {addr} send-proxy-v2\n"
        ),
    )
    .unwrap();
    let _lb = start_haproxy(&haproxy, &config, forwarded);
    let (two, three) = (Ipv4Addr::new(127, 0, 0, 2), Ipv4Addr::new(127, 0, 0, 3));

    // option forwardfor: haproxy appends the address it heard from.
    let a1 = initialize(forwarded, two, "");
    let a2 = initialize(forwarded, two, "");
    let b1 = initialize(forwarded, three, "");
    assert!([&a1, &a2, &b1].iter().all(|id| alive(&bb, id)), "two people, two sessions each");
    // 127.0.0.2 claims to be 127.0.0.3: haproxy's hop, right of the claim, is the one believed.
    let a3 = initialize(forwarded, two, "X-Forwarded-For: 127.0.0.3\r\n");
    assert_eq!([alive(&bb, &a1), alive(&bb, &a2), alive(&bb, &a3), alive(&bb, &b1)], [false, true, true, true]);

    // send-proxy-v2: the connection's source comes in a PROXY header.
    let (four, five) = (Ipv4Addr::new(127, 0, 0, 4), Ipv4Addr::new(127, 0, 0, 5));
    let d1 = initialize(proxied, four, "");
    let d2 = initialize(proxied, four, "");
    let e1 = initialize(proxied, five, "");
    assert!([&d1, &d2, &e1].iter().all(|id| alive(&bb, id)), "two sources, two sessions each");
    let d3 = initialize(proxied, four, "");
    assert_eq!([alive(&bb, &d1), alive(&bb, &d2), alive(&bb, &d3), alive(&bb, &e1)], [false, true, true, true]);
    let _ = std::fs::remove_dir_all(&dir);
}
