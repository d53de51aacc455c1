//! The store's script against a real Redis (Debian's `redis-server`, which `.ci/run` installs; without
//! it these tests say so and pass, except under `CI=true`), with explicit times; and the fallback to
//! the process's own share when the store does not answer.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::*;
use crate::options::Secret;
use crate::rate::{Entry, Identity, Rate};
use bb_core::Batch;
use bb_drive::Cancel;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};

const L: RateLimit = RateLimit::BITBUCKET_DEFAULT;
const T0: u64 = 1_767_225_600_000;
/// How long the tests of the script's arithmetic wait for Redis's answer.
const PATIENT: Duration = Duration::from_secs(10);

/// `redis-server` on a loopback port of its own, killed when dropped.
struct Redis {
    child: Child,
    port: u16,
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Redis {
    /// A Redis on a free port, or `None` after saying the test did not run.
    fn start(what: &str) -> Option<Redis> {
        Redis::start_on(free_port(), what)
    }

    fn start_on(port: u16, what: &str) -> Option<Redis> {
        Redis::start_with(port, &["--port", &port.to_string()], what, &format!("redis://127.0.0.1:{port}"), None)
    }

    /// `redis-server ARGS`, once a client of `url` (trusting `ca`) has its PING answered.
    fn start_with(port: u16, args: &[&str], what: &str, url: &str, ca: Option<&Path>) -> Option<Redis> {
        let found = Command::new("sh").args(["-c", "command -v redis-server"]).output().ok();
        if !found.is_some_and(|o| o.status.success()) {
            assert_ne!(std::env::var("CI").as_deref(), Ok("true"), "CI must have redis-server (.ci/run installs it)");
            eprintln!("SKIPPED: redis-server is not installed (apt-get install redis-server); {what} did not run");
            return None;
        }
        let child = Command::new("redis-server")
            .args(args)
            .args(["--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let redis = Redis { child, port };
        let client = store_client(&RateStore { url: Secret::new(url), password: None }, ca).unwrap();
        let started = Instant::now();
        loop {
            let pong = client
                .get_connection_with_timeout(Duration::from_secs(1))
                .and_then(|mut c| redis::cmd("PING").query::<String>(&mut c));
            if pong.is_ok() {
                return Some(redis);
            }
            assert!(started.elapsed() < Duration::from_secs(30), "redis-server did not answer PING: {pong:?}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// A store of this Redis that waits for its answers: these tests are of the script, not of a store that
    /// stops answering (a loaded machine took over 200 ms once).
    fn store(&self) -> Store {
        Store::new(&RateStore { url: Secret::new(self.url()), password: None }, None).unwrap().patient(PATIENT)
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// The script's answer at `ms` after [`T0`]: 0 to go, else the wait in ms.
fn step(store: &mut Store, key: &str, limit: RateLimit, step: Step, ms: u64) -> i64 {
    store.eval(key, limit, step, Some(T0 + ms), Absent::Full).unwrap()
}

#[test]
fn the_model_spends_the_shared_bucket_then_each_token_as_it_comes() {
    let Some(redis) = Redis::start("the script's arithmetic") else { return };
    let mut s = redis.store();
    for _ in 0..60 {
        assert_eq!(step(&mut s, "k", L, Step::Take, 0), 0);
    }
    assert_eq!(step(&mut s, "k", L, Step::Take, 0), 200, "the next token in 200 ms");
    for _ in 0..5 {
        assert_eq!(step(&mut s, "k", L, Step::Take, 1000), 0, "five tokens came in a second");
    }
    assert_eq!(step(&mut s, "k", L, Step::Take, 1000), 200);
}

#[test]
fn two_replicas_spend_one_bucket() {
    let Some(redis) = Redis::start("the shared bucket") else { return };
    let (mut a, mut b) = (redis.store(), redis.store());
    for _ in 0..30 {
        assert_eq!(step(&mut a, "k", L, Step::Take, 0), 0);
        assert_eq!(step(&mut b, "k", L, Step::Take, 0), 0);
    }
    assert_eq!(step(&mut a, "k", L, Step::Take, 0), 200);
    assert_eq!(step(&mut b, "k", L, Step::Take, 0), 200);
    assert_eq!(step(&mut b, "other", L, Step::Take, 0), 0, "another identity has a bucket of its own");
}

#[test]
fn a_refreshs_batch_goes_whole_from_the_upper_half_or_is_held_back() {
    let Some(redis) = Redis::start("the script's batches") else { return };
    let mut s = redis.store();
    // Five cards' batches of six fit down to the half (60 - 30 = 30); the sixth does not.
    for _ in 0..5 {
        assert_eq!(step(&mut s, "k", L, Step::Batch(6), 0), 0);
    }
    assert_eq!(step(&mut s, "k", L, Step::Batch(6), 0), 1200, "room for six more above the half in 1.2 s");
    // The model's 30 are all there.
    for _ in 0..30 {
        assert_eq!(step(&mut s, "k", L, Step::Take, 0), 0);
    }
    assert_eq!(step(&mut s, "k", L, Step::Take, 0), 200);
    // Empty: a refresh waits until the bucket is past half again (31 tokens, 6.2 s).
    assert_eq!(step(&mut s, "k", L, Step::Batch(1), 0), 6200);
    assert_eq!(step(&mut s, "k", L, Step::Batch(1), 6200), 0);
}

#[test]
fn a_batch_larger_than_the_upper_half_goes_when_the_shared_bucket_is_full() {
    let Some(redis) = Redis::start("the script's large batches") else { return };
    let mut s = redis.store();
    let small = RateLimit { capacity: 20.0, refill_per_s: 1.0 };
    assert_eq!(step(&mut s, "k", small, Step::Batch(21), 0), 0);
    assert_eq!(step(&mut s, "k", small, Step::Batch(21), 0), 21_000, "spent past empty: a full bucket again");
    assert_eq!(step(&mut s, "k", small, Step::Batch(21), 21_000), 0);
}

#[test]
fn a_429_pauses_the_identity_on_every_replica_for_its_retry_after() {
    let Some(redis) = Redis::start("the script's pause") else { return };
    let (mut a, mut b) = (redis.store(), redis.store());
    assert_eq!(step(&mut a, "k", L, Step::Pause(Duration::from_secs(3)), 0), 0);
    assert_eq!(step(&mut b, "k", L, Step::Batch(1), 1000), 2000);
    assert_eq!(step(&mut b, "k", L, Step::Take, 1000), 2000);
    // After the pause the bucket has refilled for 3 s from empty: 15 tokens, below half.
    assert!(step(&mut b, "k", L, Step::Batch(1), 3000) > 0);
    assert_eq!(step(&mut b, "k", L, Step::Take, 3000), 0);
}

#[test]
fn a_token_given_back_is_the_next_ones_and_a_key_expires_once_full() {
    let Some(redis) = Redis::start("the script's give-back") else { return };
    let mut s = redis.store();
    let one = RateLimit { capacity: 1.0, refill_per_s: 1.0 };
    assert_eq!(step(&mut s, "k", one, Step::Take, 0), 0);
    assert_eq!(step(&mut s, "k", one, Step::Take, 0), 1000);
    assert_eq!(step(&mut s, "k", one, Step::Give, 0), 0);
    assert_eq!(step(&mut s, "k", one, Step::Take, 0), 0);
    let mut c = redis::Client::open(redis.url()).unwrap().get_connection().unwrap();
    let ttl: i64 = redis::cmd("PTTL").arg("k").query(&mut c).unwrap();
    assert!((1..=2000).contains(&ttl), "empty, refilled in 1 s, kept 1 s more: {ttl} ms");
}

#[test]
fn a_bucket_the_store_lost_in_an_outage_starts_empty() {
    let Some(redis) = Redis::start("the lost bucket") else { return };
    let mut s = redis.store();
    assert_eq!(s.eval("k", L, Step::Take, Some(T0), Absent::Empty).unwrap(), 200);
    assert_eq!(s.eval("k", L, Step::Batch(1), Some(T0 + 6200), Absent::Empty).unwrap(), 0, "past half after 6.2 s");
}

#[test]
fn a_rediss_store_is_reached_over_tls_trusting_bb_ca_file() {
    let certs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tools/stack/certs");
    let (cert, key, ca) = (certs.join("server.pem"), certs.join("server.key"), certs.join("ca.pem"));
    let port = free_port();
    let url = format!("rediss://127.0.0.1:{port}");
    let args = [
        "--port",
        "0",
        "--tls-port",
        &port.to_string(),
        "--tls-auth-clients",
        "no",
        "--tls-cert-file",
        cert.to_str().unwrap(),
        "--tls-key-file",
        key.to_str().unwrap(),
        "--tls-ca-cert-file",
        ca.to_str().unwrap(),
    ];
    let Some(_redis) = Redis::start_with(port, &args, "the TLS store", &url, Some(&ca)) else { return };
    let mut s = Store::new(&RateStore { url: Secret::new(&url), password: None }, Some(&ca)).unwrap().patient(PATIENT);
    assert_eq!(s.run("k", L, Step::Take), Some(Ok(())), "taken over TLS");
    // Without the CA the stand-in's certificate is trusted by nothing: the store does not answer.
    let mut untrusted = Store::new(&RateStore { url: Secret::new(&url), password: None }, None).unwrap();
    assert_eq!(untrusted.run("k", L, Step::Take), None);
}

#[test]
fn a_waiting_call_asks_the_store_again_only_when_its_token_is_due() {
    let Some(redis) = Redis::start("the store's load") else { return };
    let store = redis.store();
    // One token, one a second (0.9 at bb's share): the second call waits about 1.1 s.
    let rate = Rate::shared(Some(RateLimit { capacity: 1.0, refill_per_s: 1.0 }), 1, Some(store));
    let who = Identity { local: 0, key: "bb:rate:load-test" };
    let mut c = redis::Client::open(redis.url()).unwrap().get_connection().unwrap();
    let _: () = redis::cmd("CONFIG").arg("RESETSTAT").query(&mut c).unwrap();
    assert_eq!(rate.enter(who, 0, None, &Cancel::new()), Entry::Go);
    assert_eq!(rate.enter(who, 0, None, &Cancel::new()), Entry::Go);
    let info: String = redis::cmd("INFO").arg("commandstats").query(&mut c).unwrap();
    let calls: u64 = ["cmdstat_evalsha:calls=", "cmdstat_eval:calls="]
        .iter()
        .filter_map(|p| info.split(p).nth(1))
        .filter_map(|rest| rest.split(',').next()?.parse::<u64>().ok())
        .sum();
    assert!((3..=6).contains(&calls), "a token, a wait, the token when due (not one ask per 20 ms): {calls}\n{info}");
}

#[test]
fn an_identitys_key_is_the_same_for_the_same_credentials_and_names_no_token() {
    let a = identity_key("https://bb.example", "Bearer s3cret-token");
    assert_eq!(a, identity_key("https://bb.example", "Bearer s3cret-token"));
    assert_ne!(a, identity_key("https://bb.example", "Bearer another"));
    assert_ne!(a, identity_key("https://other.example", "Bearer s3cret-token"));
    assert!(a.starts_with("bb:rate:") && a.len() == 8 + 32 && !a.contains("s3cret"), "{a}");
}

#[test]
fn a_url_that_is_not_redis_is_refused_with_what_to_write_and_no_password() {
    let store = |url: &str| RateStore { url: Secret::new(url), password: None };
    let e = store_client(&store("http://:pa55@127.0.0.1:6379"), None).unwrap_err();
    assert!(e.contains("use redis://host:port") && !e.contains("pa55"), "{e}");
    let e = store_client(&store("redis://:pa55@127.0.0.1:notaport"), None).unwrap_err();
    assert!(e.contains("cannot be used") && !e.contains("pa55"), "{e}");
    assert!(store_client(&store("redis://127.0.0.1:6379/2"), None).is_ok());
    assert!(store_client(&store("rediss://:pa55@127.0.0.1:6380"), None).is_ok());
}

/// A log that keeps its lines.
fn kept_log() -> (Logger, Arc<Mutex<Vec<String>>>) {
    let lines = Arc::new(Mutex::new(Vec::new()));
    let kept = Arc::clone(&lines);
    (Logger::to(Some(Level::Debug), move |_, line| kept.lock().unwrap().push(line.to_owned())), lines)
}

/// How many of `rate`'s one-read refreshes go at once (the upper half of whichever bucket decides).
fn refreshes_that_go(rate: &Rate, who: Identity<'_>, first_batch: u64) -> u64 {
    let mut sent = 0;
    for id in first_batch..first_batch + 100 {
        match rate.enter(who, 0, Some(Batch { id, reads: 1 }), &Cancel::new()) {
            Entry::Go => sent += 1,
            Entry::Defer(_) => break,
            Entry::Cancelled => panic!("nothing was cancelled"),
        }
    }
    sent
}

#[test]
fn a_store_that_does_not_answer_leaves_each_replica_its_share_said_once_and_is_used_again_when_back() {
    let port = free_port();
    let (log, lines) = kept_log();
    let url = format!("redis://127.0.0.1:{port}");
    // Patient: a port nobody listens on refuses at once, and the store back must not count as down on a
    // loaded machine.
    let store = Store::new(&RateStore { url: Secret::new(&url), password: None }, None).unwrap().patient(PATIENT);
    // Three replicas of a bucket of 60: alone, this one keeps 20 (10 of them above the half).
    let rate = Rate::shared(Some(L), 3, Some(store));
    rate.set_log(log);
    let metrics = std::sync::Arc::new(bb_drive::metrics::Metrics::new());
    rate.count_in(std::sync::Arc::clone(&metrics));
    let who = Identity { local: 0, key: "bb:rate:fallback-test" };
    let started = Instant::now();
    let alone = refreshes_that_go(&rate, who, 0);
    assert!((10..=11).contains(&alone), "the upper half of this replica's 20: {alone}");
    assert!(started.elapsed() < Duration::from_secs(5), "a store that is down costs no wait per request");
    for _ in 0..5 {
        assert_eq!(rate.enter(who, 0, None, &Cancel::new()), Entry::Go, "the model's calls still go");
    }
    assert!(!rate.store_answering());
    let said = |words: &str| lines.lock().unwrap().iter().filter(|l| l.contains(words)).count();
    assert_eq!(said("does not answer"), 1, "said once, not per request: {:?}", lines.lock().unwrap());
    let counted = metrics.encode();
    assert!(counted.contains("bb_rate_store_outages_total"), "{counted}");
    assert!(counted.contains("bb_rate_store_decisions_total{via=\"local\"}"), "{counted}");

    // The store comes up: after the probe's pause the shared bucket (full: 30 above the half) decides.
    let Some(_redis) = Redis::start_on(port, "the store's return") else { return };
    // The store is asked again once its pause is over: wait for that moment itself.
    let again = rate.store_asked_again_at().expect("a store that did not answer has a time to be asked again");
    assert!(again <= Instant::now() + PROBE_EVERY, "asked again within the probe's pause");
    while Instant::now() < again {
        std::thread::sleep(again.saturating_duration_since(Instant::now()));
    }
    // The store lost the bucket in its restart: it starts empty (Bitbucket's was spent meanwhile).
    assert_eq!(refreshes_that_go(&rate, who, 1000), 0, "a lost bucket starts empty");
    assert!(rate.store_answering());
    assert_eq!(said("answers again"), 1, "{:?}", lines.lock().unwrap());
    let mut c = redis::Client::open(url).unwrap().get_connection().unwrap();
    let exists: i64 = redis::cmd("EXISTS").arg(who.key).query(&mut c).unwrap();
    assert_eq!(exists, 1, "the bucket lives in the store");
}

#[test]
fn a_store_refusing_the_password_is_not_answering_and_says_so_without_the_password() {
    let Some(redis) = Redis::start("the refused password") else { return };
    let mut c = redis::Client::open(redis.url()).unwrap().get_connection().unwrap();
    let _: () = redis::cmd("CONFIG").arg("SET").arg("requirepass").arg("right-one").query(&mut c).unwrap();
    let (log, lines) = kept_log();
    let url = format!("redis://:wr0ng-pw@127.0.0.1:{}", redis.port);
    let rate = Rate::shared(
        Some(L),
        2,
        Some(Store::new(&RateStore { url: Secret::new(url), password: None }, None).unwrap().patient(PATIENT)),
    );
    rate.set_log(log);
    let who = Identity { local: 0, key: "bb:rate:auth-test" };
    let alone = refreshes_that_go(&rate, who, 0);
    assert!((15..=16).contains(&alone), "the upper half of this replica's 30: {alone}");
    let lines = lines.lock().unwrap();
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(lines[0].contains("password was refused") && !lines[0].contains("wr0ng-pw"), "{lines:?}");
}
