//! Connections one client cannot take from everyone: connections without the token never hold a
//! place among those admitted, one peer holds at most its share, and a flood of refusals writes a
//! few warning lines, not one per connection. Every client here is 127.0.0.1, one peer.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod common;

use std::net::Ipv4Addr;
use std::time::{Duration, Instant};

use bb_http::{HttpOptions, Limits};
use common::{INITIALIZE, Req, closed_by_server, connect, connect_from, read_answer, request, send_keep_alive, start};

const TOKEN: &str = "0123456789abcdef0123456789abcdef";

fn authorized(req: Req) -> Req {
    req.header("Authorization", &format!("Bearer {TOKEN}"))
}

#[test]
fn connections_without_the_token_are_closed_and_never_take_an_admitted_place() {
    let limits = Limits { max_connections: 2, max_connections_per_peer: Some(100), ..Limits::default() };
    let s = start(HttpOptions { token: Some(TOKEN.into()), limits, ..HttpOptions::default() }, common::plain_fetch());
    // Two connections that say nothing take both waiting places (the server accepts in order).
    let mut idle_first = connect(s.addr);
    let _idle_second = connect(s.addr);
    // Newcomers with the token close the one waiting longest and are admitted.
    let mut first = connect(s.addr);
    let a = send_keep_alive(&mut first, s.addr, &authorized(Req::post(INITIALIZE)));
    assert_eq!(a.status, 200, "{a:?} {:?}", s.logs.lock().unwrap());
    let mut second = connect(s.addr);
    let a = send_keep_alive(&mut second, s.addr, &authorized(Req::post(INITIALIZE)));
    assert_eq!(a.status, 200, "{a:?}");
    assert!(closed_by_server(&mut idle_first), "the connection waiting longest was closed to make room");
    // A request without the token is refused and its connection closed, kept alive or not.
    let mut tokenless = connect(s.addr);
    let a = send_keep_alive(&mut tokenless, s.addr, &Req::post(INITIALIZE));
    assert_eq!((a.status, a.header("connection")), (401, Some("close")));
    assert!(closed_by_server(&mut tokenless));
    // The admitted places are both taken by connections with the token, both idle: a third closes
    // the one idle longest, and the other goes on serving.
    let third = authorized(Req::post(INITIALIZE)).send(s.addr);
    assert_eq!(third.status, 200, "{third:?}");
    assert!(closed_by_server(&mut first), "the connection idle longest made room");
    assert_eq!(send_keep_alive(&mut second, s.addr, &authorized(Req::post(INITIALIZE))).status, 200);
}

#[test]
fn one_peer_holds_at_most_its_share_of_connections() {
    let limits = Limits { max_connections: 100, max_connections_per_peer: Some(2), ..Limits::default() };
    let s = start(HttpOptions { limits, ..HttpOptions::default() }, common::plain_fetch());
    let mut held = vec![connect(s.addr), connect(s.addr)];
    for c in &mut held {
        assert_eq!(send_keep_alive(c, s.addr, &Req::post(INITIALIZE)).status, 200);
    }
    let mut third = connect(s.addr);
    let a = read_answer(&mut third);
    assert_eq!(a.status, 503);
    assert!(a.json()["error"]["message"].as_str().unwrap().contains("too many connections"));
    drop(held);
    // The share comes back as the peer's connections close.
    let mut status = 503;
    for _ in 0..100 {
        status = Req::post(INITIALIZE).send(s.addr).status;
        if status == 200 {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(status, 200);
}

#[test]
fn a_flood_of_turned_away_connections_writes_a_line_a_second_with_a_count() {
    let limits = Limits { max_connections_per_peer: Some(1), ..Limits::default() };
    let s = start(HttpOptions { limits, ..HttpOptions::default() }, common::plain_fetch());
    let mut held = connect(s.addr);
    assert_eq!(send_keep_alive(&mut held, s.addr, &Req::post(INITIALIZE)).status, 200);
    let start = Instant::now();
    for _ in 0..40 {
        assert_eq!(read_answer(&mut connect(s.addr)).status, 503);
    }
    let lines = |s: &common::TestServer, what: &str| s.logs.lock().unwrap().iter().filter(|l| l.contains(what)).count();
    let written = lines(&s, "turned a connection away");
    assert!(written >= 1);
    assert!(written as u64 <= start.elapsed().as_secs() + 1, "{written} lines for 40 refusals");
    // What was held back is counted in a later line.
    let mut counted = false;
    for _ in 0..100 {
        let logs = s.logs.lock().unwrap().join("\n");
        counted = logs.contains("more connection(s) turned away") || logs.contains("more like it");
        if counted {
            break;
        }
        drop(logs);
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(counted, "{:#?}", s.logs.lock().unwrap());
}

#[test]
fn connections_that_only_get_refusals_make_room_for_a_person_who_does_work() {
    let limits = Limits { max_connections: 2, max_connections_per_peer: Some(100), ..Limits::default() };
    let s = start(HttpOptions { limits, ..HttpOptions::default() }, common::plain_fetch());
    // Two connections pass the gate (loopback, no token) and take both admitted places, but every
    // request they send is refused: a session that does not exist.
    let junk = || Req::post(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#).header("Mcp-Session-Id", "no-such-session");
    let mut first = connect(s.addr);
    let mut second = connect(s.addr);
    for c in [&mut first, &mut second] {
        let a = send_keep_alive(c, s.addr, &junk());
        assert_eq!(a.status, 404, "{a:?}");
    }
    // A person gets in: the idle connection admitted first, which never proved itself, is closed.
    let mut person = connect(s.addr);
    let a = send_keep_alive(&mut person, s.addr, &Req::post(INITIALIZE));
    assert_eq!(a.status, 200, "{a:?}");
    assert!(closed_by_server(&mut first), "the connection that only got refusals made room");
    // The person's connection has proven itself: another newcomer takes the other refused one's place,
    // though the person's was idle longer.
    let mut other = connect(s.addr);
    assert_eq!(send_keep_alive(&mut other, s.addr, &Req::post(INITIALIZE)).status, 200);
    assert!(closed_by_server(&mut second));
    assert_eq!(send_keep_alive(&mut person, s.addr, &Req::post(INITIALIZE)).status, 200);
}

#[test]
fn connections_that_only_answer_health_probes_never_keep_a_person_out() {
    const HEADER: &str = "X-Bitbucket-Token";
    // Eight places, two per address (a quarter); the stand-in accepts every person's token.
    let limits = Limits { max_connections: 8, ..Limits::default() };
    let options = HttpOptions { per_user_token_header: Some(HEADER.into()), limits, ..HttpOptions::default() };
    let s = start(options, common::plain_fetch());
    // Four addresses take every place, each connection asking only `/healthz`, and keep them open.
    let mut probes = Vec::new();
    for last in 2..=5 {
        for _ in 0..2 {
            let mut c = connect_from(Ipv4Addr::new(127, 0, 0, last), s.addr);
            let a = send_keep_alive(&mut c, s.addr, &Req::new("GET").path("/healthz"));
            assert_eq!(a.status, 200, "{a:?}");
            probes.push(c);
        }
    }
    // A person gets in, from an address of their own and from a fifth one (the first closes its
    // connection after the answer, so the second finds a place).
    let person = || Req::post(INITIALIZE).header(HEADER, "token-of-alice");
    let a = person().send(s.addr);
    assert_eq!(a.status, 200, "{a:?}");
    let mut fifth = connect_from(Ipv4Addr::new(127, 0, 0, 6), s.addr);
    let a = send_keep_alive(&mut fifth, s.addr, &person());
    assert_eq!(a.status, 200, "{a:?}");
    assert!(closed_by_server(&mut probes[0]), "the probe admitted first made room");
}

#[test]
fn a_connection_streaming_an_answer_keeps_its_place_until_the_answer_ends() {
    use std::io::Read;
    use std::sync::{Arc, Mutex, mpsc};
    // Bitbucket answers once the test says so.
    let (release, held) = mpsc::channel::<()>();
    let held = Arc::new(Mutex::new(held));
    let fetch: Arc<dyn bb_drive::Bitbucket> =
        Arc::new(move |_: bb_core::FetchRequest, _: Option<&bb_http::PersonalToken>, _: &bb_drive::Cancel| {
            let _ = held.lock().unwrap().recv_timeout(Duration::from_secs(30));
            bb_core::FetchOutcome::response(200, "late thing")
        });
    let limits = Limits {
        max_connections: 1,
        max_connections_per_peer: Some(100),
        sse_after: Duration::from_millis(50),
        ..Limits::default()
    };
    let s = start(HttpOptions { limits, ..HttpOptions::default() }, fetch);
    let mut streaming = connect(s.addr);
    let a = send_keep_alive(&mut streaming, s.addr, &Req::post(INITIALIZE));
    assert_eq!(a.status, 200, "{a:?}");
    let id = a.header("mcp-session-id").unwrap().to_owned();
    // A call whose answer comes as an SSE stream: its head arrives, its answer waits for Bitbucket.
    let call = Req::post(request("tools/call", serde_json::json!({"name": "get_thing", "arguments": {"id": 1}})))
        .session(&id)
        .header("MCP-Protocol-Version", "2025-11-25");
    let head = send_keep_alive(&mut streaming, s.addr, &call);
    assert_eq!(head.header("content-type"), Some("text/event-stream"), "{head:?}");
    let busy = Req::post(INITIALIZE).send(s.addr);
    assert_eq!(busy.status, 503, "the only place streams an answer: {busy:?}");
    // The answer ends; then the connection is idle, and makes room.
    release.send(()).unwrap();
    let mut rest = Vec::new();
    let mut buf = [0u8; 4096];
    while !rest.ends_with(b"0\r\n\r\n") {
        let n = streaming.read(&mut buf).unwrap();
        assert!(n > 0, "the stream ended before its answer: {}", String::from_utf8_lossy(&rest));
        rest.extend_from_slice(&buf[..n]);
    }
    assert!(String::from_utf8_lossy(&rest).contains("late thing"));
    let mut status = 0;
    for _ in 0..200 {
        status = Req::post(INITIALIZE).send(s.addr).status;
        if status == 200 {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(status, 200);
    assert!(closed_by_server(&mut streaming));
}

/// Issue 58: with the cap full of connections whose `initialize` waits for its token check, a person
/// already in still gets their call answered: the stalled connection admitted first is closed for
/// them (its check cancelled), while a new person is told busy.
#[test]
fn a_stalled_initialize_cannot_refuse_a_session_s_call() {
    use std::io::Write;
    use std::sync::{Arc, Mutex, mpsc};
    const HEADER: &str = "X-Bitbucket-Token";
    // What the stalled checks do, as it happens: one began, one gave up (its cancel came).
    let (said, heard) = mpsc::channel::<&'static str>();
    let said = Mutex::new(said);
    // Bitbucket answers alice's token at once; a `stalled-` token's check hangs until it is cancelled.
    let fetch: Arc<dyn bb_drive::Bitbucket> = Arc::new(
        move |req: bb_core::FetchRequest, person: Option<&bb_http::PersonalToken>, cancel: &bb_drive::Cancel| {
            if person.is_some_and(|p| p.secret().starts_with("stalled-")) {
                let _ = said.lock().unwrap().send("began");
                if cancel.sleep(Duration::from_secs(120)) {
                    let _ = said.lock().unwrap().send("gave up");
                }
                return bb_core::FetchOutcome::response(503, "gave up");
            }
            bb_core::FetchOutcome::response(200, format!("thing {}", req.path))
        },
    );
    let limits = Limits { max_connections: 2, max_connections_per_peer: Some(100), ..Limits::default() };
    let options = HttpOptions { per_user_token_header: Some(HEADER.into()), limits, ..HttpOptions::default() };
    let s = start(options, fetch);
    let alice = common::initialize_with(s.addr, &[(HEADER, "token-of-alice")]);
    // Two people connect, and their initialize waits on the token check: both places are busy.
    let mut waiting = Vec::new();
    for n in 1..=2 {
        let mut c = connect(s.addr);
        c.write_all(&Req::post(INITIALIZE).header(HEADER, &format!("stalled-{n}")).bytes(s.addr)).unwrap();
        waiting.push(c);
        assert_eq!(heard.recv_timeout(Duration::from_secs(60)), Ok("began"), "the check of stalled-{n} began");
    }
    // A new person is told busy: only new, unproven connections are refused.
    let bob = Req::post(INITIALIZE).header(HEADER, "token-of-bob").send(s.addr);
    assert_eq!(bob.status, 503, "{bob:?}");
    // Alice, already in, is answered on a new connection; the stalled connection admitted first made room.
    let list = Req::post(request("tools/list", serde_json::json!({})))
        .session(&alice)
        .header(HEADER, "token-of-alice")
        .header("MCP-Protocol-Version", "2025-11-25")
        .send(s.addr);
    assert_eq!(list.status, 200, "{list:?} {:?}", s.logs.lock().unwrap());
    assert!(list.body.contains("get_thing"), "{list:?}");
    assert!(closed_by_server(&mut waiting[0]), "the first stalled initialize was closed");
    assert_eq!(heard.recv_timeout(Duration::from_secs(60)), Ok("gave up"), "its token check was cancelled");
    assert!(heard.try_recv().is_err(), "the other check still waits");
}
