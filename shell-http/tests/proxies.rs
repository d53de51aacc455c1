//! Behind a proxy (`--trusted-proxy`): from a trusted proxy, `X-Forwarded-For` names each request's
//! person and a PROXY protocol v2 header the connection's source, so the rules kept per address count
//! people, not the proxy; from anyone else both are ignored (a PROXY header is then bad HTTP). Every
//! client here connects from 127.0.0.1; the session share per address (one) shows whom bb counted.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod common;

use std::io::Write;
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::time::Duration;

use bb_http::{Cidr, HttpOptions, Limits, TrustedProxies};
use common::{
    INITIALIZE, Req, TestServer, closed_by_server, connect, initialize_with, read_answer, read_one, request,
    send_keep_alive, start,
};
use serde_json::json;

/// A server that trusts `proxies`, with a share of one session (and `connections` connections) per address.
fn behind(proxies: &[&str], connections: usize) -> TestServer {
    let limits = Limits {
        max_sessions_per_peer: Some(1),
        max_connections_per_peer: Some(connections),
        header_timeout: Duration::from_millis(500),
        ..Limits::default()
    };
    let trusted_proxies = TrustedProxies::new(proxies.iter().map(|p| Cidr::parse(p).unwrap()).collect());
    start(HttpOptions { limits, trusted_proxies, ..HttpOptions::default() }, common::plain_fetch())
}

fn alive(addr: SocketAddr, id: &str) -> bool {
    let status = Req::post(request("ping", json!({}))).session(id).send(addr).status;
    assert!(matches!(status, 200 | 404), "{status}");
    status == 200
}

fn forwarded_for(addr: SocketAddr, xff: &str) -> String {
    initialize_with(addr, &[("X-Forwarded-For", xff)])
}

/// A PROXY protocol v2 header, as haproxy's `send-proxy-v2` sends it, for a TCP connection from `source`.
fn proxy_v2(source: Ipv4Addr, to: SocketAddr) -> Vec<u8> {
    let mut h = b"\r\n\r\n\0\r\nQUIT\n".to_vec();
    h.extend_from_slice(&[0x21, 0x11, 0, 12]);
    h.extend_from_slice(&source.octets());
    h.extend_from_slice(&[127, 0, 0, 1]);
    h.extend_from_slice(&40_000u16.to_be_bytes());
    h.extend_from_slice(&to.port().to_be_bytes());
    h
}

/// A connection that began with a PROXY header for `source`.
fn proxied(s: &TestServer, source: Ipv4Addr) -> TcpStream {
    let mut c = connect(s.addr);
    c.write_all(&proxy_v2(source, s.addr)).unwrap();
    c
}

/// Initializes a session on a connection that begins with a PROXY header for `source`.
fn initialize_through(s: &TestServer, source: Ipv4Addr) -> String {
    let mut c = proxied(s, source);
    c.write_all(&Req::post(INITIALIZE).bytes(s.addr)).unwrap();
    let a = read_answer(&mut c);
    assert_eq!(a.status, 200, "{a:?} {:?}", s.logs.lock().unwrap());
    a.header("mcp-session-id").unwrap().to_owned()
}

#[test]
fn a_forged_forwarded_for_from_an_untrusted_address_changes_nothing() {
    let s = behind(&["127.0.0.9"], 100);
    let a = forwarded_for(s.addr, "198.51.100.1");
    let b = forwarded_for(s.addr, "198.51.100.2");
    assert_eq!([alive(s.addr, &a), alive(s.addr, &b)], [false, true], "both counted as 127.0.0.1, whose share is one");
}

#[test]
fn from_a_trusted_proxy_each_forwarded_person_has_a_share_of_their_own() {
    let s = behind(&["127.0.0.0/8"], 100);
    // The right-most hop that is no trusted proxy is the person; what a client wrote left of it is not.
    let a = forwarded_for(s.addr, "203.0.113.7, 198.51.100.1");
    let b = forwarded_for(s.addr, "198.51.100.2, 127.0.0.5");
    assert_eq!([alive(s.addr, &a), alive(s.addr, &b)], [true, true], "two people, a share each");
    let c = forwarded_for(s.addr, "198.51.100.1");
    assert_eq!(
        [alive(s.addr, &a), alive(s.addr, &b), alive(s.addr, &c)],
        [false, true, true],
        "198.51.100.1's share is one"
    );
    // A header that cannot be read whole counts as the proxy itself.
    let d = forwarded_for(s.addr, "198.51.100.3, not-an-address");
    let e = forwarded_for(s.addr, "198.51.100.4, not-an-address");
    assert_eq!([alive(s.addr, &d), alive(s.addr, &e)], [false, true]);
}

#[test]
fn a_proxy_header_from_a_trusted_proxy_names_the_connections_source() {
    let s = behind(&["127.0.0.1"], 100);
    let a = initialize_through(&s, Ipv4Addr::new(198, 51, 100, 1));
    let b = initialize_through(&s, Ipv4Addr::new(198, 51, 100, 2));
    assert_eq!([alive(s.addr, &a), alive(s.addr, &b)], [true, true], "two sources, a share each");
    let c = initialize_through(&s, Ipv4Addr::new(198, 51, 100, 1));
    assert_eq!([alive(s.addr, &a), alive(s.addr, &b), alive(s.addr, &c)], [false, true, true]);
    // The source is no trusted proxy: an X-Forwarded-For on its connection is not read.
    let mut conn = proxied(&s, Ipv4Addr::new(198, 51, 100, 2));
    conn.write_all(&Req::post(INITIALIZE).header("X-Forwarded-For", "203.0.113.50").bytes(s.addr)).unwrap();
    assert_eq!(read_answer(&mut conn).status, 200);
    assert!(!alive(s.addr, &b), "counted as 198.51.100.2, whose one session made room");
}

#[test]
fn proxy_bytes_from_an_untrusted_peer_are_bad_http() {
    let s = behind(&["127.0.0.9"], 100);
    let mut c = proxied(&s, Ipv4Addr::new(198, 51, 100, 1));
    c.write_all(&Req::post(INITIALIZE).bytes(s.addr)).unwrap();
    assert_eq!(read_answer(&mut c).status, 400);
}

#[test]
fn a_trusted_proxy_holds_no_connection_share_but_each_source_it_names_does() {
    let s = behind(&["127.0.0.1"], 1);
    // The proxy's own connections (X-Forwarded-For mode) are many people's: no share of one.
    let mut own: Vec<TcpStream> = (0..3).map(|_| connect(s.addr)).collect();
    for c in &mut own {
        assert_eq!(send_keep_alive(c, s.addr, &Req::post(INITIALIZE)).status, 200);
    }
    // A source its PROXY header names holds its share: one connection.
    let mut first = proxied(&s, Ipv4Addr::new(198, 51, 100, 1));
    assert_eq!(send_keep_alive(&mut first, s.addr, &Req::post(INITIALIZE)).status, 200);
    let mut second = proxied(&s, Ipv4Addr::new(198, 51, 100, 1));
    let a = read_one(&mut second);
    assert_eq!(a.status, 503, "{a:?}");
    let mut other = proxied(&s, Ipv4Addr::new(198, 51, 100, 2));
    assert_eq!(send_keep_alive(&mut other, s.addr, &Req::post(INITIALIZE)).status, 200);
    assert!(s.logs.lock().unwrap().iter().any(|l| l.contains("198.51.100.1 holds its limit of 1 connections")));
}

#[test]
fn a_stalled_or_broken_proxy_header_drops_the_connection() {
    let s = behind(&["127.0.0.1"], 100);
    // Half a signature, then nothing: dropped at the head's deadline.
    let mut stalled = connect(s.addr);
    stalled.write_all(b"\r\n\r\n\0\r\n").unwrap();
    assert!(closed_by_server(&mut stalled));
    // A header of a version bb does not read.
    let mut broken = connect(s.addr);
    let mut h = proxy_v2(Ipv4Addr::new(198, 51, 100, 1), s.addr);
    h[12] = 0x31;
    broken.write_all(&h).unwrap();
    assert!(closed_by_server(&mut broken));
    // Longer than bb reads: refused from its fixed part.
    let mut long = connect(s.addr);
    let mut h = proxy_v2(Ipv4Addr::new(198, 51, 100, 1), s.addr);
    h[14..16].copy_from_slice(&600u16.to_be_bytes());
    long.write_all(&h).unwrap();
    assert!(closed_by_server(&mut long));
    // A LOCAL header (the proxy's health check) keeps the proxy as the peer, and HTTP follows.
    let mut local = connect(s.addr);
    local.write_all(&[b"\r\n\r\n\0\r\nQUIT\n".as_slice(), &[0x20, 0x00, 0, 0]].concat()).unwrap();
    assert_eq!(send_keep_alive(&mut local, s.addr, &Req::new("GET").path("/healthz")).status, 200);
}
