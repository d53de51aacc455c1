//! `cargo run --release -p bb-bitbucket --example io_bench`: bb's overhead per Bitbucket request.
//!
//! Against one in-process stack, sequential `GET …/pull-requests/1` (one request at a time, keep-alive):
//! - the stack's own handling time (its handler called directly, no socket);
//! - a raw baseline: a minimal HTTP/1.1 client on a keep-alive `TcpStream` (stack + loopback + parsing);
//! - bb's Bitbucket `Client` (ureq, in-flight bound, retry bookkeeping), called directly and on the drive's read pool, as the driver calls it
//!   as the driver calls it, over HTTP and HTTPS.
//!
//! bb's overhead = bb's median round trip − the raw baseline's (same server, same socket work).
//! Bounded: a fixed number of requests, then it stops.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use bb_bitbucket::Client;
use bb_bitbucket::options::{Auth, BitbucketConfig, Secret};
use bb_core::{FetchOutcome, FetchRequest};
use bb_drive::{Bitbucket, Cancel};
use bb_stack::exchange::Request;
use bb_stack::tls::StackTls;
use bb_stack::{Stack, StackConfig};
use rustls::pki_types::pem::PemObject;

const PATH: &str = "/rest/api/latest/projects/BB/repos/api/pull-requests/1";
const WARMUP: usize = 200;
const N: usize = 3_000;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn timed(mut f: impl FnMut()) -> Duration {
    for _ in 0..WARMUP {
        f();
    }
    median(
        (0..N)
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed()
            })
            .collect(),
    )
}

fn main() {
    let stack = Stack::start(StackConfig::default()).unwrap();

    let handler = stack.with_world(|w| {
        let req = Request::new("GET", PATH).with_header("Authorization", &format!("Bearer {}", w.default_token()));
        timed(|| {
            let _ = bb_stack::routes::serve(w, &req);
        })
    });

    let raw = {
        let stream = TcpStream::connect(stack.addr).unwrap();
        stream.set_nodelay(true).unwrap();
        let mut writer = stream.try_clone().unwrap();
        let mut reader = BufReader::new(stream);
        let request =
            format!("GET {PATH} HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {}\r\n\r\n", stack.addr, stack.token);
        let (mut line, mut body) = (String::new(), Vec::new());
        timed(|| {
            writer.write_all(request.as_bytes()).unwrap();
            let mut length = 0usize;
            loop {
                line.clear();
                reader.read_line(&mut line).unwrap();
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap();
                } else if line == "\r\n" {
                    break;
                }
            }
            body.resize(length, 0);
            reader.read_exact(&mut body).unwrap();
        })
    };

    let bb = Client::new(BitbucketConfig::new(&stack.base_url, Auth::Token(Secret::new(stack.token.clone()))).unwrap())
        .unwrap();
    let fetch = |bb: &Client| {
        let FetchOutcome::Response(r) = bb.fetch(FetchRequest::get(PATH, vec![]), None, &Cancel::new()) else {
            unreachable!("served")
        };
        assert_eq!(r.status, 200);
    };
    let direct = timed(|| fetch(&bb));
    let bb = std::sync::Arc::new(bb);
    let reads = bb_drive::Pool::for_reads();
    // As the driver calls it: on the drive's pool of read threads, the outcome sent back to the caller.
    let unblocked = timed(|| {
        let bb = bb.clone();
        let (done, wait) = std::sync::mpsc::channel();
        reads.run(0, move || {
            fetch(&bb);
            let _ = done.send(());
        });
        let _ = wait.recv();
    });

    let tls_stack = Stack::start(StackConfig { tls: Some(StackTls::test()), ..Default::default() }).unwrap();
    let mut config =
        BitbucketConfig::new(&tls_stack.base_url, Auth::Token(Secret::new(tls_stack.token.clone()))).unwrap();
    config.extra_roots = rustls::pki_types::CertificateDer::pem_slice_iter(bb_stack::tls::TEST_CA_PEM.as_bytes())
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    let tls_bb = Client::new(config).unwrap();
    let https = timed(|| fetch(&tls_bb));

    println!("GET {PATH}, sequential, keep-alive, median of {N} (after {WARMUP} warm-up):");
    println!("  stack handler alone (no socket)          {:>8.1} µs", micros(handler));
    println!("  raw TcpStream client (baseline)          {:>8.1} µs", micros(raw));
    println!("  bb Client, direct                        {:>8.1} µs", micros(direct));
    println!("  bb Client on the drive's read pool       {:>8.1} µs", micros(unblocked));
    println!("  bb Client over HTTPS (stack TLS)         {:>8.1} µs", micros(https));
    println!(
        "bb's overhead per request vs the raw client: {:.1} µs direct, {:.1} µs as the driver calls it",
        micros(direct) - micros(raw),
        micros(unblocked) - micros(raw)
    );
    println!("bb round trip minus the stack's handler time: {:.1} µs", micros(unblocked) - micros(handler));
    stack.shutdown();
    tls_stack.shutdown();
}
