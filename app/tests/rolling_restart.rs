//! A rolling restart behind haproxy: two bb replicas, each stopped with SIGTERM and started again on
//! its port in turn, while a client keeps calling through the load balancer. No call is lost: each is
//! answered, or told that bb is restarting (nothing done; send it again), and a write is never left
//! unknown without the answer saying so. haproxy takes a replica out by its `/readyz` and sends a
//! request whose connection was refused to the other (`option redispatch`). Needs Debian's `haproxy`;
//! without it the test says so and passes, except under `CI=true`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod service;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use service::{Bb, call, free_port, haproxy, request, start_haproxy, until};

/// What happened to the client's calls.
#[derive(Debug, Default)]
struct Tally {
    answered: usize,
    told_to_retry: usize,
    writes_not_sent: usize,
    lost: Vec<String>,
}

/// One call through the load balancer, sorted into the tally; whether it must be sent again.
fn one(lb: &str, tool: &str, arguments: Value, tally: &mut Tally) -> bool {
    let (status, v) = call(lb, "tools/call", json!({"name": tool, "arguments": arguments}));
    let text = v["result"]["content"][0]["text"].as_str().unwrap_or_default();
    let error = v["error"]["message"].as_str().unwrap_or_default();
    match status {
        200 if v["result"]["isError"] != true => tally.answered += 1,
        200 if text.contains("did not send this change") => {
            tally.writes_not_sent += 1;
            return true;
        }
        503 if error.contains("bb is restarting") => {
            tally.told_to_retry += 1;
            return true;
        }
        _ => tally.lost.push(format!("{tool}: HTTP {status}: {v}")),
    }
    false
}

#[test]
fn a_rolling_restart_of_both_replicas_behind_haproxy_loses_no_call() {
    let Some(haproxy) = haproxy("the rolling restart") else { return };
    let stack = bb_stack::Stack::start(bb_stack::StackConfig::default()).unwrap();
    // Each call takes a while at Bitbucket, so some are in flight at every SIGTERM.
    stack.with_world(|w| {
        w.control.latency.insert("/rest/api/latest/projects".to_owned(), 40);
    });
    let lb = free_port();
    let allow = format!("127.0.0.1:{lb}");
    let args = ["--allow-host", allow.as_str(), "--ready-interval", "1"];
    let start = |listen: &str| Bb::start_on(listen, &stack.base_url, &stack.token, &args, &[]);
    let mut replicas = [start("127.0.0.1:0"), start("127.0.0.1:0")];
    let addrs: Vec<String> = replicas.iter().map(|r| r.addr.clone()).collect();
    let dir = std::env::temp_dir().join(format!("bb-rolling-{}-{lb}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("haproxy.cfg");
    std::fs::write(
        &config,
        format!(
            "global\n  maxconn 256\ndefaults\n  mode http\n  timeout connect 2s\n  timeout client 30s\n  timeout server 30s\n  timeout check 5s\n\
             \x20 retries 3\n  option redispatch 1\n  retry-on conn-failure\n\
             frontend mcp\n  bind 127.0.0.1:{lb}\n  default_backend bb\n\
             backend bb\n  balance roundrobin\n  http-response set-header X-Served-By %s\n  option httpchk\n  http-check send meth GET uri /readyz hdr Host {allow}\n\
             \x20 default-server check inter 200ms fall 3 rise 1\n\
             \x20 server a {}\n  server b {}\n",
            addrs[0], addrs[1]
        ),
    )
    .unwrap();
    let _lb = start_haproxy(&haproxy, &config, lb);
    for a in &addrs {
        until("the replica is ready", || request(a, "GET", "/readyz", &[], "").0 == 200);
    }

    let done = Arc::new(AtomicBool::new(false));
    let stop = Arc::clone(&done);
    let calls = Arc::new(AtomicUsize::new(0));
    let made = Arc::clone(&calls);
    let lb_addr = format!("127.0.0.1:{lb}");
    let client = std::thread::spawn(move || {
        let mut tally = Tally::default();
        let read = json!({"project": "BB", "repo": "api", "pr_id": 1});
        let write = json!({"project": "BB", "repo": "api", "pr_id": 3, "text": "during a rolling restart"});
        let mut n = 0;
        while !stop.load(Ordering::Acquire) {
            n += 1;
            let (tool, args) = if n % 4 == 0 { ("add_pr_comment", &write) } else { ("get_pull_request", &read) };
            // A call told to retry is sent again until it is answered (bounded, so a bug cannot hang the test).
            for _ in 0..50 {
                if !one(&lb_addr, tool, args.clone(), &mut tally) {
                    break;
                }
            }
            made.fetch_add(1, Ordering::AcqRel);
        }
        tally
    });

    for (i, addr) in addrs.iter().enumerate() {
        let before = calls.load(Ordering::Acquire);
        until("calls went on before this restart", || calls.load(Ordering::Acquire) >= before + 10);
        // A call is at Bitbucket as the signal goes.
        until("a call is in flight", || stack.with_world(|w| w.control.in_flight) > 0);
        replicas[i].signal("TERM");
        assert_eq!(replicas[i].exit_code(Duration::from_secs(30)), Some(0), "replica {i} exits 0");
        replicas[i] = start(addr);
        until("the new replica is ready", || request(addr, "GET", "/readyz", &[], "").0 == 200);
        // haproxy's own check has seen it up: it serves through the load balancer again.
        let name = ["a", "b"][i];
        until("haproxy sends to the new replica", || {
            let (_, headers, _) = request(&format!("127.0.0.1:{lb}"), "GET", "/readyz", &[], "");
            headers.contains(&format!("x-served-by: {name}"))
        });
    }
    let before = calls.load(Ordering::Acquire);
    until("calls go on after the restarts", || calls.load(Ordering::Acquire) >= before + 10);
    done.store(true, Ordering::Release);
    let tally = client.join().unwrap();
    eprintln!("{tally:?}");
    assert!(tally.lost.is_empty(), "calls lost: {:#?}", tally.lost);
    assert!(tally.answered >= 30, "{tally:?}");
    let _ = std::fs::remove_dir_all(&dir);
    stack.shutdown();
}
