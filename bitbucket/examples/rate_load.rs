//! Kind to the rate limiter (issue 26): 20 open cards that refresh as often as bb lets them and a model
//! working beside them for 10 minutes of simulated time, against Bitbucket's per-user rate limit
//! (Atlassian's defaults: a bucket of 60, refilled at 5 a second; one user, the configured credentials).
//!
//! Everything runs in simulated time on one core [`Server`] (as `bb-core`'s `refresh_load` example does):
//! the cards are sessions that call `show` and then `refresh_view` whenever `next` says; the model is a
//! session that calls `get_pull_request` every 2 s. Every pull request shown has a build in progress, so
//! every card asks every 5 s: 20 cards want about 24 requests a second, five times what Bitbucket allows.
//! Each read goes through bb's own bucket exactly as bb's client spends it ([`bb_bitbucket::Bucket`], at
//! [`bb_bitbucket::REFILL_SHARE`] of the refill): the model's first, refreshes from the upper half only
//! and deferred below it; then through Bitbucket's (the stand-in's [`TokenBucket`]), which answers 429
//! with `Retry-After` when empty. Bitbucket answers after [`LATENCY_MS`].
//!
//! Printed: Bitbucket requests per minute against the limit, 429s, refreshes answered and deferred, and
//! the model's calls' time (p50, p99, max). Then the same without bb's bucket (`--rate-limit off`): what
//! the person's rate limit would meet.
//!
//! Run: `cargo run --release -p bb-bitbucket --example rate_load`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use bb_bitbucket::{Bucket, REFILL_SHARE, RateLimit};
use bb_core::{
    Catalogue, ExposureOptions, FetchError, FetchErrorKind, FetchOutcome, FetchRequest, FetchResponse, Input, Output,
    Server, ServerConfig, SessionId, Ticket,
};
use bb_stack::exchange::Request;
use bb_stack::rate_limit::{self, TokenBucket};
use bb_stack::world::World;
use serde_json::{Value, json};

/// How long Bitbucket takes to answer.
const LATENCY_MS: u64 = 80;
const START: u64 = 1_767_225_600_000;
const MINUTE: u64 = 60_000;
const CARDS: usize = 20;
const MODEL_EVERY_MS: u64 = 2_000;
/// Bitbucket's limit: the admin page's defaults.
const CAPACITY: u64 = 60;
const REFILL: f64 = 5.0;

enum Event {
    Open(usize),
    Refresh(usize),
    Model,
    /// A read asks bb's bucket again (when its token is due, or after a pause a 429 asked for).
    Again(Ticket, FetchRequest),
    /// bb's client retries a read Bitbucket refused with 429, after its `Retry-After` (up to 3 times).
    Retry(Ticket, FetchRequest),
    Answer(Ticket, FetchRequest, FetchOutcome),
}

struct Sim {
    server: Server,
    now: u64,
    origin: Instant,
    events: BTreeMap<(u64, u64), Event>,
    seq: u64,
    world: World,
    cards: Vec<(SessionId, Option<Value>, Value)>,
    model: SessionId,
    model_asked: BTreeMap<i64, u64>,
    model_times: Vec<u64>,
    next_id: i64,
    ours: Option<(RateLimit, Bucket)>,
    theirs: TokenBucket,
    sent: Vec<u64>,
    refused: u64,
    refreshes: u64,
    /// Refreshes answered "unchanged, ask again later" without reading (all of their reads held back).
    refreshes_deferred: u64,
    /// Refreshes answered with an error (a 429 that outlasted the retries).
    refreshes_failed: u64,
    model_failed: u64,
    retries: BTreeMap<Ticket, u32>,
}

fn pull_requests() -> Vec<(&'static str, u64)> {
    let cli = [3u64, 4, 5, 8, 9, 10, 13, 14, 15, 18, 19, 20, 23, 24].map(|n| ("cli", n));
    let api = [1u64, 2, 3, 6, 7, 8].map(|n| ("api", n));
    cli.into_iter().chain(api).take(CARDS).collect()
}

fn show(card: usize) -> Value {
    let (repo, id) = pull_requests()[card];
    json!({"kind": "pull_request", "project": "BB", "repo": repo, "pr_id": id})
}

impl Sim {
    fn new(keep_to_the_limit: bool) -> Sim {
        let exposed = Catalogue::standard().expose(&ExposureOptions::default()).unwrap();
        let mut config = ServerConfig::new(exposed, "0.0.0-bench");
        config.base_url = Some("http://stack.test/bitbucket".into());
        let mut server = Server::new(config, bb_core::Caches::new());
        let model = server.open();
        let origin = Instant::now();
        let ours = keep_to_the_limit.then(|| {
            let limit = RateLimit { capacity: CAPACITY as f64, refill_per_s: REFILL * REFILL_SHARE };
            (limit, Bucket::full(limit, origin))
        });
        let mut world = World::from_default_seed().unwrap();
        // A build in progress on every pull request shown: every card is in motion and asks every 5 s.
        for (repo, id) in pull_requests() {
            let body = json!({"project": "BB", "repo": repo, "pullRequest": id, "key": "ci-long", "state": "INPROGRESS",
                              "url": "https://ci.example.invalid/long", "name": "Long build"});
            let req = Request::new("POST", "/_stack/builds").with_json(&body);
            let r = bb_stack::control::handle(&mut world, &req, &["builds"]);
            assert!(r.status < 300, "{}", String::from_utf8_lossy(&r.body));
        }
        let limit = rate_limit::RateLimit::new(CAPACITY, REFILL).unwrap();
        let mut sim = Sim {
            server,
            now: START,
            origin,
            events: BTreeMap::new(),
            seq: 0,
            world,
            cards: vec![],
            model,
            model_asked: BTreeMap::new(),
            model_times: vec![],
            next_id: 1,
            ours,
            theirs: TokenBucket::full(limit, origin),
            sent: vec![],
            refused: 0,
            refreshes: 0,
            refreshes_deferred: 0,
            refreshes_failed: 0,
            model_failed: 0,
            retries: BTreeMap::new(),
        };
        sim.initialize(model);
        for i in 0..CARDS {
            sim.at(START + i as u64 * 500, Event::Open(i));
        }
        sim.at(START + 15_000, Event::Model);
        sim
    }

    fn instant(&self) -> Instant {
        self.origin + Duration::from_millis(self.now - START)
    }

    fn at(&mut self, time: u64, event: Event) {
        self.seq += 1;
        self.events.insert((time, self.seq), event);
    }

    fn initialize(&mut self, session: SessionId) {
        let views = json!({"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}});
        let params = json!({"protocolVersion": "2025-06-18", "capabilities": views, "clientInfo": {"name": "rate-load", "version": "1"}});
        self.send(session, &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}));
        self.send(session, &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    }

    fn send(&mut self, session: SessionId, message: &Value) {
        self.server.handle(Input::Message { session, bytes: message.to_string().as_bytes(), tag: 0 }, self.now);
        self.drain();
    }

    fn call(&mut self, session: SessionId, name: &str, arguments: Value) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": arguments}});
        self.send(session, &call);
        id
    }

    fn run_until(&mut self, end: u64) {
        while let Some(entry) = self.events.first_entry() {
            if entry.key().0 >= end {
                break;
            }
            let ((time, _), event) = entry.remove_entry();
            self.now = time;
            match event {
                Event::Open(i) => {
                    let session = self.server.open();
                    self.cards.push((session, None, show(i)));
                    self.initialize(session);
                    self.call(session, "show", show(i));
                }
                Event::Refresh(i) => {
                    self.refreshes += 1;
                    let (session, fingerprint, call) = self.cards[i].clone();
                    self.call(session, "refresh_view", json!({"show": call, "fingerprint": fingerprint}));
                }
                Event::Model => {
                    let (repo, id) = pull_requests()[(self.now / MODEL_EVERY_MS) as usize % CARDS];
                    let model = self.model;
                    let call =
                        self.call(model, "get_pull_request", json!({"project": "BB", "repo": repo, "pr_id": id}));
                    self.model_asked.insert(call, self.now);
                    self.at(self.now + MODEL_EVERY_MS, Event::Model);
                }
                Event::Again(ticket, request) => self.fetch(ticket, request),
                Event::Retry(ticket, request) => self.send_to_bitbucket(ticket, request),
                Event::Answer(ticket, request, outcome) => self.answer(ticket, request, outcome),
            }
        }
    }

    fn drain(&mut self) {
        let mut work = Vec::new();
        loop {
            while let Some(out) = self.server.poll_output() {
                match out {
                    Output::Send { session, message, .. } => self.answered(session, &message),
                    Output::Fetch { ticket, request, .. } => self.fetch(ticket, request),
                    Output::Work { ticket, .. } => work.push(ticket),
                    Output::Admit { ticket, .. } => {
                        self.server.handle(Input::Admitted { ticket, granted: true }, self.now)
                    }
                    Output::Cancel(_)
                    | Output::Done { .. }
                    | Output::Audit { .. }
                    | Output::Log { .. }
                    | Output::Compute { .. }
                    | Output::PastDeadline { .. }
                    | Output::Timer { .. }
                    | Output::Spend { .. } => {}
                }
            }
            let Some(ticket) = work.pop() else { break };
            self.server.handle(Input::Work { ticket }, self.now);
        }
    }

    /// bb's client: its bucket decides whether and when the read goes (as `Rate::enter` in bb-bitbucket's `rate.rs`
    /// does: a refresh's batch now or held back, the model's read when a token is there).
    fn fetch(&mut self, ticket: Ticket, request: FetchRequest) {
        let now = self.instant();
        let decided = match (&mut self.ours, request.refresh) {
            (None, _) => Ok(()),
            (Some((limit, bucket)), Some(batch)) => bucket.take_batch(*limit, now, batch),
            (Some((limit, bucket)), None) => bucket.try_take(*limit, now),
        };
        let ms = |d: Duration| (d.as_millis() as u64).max(1);
        match decided {
            Ok(()) => self.send_to_bitbucket(ticket, request),
            // The model's read asks again when the next token is due.
            Err(d) if request.refresh.is_none() => self.at(self.now + ms(d), Event::Again(ticket, request)),
            Err(d) => {
                let outcome = FetchOutcome::Failed(FetchError {
                    kind: FetchErrorKind::Deferred { after_ms: ms(d) },
                    detail: "held back".into(),
                    may_have_arrived: false,
                });
                self.server.handle(Input::Fetched { ticket, outcome }, self.now);
                self.drain();
            }
        }
    }

    /// Bitbucket: its bucket, then the answer after the latency.
    fn send_to_bitbucket(&mut self, ticket: Ticket, request: FetchRequest) {
        self.sent.push(self.now);
        let outcome = match self.theirs.take(self.instant()) {
            Ok(()) => self.serve(&request),
            Err(wait) => {
                self.refused += 1;
                let retry_after_s = rate_limit::retry_after_secs(wait);
                FetchOutcome::Response(FetchResponse {
                    status: 429,
                    body: br#"{"errors":[{"context":null,"message":"You have been rate limited. Try again later.","exceptionName":null}]}"#.to_vec(),
                    retry_after_s: Some(retry_after_s),
                    user: None,
                    decoded: None,
                    credential: Default::default(),
                })
            }
        };
        self.at(self.now + LATENCY_MS, Event::Answer(ticket, request, outcome));
    }

    /// What bb's client does with the answer: a 429 pauses the user; a refresh is deferred, the
    /// model's read asks again after the pause (its retry).
    fn answer(&mut self, ticket: Ticket, request: FetchRequest, outcome: FetchOutcome) {
        if let FetchOutcome::Response(r) = &outcome
            && r.status == 429
        {
            let after = Duration::from_secs(r.retry_after_s.unwrap_or(1));
            let now = self.instant();
            if let Some((limit, bucket)) = &mut self.ours {
                bucket.limited(*limit, now, after);
            }
            if request.refresh.is_some() && self.ours.is_some() {
                let outcome = FetchOutcome::Failed(FetchError {
                    kind: FetchErrorKind::Deferred { after_ms: after.as_millis() as u64 },
                    detail: "rate limited".into(),
                    may_have_arrived: false,
                });
                self.server.handle(Input::Fetched { ticket, outcome }, self.now);
                self.drain();
                return;
            }
            if self.ours.is_some() {
                self.at(self.now + after.as_millis() as u64, Event::Again(ticket, request));
                return;
            }
            // Without a budget: bb's retry policy, a GET refused with 429 again after Retry-After, 3 times.
            let tries = self.retries.entry(ticket).or_default();
            if *tries < 3 {
                *tries += 1;
                self.at(self.now + after.as_millis() as u64, Event::Retry(ticket, request));
                return;
            }
        }
        self.server.handle(Input::Fetched { ticket, outcome }, self.now);
        self.drain();
    }

    fn serve(&mut self, request: &FetchRequest) -> FetchOutcome {
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
        FetchOutcome::Response(FetchResponse {
            status: response.status,
            body: response.body,
            retry_after_s: None,
            user,
            decoded: None,
            credential: Default::default(),
        })
    }

    fn answered(&mut self, session: SessionId, message: &[u8]) {
        let message: Value = serde_json::from_slice(message).unwrap();
        let Some(id) = message["id"].as_i64() else { return };
        if session == self.model {
            if let Some(asked) = self.model_asked.remove(&id) {
                if message["result"]["isError"] == true {
                    self.model_failed += 1;
                }
                self.model_times.push(self.now - asked);
            }
            return;
        }
        let Some(card) = self.cards.iter().position(|c| c.0 == session) else { return };
        let view = &message["result"]["_meta"]["bb/view"];
        if view["deferred"] == true {
            self.refreshes_deferred += 1;
        }
        if message["result"]["isError"] == true {
            self.refreshes_failed += 1;
        }
        if view["fingerprint"].is_string() {
            self.cards[card].1 = Some(view["fingerprint"].clone());
        }
        let next = view["next"].as_u64().unwrap_or(60_000);
        self.at(self.now + next, Event::Refresh(card));
    }
}

fn pct(v: &mut [u64], p: f64) -> u64 {
    v.sort_unstable();
    v[((v.len() as f64 * p) as usize).min(v.len() - 1)]
}

fn main() {
    println!("{CARDS} open cards (each pull request with a build in progress: `next` is 5 s) and a model calling");
    println!(
        "get_pull_request every {} s, for 10 minutes of simulated time, one Bitbucket user whose limit is a",
        MODEL_EVERY_MS / 1000
    );
    println!(
        "bucket of {CAPACITY} refilled at {REFILL} a second ({} requests a minute); Bitbucket answers in {LATENCY_MS} ms.\n",
        (REFILL * 60.0) as u64
    );
    println!(
        "{:<29} {:>12} {:>6} {:>10} {:>9} {:>7} {:>13} {:>24}",
        "", "requests/min", "429s", "refreshes", "deferred", "failed", "model failed", "model call p50/p99/max"
    );
    for (label, keep) in [("bb (--rate-limit 60/5)", true), ("no budget (--rate-limit off)", false)] {
        let mut sim = Sim::new(keep);
        sim.run_until(START + 10 * MINUTE);
        let per_minute = sim.sent.len() as f64 / 10.0;
        let mut t = sim.model_times.clone();
        let (p50, p99, max) = (pct(&mut t, 0.5), pct(&mut t, 0.99), *t.iter().max().unwrap());
        println!(
            "{label:<29} {per_minute:>12.0} {:>6} {:>10} {:>9} {:>7} {:>13} {:>10} / {} / {} ms",
            sim.refused,
            sim.refreshes,
            sim.refreshes_deferred,
            sim.refreshes_failed,
            format!("{} of {}", sim.model_failed, sim.model_times.len()),
            p50,
            p99,
            max
        );
    }
}
