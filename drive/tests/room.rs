//! Large calls share the application's memory budget ([`bb_drive::Room`], in its [`bb_drive::Process`]): with room for one diff view at a
//! time, three views of three sessions run one after another and all answer. The driver sits behind
//! one mutex, as an HTTP shard does, and its wake callback takes that mutex: a room given back while
//! the driver is held must grant the next call without taking it again on the same thread (which
//! would deadlock the shard).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod common;

use std::sync::mpsc;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use bb_core::{Catalogue, ExposureOptions, Input, ServerConfig, SessionId, limits};
use bb_drive::{Delivery, Driver, Logger, Process};
use common::bitbucket;
use serde_json::Value;

/// The shard a test drives: one driver behind one mutex.
type Shard = Mutex<Option<Driver>>;
/// A step on the driver, with where its deliveries go.
type Step<'a> = &'a dyn Fn(&mut Driver, &mut dyn FnMut(Delivery));

#[test]
fn with_room_for_one_view_three_sessions_views_run_in_turn_and_all_answer() {
    let process = Process::new(limits::VIEW_ROOM);
    let exposed = Catalogue::standard().expose(&ExposureOptions::default()).unwrap();
    let (tx, answers) = mpsc::channel::<(SessionId, Value)>();
    let deliver = move |d: Delivery| {
        if let Delivery::Send { session, message, .. } = d {
            let v: Value = serde_json::from_slice(&message).unwrap();
            if v["id"] == 7 {
                tx.send((session, v)).unwrap();
            }
        }
    };
    let deliver = Arc::new(Mutex::new(deliver));
    // The shard: one driver behind one mutex, fed back from the read threads and the wakes.
    let shard: Arc<Shard> = Arc::new(Mutex::new(None));
    let (fetched, woken) = (Arc::downgrade(&shard), Arc::downgrade(&shard));
    let (d1, d2) = (Arc::clone(&deliver), Arc::clone(&deliver));
    let feed = move |weak: &Weak<Shard>, f: Step<'_>| {
        if let Some(shard) = weak.upgrade() {
            let mut guard = shard.lock().unwrap();
            let driver = guard.as_mut().unwrap();
            let deliver = &d1;
            f(driver, &mut |d| (deliver.lock().unwrap())(d));
        }
    };
    let feed = Arc::new(feed);
    let (f1, f2) = (Arc::clone(&feed), Arc::clone(&feed));
    let driver = Driver::new(
        ServerConfig::new(exposed, "test"),
        process.clone(),
        Arc::new(bitbucket),
        Logger::new(None),
        move |ticket, outcome| {
            let outcome = Mutex::new(Some(outcome));
            f1(&fetched, &|d, out| {
                d.feed(Input::Fetched { ticket, outcome: outcome.lock().unwrap().take().unwrap() }, out)
            });
        },
    )
    .on_wake(move |w| {
        let w = Mutex::new(Some(w));
        f2(&woken, &|d, out| d.wake(w.lock().unwrap().take().unwrap(), out));
    });
    *shard.lock().unwrap() = Some(driver);
    let initialize = br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}},"clientInfo":{"name":"t","version":"1"}}}"#;
    let show = br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"show","arguments":{"kind":"diff","project":"BB","repo":"api","pr_id":1}}}"#;
    let mut sessions = Vec::new();
    {
        let mut guard = shard.lock().unwrap();
        let driver = guard.as_mut().unwrap();
        let mut out = |d: Delivery| (d2.lock().unwrap())(d);
        for tag in 0..3 {
            let s = driver.open(None, &mut out);
            driver.feed(Input::Message { session: s, bytes: initialize, tag: tag * 10 }, &mut out);
            sessions.push(s);
        }
        // All three ask at once; one gets the room, two wait for it.
        for (i, s) in sessions.iter().enumerate() {
            driver.feed(Input::Message { session: *s, bytes: show, tag: i as u64 * 10 + 1 }, &mut out);
        }
    }
    let mut answered: Vec<SessionId> = (0..3)
        .map(|_| {
            let (session, v) = answers.recv_timeout(Duration::from_secs(60)).expect("every view answers");
            assert!(v["result"]["isError"].is_null(), "{v}");
            session
        })
        .collect();
    answered.sort();
    assert_eq!(answered, sessions);
    assert_eq!(process.room().usage(), (0, 0), "every room was given back");
}
