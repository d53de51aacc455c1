//! A harness for sessions in tests: feeds lines at an explicit time and collects what comes out.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use bb_core::testing::test_catalogue;
use bb_core::{ExposureOptions, FetchOutcome, FetchRequest, Input, Output, Server, ServerConfig, SessionId, Ticket};
use serde_json::{Value, json};

/// A server with one session over the test catalogue, and everything it has emitted.
pub struct Harness {
    pub server: Server,
    pub session: SessionId,
    /// The tags whose inputs the server said are complete, in order.
    pub done: Vec<u64>,
    pub now: u64,
    pub sent: Vec<Value>,
    pub fetches: Vec<(Ticket, FetchRequest)>,
    pub cancelled: Vec<Ticket>,
    /// Rooms large calls asked for ([`Output::Admit`]), for the test to grant or refuse.
    pub rooms: Vec<Ticket>,
    /// Confirmations to mark used ([`Output::Spend`]), for the test to answer.
    pub spends: Vec<(Ticket, String)>,
    next_tag: u64,
}

impl Harness {
    pub fn new() -> Harness {
        Harness::with(ExposureOptions::default(), 100)
    }

    pub fn with(options: ExposureOptions, page: usize) -> Harness {
        Harness::of(&test_catalogue(), options, page)
    }

    /// A server with one session over `catalogue`.
    pub fn of(catalogue: &bb_core::Catalogue, options: ExposureOptions, page: usize) -> Harness {
        Harness::configured(catalogue, options, page, |_| {})
    }

    /// A server over the test catalogue with every tool exposed, its configuration changed by `f`.
    pub fn everything_with(f: impl FnOnce(&mut ServerConfig)) -> Harness {
        Harness::configured(&test_catalogue(), ExposureOptions::everything(), 100, f)
    }

    fn configured(
        catalogue: &bb_core::Catalogue,
        options: ExposureOptions,
        page: usize,
        f: impl FnOnce(&mut ServerConfig),
    ) -> Harness {
        let exposed = catalogue.expose(&options).unwrap();
        let mut config = ServerConfig::new(exposed, "0.0.0-test");
        config.tools_page_size = page;
        f(&mut config);
        let mut server = Server::new(config, bb_core::Caches::new());
        let session = server.open();
        Harness {
            server,
            session,
            done: vec![],
            now: 1_000,
            sent: vec![],
            fetches: vec![],
            cancelled: vec![],
            rooms: vec![],
            spends: vec![],
            next_tag: 0,
        }
    }

    /// The harness's session.
    pub fn current(&self) -> &bb_core::Session {
        self.server.session(self.session).unwrap()
    }

    /// A session initialized under `version`, with or without the UI extension.
    pub fn initialized(version: &str, views: bool) -> Harness {
        Harness::new().initialize(version, views)
    }

    /// This harness's session, initialized under `version`, with or without the UI extension.
    pub fn initialize(self, version: &str, views: bool) -> Harness {
        let mut h = self;
        let caps = if views {
            json!({"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}})
        } else {
            json!({})
        };
        let answer = h.request(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": version, "capabilities": caps, "clientInfo": {"name": "test", "version": "1"}}}));
        assert!(answer.get("result").is_some(), "{answer}");
        h.line(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string());
        h
    }

    /// Feeds raw bytes; returns the messages sent in answer.
    pub fn bytes(&mut self, bytes: &[u8]) -> Vec<Value> {
        self.next_tag += 1;
        self.now += 1;
        self.server.handle(Input::Message { session: self.session, bytes, tag: self.next_tag }, self.now);
        self.drain()
    }

    pub fn line(&mut self, line: &str) -> Vec<Value> {
        self.bytes(line.as_bytes())
    }

    /// Sends one request and returns its only answer.
    pub fn request(&mut self, message: Value) -> Value {
        let mut out = self.line(&message.to_string());
        assert_eq!(out.len(), 1, "expected one answer to {message}, got {out:?}");
        out.remove(0)
    }

    pub fn call(&mut self, id: i64, name: &str, arguments: Value) -> Vec<Value> {
        self.line(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": arguments}}).to_string())
    }

    pub fn fetched(&mut self, ticket: Ticket, outcome: FetchOutcome) -> Vec<Value> {
        self.now += 1;
        self.server.handle(Input::Fetched { ticket, outcome }, self.now);
        self.drain()
    }

    pub fn ok(body: &str) -> FetchOutcome {
        FetchOutcome::response(200, body)
    }

    fn drain(&mut self) -> Vec<Value> {
        let mut answers = vec![];
        while let Some(out) = self.server.poll_output() {
            match out {
                Output::Done { tag, .. } => self.done.push(tag),
                Output::Send { message, .. } => {
                    let v: Value = serde_json::from_slice(&message).unwrap();
                    self.sent.push(v.clone());
                    answers.push(v);
                }
                Output::Fetch { ticket, request, .. } => self.fetches.push((ticket, request)),
                Output::Cancel(t) => self.cancelled.push(t),
                Output::Admit { ticket, .. } => self.rooms.push(ticket),
                Output::Spend { ticket, id, .. } => self.spends.push((ticket, id)),
                Output::Log { .. }
                | Output::Audit { .. }
                | Output::Work { .. }
                | Output::Compute { .. }
                | Output::PastDeadline { .. }
                | Output::Timer { .. } => {}
            }
        }
        answers
    }
}

/// The proptest configuration every property runs with: a pinned seed (`BB_PROPTEST_SEED`,
/// default 0xbb), `BB_PROPTEST_CASES` cases (default `cases`), and no failure files: a
/// counterexample becomes a named test instead.
pub fn proptest_config(cases: u32) -> proptest::test_runner::Config {
    let seed = std::env::var("BB_PROPTEST_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0xbb);
    let cases = std::env::var("BB_PROPTEST_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(cases);
    proptest::test_runner::Config {
        cases,
        rng_seed: proptest::test_runner::RngSeed::Fixed(seed),
        failure_persistence: None,
        ..proptest::test_runner::Config::default()
    }
}
