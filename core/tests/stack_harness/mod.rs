//! A session over bb's standard catalogue whose every Bitbucket request the local stand-in answers in-process
//! (`bb_stack::routes::serve`), as the default user, counting requests.
//! The stack's control-API faults apply (the same `Control::admit` the server uses), and a test may answer
//! chosen requests itself with crafted outcomes.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::VecDeque;

use bb_core::{
    Catalogue, ExposureOptions, FetchError, FetchErrorKind, FetchOutcome, FetchRequest, FetchResponse, Input, Output,
    Server, ServerConfig, SessionId, Ticket,
};
use bb_stack::admission::{Admission, Fault, FaultKind};
use bb_stack::exchange::Request;
use bb_stack::world::World;
use serde_json::{Value, json};

/// A crafted answer for the requests it matches, instead of the stack's.
pub type Override = Box<dyn FnMut(&FetchRequest) -> Option<FetchOutcome>>;

/// Something that happens in the stack's world just before a request is served (another person's edit).
pub type Before = Box<dyn FnMut(&FetchRequest, &mut World)>;

/// A change to the stack's JSON answer before bb reads it (an older server's shape).
pub type Rewrite = Box<dyn FnMut(&FetchRequest, &mut Value)>;

/// The requests whose answers come last.
pub type Last = Box<dyn Fn(&FetchRequest) -> bool>;

/// The person who answers bb's questions: `elicitation/create` params in, an `ElicitResult` out.
pub type Person = Box<dyn FnMut(&Value) -> Value>;

/// A server with one session, the stack's world, and the Bitbucket requests made so far.
pub struct StackHarness {
    pub server: Server,
    pub session: SessionId,
    pub world: World,
    /// `METHOD path?query` of every request, in the order the session asked for them.
    pub requests: Vec<String>,
    /// Bodies of the writes, in order.
    pub bodies: Vec<Value>,
    /// Bytes of Bitbucket JSON the last call read.
    pub raw_bytes: usize,
    overrides: Vec<Override>,
    befores: Vec<Before>,
    rewrites: Vec<Rewrite>,
    /// Requests served only once nothing else is asked for (an answer that comes last).
    last: Vec<Last>,
    /// How many work steps a call gets before its next one is its last (`None`: as many as it asks for).
    pub work_steps: Option<usize>,
    /// The process has no room for large calls: their rooms are refused.
    pub no_room: bool,
    /// The calls' work tickets the core said stopped at their deadline (`Output::PastDeadline`), in order.
    pub past_deadline: Vec<Ticket>,
    /// How the person answers bb's questions (`elicitation/create` params → `ElicitResult`), when
    /// the harness asks ([`StackHarness::asking`]); the questions asked, in order.
    pub person: Option<Person>,
    pub questions: Vec<Value>,
    /// The core's timers not yet fed (`Output::Timer`): ticket and time.
    pub timers: Vec<(Ticket, u64)>,
    /// Messages without an id the session sent (notifications), in order, with the tag they went with.
    pub notes: Vec<(Option<u64>, Value)>,
    /// Reads asked for that no answer waited on (a watch's), served by [`StackHarness::run_background`].
    background: VecDeque<(Ticket, FetchRequest)>,
    /// Tags the core said are done (`Output::Done`).
    pub done_tags: Vec<u64>,
    now: u64,
    next_id: i64,
}

/// What a tool call answered.
#[derive(Debug, Clone)]
pub struct Answer {
    pub text: String,
    pub is_error: bool,
    pub raw: Value,
}

impl StackHarness {
    /// The committed seed, every tool exposed, an initialized session.
    pub fn new() -> StackHarness {
        StackHarness::with_world(World::from_default_seed().unwrap())
    }

    pub fn with_world(world: World) -> StackHarness {
        StackHarness::with(world, json!({}))
    }

    /// The committed seed, and a client that declared it renders MCP Apps views.
    pub fn with_views() -> StackHarness {
        let caps = json!({"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}});
        StackHarness::with(World::from_default_seed().unwrap(), caps)
    }

    /// As [`StackHarness::with_views`], with lexers that embed others allowed (`--highlight-templates`).
    pub fn with_views_and_templates() -> StackHarness {
        let caps = json!({"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}});
        StackHarness::with_config(World::from_default_seed().unwrap(), caps, true)
    }

    fn with(world: World, capabilities: Value) -> StackHarness {
        StackHarness::with_config(world, capabilities, false)
    }

    /// The committed seed, a client that renders views, and the admin's scope (`--project`, `--repo`
    /// entries, as `BB_SCOPE` gives them).
    pub fn scoped(entries: &[&str]) -> StackHarness {
        let scope = bb_core::Scope::parse(entries.iter().copied()).unwrap();
        let caps = json!({"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}});
        StackHarness::with_settings(World::from_default_seed().unwrap(), caps, false, false, Some(scope))
    }

    /// The committed seed and a 2025-11-25 client that shows forms, with asking on (bb's default): `person`
    /// answers each question.
    pub fn asking(person: impl FnMut(&Value) -> Value + 'static) -> StackHarness {
        let mut h = StackHarness::with_config_asking(
            World::from_default_seed().unwrap(),
            json!({"elicitation": {"form": {}}}),
            false,
            true,
        );
        h.person = Some(Box::new(person));
        h
    }

    fn with_config(world: World, capabilities: Value, templates: bool) -> StackHarness {
        StackHarness::with_config_asking(world, capabilities, templates, false)
    }

    fn with_config_asking(world: World, capabilities: Value, templates: bool, confirm: bool) -> StackHarness {
        StackHarness::with_settings(world, capabilities, templates, confirm, None)
    }

    /// The committed seed and a session initialized on `version` (`None`: never initialized, for
    /// 2026-07-28 requests, each of which says its own revision in `_meta`).
    #[allow(dead_code)]
    pub fn speaking(version: Option<&str>) -> StackHarness {
        StackHarness::with_all(World::from_default_seed().unwrap(), json!({}), false, false, None, version)
    }

    /// The committed seed, a 2025-11-25 session, and what `options` expose (`--tools`, `--exclude`, …).
    #[allow(dead_code)]
    pub fn exposing(options: ExposureOptions) -> StackHarness {
        let world = World::from_default_seed().unwrap();
        StackHarness::with_exposure(world, json!({}), false, false, None, Some("2025-11-25"), options)
    }

    fn with_settings(
        world: World,
        capabilities: Value,
        templates: bool,
        confirm: bool,
        scope: Option<bb_core::Scope>,
    ) -> StackHarness {
        let version = if confirm { "2025-11-25" } else { "2025-06-18" };
        StackHarness::with_all(world, capabilities, templates, confirm, scope, Some(version))
    }

    fn with_all(
        world: World,
        capabilities: Value,
        templates: bool,
        confirm: bool,
        scope: Option<bb_core::Scope>,
        version: Option<&str>,
    ) -> StackHarness {
        let options = ExposureOptions::everything();
        StackHarness::with_exposure(world, capabilities, templates, confirm, scope, version, options)
    }

    fn with_exposure(
        world: World,
        capabilities: Value,
        templates: bool,
        confirm: bool,
        scope: Option<bb_core::Scope>,
        version: Option<&str>,
        options: ExposureOptions,
    ) -> StackHarness {
        let exposed = Catalogue::standard().expose(&options).unwrap();
        let mut config = ServerConfig::new(exposed, "0.0.0-test");
        config.base_url = Some("http://stack.test/bitbucket".into());
        config.highlight_templates = templates;
        // These scenarios exercise the tools' reads and writes themselves: they run with the admin's
        // switch that turns asking off (`--confirm off`). core/tests/confirm.rs answers the questions.
        config.confirm = confirm;
        config.scope = scope.map(std::sync::Arc::new);
        let mut server = Server::new(config, bb_core::Caches::new());
        let session = server.open();
        let mut d = StackHarness {
            server,
            session,
            world,
            requests: vec![],
            bodies: vec![],
            raw_bytes: 0,
            overrides: vec![],
            befores: vec![],
            rewrites: vec![],
            last: vec![],
            work_steps: None,
            no_room: false,
            past_deadline: Vec::new(),
            person: None,
            questions: Vec::new(),
            timers: Vec::new(),
            notes: Vec::new(),
            background: VecDeque::new(),
            done_tags: Vec::new(),
            now: 1_000,
            next_id: 1,
        };
        let session = d.session;
        let Some(version) = version else { return d };
        d.server.handle(
            Input::Message {
                session,
                bytes: json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": version,
                    "capabilities": capabilities, "clientInfo": {"name": "stack-driver", "version": "1"}}})
                .to_string()
                .as_bytes(),
                tag: 0,
            },
            d.now,
        );
        while d.server.poll_output().is_some() {}
        d.server.handle(
            Input::Message { session, bytes: br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#, tag: 0 },
            d.now,
        );
        while d.server.poll_output().is_some() {}
        d
    }

    /// Calls the stack's control API (`/_stack/...`) in-process, e.g. to move or add a build.
    pub fn control(&mut self, method: &str, path: &str, body: Value) -> Value {
        let req = bb_stack::exchange::Request::new(method, &format!("/_stack{path}")).with_json(&body);
        let rest: Vec<&str> = path.trim_start_matches('/').split('/').collect();
        let response = bb_stack::control::handle(&mut self.world, &req, &rest);
        assert!(
            response.status < 300,
            "control {path}: {} {}",
            response.status,
            String::from_utf8_lossy(&response.body)
        );
        response.body_json()
    }

    /// Moves the clock on by `ms` milliseconds.
    pub fn advance(&mut self, ms: u64) {
        self.now += ms;
    }

    /// Answers the requests `f` matches with its outcome (the first matching override wins).
    pub fn answer_with(&mut self, f: impl FnMut(&FetchRequest) -> Option<FetchOutcome> + 'static) {
        self.overrides.push(Box::new(f));
    }

    /// Runs `f` on the world before each request is served, e.g. to change what a write is about between
    /// bb's read and its write.
    pub fn before_serving(&mut self, f: impl FnMut(&FetchRequest, &mut World) + 'static) {
        self.befores.push(Box::new(f));
    }

    /// Rewrites every JSON answer of the stack with `f` before bb reads it, e.g. into an older server's shape.
    pub fn rewrite_answers(&mut self, f: impl FnMut(&FetchRequest, &mut Value) + 'static) {
        self.rewrites.push(Box::new(f));
    }

    /// Serves the requests `f` matches only when no other request is waiting: their answers come after
    /// those of everything asked for with them, and of what those answers ask for in turn.
    pub fn answer_last(&mut self, f: impl Fn(&FetchRequest) -> bool + 'static) {
        self.last.push(Box::new(f));
    }

    /// Queues a stack fault: the next `count` requests whose path starts with `prefix` get `status`.
    pub fn fault(&mut self, prefix: &str, status: u16, count: u32, retry_after: Option<u64>) {
        self.world.control.faults.push(Fault {
            remaining: count,
            path_prefix: Some(prefix.to_owned()),
            kind: FaultKind::Status { status, retry_after },
        });
    }

    /// Calls a tool and runs it to its answer, serving every request in the order asked.
    pub fn call(&mut self, name: &str, arguments: Value) -> Answer {
        let raw = self.request("tools/call", json!({"name": name, "arguments": arguments}));
        // A JSON-RPC error (an unknown tool): its message as the text, the whole answer as `raw`.
        if let Some(message) = raw["error"]["message"].as_str() {
            return Answer { text: message.to_owned(), is_error: true, raw };
        }
        let result = raw.get("result").cloned().unwrap_or_else(|| panic!("no result: {raw}"));
        let text = result["content"]
            .as_array()
            .map(|c| c.iter().filter_map(|t| t["text"].as_str()).collect::<Vec<_>>().join("\n"))
            .unwrap_or_default();
        Answer { text, is_error: result["isError"] == true, raw: result }
    }

    /// Sends one request of any method in the session and carries out its work against the stand-in
    /// until it is answered: the whole JSON-RPC answer.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let name = method;
        self.requests.clear();
        self.bodies.clear();
        self.raw_bytes = 0;
        let id = self.next_id;
        self.next_id += 1;
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.now += 1;
        let session = self.session;
        self.server.handle(Input::Message { session, bytes: line.to_string().as_bytes(), tag: 1 }, self.now);
        let mut queue: VecDeque<(Ticket, FetchRequest)> = VecDeque::new();
        let mut work: VecDeque<(Ticket, u64)> = VecDeque::new();
        let mut computes: VecDeque<(Ticket, bb_core::HighlightJob)> = VecDeque::new();
        let mut steps = 0usize;
        let mut answer = None;
        let mut rooms: VecDeque<Ticket> = VecDeque::new();
        let mut asked: VecDeque<Value> = VecDeque::new();
        loop {
            while let Some(out) = self.server.poll_output() {
                match out {
                    Output::Send { message, tag, .. } => {
                        let v: Value = serde_json::from_slice(&message).unwrap();
                        if v["id"] == json!(id) {
                            answer = Some(v);
                        } else if v["method"] == "elicitation/create" {
                            self.questions.push(v["params"].clone());
                            asked.push_back(v);
                        } else if v.get("id").is_none() {
                            self.notes.push((tag, v));
                        }
                    }
                    Output::Timer { ticket, at_ms, .. } => self.timers.push((ticket, at_ms)),
                    Output::Done { tag, .. } => self.done_tags.push(tag),
                    Output::Cancel(ticket) => {
                        self.timers.retain(|(t, _)| *t != ticket);
                        self.background.retain(|(t, _)| *t != ticket);
                    }
                    Output::Fetch { ticket, request, .. } => queue.push_back((ticket, request)),
                    Output::Work { ticket, deadline_ms, .. } => work.push_back((ticket, deadline_ms)),
                    // A warm-up is nobody's step: run at once, as a spare CPU thread would.
                    Output::Compute { ticket, job, .. } if job.is_warm_up() => {
                        self.now += 1;
                        self.server.handle(Input::Computed { ticket, done: job.run() }, self.now);
                    }
                    Output::Compute { ticket, job, .. } => computes.push_back((ticket, *job)),
                    Output::Admit { ticket, .. } => rooms.push_back(ticket),
                    Output::PastDeadline { ticket, .. } => self.past_deadline.push(ticket),
                    _ => {}
                }
            }
            // The person answers a question as the test said they would.
            if let Some(q) = asked.pop_front() {
                let person = self.person.as_mut().expect("bb asked, and the test has no person to answer");
                let result = person(&q["params"]);
                let reply = json!({"jsonrpc": "2.0", "id": q["id"], "result": result});
                self.now += 1;
                let session = self.session;
                self.server.handle(Input::Message { session, bytes: reply.to_string().as_bytes(), tag: 2 }, self.now);
                continue;
            }
            // A large call's room: granted at once, unless the test has the process full.
            if let Some(ticket) = rooms.pop_front() {
                self.now += 1;
                self.server.handle(Input::Admitted { ticket, granted: !self.no_room }, self.now);
                continue;
            }
            if answer.is_some() {
                // Reads nobody's answer waits on (a watch's) are served later, by run_background.
                self.background.extend(queue.drain(..));
                // As a shell's CPU threads do, the jobs the answer did not wait for come back after it.
                for (ticket, job) in std::mem::take(&mut computes) {
                    self.now += 1;
                    self.server.handle(Input::Computed { ticket, done: job.run() }, self.now);
                    while self.server.poll_output().is_some() {}
                }
                break;
            }
            // Jobs run one per step, in the order asked, until the test's number of steps (its
            // "deadline"): then the call's work gets its last step and the jobs left never come back.
            if queue.is_empty()
                && let Some((ticket, job)) = computes.pop_front()
            {
                steps += 1;
                self.now += 1;
                if self.work_steps.is_some_and(|n| steps > n) {
                    computes.clear();
                    if let Some((w, deadline_ms)) = work.pop_front() {
                        self.now = self.now.max(deadline_ms);
                        self.server.handle(Input::Work { ticket: w }, self.now);
                    }
                } else {
                    self.server.handle(Input::Computed { ticket, done: job.run() }, self.now);
                }
                continue;
            }
            // CPU work goes on until done, unless the test set a number of steps (its "deadline").
            if queue.is_empty()
                && let Some((ticket, deadline_ms)) = work.pop_front()
            {
                steps += 1;
                // Past the test's number of steps, the time is the call's deadline: its last step.
                let last = self.work_steps.is_some_and(|n| steps > n);
                self.now = if last { self.now.max(deadline_ms) } else { self.now + 1 };
                self.server.handle(Input::Work { ticket }, self.now);
                continue;
            }
            let next = queue.iter().position(|(_, r)| !self.last.iter().any(|l| l(r))).unwrap_or(0);
            let Some((ticket, request)) = queue.remove(next) else { panic!("{name} stopped without an answer") };
            let outcome = self.serve(&request);
            self.now += 1;
            self.server.handle(Input::Fetched { ticket, outcome }, self.now);
        }
        answer.unwrap()
    }

    /// Sends a request with `id` under input tag `tag` without waiting for its answer (a stream that stays
    /// open), then serves what it led to in the background.
    pub fn open_request(&mut self, id: i64, method: &str, params: Value, tag: u64) {
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.now += 1;
        let session = self.session;
        self.server.handle(Input::Message { session, bytes: line.to_string().as_bytes(), tag }, self.now);
        self.run_background();
    }

    /// Sends a notification (no answer is waited for), then serves what it led to in the background.
    pub fn notify(&mut self, method: &str, params: Value) {
        let line = json!({"jsonrpc": "2.0", "method": method, "params": params});
        self.now += 1;
        let session = self.session;
        self.server.handle(Input::Message { session, bytes: line.to_string().as_bytes(), tag: 3 }, self.now);
        self.run_background();
    }

    /// Serves the reads no answer waits on (a watch's), and those they lead to, until none is left;
    /// notifications and timers are kept.
    pub fn run_background(&mut self) {
        loop {
            while let Some(out) = self.server.poll_output() {
                match out {
                    Output::Send { message, tag, .. } => {
                        let v: Value = serde_json::from_slice(&message).unwrap();
                        if v.get("id").is_none() {
                            self.notes.push((tag, v));
                        }
                    }
                    Output::Fetch { ticket, request, .. } => self.background.push_back((ticket, request)),
                    Output::Timer { ticket, at_ms, .. } => self.timers.push((ticket, at_ms)),
                    Output::Done { tag, .. } => self.done_tags.push(tag),
                    Output::Cancel(ticket) => {
                        self.timers.retain(|(t, _)| *t != ticket);
                        self.background.retain(|(t, _)| *t != ticket);
                    }
                    _ => {}
                }
            }
            let Some((ticket, request)) = self.background.pop_front() else { break };
            let outcome = self.serve(&request);
            self.now += 1;
            self.server.handle(Input::Fetched { ticket, outcome }, self.now);
        }
    }

    /// Moves the clock to `ms` (epoch milliseconds), feeding each timer due by then at its time, in
    /// order, and serving what each leads to.
    pub fn run_until(&mut self, ms: u64) {
        self.run_background();
        loop {
            self.timers.sort_by_key(|(_, at)| *at);
            let Some(&(ticket, at)) = self.timers.first().filter(|(_, at)| *at <= ms) else { break };
            self.timers.remove(0);
            self.now = self.now.max(at);
            self.server.handle(Input::Timer { ticket }, self.now);
            self.run_background();
        }
        self.now = self.now.max(ms);
    }

    /// The clock of the session, epoch milliseconds.
    pub fn now(&self) -> u64 {
        self.now
    }

    /// Reads `path` (with its query) from the stack as the user `slug`, not as bb: what another person sees.
    #[allow(dead_code)]
    pub fn get_as(&mut self, slug: &str, path: &str) -> (u16, Value) {
        let token = self.world.model.users[slug].token.clone();
        let (path, query) = path.split_once('?').unwrap_or((path, ""));
        let query = query
            .split('&')
            .filter(|q| !q.is_empty())
            .map(|q| {
                let (k, v) = q.split_once('=').unwrap_or((q, ""));
                (k.to_owned(), v.to_owned())
            })
            .collect();
        let req = Request { method: "GET".into(), path: path.to_owned(), query, ..Request::default() }
            .with_header("Authorization", &format!("Bearer {token}"));
        let response = bb_stack::routes::serve(&mut self.world, &req);
        (response.status, serde_json::from_slice(&response.body).unwrap_or(Value::Null))
    }

    /// How many requests of `method` went to paths containing `fragment`.
    pub fn count(&self, method: &str, fragment: &str) -> usize {
        self.requests.iter().filter(|r| r.starts_with(&format!("{method} ")) && r.contains(fragment)).count()
    }

    fn serve(&mut self, request: &FetchRequest) -> FetchOutcome {
        let query: Vec<String> = request.query.iter().map(|(k, v)| format!("{k}={v}")).collect();
        self.requests.push(format!("{} {}?{}", request.method.as_str(), request.path, query.join("&")));
        if let Some(b) = &request.body {
            self.bodies.push(b.clone());
        }
        for b in &mut self.befores {
            b(request, &mut self.world);
        }
        for o in &mut self.overrides {
            if let Some(outcome) = o(request) {
                return outcome;
            }
        }
        let (_, admission) = self.world.control.admit(request.method.as_str(), &request.path);
        let response = match admission {
            Admission::Serve => {
                let token = self.world.default_token();
                let mut req = Request {
                    method: request.method.as_str().to_owned(),
                    path: request.path.clone(),
                    query: request.query.clone(),
                    ..Request::default()
                }
                .with_header("Authorization", &format!("Bearer {token}"));
                if let Some(b) = &request.body {
                    req = req.with_json(b);
                }
                bb_stack::routes::serve(&mut self.world, &req)
            }
            Admission::Respond(r) => r,
            Admission::Echo(status) => {
                let token = self.world.default_token();
                bb_stack::admission::echo_response(status, Some(&format!("Bearer {token}")))
            }
            Admission::Hang => return failed(FetchErrorKind::Timeout, "no answer in 30 s", true),
            Admission::Truncate => return failed(FetchErrorKind::BrokenResponse, "the answer broke off", true),
        };
        let retry_after_s = response
            .headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case("retry-after"))
            .and_then(|(_, v)| v.parse().ok());
        let user = response.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case("x-ausername")).map(|(_, v)| v.clone());
        let mut response = response;
        if !self.rewrites.is_empty()
            && let Ok(mut v) = serde_json::from_slice::<Value>(&response.body)
        {
            for r in &mut self.rewrites {
                r(request, &mut v);
            }
            response.body = v.to_string().into_bytes();
        }
        self.raw_bytes += response.body.len();
        FetchOutcome::Response(FetchResponse {
            status: response.status,
            body: response.body,
            retry_after_s,
            user,
            decoded: None,
            credential: Default::default(),
        })
    }
}

pub fn failed(kind: FetchErrorKind, detail: &str, may_have_arrived: bool) -> FetchOutcome {
    FetchOutcome::Failed(FetchError { kind, detail: detail.into(), may_have_arrived })
}

/// A Bitbucket error body with one error.
pub fn error_body(status: u16, exception: &str, message: &str, extra: Value) -> FetchOutcome {
    let mut e = json!({"context": null, "message": message, "exceptionName": exception});
    if let (Some(o), Value::Object(x)) = (e.as_object_mut(), extra) {
        o.extend(x);
    }
    FetchOutcome::response(status, json!({"errors": [e]}).to_string())
}
