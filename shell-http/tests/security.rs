//! Who may call: Host (DNS rebinding), Origin, the bearer token, CORS, and oversized heads.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod common;

use bb_http::{HttpOptions, Limits};
use common::{INITIALIZE, Req, start, start_default};

#[test]
fn a_rebinding_host_gets_403() {
    let s = start_default();
    for host in ["evil.example.com", "evil.example.com:80", &format!("evil.example.com:{}", s.addr.port())] {
        let a = Req::post(INITIALIZE).header("Host", host).send(s.addr);
        assert_eq!(a.status, 403, "{host}");
        assert!(a.json()["error"]["message"].as_str().unwrap().contains("Host"));
    }
    let ok = Req::post(INITIALIZE).header("Host", &format!("localhost:{}", s.addr.port())).send(s.addr);
    assert_eq!(ok.status, 200);
}

#[test]
fn a_wrong_origin_gets_403_and_a_loopback_origin_of_the_port_is_allowed() {
    let s = start_default();
    let a = Req::post(INITIALIZE).header("Origin", "http://evil.example.com").send(s.addr);
    assert_eq!(a.status, 403);
    assert_eq!(a.header("access-control-allow-origin"), None);
    let origin = format!("http://localhost:{}", s.addr.port());
    let ok = Req::post(INITIALIZE).header("Origin", &origin).send(s.addr);
    assert_eq!(ok.status, 200);
    assert_eq!(ok.header("access-control-allow-origin"), Some(origin.as_str()));
    assert_eq!(ok.header("access-control-expose-headers"), Some("mcp-session-id, www-authenticate"));
}

#[test]
fn an_allowed_origin_gets_a_cors_preflight_answer_and_others_do_not() {
    let s = start(
        HttpOptions { allow_origins: vec!["https://host.example".into()], ..HttpOptions::default() },
        common::plain_fetch(),
    );
    let a = Req::new("OPTIONS")
        .header("Origin", "https://host.example")
        .header("Access-Control-Request-Method", "POST")
        .header("Access-Control-Request-Headers", "content-type, mcp-session-id")
        .send(s.addr);
    assert_eq!(a.status, 204);
    assert_eq!(a.header("access-control-allow-origin"), Some("https://host.example"));
    let allowed = a.header("access-control-allow-headers").unwrap();
    for h in ["content-type", "mcp-session-id", "mcp-protocol-version", "last-event-id", "authorization"] {
        assert!(allowed.contains(h), "{h} in {allowed}");
    }
    assert!(a.header("access-control-allow-methods").unwrap().contains("POST"));
    assert_eq!(a.header("access-control-expose-headers"), Some("mcp-session-id, www-authenticate"));
    let bad = Req::new("OPTIONS").header("Origin", "https://evil.example").send(s.addr);
    assert_eq!(bad.status, 403);
    assert_eq!(bad.header("access-control-allow-origin"), None);
}

#[test]
fn a_missing_or_wrong_token_gets_401_with_www_authenticate() {
    let s = start(HttpOptions { token: Some("s3cret-token".into()), ..HttpOptions::default() }, common::plain_fetch());
    let a = Req::post(INITIALIZE).send(s.addr);
    assert_eq!(a.status, 401);
    assert_eq!(a.header("www-authenticate"), Some(r#"Bearer realm="bb""#));
    let a = Req::post(INITIALIZE).header("Authorization", "Bearer s3cret-tokeN").send(s.addr);
    assert_eq!(a.status, 401);
    assert!(a.header("www-authenticate").unwrap().starts_with("Bearer"));
    assert!(!a.body.contains("s3cret"));
    let ok = Req::post(INITIALIZE).header("Authorization", "Bearer s3cret-token").send(s.addr);
    assert_eq!(ok.status, 200);
    assert!(!s.logs.lock().unwrap().iter().any(|l| l.contains("s3cret")));
}

#[test]
fn a_head_over_the_limit_gets_431() {
    let limits = Limits { max_header: 8 * 1024, ..Limits::default() };
    let s = start(HttpOptions { limits, ..HttpOptions::default() }, common::plain_fetch());
    let a = Req::post(INITIALIZE).header("X-Padding", &"x".repeat(20 * 1024)).send(s.addr);
    assert_eq!(a.status, 431);
}

#[test]
fn two_host_or_two_origin_headers_get_400() {
    let s = start_default();
    let origin = format!("http://localhost:{}", s.addr.port());
    for (name, value) in [("Host", s.addr.to_string()), ("Origin", origin)] {
        let mut c = common::connect(s.addr);
        let mut head = format!(
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: */*\r\nContent-Length: {}\r\nConnection: close\r\n",
            s.addr,
            INITIALIZE.len()
        );
        head.push_str(&format!("{name}: {value}\r\n"));
        if name == "Origin" {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str("\r\n");
        head.push_str(INITIALIZE);
        std::io::Write::write_all(&mut c, head.as_bytes()).unwrap();
        let a = common::read_answer(&mut c);
        assert_eq!(a.status, 400, "{name}: {a:?}");
        assert!(a.json()["error"]["message"].as_str().unwrap().contains(&format!("exactly one {name}")));
    }
}

#[test]
fn a_short_bearer_token_is_refused_off_loopback_and_the_error_says_what_to_set() {
    let exposed = bb_core::testing::test_catalogue().expose(&bb_core::ExposureOptions::default()).unwrap();
    let config = bb_core::ServerConfig::new(exposed, "0.0.0-test");
    let options = HttpOptions { token: Some("x".into()), ..HttpOptions::default() };
    let refused = bb_http::HttpServer::bind(
        "0.0.0.0:0".parse().unwrap(),
        options,
        config,
        &bb_drive::Process::default(),
        common::plain_fetch(),
        bb_drive::Logger::new(None),
    );
    let e = refused.err().expect("a one-character token is refused off loopback");
    assert!(e.to_string().contains("BB_HTTP_TOKEN") && e.to_string().contains("at least 32"), "{e}");
    let e = bb_http::BearerToken::resolve(Some("short".into()), false).unwrap_err();
    assert!(e.to_string().contains("set it to"), "{e}");
}

#[test]
fn an_absolute_form_target_naming_another_host_gets_400_whatever_the_host_header_says() {
    let s = start_default();
    let evil = Req::post(INITIALIZE).path("http://evil.example/mcp").send(s.addr);
    assert_eq!(evil.status, 400, "{evil:?}");
    assert!(evil.json()["error"]["message"].as_str().unwrap().contains("another host"));
    let same = Req::post(INITIALIZE).path(&format!("http://{}/mcp", s.addr)).send(s.addr);
    assert_eq!(same.status, 200, "the target's authority is the Host: {same:?}");
}
