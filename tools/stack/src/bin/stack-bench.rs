//! `stack-bench`: how fast the stack starts and how many `GET …/pull-requests/{id}` it serves per second over
//! keep-alive connections on loopback. Bounded: a fixed number of requests, then it stops by itself.

use bb_stack::exchange::Request;
use bb_stack::{Stack, StackConfig};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

const STARTS: usize = 9;
const THREADS: usize = 4;
const REQUESTS_PER_THREAD: usize = 2_000;
const PATH: &str = "/rest/api/latest/projects/BB/repos/api/pull-requests/1";

fn main() {
    if let Err(e) = run() {
        eprintln!("stack-bench: {e}");
        std::process::exit(1);
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn run() -> Result<(), String> {
    let mut starts = Vec::new();
    for _ in 0..STARTS {
        let t = Instant::now();
        let stack = Stack::start(StackConfig::default())?;
        starts.push(t.elapsed());
        stack.shutdown();
    }
    println!("stack start (median of {STARTS}): {:.1} ms", median(starts).as_secs_f64() * 1e3);

    let stack = Stack::start(StackConfig::default())?;
    let handler_times: Vec<Duration> = stack.with_world(|w| {
        let req = Request::new("GET", PATH).with_header("Authorization", &format!("Bearer {}", w.default_token()));
        (0..200)
            .map(|_| {
                let t = Instant::now();
                let _ = bb_stack::routes::serve(w, &req);
                t.elapsed()
            })
            .collect()
    });
    println!(
        "handler time for GET {PATH} (median of 200, no socket): {:.1} µs",
        median(handler_times).as_secs_f64() * 1e6
    );

    let t = Instant::now();
    let workers: Vec<_> = (0..THREADS)
        .map(|_| {
            let (addr, token) = (stack.addr, stack.token.clone());
            std::thread::spawn(move || client(addr, &token))
        })
        .collect();
    let mut served = 0;
    for w in workers {
        served += w.join().map_err(|_| "a client thread panicked".to_string())??;
    }
    let elapsed = t.elapsed();
    println!(
        "served {served} requests over {THREADS} keep-alive connections in {:.2} s: {:.0} requests/s",
        elapsed.as_secs_f64(),
        served as f64 / elapsed.as_secs_f64()
    );
    stack.shutdown();
    Ok(())
}

fn client(addr: SocketAddr, token: &str) -> Result<usize, String> {
    let stream = TcpStream::connect(addr).map_err(|e| e.to_string())?;
    stream.set_nodelay(true).map_err(|e| e.to_string())?;
    stream.set_read_timeout(Some(Duration::from_secs(10))).map_err(|e| e.to_string())?;
    let mut writer = stream.try_clone().map_err(|e| e.to_string())?;
    let mut reader = BufReader::new(stream);
    let request = format!("GET {PATH} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\n\r\n");
    let mut line = String::new();
    let mut body = Vec::new();
    for _ in 0..REQUESTS_PER_THREAD {
        writer.write_all(request.as_bytes()).map_err(|e| e.to_string())?;
        let mut length = 0usize;
        let mut status_ok = false;
        loop {
            line.clear();
            reader.read_line(&mut line).map_err(|e| e.to_string())?;
            if line.starts_with("HTTP/1.1 ") {
                status_ok = line.starts_with("HTTP/1.1 200");
            } else if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                length = v.trim().parse().map_err(|_| "bad content-length".to_string())?;
            } else if line == "\r\n" || line.is_empty() {
                break;
            }
        }
        if !status_ok {
            return Err("a request did not answer 200".into());
        }
        body.resize(length, 0);
        reader.read_exact(&mut body).map_err(|e| e.to_string())?;
    }
    Ok(REQUESTS_PER_THREAD)
}
