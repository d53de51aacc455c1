//! Clients that hold the server's resources: slow heads, slow bodies, too many connections.
//! Timeouts are short here; the tests assert what the server does, not how fast.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod common;

use std::io::{Read, Write};
use std::time::Duration;

use bb_http::{HttpOptions, Limits};
use common::{INITIALIZE, Req, connect, read_answer, start};

fn with(limits: Limits) -> common::TestServer {
    start(HttpOptions { limits, ..HttpOptions::default() }, common::plain_fetch())
}

#[test]
fn a_client_that_never_finishes_its_head_is_disconnected() {
    let s = with(Limits { header_timeout: Duration::from_millis(200), ..Limits::default() });
    let mut c = connect(s.addr);
    c.write_all(format!("POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: app", s.addr).as_bytes()).unwrap();
    let mut buf = Vec::new();
    // The server closes the connection (EOF or a reset), rather than waiting forever.
    match c.read_to_end(&mut buf) {
        Ok(_) => assert!(!String::from_utf8_lossy(&buf).contains(" 200 "), "{buf:?}"),
        Err(e) => assert!(!matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut), "{e}"),
    }
}

#[test]
fn a_client_that_never_finishes_its_body_gets_408_and_is_disconnected() {
    let s = with(Limits { body_timeout: Duration::from_millis(200), ..Limits::default() });
    let mut c = connect(s.addr);
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: */*\r\nContent-Length: 500\r\n\r\n{{\"jsonrpc\"",
        s.addr
    );
    c.write_all(head.as_bytes()).unwrap();
    let a = read_answer(&mut c);
    assert_eq!(a.status, 408);
    assert_eq!(a.header("connection"), Some("close"));
}

#[test]
fn connections_beyond_the_cap_get_503_and_are_closed() {
    // Every client here is 127.0.0.1, so its share is the whole cap.
    let s = with(Limits { max_connections: 2, max_connections_per_peer: Some(2), ..Limits::default() });
    let mut held = vec![connect(s.addr), connect(s.addr)];
    // Make sure both are accepted before the third arrives.
    for c in &mut held {
        c.write_all(format!("OPTIONS /mcp HTTP/1.1\r\nHost: {}\r\n\r\n", s.addr).as_bytes()).unwrap();
        let mut buf = [0u8; 512];
        let n = c.read(&mut buf).unwrap();
        assert!(String::from_utf8_lossy(&buf[..n]).starts_with("HTTP/1.1 204"));
    }
    let a = Req::post(INITIALIZE).send(s.addr);
    assert_eq!(a.status, 503);
    drop(held);
    // Slots free up when connections close.
    let mut status = 503;
    for _ in 0..50 {
        status = Req::post(INITIALIZE).send(s.addr).status;
        if status == 200 {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(status, 200);
}

#[test]
fn a_connection_idle_between_requests_outlives_the_head_timeout_until_the_keep_alive_idle() {
    // The head timeout is short and the idle time longer: a client that waits between two requests (a
    // view between refreshes) keeps its connection; one idle past the idle time is closed.
    let s = with(Limits {
        header_timeout: Duration::from_millis(200),
        keepalive_idle: Duration::from_millis(1_500),
        ..Limits::default()
    });
    let mut c = connect(s.addr);
    let options = format!("OPTIONS /mcp HTTP/1.1\r\nHost: {}\r\n\r\n", s.addr);
    let mut buf = [0u8; 512];
    c.write_all(options.as_bytes()).unwrap();
    let n = c.read(&mut buf).unwrap();
    assert!(String::from_utf8_lossy(&buf[..n]).starts_with("HTTP/1.1 204"));
    // Idle past a head timeout, and so known: a probe that began its head after the first connection went
    // idle is cut at the head timeout. Once it is, the idle connection still answers.
    let mut probe = connect(s.addr);
    probe.write_all(format!("POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: app", s.addr).as_bytes()).unwrap();
    probe.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut rest = Vec::new();
    let _ = probe.read_to_end(&mut rest);
    c.write_all(options.as_bytes()).unwrap();
    let n = c.read(&mut buf).unwrap();
    assert!(
        String::from_utf8_lossy(&buf[..n]).starts_with("HTTP/1.1 204"),
        "the connection was kept: {:?}",
        String::from_utf8_lossy(&buf[..n])
    );
    // Then idle: the server closes it (EOF or a reset) once the idle time has passed.
    c.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let started = std::time::Instant::now();
    match c.read(&mut buf) {
        Ok(n) => assert_eq!(n, 0, "{:?}", String::from_utf8_lossy(&buf[..n])),
        Err(e) => assert!(!matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut), "{e}"),
    }
    assert!(
        started.elapsed() >= Duration::from_millis(1_000),
        "not closed before its idle time: {:?}",
        started.elapsed()
    );
}
