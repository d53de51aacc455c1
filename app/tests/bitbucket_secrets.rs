//! No credential bb holds reaches a tool result or a log line, even when Bitbucket (or a proxy in
//! front of it) repeats the `Authorization` header in its error text: the stack's `echo` fault does.
//! End to end: the stdio transport, the core, bb's real client, the stack over a socket.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod io_support;

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bb::config::{Auth, BitbucketConfig, Secret};
use bb_core::base64;
use bb_core::{Catalogue, ExposureOptions, ServerConfig};
use bb_drive::Logger;
use bb_drive::secrets::REMOVED;
use io_support::*;
use serde_json::{Value, json};

/// What a session saw: every line on its stdout, and every log line.
struct Transcript {
    stdout: String,
    log: String,
}

/// Serves one stdio session over `config` and makes `calls` get_pull_request calls one after the
/// other, each meeting the next fault queued on the stack.
fn serve(config: BitbucketConfig, calls: usize) -> Transcript {
    let (mut to_bb, bb_in) = UnixStream::pair().unwrap();
    let (bb_out, from_bb) = UnixStream::pair().unwrap();
    let exposed = Catalogue::standard().expose(&ExposureOptions::default()).unwrap();
    let server_config = ServerConfig::new(exposed, "test");
    let log = Arc::new(Mutex::new(String::new()));
    let sink = Arc::clone(&log);
    let logger = Logger::to(Some(bb_core::Level::Debug), move |_, line| {
        let mut log = sink.lock().unwrap();
        log.push_str(line);
        log.push('\n');
    })
    .scrubbing(bb_bitbucket::secrets(&config));
    let client = Arc::new(bb_bitbucket::Client::new(config).unwrap());
    let server = std::thread::spawn(move || {
        let input = smol::Async::new(bb_in).unwrap();
        let output = smol::Async::new(bb_out).unwrap();
        smol::block_on(bb_stdio::serve(
            input,
            output,
            server_config,
            bb_drive::Process::default(),
            client,
            logger,
            1 << 20,
        ))
    });
    from_bb.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let mut from_bb = BufReader::new(from_bb);
    let mut stdout = String::new();
    let mut send = |v: Value| writeln!(to_bb, "{v}").unwrap();
    send(
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}),
    );
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    from_bb.read_line(&mut stdout).unwrap();
    // One call at a time: each call's first read meets the next fault queued.
    for id in 1..=calls {
        send(
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "get_pull_request", "arguments": {"project": "BB", "repo": "api", "pr_id": 1}}}),
        );
        from_bb.read_line(&mut stdout).unwrap();
    }
    drop(to_bb);
    server.join().unwrap().unwrap();
    let log = log.lock().unwrap().clone();
    Transcript { stdout, log }
}

fn echo_faults(stack: &bb_stack::RunningStack, statuses: &[u16]) {
    let ctl = control_client(stack, |_| {});
    for status in statuses {
        Control::new(&ctl).fault(json!({ "kind": "echo", "status": status, "count": 1, "pathPrefix": PR1 }));
    }
}

#[test]
fn a_token_echoed_in_an_error_body_never_reaches_a_tool_result_or_the_log() {
    let stack = stack();
    let statuses = [400, 401, 403, 404, 409, 414, 500];
    echo_faults(&stack, &statuses);
    let seen = serve(config_for(&stack, |c| c.retry.retries = 0), statuses.len());
    for text in [&seen.stdout, &seen.log] {
        assert!(!text.contains(&stack.token), "the token leaked:\n{text}");
    }
    // The echo did arrive, and what it held is said to have been removed.
    assert!(seen.stdout.contains(&format!("Bearer {REMOVED}")), "{}", seen.stdout);
}

#[test]
fn basic_credentials_echoed_in_an_error_body_never_reach_a_tool_result_or_the_log() {
    let stack = stack();
    let ctl = control_client(&stack, |_| {});
    let alice =
        Control::new(&ctl).info()["users"].as_array().unwrap().iter().find(|u| u["slug"] == "alice").cloned().unwrap();
    let password = alice["password"].as_str().unwrap().to_owned();
    echo_faults(&stack, &[404, 500]);
    let mut config =
        BitbucketConfig::new(&stack.base_url, Auth::Basic { user: "alice".into(), password: Secret::new(&password) })
            .unwrap();
    config.retry.retries = 0;
    let seen = serve(config, 2);
    let encoded = base64(format!("alice:{password}").as_bytes());
    for text in [&seen.stdout, &seen.log] {
        assert!(!text.contains(&encoded), "the basic credentials leaked:\n{text}");
        assert!(!text.contains(&password), "the password leaked:\n{text}");
    }
    assert!(seen.stdout.contains(&format!("Basic {REMOVED}")), "{}", seen.stdout);
}
