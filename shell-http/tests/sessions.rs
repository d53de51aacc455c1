//! Sessions: ids required after initialize, unknown and ended ids, protocol versions, the cap and
//! each peer's share (the session idle longest makes room; busy ones never do), and idle expiry.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod common;

use std::sync::{Arc, Condvar, Mutex, mpsc};
use std::time::Duration;

use bb_core::{FetchOutcome, FetchRequest};
use bb_drive::{Bitbucket, Cancel};
use bb_http::{HttpOptions, Limits, PersonalToken};
use common::{INITIALIZE, Req, initialize, request, start, start_default};
use serde_json::json;

fn ping() -> String {
    request("ping", json!({}))
}

#[test]
fn a_request_without_a_session_id_gets_400() {
    let s = start_default();
    let a = Req::post(ping()).send(s.addr);
    assert_eq!(a.status, 400);
    assert!(a.json()["error"]["message"].as_str().unwrap().contains("Mcp-Session-Id"));
}

#[test]
fn an_unknown_session_id_gets_404() {
    let s = start_default();
    let a = Req::post(ping()).session("00000000000000000000000000000000").send(s.addr);
    assert_eq!(a.status, 404);
}

#[test]
fn delete_ends_the_session_and_its_id_then_gets_404() {
    let s = start_default();
    let id = initialize(s.addr);
    assert_eq!(Req::post(ping()).session(&id).send(s.addr).status, 200);
    assert_eq!(Req::new("DELETE").session(&id).send(s.addr).status, 204);
    assert_eq!(Req::post(ping()).session(&id).send(s.addr).status, 404);
    assert_eq!(Req::new("DELETE").session(&id).send(s.addr).status, 404);
    assert_eq!(Req::new("DELETE").send(s.addr).status, 400);
}

#[test]
fn an_unsupported_protocol_version_gets_400_and_an_absent_one_is_2025_03_26() {
    let s = start_default();
    let id = initialize(s.addr);
    let a = Req::post(ping()).session(&id).header("MCP-Protocol-Version", "1999-01-01").send(s.addr);
    assert_eq!(a.status, 400);
    assert!(a.json()["error"]["message"].as_str().unwrap().contains("MCP-Protocol-Version"));
    for v in ["2025-03-26", "2025-06-18", "2025-11-25"] {
        assert_eq!(Req::post(ping()).session(&id).header("MCP-Protocol-Version", v).send(s.addr).status, 200, "{v}");
    }
    assert_eq!(Req::post(ping()).session(&id).send(s.addr).status, 200);
}

#[test]
fn sessions_are_independent() {
    let s = start_default();
    let a = initialize(s.addr);
    let b = initialize(s.addr);
    assert_ne!(a, b);
    assert_eq!(Req::new("DELETE").session(&a).send(s.addr).status, 204);
    assert_eq!(Req::post(ping()).session(&b).send(s.addr).status, 200);
}

/// A Bitbucket whose answers wait until the test lets them go; each request says it arrived.
struct Hanging {
    arrived: mpsc::Receiver<()>,
    gate: Arc<(Mutex<bool>, Condvar)>,
}

impl Hanging {
    fn new() -> (Hanging, Arc<dyn Bitbucket>) {
        let (tx, arrived) = mpsc::channel();
        let gate = Arc::new((Mutex::new(false), Condvar::new()));
        let open = Arc::clone(&gate);
        let fetch: Arc<dyn Bitbucket> = Arc::new(move |_: FetchRequest, _: Option<&PersonalToken>, _: &Cancel| {
            let _ = tx.send(());
            let (lock, cvar) = &*open;
            let mut go = lock.lock().unwrap();
            // Bounded, so a failing test ends.
            for _ in 0..300 {
                if *go {
                    break;
                }
                go = cvar.wait_timeout(go, Duration::from_millis(100)).unwrap().0;
            }
            FetchOutcome::response(200, "late thing")
        });
        (Hanging { arrived, gate }, fetch)
    }

    /// Starts a call in `session` on its own thread and returns once Bitbucket has it.
    fn call(&self, addr: std::net::SocketAddr, session: &str) -> std::thread::JoinHandle<u16> {
        // A thing of its own, so no two calls share one Bitbucket read (identical reads in flight are
        // made once): a number no other call of the test asks for.
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        let thing = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let req =
            Req::post(request("tools/call", json!({"name": "get_thing", "arguments": {"id": thing}}))).session(session);
        let t = std::thread::spawn(move || req.send(addr).status);
        self.arrived
            .recv_timeout(Duration::from_secs(5))
            .unwrap_or_else(|e| panic!("the call in {session} did not reach Bitbucket: {e}"));
        t
    }

    fn release(&self) {
        *self.gate.0.lock().unwrap() = true;
        self.gate.1.notify_all();
    }
}

fn alive(addr: std::net::SocketAddr, id: &str) -> bool {
    let status = Req::post(ping()).session(id).send(addr).status;
    assert!(matches!(status, 200 | 404), "{status}");
    status == 200
}

#[test]
fn at_the_cap_the_session_idle_longest_makes_room_and_busy_ones_get_503() {
    let (hanging, fetch) = Hanging::new();
    // Every client here is 127.0.0.1, so its share is the whole cap.
    let limits = Limits { max_sessions: 2, max_sessions_per_peer: Some(2), ..Limits::default() };
    let s = start(HttpOptions { limits, ..HttpOptions::default() }, fetch);
    let a = initialize(s.addr);
    let b = initialize(s.addr);
    let a_call = hanging.call(s.addr, &a);
    // b is idle, a has a POST waiting: b makes room.
    let c = initialize(s.addr);
    assert!(!alive(s.addr, &b), "the idle session was ended");
    assert!(alive(s.addr, &a), "the busy session was not");
    let c_call = hanging.call(s.addr, &c);
    // Every session is busy: no room.
    let refused = Req::post(INITIALIZE).send(s.addr);
    assert_eq!(refused.status, 503);
    assert_eq!(refused.json()["id"], 0);
    assert!(refused.json()["error"]["message"].as_str().unwrap().contains("limit of 2 sessions"), "{refused:?}");
    assert!(refused.header("retry-after").is_some());
    hanging.release();
    assert_eq!((a_call.join().unwrap(), c_call.join().unwrap()), (200, 200));
    // Idle again, the one unused longest makes room.
    let d = initialize(s.addr);
    assert!(alive(s.addr, &d));
    assert_eq!([&a, &c].iter().filter(|id| alive(s.addr, id)).count(), 1);
    assert!(s.logs.lock().unwrap().iter().any(|l| l.contains("to make room")));
}

#[test]
fn a_peer_at_its_share_of_sessions_ends_its_own_session_idle_longest() {
    let limits = Limits { max_sessions_per_peer: Some(2), ..Limits::default() };
    let s = start(HttpOptions { limits, ..HttpOptions::default() }, common::plain_fetch());
    let a = initialize(s.addr);
    let b = initialize(s.addr);
    let c = initialize(s.addr);
    assert_eq!([alive(s.addr, &a), alive(s.addr, &b), alive(s.addr, &c)], [false, true, true]);
}

#[test]
fn a_peer_at_its_share_with_every_session_busy_gets_503_naming_its_share() {
    let (hanging, fetch) = Hanging::new();
    let limits = Limits { max_sessions_per_peer: Some(1), ..Limits::default() };
    let s = start(HttpOptions { limits, ..HttpOptions::default() }, fetch);
    let a = initialize(s.addr);
    let call = hanging.call(s.addr, &a);
    let refused = Req::post(INITIALIZE).send(s.addr);
    assert_eq!(refused.status, 503);
    assert!(refused.json()["error"]["message"].as_str().unwrap().contains("127.0.0.1 already holds its limit of 1"));
    hanging.release();
    assert_eq!(call.join().unwrap(), 200);
}

#[test]
fn an_idle_session_expires() {
    let limits = Limits { session_idle: Duration::from_millis(100), ..Limits::default() };
    let s = start(HttpOptions { limits, ..HttpOptions::default() }, common::plain_fetch());
    let id = initialize(s.addr);
    let mut status = 200;
    for _ in 0..100 {
        std::thread::sleep(Duration::from_millis(50));
        status = Req::post(ping()).session(&id).send(s.addr).status;
        if status == 404 {
            break;
        }
        // Each use renews the session; wait without using it.
        std::thread::sleep(Duration::from_millis(300));
        status = Req::post(ping()).session(&id).send(s.addr).status;
        if status == 404 {
            break;
        }
    }
    assert_eq!(status, 404);
}
