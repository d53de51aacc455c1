//! Highlighting runs on bb's threads for CPU work, never where it would hold up an answer: a diff
//! view answers at its deadline with the files whose jobs have not come back plain (and marked so);
//! a job that comes back afterwards is kept, so the next read of the same lines is highlighted
//! without waiting (a job not yet started when its call answers is dropped; one running goes on).
//! The test holds the deadline until the job has run and the job's outcome until the answer has
//! gone, so the order (job run, deadline, answer, outcome kept) is by construction, not by timing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

mod common;

use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bb_core::{Catalogue, ExposureOptions, FetchOutcome, Input, ServerConfig, Ticket};
use bb_drive::{Delivery, Driver, Logger, Process, Wake};
use common::bitbucket;
use serde_json::Value;

enum Event {
    Fetched(Ticket, FetchOutcome),
    Wake(Wake),
}

#[test]
fn the_answer_goes_out_at_the_deadline_and_the_job_that_came_back_later_is_kept_for_the_next_read() {
    let exposed = Catalogue::standard().expose(&ExposureOptions::default()).unwrap();
    let (tx, rx) = mpsc::channel();
    let (fetched, woken) = (Mutex::new(tx.clone()), Mutex::new(tx));
    // The deadline comes from the timer, never from a step (the diff's plan asks for one step only);
    // the test holds it until the job has run.
    let mut config = ServerConfig::new(exposed, "test");
    config.highlight_deadline_ms = 300;
    let mut driver = Driver::new(config, Process::default(), Arc::new(bitbucket), Logger::new(None), move |t, o| {
        drop(fetched.lock().unwrap().send(Event::Fetched(t, o)))
    })
    .on_wake(move |w| drop(woken.lock().unwrap().send(Event::Wake(w))));
    let mut delivered = vec![];
    let session = driver.open(None, &mut |d| delivered.push(d));
    let send = |driver: &mut Driver, tag: u64, line: &str, delivered: &mut Vec<Delivery>| {
        driver.feed(Input::Message { session, bytes: line.as_bytes(), tag }, &mut |d| delivered.push(d));
    };
    send(
        &mut driver,
        1,
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}},"clientInfo":{"name":"t","version":"1"}}}"#,
        &mut delivered,
    );
    send(&mut driver, 2, r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#, &mut delivered);
    let show = |id: u64| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"show","arguments":{{"kind":"diff","project":"BB","repo":"api","pr_id":1}}}}}}"#
        )
    };
    // Runs the call to its answer; jobs' outcomes are held back, not fed.
    let mut held = vec![];
    let run = |driver: &mut Driver, id: u64, held: &mut Vec<Wake>| -> Value {
        let mut delivered = vec![];
        let mut late = vec![];
        send(driver, id, &show(id), &mut delivered);
        loop {
            let answer = delivered.iter().find_map(|d| match d {
                Delivery::Send { tag: Some(t), message, .. } if *t == id => {
                    Some(serde_json::from_slice::<Value>(message).unwrap())
                }
                _ => None,
            });
            if let Some(a) = answer {
                return a["result"]["_meta"]["bb/view"]["diff"]["diffs"][0]["hunks"][0]["lines"].clone();
            }
            match rx.recv_timeout(Duration::from_secs(30)).expect("an event") {
                Event::Fetched(ticket, outcome) => {
                    driver.feed(Input::Fetched { ticket, outcome }, &mut |d| delivered.push(d));
                }
                // A warm-up (its outcome holds no marks) is nobody's job: delivered as it comes.
                Event::Wake(Wake::Computed(ticket, done)) if done.marks.is_empty() => {
                    driver.wake(Wake::Computed(ticket, done), &mut |d| delivered.push(d));
                }
                Event::Wake(w @ Wake::Computed(..)) => {
                    held.push(w);
                    // The job has run: its call's deadline may pass now.
                    for w in late.drain(..) {
                        driver.wake(w, &mut |d| delivered.push(d));
                    }
                }
                // The first read's deadline waits until its job has run, so the job is not dropped unstarted.
                Event::Wake(w) if id == 10 && held.is_empty() => late.push(w),
                Event::Wake(w) => driver.wake(w, &mut |d| delivered.push(d)),
            }
        }
    };
    let first = run(&mut driver, 10, &mut held);
    let lines = first.as_array().unwrap();
    assert_eq!(lines.len(), 2);
    assert!(lines.iter().all(|l| l["p"] == "deadline" && l.get("r").is_none()), "{first}");
    // The core said the call's work stopped at its deadline; the driver counted that once.
    let past = |driver: &Driver| driver.process().metrics().encode().contains("bb_highlight_past_deadline_total 1\n");
    assert!(past(&driver), "{}", driver.process().metrics().encode());
    // The job comes back after the answer: kept.
    assert_eq!(held.len(), 1, "one file, one job");
    for w in held.drain(..) {
        driver.wake(w, &mut |_| {});
    }
    let again = run(&mut driver, 11, &mut held);
    let lines = again.as_array().unwrap();
    assert!(lines.iter().all(|l| l["r"].is_string() && l.get("p").is_none()), "{again}");
    assert!(held.is_empty(), "nothing ran again");
    assert!(past(&driver), "the second call, highlighted in time, did not stop at its deadline");
}
