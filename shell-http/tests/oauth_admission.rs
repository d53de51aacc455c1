//! Anonymous login traffic (`--oauth`) never takes the places of people using `/mcp`: slow bodies
//! and slow metadata documents are served under their own share and bounds, login bodies are small
//! and quick, and one address that floods registrations is slowed down while others register.
//! Each test opens at most a few hundred loopback connections and stops by itself; it waits for
//! what the server does, never for a fixed time.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod common;

use std::io::{ErrorKind, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use bb_http::{HttpOptions, Limits, MemoryStore, OAuthOptions, Provider, ProviderError, Tokens};
use common::{INITIALIZE, Req, connect_from, parse, start};

const REDIRECT: &str = "http://127.0.0.1:5555/callback";
const CHALLENGE: &str = "BVvy4CD-OvCFbvT0e0Ez4cvXutBtG3b4Q43biCWs3YQ";
const REGISTRATION: &str = r#"{"redirect_uris":["http://127.0.0.1:5555/callback"],"client_name":"flood"}"#;

/// Bitbucket's provider: metadata documents are held until [`Documents::release`], counted.
#[derive(Default)]
struct Documents {
    fetching: AtomicUsize,
    most: AtomicUsize,
    released: Mutex<bool>,
    wake: Condvar,
}

impl Documents {
    fn release(&self) {
        *self.released.lock().unwrap() = true;
        self.wake.notify_all();
    }
}

impl Provider for Documents {
    fn exchange(&self, _: &str, _: &str, _: &str) -> Result<Tokens, ProviderError> {
        Err(ProviderError::Refused("invalid_grant".into()))
    }

    fn refresh(&self, _: &str) -> Result<Tokens, ProviderError> {
        Err(ProviderError::Refused("invalid_grant".into()))
    }

    fn client_metadata(&self, url: &str) -> Result<Vec<u8>, String> {
        let now = self.fetching.fetch_add(1, Ordering::SeqCst) + 1;
        self.most.fetch_max(now, Ordering::SeqCst);
        let mut released = self.released.lock().unwrap();
        while !*released {
            released = self.wake.wait(released).unwrap();
        }
        drop(released);
        self.fetching.fetch_sub(1, Ordering::SeqCst);
        Ok(serde_json::json!({ "client_id": url, "redirect_uris": [REDIRECT] }).to_string().into_bytes())
    }
}

/// Releases the held documents when the test ends, passed or not.
struct Release(Arc<Documents>);

impl Drop for Release {
    fn drop(&mut self) {
        self.0.release();
    }
}

fn server(limits: Limits, documents: Arc<Documents>) -> common::TestServer {
    let oauth = OAuthOptions {
        public_url: "http://127.0.0.1".into(),
        bitbucket_url: "https://bitbucket.example.com".into(),
        client_id: "bb-link".into(),
        scope: "REPO_READ".into(),
        provider: documents,
        store: Arc::new(MemoryStore::new()),
        consent_key: [3; 32],
        access_ttl_ms: bb_http::ACCESS_TTL_MS,
    };
    start(HttpOptions { limits, oauth: Some(oauth), ..HttpOptions::default() }, common::plain_fetch())
}

/// One of eight loopback addresses other than 127.0.0.1.
fn address(i: usize) -> Ipv4Addr {
    Ipv4Addr::new(127, 0, 0, 2 + (i % 8) as u8)
}

/// A connection the test watches without blocking: what the server sent, and whether it closed.
struct Watched {
    stream: TcpStream,
    got: Vec<u8>,
    closed: bool,
}

impl Watched {
    fn open(from: Ipv4Addr, addr: SocketAddr, bytes: &[u8]) -> Watched {
        let mut stream = connect_from(from, addr);
        stream.write_all(bytes).unwrap();
        stream.set_nonblocking(true).unwrap();
        Watched { stream, got: Vec::new(), closed: false }
    }

    /// Reads what has arrived; true once the server answered or closed the connection.
    fn settled(&mut self) -> bool {
        let mut buf = [0u8; 4096];
        while !self.closed {
            match self.stream.read(&mut buf) {
                Ok(0) => self.closed = true,
                Ok(n) => self.got.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(_) => self.closed = true,
            }
        }
        self.closed || self.got.windows(4).any(|w| w == b"\r\n\r\n")
    }

    fn status(&self) -> Option<u16> {
        self.got.windows(4).any(|w| w == b"\r\n\r\n").then(|| parse(&self.got).status)
    }
}

/// Polls `watched` until at least `enough` settled or `within` passed; how many settled.
fn until_settled(
    watched: &mut [Watched],
    enough: usize,
    within: Duration,
    mut each_second: impl FnMut(&mut Watched),
) -> usize {
    let start = Instant::now();
    let mut ticks = 0;
    loop {
        let settled = watched.iter_mut().map(|w| w.settled()).filter(|s| *s).count();
        if settled >= enough || start.elapsed() > within {
            return settled;
        }
        if start.elapsed().as_secs() > ticks {
            ticks = start.elapsed().as_secs();
            for w in watched.iter_mut() {
                if !w.settled() {
                    each_second(w);
                }
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `/mcp` from 127.0.0.1 on a fresh connection, without a token: 401 with the challenge when a place is free.
fn mcp_status(addr: SocketAddr) -> (u16, String) {
    let a = Req::post(INITIALIZE).send_from(Ipv4Addr::LOCALHOST, addr);
    (a.status, a.body)
}

#[test]
fn slow_login_bodies_never_take_the_places_of_people_using_mcp() {
    const SLOW: usize = 160;
    // 32 admitted places; anonymous login requests get a quarter of them (8) at once.
    let limits = Limits { max_connections: 32, max_connections_per_peer: Some(64), ..Limits::default() };
    let documents = Arc::new(Documents::default());
    let s = server(limits, documents);
    let head = format!(
        "POST /oauth/register HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{{",
        s.addr
    );
    let mut slow: Vec<Watched> = (0..SLOW).map(|i| Watched::open(address(i), s.addr, head.as_bytes())).collect();
    // Beyond the share every one is answered at once (or closed to make room); one byte a second from the rest.
    let settled = until_settled(&mut slow, SLOW - 8, Duration::from_secs(15), |w| {
        let _ = w.stream.write_all(b" ");
    });
    let (status, body) = mcp_status(s.addr);
    assert_eq!(status, 401, "a person's /mcp finds a place while slow login bodies trickle: {body}");
    assert!(settled >= SLOW - 8, "only {settled} of {SLOW} slow login requests were turned away: the rest hold places");
    for w in slow.iter().filter(|w| w.status().is_some()) {
        let a = parse(&w.got);
        assert_eq!(a.status, 503, "{a:?}");
        assert!(a.header("retry-after").is_some(), "{a:?}");
    }
    // The ones served get a short deadline: 408 and closed, well before the 30 s of an MCP body.
    let started = Instant::now();
    let settled = until_settled(&mut slow, SLOW, Duration::from_secs(12), |w| {
        let _ = w.stream.write_all(b" ");
    });
    assert_eq!(settled, SLOW, "every slow body is cut off within the login's deadline");
    assert!(started.elapsed() < Duration::from_secs(12));
    let late: Vec<_> = slow.iter().filter_map(Watched::status).filter(|s| *s != 503).collect();
    assert!(!late.is_empty() && late.iter().all(|s| *s == 408), "{late:?}");
    let a = slow.iter().find(|w| w.status() == Some(408)).map(|w| parse(&w.got)).unwrap();
    assert_eq!(a.json()["error"], "invalid_request", "{a:?}");
    assert_eq!(a.header("connection"), Some("close"));
}

#[test]
fn slow_metadata_documents_are_fetched_a_few_at_a_time_and_never_keep_a_person_out() {
    const AUTHORIZES: usize = 80;
    // 64 admitted places; anonymous login requests get 16 at once, of which 8 may fetch a document.
    let limits = Limits { max_connections: 64, max_connections_per_peer: Some(64), ..Limits::default() };
    let documents = Arc::new(Documents::default());
    let _release = Release(Arc::clone(&documents));
    let s = server(limits, Arc::clone(&documents));
    let mut asked: Vec<Watched> = (0..AUTHORIZES)
        .map(|i| {
            let target = format!(
                "/oauth/authorize?client_id=https%3A%2F%2Fclient{i}.example%2Fmeta&redirect_uri={}&response_type=code\
                 &code_challenge={CHALLENGE}&code_challenge_method=S256",
                REDIRECT.replace(':', "%3A").replace('/', "%2F")
            );
            let bytes = format!("GET {target} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n", s.addr);
            Watched::open(address(i), s.addr, bytes.as_bytes())
        })
        .collect();
    let settled = until_settled(&mut asked, AUTHORIZES - 8, Duration::from_secs(15), |_| {});
    let (status, body) = mcp_status(s.addr);
    assert_eq!(status, 401, "a person's /mcp finds a place while documents are slow: {body}");
    assert!(
        settled >= AUTHORIZES - 8,
        "only {settled} of {AUTHORIZES} authorizes were answered: the rest wait on documents"
    );
    // The share (16) has room for more, but no more than 8 documents are ever fetched at once.
    let start = Instant::now();
    while documents.fetching.load(Ordering::SeqCst) < 8 && start.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(documents.most.load(Ordering::SeqCst), 8, "documents fetched at once at most");
    for w in asked.iter().filter(|w| w.status().is_some()) {
        let a = parse(&w.got);
        assert_eq!(a.status, 503, "{a:?}");
        assert!(a.header("retry-after").is_some(), "{a:?}");
    }
    // Released, the documents that were being fetched lead their people on to bb's consent page.
    documents.release();
    assert_eq!(until_settled(&mut asked, AUTHORIZES, Duration::from_secs(15), |_| {}), AUTHORIZES);
    assert!(
        asked.iter().any(|w| w.status() == Some(200)),
        "{:?}",
        asked.iter().map(|w| (w.status(), w.closed, String::from_utf8_lossy(&w.got).into_owned())).collect::<Vec<_>>()
    );
}

#[test]
fn an_address_that_floods_registrations_is_slowed_down_while_another_still_registers() {
    let s = server(Limits::default(), Arc::new(Documents::default()));
    let register = || Req::post(REGISTRATION).path("/oauth/register");
    let mut registered = 0;
    let refused = loop {
        let a = register().send_from(address(0), s.addr);
        match a.status {
            201 => registered += 1,
            _ => break a,
        }
        assert!(registered < 300, "300 registrations from one address and none refused");
    };
    assert!(registered >= 60, "the allowance is a burst of 60: {registered}");
    assert_eq!(refused.status, 429, "{refused:?}");
    let wait: u64 = refused.header("retry-after").expect("Retry-After").parse().unwrap();
    assert!((1..=60).contains(&wait), "{wait}");
    assert_eq!(refused.json()["error"], "slow_down", "{refused:?}");
    // Authorizations draw on the same allowance: a page for the person's browser. (One gets through
    // only if a second passed meanwhile on a slow machine, which gave the bucket one back.)
    let spent = Instant::now();
    let authorize = loop {
        let a = Req::new("GET").path("/oauth/authorize?client_id=x").send_from(address(0), s.addr);
        if a.status == 429 {
            break a;
        }
        assert!(spent.elapsed() >= Duration::from_secs(1), "an authorization from a spent address: {a:?}");
        assert!(spent.elapsed() < Duration::from_secs(15), "{a:?}");
    };
    assert!(authorize.header("content-type").unwrap().starts_with("text/plain"), "{authorize:?}");
    // Another address is not held to the first one's allowance.
    let other = register().send_from(address(1), s.addr);
    assert_eq!(other.status, 201, "{other:?}");
}

#[test]
fn a_login_body_over_its_cap_is_refused_at_once() {
    let s = server(Limits::default(), Arc::new(Documents::default()));
    let mut c = connect_from(address(0), s.addr);
    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let head = format!(
        "POST /oauth/token HTTP/1.1\r\nHost: {}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 20000\r\n\r\ngrant_type=",
        s.addr
    );
    c.write_all(head.as_bytes()).unwrap();
    let a = common::read_answer(&mut c);
    assert_eq!(a.status, 413, "{a:?}");
    assert_eq!(a.json()["error"], "invalid_request", "{a:?}");
    assert_eq!(a.header("connection"), Some("close"));
}
