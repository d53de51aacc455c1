//! Several people on one HTTP server with one operator token, asking for the same thing at the same
//! time, cost Bitbucket one request: the server's shards share their reads in flight. People with
//! their own tokens never share one.
//!
//! Each call asks for progress, so the server answers by SSE at once: once its head is read, the
//! call has been handed to its session and is waiting for its read. The stand-in Bitbucket holds
//! every read until the test releases it, so all of them are in flight together by construction.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod common;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use bb_core::{FetchOutcome, FetchRequest};
use bb_drive::{Bitbucket, Cancel};
use bb_http::{HttpOptions, PersonalToken};
use common::{Req, connect, initialize_with, start};
use serde_json::json;

const HEADER: &str = "X-Bitbucket-Token";

/// The request bb makes to ask Bitbucket whether it accepts a person's token.
const TOKEN_CHECK: &str = "/rest/api/latest/users";

/// A Bitbucket that answers the token check at once and holds every other read until released,
/// counting them.
fn held(released: Arc<AtomicBool>, reads: Arc<AtomicUsize>) -> Arc<dyn Bitbucket> {
    Arc::new(move |req: FetchRequest, person: Option<&PersonalToken>, cancel: &Cancel| {
        let who = person.map_or("the operator", |p| p.secret()).to_owned();
        if req.path == TOKEN_CHECK {
            return FetchOutcome::response(200, format!("you are {who}"));
        }
        reads.fetch_add(1, Ordering::SeqCst);
        while !released.load(Ordering::SeqCst) {
            if cancel.sleep(Duration::from_millis(2)) {
                return FetchOutcome::response(499, "cancelled");
            }
        }
        FetchOutcome::response(200, format!("{} read by {who}", req.path))
    })
}

/// Posts a call of `get_thing` that asks for progress and reads the head of its SSE answer: the
/// call is then waiting for its read. The body follows on the returned connection.
fn call_thing(addr: SocketAddr, session: &str, token: Option<&str>) -> TcpStream {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "get_thing", "arguments": {"id": 1}, "_meta": {"progressToken": "p"}}});
    let mut req = Req::post(body.to_string()).session(session).header("MCP-Protocol-Version", "2025-11-25");
    if let Some(token) = token {
        req = req.header(HEADER, token);
    }
    let mut s = connect(addr);
    s.write_all(&req.bytes(addr)).unwrap();
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        assert_eq!(s.read(&mut byte).unwrap(), 1, "a head: {:?}", String::from_utf8_lossy(&head));
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head).to_ascii_lowercase();
    assert!(head.starts_with("http/1.1 200") && head.contains("text/event-stream"), "{head}");
    s
}

/// The rest of an SSE answer, to the end of the connection.
fn rest(mut s: TcpStream) -> String {
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    String::from_utf8_lossy(&out).into_owned()
}

#[test]
fn eight_sessions_with_the_operators_token_asking_one_thing_at_once_make_one_bitbucket_request() {
    let (released, reads) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicUsize::new(0)));
    let server = start(HttpOptions::default(), held(Arc::clone(&released), Arc::clone(&reads)));
    let sessions: Vec<String> = (0..8).map(|_| initialize_with(server.addr, &[])).collect();
    let waiting: Vec<TcpStream> = sessions.iter().map(|id| call_thing(server.addr, id, None)).collect();
    released.store(true, Ordering::SeqCst);
    for s in waiting {
        let answer = rest(s);
        assert!(answer.contains("/rest/api/latest/things/1 read by the operator"), "{answer}");
    }
    assert_eq!(reads.load(Ordering::SeqCst), 1);
}

#[test]
fn two_people_with_their_own_tokens_asking_one_thing_at_once_make_two_requests() {
    let (released, reads) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicUsize::new(0)));
    let options = HttpOptions { per_user_token_header: Some(HEADER.into()), ..HttpOptions::default() };
    let server = start(options, held(Arc::clone(&released), Arc::clone(&reads)));
    let people = ["token-of-alice", "token-of-bob"];
    let sessions: Vec<String> = people.iter().map(|t| initialize_with(server.addr, &[(HEADER, t)])).collect();
    let waiting: Vec<TcpStream> =
        sessions.iter().zip(people).map(|(id, t)| call_thing(server.addr, id, Some(t))).collect();
    released.store(true, Ordering::SeqCst);
    for (s, token) in waiting.into_iter().zip(people) {
        let answer = rest(s);
        assert!(answer.contains(&format!("read by {token}")), "{answer}");
    }
    assert_eq!(reads.load(Ordering::SeqCst), 2);
}
