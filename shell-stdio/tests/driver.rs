//! The stdio driver over real pipes: concurrency, framing limits and shutdown.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bb_core::testing::test_catalogue;
use bb_core::{ExposureOptions, FetchOutcome, FetchRequest, ServerConfig};
use bb_drive::{Bitbucket, Cancel, Logger, PersonalToken};
use serde_json::{Value, json};

/// A Bitbucket that answers only when the test releases it.
struct Held {
    release: Mutex<mpsc::Receiver<()>>,
    started: Mutex<mpsc::Sender<String>>,
}

impl Bitbucket for Held {
    fn fetch(&self, request: FetchRequest, _: Option<&PersonalToken>, _: &Cancel) -> FetchOutcome {
        let _ = self.started.lock().unwrap().send(request.path.clone());
        let _ = self.release.lock().unwrap().recv_timeout(Duration::from_secs(60));
        FetchOutcome::response(200, format!("fetched {}", request.path))
    }
}

struct Running {
    to_bb: UnixStream,
    from_bb: BufReader<UnixStream>,
    done: mpsc::Receiver<std::io::Result<()>>,
}

fn start(bitbucket: Arc<dyn Bitbucket>, max_line: usize) -> Running {
    let (to_bb, bb_in) = UnixStream::pair().unwrap();
    let (bb_out, from_bb) = UnixStream::pair().unwrap();
    let exposed = test_catalogue().expose(&ExposureOptions::default()).unwrap();
    let config = ServerConfig::new(exposed, "test");
    let (tx, done) = mpsc::channel();
    std::thread::spawn(move || {
        let input = smol::Async::new(bb_in).unwrap();
        let output = smol::Async::new(bb_out).unwrap();
        let r = smol::block_on(bb_stdio::serve(
            input,
            output,
            config,
            bb_drive::Process::default(),
            bitbucket,
            Logger::new(None),
            max_line,
        ));
        let _ = tx.send(r);
    });
    from_bb.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    Running { to_bb, from_bb: BufReader::new(from_bb), done }
}

impl Running {
    fn send(&mut self, line: &str) {
        self.to_bb.write_all(line.as_bytes()).unwrap();
        self.to_bb.write_all(b"\n").unwrap();
    }

    fn recv(&mut self) -> Value {
        let mut line = String::new();
        self.from_bb.read_line(&mut line).unwrap();
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("stdout carried a non-JSON line {line:?}: {e}"))
    }

    fn initialize(&mut self) {
        self.send(&json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}).to_string());
        assert_eq!(self.recv()["id"], 0);
        self.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    }
}

fn held() -> (Arc<Held>, mpsc::Sender<()>, mpsc::Receiver<String>) {
    let (release_tx, release_rx) = mpsc::channel();
    let (started_tx, started_rx) = mpsc::channel();
    (Arc::new(Held { release: Mutex::new(release_rx), started: Mutex::new(started_tx) }), release_tx, started_rx)
}

#[test]
fn a_slow_tool_call_never_delays_ping() {
    let (bitbucket, release, started) = held();
    let mut bb = start(bitbucket, 1 << 20);
    bb.initialize();
    bb.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_thing","arguments":{"id":3}}}"#);
    assert_eq!(started.recv_timeout(Duration::from_secs(60)).unwrap(), "/rest/api/latest/things/3");
    bb.send(r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#);
    // The fetch is still held: the first answer can only be the ping's.
    assert_eq!(bb.recv(), json!({"jsonrpc": "2.0", "id": 2, "result": {}}));
    release.send(()).unwrap();
    let answer = bb.recv();
    assert_eq!(answer["id"], 1);
    assert_eq!(answer["result"]["content"][0]["text"], "fetched /rest/api/latest/things/3");
}

#[test]
fn requests_waiting_on_bitbucket_run_concurrently() {
    let (bitbucket, release, started) = held();
    let mut bb = start(bitbucket, 1 << 20);
    bb.initialize();
    for id in 1..=3 {
        bb.send(&format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"get_thing","arguments":{{"id":{id}}}}}}}"#));
    }
    // All three fetches start before any is released.
    let mut paths: Vec<String> = (0..3).map(|_| started.recv_timeout(Duration::from_secs(60)).unwrap()).collect();
    paths.sort();
    assert_eq!(paths, ["/rest/api/latest/things/1", "/rest/api/latest/things/2", "/rest/api/latest/things/3"]);
    for _ in 0..3 {
        release.send(()).unwrap();
    }
    let mut ids: Vec<i64> = (0..3).map(|_| bb.recv()["id"].as_i64().unwrap()).collect();
    ids.sort();
    assert_eq!(ids, [1, 2, 3]);
}

#[test]
fn an_over_long_line_gets_a_clear_error_and_serving_goes_on() {
    let (bitbucket, _release, _started) = held();
    let mut bb = start(bitbucket, 1024);
    bb.initialize();
    let long = format!(r#"{{"jsonrpc":"2.0","id":5,"method":"ping","params":{{"pad":"{}"}}}}"#, "x".repeat(10_000));
    bb.send(&long);
    let e = bb.recv();
    assert_eq!(e["error"]["code"], -32600);
    assert!(e["error"]["message"].as_str().unwrap().contains("1024 bytes"), "{e}");
    bb.send(r#"{"jsonrpc":"2.0","id":6,"method":"ping"}"#);
    assert_eq!(bb.recv()["id"], 6);
}

#[test]
fn closing_stdin_answers_the_call_in_flight_and_then_ends_serving() {
    let (bitbucket, release, started) = held();
    let mut bb = start(bitbucket, 1 << 20);
    bb.initialize();
    bb.send(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_thing","arguments":{"id":1}}}"#);
    started.recv_timeout(Duration::from_secs(60)).unwrap();
    bb.to_bb.shutdown(std::net::Shutdown::Write).unwrap();
    // Still serving: the call's answer is owed.
    assert!(bb.done.try_recv().is_err());
    release.send(()).unwrap();
    assert_eq!(bb.recv()["id"], 1);
    let result = bb.done.recv_timeout(Duration::from_secs(60)).expect("serve returns once the call is answered");
    assert!(result.is_ok());
}
