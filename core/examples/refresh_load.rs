//! The refresh-load benchmark: Bitbucket requests per minute for one open card of a quiet pull request
//! after 10 minutes, and for 20 open cards of the same pull request (issue #14, "Load on Bitbucket").
//!
//! Everything runs in simulated time on one core [`Server`]: each card is a session that calls `show`,
//! then `refresh_view` whenever its answer's `next` says (plus the host's delay, when one is set). Bitbucket
//! answers after [`LATENCY_MS`] with fixed bodies (the stand-in's answers for the pull request, read once
//! and replayed), and identical reads in flight are made once ([`Coalesce`], as the drive does). Cards
//! open one after another over the first minute, as people do.
//!
//! Run: `cargo run -p bb-core --example refresh_load`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::collections::{BTreeMap, HashMap, VecDeque};

use bb_core::{
    Catalogue, ExposureOptions, FetchOutcome, FetchRequest, FetchResponse, Input, Output, Server, ServerConfig,
    SessionId, Ticket,
};
use bb_core::{Coalesce, Flight, Joined, ReadKey};
use bb_stack::exchange::Request;
use bb_stack::world::World;
use serde_json::{Value, json};

/// How long Bitbucket takes to answer a read.
const LATENCY_MS: u64 = 80;
/// The seed's "now": after everything in it happened, so the pull request is quiet.
const START: u64 = 1_767_225_600_000;
const MINUTE: u64 = 60_000;
/// The pull request every card shows: open, its one build finished, no change for weeks.
const CARD: (&str, &str, u64) = ("WEB", "frontend", 1);
/// Cards open this far apart.
const OPENING_EVERY_MS: u64 = 2_950;

enum Event {
    Open(usize),
    Refresh(usize),
    Answer(Flight, FetchOutcome),
}

struct Card {
    session: SessionId,
    /// The id of the call it waits for the answer of.
    waiting_for: Option<i64>,
    fingerprint: Option<Value>,
}

struct Sim {
    server: Server,
    now: u64,
    events: BTreeMap<(u64, u64), Event>,
    seq: u64,
    reads: Coalesce<Ticket, (), ()>,
    bodies: HashMap<String, FetchOutcome>,
    world: World,
    cards: Vec<Card>,
    /// Host delay between an answer and the next ask, drawn in [0, jitter_ms).
    jitter_ms: u64,
    rng: u64,
    next_id: i64,
    /// When each Bitbucket request was made.
    made: Vec<u64>,
    /// What each Bitbucket request read.
    paths: Vec<String>,
    /// When each read was asked for by a session (what it costs when nothing is shared).
    asked: Vec<u64>,
    refreshes: Vec<u64>,
}

impl Sim {
    fn new(cards: usize, jitter_ms: u64) -> Sim {
        let exposed = Catalogue::standard().expose(&ExposureOptions::default()).unwrap();
        let mut config = ServerConfig::new(exposed, "0.0.0-bench");
        config.base_url = Some("http://stack.test/bitbucket".into());
        let mut sim = Sim {
            server: Server::new(config, bb_core::Caches::new()),
            now: START,
            events: BTreeMap::new(),
            seq: 0,
            reads: Coalesce::new(),
            bodies: HashMap::new(),
            world: World::from_default_seed().unwrap(),
            cards: vec![],
            jitter_ms,
            rng: 0x9e37_79b9_7f4a_7c15,
            next_id: 1,
            made: vec![],
            paths: vec![],
            asked: vec![],
            refreshes: vec![],
        };
        for i in 0..cards {
            sim.at(START + i as u64 * OPENING_EVERY_MS, Event::Open(i));
        }
        sim
    }

    fn at(&mut self, time: u64, event: Event) {
        self.seq += 1;
        self.events.insert((time, self.seq), event);
    }

    fn jitter(&mut self) -> u64 {
        // xorshift64: a fixed sequence, so every run prints the same figures.
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        if self.jitter_ms == 0 { 0 } else { self.rng % self.jitter_ms }
    }

    fn run_until(&mut self, end: u64) {
        while let Some(entry) = self.events.first_entry() {
            if entry.key().0 >= end {
                break;
            }
            let ((time, _), event) = entry.remove_entry();
            self.now = time;
            match event {
                Event::Open(i) => self.open(i),
                Event::Refresh(i) => self.refresh(i),
                Event::Answer(flight, outcome) => {
                    for (ticket, ()) in self.reads.finish(flight) {
                        self.server.handle(Input::Fetched { ticket, outcome: outcome.clone() }, self.now);
                        self.drain();
                    }
                }
            }
        }
    }

    fn send(&mut self, session: SessionId, message: &Value) {
        self.server.handle(Input::Message { session, bytes: message.to_string().as_bytes(), tag: 0 }, self.now);
        self.drain();
    }

    fn call(&mut self, card: usize, name: &str, arguments: Value) {
        let id = self.next_id;
        self.next_id += 1;
        self.cards[card].waiting_for = Some(id);
        let session = self.cards[card].session;
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": arguments}});
        self.send(session, &call);
    }

    fn open(&mut self, card: usize) {
        let session = self.server.open();
        self.cards.push(Card { session, waiting_for: None, fingerprint: None });
        assert_eq!(self.cards.len(), card + 1);
        let views = json!({"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}});
        let params = json!({"protocolVersion": "2025-06-18", "capabilities": views,
            "clientInfo": {"name": "refresh-load", "version": "1"}});
        self.send(session, &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}));
        self.send(session, &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        self.call(card, "show", show());
    }

    fn refresh(&mut self, card: usize) {
        self.refreshes.push(self.now);
        let fingerprint = self.cards[card].fingerprint.clone().unwrap_or(Value::Null);
        self.call(card, "refresh_view", json!({"show": show(), "fingerprint": fingerprint}));
    }

    /// Carries out everything the server asks for; CPU work runs to its end at once.
    fn drain(&mut self) {
        let mut work = VecDeque::new();
        let mut rooms = Vec::new();
        loop {
            while let Some(out) = self.server.poll_output() {
                match out {
                    Output::Send { session, message, .. } => self.answered(session, &message),
                    Output::Fetch { ticket, request, .. } => self.fetch(ticket, request),
                    Output::Work { ticket, .. } => work.push_back(ticket),
                    Output::Cancel(ticket) => {
                        let _ = self.reads.leave(&ticket);
                    }
                    // A large call's room (a card asks for none) is granted at once.
                    Output::Admit { ticket, .. } => rooms.push(ticket),
                    Output::Done { .. }
                    | Output::Audit { .. }
                    | Output::Log { .. }
                    | Output::Compute { .. }
                    | Output::PastDeadline { .. }
                    | Output::Timer { .. }
                    | Output::Spend { .. } => {}
                }
            }
            if let Some(ticket) = rooms.pop() {
                self.server.handle(Input::Admitted { ticket, granted: true }, self.now);
                continue;
            }
            let Some(ticket) = work.pop_front() else { break };
            self.server.handle(Input::Work { ticket }, self.now);
        }
    }

    fn fetch(&mut self, ticket: Ticket, request: FetchRequest) {
        self.asked.push(self.now);
        let key = ReadKey::of(0, &request).expect("a card only reads");
        if let Joined::Lead(flight) = self.reads.join(key, ticket, (), ()) {
            self.made.push(self.now);
            self.paths.push(request.path.clone());
            let outcome = self.serve(request);
            self.at(self.now + LATENCY_MS, Event::Answer(flight, outcome));
        }
    }

    /// The stand-in's answer to `request`, read once and then replayed: the pull request stays quiet.
    fn serve(&mut self, request: FetchRequest) -> FetchOutcome {
        let key = format!("{} {} {:?}", request.method.as_str(), request.path, request.query);
        if let Some(outcome) = self.bodies.get(&key) {
            return outcome.clone();
        }
        let token = self.world.default_token();
        let req = Request {
            method: request.method.as_str().to_owned(),
            path: request.path.clone(),
            query: request.query.clone(),
            ..Request::default()
        }
        .with_header("Authorization", &format!("Bearer {token}"));
        let response = bb_stack::routes::serve(&mut self.world, &req);
        let user = response.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case("x-ausername")).map(|(_, v)| v.clone());
        let outcome = FetchOutcome::Response(FetchResponse {
            status: response.status,
            body: response.body,
            retry_after_s: None,
            user,
            decoded: None,
            credential: Default::default(),
        });
        self.bodies.insert(key, outcome.clone());
        outcome
    }

    fn answered(&mut self, session: SessionId, message: &[u8]) {
        let message: Value = serde_json::from_slice(message).unwrap();
        let Some(card) = self.cards.iter().position(|c| c.session == session) else { return };
        if message["id"].as_i64().is_none() || message["id"].as_i64() != self.cards[card].waiting_for {
            return;
        }
        self.cards[card].waiting_for = None;
        let result = &message["result"];
        assert!(result["isError"] != true, "the card could not be read: {message}");
        let view = &result["_meta"]["bb/view"];
        assert!(view["fingerprint"].is_string(), "no fingerprint: {message}");
        self.cards[card].fingerprint = Some(view["fingerprint"].clone());
        if let Some(next) = view["next"].as_u64() {
            let ask = self.now + next + self.jitter();
            self.at(ask, Event::Refresh(card));
        }
    }

    /// Bitbucket requests (and reads asked) in [from, to) minutes after the first card opened.
    fn per_minute(&self, from: u64, to: u64) -> (f64, f64, f64) {
        let (a, b) = (START + from * MINUTE, START + to * MINUTE);
        let count = |times: &[u64]| times.iter().filter(|t| (a..b).contains(t)).count() as f64 / (to - from) as f64;
        (count(&self.made), count(&self.asked), count(&self.refreshes))
    }
}

fn show() -> Value {
    let (project, repo, pr_id) = CARD;
    json!({"kind": "pull_request", "project": project, "repo": repo, "pr_id": pr_id})
}

fn main() {
    let (project, repo, pr_id) = CARD;
    println!("Bitbucket requests per minute for open cards of a quiet pull request ({project}/{repo}#{pr_id}), in");
    println!("simulated time: Bitbucket answers in {LATENCY_MS} ms, cards open {OPENING_EVERY_MS} ms apart, identical");
    println!("reads in flight are shared. 'unshared' is what the same cards would cost if nothing were shared;");
    println!("'host delay' is how late each page asks after `next` (drawn evenly in that range).\n");
    println!(
        "{:>5}  {:>10}  {:>15}  {:>16}  {:>16}  {:>10}",
        "cards", "host delay", "minute 10-11", "minutes 10-20", "unshared 10-20", "refreshes"
    );
    for (cards, jitter) in [(1, 0), (20, 0), (20, 50), (20, 250)] {
        let mut sim = Sim::new(cards, jitter);
        sim.run_until(START + 21 * MINUTE);
        let (made, _, _) = sim.per_minute(10, 11);
        let (made_avg, asked_avg, refreshes_avg) = sim.per_minute(10, 20);
        let delay = if jitter == 0 { "none".to_owned() } else { format!("0-{jitter} ms") };
        println!(
            "{cards:>5}  {delay:>10}  {made:>11.1}/min  {made_avg:>12.1}/min  {asked_avg:>12.1}/min  {refreshes_avg:>6.1}/min"
        );
    }
    let mut sim = Sim::new(1, 0);
    sim.run_until(START + 31 * MINUTE);
    // The reads of the first refresh after minute 10, all made within a second of it.
    let a = sim.refreshes.iter().copied().find(|t| *t >= START + 10 * MINUTE).unwrap();
    let b = a + 1_000;
    let refresh: Vec<&str> =
        sim.made.iter().zip(&sim.paths).filter(|(t, _)| (a..b).contains(*t)).map(|(_, p)| p.as_str()).collect();
    println!("\nOne refresh of a quiet card reads {}:", refresh.len());
    for path in refresh {
        println!("  GET {path}");
    }
    println!("\nOne card over time:");
    for (from, to) in [(0, 1), (1, 3), (3, 5), (5, 10), (10, 20), (20, 30)] {
        let (made, _, refreshes) = sim.per_minute(from, to);
        println!("  minutes {from:>2}-{to:<2}  {made:>5.1} requests/min  {refreshes:>4.2} refreshes/min");
    }
}
