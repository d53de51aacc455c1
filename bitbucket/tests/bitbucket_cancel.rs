//! A cancelled request stops: one not yet sent when its call is cancelled is never sent, and one
//! waiting to retry makes no further attempt. Against a raw socket server that counts what arrives.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};

use bb_bitbucket::Client;
use bb_bitbucket::options::{Auth, BitbucketConfig};
use bb_core::{FetchOutcome, FetchRequest};
use bb_drive::{Bitbucket, Cancel};

/// A server that reports each request's path as it arrives, and answers it with what `answer`
/// returns for it (which may wait), on a connection of its own.
struct Counting {
    base_url: String,
    arrived: mpsc::Receiver<String>,
    seen: Arc<Mutex<Vec<String>>>,
}

fn counting(answer: impl Fn(&str) -> String + Send + Sync + 'static) -> Counting {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base_url = format!("http://{}", listener.local_addr().unwrap());
    let (tx, arrived) = mpsc::channel();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let answer = Arc::new(answer);
    let log = Arc::clone(&seen);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            let (tx, answer, log) = (tx.clone(), Arc::clone(&answer), Arc::clone(&log));
            std::thread::spawn(move || serve_one(stream, &tx, &*answer, &log));
        }
    });
    Counting { base_url, arrived, seen }
}

fn serve_one(stream: TcpStream, tx: &mpsc::Sender<String>, answer: &dyn Fn(&str) -> String, log: &Mutex<Vec<String>>) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut first = String::new();
    if reader.read_line(&mut first).unwrap_or(0) == 0 {
        return;
    }
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
            break;
        }
    }
    let path = first.split(' ').nth(1).unwrap_or_default().to_owned();
    log.lock().unwrap().push(path.clone());
    let _ = tx.send(path.clone());
    let mut stream = stream;
    let _ = stream.write_all(answer(&path).as_bytes());
}

fn reply(status: &str, extra: &str) -> String {
    format!(
        "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: 2\r\nconnection: close\r\n{extra}\r\n{{}}"
    )
}

fn client(base_url: &str, tweak: impl FnOnce(&mut BitbucketConfig)) -> Arc<Client> {
    let mut config = BitbucketConfig::new(base_url, Auth::Anonymous).unwrap();
    tweak(&mut config);
    Arc::new(Client::new(config).unwrap())
}

fn fetch_in_thread(client: &Arc<Client>, path: &str, cancel: &Cancel) -> std::thread::JoinHandle<FetchOutcome> {
    let (client, cancel, path) = (Arc::clone(client), cancel.clone(), path.to_owned());
    std::thread::spawn(move || client.fetch(FetchRequest::get(path, vec![]), None, &cancel))
}

#[test]
fn a_request_cancelled_while_it_waits_for_a_slot_is_never_sent() {
    let (release, held) = mpsc::channel::<()>();
    let held = Mutex::new(held);
    let server = counting(move |path| {
        if path == "/first" {
            let _ = held.lock().unwrap().recv();
        }
        reply("200 OK", "")
    });
    // One request in flight at a time: the second waits for the first's slot.
    let bb = client(&server.base_url, |c| c.max_in_flight = 1);
    let first = fetch_in_thread(&bb, "/first", &Cancel::new());
    assert_eq!(server.arrived.recv().unwrap(), "/first");
    let cancel = Cancel::new();
    let second = fetch_in_thread(&bb, "/second", &cancel);
    cancel.cancel();
    // Had it been sent, the server would have answered it 200 at once.
    assert!(matches!(second.join().unwrap(), FetchOutcome::Failed(_)));
    release.send(()).unwrap();
    let FetchOutcome::Response(r) = first.join().unwrap() else { panic!("the first request is answered") };
    assert_eq!(r.status, 200);
    assert_eq!(*server.seen.lock().unwrap(), ["/first"]);
}

#[test]
fn a_request_cancelled_while_it_waits_to_retry_makes_no_further_attempt() {
    // 503 with a Retry-After bb honours: without the cancel, three more attempts would follow.
    let server = counting(|_| reply("503 Service Unavailable", "retry-after: 20\r\n"));
    let bb = client(&server.base_url, |_| {});
    let cancel = Cancel::new();
    let fetch = fetch_in_thread(&bb, "/flaky", &cancel);
    assert_eq!(server.arrived.recv().unwrap(), "/flaky");
    cancel.cancel();
    assert!(matches!(fetch.join().unwrap(), FetchOutcome::Failed(_)));
    assert_eq!(*server.seen.lock().unwrap(), ["/flaky"]);
}

#[test]
fn a_request_cancelled_before_it_starts_is_never_sent() {
    let server = counting(|_| reply("200 OK", ""));
    let bb = client(&server.base_url, |_| {});
    let cancel = Cancel::new();
    cancel.cancel();
    assert!(matches!(bb.fetch(FetchRequest::get("/never", vec![]), None, &cancel), FetchOutcome::Failed(_)));
    // A request made after it is the first the server sees.
    assert!(matches!(bb.fetch(FetchRequest::get("/after", vec![]), None, &Cancel::new()), FetchOutcome::Response(_)));
    assert_eq!(server.arrived.recv().unwrap(), "/after");
}
