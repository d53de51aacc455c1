//! The metadata fetch's rules, offline: no packet leaves loopback. Names are looked up in a table
//! (`table`); where a test needs an answer, `ToLoopback` records the checked addresses ureq would
//! dial and connects to a server on 127.0.0.1 instead, pretending the link is TLS.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::Write;
use std::net::{IpAddr, TcpListener, TcpStream};
use std::sync::Mutex;
use std::time::Instant;

use ureq::unversioned::transport::{Buffers, ConnectionDetails, TcpConnector, Transport};

use super::*;

/// A lookup answering from `entries`, and the names it was asked.
fn table(entries: &[(&str, &[&str])]) -> (Lookup, Arc<Mutex<Vec<String>>>) {
    let entries: Vec<(String, Vec<IpAddr>)> =
        entries.iter().map(|(n, ips)| (n.to_string(), ips.iter().map(|ip| ip.parse().unwrap()).collect())).collect();
    let asked = Arc::new(Mutex::new(Vec::new()));
    let seen = asked.clone();
    let lookup: Lookup = Arc::new(move |host, port| {
        seen.lock().unwrap().push(host.to_owned());
        match entries.iter().find(|(n, _)| n == host) {
            Some((_, ips)) => Ok(ips.iter().map(|&ip| SocketAddr::new(ip, port)).collect()),
            None => Err(io::Error::new(io::ErrorKind::NotFound, "no such name")),
        }
    });
    (lookup, asked)
}

/// Dials `server` (on loopback) whatever the resolver gave, and records what it gave.
#[derive(Debug)]
struct ToLoopback {
    server: SocketAddr,
    dialed: Arc<Mutex<Vec<SocketAddr>>>,
}

impl Connector<()> for ToLoopback {
    type Out = PretendTls;

    fn connect(&self, details: &ConnectionDetails, _: Option<()>) -> Result<Option<PretendTls>, ureq::Error> {
        self.dialed.lock().unwrap().extend(details.addrs.iter().copied());
        let mut addrs = details.resolver.empty();
        addrs.push(self.server);
        let here = ConnectionDetails {
            uri: details.uri,
            addrs,
            config: details.config,
            request_level: details.request_level,
            resolver: details.resolver,
            now: details.now,
            timeout: details.timeout,
            current_time: details.current_time.clone(),
            run_connector: details.run_connector.clone(),
            register_shutdown: details.register_shutdown.clone(),
        };
        let tcp = Connector::<()>::connect(&TcpConnector::default(), &here, None)?;
        Ok(tcp.map(|t| PretendTls(Box::new(t))))
    }
}

/// A TCP transport that says it is TLS (ureq insists on TLS for https).
#[derive(Debug)]
struct PretendTls(Box<dyn Transport>);

impl Transport for PretendTls {
    fn buffers(&mut self) -> &mut dyn Buffers {
        self.0.buffers()
    }
    fn transmit_output(&mut self, amount: usize, timeout: NextTimeout) -> Result<(), ureq::Error> {
        self.0.transmit_output(amount, timeout)
    }
    fn await_input(&mut self, timeout: NextTimeout) -> Result<bool, ureq::Error> {
        self.0.await_input(timeout)
    }
    fn is_open(&mut self) -> bool {
        self.0.is_open()
    }
    fn is_tls(&self) -> bool {
        true
    }
}

/// A server on 127.0.0.1 that answers one request with `answer`.
fn serve(answer: Vec<u8>) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let at = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") && s.read(&mut byte).unwrap_or(0) == 1 {
            head.push(byte[0]);
        }
        let _ = s.write_all(&answer);
    });
    at
}

fn ok_with(body: &[u8]) -> Vec<u8> {
    let mut a = format!("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n", body.len())
        .into_bytes();
    a.extend_from_slice(body);
    a
}

/// A fetch whose names come from `entries` and whose connections go to `server`.
fn through(
    server: SocketAddr,
    entries: &[(&str, &[&str])],
    timeout: Duration,
) -> (MetadataFetch, Arc<Mutex<Vec<SocketAddr>>>) {
    let dialed = Arc::new(Mutex::new(Vec::new()));
    let connector = ToLoopback { server, dialed: dialed.clone() };
    (MetadataFetch::with_parts(table(entries).0, connector, timeout), dialed)
}

/// A listener on 127.0.0.77 that never accepts; `arrived` says whether anything connected.
struct Trap(TcpListener);

impl Trap {
    fn new() -> Trap {
        let l = TcpListener::bind("127.0.0.77:0").unwrap();
        l.set_nonblocking(true).unwrap();
        Trap(l)
    }
    fn port(&self) -> u16 {
        self.0.local_addr().unwrap().port()
    }
    fn arrived(&self) -> bool {
        std::thread::sleep(Duration::from_millis(50));
        match self.0.accept() {
            Ok(_) => true,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => false,
            Err(e) => panic!("{e}"),
        }
    }
}

#[test]
fn a_name_that_resolves_inside_is_refused_at_once_without_connecting() {
    let trap = Trap::new();
    let (lookup, _) = table(&[
        ("inside.example.com", &["127.0.0.77"]),
        ("private.example.com", &["10.1.2.3"]),
        ("mixed.example.com", &["93.184.216.34", "10.1.2.3"]),
        ("mapped.example.com", &["::ffff:127.0.0.77"]),
        ("metadata.example.com", &["169.254.169.254"]),
    ]);
    // The real connector: were the check missed, it would connect to the trap.
    let fetch = MetadataFetch::with_parts(lookup, DefaultConnector::new(), TIMEOUT);
    let p = trap.port();
    let cases = [
        ("inside", "the address 127.0.0.77 (of inside.example.com) is loopback"),
        ("private", "the address 10.1.2.3 (of private.example.com) is private"),
        ("mixed", "the address 10.1.2.3 (of mixed.example.com) is private"),
        ("mapped", "the address ::ffff:127.0.0.77 (of mapped.example.com) is loopback"),
        ("metadata", "the address 169.254.169.254 (of metadata.example.com) is link-local"),
    ];
    for (name, said) in cases {
        let started = Instant::now();
        assert_eq!(fetch.fetch(&format!("https://{name}.example.com:{p}/app.json")).unwrap_err(), said);
        assert!(started.elapsed() < Duration::from_secs(1), "{name}: refused at once, not at a timeout");
    }
    assert!(!trap.arrived(), "no connection reached 127.0.0.77");
}

#[test]
fn the_resolver_refuses_addresses_even_past_the_parser() {
    let trap = Trap::new();
    let (lookup, asked) = table(&[]);
    let fetch = MetadataFetch::with_parts(lookup, DefaultConnector::new(), TIMEOUT);
    let p = trap.port();
    // Straight to the agent, as a redirect or a parser's disagreement would reach it.
    for url in [
        format!("https://127.0.0.77:{p}/app.json"),
        format!("https://127.77:{p}/app.json"),
        format!("https://2130706509:{p}/app.json"),
        format!("https://0x7f.0.0.77:{p}/app.json"),
        format!("https://[::ffff:127.0.0.77]:{p}/app.json"),
        format!("https://LocalHost:{p}/app.json"),
    ] {
        let e = fetch.agent.get(&url).call().unwrap_err();
        let said = fetch.said(&e);
        assert!(said.contains("loopback") || said.contains("localhost"), "{url}: {said}");
    }
    assert!(asked.lock().unwrap().is_empty(), "no address or localhost was looked up");
    assert!(!trap.arrived(), "no connection reached 127.0.0.77");
}

#[test]
fn a_public_name_is_dialled_at_exactly_the_address_checked() {
    let server = serve(ok_with(br#"{"client_id":"https://client.example.com/app.json"}"#));
    let (fetch, dialed) = through(server, &[("client.example.com", &["93.184.216.34"])], TIMEOUT);
    let body = fetch.fetch("https://client.example.com/app.json").unwrap();
    assert_eq!(body, br#"{"client_id":"https://client.example.com/app.json"}"#);
    assert_eq!(*dialed.lock().unwrap(), ["93.184.216.34:443".parse::<SocketAddr>().unwrap()]);
}

#[test]
fn an_unknown_name_is_said_not_found() {
    let (fetch, dialed) = through("127.0.0.1:9".parse().unwrap(), &[], TIMEOUT);
    assert_eq!(fetch.fetch("https://nowhere.example.com/app.json").unwrap_err(), "its host name was not found");
    assert!(dialed.lock().unwrap().is_empty());
}

#[test]
fn an_answer_other_than_200_is_said_and_a_redirect_not_followed() {
    let public = [("client.example.com", &["93.184.216.34"][..])];
    let server = serve(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n".to_vec());
    let (fetch, _) = through(server, &public, TIMEOUT);
    assert_eq!(fetch.fetch("https://client.example.com/app.json").unwrap_err(), "it answered 404");
    let server = serve(b"HTTP/1.1 302 Found\r\nLocation: https://127.0.0.1/\r\nContent-Length: 0\r\n\r\n".to_vec());
    let (fetch, dialed) = through(server, &public, TIMEOUT);
    assert_eq!(fetch.fetch("https://client.example.com/app.json").unwrap_err(), "it answered 302");
    assert_eq!(dialed.lock().unwrap().len(), 1, "one connection, no redirect followed");
}

#[test]
fn a_document_over_64_kib_is_refused_not_cut() {
    let public = [("client.example.com", &["93.184.216.34"][..])];
    let url = "https://client.example.com/app.json";
    let (fetch, _) = through(serve(ok_with(&vec![b' '; 64 * 1024])), &public, TIMEOUT);
    assert_eq!(fetch.fetch(url).unwrap().len(), 64 * 1024, "64 KiB is read whole");
    let (fetch, _) = through(serve(ok_with(&vec![b' '; 64 * 1024 + 1])), &public, TIMEOUT);
    assert_eq!(fetch.fetch(url).unwrap_err(), "the document is larger than 64 KiB");
    // No length given: counted as it arrives.
    let mut no_length = b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n".to_vec();
    no_length.extend(vec![b' '; 100 * 1024]);
    let (fetch, _) = through(serve(no_length), &public, TIMEOUT);
    assert_eq!(fetch.fetch(url).unwrap_err(), "the document is larger than 64 KiB");
}

#[test]
fn a_silent_server_is_given_up_at_the_one_bound() {
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let bound = Duration::from_millis(300);
    let (fetch, _) = through(silent.local_addr().unwrap(), &[("client.example.com", &["93.184.216.34"])], bound);
    let started = Instant::now();
    assert_eq!(fetch.fetch("https://client.example.com/app.json").unwrap_err(), "it did not answer within 0.3 s");
    let took = started.elapsed();
    assert!(took >= bound && took < bound * 4, "{took:?}");
    // A server that answers its head, then stalls in its body, is held to the same bound.
    let (tx, rx) = mpsc::channel::<()>();
    let stalls = TcpListener::bind("127.0.0.1:0").unwrap();
    let at = stalls.local_addr().unwrap();
    std::thread::spawn(move || {
        let (mut s, _): (TcpStream, _) = stalls.accept().unwrap();
        let _ = s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{");
        let _ = rx.recv_timeout(Duration::from_secs(5));
    });
    let (fetch, _) = through(at, &[("client.example.com", &["93.184.216.34"])], bound);
    let started = Instant::now();
    assert_eq!(fetch.fetch("https://client.example.com/app.json").unwrap_err(), "it did not answer within 0.3 s");
    assert!(started.elapsed() < bound * 4);
    let _ = tx.send(());
}

#[test]
fn a_slow_lookup_is_given_up_within_the_bound() {
    let slow: Lookup = Arc::new(|_, _| {
        std::thread::sleep(Duration::from_secs(2));
        Ok(vec![])
    });
    let fetch = MetadataFetch::with_parts(slow, DefaultConnector::new(), Duration::from_millis(300));
    let started = Instant::now();
    let said = fetch.fetch("https://slow.example.com/app.json").unwrap_err();
    assert!(said.starts_with("its host name was not found within"), "{said}");
    assert!(started.elapsed() < Duration::from_secs(1));
}

#[test]
fn at_most_eight_documents_and_eight_lookups_at_once() {
    let (fetch, _) = through("127.0.0.1:9".parse().unwrap(), &[], TIMEOUT);
    let held: Vec<Slot> = (0..MAX_IN_FLIGHT).map(|_| Slot::take(&fetch.in_flight, MAX_IN_FLIGHT).unwrap()).collect();
    assert_eq!(fetch.fetch("https://nowhere.example.com/app.json").unwrap_err(), BUSY);
    drop(held);
    assert_eq!(fetch.in_flight.load(Ordering::Acquire), 0);
    assert_eq!(fetch.fetch("https://nowhere.example.com/app.json").unwrap_err(), "its host name was not found");
    assert_eq!(fetch.in_flight.load(Ordering::Acquire), 0, "a fetch gives its place back");

    let resolver = CheckedResolver { lookup: table(&[]).0, lookups: Arc::default() };
    let held: Vec<Slot> = (0..MAX_LOOKUPS).map(|_| Slot::take(&resolver.lookups, MAX_LOOKUPS).unwrap()).collect();
    assert_eq!(resolver.addresses("nowhere.example.com", 443, TIMEOUT).unwrap_err(), BUSY);
    drop(held);
    assert!(resolver.addresses("nowhere.example.com", 443, TIMEOUT).is_err_and(|e| e != BUSY));
}
