//! A burst of 1,000 slow reads, all cancelled, runs on at most bb's bounded pool of read threads,
//! and the pool shrinks to nothing afterwards. Prints the process's threads and resident memory.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod io_support;

use std::sync::Arc;
use std::time::Duration;

use bb_core::{Catalogue, ExposureOptions, Input, ServerConfig};
use bb_drive::{Driver, Logger, Process, READ_THREADS};
use io_support::*;
use serde_json::json;

/// `Threads` and `VmRSS` of this process, from /proc.
fn threads_and_rss() -> (u64, String) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let field = |name: &str| {
        status.lines().find(|l| l.starts_with(name)).unwrap().split_whitespace().nth(1).unwrap().to_owned()
    };
    (field("Threads:").parse().unwrap(), format!("{} kB", field("VmRSS:")))
}

fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let start = std::time::Instant::now();
    while !done() {
        assert!(start.elapsed() < Duration::from_secs(60), "gave up waiting until {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn a_thousand_cancelled_slow_reads_run_on_a_bounded_pool_that_shrinks_afterwards() {
    let stack = stack();
    let ctl = control_client(&stack, |_| {});
    Control::new(&ctl).latency(PR1, 2_000);
    let bb = Arc::new(client(&stack, |_| {}));
    let exposed = Catalogue::standard().expose(&ExposureOptions::default()).unwrap();
    let process = Process::default();
    let mut driver = Driver::new(ServerConfig::new(exposed, "test"), process.clone(), bb, Logger::new(None), |_, _| {});
    let (before, rss_before) = threads_and_rss();
    let mut tag = 0;
    let mut feed = |driver: &mut Driver, session, message: serde_json::Value| {
        tag += 1;
        driver.feed(Input::Message { session, bytes: message.to_string().as_bytes(), tag }, &mut |_| {});
    };
    // 250 sessions, each with four calls whose first read waits 2 s: 1,000 reads at once.
    let sessions: Vec<_> = (0..250).map(|_| driver.open(None, &mut |_| {})).collect();
    for &s in &sessions {
        feed(
            &mut driver,
            s,
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}),
        );
        feed(&mut driver, s, json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        for id in 1..=4 {
            feed(
                &mut driver,
                s,
                json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "get_pull_request", "arguments": {"project": "BB", "repo": "api", "pr_id": 1}}}),
            );
        }
    }
    wait_until("the stack serves reads", || Control::new(&ctl).requests()["inFlight"].as_u64().unwrap() > 0);
    let (during, rss_during) = threads_and_rss();
    for &s in &sessions {
        for id in 1..=4 {
            feed(
                &mut driver,
                s,
                json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": id}}),
            );
        }
    }
    let (cancelled, rss_cancelled) = threads_and_rss();
    wait_until("the read threads exit", || process.reads().threads() == 0);
    let (after, rss_after) = threads_and_rss();
    eprintln!(
        "threads/RSS: before {before}/{rss_before}, during the burst {during}/{rss_during}, \
         just after cancelling {cancelled}/{rss_cancelled}, once idle {after}/{rss_after}; \
         most read threads {}",
        process.reads().most_threads()
    );
    assert!(process.reads().most_threads() <= READ_THREADS);
    assert!(Control::new(&ctl).count(&format!("GET {PR1}")) < 1_000, "cancelled reads not yet sent are never sent");
}
