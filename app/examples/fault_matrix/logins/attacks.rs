//! The three attacks on bb's login endpoints, each from the eight loopback addresses 127.0.0.2–9 (to bb,
//! eight peers other than the person's 127.0.0.1), one thread per address, until told to stop or at
//! their bound. Each keeps, per address, what every request got, in order, for the row to judge.

use std::collections::BTreeMap;
use std::io::{ErrorKind, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::wire::{KeptAlive, connect_from, encode, request_bytes};

/// The attacking addresses.
pub const ADDRESSES: usize = 8;
/// The most requests a flood sends, all addresses together.
const MAX_REQUESTS: usize = 1_000_000;
/// Slow bodies each address keeps open (8 × 75 = 600).
pub const SLOW_PER_ADDRESS: usize = 75;
/// The length a slow body declares; it sends one byte a second.
const SLOW_LENGTH: usize = 1000;
/// How long any attack may run, whatever happens to its stop.
const LONGEST: Duration = Duration::from_secs(40);
/// The redirect URI the attackers' clients register.
const REDIRECT: &str = "http://127.0.0.1:5555/callback";
const REGISTRATION: &str = r#"{"redirect_uris":["http://127.0.0.1:5555/callback"],"client_name":"flood"}"#;
/// A valid S256 challenge (of no verifier anyone keeps).
const CHALLENGE: &str = "BVvy4CD-OvCFbvT0e0Ez4cvXutBtG3b4Q43biCWs3YQ";
/// The length of the `state` of the authorizations that show a login begun has bounded bytes.
pub const LONG_STATE: usize = 12 * 1024;
/// How many such authorizations each address sends, first.
pub const LONG_STATES: usize = 2;

/// An attack of the section.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Attack {
    /// `POST /oauth/register` as fast as bb answers, on a kept-alive connection per address.
    Registrations,
    /// `GET /oauth/authorize` for a client the address registered, as fast as bb answers; first a
    /// few with a 12 KB `state`.
    Authorizations,
    /// 75 connections per address, each sending a login request's head with `Content-Length: 1000`,
    /// then a byte a second; a connection bb closes is opened again at the next second.
    SlowBodies,
}

impl Attack {
    pub fn all() -> [Attack; 3] {
        [Attack::Registrations, Attack::Authorizations, Attack::SlowBodies]
    }

    pub fn label(self) -> &'static str {
        match self {
            Attack::Registrations => "registration flood",
            Attack::Authorizations => "authorize flood",
            Attack::SlowBodies => "600 slow bodies",
        }
    }
}

/// What one answer was, as far as the row cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Got {
    pub status: u16,
    /// What kind of answer it was: `slow_down` (a 429's OAuth error), `consent` (bb's consent page),
    /// `page` (a plain page for a browser), `json`, or `other`.
    pub said: &'static str,
}

/// Everything one address's requests got, tallied (a flood sends hundreds of thousands).
#[derive(Debug, Default)]
pub struct Address {
    /// How many answers of each kind: status and what it said (for the authorize flood, after its
    /// registration and the long states).
    pub counts: BTreeMap<(u16, &'static str), usize>,
    /// How many answers in a row, from the first, had the first one's status.
    pub leading: usize,
    /// Whether an answer of another status than the first's came.
    leading_ended: bool,
    /// The answers to the long states.
    pub long_states: Vec<Got>,
    /// The longest a slow body's connection was seen open without an answer.
    pub longest_open: Duration,
    /// Requests sent (for slow bodies: connections opened).
    pub sent: usize,
    /// Requests that ended without an answer (closed, reset, timed out), or for slow bodies
    /// connections bb closed without one.
    pub unanswered: usize,
    /// Slow bodies' connections that could not be opened.
    pub unopened: usize,
    /// Why the address stopped early, if it did.
    pub failed: Option<String>,
}

impl Address {
    fn record(&mut self, got: Got) {
        let first = self.counts.keys().next().is_none();
        *self.counts.entry((got.status, got.said)).or_default() += 1;
        if !self.leading_ended && (first || self.counts.keys().all(|(s, _)| *s == got.status)) {
            self.leading += 1;
        } else {
            self.leading_ended = true;
        }
    }

    /// How many answers had `status`.
    pub fn with_status(&self, status: u16) -> usize {
        self.counts.iter().filter(|((s, _), _)| *s == status).map(|(_, n)| n).sum()
    }
}

/// Runs `attack` on bb at `to` until `stop` is set (or its bound); one [`Address`] per attacker.
pub fn run(attack: Attack, to: SocketAddr, stop: &AtomicBool) -> Vec<Address> {
    let sent = AtomicUsize::new(0);
    let started = Instant::now();
    let going = || !stop.load(Ordering::Relaxed) && started.elapsed() < LONGEST;
    let out: Vec<Mutex<Address>> = (0..ADDRESSES).map(|_| Mutex::default()).collect();
    std::thread::scope(|s| {
        for (i, slot) in out.iter().enumerate() {
            let (sent, going) = (&sent, &going);
            s.spawn(move || {
                let from = Ipv4Addr::new(127, 0, 0, 2 + i as u8);
                let mut a = Address::default();
                match attack {
                    Attack::Registrations => flood(&mut a, from, to, None, going, sent),
                    Attack::Authorizations => match client_of(&mut a, from, to) {
                        Some(client) => flood(&mut a, from, to, Some(&client), going, sent),
                        None => a.failed = Some("its registration was refused".into()),
                    },
                    Attack::SlowBodies => slow_bodies(&mut a, from, to, going),
                }
                *slot.lock().unwrap() = a;
            });
        }
    });
    out.into_iter().map(|m| m.into_inner().unwrap()).collect()
}

fn said(status: u16, content_type: &str, body: &str) -> &'static str {
    if body.contains("\"slow_down\"") {
        "slow_down"
    } else if status == 200 && body.contains("name=\"login\"") {
        "consent"
    } else if content_type.starts_with("text/plain") {
        "page"
    } else if content_type.starts_with("application/json") {
        "json"
    } else {
        "other"
    }
}

/// Registers a client from `from` (one request of its allowance): its `client_id`.
fn client_of(a: &mut Address, from: Ipv4Addr, to: SocketAddr) -> Option<String> {
    let mut c = KeptAlive::new(from, to);
    let json = [("Content-Type", "application/json")];
    let answer = c.send(&request_bytes(&to.to_string(), "POST", "/oauth/register", &json, REGISTRATION, false)).ok()?;
    a.sent += 1;
    let v: Value = serde_json::from_str(&answer.body).ok()?;
    v["client_id"].as_str().map(str::to_owned)
}

/// Sends registrations (no client) or authorizations for `client` from `from`, one at a time on a
/// kept-alive connection, as fast as bb answers.
fn flood(
    a: &mut Address,
    from: Ipv4Addr,
    to: SocketAddr,
    client: Option<&str>,
    going: &dyn Fn() -> bool,
    sent: &AtomicUsize,
) {
    let host = to.to_string();
    let mut c = KeptAlive::new(from, to);
    let authorize = |state: &str| {
        let target = format!(
            "/oauth/authorize?client_id={}&redirect_uri={}&response_type=code&state={state}&code_challenge={CHALLENGE}\
             &code_challenge_method=S256",
            client.unwrap_or_default(),
            encode(REDIRECT)
        );
        request_bytes(&host, "GET", &target, &[], "", false)
    };
    let bytes = match client {
        None => request_bytes(
            &host,
            "POST",
            "/oauth/register",
            &[("Content-Type", "application/json")],
            REGISTRATION,
            false,
        ),
        Some(_) => authorize("s"),
    };
    let mut long_states = if client.is_some() { LONG_STATES } else { 0 };
    while going() && sent.fetch_add(1, Ordering::Relaxed) < MAX_REQUESTS {
        let long = long_states > 0;
        let asked = if long { authorize(&"x".repeat(LONG_STATE)) } else { bytes.clone() };
        a.sent += 1;
        match c.send(&asked) {
            Ok(answer) => {
                let kind = said(answer.status, answer.header("content-type").unwrap_or_default(), &answer.body);
                let got = Got { status: answer.status, said: kind };
                if long {
                    long_states -= 1;
                    a.long_states.push(got);
                } else {
                    a.record(got);
                }
            }
            Err(_) => {
                a.unanswered += 1;
                std::thread::sleep(Duration::from_millis(10));
            }
        }
    }
}

/// One slow body's connection.
struct Slow {
    stream: TcpStream,
    opened: Instant,
    got: Vec<u8>,
}

/// Keeps [`SLOW_PER_ADDRESS`] slow bodies open from `from`: each second a byte more on each, and
/// the ones bb answered or closed opened again.
fn slow_bodies(a: &mut Address, from: Ipv4Addr, to: SocketAddr, going: &dyn Fn() -> bool) {
    let head = |i: usize| {
        let (path, kind, first) = if i % 4 == 3 {
            ("/oauth/token", "application/x-www-form-urlencoded", "grant_type=")
        } else {
            ("/oauth/register", "application/json", "{")
        };
        format!(
            "POST {path} HTTP/1.1\r\nHost: {to}\r\nContent-Type: {kind}\r\nContent-Length: {SLOW_LENGTH}\r\n\r\n{first}"
        )
    };
    let mut slots: Vec<Option<Slow>> = (0..SLOW_PER_ADDRESS).map(|_| None).collect();
    let mut tick: Option<Instant> = None;
    while going() {
        if tick.is_none_or(|t| t.elapsed() >= Duration::from_secs(1)) {
            tick = Some(Instant::now());
            for (i, slot) in slots.iter_mut().enumerate() {
                match slot {
                    Some(s) => {
                        let _ = s.stream.write_all(b" ");
                    }
                    None => {
                        a.sent += 1;
                        *slot = open_slow(from, to, head(i).as_bytes());
                        if slot.is_none() {
                            a.unopened += 1;
                        }
                    }
                }
                if !going() {
                    break;
                }
            }
        }
        for slot in &mut slots {
            let Some(s) = slot else { continue };
            a.longest_open = a.longest_open.max(s.opened.elapsed());
            if let Some(ended) = settled(s) {
                match ended {
                    Some(got) => a.record(got),
                    None => a.unanswered += 1,
                }
                *slot = None;
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn open_slow(from: Ipv4Addr, to: SocketAddr, head: &[u8]) -> Option<Slow> {
    let mut stream = connect_from(from, to).ok()?;
    let opened = Instant::now();
    stream.write_all(head).ok()?;
    stream.set_nonblocking(true).ok()?;
    Some(Slow { stream, opened, got: Vec::new() })
}

/// `None` while the connection is open with no whole head; then `Some(the answer)`, or `Some(None)`
/// when bb closed it without one.
fn settled(s: &mut Slow) -> Option<Option<Got>> {
    let mut buf = [0u8; 4096];
    let mut closed = false;
    loop {
        match s.stream.read(&mut buf) {
            Ok(0) => closed = true,
            Ok(n) => {
                s.got.extend_from_slice(&buf[..n]);
                continue;
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => {}
            Err(_) => closed = true,
        }
        break;
    }
    let text = String::from_utf8_lossy(&s.got);
    let Some((head, body)) = text.split_once("\r\n\r\n") else { return closed.then_some(None) };
    let status = head.split_whitespace().nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
    let content_type = head
        .lines()
        .find_map(|l| l.split_once(':').filter(|(k, _)| k.eq_ignore_ascii_case("content-type")).map(|(_, v)| v.trim()))
        .unwrap_or_default();
    Some(Some(Got { status, said: said(status, content_type, body) }))
}

/// Every status the addresses' requests got, with how many times.
pub fn statuses(addresses: &[Address]) -> BTreeMap<u16, usize> {
    let mut out = BTreeMap::new();
    for a in addresses {
        for ((status, _), n) in &a.counts {
            *out.entry(*status).or_default() += n;
        }
        for g in &a.long_states {
            *out.entry(g.status).or_default() += 1;
        }
    }
    out
}
