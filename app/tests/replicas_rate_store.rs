//! Three `bb ai mcp serve --http` replicas behind haproxy share one rate budget for their one
//! Bitbucket user through Redis (`--rate-store`), against the stand-in's limiter at Bitbucket's
//! defaults (60 tokens, 5 a second). Sessions call `get_pull_request` in a loop; midway Redis is
//! killed (each replica keeps 1/3 of the budget, says so once, stays ready), then started again (the
//! replicas use it again). Asserted: no call fails, Bitbucket refused nothing (no 429), and it was sent
//! no more than its limit allows; never a timing. Needs Debian's `haproxy` and `redis-server`
//! (`.ci/run` installs both); without them the test says so and passes, except under `CI=true`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod service;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use service::{Bb, call, free_port, haproxy, redis_server, request, start_haproxy, start_redis, until, until_within};

const SESSIONS: usize = 6;
/// How long each phase runs: the store up, down, up again.
/// The longest a phase may take to see what it waits for (a loaded machine is slow, never this slow).
const PHASE: Duration = Duration::from_secs(90);
/// Calls each phase sees answered: at Bitbucket's 5 a second, a couple of seconds' worth.
const CALLS_A_PHASE: u64 = 10;

fn stack_json(stack: &bb_stack::RunningStack, method: &str, path: &str, body: Value) -> Value {
    let (status, _, body) =
        request(&stack.addr.to_string(), method, path, &[("Content-Type", "application/json")], &body.to_string());
    assert_eq!(status, 200, "{path}: {body}");
    serde_json::from_str(&body).unwrap()
}

#[test]
fn replicas_behind_haproxy_share_one_budget_through_redis_and_keep_within_it_when_it_goes_and_comes_back() {
    let Some(haproxy) = haproxy("the replicas' shared rate budget") else { return };
    let Some(redis_server) = redis_server("the replicas' shared rate budget") else { return };
    let stack = bb_stack::Stack::start(bb_stack::StackConfig::default()).unwrap();
    let redis_port = free_port();
    let mut redis = Some(start_redis(&redis_server, redis_port));
    let store = format!("redis://127.0.0.1:{redis_port}");

    // A URL that is not Redis stops bb at start with a sentence that says what to write.
    let refused = std::process::Command::new(env!("CARGO_BIN_EXE_bb"))
        .args(["ai", "mcp", "serve", "--http", "127.0.0.1:0", "--rate-store", "valkey:6379"])
        .env("BITBUCKET_URL", &stack.base_url)
        .output()
        .unwrap();
    assert!(!refused.status.success());
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(said.contains("--rate-store `valkey:6379` is not a Valkey or Redis URL"), "{said}");

    let lb = free_port();
    let allow = format!("127.0.0.1:{lb}");
    let args = ["--allow-host", &allow, "--rate-store", &store, "--replicas", "3", "--log-level", "notice"];
    let replicas: Vec<Bb> = (0..3).map(|_| Bb::start(&stack.base_url, &stack.token, &args)).collect();
    let config = service::haproxy_round_robin(lb, &replicas.iter().collect::<Vec<_>>(), "");
    let _lb = start_haproxy(&haproxy, &config, lb);
    for r in &replicas {
        until("a replica is ready", || request(&r.addr, "GET", "/readyz", &[], "").0 == 200);
    }

    // Bitbucket's limiter at its defaults, from now on.
    stack_json(&stack, "POST", "/_stack/rate-limit", json!({"capacity": 60, "refill": 5}));
    stack_json(&stack, "POST", "/_stack/requests/reset", json!({}));
    let started = Instant::now();

    let stop = Arc::new(AtomicBool::new(false));
    let (answered, failed) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let failures = Arc::new(std::sync::Mutex::new(Vec::new()));
    let sessions: Vec<_> = (0..SESSIONS)
        .map(|_| {
            let (stop, answered, failed, failures) =
                (Arc::clone(&stop), Arc::clone(&answered), Arc::clone(&failed), Arc::clone(&failures));
            let lb = allow.clone();
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let args = json!({"project": "BB", "repo": "api", "pr_id": 1});
                    let (status, answer) =
                        call(&lb, "tools/call", json!({"name": "get_pull_request", "arguments": args}));
                    let text = answer["result"]["content"][0]["text"].as_str().unwrap_or_default();
                    if status == 200 && answer["result"]["isError"] != true && text.starts_with("PR #1") {
                        answered.fetch_add(1, Ordering::Relaxed);
                    } else {
                        failed.fetch_add(1, Ordering::Relaxed);
                        failures.lock().unwrap().push(format!("{status} {answer}"));
                    }
                }
            })
        })
        .collect();

    // The store up; then killed; then back, empty (nothing saved). Each phase lasts until what it is
    // for has happened: calls answered, and every replica has seen the store go and come back.
    let calls = || answered.load(Ordering::Relaxed);
    let every_replica_said = |words: &str| replicas.iter().all(|r| r.stderr.lock().unwrap().contains(words));
    until_within("calls answered through the store", PHASE, || calls() >= CALLS_A_PHASE);
    let before_outage = calls();
    drop(redis.take());
    until_within("every replica fell back to its share, and calls went on", PHASE, || {
        every_replica_said("does not answer") && calls() >= before_outage + CALLS_A_PHASE
    });
    for r in &replicas {
        until("a replica stays ready without its store", || request(&r.addr, "GET", "/readyz", &[], "").0 == 200);
    }
    let during_outage = calls();
    redis = Some(start_redis(&redis_server, redis_port));
    until_within("every replica used the store again, and calls went on", PHASE, || {
        every_replica_said("answers again") && calls() >= during_outage + CALLS_A_PHASE
    });
    stop.store(true, Ordering::Relaxed);
    for s in sessions {
        s.join().unwrap();
    }
    let elapsed = started.elapsed().as_secs_f64();

    let counters = stack_json(&stack, "GET", "/_stack/requests", Value::Null);
    let (answered, failed) = (answered.load(Ordering::Relaxed), failed.load(Ordering::Relaxed));
    eprintln!(
        "{answered} calls answered in {elapsed:.1} s ({before_outage} before the outage, {} during it); Bitbucket: {counters}",
        during_outage - before_outage
    );
    assert_eq!(failed, 0, "no call failed: {:?}", failures.lock().unwrap());
    assert!(before_outage > 0 && during_outage > before_outage && answered > during_outage, "calls went on throughout");
    assert_eq!(counters["rateLimited"], 0, "Bitbucket refused nothing: {counters}");
    let sent = counters["total"].as_u64().unwrap();
    let allowed = 60.0 + 5.0 * elapsed;
    assert!((sent as f64) <= allowed, "{sent} requests reached Bitbucket, at most {allowed:.0} allowed");

    // Each replica said once that the store went away (and, above, that it came back).
    for r in &replicas {
        let log = r.stderr.lock().unwrap();
        assert_eq!(log.matches("does not answer").count(), 1, "said once: {log}");
    }
    let mut c = redis::Client::open(store.as_str()).unwrap().get_connection().unwrap();
    let keys: Vec<String> = redis::cmd("KEYS").arg("bb:rate:*").query(&mut c).unwrap();
    assert_eq!(keys.len(), 1, "one user, one shared bucket, named by no token: {keys:?}");
    assert!(!keys[0].contains(&stack.token));
    drop(redis);
    let _ = std::fs::remove_dir_all(config.parent().unwrap());
}
